/**
 * Comparing sets of RBAC rules (kube's pkg/registry/rbac/validation/policy_comparator.go and
 * compact_rules.go, and rbacv1helpers.CompactString): whether one set of rules grants everything
 * another does, and what is missing, written the way kube's escalation errors write it.
 */
import type { PolicyRule } from '../authorizer.js';

/**
 * kube's BreakdownRule: the equivalent rules with at most one verb, group, resource and resource
 * name each (non-resource rules: one URL and one verb).
 */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        if (rule.resourceNames?.length) {
          for (const name of rule.resourceNames) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        } else {
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

const hasAll = (set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean => {
  const owning = new Set(set ?? []);
  return (wanted ?? []).every((w) => owning.has(w));
};

function resourcesCoverAll(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  const set = owner ?? [];
  if (set.includes('*') || hasAll(set, wanted)) return true;
  for (const path of wanted ?? []) {
    if (set.includes(path)) continue;
    const slash = path.indexOf('/');
    // `*/status` covers the status subresource of every resource.
    if (slash < 0 || !set.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

/** `s` without its trailing `ch`s: a loop, where `/${ch}+$/` backtracks quadratically on client text. */
function trimTrailing(s: string, ch: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === ch) end--;
  return s.slice(0, end);
}

function nonResourceURLCovers(owner: string, path: string): boolean {
  if (owner === path) return true;
  return owner.endsWith('*') && path.startsWith(trimTrailing(owner, '*'));
}

/** Whether `owner` covers `sub` (a rule from breakdownRule: at most one of each). */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes('*') || hasAll(owner.verbs, sub.verbs);
  const groups = (owner.apiGroups ?? []).includes('*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourcesCoverAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((p) => (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, p)));
  const ownerNames = owner.resourceNames ?? [];
  const names = sub.resourceNames?.length ? ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames) : ownerNames.length === 0;
  return verbs && groups && resources && names && urls;
}

/**
 * kube's validation.Covers: whether `owner` grants everything `servant` does, and the broken-down
 * servant rules it does not.
 */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const sub of breakdownRule(rule)) {
      if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
    }
  }
  return { covered: missing.length === 0, missing };
}

/**
 * kube's CompactRules: rules naming one group, one resource and at most one resource name (and
 * nothing else) are merged when they differ only in their verbs; others are kept as they are.
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const isSimple =
      (rule.resourceNames?.length ?? 0) <= 1 &&
      !rule.nonResourceURLs?.length &&
      rule.apiGroups?.length === 1 &&
      rule.resources?.length === 1;
    if (!isSimple) {
      out.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], rule.resourceNames?.[0] ?? null]);
    const existing = simple.get(key);
    if (!existing) {
      simple.set(key, structuredClone(rule));
      continue;
    }
    for (const verb of rule.verbs) if (!existing.verbs.includes(verb)) existing.verbs.push(verb);
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: `["a" "b"]`. */
const goQuoteList = (xs: readonly string[]): string => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** kube's rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * kube's ConfirmNoEscalation message for a user missing rules: undefined when `owner` covers
 * `wanted`. The missing rules are compacted, one per line, sorted (kube's sets.String.List()).
 */
export function escalationMessage(
  user: { name: string; groups: readonly string[] },
  owner: readonly PolicyRule[],
  wanted: readonly PolicyRule[],
  resolutionError?: string,
): string | undefined {
  const { covered, missing } = covers(owner, wanted);
  if (covered) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (resolutionError) msg += `; resolution errors: [${resolutionError}]`;
  return msg;
}
