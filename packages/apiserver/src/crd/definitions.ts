/**
 * A CustomResourceDefinition → one ResourceDefinition per served version, as kube's crdHandler
 * builds its per-version storage: the storage version plain, the other served versions converting
 * to it (conversion strategy None: only apiVersion changes), each with its own compiled schema,
 * strategy, sub-resources, Table and deprecation.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  compareKubeAwareVersions,
  compileVersionSchema,
  customResourceTable,
  scaleKind,
  fieldErr,
  isJsonInteger,
  isPlainObject,
  stringifyJson,
  nameIsDNSSubdomain,
  s,
  type CompiledVersionSchema,
  type FieldError,
  type ScaleDescription,
  type ResourceDefinition,
  type ResourceStrategy,
  type Schema,
  type StoredObject,
  type SubresourceDefinition,
  type Verb,
  setMember,
} from '@plinth/api';
import { storageVersionOf, type CRD, type CRDScale, type CRDVersion } from './types.js';
import type { CRDLifecycle } from './lifecycle.js';
import type { CustomResourceConverter } from './conversion-webhook.js';

const ALL_VERBS: Verb[] = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const MAX_INT32 = 2147483647;

/** What serving a custom resource version needs besides its ResourceDefinition. */
export interface CustomResourceInfo {
  crdName: string;
  crdUID: string;
  compiled: CompiledVersionSchema;
  /** The scale sub-resource's paths, when the version has one. */
  scale: CRDScale | undefined;
  /** Shared by every version of the CRD; the controller keeps it current (see lifecycle.ts). */
  lifecycle: CRDLifecycle;
}

/** Custom resource definitions → what serves them (kube keeps this in its crdInfo). */
const infos = new WeakMap<ResourceDefinition, CustomResourceInfo>();

/** Serving facts of a custom resource's definition; undefined for built-in resources. */
export function customResourceInfo(def: ResourceDefinition): CustomResourceInfo | undefined {
  return infos.get(def);
}

/** autoscaling/v1 Scale, the kind of every `scale` sub-resource (custom resources' too). */
export { scaleKind };

/** The value at a `.a.b` path of the scale sub-resource (kube reads them with NestedInt64/NestedString). */
export function valueAtPath(obj: unknown, path: string): { found: boolean; value: unknown } {
  let cur: unknown = obj;
  for (const k of path.replace(/^\./, '').split('.')) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, k)) return { found: false, value: undefined };
    cur = (cur as Record<string, unknown>)[k];
  }
  return { found: true, value: cur };
}

const pathKeys = (p: string): string[] => p.replace(/^\./, '').split('.');

/**
 * kube's scaleFromCustomResource as a ScaleDescription: replicas and selector at the paths the
 * CRD names (an integer, else absent; the selector a string). No ValidateScale: the custom
 * resource's own validation sees the replicas written.
 */
function customResourceScale(scale: CRDScale): ScaleDescription {
  const int = (path: string, obj: StoredObject): number | undefined => {
    const v = valueAtPath(obj, path).value;
    return typeof v === 'number' ? v : undefined;
  };
  return {
    specReplicasPath: pathKeys(scale.specReplicasPath),
    specReplicas: (obj) => int(scale.specReplicasPath, obj),
    statusReplicas: (obj) => int(scale.statusReplicasPath, obj) ?? 0,
    selector: (obj) => {
      if (!scale.labelSelectorPath) return undefined;
      const sel = valueAtPath(obj, scale.labelSelectorPath).value;
      return typeof sel === 'string' ? sel : undefined;
    },
  };
}

/** kube's ValidateScaleSpec / ValidateScaleStatus over the object. */
function validateScale(obj: StoredObject, scale: CRDScale, which: 'spec' | 'status'): FieldError[] {
  const errs: FieldError[] = [];
  const replicasPath = which === 'spec' ? scale.specReplicasPath : scale.statusReplicasPath;
  const { found, value } = valueAtPath(obj, replicasPath);
  if (found) {
    // kube's NestedInt64: an int64 (a BigInt above 2^53 too); a float64 is an accessor error.
    if (!isJsonInteger(value)) {
      errs.push(fieldErr.invalid(replicasPath, 0, `${replicasPath.replace(/^\./, '')} accessor error: ${stringifyJson(value)} is of the type ${typeof value}, expected int64`));
    } else if (value < 0) errs.push(fieldErr.invalid(replicasPath, value, 'should be a non-negative integer'));
    else if (value > MAX_INT32) errs.push(fieldErr.invalid(replicasPath, value, `should be less than or equal to ${MAX_INT32}`));
  }
  if (which === 'status' && scale.labelSelectorPath) {
    const sel = valueAtPath(obj, scale.labelSelectorPath);
    if (sel.found && typeof sel.value !== 'string') {
      errs.push(fieldErr.invalid(scale.labelSelectorPath, '', `${scale.labelSelectorPath.replace(/^\./, '')} accessor error: ${JSON.stringify(sel.value)} is of the type ${typeof sel.value}, expected string`));
    }
  }
  return errs;
}

/** Everything but metadata (and status, when the status sub-resource owns it): what bumps generation. */
function nonMetadata(obj: StoredObject, withoutStatus: boolean): Record<string, unknown> {
  const { metadata: _m, apiVersion: _v, kind: _k, ...rest } = obj;
  if (withoutStatus) delete rest['status'];
  return rest;
}

const isStatusField = (e: FieldError): boolean => e.field === 'status' || e.field.startsWith('status.') || e.field.startsWith('status[');

/** kube's customResourceStrategy and statusStrategy for one version. */
function strategiesFor(compiled: CompiledVersionSchema, v: CRDVersion): { main: ResourceStrategy; status: ResourceStrategy | undefined } {
  const statusEnabled = !!v.subresources?.status;
  const scale = v.subresources?.scale;
  const main: ResourceStrategy = {
    defaults(obj) {
      compiled.prune(obj);
      compiled.applyDefaults(obj);
    },
    prepareForCreate(obj) {
      if (statusEnabled) delete obj['status'];
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old) {
      if (statusEnabled) {
        if (old['status'] !== undefined) obj['status'] = old['status'];
        else delete obj['status'];
      }
      if (!isDeepStrictEqual(nonMetadata(obj, statusEnabled), nonMetadata(old, statusEnabled))) {
        obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
      }
    },
    validate(obj) {
      const errs = compiled.validate(obj);
      if (scale) errs.push(...validateScale(obj, scale, 'spec'), ...validateScale(obj, scale, 'status'));
      return errs;
    },
  };
  if (!statusEnabled) return { main, status: undefined };
  const status: ResourceStrategy = {
    defaults: main.defaults!,
    // Only .status changes through the status sub-resource (and managedFields, which track it).
    prepareForUpdate(obj, old) {
      const next = structuredClone(old);
      next.metadata.managedFields = obj.metadata.managedFields;
      if (obj.metadata.managedFields === undefined) delete next.metadata.managedFields;
      if (obj['status'] !== undefined) next['status'] = obj['status'];
      else delete next['status'];
      for (const k of Object.keys(obj)) delete obj[k];
      for (const [k, v] of Object.entries(next)) setMember(obj, k, v);
    },
    validate(obj) {
      const errs = compiled.validate(obj).filter(isStatusField);
      if (scale) errs.push(...validateScale(obj, scale, 'status'));
      return errs;
    },
  };
  return { main, status };
}

/**
 * The parts of a structural schema that lead to a `default`: what defaulting on read walks, so
 * an object is visited only along paths where a default may apply.
 */
interface DefaultNode {
  dflt?: unknown;
  nullable: boolean;
  props?: Map<string, DefaultNode>;
  items?: DefaultNode;
  additional?: DefaultNode;
}

/** The default tree of a raw openAPIV3Schema node; undefined when nothing below has a default. */
function defaultTree(raw: unknown): DefaultNode | undefined {
  if (!isPlainObject(raw)) return undefined;
  const node: DefaultNode = { nullable: raw['nullable'] === true };
  let any = false;
  // kube skips a null default (its Default.Object is nil).
  if (raw['default'] !== undefined && raw['default'] !== null) {
    node.dflt = raw['default'];
    any = true;
  }
  if (isPlainObject(raw['properties'])) {
    for (const [k, p] of Object.entries(raw['properties'])) {
      const child = defaultTree(p);
      if (!child) continue;
      (node.props ??= new Map()).set(k, child);
      any = true;
    }
  }
  const items = defaultTree(raw['items']);
  if (items) {
    node.items = items;
    any = true;
  }
  const additional = defaultTree(raw['additionalProperties']);
  if (additional) {
    node.additional = additional;
    any = true;
  }
  return any ? node : undefined;
}

/** A value missing or null where the schema has a default and no null is allowed gets it. */
const takesDefault = (present: boolean, v: unknown, n: DefaultNode): boolean => n.dflt !== undefined && (!present || (v === null && !n.nullable));

/**
 * kube's structural defaulting (defaulting/algorithm.go) copy-on-write: `x` itself when no default
 * applies, else a new value sharing every untouched part with `x`.
 */
function defaulted(x: unknown, n: DefaultNode): unknown {
  if (Array.isArray(x)) {
    const it = n.items;
    if (!it) return x;
    let out: unknown[] | undefined;
    for (let i = 0; i < x.length; i++) {
      let v = x[i];
      if (takesDefault(true, v, it)) v = structuredClone(it.dflt);
      v = defaulted(v, it);
      if (v !== x[i]) (out ??= x.slice())[i] = v;
    }
    return out ?? x;
  }
  if (!isPlainObject(x)) return x;
  let out: Record<string, unknown> | undefined;
  const visit = (k: string, child: DefaultNode): void => {
    const present = Object.hasOwn(x, k);
    const cur = present ? x[k] : undefined;
    let v = takesDefault(present, cur, child) ? structuredClone(child.dflt) : cur;
    if (!present && v === undefined) return;
    v = defaulted(v, child);
    if (v !== cur || !present) setMember((out ??= { ...x }), k, v);
  };
  if (n.props) for (const [k, child] of n.props) visit(k, child);
  // A structural schema has properties or additionalProperties, never both.
  if (n.additional && !n.props) for (const k of Object.keys(x)) visit(k, n.additional);
  return out ?? x;
}

/**
 * Defaulting on read: kube's storage decoder defaults every object read from etcd with the
 * storage version's structural schema (before converting it to the requested version, which for
 * conversion strategy None changes nothing else). Undefined when that schema has no default.
 */
function readDefaultsOf(raw: unknown): ((obj: StoredObject) => StoredObject) | undefined {
  const tree = defaultTree(raw);
  if (!tree) return undefined;
  return (obj) => defaulted(obj, tree) as StoredObject;
}

/** The synchronous conversion of a version converted by a webhook: never to be called. */
function asyncOnly(): never {
  throw new Error('this custom resource is converted by its conversion webhook, asynchronously');
}

/**
 * kube's defaultDeprecationWarning (apiextensions-apiserver customresource_handler.go, 1.24):
 * `<group>/<version> <Kind> is deprecated`, and `; use <group>/<newer> <Kind>` naming the
 * highest-priority version that is served, not deprecated and of higher priority than this one
 * (kube-aware order: GA > beta > alpha, then major, then minor). The kind is the spec's.
 */
export function defaultDeprecationWarning(crd: CRD, deprecatedVersion: string): string {
  const { group, names, versions } = crd.spec;
  const msg = `${group}/${deprecatedVersion} ${names.kind} is deprecated`;
  let newest: string | undefined;
  for (const v of versions) {
    if (!v.served || v.deprecated || compareKubeAwareVersions(v.name, deprecatedVersion) <= 0) continue;
    if (newest === undefined || compareKubeAwareVersions(v.name, newest) > 0) newest = v.name;
  }
  return newest === undefined ? msg : `${msg}; use ${group}/${newest} ${names.kind}`;
}

/** The kind's schema as the catalog keeps it: apiVersion, kind and metadata are the catalog's own. */
function kindSchema(compiled: CompiledVersionSchema | undefined): Schema {
  const sch = compiled?.schema;
  if (!sch) return s.any();
  const { apiVersion: _v, kind: _k, metadata: _m, ...properties } = sch.properties ?? {};
  return { ...sch, properties };
}

/**
 * The ResourceDefinitions of a CRD's served versions, highest-priority version first (kube's
 * discovery orders a group's versions by kube-aware version priority, so the first is preferred).
 * Names are the CRD's accepted names. Throws when a schema does not compile (validation should
 * have refused that CRD).
 */
export function buildCustomResourceDefinitions(
  crd: CRD,
  lifecycle: CRDLifecycle = { terminating: false, uid: crd.metadata.uid ?? '', key: '', revision: 0 },
  opts: { converter?: CustomResourceConverter | undefined } = {},
): { served: ResourceDefinition[]; storage: ResourceDefinition } {
  const converter = crd.spec.conversion?.strategy === 'Webhook' ? opts.converter : undefined;
  const { group, scope } = crd.spec;
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const plural = names.plural;
  const kind = names.kind;
  const storageVersion = storageVersionOf(crd);
  const served = crd.spec.versions.filter((v) => v.served || v.name === storageVersion);
  const byVersion = new Map<string, ResourceDefinition>();
  const readDefaults = readDefaultsOf(crd.spec.versions.find((v) => v.name === storageVersion)?.schema?.openAPIV3Schema);
  for (const v of served) {
    const compiled = v.schema?.openAPIV3Schema !== undefined ? compileVersionSchema(v.schema.openAPIV3Schema) : undefined;
    const effective: CompiledVersionSchema = compiled ?? { validate: () => [], applyDefaults: () => undefined, prune: () => undefined, schema: s.any() };
    const { main, status } = strategiesFor(effective, v);
    const subresources: SubresourceDefinition[] = [];
    if (status) subresources.push({ name: 'status', verbs: ['get', 'patch', 'update'], strategy: status });
    if (v.subresources?.scale) subresources.push({ name: 'scale', verbs: ['get', 'patch', 'update'], kind: scaleKind, scale: customResourceScale(v.subresources.scale) });
    const def: ResourceDefinition = {
      group,
      version: v.name,
      kind,
      listKind: names.listKind ?? `${kind}List`,
      schema: kindSchema(compiled),
      strategy: main,
      unstructured: true,
      plural,
      singular: names.singular || kind.toLowerCase(),
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      namespaced: scope === 'Namespaced',
      verbs: ALL_VERBS,
      storage: 'etcd',
      subresources,
      nameValidator: nameIsDNSSubdomain,
      allowCreateOnUpdate: false,
      returnDeletedObject: false,
      table: customResourceTable(v.additionalPrinterColumns ?? []),
      storagePath: `${group}/${plural}`,
    };
    // Through a webhook the versions' objects differ: each is defaulted with its own schema
    // once converted (kube's decoder defaults the converted object with the version's schema).
    const defaults = converter ? readDefaultsOf(v.schema?.openAPIV3Schema) : readDefaults;
    if (defaults) def.readDefaults = defaults;
    if (converter) def.convertAsync = (objs, apiVersion) => converter.convert(objs, apiVersion);
    if (v.deprecated) def.deprecation = { warning: v.deprecationWarning ?? defaultDeprecationWarning(crd, v.name), removedRelease: '' };
    infos.set(def, { crdName: crd.metadata.name!, crdUID: crd.metadata.uid ?? '', compiled: effective, scale: v.subresources?.scale, lifecycle });
    byVersion.set(v.name, def);
  }
  const storage = byVersion.get(storageVersion)!;
  for (const [version, def] of byVersion) {
    if (def === storage) continue;
    const apiVersion = `${group}/${version}`;
    const storageApiVersion = `${group}/${storageVersion}`;
    if (converter) {
      // Everything goes through convertAsync (the registry store awaits the webhook).
      def.conversion = { storage, toStorage: asyncOnly, fromStorage: asyncOnly };
      continue;
    }
    // Conversion strategy None: the object is the same, only its apiVersion differs.
    def.conversion = {
      storage,
      toStorage: (obj) => ({ ...obj, apiVersion: storageApiVersion, kind }),
      fromStorage: (obj) => ({ ...obj, apiVersion, kind }),
    };
  }
  // A storage version that is not served still stores (served versions convert to it), unlisted.
  const servedDefs = [...byVersion.entries()].filter(([name]) => crd.spec.versions.find((v) => v.name === name)?.served).map(([, d]) => d);
  // Highest priority first (kube's CompareKubeAwareVersionStrings is positive when a ranks higher).
  servedDefs.sort((a, b) => compareKubeAwareVersions(b.version, a.version));
  return { served: servedDefs, storage };
}
