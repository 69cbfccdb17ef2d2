/**
 * Metric stability classes (the spec's deprecation rule 13, kube's component-base/metrics): every
 * metric is ALPHA or STABLE, may carry the version it was deprecated in, and is then described
 * with a deprecation prefix and, later, hidden unless `--show-hidden-metrics-for-version` asks
 * for hidden metrics back.
 */

export type StabilityLevel = 'ALPHA' | 'STABLE';

/** The release plinth reports metrics as (kube-apiserver 1.24). */
export const CURRENT_VERSION = { major: 1, minor: 24 } as const;

export interface MinorVersion {
  major: number;
  minor: number;
}

/** `1.23`, `1.23.0` → {1, 23}; anything else → undefined. */
export function parseMinorVersion(v: string): MinorVersion | undefined {
  const m = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(v);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/**
 * kube's validateShowHiddenMetricsVersion: the flag is omitted or names the previous minor
 * release, nothing else. Returns the error message, or undefined when valid.
 */
export function validateShowHiddenMetricsVersion(target: string, current: MinorVersion = CURRENT_VERSION): string | undefined {
  if (target === '') return undefined;
  const valid = `${current.major}.${current.minor - 1}`;
  if (target !== valid) return `--show-hidden-metrics-for-version must be omitted or have the value '${valid}'. Only the previous minor version is allowed`;
  return undefined;
}

/** How a metric is exposed in the current release. */
export interface MetricExposure {
  /** Registered (scraped) at all. */
  visible: boolean;
  /** Deprecated: the description carries the `(Deprecated from x.y)` prefix. */
  deprecated: boolean;
  /** Would be hidden, shown only because hidden metrics were asked for. */
  shownHidden: boolean;
}

/**
 * Whether a metric deprecated in `deprecatedVersion` is shown in `current`, by the spec's rule 13
 * for both classes:
 * - not deprecated, or deprecated in a later release: visible as it is;
 * - deprecated: visible with the deprecation notice until its deprecated version equals the current
 *   version minus 3, then hidden (shown only with a valid --show-hidden-metrics-for-version, still
 *   marked deprecated, as kube's SetShowHidden does), and deleted one release later.
 * kube 1.24's component-base hides an ALPHA metric already in the release after its deprecation
 * (e.g. `apiserver_registered_watchers`, deprecated in 1.23); plinth keeps the spec's rule so the
 * metrics operators were promised stay visible, marked deprecated, for the spec's window.
 */
export function exposureOf(deprecatedVersion: string | undefined, showHidden: boolean, current: MinorVersion = CURRENT_VERSION): MetricExposure {
  const dep = deprecatedVersion ? parseMinorVersion(deprecatedVersion) : undefined;
  if (deprecatedVersion && !dep) throw new Error(`metric deprecated version ${JSON.stringify(deprecatedVersion)} is not <major>.<minor>`);
  if (!dep || dep.major > current.major || (dep.major === current.major && dep.minor > current.minor)) {
    return { visible: true, deprecated: false, shownHidden: false };
  }
  const releasesSince = dep.major === current.major ? current.minor - dep.minor : Number.POSITIVE_INFINITY;
  if (releasesSince > 3) return { visible: false, deprecated: true, shownHidden: false };
  const hidden = releasesSince === 3;
  if (hidden && !showHidden) return { visible: false, deprecated: true, shownHidden: false };
  return { visible: true, deprecated: true, shownHidden: hidden };
}

/**
 * The HELP text as kube prints it: the stability class first (`[ALPHA] `, `[STABLE] `), then for a
 * deprecated metric the spec's `(Deprecated from x.y) ` notice, then the description.
 */
export function describe(help: string, stability: StabilityLevel, deprecatedVersion: string | undefined, deprecated: boolean): string {
  const dep = deprecated && deprecatedVersion ? parseMinorVersion(deprecatedVersion) : undefined;
  return `[${stability}] ${dep ? `(Deprecated from ${dep.major}.${dep.minor}) ` : ''}${help}`;
}
