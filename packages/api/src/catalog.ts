/**
 * The resource catalog: everything plinth knows about one served type lives in its
 * `ResourceDefinition` — discovery facts, schema, defaulting, validation, the REST strategy, Table
 * columns and field selectors. Built-in definitions are written as one module per resource
 * (`groups/<group>/<resource>.ts`, `defineResource`); their schemas come from the pinned schema
 * source (`kube-schema/`). Handlers, discovery, OpenAPI, Protobuf, apply and Table read the same entry.
 */
import { createHash } from 'node:crypto';
import type { FieldError } from './field-errors.js';
import type { NameValidator } from './validation.js';
import type { Schema } from './schema.js';
import type { StoredObject } from './types.js';
import type { GroupKind, GroupResource } from './errors.js';
import type { TableDefinition } from './tables.js';
import type { FieldSelectorDefinition } from './selectors/fields.js';

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
  /** Type-specific validation on update (immutable fields etc.); `validate` also runs, unless `validateOnUpdate` is false. */
  validateUpdate?(obj: StoredObject, old: StoredObject): FieldError[];
  /**
   * false: an update runs `validateUpdate` alone, not `validate` (kube strategies whose
   * ValidateUpdate does not call the create validation, e.g. Events' ValidateEventUpdate).
   * Default true.
   */
  validateOnUpdate?: boolean;
  /**
   * Whether something besides `metadata.finalizers` holds back removal (a Namespace's
   * `spec.finalizers`). The store removes an object once this and metadata.finalizers are empty.
   */
  hasPendingFinalizers?(obj: StoredObject): boolean;
  /** Marks the start of a two-phase deletion (e.g. a Namespace's phase `Terminating`). */
  beginDeletion?(obj: StoredObject): void;
  /**
   * What a delete that names no policy does with dependents (kube's GarbageCollectionDeleteStrategy),
   * for the group/version the request addressed: `OrphanDependents` adds the `orphan` finalizer
   * (kube: core/v1 ReplicationControllers, batch/v1 Jobs), `Unsupported` never sets a GC
   * finalizer whatever the options say (kube: Events). Absent: background deletion.
   */
  defaultGarbageCollectionPolicy?(requested: { group: string; version: string }): GarbageCollectionPolicy;
  /**
   * Graceful deletion (kube's RESTGracefulDeleteStrategy.CheckGracefulDelete): whether this delete
   * of `obj` is graceful. When it answers true, `options.gracePeriodSeconds` must be set (the
   * strategy defaults it, e.g. a pod's terminationGracePeriodSeconds); the store then keeps the
   * object with `deletionTimestamp` = now + grace until a delete with grace 0.
   */
  checkGracefulDelete?(obj: StoredObject, options: GracefulDeleteOptions): boolean;
}

/** kube's rest.GarbageCollectionPolicy. */
export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';

/** The part of a delete's options a graceful-delete strategy reads and may default. */
export interface GracefulDeleteOptions {
  gracePeriodSeconds?: number;
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
  /**
   * The schema of the kind. A built-in kind's is its definition in the schema source (apiVersion,
   * kind and metadata included); a custom resource's is its version's openAPIV3Schema, without
   * apiVersion/kind/metadata (added where it is used).
   */
  schema: Schema;
  strategy: ResourceStrategy;
  /** plinth's own one-line text about the kind, published in OpenAPI (no kube prose is copied). */
  description?: string;
  /**
   * Other versions of this kind a body may come in (kube's decoder takes any registered version
   * and converts it): pods/eviction takes policy/v1beta1 Evictions as well as policy/v1 ones. Each
   * is decoded by its own schema and answered as this kind; their fields must be this kind's.
   */
  alternateVersions?: readonly KindDefinition[];
  /**
   * A custom resource (kube's unstructured decoding): a body keeps every field — only apiVersion,
   * kind and metadata are decoded as typed — and the strategy prunes, defaults and validates it
   * against `schema`, so a value of the wrong type is a 422 cause, not a 400.
   */
  unstructured?: boolean;
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
  /**
   * A sub-resource answered by a handler of its own, not by the parent's store (kube's
   * rest.Connecter and streaming Getters: pods/log, exec, attach, portforward, proxy; services
   * and nodes proxy). The apiserver's connecters serve it (registry/connect.ts); `verbs` are the
   * verbs of the methods it takes. `path`: the route also takes a path after the sub-resource
   * (`pods/<name>/proxy/<path>`), handed to the connecter as it came. `kind`: the kind discovery
   * names (kube: the connecter's options kind, `PodExecOptions`; the parent's kind when absent).
   */
  connect?: {
    path?: boolean;
    /** The kind discovery names (kube's connect options kind: NodeProxyOptions); default the parent's. */
    kind?: string;
  };
  /**
   * The scale sub-resource (kube's ScaleREST): an autoscaling/v1 Scale read from and written to
   * the parent's replicas (the apiserver's registry/scale.ts serves it through the parent's store
   * and strategy). `kind` is then the Scale kind, for discovery and decoding.
   */
  scale?: ScaleDescription;
}

/**
 * Where a scalable resource keeps what its Scale shows (kube's scaleFrom<Kind> and the write back
 * of scaleUpdatedObjectInfo): one declaration per resource (ReplicationControllers, Deployments,
 * custom resources with a scale sub-resource).
 */
export interface ScaleDescription {
  /** The field path of the desired replicas in the parent (`spec.replicas`): written, and tracked in managedFields. */
  specReplicasPath: readonly string[];
  /** The desired replicas; undefined when the object has none (only custom resources may lack them). */
  specReplicas(obj: StoredObject): number | undefined;
  /** The observed replicas (0 when absent). */
  statusReplicas(obj: StoredObject): number;
  /** The label selector in its string form ('' or undefined: none). */
  selector(obj: StoredObject): string | undefined;
  /**
   * Validation of the Scale written, as the built-in ScaleRESTs run kube's ValidateScale (a 422
   * on kind Scale.autoscaling); custom resources have none (their own validation sees the value).
   */
  validateScale?(scale: StoredObject): FieldError[];
  /**
   * The group/resource of a GET of a missing object (kube's built-in ScaleRESTs answer
   * `replicationcontrollers/scale.autoscaling "x" not found`); absent: the parent's NotFound.
   */
  notFoundResource?: GroupResource;
}

/**
 * Where a resource's objects live. `etcd`: the generic store, with a watch cache, namespace
 * cleanup and controllers. `none`: nothing is kept — a create computes an answer from the body
 * and returns it (kube's review resources: TokenReview, SelfSubjectReview). Such a resource
 * serves only `create`; it has no list kind, no watch and no storage version. `computed`: nothing
 * is kept either, but objects are read — get and list compute them on each request (kube's
 * componentstatuses); no watch, no write, no storage version.
 */
export type ResourceStorage = 'etcd' | 'none' | 'computed';

/**
 * How the objects of a served version that is not the storage version become stored objects and
 * back (kube's conversion). Conversions return new objects and never change their input: stored
 * objects may be shared with the watch cache.
 */
export interface VersionConversion {
  /**
   * The definition whose objects are stored (the storage version): its key space, watch cache,
   * field selectors and storageVersionHash. It may be in another group (events.k8s.io Events are
   * core/v1 Events in storage, kube's cohabitating resources).
   */
  storage: ResourceDefinition;
  /** An object of this version (apiVersion/kind set) → the storage version, apiVersion/kind set. */
  toStorage(obj: StoredObject): StoredObject;
  /** A stored object → this version, apiVersion/kind set. */
  fromStorage(obj: StoredObject): StoredObject;
}

/** A deprecated version (the spec's Versioning rule 8): every request to it gets a Warning. */
export interface Deprecation {
  /** The warning text, as kube words it (see `deprecationWarning`); sent as `299 - "<text>"`. */
  warning: string;
  /** The release the version is removed in ('1.25'), the metric's `removed_release`; '' if none. */
  removedRelease: string;
}

/**
 * kube's default deprecation warning (apiserver's `deprecation.WarningMessage`):
 * `<group>/<version> <Kind> is deprecated in v1.22+, unavailable in v1.25+; use <group>/<version> <Kind>`,
 * the replacement only where kube declares one.
 */
export function deprecationWarning(
  def: Pick<KindDefinition, 'group' | 'version' | 'kind'>,
  deprecatedIn: string,
  removedIn: string,
  replacement?: Pick<KindDefinition, 'group' | 'version' | 'kind'>,
): Deprecation {
  let warning = `${apiVersionOf(def)} ${def.kind} is deprecated in v${deprecatedIn}+`;
  if (removedIn) warning += `, unavailable in v${removedIn}+`;
  if (replacement) warning += `; use ${apiVersionOf(replacement)} ${replacement.kind}`;
  return { warning, removedRelease: removedIn };
}

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
  /** The version's field selectors (kube's field label conversion and selectable fields). */
  fieldSelector?: FieldSelectorDefinition;
  /** Absent for the storage version itself; see VersionConversion. */
  conversion?: VersionConversion;
  deprecation?: Deprecation;
  /**
   * The feature gate that must be on for the resource to be served (kube's registries add such a
   * storage only when the gate is enabled); absent for resources always served.
   */
  featureGate?: string;
  /**
   * Defaults applied to every object read (get, list, watch, and the current object of an
   * update), as kube's storage decoder applies a custom resource's structural defaults: a default
   * added to the schema later shows on objects stored before. Returns `obj` itself when nothing
   * changes, else a new object; never changes `obj` (it may be shared with the watch cache).
   * Absent for resources that have no such defaults.
   */
  readDefaults?(obj: StoredObject): StoredObject;
  /**
   * A conversion that needs I/O (a CRD's conversion webhook): objects → `apiVersion` objects, in
   * order, those already at it returned as they are. When present, every object read or written
   * through this version (the storage version too: objects stored at an older version) whose
   * apiVersion differs is converted with it, and `conversion`'s synchronous functions are not used.
   */
  convertAsync?(objs: readonly StoredObject[], apiVersion: string): Promise<StoredObject[]>;
  /**
   * The resource's segment of its etcd keys (`/registry/<storagePath>/...`); the plural when absent.
   * Custom resources use `<group>/<plural>`, as kube does, so they cannot collide with built-ins.
   */
  storagePath?: string;
}

/** The definition whose objects are stored for `def` (itself when it is the storage version). */
export function storageDefOf(def: ResourceDefinition): ResourceDefinition {
  return def.conversion?.storage ?? def;
}

/**
 * An object of `from`'s kind as an object of `to`'s, through the storage version (kube's object
 * convertor): `from` and `to` must store alike (see `Catalog.equivalentResources`). A new object
 * unless `from` is `to`; the input is never changed.
 */
export function convertObject(obj: StoredObject, from: ResourceDefinition, to: ResourceDefinition): StoredObject {
  if (from === to) return obj;
  // Conversions read the object's own apiVersion/kind: state them.
  const typed: StoredObject = { ...obj, apiVersion: apiVersionOf(from), kind: from.kind };
  const stored = from.conversion ? from.conversion.toStorage(typed) : typed;
  return to.conversion ? to.conversion.fromStorage(stored) : stored;
}

/** The etcd key segment of a resource's objects (see `storagePath`). */
export function storagePathOf(def: ResourceDefinition): string {
  const s = storageDefOf(def);
  return s.storagePath ?? s.plural;
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

/**
 * kube's discovery `storageVersionHash`: first 8 bytes of sha256("group/version/kind") of the
 * storage version, base64 — the same for every served version of a resource.
 */
export function storageVersionHash(def: ResourceDefinition): string {
  const s = storageDefOf(def);
  return createHash('sha256').update(`${s.group}/${s.version}/${s.kind}`).digest().subarray(0, 8).toString('base64');
}

/** What changed in a catalog: definitions added and removed (custom resources come and go). */
export interface CatalogChange {
  added: readonly ResourceDefinition[];
  removed: readonly ResourceDefinition[];
}

/**
 * The index of resource definitions by group/version/resource and by kind. Built-in definitions
 * are given at construction; custom resources are added and removed while serving, and listeners
 * (discovery, OpenAPI) hear of each change.
 */
export class Catalog {
  readonly #byResource = new Map<string, ResourceDefinition>();
  readonly #byKind = new Map<string, KindDefinition>();
  #all: ResourceDefinition[] = [];
  #kinds: KindDefinition[] = [];
  readonly #listeners = new Set<(change: CatalogChange) => void>();
  #generation = 0;
  /** Stored definitions by their storage definition; built on first use after a change. */
  #byStorage: Map<ResourceDefinition, ResourceDefinition[]> | undefined;

  constructor(defs: ResourceDefinition[]) {
    this.#add(defs);
  }

  #add(defs: readonly ResourceDefinition[]): void {
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
    }
    for (const d of defs) {
      this.#byResource.set(`${d.group}/${d.version}/${d.plural}`, d);
      this.#all.push(d);
      addKind(d);
    }
    for (const d of defs) for (const sub of d.subresources) if (sub.kind) addKind(sub.kind);
  }

  /** Adds definitions (throws on a duplicate resource or kind); listeners hear of it. */
  add(defs: readonly ResourceDefinition[]): void {
    this.replace([], defs);
  }

  /** Removes definitions (and the kinds only they had); listeners hear of it. */
  remove(defs: readonly ResourceDefinition[]): void {
    this.replace(defs, []);
  }

  /** Removes `removed`, then adds `added`, as one change (a custom resource definition updated). */
  replace(removed: readonly ResourceDefinition[], added: readonly ResourceDefinition[]): void {
    const gone = this.#remove(removed);
    try {
      this.#add(added);
    } catch (e) {
      this.#add(gone);
      throw e;
    }
    if (gone.length === 0 && added.length === 0) return;
    this.#generation++;
    this.#byStorage = undefined;
    const change: CatalogChange = { added, removed: gone };
    for (const l of this.#listeners) l(change);
  }

  #remove(defs: readonly ResourceDefinition[]): ResourceDefinition[] {
    const gone = new Set(defs.filter((d) => this.#byResource.get(`${d.group}/${d.version}/${d.plural}`) === d));
    if (gone.size === 0) return [];
    for (const d of gone) this.#byResource.delete(`${d.group}/${d.version}/${d.plural}`);
    this.#all = this.#all.filter((d) => !gone.has(d));
    const kept = new Set<KindDefinition>();
    for (const d of this.#all) {
      kept.add(d);
      for (const sub of d.subresources) if (sub.kind) kept.add(sub.kind);
    }
    this.#kinds = this.#kinds.filter((k) => kept.has(k));
    for (const [key, k] of this.#byKind) if (!kept.has(k)) this.#byKind.delete(key);
    return [...gone];
  }

  /** Counts changes: a cached document built at generation N is current while this is N. */
  get generation(): number {
    return this.#generation;
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: (change: CatalogChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Every definition, stored or not, in registration order. */
  all(): readonly ResourceDefinition[] {
    return this.#all;
  }

  /**
   * The definitions whose objects are stored, one per storage (each gets a watch cache). Served
   * versions that convert to another definition's storage are not among them.
   */
  stored(): ResourceDefinition[] {
    return this.#all.filter((d) => isStored(d) && !d.conversion);
  }

  /** Every kind served: each resource's, then the sub-resources' own kinds. */
  kinds(): readonly KindDefinition[] {
    return this.#kinds;
  }

  /**
   * kube's EquivalentResourceMapper.EquivalentResourcesFor: the served definitions whose objects
   * are stored as `def`'s (its other versions, and other groups sharing its storage: events.k8s.io
   * Events are core Events), `def` itself included, in registration order; with a sub-resource,
   * those that serve it. A resource that is not stored is equivalent to itself only.
   */
  equivalentResources(def: ResourceDefinition, subresource = ''): readonly ResourceDefinition[] {
    if (!isStored(def)) return [def];
    if (!this.#byStorage) {
      const m = new Map<ResourceDefinition, ResourceDefinition[]>();
      for (const d of this.#all) {
        if (!isStored(d)) continue;
        const key = storageDefOf(d);
        const list = m.get(key);
        if (list) list.push(d);
        else m.set(key, [d]);
      }
      this.#byStorage = m;
    }
    const all = this.#byStorage.get(storageDefOf(def)) ?? [def];
    return subresource === '' ? all : all.filter((d) => d.subresources.some((sub) => sub.name === subresource));
  }

  lookup(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.#byResource.get(`${group}/${version}/${plural}`);
  }

  lookupKind(apiVersion: string, kind: string): KindDefinition | undefined {
    return this.#byKind.get(`${apiVersion}/${kind}`);
  }

  /**
   * Groups with their versions (core group as ''), in registration order; within a group the
   * first version registered is the preferred one.
   */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const d of this.#all) {
      const vs = out.get(d.group) ?? [];
      if (!vs.includes(d.version)) vs.push(d.version);
      out.set(d.group, vs);
    }
    return out;
  }

  /** The stored namespaced resources, one definition per storage: what emptying a namespace deletes. */
  namespacedResources(): ResourceDefinition[] {
    return this.stored().filter((d) => d.namespaced);
  }
}
