/**
 * Minimal read/create/update access to Services and Endpoints for the `kubernetes` Service
 * reconciler. kube's bootstrap controller goes through the API (its loopback client); plinth's
 * registry can pass its stores as clients. Until then these storage-backed clients do what the
 * registry would for these two writers: defaults, allocation (Services), strategy, validation
 * (422 as kube), kube's keys (`<prefix>/services/specs/…`, `<prefix>/services/endpoints/…`) and
 * optimistic concurrency. They run no admission (kube's loopback writes are admitted, but no
 * built-in plugin changes these objects).
 */
import { randomUUID } from 'node:crypto';
import {
  type Endpoints,
  type Service,
  type StoredObject,
  alreadyExists,
  cloneJson,
  conflict,
  defaultEndpoints,
  defaultService,
  invalid,
  nameIsDNS1035Label,
  nameIsDNSSubdomain,
  OPTIMISTIC_LOCK_MESSAGE,
  notFound,
  prepareServiceForCreate,
  prepareServiceForUpdate,
  validateEndpoints,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateEndpointSlice,
  validateEndpointSliceUpdate,
  validateServiceCreate,
  validateServiceUpdate,
} from '@plinth/api';
import { type Store, isStorageError, normalizePrefix } from '@plinth/storage';
import type { ServiceREST } from './service-rest.js';

/** What the reconciler needs of a resource's API. Errors are Status errors (kube's). */
export interface ObjectClient<T extends StoredObject> {
  /** The object, or undefined when absent. */
  get(namespace: string, name: string): Promise<T | undefined>;
  /** 409 AlreadyExists when it exists. */
  create(obj: T): Promise<T>;
  /** Writes `obj` over the stored one at `obj.metadata.resourceVersion` (409 Conflict when it moved). */
  update(obj: T): Promise<T>;
}

const SERVICES = { group: '', resource: 'services' };
const ENDPOINTS = { group: '', resource: 'endpoints' };
const ENDPOINT_SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices' };

async function getOrUndefined<T extends StoredObject>(store: Store, key: string): Promise<T | undefined> {
  try {
    return (await store.get(key)) as T;
  } catch (e) {
    if (isStorageError(e, 'NotFound')) return undefined;
    throw e;
  }
}

function stamp(obj: StoredObject): void {
  const meta = obj.metadata;
  delete meta.resourceVersion;
  meta.uid = randomUUID();
  meta.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * A CAS update of `key` to `obj` at its resourceVersion (409 Conflict when the stored object
 * moved); `prepare` runs on each attempt against the stored object.
 */
async function casUpdate<T extends StoredObject>(store: Store, key: string, obj: T, gr: { group: string; resource: string }, prepare: (next: T, old: T) => Promise<void>): Promise<T> {
  try {
    return (await store.guaranteedUpdate(key, async (cur) => {
      const old = cur as T;
      if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion) {
        throw conflict(gr, obj.metadata.name ?? '', OPTIMISTIC_LOCK_MESSAGE);
      }
      const next = cloneJson(obj);
      next.metadata = { ...next.metadata, uid: old.metadata.uid, creationTimestamp: old.metadata.creationTimestamp ?? null };
      delete next.metadata.resourceVersion;
      await prepare(next, old);
      return next;
    })) as T;
  } catch (e) {
    if (isStorageError(e, 'NotFound')) throw notFound(gr, obj.metadata.name ?? '');
    throw e;
  }
}

/** Services in etcd under kube's key, written as the Service REST writes them. */
export function createStorageServiceClient(opts: { store: Store; rest: ServiceREST; etcdPrefix?: string }): ObjectClient<Service> {
  const prefix = normalizePrefix(opts.etcdPrefix ?? '/registry');
  const key = (ns: string, name: string): string => `${prefix}/services/specs/${ns}/${name}`;
  return {
    async get(ns, name) {
      const svc = await getOrUndefined<Service>(opts.store, key(ns, name));
      return svc && opts.rest.defaultOnRead(svc);
    },
    async create(obj) {
      const svc = cloneJson(obj);
      defaultService(svc);
      const txn = await opts.rest.allocateOnCreate(svc, false);
      try {
        stamp(svc);
        prepareServiceForCreate(svc);
        const errs = [...validateObjectMeta(svc.metadata, true, nameIsDNS1035Label), ...validateServiceCreate(svc)];
        if (errs.length > 0) throw invalid({ group: '', kind: 'Service' }, svc.metadata.name ?? '', errs);
        const out = (await opts.store.create(key(svc.metadata.namespace ?? '', svc.metadata.name ?? ''), svc)) as Service;
        await txn.commit();
        return out;
      } catch (e) {
        await txn.revert();
        if (isStorageError(e, 'KeyExists')) throw alreadyExists(SERVICES, svc.metadata.name ?? '');
        throw e;
      }
    },
    update(obj) {
      const svc = cloneJson(obj);
      defaultService(svc);
      return casUpdate(opts.store, key(svc.metadata.namespace ?? '', svc.metadata.name ?? ''), svc, SERVICES, async (next, old) => {
        const txn = await opts.rest.reallocateOnUpdate(next, old, false);
        try {
          prepareServiceForUpdate(next, old);
          const errs = [...validateObjectMetaUpdate(next.metadata, old.metadata), ...validateServiceUpdate(next, old)];
          if (errs.length > 0) throw invalid({ group: '', kind: 'Service' }, next.metadata.name ?? '', errs);
        } catch (e) {
          await txn.revert();
          throw e;
        }
        // As kube's store: the update's allocations are committed before its write.
        await txn.commit();
      });
    },
  };
}

/** Endpoints in etcd under kube's key, defaulted and validated as kube's Endpoints storage does. */
export function createStorageEndpointsClient(opts: { store: Store; etcdPrefix?: string }): ObjectClient<Endpoints> {
  const prefix = normalizePrefix(opts.etcdPrefix ?? '/registry');
  const key = (ns: string, name: string): string => `${prefix}/services/endpoints/${ns}/${name}`;
  const check = (ep: Endpoints, old?: Endpoints): void => {
    const errs = [...validateObjectMeta(ep.metadata, true, nameIsDNSSubdomain), ...(old ? validateObjectMetaUpdate(ep.metadata, old.metadata) : []), ...validateEndpoints(ep)];
    if (errs.length > 0) throw invalid({ group: '', kind: 'Endpoints' }, ep.metadata.name ?? '', errs);
  };
  return {
    get: (ns, name) => getOrUndefined<Endpoints>(opts.store, key(ns, name)),
    async create(obj) {
      const ep = cloneJson(obj);
      defaultEndpoints(ep);
      stamp(ep);
      check(ep);
      try {
        return (await opts.store.create(key(ep.metadata.namespace ?? '', ep.metadata.name ?? ''), ep)) as Endpoints;
      } catch (e) {
        if (isStorageError(e, 'KeyExists')) throw alreadyExists(ENDPOINTS, ep.metadata.name ?? '');
        throw e;
      }
    },
    update(obj) {
      const ep = cloneJson(obj);
      defaultEndpoints(ep);
      return casUpdate(opts.store, key(ep.metadata.namespace ?? '', ep.metadata.name ?? ''), ep, ENDPOINTS, async (next, old) => check(next, old));
    },
  };
}

/** A client that can also delete (the EndpointSlice a changed address type replaces). */
export interface DeletingObjectClient<T extends StoredObject> extends ObjectClient<T> {
  /** 404 NotFound when absent. */
  delete(namespace: string, name: string): Promise<void>;
}

/**
 * discovery.k8s.io/v1 EndpointSlices in etcd under kube's key (`<prefix>/endpointslices/…`),
 * given a generation and validated as kube's EndpointSlice strategy does for a v1 write (the
 * reconciler never writes deprecatedTopology, so nothing is dropped).
 */
export function createStorageEndpointSliceClient(opts: { store: Store; etcdPrefix?: string }): DeletingObjectClient<StoredObject> {
  const prefix = normalizePrefix(opts.etcdPrefix ?? '/registry');
  const key = (ns: string, name: string): string => `${prefix}/endpointslices/${ns}/${name}`;
  const check = (slice: StoredObject, old?: StoredObject): void => {
    const errs = [
      ...validateObjectMeta(slice.metadata, true, nameIsDNSSubdomain),
      ...(old ? validateObjectMetaUpdate(slice.metadata, old.metadata) : []),
      ...validateEndpointSlice(slice),
      ...(old ? validateEndpointSliceUpdate(slice, old) : []),
    ];
    if (errs.length > 0) throw invalid({ group: 'discovery.k8s.io', kind: 'EndpointSlice' }, slice.metadata.name ?? '', errs);
  };
  return {
    get: (ns, name) => getOrUndefined<StoredObject>(opts.store, key(ns, name)),
    async create(obj) {
      const slice = cloneJson(obj);
      stamp(slice);
      slice.metadata.generation = 1;
      check(slice);
      try {
        return await opts.store.create(key(slice.metadata.namespace ?? '', slice.metadata.name ?? ''), slice);
      } catch (e) {
        if (isStorageError(e, 'KeyExists')) throw alreadyExists(ENDPOINT_SLICES, slice.metadata.name ?? '');
        throw e;
      }
    },
    update(obj) {
      const slice = cloneJson(obj);
      return casUpdate(opts.store, key(slice.metadata.namespace ?? '', slice.metadata.name ?? ''), slice, ENDPOINT_SLICES, async (next, old) => {
        // The reconciler writes only when endpoints, ports or labels changed: kube bumps the generation.
        next.metadata.generation = (old.metadata.generation ?? 0) + 1;
        check(next, old);
      });
    },
    async delete(ns, name) {
      try {
        await opts.store.delete(key(ns, name));
      } catch (e) {
        if (isStorageError(e, 'NotFound')) throw notFound(ENDPOINT_SLICES, name);
        throw e;
      }
    },
  };
}
