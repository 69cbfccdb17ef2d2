/**
 * kube's PodSecurity admission plugin (plugin/pkg/admission/security/podsecurity, delegating to
 * k8s.io/pod-security-admission/admission at kubernetes-1.24.9). Validating only, on create and
 * update:
 * - pods (and pods/ephemeralcontainers) are checked against the namespace's enforce, audit and
 *   warn policies: enforce refuses (403), warn adds a warning, audit an audit annotation;
 * - the workload resources with a pod template are checked for warn and audit only;
 * - namespaces: invalid PodSecurity labels are refused (422), and a stricter enforce level warns
 *   about the existing pods it would refuse.
 * Exempt usernames, namespaces and runtime classes come from the plugin's configuration.
 */
import { fieldErrorString, invalid, internalError, type StatusError, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from '../interfaces.js';
import { admissionForbidden } from '../forbidden.js';
import type { NamespaceLookup } from '../namespace-lifecycle.js';
import { compareLevels, levelVersionString, LATEST, policyToEvaluate, PSA_PREFIX, sameLevelVersion, type LevelVersion, type Policy } from './api.js';
import { aggregate, type PodSecurityConfig } from './config.js';
import { evaluatePod, forbiddenDetail, forbiddenReason } from './evaluator.js';
import { hasPodTemplate, isSignificantPodUpdate, podTemplateOf } from './workloads.js';
import { isObj, str, type CheckResult, type PodView } from './pod.js';
import { podSecurityRecorder, type PodSecurityMetrics } from './metrics.js';

export interface PodSecurityDeps {
  config: PodSecurityConfig;
  getNamespace: NamespaceLookup;
  /** The pods of a namespace (kube's pod informer lister). */
  listPods: (namespace: string) => Promise<StoredObject[]>;
  /** The PodSecurity feature gate (beta, on by default in 1.24): off, the plugin does nothing. */
  enabled?: boolean;
  /** PSA's counters; unset: nothing is counted. */
  metrics?: PodSecurityMetrics;
  now?: () => number;
}

/** PSA's limits on checking a namespace's pods when its enforce level tightens. */
const NAMESPACE_MAX_PODS_TO_CHECK = 3000;
const NAMESPACE_POD_CHECK_TIMEOUT_MS = 1000;

/** Pod sub-resources PSA leaves alone (they do not change what it checks). */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

interface Outcome {
  error?: StatusError;
  warnings?: string[];
  annotations?: Record<string, string>;
}

const ALLOW: Outcome = {};
const exemptBecause = (why: 'user' | 'namespace' | 'runtimeClass'): Outcome => ({ annotations: { exempt: why } });

const podViewOf = (meta: unknown, spec: unknown): PodView => ({
  annotations: isObj(meta) && isObj(meta['annotations']) ? (meta['annotations'] as Record<string, string>) : {},
  spec: isObj(spec) ? spec : {},
});

export function createPodSecurity(deps: PodSecurityDeps): AdmissionPlugin {
  const { config } = deps;
  const now = deps.now ?? Date.now;
  const record = podSecurityRecorder(deps.metrics);
  const exemptNamespace = (ns: string): boolean => ns !== '' && config.exemptions.namespaces.has(ns);
  const exemptUser = (user: string): boolean => user !== '' && config.exemptions.usernames.has(user);
  const exemptRuntimeClass = (spec: Record<string, unknown>): boolean => {
    const rc = str(spec, 'runtimeClassName');
    return rc !== '' && config.exemptions.runtimeClasses.has(rc);
  };
  const policyOf = (labels: Record<string, string> | undefined) => policyToEvaluate(labels, config.defaults);
  /** A looked-up namespace's policy, read once per stored namespace object (those are never changed in place). */
  const namespacePolicies = new WeakMap<StoredObject, ReturnType<typeof policyOf>>();
  const policyOfNamespace = (ns: StoredObject): ReturnType<typeof policyOf> => {
    let p = namespacePolicies.get(ns);
    if (!p) namespacePolicies.set(ns, (p = policyOf(ns.metadata.labels)));
    return p;
  };

  /** PSA's EvaluatePod: enforce (pods only), then audit, then warn, each level evaluated once. */
  function evaluate(attrs: AdmissionAttributes, policy: Policy, policyErrors: string, pod: PodView, enforce: boolean): Outcome {
    if (exemptRuntimeClass(pod.spec)) {
      record.exemption(attrs);
      return exemptBecause('runtimeClass');
    }
    const annotations: Record<string, string> = {};
    if (policyErrors) {
      annotations['error'] = `Failed to parse policy: ${policyErrors}`;
      record.error(false, attrs);
    }
    const cache = new Map<string, CheckResult[]>();
    const resultOf = (lv: LevelVersion): CheckResult[] => {
      const key = levelVersionString(lv);
      let r = cache.get(key);
      if (!r) cache.set(key, (r = evaluatePod(lv, pod)));
      return r;
    };
    const out: Outcome = { annotations };
    if (enforce) {
      annotations['enforce-policy'] = levelVersionString(policy.enforce);
      const failed = resultOf(policy.enforce);
      if (failed.length > 0) out.error = admissionForbidden(attrs, `violates PodSecurity "${levelVersionString(policy.enforce)}": ${forbiddenDetail(failed)}`);
      record.evaluation(failed.length > 0 ? 'deny' : 'allow', policy.enforce, 'enforce', attrs);
    }
    const audit = resultOf(policy.audit);
    if (audit.length > 0) {
      annotations['audit-violations'] = `would violate PodSecurity "${levelVersionString(policy.audit)}": ${forbiddenDetail(audit)}`;
      record.evaluation('deny', policy.audit, 'audit', attrs);
    }
    if (!out.error) {
      const warn = resultOf(policy.warn);
      if (warn.length > 0) {
        out.warnings = [`would violate PodSecurity "${levelVersionString(policy.warn)}": ${forbiddenDetail(warn)}`];
        record.evaluation('deny', policy.warn, 'warn', attrs);
      }
    }
    return out;
  }

  /** PSA's namespace and user exemptions, checked before the namespace is read. */
  function requestExemption(attrs: AdmissionAttributes): Outcome | undefined {
    const why = exemptNamespace(attrs.namespace) ? 'namespace' : exemptUser(attrs.user.name) ? 'user' : undefined;
    if (!why) return undefined;
    record.exemption(attrs);
    return exemptBecause(why);
  }

  async function validatePod(attrs: AdmissionAttributes): Promise<Outcome> {
    if (IGNORED_POD_SUBRESOURCES.has(attrs.subresource)) return ALLOW;
    const exempt = requestExemption(attrs);
    if (exempt) return exempt;
    const ns = await deps.getNamespace(attrs.namespace);
    if (!ns) {
      record.error(true, attrs);
      const e = internalError(`failed to lookup namespace ${attrs.namespace}`);
      return { error: e, annotations: { error: `${e.message}: namespaces "${attrs.namespace}" not found` } };
    }
    const { policy, errors } = policyOfNamespace(ns);
    if (errors.length === 0 && policy.enforce.level === 'privileged' && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') {
      record.evaluation('allow', policy.enforce, 'enforce', attrs);
      // PSA names latest here whatever the pinned version (its shared privileged response).
      return { annotations: { 'enforce-policy': levelVersionString({ level: 'privileged', version: LATEST }) } };
    }
    const pod = attrs.object!;
    if (attrs.operation === 'UPDATE' && attrs.oldObject && !isSignificantPodUpdate(pod, attrs.oldObject)) return ALLOW;
    return evaluate(attrs, policy, errors.length ? aggregate(errors.map(fieldErrorString)) : '', podViewOf(pod.metadata, pod['spec']), true);
  }

  async function validatePodController(attrs: AdmissionAttributes): Promise<Outcome> {
    if (attrs.subresource !== '') return ALLOW;
    const exempt = requestExemption(attrs);
    if (exempt) return exempt;
    const ns = await deps.getNamespace(attrs.namespace);
    // Workloads are never refused: a failed lookup is only recorded.
    if (!ns) {
      record.error(true, attrs);
      return { annotations: { error: `failed to lookup namespace ${attrs.namespace}: namespaces "${attrs.namespace}" not found` } };
    }
    const { policy, errors } = policyOfNamespace(ns);
    if (errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return ALLOW;
    const template = podTemplateOf(attrs.resource.group, attrs.resource.plural, attrs.object!);
    if (!template) return ALLOW;
    return evaluate(attrs, policy, errors.length ? aggregate(errors.map(fieldErrorString)) : '', podViewOf(template['metadata'], template['spec']), false);
  }

  async function validateNamespace(attrs: AdmissionAttributes): Promise<Outcome> {
    if (attrs.subresource !== '') return ALLOW;
    const ns = attrs.object!;
    const next = policyOf(ns.metadata.labels);
    const refuse = (): Outcome => ({ error: invalid({ group: '', kind: 'Namespace' }, attrs.name || ns.metadata.name || '', next.errors) });
    if (attrs.operation === 'CREATE') return next.errors.length > 0 ? refuse() : ALLOW;
    if (attrs.operation !== 'UPDATE' || !attrs.oldObject) return ALLOW;
    const prev = policyOf(attrs.oldObject.metadata.labels);
    // Labels that were already invalid in the same way do not block other updates.
    if (next.errors.length > 0 && (prev.errors.length === 0 || JSON.stringify(next.errors) !== JSON.stringify(prev.errors))) return refuse();
    const [n, o] = [next.policy.enforce, prev.policy.enforce];
    if (sameLevelVersion(n, o) || n.level === 'privileged') return ALLOW;
    if (n.version === o.version && compareLevels(n.level, o.level) < 1) return ALLOW;
    const name = attrs.name || ns.metadata.name || '';
    if (exemptNamespace(name)) return exemptBecause('namespace');
    return { warnings: await evaluatePodsInNamespace(name, n) };
  }

  /** PSA's EvaluatePodsInNamespace: what the new enforce level says of the pods already there. */
  async function evaluatePodsInNamespace(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const deadline = now() + NAMESPACE_POD_CHECK_TIMEOUT_MS;
    let pods: StoredObject[];
    try {
      pods = await deps.listPods(namespace);
    } catch {
      return ['failed to list pods while checking new PodSecurity enforce level'];
    }
    const prioritized = prioritizePods(pods);
    const total = prioritized.length;
    const toCheck = prioritized.slice(0, NAMESPACE_MAX_PODS_TO_CHECK);
    let checked = toCheck.length;
    const order: string[] = [];
    const counts = new Map<string, { podName: string; count: number }>();
    for (let i = 0; i < toCheck.length; i++) {
      const pod = toCheck[i]!;
      const failed = evaluatePod(enforce, podViewOf(pod.metadata, pod['spec']));
      if (failed.length > 0) {
        const warning = forbiddenReason(failed);
        const podName = pod.metadata.name ?? '';
        const c = counts.get(warning);
        if (!c) {
          order.push(warning);
          counts.set(warning, { podName, count: 1 });
        } else {
          if (podName < c.podName) c.podName = podName;
          c.count++;
        }
      }
      if (now() > deadline) {
        checked = i + 1;
        break;
      }
    }
    const warnings: string[] = [];
    if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
    if (order.length > 0) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`);
    const decorated = order.map((w) => {
      const c = counts.get(w)!;
      if (c.count === 1) return `${c.podName}: ${w}`;
      if (c.count === 2) return `${c.podName} (and 1 other pod): ${w}`;
      return `${c.podName} (and ${c.count - 1} other pods): ${w}`;
    });
    decorated.sort();
    return [...warnings, ...decorated];
  }

  /** PSA's prioritizePods: one pod per controller first, then the other replicas; exempt runtime classes skipped. */
  function prioritizePods(pods: StoredObject[]): StoredObject[] {
    const first: StoredObject[] = [];
    const replicas: StoredObject[] = [];
    const seen = new Set<string>();
    for (const pod of pods) {
      if (isObj(pod['spec']) && exemptRuntimeClass(pod['spec'])) continue;
      const owner = pod.metadata.ownerReferences?.find((r) => r.controller === true);
      if (!owner) first.push(pod);
      else if (seen.has(owner.uid)) replicas.push(pod);
      else {
        seen.add(owner.uid);
        first.push(pod);
      }
    }
    return [...first, ...replicas];
  }

  return {
    name: 'PodSecurity',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async validate(attrs) {
      if (deps.enabled === false || !attrs.object) return;
      const { group, plural } = attrs.resource;
      let outcome: Outcome;
      if (group === '' && plural === 'namespaces') outcome = await validateNamespace(attrs);
      else if (group === '' && plural === 'pods') outcome = await validatePod(attrs);
      else if (hasPodTemplate(group, plural)) outcome = await validatePodController(attrs);
      else return;
      for (const w of outcome.warnings ?? []) attrs.warn?.(w);
      for (const [k, v] of Object.entries(outcome.annotations ?? {})) attrs.annotate?.(PSA_PREFIX + k, v);
      if (outcome.error) throw outcome.error;
    },
  };
}
