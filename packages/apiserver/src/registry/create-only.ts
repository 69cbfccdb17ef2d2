/**
 * Storage of what is created but never kept: kube's rest.Creater and rest.NamedCreater that are
 * not a registry.Store. A create computes an answer from the body and the request (a TokenReview's
 * verdict, the caller's identity, a signed token) and nothing reaches etcd — so such a resource
 * has no watch cache, no list or watch, no namespace cleanup and no controller.
 *
 * The catalog says what is served this way: a resource with `storage: 'none'` (tokenreviews,
 * selfsubjectreviews) or a sub-resource with a `kind` of its own (serviceaccounts/token). The
 * handler (handlers/create-only.ts) decodes the body into that kind, runs mutating admission and
 * calls `create`; the storage calls `validate` (validating admission) where kube's REST calls its
 * createValidation.
 */
import type { ResourceDefinition, StoredObject, SubresourceDefinition, UserInfo } from '@plinth/api';

export interface CreateContext {
  user: UserInfo;
  /** The request's namespace ('' for a cluster-scoped resource). */
  namespace: string;
  /** The parent object's name for a sub-resource ('' for a collection). */
  name: string;
  /** `dryRun=All`. kube's create-only storages do not consult it. */
  dryRun: boolean;
}

/** kube's rest.ValidateObjectFunc: validating admission of the object about to be answered. */
export type ValidateObject = (obj: StoredObject) => Promise<void>;

export interface CreateOnlyStorage {
  /** Answers a create of `obj` (decoded and defaulted) with the object to return (201). */
  create(ctx: CreateContext, obj: StoredObject, validate: ValidateObject): Promise<StoredObject>;
}

/** What serves each create-only path: a resource that is not stored, or a sub-resource of its own kind. */
export type CreateOnlyStorages = ReadonlyMap<ResourceDefinition | SubresourceDefinition, CreateOnlyStorage>;
