/**
 * The resource catalog: everything plinth knows about one served type lives in its
 * `ResourceDefinition` — discovery facts, schema, defaulting, validation and the REST strategy.
 * Handlers, discovery and (later) OpenAPI, apply and Table read the same entry.
 */
import { createHash } from 'node:crypto';
import type { FieldError } from './field-errors.js';
import type { NameValidator } from './validation.js';
import type { Schema } from './schema.js';
import type { StoredObject } from './types.js';
import type { GroupKind, GroupResource } from './errors.js';
import type { TableDefinition } from './tables.js';

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

/**
 * Per-resource behaviour plugged into the generic store (kube's RESTCreateStrategy and
 * RESTUpdateStrategy). The generic store calls these in one fixed order, so no resource can skip
 * validation: defaults → prepareForCreate/Update → validate/validateUpdate.
 */
export interface ResourceStrategy {
  /** API defaults (kube's `SetDefaults_*`), applied to every decoded body. Mutates in place. */
  defaults?(obj: StoredObject): void;
  /** Resets fields a client may not set on create (e.g. status). Mutates in place. */
  prepareForCreate?(obj: StoredObject): void;
  /** Resets fields a client may not change on update (e.g. status from the main resource). */
  prepareForUpdate?(obj: StoredObject, old: StoredObject): void;
  /** Type-specific validation on create; object metadata is validated by the store. */
  validate(obj: StoredObject): FieldError[];
  /** Type-specific validation on update (immutable fields etc.); `validate` also runs. */
  validateUpdate?(obj: StoredObject, old: StoredObject): FieldError[];
  /**
   * Whether something besides `metadata.finalizers` holds back removal (a Namespace's
   * `spec.finalizers`). The store removes an object once this and metadata.finalizers are empty.
   */
  hasPendingFinalizers?(obj: StoredObject): boolean;
  /** Marks the start of a two-phase deletion (e.g. a Namespace's phase `Terminating`). */
  beginDeletion?(obj: StoredObject): void;
}

/**
 * A kind: what a body of it looks like and how it is defaulted and validated. Every resource has
 * one (its ResourceDefinition is also a KindDefinition); a sub-resource may have its own
 * (serviceaccounts/token takes an authentication.k8s.io/v1 TokenRequest).
 */
export interface KindDefinition {
  /** API group; '' for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The OpenAPI schema of the kind, without apiVersion/kind/metadata (added by the catalog). */
  schema: Schema;
  strategy: ResourceStrategy;
}

/**
 * A sub-resource served besides the main resource (`<plural>/<name>/<sub>`). It is one of two
 * kinds: an update of part of the parent object through the parent's store (`strategy`:
 * namespaces/status, namespaces/finalize), or a create with a kind of its own whose answer is
 * computed, not stored (`kind`: serviceaccounts/token → TokenRequest, kube's NamedCreater with a
 * GroupVersionKindProvider; its discovery entry names that group, version and kind).
 */
export interface SubresourceDefinition {
  /** The URL segment after the object's name. */
  name: string;
  verbs: Verb[];
  /** The update strategy of a sub-resource of the parent's own kind. */
  strategy?: ResourceStrategy;
  /** The sub-resource's own kind (its body and answer). */
  kind?: KindDefinition;
}

/**
 * Where a resource's objects live. `etcd`: the generic store, with a watch cache, namespace
 * cleanup and controllers. `none`: nothing is kept — a create computes an answer from the body
 * and returns it (kube's review resources: TokenReview, SelfSubjectReview). Such a resource
 * serves only `create`; it has no list kind, no watch and no storage version.
 */
export type ResourceStorage = 'etcd' | 'none';

export interface ResourceDefinition extends KindDefinition {
  /** '' for a resource that is not stored (it has no list). */
  listKind: string;
  /** The resource name in URLs (plural, lower case). */
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  verbs: Verb[];
  storage: ResourceStorage;
  /** Sub-resources served besides the main resource, in discovery order. */
  subresources: SubresourceDefinition[];
  nameValidator: NameValidator;
  /** Whether PUT of a missing object creates it (kube's AllowCreateOnUpdate). */
  allowCreateOnUpdate: boolean;
  /** Whether an immediate DELETE answers with the object instead of a success Status. */
  returnDeletedObject: boolean;
  /** Table columns for `kubectl get` (kube's printer); the default Name/Created At when absent. */
  table?: TableDefinition;
}

/** Whether objects of the resource are kept (in etcd, behind the generic store). */
export function isStored(def: Pick<ResourceDefinition, 'storage'>): boolean {
  return def.storage === 'etcd';
}

export function apiVersionOf(def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export function groupResourceOf(def: Pick<ResourceDefinition, 'group' | 'plural'>): GroupResource {
  return { group: def.group, resource: def.plural };
}

export function groupKindOf(def: Pick<ResourceDefinition, 'group' | 'kind'>): GroupKind {
  return { group: def.group, kind: def.kind };
}

/** kube's discovery `storageVersionHash`: first 8 bytes of sha256("group/version/kind"), base64. */
export function storageVersionHash(def: Pick<ResourceDefinition, 'group' | 'version' | 'kind'>): string {
  return createHash('sha256').update(`${def.group}/${def.version}/${def.kind}`).digest().subarray(0, 8).toString('base64');
}

/** An immutable index of resource definitions by group/version/resource and by kind. */
export class Catalog {
  readonly #byResource = new Map<string, ResourceDefinition>();
  readonly #byKind = new Map<string, KindDefinition>();
  readonly #all: ResourceDefinition[];
  readonly #kinds: KindDefinition[] = [];

  constructor(defs: ResourceDefinition[]) {
    this.#all = defs.slice();
    const addKind = (k: KindDefinition): void => {
      const kkey = `${apiVersionOf(k)}/${k.kind}`;
      const known = this.#byKind.get(kkey);
      if (known && known !== k) throw new Error(`duplicate kind ${kkey}`);
      if (known) return;
      this.#byKind.set(kkey, k);
      this.#kinds.push(k);
    };
    for (const d of defs) {
      const rkey = `${d.group}/${d.version}/${d.plural}`;
      if (this.#byResource.has(rkey)) throw new Error(`duplicate resource ${rkey}`);
      this.#byResource.set(rkey, d);
      addKind(d);
    }
    for (const d of defs) for (const sub of d.subresources) if (sub.kind) addKind(sub.kind);
  }

  /** Every definition, stored or not, in registration order. */
  all(): readonly ResourceDefinition[] {
    return this.#all;
  }

  /** The definitions whose objects are stored (each gets a store and a watch cache). */
  stored(): ResourceDefinition[] {
    return this.#all.filter(isStored);
  }

  /** Every kind served: each resource's, then the sub-resources' own kinds. */
  kinds(): readonly KindDefinition[] {
    return this.#kinds;
  }

  lookup(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.#byResource.get(`${group}/${version}/${plural}`);
  }

  lookupKind(apiVersion: string, kind: string): KindDefinition | undefined {
    return this.#byKind.get(`${apiVersion}/${kind}`);
  }

  /** Groups with their versions, in registration order (core group as ''). */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const d of this.#all) {
      const vs = out.get(d.group) ?? [];
      if (!vs.includes(d.version)) vs.push(d.version);
      out.set(d.group, vs);
    }
    return out;
  }

  /** The stored namespaced resources: what emptying a namespace deletes. */
  namespacedResources(): ResourceDefinition[] {
    return this.#all.filter((d) => d.namespaced && isStored(d));
  }
}
