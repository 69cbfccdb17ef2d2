/**
 * kube's version priority (apimachinery `version.CompareKubeAwareVersionStrings`): the order in
 * which discovery lists a custom resource's versions and the first of which is preferred.
 */

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** alpha < beta < GA, as kube's versionType enum orders them. */
const TYPE_RANK = { alpha: 0, beta: 1, ga: 2 } as const;

function parse(v: string): { major: number; rank: number; minor: number } | undefined {
  const m = KUBE_VERSION.exec(v);
  if (!m) return undefined;
  const rank = m[2] === 'alpha' ? TYPE_RANK.alpha : m[2] === 'beta' ? TYPE_RANK.beta : TYPE_RANK.ga;
  return { major: Number(m[1]), rank, minor: m[3] === undefined ? 0 : Number(m[3]) };
}

/**
 * Positive when `a` has the higher priority, negative when `b` has, 0 when equal. Kube-like
 * versions come first — GA, then beta, then alpha, each by major then minor version (v10, v2, v1,
 * v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2) — then any other string, lexically
 * reversed as kube compares them (foo1 before foo10). To sort by priority:
 * `versions.sort((a, b) => compareKubeAwareVersions(b, a))`.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  if (a === b) return 0;
  const va = parse(a);
  const vb = parse(b);
  if (!va && !vb) return a < b ? 1 : -1; // kube: strings.Compare(v2, v1)
  if (!va) return -1;
  if (!vb) return 1;
  if (va.rank !== vb.rank) return va.rank - vb.rank;
  if (va.major !== vb.major) return va.major - vb.major;
  return va.minor - vb.minor;
}
