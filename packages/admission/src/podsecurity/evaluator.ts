/**
 * The versioned checks and their evaluation (PSA 1.24's policy/registry.go and checks.go): each
 * check has versions from a minimum Pod Security Standards version on; a policy version runs the
 * check version in force at it, `latest` and future versions run the newest. Restricted runs the
 * baseline checks too, less those a restricted check replaces at that version. Checks run
 * baseline first, then restricted, each group ordered by check ID, so messages list violations
 * in PSA's order.
 */
import type { Level, LevelVersion, Version } from './api.js';
import * as b from './checks-baseline.js';
import * as r from './checks-restricted.js';
import type { CheckResult, PodView } from './pod.js';

type CheckFn = (pod: PodView) => CheckResult;

interface VersionedCheck {
  /** The `v1.<minor>` it applies from. */
  minimum: number;
  fn: CheckFn;
  /** Baseline checks this restricted check replaces from this version on. */
  overrides?: string[];
}

interface Check {
  id: string;
  level: Exclude<Level, 'privileged'>;
  versions: VersionedCheck[];
}

/** PSA 1.24's default checks (policy.DefaultChecks). */
export const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minimum: 0, fn: b.appArmorProfile_1_0 }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ minimum: 0, fn: b.capabilitiesBaseline_1_0 }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minimum: 0, fn: b.hostNamespaces_1_0 }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minimum: 0, fn: b.hostPathVolumes_1_0 }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minimum: 0, fn: b.hostPorts_1_0 }] },
  { id: 'privileged', level: 'baseline', versions: [{ minimum: 0, fn: b.privileged_1_0 }] },
  { id: 'procMount', level: 'baseline', versions: [{ minimum: 0, fn: b.procMount_1_0 }] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [{ minimum: 0, fn: b.seLinuxOptions_1_0 }] },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { minimum: 0, fn: b.seccompProfileBaseline_1_0 },
      { minimum: 19, fn: b.seccompProfileBaseline_1_19 },
    ],
  },
  { id: 'sysctls', level: 'baseline', versions: [{ minimum: 0, fn: b.sysctls_1_0 }] },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minimum: 0, fn: b.windowsHostProcess_1_0 }] },
  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ minimum: 8, fn: r.allowPrivilegeEscalation_1_8 }] },
  { id: 'capabilities_restricted', level: 'restricted', versions: [{ minimum: 22, fn: r.capabilitiesRestricted_1_22, overrides: ['capabilities_baseline'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minimum: 0, fn: r.restrictedVolumes_1_0, overrides: ['hostPathVolumes'] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minimum: 0, fn: r.runAsNonRoot_1_0 }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minimum: 23, fn: r.runAsUser_1_23 }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [{ minimum: 19, fn: r.seccompProfileRestricted_1_19, overrides: ['seccompProfile_baseline'] }],
  },
];

/** The check version of `check` in force at `minor`, if any. */
function versionAt(check: Check, minor: number): VersionedCheck | undefined {
  let found: VersionedCheck | undefined;
  for (const v of check.versions) if (v.minimum <= minor) found = v;
  return found;
}

/** The newest version any check has (PSA's maxVersion): later versions evaluate as it. */
export const MAX_VERSION = Math.max(...CHECKS.map((c) => c.versions[c.versions.length - 1]!.minimum));

const byId = (a: Check, z: Check): number => (a.id < z.id ? -1 : a.id > z.id ? 1 : 0);
const ORDERED = [...CHECKS.filter((c) => c.level === 'baseline').sort(byId), ...CHECKS.filter((c) => c.level === 'restricted').sort(byId)];

function checksAt(level: 'baseline' | 'restricted', minor: number): CheckFn[] {
  const overridden = new Set<string>();
  if (level === 'restricted') for (const c of ORDERED) if (c.level === 'restricted') for (const o of versionAt(c, minor)?.overrides ?? []) overridden.add(o);
  const fns: CheckFn[] = [];
  for (const c of ORDERED) {
    if (level === 'baseline' && c.level !== 'baseline') continue;
    if (overridden.has(c.id)) continue;
    const v = versionAt(c, minor);
    if (v) fns.push(v.fn);
  }
  return fns;
}

// Built once: the checks of every version up to the newest, for both levels.
const TABLE = {
  baseline: Array.from({ length: MAX_VERSION + 1 }, (_, minor) => checksAt('baseline', minor)),
  restricted: Array.from({ length: MAX_VERSION + 1 }, (_, minor) => checksAt('restricted', minor)),
};

/** The failed checks of a pod under a level and version, in PSA's order (none for privileged). */
export function evaluatePod(lv: LevelVersion, pod: PodView): CheckResult[] {
  if (lv.level === 'privileged') return [];
  const minor: Version = Math.min(lv.version, MAX_VERSION);
  const out: CheckResult[] = [];
  for (const fn of TABLE[lv.level][minor]!) {
    const res = fn(pod);
    if (!res.allowed) out.push(res);
  }
  return out;
}

/** PSA's AggregateCheckResult.ForbiddenReason: the failed checks' reasons. */
export const forbiddenReason = (failed: readonly CheckResult[]): string => failed.map((f) => f.reason || 'unknown forbidden reason').join(', ');

/** PSA's AggregateCheckResult.ForbiddenDetail: each reason with its detail in parentheses. */
export const forbiddenDetail = (failed: readonly CheckResult[]): string =>
  failed.map((f) => `${f.reason || 'unknown forbidden reason'}${f.detail ? ` (${f.detail})` : ''}`).join(', ');
