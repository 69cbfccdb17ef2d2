/**
 * Pod Security Standards' levels, versions and the namespace labels that select them
 * (k8s.io/pod-security-admission/api at kubernetes-1.24.9: constants.go, helpers.go).
 */
import { fieldErr, type FieldError } from '@plinth/api';

export type Level = 'privileged' | 'baseline' | 'restricted';

const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/**
 * A policy version: the minor of `v1.<minor>`, or `LATEST` (newer than every version, even future
 * ones, as PSA's Version.Older says).
 */
export type Version = number;
export const LATEST: Version = Number.POSITIVE_INFINITY;

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

const PREFIX = 'pod-security.kubernetes.io/';
/** The label and audit-annotation prefix (PSA's labelPrefix / AuditAnnotationPrefix). */
export const PSA_PREFIX = PREFIX;
export const ENFORCE_LEVEL_LABEL = `${PREFIX}enforce`;
export const ENFORCE_VERSION_LABEL = `${PREFIX}enforce-version`;
export const AUDIT_LEVEL_LABEL = `${PREFIX}audit`;
export const AUDIT_VERSION_LABEL = `${PREFIX}audit-version`;
export const WARN_LEVEL_LABEL = `${PREFIX}warn`;
export const WARN_VERSION_LABEL = `${PREFIX}warn-version`;

export const versionString = (v: Version): string => (v === LATEST ? 'latest' : `v1.${v}`);

/** PSA's LevelVersion.String: `restricted:latest`, `baseline:v1.23`. */
export const levelVersionString = (lv: LevelVersion): string => `${lv.level}:${versionString(lv.version)}`;

export const sameLevelVersion = (a: LevelVersion, b: LevelVersion): boolean => a.level === b.level && a.version === b.version;

export const LEVEL_ERROR = `must be one of ${LEVELS.join(', ')}`;
export const VERSION_ERROR = 'must be "latest" or "v1.x"';

/** PSA's ParseLevel: an unknown level is an error and reads as restricted (fail closed). */
export function parseLevel(value: string): { level: Level; error?: string } {
  return (LEVELS as readonly string[]).includes(value) ? { level: value as Level } : { level: 'restricted', error: LEVEL_ERROR };
}

const VERSION_RE = /^v1\.([0-9]|[1-9][0-9]*)$/;

/** PSA's ParseVersion: `latest` or `v1.<n>` (no leading zero); anything else is an error and reads as latest. */
export function parseVersion(value: string): { version: Version; error?: string } {
  if (value === 'latest') return { version: LATEST };
  const m = VERSION_RE.exec(value);
  if (!m) return { version: LATEST, error: VERSION_ERROR };
  const minor = Number(m[1]);
  // Go's Atoi fails past int64: such a version is as invalid as a malformed one.
  if (!Number.isSafeInteger(minor)) return { version: LATEST, error: VERSION_ERROR };
  return { version: minor };
}

/** PSA's CompareLevels: privileged < baseline < restricted. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

const labelPath = (label: string): string => `metadata.labels[${label}]`;

/**
 * PSA's PolicyToEvaluate: the namespace's labels over the defaults, and what is wrong with them
 * (an invalid audit or warn level reads as privileged: those modes fail open).
 */
export function policyToEvaluate(labels: Record<string, string> | undefined, defaults: Policy): { policy: Policy; errors: FieldError[] } {
  const p: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  if (!labels) return { policy: p, errors };
  const modes: Array<[keyof Policy, string, string]> = [
    ['enforce', ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL],
    ['audit', AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL],
    ['warn', WARN_LEVEL_LABEL, WARN_VERSION_LABEL],
  ];
  for (const [mode, levelLabel, versionLabel] of modes) {
    const level = labels[levelLabel];
    if (level !== undefined) {
      const r = parseLevel(level);
      p[mode].level = r.error && mode !== 'enforce' ? 'privileged' : r.level;
      if (r.error) errors.push(fieldErr.invalid(labelPath(levelLabel), level, r.error));
    }
    const version = labels[versionLabel];
    if (version !== undefined) {
      const r = parseVersion(version);
      p[mode].version = r.version;
      if (r.error) errors.push(fieldErr.invalid(labelPath(versionLabel), version, r.error));
    }
  }
  return { policy: p, errors };
}
