/**
 * authorization.k8s.io/v1 access reviews' validation (pkg/apis/authorization/validation), called
 * by the review storages as kube's REST calls it.
 */
import { type FieldError, fieldErr } from '../../field-errors.js';
import { isPlainObject, type StoredObject } from '../../types.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

// ---------------------------------------------------------------------------------------------
// Validation (pkg/apis/authorization/validation)
// ---------------------------------------------------------------------------------------------

function record(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * A field error whose value reads as Go's `%v`/`%#v` of kube's internal type prints it: a nil
 * pointer is `"null"`, a NonResourceAttributes is `authorization.NonResourceAttributes{...}`.
 */
function invalidGo(field: string, goValue: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, hasValue: false, detail: `${goValue}: ${detail}` };
}

function goNonResourceAttributes(v: Record<string, unknown> | undefined): string {
  if (!v) return '"null"';
  return `authorization.NonResourceAttributes{Path:${JSON.stringify(str(v['path']))}, Verb:${JSON.stringify(str(v['verb']))}}`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Go's `%#v` of a metav1.Time: the zero time (UTC) when unset; otherwise kube's decoder converts
 * to the server's local zone, printed as time.Local (the hours are UTC's on a UTC server).
 */
function goTime(v: unknown): string {
  const d = typeof v === 'string' ? new Date(v) : undefined;
  if (!d || Number.isNaN(d.getTime())) return 'time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)';
  return `time.Date(${d.getUTCFullYear()}, time.${MONTHS[d.getUTCMonth()]}, ${d.getUTCDate()}, ${d.getUTCHours()}, ${d.getUTCMinutes()}, ${d.getUTCSeconds()}, 0, time.Local)`;
}

function goStringMap(v: unknown): string {
  if (!isPlainObject(v) || Object.keys(v).length === 0) return 'map[string]string(nil)';
  return `map[string]string{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(str(v[k]))}`)
    .join(', ')}}`;
}

function goPointer(type: string, v: unknown): string {
  return v === undefined || v === null ? `(*${type})(nil)` : `(*${type})(0xc000000000)`;
}

/**
 * Go's `%#v` of the v1.ObjectMeta kube reports as the invalid value of a review's metadata
 * (managedFields cleared, as kube's shallow copy does). Pointers print as Go does, with a
 * placeholder address.
 */
function goObjectMeta(meta: StoredObject['metadata']): string {
  const s = (k: string): string => JSON.stringify(str(meta[k]));
  const owners = Array.isArray(meta.ownerReferences) && meta.ownerReferences.length > 0
    ? `[]v1.OwnerReference{${meta.ownerReferences
        .map((o) => `v1.OwnerReference{APIVersion:${JSON.stringify(o.apiVersion ?? '')}, Kind:${JSON.stringify(o.kind ?? '')}, Name:${JSON.stringify(o.name ?? '')}, UID:${JSON.stringify(o.uid ?? '')}, Controller:${goPointer('bool', o.controller)}, BlockOwnerDeletion:${goPointer('bool', o.blockOwnerDeletion)}}`)
        .join(', ')}}`
    : '[]v1.OwnerReference(nil)';
  const finalizers = Array.isArray(meta.finalizers) && meta.finalizers.length > 0 ? `[]string{${meta.finalizers.map((f) => JSON.stringify(f)).join(', ')}}` : '[]string(nil)';
  return (
    `v1.ObjectMeta{Name:${s('name')}, GenerateName:${s('generateName')}, Namespace:${s('namespace')}, SelfLink:${s('selfLink')}, UID:${s('uid')}, ` +
    `ResourceVersion:${s('resourceVersion')}, Generation:${typeof meta.generation === 'number' ? meta.generation : 0}, CreationTimestamp:${goTime(meta.creationTimestamp)}, ` +
    `DeletionTimestamp:${meta.deletionTimestamp ? goTime(meta.deletionTimestamp) : '<nil>'}, DeletionGracePeriodSeconds:${goPointer('int64', meta.deletionGracePeriodSeconds)}, ` +
    `Labels:${goStringMap(meta.labels)}, Annotations:${goStringMap(meta.annotations)}, OwnerReferences:${owners}, Finalizers:${finalizers}, ` +
    `ZZZ_DeprecatedClusterName:${JSON.stringify(str(meta['clusterName']))}, ManagedFields:[]v1.ManagedFieldsEntry(nil)}`
  );
}

/** The object metadata kube requires empty: anything set but managedFields (and, for LSAR, namespace). */
function metadataIsEmpty(meta: Record<string, unknown>, ignore: readonly string[]): boolean {
  return Object.entries(meta).every(([k, v]) => {
    if (k === 'managedFields' || ignore.includes(k)) return true;
    if (v === null || v === undefined || v === '' || v === 0) return true;
    if (Array.isArray(v)) return v.length === 0;
    return isPlainObject(v) && Object.keys(v).length === 0;
  });
}

function attributesOf(spec: Record<string, unknown>): { res: Record<string, unknown> | undefined; nonRes: Record<string, unknown> | undefined } {
  return { res: record(spec['resourceAttributes']), nonRes: record(spec['nonResourceAttributes']) };
}

function validateAttributes(spec: Record<string, unknown>): FieldError[] {
  const { res, nonRes } = attributesOf(spec);
  const errs: FieldError[] = [];
  if (res && nonRes) errs.push(invalidGo('spec.nonResourceAttributes', goNonResourceAttributes(nonRes), 'cannot be specified in combination with resourceAttributes'));
  if (!res && !nonRes) errs.push(invalidGo('spec.resourceAttributes', goNonResourceAttributes(nonRes), 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  return errs;
}

/** ValidateSubjectAccessReviewSpec: one kind of attributes, and someone to ask about. */
function validateSubjectAccessReviewSpec(spec: Record<string, unknown>): FieldError[] {
  const errs = validateAttributes(spec);
  const groups = Array.isArray(spec['groups']) ? spec['groups'] : [];
  if (str(spec['user']) === '' && groups.length === 0) errs.push(fieldErr.invalid('spec.user', str(spec['user']), 'at least one of user or group must be specified'));
  return errs;
}

function specOf(obj: StoredObject): Record<string, unknown> {
  return record(obj['spec']) ?? {};
}

export function validateSubjectAccessReview(obj: StoredObject): FieldError[] {
  const errs = validateSubjectAccessReviewSpec(specOf(obj));
  if (!metadataIsEmpty(obj.metadata, [])) errs.push(invalidGo('metadata', goObjectMeta(obj.metadata), 'must be empty'));
  return errs;
}

export function validateSelfSubjectAccessReview(obj: StoredObject): FieldError[] {
  const errs = validateAttributes(specOf(obj));
  if (!metadataIsEmpty(obj.metadata, [])) errs.push(invalidGo('metadata', goObjectMeta(obj.metadata), 'must be empty'));
  return errs;
}

export function validateLocalSubjectAccessReview(obj: StoredObject): FieldError[] {
  const spec = specOf(obj);
  const errs = validateSubjectAccessReviewSpec(spec);
  // kube blanks the namespace before comparing, and reports the metadata as sent.
  if (!metadataIsEmpty(obj.metadata, ['namespace'])) errs.push(invalidGo('metadata', goObjectMeta(obj.metadata), 'must be empty except for namespace'));
  const { res, nonRes } = attributesOf(spec);
  const namespace = str(obj.metadata.namespace);
  if (res && str(res['namespace']) !== namespace) errs.push(fieldErr.invalid('spec.resourceAttributes.namespace', str(res['namespace']), 'must match metadata.namespace'));
  if (nonRes) errs.push(invalidGo('spec.nonResourceAttributes', goNonResourceAttributes(nonRes), 'disallowed on this kind of request'));
  return errs;
}
