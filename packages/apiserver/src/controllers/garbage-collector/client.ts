/**
 * How the garbage collector reads and writes objects: through the registry stores, as the user
 * kube's GC runs as, so admission applies to its patches and deletes as in kube (where the GC is
 * a client of the apiserver). Objects are found by apiVersion and kind (kube's REST mapping of an
 * ownerRef), in the served version the reference names.
 */
import { apiVersionOf, cloneJson, conflict, groupResourceOf, isStored, storageDefOf, type Catalog, type OwnerReference, type ResourceDefinition, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore, RequestScope } from '../../registry/store.js';
import type { PropagationPolicy } from '../../registry/delete.js';
import type { Identity } from './graph.js';

/** kube-controller-manager's GC client identity (its service account; plinth's controllers act with system:masters). */
export const GC_USER: UserInfo = { name: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: ['system:masters'] };

/** kube's restMappingError: the kind is not served (yet); the item is retried. */
export class RestMappingError extends Error {
  constructor(apiVersion: string, kind: string) {
    const slash = apiVersion.lastIndexOf('/');
    super(`unable to get REST mapping for ${slash < 0 ? apiVersion : apiVersion.slice(slash + 1)}/${kind}.`);
  }
}

/** kube's namespacedOwnerOfClusterScopedObjectErr: never retried, the object never collected. */
export const NAMESPACED_OWNER_OF_CLUSTER_SCOPED = new Error('cluster-scoped objects cannot refer to namespaced owners');

/** Thrown out of a patch function when nothing is to change (no write). */
const NO_CHANGE = new Error('no change');

export interface GCClientDeps {
  catalog: Catalog;
  storeOf(def: ResourceDefinition): ResourceStore | undefined;
}

export interface GCClient {
  /** The served resource of an apiVersion and kind. */
  resource(apiVersion: string, kind: string): { def: ResourceDefinition; store: ResourceStore } | undefined;
  /** A consistent GET of what `identity` names (kube's getObject); throws 404s. */
  get(identity: Identity): Promise<StoredObject>;
  /** GET of an owner by reference, in `namespace` when its kind is namespaced. */
  getOwner(ref: OwnerReference, namespace: string): Promise<StoredObject>;
  /** Whether the kind of an apiVersion/kind is namespaced (throws RestMappingError). */
  isNamespaced(apiVersion: string, kind: string): boolean;
  /** Changes the object `identity` names if its UID is still that one (kube's uid precondition); `mutate` returns false for no change. */
  patch(identity: Identity, mutate: (obj: StoredObject) => boolean): Promise<void>;
  delete(identity: Identity, policy: PropagationPolicy): Promise<void>;
}

export function createGCClient(deps: GCClientDeps): GCClient {
  let generation = -1;
  let byKind = new Map<string, ResourceDefinition>();
  const mapping = (apiVersion: string, kind: string): ResourceDefinition | undefined => {
    if (generation !== deps.catalog.generation) {
      generation = deps.catalog.generation;
      byKind = new Map();
      for (const d of deps.catalog.all()) if (isStored(d) && d.verbs.includes('get')) byKind.set(`${apiVersionOf(d)}/${d.kind}`, d);
    }
    return byKind.get(`${apiVersion}/${kind}`);
  };
  const resource = (apiVersion: string, kind: string): { def: ResourceDefinition; store: ResourceStore } | undefined => {
    const def = mapping(apiVersion, kind);
    const store = def && (deps.storeOf(def) ?? deps.storeOf(storageDefOf(def)));
    return def && store ? { def, store } : undefined;
  };
  const target = (identity: Identity): { store: ResourceStore; scope: RequestScope } => {
    const r = resource(identity.apiVersion, identity.kind);
    if (!r) throw new RestMappingError(identity.apiVersion, identity.kind);
    if (r.def.namespaced && identity.namespace === '') throw NAMESPACED_OWNER_OF_CLUSTER_SCOPED;
    return { store: r.store, scope: { user: GC_USER, namespace: r.def.namespaced ? identity.namespace : '' } };
  };
  return {
    resource,
    isNamespaced(apiVersion, kind) {
      const def = mapping(apiVersion, kind);
      if (!def) throw new RestMappingError(apiVersion, kind);
      return def.namespaced;
    },
    async get(identity) {
      const { store, scope } = target(identity);
      return store.get(scope, identity.name);
    },
    async getOwner(ref, namespace) {
      const { store, scope } = target({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace });
      return store.get(scope, ref.name);
    },
    async patch(identity, mutate) {
      const { store, scope } = target(identity);
      try {
        await store.patch(scope, identity.name, {
          kind: 'patch',
          apply: (current) => {
            if (current.metadata.uid !== identity.uid) {
              throw conflict(groupResourceOf(store.def), identity.name, `Precondition failed: UID in precondition: ${identity.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
            }
            const next = cloneJson(current);
            if (!mutate(next)) throw NO_CHANGE;
            return next;
          },
        });
      } catch (e) {
        if (e === NO_CHANGE) return;
        throw e;
      }
    },
    async delete(identity, policy) {
      const { store, scope } = target(identity);
      await store.delete(scope, identity.name, { propagationPolicy: policy, preconditions: { uid: identity.uid } });
    },
  };
}
