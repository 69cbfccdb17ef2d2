/**
 * The audit policy (audit.k8s.io/v1 `Policy`, kube's --audit-policy-file): loading, validation
 * with kube's messages (apis/audit/validation), and evaluation (audit/policy/checker.go): the
 * first rule that matches a request decides its level and omitted stages; no match is `None`.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { fieldErr, fieldErrorString, goStringSlice, isDNS1123Subdomain, isPlainObject, type FieldError, type UserInfo } from '@plinth/api';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** Levels as numbers, for `level >= LEVEL.Request`. */
export const LEVEL = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 } as const;

/** What the policy decides for a request (kube's RequestAuditConfigWithLevel); shared, never mutated. */
export interface RequestAuditConfig {
  level: Level;
  /** LEVEL[level]. */
  rank: number;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

/** The request attributes a policy looks at (the authorizer's attributes, as in kube). */
export interface PolicyAttributes {
  user: UserInfo | undefined;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

export interface AuditPolicy {
  readonly policy: Policy;
  /** The first matching rule's config; `None` when no rule matches. Allocates nothing. */
  evaluate(attrs: PolicyAttributes): RequestAuditConfig;
}

const V1 = 'audit.k8s.io/v1';

/** kube's error when the policy cannot be decoded (wrong kind, version, or not an object). */
class PolicyError extends Error {}

function stringList(v: unknown, path: string, errs: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    errs.push(`${path}: expected a list of strings`);
    return [];
  }
  return v as string[];
}

/** Decodes a Policy document (YAML or JSON) as kube's universal decoder does for the audit group. */
export function decodePolicy(text: string): Policy {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new PolicyError(`failed decoding: ${(e as Error).message}`);
  }
  if (!isPlainObject(raw)) throw new PolicyError(`failed decoding: couldn't get version/kind; json parse error: the policy is not an object`);
  const apiVersion = typeof raw['apiVersion'] === 'string' ? raw['apiVersion'] : '';
  const kind = typeof raw['kind'] === 'string' ? raw['kind'] : '';
  if (!kind) throw new PolicyError(`failed decoding: Object 'Kind' is missing in '${JSON.stringify(raw)}'`);
  // kube 1.24 registers audit.k8s.io/v1 only (v1alpha1 and v1beta1 were removed in 1.24).
  if (apiVersion !== V1 || kind !== 'Policy') {
    throw new PolicyError(`failed decoding: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "pkg/runtime/scheme.go:100"`);
  }
  const shape: string[] = [];
  const rulesRaw = raw['rules'] ?? [];
  if (!Array.isArray(rulesRaw)) throw new PolicyError('failed decoding: rules: expected a list');
  const rules = rulesRaw.map((r: unknown, i: number): PolicyRule => {
    const path = `rules[${i}]`;
    if (!isPlainObject(r)) throw new PolicyError(`failed decoding: ${path}: expected an object`);
    const resources = Array.isArray(r['resources'])
      ? r['resources'].map((g: unknown, j: number): GroupResources => {
          const gr = isPlainObject(g) ? g : {};
          return {
            group: typeof gr['group'] === 'string' ? gr['group'] : '',
            resources: stringList(gr['resources'], `${path}.resources[${j}].resources`, shape),
            resourceNames: stringList(gr['resourceNames'], `${path}.resources[${j}].resourceNames`, shape),
          };
        })
      : [];
    const rule: PolicyRule = {
      level: (typeof r['level'] === 'string' ? r['level'] : '') as Level,
      users: stringList(r['users'], `${path}.users`, shape),
      userGroups: stringList(r['userGroups'], `${path}.userGroups`, shape),
      verbs: stringList(r['verbs'], `${path}.verbs`, shape),
      resources,
      namespaces: stringList(r['namespaces'], `${path}.namespaces`, shape),
      nonResourceURLs: stringList(r['nonResourceURLs'], `${path}.nonResourceURLs`, shape),
      omitStages: stringList(r['omitStages'], `${path}.omitStages`, shape) as Stage[],
    };
    if (typeof r['omitManagedFields'] === 'boolean') rule.omitManagedFields = r['omitManagedFields'];
    return rule;
  });
  const omitStages = stringList(raw['omitStages'], 'omitStages', shape) as Stage[];
  if (shape.length > 0) throw new PolicyError(`failed decoding: ${shape.join(', ')}`);
  return { rules, omitStages, omitManagedFields: raw['omitManagedFields'] === true };
}

/** kube's ValidatePolicy (the rules; the policy-wide omitStages are not checked there). */
export function validatePolicy(policy: Policy): FieldError[] {
  const errs: FieldError[] = [];
  policy.rules.forEach((rule, i) => {
    const p = `rules[${i}]`;
    if (!rule.level) errs.push(fieldErr.required(`${p}.level`));
    else if (!(LEVELS as readonly string[]).includes(rule.level)) errs.push(fieldErr.notSupported(`${p}.level`, rule.level, [...LEVELS]));
    rule.nonResourceURLs.forEach((url, j) => {
      if (url === '*') return;
      if (!url.startsWith('/')) errs.push(fieldErr.invalid(`${p}.nonResourceURLs[${j}]`, url, "non-resource URL rules must begin with a '/' character"));
      if (url !== '' && url.slice(0, -1).includes('*')) errs.push(fieldErr.invalid(`${p}.nonResourceURLs[${j}]`, url, "non-resource URL wildcards '*' must be the final character of the rule"));
    });
    for (const gr of rule.resources) {
      if (gr.group) {
        const msgs = isDNS1123Subdomain(gr.group);
        if (msgs.length > 0) errs.push(fieldErr.invalid(`${p}.resources.group`, gr.group, msgs.join(',')));
      }
      if (gr.resourceNames.length > 0 && gr.resources.length === 0) {
        errs.push(fieldErr.invalid(`${p}.resources.resourceNames`, goStringSlice(gr.resourceNames), 'using resourceNames requires at least one resource'));
      }
    }
    rule.omitStages.forEach((s, j) => {
      if (!(STAGES as readonly string[]).includes(s)) errs.push(fieldErr.invalid(`${p}.omitStages[${j}]`, s, `allowed stages are ${STAGES.join(',')}`));
    });
    if (rule.nonResourceURLs.length > 0 && (rule.resources.length > 0 || rule.namespaces.length > 0)) {
      errs.push(fieldErr.invalid(`${p}.nonResourceURLs`, goStringSlice(rule.nonResourceURLs), 'rules cannot apply to both regular resources and non-resource URLs'));
    }
  });
  return errs;
}

/** Decodes and validates; throws kube's message (without the file part). */
export function parsePolicy(text: string): Policy {
  const policy = decodePolicy(text);
  const errs = validatePolicy(policy);
  if (errs.length === 1) throw new PolicyError(fieldErrorString(errs[0]!));
  if (errs.length > 1) throw new PolicyError(`[${errs.map(fieldErrorString).join(', ')}]`);
  if (policy.rules.length === 0) throw new PolicyError('loaded illegal policy with 0 rules');
  return policy;
}

/**
 * Loads --audit-policy-file as kube's LoadPolicyFromFile: a start-up error
 * `loading audit policy file: <why>: from file <path>` when it cannot be read, decoded or validated.
 */
export function loadPolicyFile(path: string): AuditPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  try {
    return compilePolicy(parsePolicy(text));
  } catch (e) {
    if (e instanceof PolicyError) throw new Error(`loading audit policy file: ${e.message}: from file ${path}`);
    throw e;
  }
}

interface CompiledRule {
  rule: PolicyRule;
  users: ReadonlySet<string> | undefined;
  groups: ReadonlySet<string> | undefined;
  verbs: ReadonlySet<string> | undefined;
  namespaces: ReadonlySet<string> | undefined;
  config: RequestAuditConfig;
}

/** The policy, its rules' stage unions and configs computed once (kube's NewChecker). */
export function compilePolicy(policy: Policy): AuditPolicy {
  const set = (l: string[]): ReadonlySet<string> | undefined => (l.length > 0 ? new Set(l) : undefined);
  const rules: CompiledRule[] = policy.rules.map((rule) => ({
    rule,
    users: set(rule.users),
    groups: set(rule.userGroups),
    verbs: set(rule.verbs),
    namespaces: set(rule.namespaces),
    config: Object.freeze({
      level: rule.level,
      rank: LEVEL[rule.level],
      omitStages: new Set<Stage>([...policy.omitStages, ...rule.omitStages]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    }),
  }));
  const none: RequestAuditConfig = Object.freeze({ level: 'None', rank: 0, omitStages: new Set(policy.omitStages), omitManagedFields: policy.omitManagedFields });
  return {
    policy,
    evaluate(attrs) {
      for (const r of rules) if (ruleMatches(r, attrs)) return r.config;
      return none;
    },
  };
}

function ruleMatches(r: CompiledRule, a: PolicyAttributes): boolean {
  if (r.users && (!a.user || !r.users.has(a.user.name))) return false;
  if (r.groups) {
    if (!a.user) return false;
    let matched = false;
    for (const g of a.user.groups) {
      if (r.groups.has(g)) {
        matched = true;
        break;
      }
    }
    if (!matched) return false;
  }
  if (r.verbs && !r.verbs.has(a.verb)) return false;
  if (r.namespaces || r.rule.resources.length > 0) return resourceMatches(r, a);
  if (r.rule.nonResourceURLs.length > 0) {
    if (a.isResourceRequest) return false;
    for (const spec of r.rule.nonResourceURLs) if (pathMatches(a.path, spec)) return true;
    return false;
  }
  return true;
}

/** `*`, an exact path, or a prefix ending in `*`. */
function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

/** Namespaces ('' is cluster-scoped), then group + resource (`pods`, `pods/log`, `*`, `*\/status`, `pods/*`) + names. */
function resourceMatches(r: CompiledRule, a: PolicyAttributes): boolean {
  if (!a.isResourceRequest) return false;
  if (r.namespaces && !r.namespaces.has(a.namespace)) return false;
  if (r.rule.resources.length === 0) return true;
  const sub = a.subresource;
  for (const gr of r.rule.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === '*') return true;
      if (sub ? res.length === a.resource.length + 1 + sub.length && res.startsWith(a.resource) && res[a.resource.length] === '/' && res.endsWith(sub) : res === a.resource) return true;
      if (sub && res.startsWith('*/') && res.slice(2) === sub) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}
