/**
 * The generic registry store (kube's `registry.Store`): one per resource, wrapping the storage
 * interface with the resource's strategy, object-metadata rules, admission and two-phase deletion.
 * The order of create and update is fixed here so no resource can skip validation.
 */
import { randomUUID } from 'node:crypto';
import {
  cloneJson,
  FieldManager,
  OPTIMISTIC_LOCK_MESSAGE,
  apiVersionOf,
  badRequest,
  conflict,
  groupKindOf,
  generateNameConflict,
  groupResourceOf,
  invalid,
  notFound,
  storagePathOf,
  StatusError,
  successStatus,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type FieldError,
  type NameValidator,
  type ObjectList,
  type ResourceDefinition,
  type ResourceStrategy,
  type Status,
  type StoredObject,
  type UserInfo,
  storageDefOf,
} from '@plinth/api';
import { operationOptions, type AdmissionAttributes, type AdmissionChain, type Operation } from '@plinth/admission';
import type { CachedBytes, GuardKey, KeyFunctions, ListOptions, ListResult, Store, Watcher, WatchEvent, WatchOptions } from '@plinth/storage';
import { toStatusError } from './interpret.js';
import { fullSchemaOf, schemaDefinitions } from './codec.js';
import { emptyObjectOf, generateName, now } from './meta.js';
import { AsyncConvertingStore } from './async-converting-store.js';
import { ConvertingStore } from './converting-store.js';
import { deleteObject, hasPendingFinalizers, type DeleteOptions } from './delete.js';

export { generateName, now } from './meta.js';

/** Who asks, and in which namespace ('' for cluster-scoped or all namespaces). */
export interface RequestScope {
  user: UserInfo;
  namespace: string;
  /** Adds a warning to the response (admission webhooks' warnings); internal callers have none. */
  warn?(message: string): void;
  /** Adds an annotation to the request's audit event (admission's audit annotations); internal callers have none. */
  annotate?(key: string, value: string): void;
}

export interface WriteOptions {
  dryRun?: boolean;
  /**
   * The field manager this write is recorded under in managedFields (kube: the `fieldManager`
   * parameter, else the User-Agent's product). Internal writes pass none and are not tracked.
   */
  manager?: string;
  /** The `fieldManager` parameter as the client sent it (admission's options carry it). */
  fieldManager?: string;
}

/**
 * Admission of a write that admission sees as another kind (a `scale` sub-resource: kube admits
 * the Scale, not the object it is mapped onto). `modify` then runs no admission of the resource's
 * own: the caller's mutate admits what it writes, and `validate` replaces validating admission.
 */
export interface SubresourceAdmission {
  /** Validating admission of the write about to be stored (`next`) over `existing`. */
  validate(next: StoredObject, existing: StoredObject): Promise<void>;
}

/** A PATCH: server-side apply of a partial object, or a patch function over the current object. */
export type PatchOperation =
  | { kind: 'apply'; applied: StoredObject; force: boolean }
  | { kind: 'patch'; apply(current: StoredObject): StoredObject };

/** A DELETE's options (kube's DeleteOptions, validated) and the write's own. */
export interface DeleteRequestOptions extends WriteOptions, DeleteOptions {}

/**
 * A resource's own check of who may write what (kube's policybased RBAC storages: escalation
 * prevention), where kube's REST storage runs it: on the object mutating admission left, before
 * anything else of the store — on create before BeforeCreate (generateName, uid, strategy,
 * validation), on update (every attempt: PUT, patch, apply) before the resourceVersion check and
 * BeforeUpdate (kube's UpdatedObject wrapper, after the mutating transformers). `name` is the
 * request's: '' for a POST to the collection. Throws a StatusError.
 */
export type WriteGuard = (w: { operation: 'CREATE' | 'UPDATE'; scope: RequestScope; name: string; object: StoredObject; oldObject?: StoredObject }) => Promise<void>;

/** Called once a write that began with a hook is done: whether the object was stored. */
export type FinishFunc = (success: boolean) => Promise<void>;

/**
 * A resource's REST additions around the generic store (kube's Store.BeginCreate, BeginUpdate and
 * AfterDelete, which the Service REST uses to allocate cluster IPs and node ports). beginCreate
 * runs after mutating admission, before prepareForCreate and validation; beginUpdate after the
 * resourceVersion check, before prepareForUpdate and validation, on each attempt (a lost race
 * finishes the attempt's with false), for writes of the main resource only (not its
 * sub-resources, as kube's status store has no hooks). afterDelete runs once the object is gone.
 */
export interface StoreHooks {
  beginCreate?(obj: StoredObject, opts: { dryRun: boolean }): Promise<FinishFunc>;
  beginUpdate?(obj: StoredObject, old: StoredObject, opts: { dryRun: boolean }): Promise<FinishFunc>;
  afterDelete?(obj: StoredObject, opts: { dryRun: boolean }): Promise<void>;
  /** A REST.Delete override that refuses by name before anything is read (system PriorityClasses). */
  beforeDelete?(name: string): void;
}

/**
 * kube's etcd3 store.Create refuses an object whose resourceVersion parses as a non-zero uint64
 * (`strconv.ParseUint`; "", "0", junk and overflows pass, the field then dropped) with a plain Go
 * error, which its handler answers as a 500 with no reason. Only a real create reaches that check:
 * a dry run stops short of etcd3, and a create through PUT or apply goes through GuaranteedUpdate,
 * which drops the field.
 */
function refuseResourceVersionOnCreate(rv: string | undefined): void {
  if (rv === undefined || !/^\d+$/.test(rv)) return;
  const n = BigInt(rv);
  if (n === 0n || n > 0xffffffffffffffffn) return;
  throw new StatusError({ code: 500, reason: '', message: 'resourceVersion should not be set on objects to be created' });
}

/** The finish function of the current attempt of one write (see StoreHooks). */
class PendingFinish {
  #finish: FinishFunc | undefined;
  /** Takes the attempt's finish function; an earlier attempt's (lost to a race) is finished as failed. */
  async set(f: FinishFunc | undefined): Promise<void> {
    const prev = this.#finish;
    this.#finish = f;
    await prev?.(false);
  }
  async done(success: boolean): Promise<void> {
    const f = this.#finish;
    this.#finish = undefined;
    await f?.(success);
  }
}

export interface RegistryDeps {
  storage: Store;
  /** Told why a watch ended on a conversion that failed (kube logs `unable to encode watch object`). */
  onWatchConversionError?: ((error: unknown) => void) | undefined;
  /** kube's BeginCreate/BeginUpdate/AfterDelete of the resource's REST, if it has any. */
  hooks?: StoreHooks | undefined;
  keys: KeyFunctions;
  admission: AdmissionChain;
  writeGuard?: WriteGuard | undefined;
  /**
   * The key every create of this resource holds in its etcd txn (see GuardKey): a custom
   * resource's CRD, so nothing is created once the CRD is marked for deletion.
   */
  createGuardKey?: GuardKey | undefined;
  /** `--enable-garbage-collector` (default on): off, DELETE adds and removes no GC finalizer. */
  garbageCollection?: boolean | undefined;
}

export class ResourceStore {
  readonly def: ResourceDefinition;
  readonly #deps: RegistryDeps;
  readonly #apiVersion: string;
  readonly #fieldManager: FieldManager;
  /** The field manager of each sub-resource with its own strategy, built on first use. */
  readonly #subFieldManagers = new Map<ResourceStrategy, { fm: FieldManager; subresource: string }>();

  readonly #path: string;
  /**
   * On update the name is not checked again (kube's ValidateObjectMetaUpdate): it is immutable and
   * was valid when created — through whichever version, and versions differ (a core/v1 Event may be
   * named `a..b`, an events.k8s.io/v1 one may not, yet both serve the same object).
   */
  readonly #updateNameValidator: NameValidator;
  /** The definition's read defaults (see ResourceDefinition.readDefaults), if it has any. */
  readonly #readDefaults: ((obj: StoredObject) => StoredObject) | undefined;
  /**
   * The defaulted event of each source event: the watch cache hands one event object to every
   * watcher, so each is defaulted once (and encoded once by the watch handler).
   */
  readonly #defaultedEvents = new WeakMap<WatchEvent, WatchEvent>();

  /**
   * `deps.storage` holds the storage version's objects (the watch cache of `storageDefOf(def)`);
   * a served version that converts gets them converted at that boundary, so everything here —
   * defaults, validation, admission, managedFields — happens in `def`'s own version.
   */
  constructor(def: ResourceDefinition, deps: RegistryDeps) {
    this.def = def;
    this.#apiVersion = apiVersionOf(def);
    if (def.convertAsync) {
      const convert = def.convertAsync.bind(def);
      const storageApiVersion = apiVersionOf(storageDefOf(def));
      this.#deps = { ...deps, storage: new AsyncConvertingStore(deps.storage, { convert, apiVersion: this.#apiVersion, kind: def.kind, storageApiVersion, ...(deps.onWatchConversionError ? { onWatchError: deps.onWatchConversionError } : {}) }) };
    } else {
      this.#deps = def.conversion ? { ...deps, storage: new ConvertingStore(deps.storage, def.conversion, { apiVersion: this.#apiVersion, kind: def.kind }) } : deps;
    }
    this.#path = storagePathOf(def);
    this.#updateNameValidator = (value, prefix) => (prefix ? def.nameValidator(value, prefix) : []);
    this.#readDefaults = def.readDefaults?.bind(def);
    const schema = fullSchemaOf(def);
    const defs = schemaDefinitions();
    this.#fieldManager = this.#newFieldManager(def.subresources.some((s) => s.name === 'status' && s.strategy) ? ['status'] : []);
  }

  /**
   * A field manager whose endpoint resets `reset` (top-level fields the schema has): kube's
   * strategies' GetResetFields — status for a main resource with a status sub-resource, spec for
   * a status sub-resource, status for namespaces/finalize.
   */
  #newFieldManager(reset: string[]): FieldManager {
    const schema = fullSchemaOf(this.def);
    const defs = schemaDefinitions();
    return new FieldManager({
      schema,
      defs,
      resetFields: reset.filter((f) => schema.properties?.[f]).map((f) => [f]),
      // A custom resource's empty object is kube's empty Unstructured: a create adds spec itself.
      emptyObject: this.def.unstructured ? {} : emptyObjectOf(schema, defs),
    });
  }

  /** The field manager of writes with `strategy`, and the sub-resource they are recorded under. */
  #fieldManagerFor(strategy: ResourceStrategy): { fm: FieldManager; subresource?: string } {
    if (strategy === this.def.strategy) return { fm: this.#fieldManager };
    let sub = this.#subFieldManagers.get(strategy);
    if (!sub) {
      const subresource = this.def.subresources.find((s) => s.strategy === strategy)?.name ?? '';
      sub = { fm: this.#newFieldManager(subresource === 'status' ? ['spec'] : ['status']), subresource };
      this.#subFieldManagers.set(strategy, sub);
    }
    return sub.subresource ? sub : { fm: sub.fm };
  }

  /**
   * Records a non-apply write of `next` over `live` in managedFields (kube's fieldmanager Update).
   * `own`: `next` is this request's own object (a create's decoded body), tracked in place.
   */
  #track(live: StoredObject | undefined, next: StoredObject, opts: WriteOptions, strategy: ResourceStrategy = this.def.strategy, copy = false, own = false): StoredObject {
    // The field manager returns a new object; without one, a caller that needs a copy gets one here.
    if (!opts.manager) return copy ? cloneJson(next) : next;
    const { fm, subresource } = this.#fieldManagerFor(strategy);
    return fm.update(live, next, { manager: opts.manager, apiVersion: this.#apiVersion, time: now(), ...(subresource ? { subresource } : {}), ...(own && !copy ? { inPlace: true } : {}) }) as StoredObject;
  }

  key(namespace: string, name: string): string {
    return this.#deps.keys.objectKey(this.#path, this.def.namespaced ? namespace : undefined, name);
  }

  collectionPrefix(namespace: string): string {
    return this.#deps.keys.collectionPrefix(this.#path, this.def.namespaced && namespace ? namespace : undefined);
  }

  async get(scope: RequestScope, name: string, resourceVersion?: string): Promise<StoredObject> {
    try {
      return this.#withTypeMeta(this.#read(await this.#deps.storage.get(this.key(scope.namespace, name), { resourceVersion: resourceVersion ?? '' })));
    } catch (e) {
      throw toStatusError(e, this.def, name);
    }
  }

  /**
   * The watch cache, when reads may be answered with its stored bytes: the objects leave as they
   * are stored (no conversion, the cache's apiVersion and kind are this version's; with read
   * defaults, only objects the defaults leave as they are, which the cache checks per version).
   */
  get #bytesCache(): CachedBytes | undefined {
    const b = this.#deps.storage.cachedBytes;
    return b && b.apiVersion === this.#apiVersion && b.kind === this.def.kind ? b : undefined;
  }

  /** get(), answered as the object's JSON when the watch cache has it as plain bytes. */
  async getJson(scope: RequestScope, name: string, resourceVersion?: string): Promise<string | StoredObject> {
    const cache = this.#bytesCache;
    if (!cache) return this.get(scope, name, resourceVersion);
    try {
      const r = await cache.getJson(this.key(scope.namespace, name), { resourceVersion: resourceVersion ?? '' }, this.#readDefaults);
      return typeof r === 'string' ? r : this.#withTypeMeta(this.#read(r));
    } catch (e) {
      throw toStatusError(e, this.def, name);
    }
  }

  /** list(), answered as the items' JSON when the watch cache serves it (or delegates it to etcd) from plain bytes. */
  async listJson(scope: RequestScope, opts: ListOptions): Promise<{ apiVersion: string; kind: string; resourceVersion: string; continue?: string; remainingItemCount?: number; itemsJson: string[] } | ObjectList<StoredObject>> {
    const cache = this.#bytesCache;
    if (!cache) return this.list(scope, opts);
    try {
      const r = await cache.listJson(this.collectionPrefix(scope.namespace), opts, this.#readDefaults);
      return 'itemsJson' in r ? { apiVersion: this.#apiVersion, kind: this.def.listKind, ...r } : this.#listOf(r);
    } catch (e) {
      throw toStatusError(e, this.def, '');
    }
  }

  async list(scope: RequestScope, opts: ListOptions): Promise<ObjectList<StoredObject>> {
    try {
      return this.#listOf(await this.#deps.storage.list(this.collectionPrefix(scope.namespace), opts));
    } catch (e) {
      throw toStatusError(e, this.def, '');
    }
  }

  #listOf(r: ListResult): ObjectList<StoredObject> {
    // kube's typed lists carry no apiVersion/kind on items. Items shared with the watch cache
    // are copied (shallowly), never changed; items fresh from etcd are ours to change.
    let items = r.items;
    const readDefaults = this.#readDefaults;
    if (readDefaults) {
      // Defaulted items are new objects: shared ones stay untouched in the cache.
      let changed = false;
      const defaulted = items.map((o) => {
        const d = readDefaults(o);
        if (d !== o) changed = true;
        return d;
      });
      if (changed) items = defaulted;
    }
    if (r.shared) {
      items = items.map(({ apiVersion: _v, kind: _k, ...rest }) => rest as StoredObject);
    } else {
      for (const item of items) {
        delete item.apiVersion;
        delete item.kind;
      }
    }
    const metadata: ObjectList['metadata'] = { resourceVersion: r.resourceVersion, continue: r.continue };
    if (r.remainingItemCount !== undefined) metadata.remainingItemCount = r.remainingItemCount;
    return { apiVersion: this.#apiVersion, kind: this.def.listKind, metadata, items };
  }

  async watch(scope: RequestScope, opts: WatchOptions, name?: string): Promise<Watcher> {
    try {
      const w = name
        ? await this.#deps.storage.watch(this.key(scope.namespace, name), { ...opts, exactKey: true })
        : await this.#deps.storage.watch(this.collectionPrefix(scope.namespace), opts);
      return this.#readDefaults ? this.#defaultingWatcher(w, this.#readDefaults) : w;
    } catch (e) {
      throw toStatusError(e, this.def, name ?? '');
    }
  }

  /**
   * kube's create: mutating admission, the write guard (kube's policybased Create), BeforeCreate
   * (strategy + validation), validating admission, storage.
   */
  async create(scope: RequestScope, input: StoredObject, opts: WriteOptions = {}): Promise<StoredObject> {
    // The input is the create's own (the store changes it from here on, as without managedFields).
    const obj = this.#track(undefined, input, opts, this.def.strategy, false, true);
    this.#ensureNamespace(scope, obj);
    await this.#admit('CREATE', scope, obj, undefined, opts);
    await this.#guard('CREATE', scope, '', obj);
    const pending = new PendingFinish();
    await pending.set(await this.#deps.hooks?.beginCreate?.(obj, { dryRun: !!opts.dryRun }));
    let stored = false;
    try {
      const givenResourceVersion = obj.metadata.resourceVersion;
      this.#beforeCreate(scope, obj);
      this.#validateCreate(obj);
      await this.#validateAdmission('CREATE', scope, obj, undefined, opts);
      if (!opts.dryRun) refuseResourceVersionOnCreate(givenResourceVersion);
      const name = obj.metadata.name!;
      try {
        const out = this.#withTypeMeta(await this.#deps.storage.create(this.key(scope.namespace, name), obj, { dryRun: !!opts.dryRun, ...this.#guardKey() }));
        if (opts.dryRun) {
          // kube's DryRunnableStorage answers the object as it came: the resourceVersion it was
          // sent with, or none.
          if (givenResourceVersion === undefined) delete out.metadata.resourceVersion;
          else out.metadata.resourceVersion = givenResourceVersion;
        }
        stored = true;
        return out;
      } catch (e) {
        const err = toStatusError(e, this.def, name);
        // kube's CheckGeneratedNameError: a taken generated name is the server's miss, not the client's.
        if (err.reason === 'AlreadyExists' && obj.metadata.generateName) throw generateNameConflict(groupResourceOf(this.def), name);
        throw err;
      }
    } finally {
      await pending.done(stored);
    }
  }

  /**
   * PUT: update the object at `name` to `obj` (optimistic concurrency on a given resourceVersion),
   * or create it when the resource allows create-on-update.
   */
  async update(
    scope: RequestScope,
    name: string,
    obj: StoredObject,
    opts: WriteOptions = {},
    strategy: ResourceStrategy = this.def.strategy,
  ): Promise<{ object: StoredObject; created: boolean }> {
    const allowCreate = this.def.allowCreateOnUpdate && strategy === this.def.strategy;
    let created = false;
    const key = this.key(scope.namespace, name);
    let out: StoredObject;
    const pending = new PendingFinish();
    try {
      out = await this.#deps.storage.guaranteedUpdate(
        key,
        async (existing) => {
          await pending.set(undefined);
          existing = existing && this.#read(existing);
          if (!existing) {
            if (!allowCreate) throw notFound(groupResourceOf(this.def), name);
            created = true;
            // Each attempt works on its own copy of the request's object (#track makes it).
            const next = this.#track(undefined, obj, opts, this.def.strategy, true);
            delete next.metadata.resourceVersion;
            this.#ensureNamespace(scope, next);
            await this.#admit('CREATE', scope, next, undefined, opts);
            await this.#guard('CREATE', scope, name, next);
            await pending.set(await this.#deps.hooks?.beginCreate?.(next, { dryRun: !!opts.dryRun }));
            this.#beforeCreate(scope, next);
            this.#validateCreate(next);
            await this.#validateAdmission('CREATE', scope, next, undefined, opts);
            return next;
          }
          created = false;
          return this.#prepareUpdate(scope, name, this.#track(existing, obj, opts, strategy, true), existing, opts, strategy, undefined, pending);
        },
        { ignoreNotFound: allowCreate, dryRun: !!opts.dryRun, ...knownRevisionOf(obj), ...(allowCreate ? this.#guardKey() : {}) },
      );
    } catch (e) {
      await pending.done(false);
      throw toStatusError(e, this.def, name);
    }
    await pending.done(true);
    if (!created && !opts.dryRun) await this.#deleteIfFinalized(scope, out);
    return { object: this.#withTypeMeta(out), created };
  }

  /**
   * Read-modify-write for internal callers (controllers, sub-resources): `mutate` changes the
   * current object; the same update rules and validation as PUT apply.
   */
  async modify(
    scope: RequestScope,
    name: string,
    mutate: (obj: StoredObject) => void | Promise<void>,
    opts: WriteOptions = {},
    strategy: ResourceStrategy = this.def.strategy,
    admission?: SubresourceAdmission,
  ): Promise<StoredObject> {
    let out: StoredObject;
    const pending = new PendingFinish();
    try {
      out = await this.#deps.storage.guaranteedUpdate(this.key(scope.namespace, name), async (existing) => {
        await pending.set(undefined);
        if (!existing) throw notFound(groupResourceOf(this.def), name);
        existing = this.#read(existing);
        const next = cloneJson(existing);
        await mutate(next);
        return this.#prepareUpdate(scope, name, next, existing, opts, strategy, admission, pending);
      }, { dryRun: !!opts.dryRun });
    } catch (e) {
      await pending.done(false);
      throw toStatusError(e, this.def, name);
    }
    await pending.done(true);
    if (!opts.dryRun) await this.#deleteIfFinalized(scope, out);
    return this.#withTypeMeta(out);
  }

  /**
   * PATCH: a patch function or a server-side apply over the current object, retried on a lost
   * race with fresh state (so admission and validation run again). Apply creates missing objects,
   * except through a sub-resource (`strategy` is a sub-resource's: kube's sub-resource storages
   * never create). managedFields record a sub-resource's writes under its name.
   */
  async patch(
    scope: RequestScope,
    name: string,
    op: PatchOperation,
    opts: WriteOptions = {},
    strategy: ResourceStrategy = this.def.strategy,
  ): Promise<{ object: StoredObject; created: boolean }> {
    const main = strategy === this.def.strategy;
    const allowCreate = op.kind === 'apply' && main;
    let created = false;
    let out: StoredObject;
    const pending = new PendingFinish();
    try {
      out = await this.#deps.storage.guaranteedUpdate(
        this.key(scope.namespace, name),
        async (existing) => {
          await pending.set(undefined);
          existing = existing && this.#read(existing);
          if (!existing && !allowCreate) throw notFound(groupResourceOf(this.def), name);
          if (op.kind === 'patch') {
            created = false;
            return this.#prepareUpdate(scope, name, this.#track(existing, op.apply(existing!), opts, strategy), existing!, opts, strategy, undefined, pending);
          }
          const { fm, subresource } = this.#fieldManagerFor(strategy);
          const merged = fm.apply(existing, op.applied, {
            manager: opts.manager ?? '',
            apiVersion: this.#apiVersion,
            time: now(),
            force: op.force,
            ...(subresource ? { subresource } : {}),
          }) as StoredObject;
          this.def.strategy.defaults?.(merged);
          if (existing) {
            created = false;
            return this.#prepareUpdate(scope, name, merged, existing, opts, strategy, undefined, pending);
          }
          created = true;
          this.#ensureNamespace(scope, merged);
          await this.#admit('CREATE', scope, merged, undefined, opts);
          await this.#guard('CREATE', scope, name, merged);
          await pending.set(await this.#deps.hooks?.beginCreate?.(merged, { dryRun: !!opts.dryRun }));
          this.#beforeCreate(scope, merged);
          this.#validateCreate(merged);
          await this.#validateAdmission('CREATE', scope, merged, undefined, opts);
          return merged;
        },
        { ignoreNotFound: allowCreate, dryRun: !!opts.dryRun, ...(allowCreate ? this.#guardKey() : {}) },
      );
    } catch (e) {
      await pending.done(false);
      throw toStatusError(e, this.def, name);
    }
    await pending.done(true);
    if (!created && !opts.dryRun) await this.#deleteIfFinalized(scope, out);
    return { object: this.#withTypeMeta(out), created };
  }

  /**
   * DELETE with kube's DeleteOptions (registry/delete.ts): preconditions, graceful deletion,
   * garbage-collection finalizers, two-phase deletion of objects with finalizers. Returns what
   * kube answers — the object, or a success Status — and whether it is gone.
   */
  async delete(scope: RequestScope, name: string, opts: DeleteRequestOptions = {}): Promise<{ result: StoredObject | Status; deleted: boolean }> {
    this.#deps.hooks?.beforeDelete?.(name);
    return this.#deleteOne(scope, name, opts);
  }

  async #deleteOne(scope: RequestScope, name: string, opts: DeleteRequestOptions): Promise<{ result: StoredObject | Status; deleted: boolean }> {
    try {
      const out = await deleteObject(
        {
          def: this.def,
          storage: this.#deps.storage,
          key: this.key(scope.namespace, name),
          name,
          read: (obj) => this.#read(obj),
          ...(this.#deps.garbageCollection === false ? { garbageCollection: false } : {}),
          // kube's AdmissionToValidateObjectDeleteFunc: mutating, then validating admission.
          admit: async (current) => {
            await this.#deps.admission.admit(this.#attrs('DELETE', scope, undefined, current, opts, name, this.def.strategy));
            await this.#validateAdmission('DELETE', scope, undefined, current, opts, name);
          },
        },
        opts,
      );
      if (out.deleted) await this.#deps.hooks?.afterDelete?.(out.object, { dryRun: !!opts.dryRun });
      return { result: out.finalize ? this.#finalizeDelete(out.object) : this.#withTypeMeta(out.object), deleted: out.deleted };
    } catch (e) {
      throw toStatusError(e, this.def, name);
    }
  }

  /** kube's finalizeDelete: the object, for resources that return it, else a success Status naming it. */
  #finalizeDelete(obj: StoredObject): StoredObject | Status {
    if (this.def.returnDeletedObject) return this.#withTypeMeta(obj);
    const details: NonNullable<Status['details']> = { name: obj.metadata.name ?? '', kind: this.def.plural };
    if (this.def.group) details.group = this.def.group;
    if (obj.metadata.uid) details.uid = obj.metadata.uid;
    return successStatus(details);
  }

  /**
   * deletecollection: deletes every object the list options select, one by one with the same
   * options (objects gone meanwhile are skipped); the first other error ends it. Returns the
   * list as read, which kube answers with.
   */
  async deleteCollection(scope: RequestScope, listOpts: ListOptions, opts: DeleteRequestOptions = {}): Promise<ObjectList<StoredObject>> {
    const list = await this.list(scope, listOpts);
    for (const item of list.items) {
      const ns = item.metadata.namespace ?? scope.namespace;
      try {
        // kube's Store.DeleteCollection calls the generic delete, not the resource's REST.Delete.
        await this.#deleteOne({ ...scope, namespace: ns }, item.metadata.name!, { ...opts, ...(opts.preconditions ? { preconditions: { ...opts.preconditions } } : {}) });
      } catch (e) {
        if ((e as { reason?: string }).reason === 'NotFound') continue;
        throw e;
      }
    }
    return list;
  }

  /**
   * After an update: a deleting object whose last finalizer is gone is removed (kube's
   * ShouldDeleteDuringUpdate: not while a grace period runs).
   */
  async #deleteIfFinalized(scope: RequestScope, obj: StoredObject): Promise<void> {
    const meta = obj.metadata;
    if (!meta.deletionTimestamp || hasPendingFinalizers(this.def, obj)) return;
    if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds !== 0) return;
    try {
      await this.#deps.storage.delete(this.key(scope.namespace, meta.name!), {
        preconditions: { resourceVersion: meta.resourceVersion! },
      });
    } catch {
      // Someone changed or removed it meanwhile; their write decides (kube does the same).
      return;
    }
    await this.#deps.hooks?.afterDelete?.(obj, { dryRun: false });
  }

  /**
   * kube's EnsureObjectNamespaceMatchesRequestNamespace, which the create handler runs before
   * mutating admission (so webhooks see the namespace, but neither uid nor creationTimestamp).
   */
  #ensureNamespace(scope: RequestScope, obj: StoredObject): void {
    const meta = obj.metadata;
    if (this.def.namespaced) {
      if (!meta.namespace) meta.namespace = scope.namespace;
      else if (scope.namespace && meta.namespace !== scope.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
    } else {
      delete meta.namespace;
    }
  }

  /** kube's rest.BeforeCreate, up to (not including) validation; after mutating admission. */
  #beforeCreate(scope: RequestScope, obj: StoredObject): void {
    // Again: a mutating webhook may have changed the namespace (kube's BeforeCreate checks it too).
    this.#ensureNamespace(scope, obj);
    const meta = obj.metadata;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    delete meta.selfLink;
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    meta.uid = randomUUID();
    meta.creationTimestamp = now();
    // None of the served types counts generations (kube's strategies set it where they do).
    delete meta.generation;
    this.def.strategy.prepareForCreate?.(obj);
  }

  #validateCreate(obj: StoredObject): void {
    const errs: FieldError[] = [
      ...validateObjectMeta(obj.metadata, this.def.namespaced, this.def.nameValidator),
      ...this.def.strategy.validate(obj),
    ];
    if (errs.length > 0) throw invalid(groupKindOf(this.def), obj.metadata.name ?? obj.metadata.generateName ?? '', errs);
  }

  /**
   * An update attempt after the mutating transformers' first part (patch, managedFields), in
   * kube's order: mutating admission and the write guard (kube's UpdatedObject), the
   * resourceVersion check, BeforeUpdate (namespace, system fields, strategy, validation) and
   * validating admission (kube's generic Store.Update).
   */
  async #prepareUpdate(
    scope: RequestScope,
    name: string,
    next: StoredObject,
    existing: StoredObject,
    opts: WriteOptions,
    strategy: ResourceStrategy,
    admission?: SubresourceAdmission,
    pending?: PendingFinish,
  ): Promise<StoredObject> {
    if (!admission) await this.#admit('UPDATE', scope, next, existing, opts, strategy);
    await this.#guard('UPDATE', scope, name, next, existing);
    const meta = next.metadata;
    const old = existing.metadata;
    if (meta.resourceVersion && meta.resourceVersion !== old.resourceVersion) {
      throw conflict(groupResourceOf(this.def), old.name!, OPTIMISTIC_LOCK_MESSAGE);
    }
    if (this.def.namespaced) {
      if (!meta.namespace) meta.namespace = scope.namespace;
      else if (scope.namespace && meta.namespace !== scope.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
    } else {
      delete meta.namespace;
    }
    if (old.generation !== undefined) meta.generation = old.generation;
    else delete meta.generation;
    if (!meta.uid) meta.uid = old.uid!;
    if (old.creationTimestamp) meta.creationTimestamp = old.creationTimestamp;
    if (old.deletionTimestamp) meta.deletionTimestamp = old.deletionTimestamp;
    if (old.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds === undefined) {
      meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    }
    delete meta.selfLink;
    const beginUpdate = this.#deps.hooks?.beginUpdate;
    if (beginUpdate && pending && strategy === this.def.strategy) await pending.set(await beginUpdate(next, existing, { dryRun: !!opts.dryRun }));
    strategy.prepareForUpdate?.(next, existing);
    const errs: FieldError[] = [
      ...validateObjectMeta(meta, this.def.namespaced, this.#updateNameValidator),
      ...validateObjectMetaUpdate(meta, old),
      ...(strategy.validateOnUpdate === false ? [] : strategy.validate(next)),
      ...(strategy.validateUpdate?.(next, existing) ?? []),
    ];
    if (errs.length > 0) throw invalid(groupKindOf(this.def), old.name!, errs);
    if (admission) await admission.validate(next, existing);
    else await this.#validateAdmission('UPDATE', scope, next, existing, opts, undefined, strategy);
    return next;
  }

  async #guard(operation: 'CREATE' | 'UPDATE', scope: RequestScope, name: string, object: StoredObject, oldObject?: StoredObject): Promise<void> {
    if (!this.#deps.writeGuard) return;
    await this.#deps.writeGuard(oldObject ? { operation, scope, name, object, oldObject } : { operation, scope, name, object });
  }

  /**
   * What admission sees of a write. A write with a sub-resource's strategy (namespaces/status,
   * namespaces/finalize — also the namespace controller's) is a write of that sub-resource.
   */
  #attrs(
    op: Operation,
    scope: RequestScope,
    obj: StoredObject | undefined,
    old: StoredObject | undefined,
    opts: DeleteRequestOptions,
    name: string | undefined,
    strategy: ResourceStrategy,
  ): AdmissionAttributes {
    const subresource = strategy === this.def.strategy ? '' : (this.def.subresources.find((s) => s.strategy === strategy)?.name ?? '');
    return {
      operation: op,
      resource: this.def,
      subresource,
      namespace: this.def.namespaced ? scope.namespace || obj?.metadata.namespace || old?.metadata.namespace || '' : '',
      name: name ?? obj?.metadata.name ?? old?.metadata.name ?? '',
      kind: { group: this.def.group, version: this.def.version, kind: this.def.kind },
      object: obj,
      oldObject: old,
      options: operationOptions(op, opts),
      user: scope.user,
      dryRun: !!opts.dryRun,
      ...(scope.warn ? { warn: scope.warn } : {}),
      ...(scope.annotate ? { annotate: scope.annotate } : {}),
    };
  }

  async #admit(op: Operation, scope: RequestScope, obj: StoredObject | undefined, old: StoredObject | undefined, opts: WriteOptions, strategy = this.def.strategy): Promise<void> {
    await this.#deps.admission.admit(this.#attrs(op, scope, obj, old, opts, undefined, strategy));
  }

  async #validateAdmission(
    op: Operation,
    scope: RequestScope,
    obj: StoredObject | undefined,
    old: StoredObject | undefined,
    opts: DeleteRequestOptions,
    name?: string,
    strategy = this.def.strategy,
  ): Promise<void> {
    await this.#deps.admission.validate(this.#attrs(op, scope, obj, old, opts, name, strategy));
  }

  /** The create options holding the resource's guard key, if it has one. */
  #guardKey(): { guardKey?: GuardKey } {
    const g = this.#deps.createGuardKey;
    return g ? { guardKey: g } : {};
  }

  /** An object as read from storage, with the definition's read defaults (a copy when they apply). */
  #read(obj: StoredObject): StoredObject {
    return this.#readDefaults ? this.#readDefaults(obj) : obj;
  }

  /** A watch whose objects get the read defaults; each shared event is defaulted once. */
  #defaultingWatcher(w: Watcher, readDefaults: (obj: StoredObject) => StoredObject): Watcher {
    const convert = (e: WatchEvent | undefined): WatchEvent | undefined => {
      if (!e || e.type === 'ERROR' || e.type === 'BOOKMARK') return e;
      let out = this.#defaultedEvents.get(e);
      if (!out) {
        const object = readDefaults(e.object);
        out = object === e.object ? e : { ...e, object };
        this.#defaultedEvents.set(e, out);
      }
      return out;
    };
    return {
      next: async () => convert(await w.next()),
      poll: () => convert(w.poll()),
      stop: () => w.stop(),
    };
  }

  /** The object with its apiVersion/kind; a copy when they differ (objects may be shared with the cache). */
  #withTypeMeta(obj: StoredObject): StoredObject {
    if (obj.apiVersion === this.#apiVersion && obj.kind === this.def.kind) return obj;
    return { ...obj, apiVersion: this.#apiVersion, kind: this.def.kind };
  }
}

/**
 * The resourceVersion a PUT's object carries, for the storage: a cached copy of the object older
 * than it is not worth an attempt (it would fail the precondition). Only a plain decimal revision.
 */
function knownRevisionOf(obj: StoredObject): { knownRevision?: number } {
  const rv = obj.metadata.resourceVersion;
  if (typeof rv !== 'string' || !/^[1-9]\d{0,15}$/.test(rv)) return {};
  return { knownRevision: Number(rv) };
}
