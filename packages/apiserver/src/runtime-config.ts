/**
 * `--runtime-config`: which built-in API versions and resources are served (kube's
 * APIEnablementOptions.Validate and resourceconfig.MergeAPIResourceConfigs). Resolution is pure:
 * the flag's map and the built-in definitions in, the definitions to leave out of the served
 * catalog out. Leaving a definition out changes serving only — its storage stays (another served
 * version may store through it, and its objects are served again once it is re-enabled).
 */
import type { ResourceDefinition } from '@plinth/api';

/** The keys that address many versions at once, applied in this order (kube's groupVersionMatchersOrder). */
const MATCHERS: ReadonlyArray<[string, (version: string) => boolean]> = [
  ['api/all', () => true],
  ['api/ga', (v) => /^v\d+$/.test(v)],
  ['api/beta', (v) => /^v\d+beta\d+$/.test(v)],
  ['api/alpha', (v) => /^v\d+alpha\d+$/.test(v)],
];
const MATCHER_KEYS = new Set(MATCHERS.map(([k]) => k));

type Def = Pick<ResourceDefinition, 'group' | 'version' | 'plural'>;

/** Go's strconv.ParseBool. */
function parseBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/**
 * The core group's spellings, as kube-apiserver accepts them: `v1`, `api/v1`, `v1/<resource>`,
 * `api/v1/<resource>` all mean `/v1[/<resource>]`; `api/legacy` is deprecated and ignored.
 */
function normalize(config: Record<string, string>, warn: (msg: string) => void): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(config)) {
    if (key === 'api/legacy') {
      warn('--runtime-config api/legacy is deprecated and has no effect');
      continue;
    }
    let k = key;
    if (k === 'v1' || k.startsWith('v1/')) k = `/${k}`;
    else if (k === 'api/v1' || (k.startsWith('api/v1/') && k.split('/').length === 3)) k = k.slice('api'.length);
    out.set(k, value);
  }
  return out;
}

/**
 * The definitions `--runtime-config` turns off, as `group/version/plural` keys. Errors (kube's
 * messages) go to `errs`: an unknown group, a version the group does not have, a resource the
 * version does not serve, a malformed key or value.
 */
export function disabledByRuntimeConfig(config: Record<string, string>, defs: readonly Def[], errs: string[], warn: (msg: string) => void = () => {}): Set<string> {
  const disabled = new Set<string>();
  const overrides = normalize(config, warn);
  if (overrides.size === 0) return disabled;
  if (overrides.get('api/all') === 'false' && overrides.size === 1) {
    errs.push('invalid key with only api/all=false');
    return disabled;
  }
  const groups = new Set(defs.map((d) => d.group));
  const versions = new Set(defs.map((d) => `${d.group}/${d.version}`));
  const resources = new Set(defs.map((d) => `${d.group}/${d.version}/${d.plural}`));

  // Validate: every key is a matcher or group/version[/resource] of a known group (ParseGroups).
  const unknownGroups: string[] = [];
  const parsed: Array<{ key: string; gv: string; resource?: string }> = [];
  for (const key of overrides.keys()) {
    if (MATCHER_KEYS.has(key)) continue;
    const tokens = key.split('/');
    if (tokens.length !== 2 && tokens.length !== 3) {
      errs.push(`runtime-config invalid key ${key}`);
      continue;
    }
    const [group, version, resource] = tokens as [string, string, string | undefined];
    if (!groups.has(group)) {
      unknownGroups.push(group);
      continue;
    }
    parsed.push({ key, gv: `${group}/${version}`, ...(resource !== undefined ? { resource } : {}) });
  }
  if (unknownGroups.length > 0) errs.push(`unknown api groups ${unknownGroups.join(',')}`);

  // Version enablement: every served version starts enabled (plinth serves no alpha version).
  const versionOn = new Map<string, boolean>([...versions].map((gv) => [gv, true]));
  for (const [key, matches] of MATCHERS) {
    const given = overrides.get(key);
    if (given === undefined) continue;
    // The spec: an omitted value means true, for these keys too (kube 1.24 refuses `api/beta`).
    const value = given === '' ? 'true' : given;
    if (value !== 'true' && value !== 'false') {
      errs.push(`invalid value ${key}=${value}`);
      continue;
    }
    for (const gv of versions) if (matches(gv.slice(gv.indexOf('/') + 1))) versionOn.set(gv, value === 'true');
  }
  const resourceOn = new Map<string, boolean>();
  const valueOf = (key: string): boolean | undefined => {
    const v = overrides.get(key)!;
    if (v === '') return true;
    const b = parseBool(v);
    if (b === undefined) errs.push(`invalid value of ${key}: ${v}, err: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
    return b;
  };
  // group/version keys first, group/version/resource keys last: the most specific key wins.
  for (const { key, gv, resource } of parsed) {
    if (!versions.has(gv)) {
      errs.push(`group version ${gv.startsWith('/') ? gv.slice(1) : gv} that has not been registered`);
      continue;
    }
    if (resource !== undefined) continue;
    const on = valueOf(key);
    if (on !== undefined) versionOn.set(gv, on);
  }
  for (const { key, gv, resource } of parsed) {
    if (resource === undefined || !versions.has(gv)) continue;
    if (resource.toLowerCase() !== resource) {
      errs.push(`invalid key ${key}: group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`);
      continue;
    }
    if (!resources.has(`${gv}/${resource}`)) {
      errs.push(`invalid key ${key}: resource ${JSON.stringify(resource)} is not served in ${gv.startsWith('/') ? gv.slice(1) : gv}`);
      continue;
    }
    const on = valueOf(key);
    if (on !== undefined) resourceOn.set(`${gv}/${resource}`, on);
  }
  for (const d of defs) {
    const key = `${d.group}/${d.version}/${d.plural}`;
    if (!(resourceOn.get(key) ?? versionOn.get(`${d.group}/${d.version}`) ?? true)) disabled.add(key);
  }
  return disabled;
}

/** Whether `def` is among the keys `disabledByRuntimeConfig` returned. */
export function isDisabled(disabled: ReadonlySet<string>, def: Def): boolean {
  return disabled.has(`${def.group}/${def.version}/${def.plural}`);
}
