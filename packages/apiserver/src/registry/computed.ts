/**
 * Storage of what is read but never kept: kube's rest.Getter and rest.Lister that are not a
 * registry.Store (componentstatuses: each read probes the components). Such a resource
 * (`storage: 'computed'` in the catalog) serves get and list only — no watch, no writes, no watch
 * cache, no storage version; handlers/computed.ts answers it (Table and Protobuf included).
 */
import type { ResourceDefinition, StoredObject, UserInfo } from '@plinth/api';

export interface ReadContext {
  user: UserInfo;
  /** The request's namespace ('' for a cluster-scoped resource). */
  namespace: string;
}

export interface ComputedStorage {
  /** The object named `name` (apiVersion and kind set), or a StatusError (kube's answer for a missing one). */
  get(ctx: ReadContext, name: string): Promise<StoredObject>;
  /** Every object, in the order kube lists them (apiVersion and kind set). */
  list(ctx: ReadContext): Promise<StoredObject[]>;
}

/** What serves each computed resource. */
export type ComputedStorages = ReadonlyMap<ResourceDefinition, ComputedStorage>;
