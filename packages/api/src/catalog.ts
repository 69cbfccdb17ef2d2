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

export interface ResourceDefinition {
  /** API group; '' for the core group. */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  /** The resource name in URLs (plural, lower case). */
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  verbs: Verb[];
  /** Sub-resources served besides the main resource, e.g. `status`, `finalize`. */
  subresources: string[];
  nameValidator: NameValidator;
  /** Whether PUT of a missing object creates it (kube's AllowCreateOnUpdate). */
  allowCreateOnUpdate: boolean;
  /** Whether an immediate DELETE answers with the object instead of a success Status. */
  returnDeletedObject: boolean;
  /** The OpenAPI schema of the kind, without apiVersion/kind/metadata (added by the catalog). */
  schema: Schema;
  strategy: ResourceStrategy;
  /** Table columns for `kubectl get` (kube's printer); the default Name/Created At when absent. */
  table?: TableDefinition;
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
  readonly #byKind = new Map<string, ResourceDefinition>();
  readonly #all: ResourceDefinition[];

  constructor(defs: ResourceDefinition[]) {
    this.#all = defs.slice();
    for (const d of defs) {
      const rkey = `${d.group}/${d.version}/${d.plural}`;
      if (this.#byResource.has(rkey)) throw new Error(`duplicate resource ${rkey}`);
      this.#byResource.set(rkey, d);
      this.#byKind.set(`${apiVersionOf(d)}/${d.kind}`, d);
    }
  }

  /** Every definition, in registration order. */
  all(): readonly ResourceDefinition[] {
    return this.#all;
  }

  lookup(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.#byResource.get(`${group}/${version}/${plural}`);
  }

  lookupKind(apiVersion: string, kind: string): ResourceDefinition | undefined {
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

  namespacedResources(): ResourceDefinition[] {
    return this.#all.filter((d) => d.namespaced);
  }
}
