/**
 * PersistentVolumeClaim validation as kube 1.24 has it: `ValidatePersistentVolumeClaimSpec`,
 * `ValidatePersistentVolumeClaimUpdate` (only `resources.requests` of a bound claim may change,
 * and storage may only grow), `ValidatePersistentVolumeClaimStatusUpdate`, and the claim templates
 * of ephemeral volumes. Object metadata aside: the store validates it, with a DNS-subdomain name.
 *
 * kube's PVC strategy validates an update with ValidatePersistentVolumeClaim and then
 * ValidatePersistentVolumeClaimUpdate (which validates the claim once more):
 * `validatePersistentVolumeClaim` + `validatePersistentVolumeClaimUpdate` here, in that order.
 * 1.24's gates: ReadWriteOncePod and RecoverVolumeExpansionFailure off, AnyVolumeDataSource on.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { validateAnnotations, validateLabels, isDNS1123Subdomain } from '../../../validation.js';
import { type JsonObject, child, isSet, key, memberAt, objectAt, optionalStringAt, stringAt, stringsAt } from './json-fields.js';
import { validateLabelSelector } from './label-selector.js';
import { VOLUME_MODES, validateAccessModes } from './persistentvolume.js';
import { asQuantity, validateBasicResource, validatePositiveQuantityValue, validateResourceQuantityValue } from './resources.js';
import { describeChange, resourceListsEqual, semanticEqual } from './semantic.js';

export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** kube's PersistentVolumeClaimSpecValidationOptions. */
export interface PersistentVolumeClaimValidationOptions {
  /** The ReadWriteOncePod access mode: off in 1.24 (alpha gate), on when the old object used it. */
  allowReadWriteOncePod?: boolean;
}

/** kube's `ValidationOptionsForPersistentVolumeClaim(Template)`: RWOP stays allowed when the old spec had it. */
export function persistentVolumeClaimValidationOptions(oldSpec?: unknown): PersistentVolumeClaimValidationOptions {
  return { allowReadWriteOncePod: stringsAt(oldSpec, 'accessModes').includes('ReadWriteOncePod') };
}

/** kube's `validateDataSource` (a `dataSource` or `dataSourceRef`). */
function validateDataSource(source: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const kind = stringAt(source, 'kind');
  if (!stringAt(source, 'name')) errs.push(fieldErr.required(child(path, 'name'), ''));
  if (!kind) errs.push(fieldErr.required(child(path, 'kind'), ''));
  if (!optionalStringAt(source, 'apiGroup') && kind !== 'PersistentVolumeClaim') errs.push(fieldErr.invalid(path, kind, ''));
  return errs;
}

/** kube's `ValidatePersistentVolumeClaimSpec` on a decoded `spec`. */
export function validatePersistentVolumeClaimSpec(spec: unknown, path: string, opts: PersistentVolumeClaimValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  if (stringsAt(spec, 'accessModes').length === 0) errs.push(fieldErr.required(child(path, 'accessModes'), 'at least 1 access mode is required'));
  errs.push(...validateLabelSelector(memberAt(spec, 'selector'), child(path, 'selector')));
  errs.push(...validateAccessModes(spec, child(path, 'accessModes'), opts.allowReadWriteOncePod));

  // kube names the storage request `<spec>.resources[storage]`.
  const storagePath = key(child(path, 'resources'), 'storage');
  const requests = objectAt(objectAt(spec, 'resources'), 'requests');
  if (!requests || !Object.hasOwn(requests, 'storage')) {
    errs.push(fieldErr.required(storagePath, ''));
  } else {
    const storage = asQuantity(requests['storage'])?.roundUp(-3);
    const positive = validatePositiveQuantityValue(storage, storagePath);
    errs.push(...(positive.length > 0 ? positive : validateResourceQuantityValue('storage', storage, storagePath)));
  }

  const className = optionalStringAt(spec, 'storageClassName');
  if (className) errs.push(...isDNS1123Subdomain(className).map((m) => fieldErr.invalid(child(path, 'storageClassName'), className, m)));
  const mode = optionalStringAt(spec, 'volumeMode');
  if (mode !== undefined && !VOLUME_MODES.includes(mode)) errs.push(fieldErr.notSupported(child(path, 'volumeMode'), mode, VOLUME_MODES));
  if (isSet(spec, 'dataSource')) errs.push(...validateDataSource(memberAt(spec, 'dataSource'), child(path, 'dataSource')));
  if (isSet(spec, 'dataSourceRef')) errs.push(...validateDataSource(memberAt(spec, 'dataSourceRef'), child(path, 'dataSourceRef')));
  if (isSet(spec, 'dataSource') && isSet(spec, 'dataSourceRef') && !semanticEqual(memberAt(spec, 'dataSource'), memberAt(spec, 'dataSourceRef'))) {
    // kube's bad value here is the *field.Path of dataSource, printed with Go's %#v.
    errs.push(fieldErr.invalid(path, new GoLiteral('field.Path{name:"dataSource", index:"", parent:(*field.Path)(0xc000a1c080)}'), 'must match dataSourceRef'));
  }
  return errs;
}

/** kube's `ValidatePersistentVolumeClaim` (spec part; metadata aside). */
export function validatePersistentVolumeClaim(obj: JsonObject, opts: PersistentVolumeClaimValidationOptions = {}): FieldError[] {
  return validatePersistentVolumeClaimSpec(objectAt(obj, 'spec'), 'spec', opts);
}

/** kube's `validateStorageClassUpgrade`: moving the class from the beta annotation to the field. */
function isStorageClassUpgrade(oldAnn: JsonObject | undefined, newAnn: JsonObject | undefined, oldClass: string | undefined, newClass: string | undefined): boolean {
  if (!oldAnn || !Object.hasOwn(oldAnn, BETA_STORAGE_CLASS_ANNOTATION)) return false;
  const oldSc = stringAt(oldAnn, BETA_STORAGE_CLASS_ANNOTATION);
  const newHas = newAnn !== undefined && Object.hasOwn(newAnn, BETA_STORAGE_CLASS_ANNOTATION);
  return oldClass === undefined && newClass === oldSc && (!newHas || stringAt(newAnn, BETA_STORAGE_CLASS_ANNOTATION) === oldSc);
}

/** Semantic equality of two claim specs: quantities in `resources` compare by value. */
function specsEqual(a: JsonObject, b: JsonObject): boolean {
  const { resources: ra, ...restA } = a;
  const { resources: rb, ...restB } = b;
  if (!semanticEqual(restA, restB)) return false;
  const { limits: la, requests: qa, ...otherA } = (ra ?? {}) as JsonObject;
  const { limits: lb, requests: qb, ...otherB } = (rb ?? {}) as JsonObject;
  return resourceListsEqual(la, lb) && resourceListsEqual(qa, qb) && semanticEqual(otherA, otherB);
}

/**
 * kube's `ValidatePersistentVolumeClaimUpdate` (metadata aside): the claim validated again; its
 * spec immutable except `volumeName` (once) and the storage request of a bound claim, which may
 * only grow; the beta storage-class annotation immutable unless it moves to the field.
 */
export function validatePersistentVolumeClaimUpdate(obj: JsonObject, old: JsonObject, opts: PersistentVolumeClaimValidationOptions = persistentVolumeClaimValidationOptions(objectAt(old, 'spec'))): FieldError[] {
  const errs = validatePersistentVolumeClaim(obj, opts);
  const spec: JsonObject = { ...(objectAt(obj, 'spec') ?? {}) };
  const oldSpec: JsonObject = { ...(objectAt(old, 'spec') ?? {}) };
  const newAnn = objectAt(objectAt(obj, 'metadata'), 'annotations');
  const oldAnn = objectAt(objectAt(old, 'metadata'), 'annotations');
  if (!stringAt(oldSpec, 'volumeName')) {
    if (Object.hasOwn(spec, 'volumeName')) oldSpec['volumeName'] = spec['volumeName'];
    else delete oldSpec['volumeName'];
  }
  if (isStorageClassUpgrade(oldAnn, newAnn, optionalStringAt(oldSpec, 'storageClassName'), optionalStringAt(spec, 'storageClassName'))) {
    delete spec['storageClassName'];
  } else {
    const next = stringAt(newAnn, BETA_STORAGE_CLASS_ANNOTATION);
    if (next !== stringAt(oldAnn, BETA_STORAGE_CLASS_ANNOTATION)) {
      errs.push(fieldErr.invalid(`metadata.annotations.${BETA_STORAGE_CLASS_ANNOTATION}`, next, 'field is immutable'));
    }
  }
  const requestsOf = (o: JsonObject): JsonObject | undefined => objectAt(objectAt(objectAt(o, 'spec'), 'resources'), 'requests');
  const oldRequests = requestsOf(old);
  const newResources = objectAt(spec, 'resources');
  const newRequests = objectAt(newResources, 'requests');
  // A bound claim may change its storage request (checked below); everything else must stay.
  if (stringAt(objectAt(obj, 'status'), 'phase') === 'Bound' && newRequests) {
    spec['resources'] = { ...newResources, requests: { ...newRequests, storage: oldRequests?.['storage'] ?? '0' } };
  }
  if (!specsEqual(spec, oldSpec)) {
    errs.push(fieldErr.forbidden('spec', `spec is immutable after creation except resources.requests for bound claims\n${describeChange(oldSpec, spec)}`));
  }
  const oldSize = asQuantity(oldRequests?.['storage'] ?? '0');
  const newSize = asQuantity(requestsOf(obj)?.['storage'] ?? '0');
  if (oldSize && newSize && newSize.cmp(oldSize) < 0) errs.push(fieldErr.forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  const mode = optionalStringAt(objectAt(obj, 'spec'), 'volumeMode');
  if (mode !== optionalStringAt(objectAt(old, 'spec'), 'volumeMode')) errs.push(fieldErr.invalid('volumeMode', mode ?? 'null', 'field is immutable'));
  return errs;
}

/** kube's `ValidatePersistentVolumeClaimStatusUpdate` (metadata aside; 1.24's gates off). */
export function validatePersistentVolumeClaimStatusUpdate(obj: JsonObject, _old: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(objectAt(obj, 'metadata'), 'resourceVersion')) errs.push(fieldErr.required('resourceVersion', ''));
  // kube spells this path with a capital S.
  if (stringsAt(objectAt(obj, 'spec'), 'accessModes').length === 0) errs.push(fieldErr.required('Spec.accessModes', ''));
  const capacity = objectAt(objectAt(obj, 'status'), 'capacity');
  for (const r of Object.keys(capacity ?? {}).sort()) errs.push(...validateBasicResource(capacity?.[r], key('status.capacity', r)));
  return errs;
}

/** ObjectMeta members in Go field order, as kube's allow-list check names them. */
const OBJECT_META_FIELDS: Array<[json: string, goName: string]> = [
  ['name', 'name'],
  ['generateName', 'generateName'],
  ['namespace', 'namespace'],
  ['selfLink', 'selfLink'],
  ['uid', 'uID'],
  ['resourceVersion', 'resourceVersion'],
  ['generation', 'generation'],
  ['creationTimestamp', 'creationTimestamp'],
  ['deletionTimestamp', 'deletionTimestamp'],
  ['deletionGracePeriodSeconds', 'deletionGracePeriodSeconds'],
  ['ownerReferences', 'ownerReferences'],
  ['finalizers', 'finalizers'],
  ['clusterName', 'clusterName'],
  ['managedFields', 'managedFields'],
];

/**
 * kube's `ValidatePersistentVolumeClaimTemplate` (an ephemeral volume's `volumeClaimTemplate`):
 * only labels and annotations in its metadata, and a valid claim spec.
 */
export function validatePersistentVolumeClaimTemplate(template: unknown, path: string, opts: PersistentVolumeClaimValidationOptions = {}): FieldError[] {
  const metaPath = child(path, 'metadata');
  const meta = objectAt(template, 'metadata');
  const errs = [...validateAnnotations(memberAt(meta, 'annotations'), child(metaPath, 'annotations')), ...validateLabels(memberAt(meta, 'labels'), child(metaPath, 'labels'))];
  for (const [json, goName] of OBJECT_META_FIELDS) {
    if (!semanticEqual(memberAt(meta, json), undefined)) errs.push(fieldErr.forbidden(child(metaPath, goName), 'cannot be set for an ephemeral volume'));
  }
  return [...errs, ...validatePersistentVolumeClaimSpec(objectAt(template, 'spec'), child(path, 'spec'), opts)];
}

// ---------------------------------------------------------------------------------------------
// Strategy helpers (pkg/api/persistentvolumeclaim)
// ---------------------------------------------------------------------------------------------

/** Whether a data source is one kube honours in `dataSource` (a PVC, or a VolumeSnapshot). */
function isLegacyDataSource(source: unknown): boolean {
  const kind = stringAt(source, 'kind');
  const group = optionalStringAt(source, 'apiGroup') ?? '';
  return (kind === 'PersistentVolumeClaim' && group === '') || (kind === 'VolumeSnapshot' && group === 'snapshot.storage.k8s.io');
}

/**
 * kube's `EnforceDataSourceBackwardsCompatibility`: a `dataSource` of another kind is dropped,
 * unless the claim also sets `dataSourceRef` (a newer client) or, on update, the old claim had
 * either. Mutates `spec`.
 */
export function enforceDataSourceBackwardsCompatibility(spec: JsonObject, oldSpec?: JsonObject): void {
  if (oldSpec && (isSet(oldSpec, 'dataSource') || isSet(oldSpec, 'dataSourceRef'))) return;
  if (isSet(spec, 'dataSourceRef')) return;
  if (!isLegacyDataSource(memberAt(spec, 'dataSource'))) delete spec['dataSource'];
}

/** kube's `NormalizeDataSources` (AnyVolumeDataSource on): `dataSource` and `dataSourceRef` mirror each other when one is unset. Mutates `spec`. */
export function normalizeDataSources(spec: JsonObject): void {
  const source = memberAt(spec, 'dataSource');
  const ref = memberAt(spec, 'dataSourceRef');
  if (isSet(spec, 'dataSource') && !isSet(spec, 'dataSourceRef')) spec['dataSourceRef'] = structuredClone(source);
  else if (isSet(spec, 'dataSourceRef') && !isSet(spec, 'dataSource')) spec['dataSource'] = structuredClone(ref);
}
