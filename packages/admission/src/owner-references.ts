/**
 * kube 1.24's OwnerReferencesPermissionEnforcement (plugin/pkg/admission/gc/gc_admission.go),
 * validating, CREATE and UPDATE, off by default:
 * - an update that changes `metadata.ownerReferences` needs `delete` on the object itself;
 * - a new `blockOwnerDeletion: true` reference (new by uid, or false/unset before) needs `update`
 *   on the owner's `finalizers` subresource — the owner's resource found by REST-mapping the
 *   reference's apiVersion and kind (custom resources included), `*` on everything's finalizers
 *   cluster-wide being enough;
 * - `pods/status` is exempt (its strategy keeps ownerReferences as they were).
 * Refusals are kube's 403s, with the authorizer's reason and error as kube prints them (`%v, %v`).
 */
import { forbidden, groupResourceOf, type StoredObject, type UserInfo } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

/** What the plugin asks the authorizer (a resource request). */
export interface AccessAttributes {
  user: UserInfo;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** The authorizer's answer: allowed or not, with its reason and error (Go's nil: undefined). */
export interface AccessDecision {
  allowed: boolean;
  reason: string;
  error?: string;
}

/** One top-level resource a group version serves, as discovery lists it. */
export interface ServedResource {
  plural: string;
  kind: string;
  namespaced: boolean;
}

export interface OwnerReferencesDeps {
  authorize(a: AccessAttributes): Promise<AccessDecision>;
  /** The top-level resources `group/version` serves (built-in and custom), in discovery order. */
  servedResources(group: string, version: string): readonly ServedResource[];
}

interface OwnerRef {
  apiVersion?: unknown;
  kind?: unknown;
  name?: unknown;
  uid?: unknown;
  controller?: unknown;
  blockOwnerDeletion?: unknown;
}

const refsOf = (obj: StoredObject | undefined): OwnerRef[] => {
  const refs = obj?.metadata?.ownerReferences as unknown;
  return Array.isArray(refs) ? (refs as OwnerRef[]) : [];
};

/** Semantic.DeepEqual of two OwnerReferences: the six fields, a pointer unset unlike false. */
const sameRef = (a: OwnerRef, b: OwnerRef): boolean =>
  a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.uid === b.uid && a.controller === b.controller && a.blockOwnerDeletion === b.blockOwnerDeletion;

/** kube's isChangingOwnerReference: a create with any reference; an update that changes the list (order counts). */
function isChangingOwnerReference(obj: StoredObject | undefined, old: StoredObject | undefined): boolean {
  const next = refsOf(obj);
  if (!old) return next.length > 0;
  const before = refsOf(old);
  return next.length !== before.length || next.some((r, i) => !sameRef(r, before[i]!));
}

/** kube's newBlockingOwnerDeletionRefs: blocking references new by uid, or not blocking before. */
function newBlockingRefs(obj: StoredObject | undefined, old: StoredObject | undefined): OwnerRef[] {
  const blocking = refsOf(obj).filter((r) => r.blockOwnerDeletion === true);
  if (blocking.length === 0 || !old) return blocking;
  const oldByUid = new Map(refsOf(old).map((r) => [String(r.uid ?? ''), r]));
  return blocking.filter((r) => oldByUid.get(String(r.uid ?? ''))?.blockOwnerDeletion !== true);
}

/** A resource a reference maps to (kube's RESTMapping: group, version, plural, scope). */
interface Mapping {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/** Go's meta.UnsafeGuessKindToResource plural, which discovery's mapper registers for `<Kind>List`. */
function guessPlural(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('s')) return `${k}es`;
  if (k.endsWith('y')) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

/**
 * kube's RESTMappings(GroupKind, version) over the discovery mapper: the reference's group and
 * version only; the kind as discovery lists it or lower-cased (the last resource listed wins, as
 * the mapper's map keeps it), or `<Kind>List` with a guessed plural. An error's text is Go's.
 */
function restMapping(apiVersion: string, kind: string, served: OwnerReferencesDeps['servedResources']): Mapping | Error {
  const slashes = apiVersion.split('/').length - 1;
  if (slashes > 1) return new Error(`unexpected GroupVersion string: ${apiVersion}`);
  const [group, version] = slashes === 1 ? [apiVersion.slice(0, apiVersion.indexOf('/')), apiVersion.slice(apiVersion.indexOf('/') + 1)] : ['', apiVersion];
  let found: Mapping | undefined;
  for (const r of served(group, version)) {
    if (r.kind === kind || r.kind.toLowerCase() === kind) found = { group, version, plural: r.plural, namespaced: r.namespaced };
    else if (`${r.kind}List` === kind) found = { group, version, plural: guessPlural(kind), namespaced: r.namespaced };
  }
  if (found) return found;
  const gv = group ? `${group}/${version}` : version;
  return new Error(`no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(gv)}`);
}

/** Go's `%v, %v` of an authorizer's reason and error. */
const why = (d: AccessDecision): string => `${d.reason}, ${d.error ?? '<nil>'}`;

export function createOwnerReferencesPermissionEnforcement(deps: OwnerReferencesDeps): AdmissionPlugin {
  const refuse = (a: AdmissionAttributes, message: string) => {
    // admission.NewForbidden names the object (generateName, or "Unknown", before it has a name).
    const meta = a.object?.metadata;
    return forbidden(groupResourceOf(a.resource), meta?.name || meta?.generateName || 'Unknown', message);
  };
  return {
    name: 'OwnerReferencesPermissionEnforcement',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async validate(a) {
      if (a.resource.group === '' && a.resource.plural === 'pods' && a.subresource === 'status') return;
      if (!isChangingOwnerReference(a.object, a.oldObject)) return;
      const resource = { apiGroup: a.resource.group, apiVersion: a.resource.version, resource: a.resource.plural };
      // A creator could as well not have created it; anyone else must be able to delete it.
      if (a.operation !== 'CREATE') {
        const d = await deps.authorize({ user: a.user, verb: 'delete', ...resource, subresource: a.subresource, namespace: a.namespace, name: a.name });
        if (!d.allowed) throw refuse(a, `cannot set an ownerRef on a resource you can't delete: ${why(d)}`);
      }
      const blocking = newBlockingRefs(a.object, a.oldObject);
      if (blocking.length === 0) return;
      // kube asks once whether the user may finalize anything before mapping any reference.
      const anything = await deps.authorize({ user: a.user, verb: 'update', apiGroup: '*', apiVersion: '*', resource: '*', subresource: 'finalizers', namespace: '', name: '*' });
      if (anything.allowed) return;
      for (const ref of blocking) {
        const apiVersion = String(ref.apiVersion ?? '');
        const kind = String(ref.kind ?? '');
        const mapping = restMapping(apiVersion, kind, deps.servedResources);
        if (mapping instanceof Error) {
          throw refuse(a, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${apiVersion} Kind ${kind}: ${mapping.message}`);
        }
        const d = await deps.authorize({
          user: a.user,
          verb: 'update',
          apiGroup: mapping.group,
          apiVersion: mapping.version,
          resource: mapping.plural,
          subresource: 'finalizers',
          // A namespaced owner must be in the dependent's namespace.
          namespace: mapping.namespaced ? a.namespace : '',
          name: String(ref.name ?? ''),
        });
        if (!d.allowed) throw refuse(a, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${why(d)}`);
      }
    },
  };
}
