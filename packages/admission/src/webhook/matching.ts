/**
 * Which webhooks a request goes to, as kube's webhook/rules (Matcher), webhook/namespace and
 * webhook/object matchers and generic.Webhook.ShouldCallHook decide it.
 */
import { StatusError, internalError, isPlainObject, labelSelectorFromObject, type LabelSelector, type LabelSelectorObject, type ResourceDefinition, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, GroupVersionKind } from '../interfaces.js';
import type { Webhook } from './config.js';

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

const exactOrWildcard = (items: string[], requested: string): boolean => items.some((i) => i === '*' || i === requested);

/** True for the core namespaces resource (cluster-scoped, but its own namespace for admission). */
function isNamespaceResource(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.plural === 'namespaces';
}

/**
 * The namespace kube's admission attributes carry: for a namespace addressed by name (kube's
 * RequestInfo sets namespace == name there; a POST to the collection has none) its name, else
 * the object's namespace ('' when cluster-scoped).
 */
export function admissionNamespace(attrs: AdmissionAttributes): string {
  if (isNamespaceResource(attrs)) return attrs.operation === 'CREATE' ? '' : attrs.name;
  return attrs.namespace;
}

/**
 * kube's rules.IsWebhookConfigurationResource: webhooks never see writes of webhook
 * configurations, so a broken webhook cannot lock its own configuration in place.
 */
export function isWebhookConfigurationResource(attrs: AdmissionAttributes): boolean {
  const def = attrs.resource;
  return def.group === 'admissionregistration.k8s.io' && (def.plural === 'mutatingwebhookconfigurations' || def.plural === 'validatingwebhookconfigurations');
}

/**
 * kube's rules.Matcher.Matches: scope, operation, group, version and resource/subresource.
 * `resource` stands in for the request's (an equivalent resource, for matchPolicy Equivalent).
 */
export function ruleMatches(rule: Record<string, unknown>, attrs: AdmissionAttributes, resource: ResourceDefinition = attrs.resource): boolean {
  const def = resource;
  const scope = typeof rule['scope'] === 'string' ? rule['scope'] : '*';
  const namespace = admissionNamespace(attrs);
  switch (scope) {
    case '*':
      break;
    case 'Namespaced':
      if (isNamespaceResource(attrs) || namespace === '') return false;
      break;
    case 'Cluster':
      if (!(isNamespaceResource(attrs) || namespace === '')) return false;
      break;
    default:
      return false;
  }
  if (!exactOrWildcard(strings(rule['operations']), attrs.operation)) return false;
  if (!exactOrWildcard(strings(rule['apiGroups']), def.group)) return false;
  if (!exactOrWildcard(strings(rule['apiVersions']), def.version)) return false;
  return strings(rule['resources']).some((resSub) => {
    const slash = resSub.indexOf('/');
    const res = slash < 0 ? resSub : resSub.slice(0, slash);
    const sub = slash < 0 ? '' : resSub.slice(slash + 1);
    return (res === '*' || res === def.plural) && (sub === '*' || sub === attrs.subresource);
  });
}

/** A webhook's selector, parsed; a selector kube cannot parse is an InternalError when consulted. */
function parseSelector(sel: unknown): LabelSelector | Error {
  try {
    return labelSelectorFromObject(isPlainObject(sel) ? (sel as LabelSelectorObject) : {});
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

function isEmptySelector(sel: unknown): boolean {
  if (!isPlainObject(sel)) return true;
  const labels = sel['matchLabels'];
  const exprs = sel['matchExpressions'];
  return (!isPlainObject(labels) || Object.keys(labels).length === 0) && (!Array.isArray(exprs) || exprs.length === 0);
}

/** Reads a namespace (the watch cache, then storage when the cache has not seen it). */
export type NamespaceGetter = (name: string) => Promise<StoredObject | undefined>;

/** kube's namespace.Matcher.MatchNamespaceSelector. Throws a StatusError when the answer is an error. */
export async function matchNamespaceSelector(hook: Webhook, attrs: AdmissionAttributes, getNamespace: NamespaceGetter): Promise<boolean> {
  const namespace = admissionNamespace(attrs);
  // A cluster-scoped resource other than a namespace is never exempted.
  if (namespace === '' && !isNamespaceResource(attrs)) return true;
  if (isEmptySelector(hook.namespaceSelector)) return true;
  const selector = parseSelector(hook.namespaceSelector);
  if (selector instanceof Error) throw internalError(selector);
  let labels: Record<string, string> | undefined;
  if (isNamespaceResource(attrs) && attrs.operation !== 'DELETE') {
    // A namespace being created or updated: its own (new) labels, which no cache has yet.
    labels = attrs.object?.metadata.labels;
  } else {
    const ns = await getNamespace(namespace);
    // kube answers the lister's NotFound as it is (404), for backwards compatibility.
    if (!ns) throw new StatusError({ code: 404, reason: 'NotFound', message: `namespaces "${namespace}" not found`, details: { name: namespace, kind: 'namespaces' } });
    labels = ns.metadata.labels;
  }
  return selector.matches(labels ?? {});
}

/** kube's object.Matcher.MatchObjectSelector: the new or the old object's labels match. */
export function matchObjectSelector(hook: Webhook, attrs: AdmissionAttributes): boolean {
  if (isEmptySelector(hook.objectSelector)) return true;
  const selector = parseSelector(hook.objectSelector);
  if (selector instanceof Error) throw internalError(selector);
  const matches = (obj: StoredObject | undefined): boolean => !!obj && selector.matches(obj.metadata.labels ?? {});
  return matches(attrs.object) || matches(attrs.oldObject);
}

/**
 * kube's EquivalentResourceMapper: the definitions that store `def`'s objects (its other
 * versions; other groups sharing its storage), `def` included, each serving `subresource`.
 */
export type EquivalentResources = (def: ResourceDefinition, subresource: string) => readonly ResourceDefinition[];

/** What a webhook is called with (kube's WebhookInvocation). */
export interface WebhookInvocation {
  hook: Webhook;
  /** The request's resource, or the equivalent one the webhook's rules name. */
  resource: ResourceDefinition;
  subresource: string;
  /** The kind of the objects the webhook gets: `resource`'s (or its sub-resource's own kind). */
  kind: GroupVersionKind;
}

/** kube's EquivalentResourceMapper.KindFor: the kind a resource's sub-resource reads and writes. */
function kindFor(def: ResourceDefinition, subresource: string): GroupVersionKind {
  const own = subresource === '' ? undefined : def.subresources.find((s) => s.name === subresource)?.kind;
  const k = own ?? def;
  return { group: k.group, version: k.version, kind: k.kind };
}

/**
 * kube's ShouldCallHook: the invocation, or undefined when the webhook is not called. With
 * matchPolicy Equivalent (v1's default) a webhook whose rules do not name the request's resource
 * is still called when, rule by rule, one names an equivalent resource (the same objects through
 * another version or group: a `widgets/v2` write reaches a `widgets/v1` webhook, an
 * `events.k8s.io/v1` write a core/v1 `events` webhook); it then gets that resource and kind, and
 * the objects converted to them (kube's generic.Webhook.ShouldCallHook).
 */
export async function shouldCallHook(hook: Webhook, attrs: AdmissionAttributes, getNamespace: NamespaceGetter, equivalents?: EquivalentResources): Promise<WebhookInvocation | undefined> {
  let nsMatch: boolean;
  let nsErr: unknown;
  try {
    nsMatch = await matchNamespaceSelector(hook, attrs, getNamespace);
  } catch (e) {
    nsMatch = false;
    nsErr = e;
  }
  // Webhooks that do not apply answer no error, even an unexpected one.
  if (!nsMatch && nsErr === undefined) return undefined;
  let objMatch: boolean;
  let objErr: unknown;
  try {
    objMatch = matchObjectSelector(hook, attrs);
  } catch (e) {
    objMatch = false;
    objErr = e;
  }
  if (!objMatch && objErr === undefined) return undefined;
  let invocation: WebhookInvocation | undefined;
  if (hook.rules.some((r) => ruleMatches(r, attrs))) {
    invocation = { hook, resource: attrs.resource, subresource: attrs.subresource, kind: attrs.kind };
  } else if (hook.matchPolicy === 'Equivalent' && equivalents) {
    const candidates = equivalents(attrs.resource, attrs.subresource);
    // Earlier rules first; within a rule, equivalent resources in registration order.
    outer: for (const rule of hook.rules) {
      for (const equivalent of candidates) {
        if (equivalent === attrs.resource || !ruleMatches(rule, attrs, equivalent)) continue;
        invocation = { hook, resource: equivalent, subresource: attrs.subresource, kind: kindFor(equivalent, attrs.subresource) };
        break outer;
      }
    }
  }
  if (!invocation) return undefined;
  if (nsErr !== undefined) throw nsErr;
  if (objErr !== undefined) throw objErr;
  return invocation;
}
