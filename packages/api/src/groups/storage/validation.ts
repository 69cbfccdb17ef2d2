/**
 * storage.k8s.io validation as kube 1.24 has it (pkg/apis/storage/validation): the rules of
 * StorageClass, VolumeAttachment, CSINode, CSIDriver and CSIStorageCapacity, in kube's order.
 * Object metadata is validated by the store with each resource's name rule.
 */
import { type FieldError, GoLiteral, fieldErr, goStringSlice } from '../../field-errors.js';
import { isDNS1123Subdomain, isQualifiedName } from '../../validation.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { validateLabelSelector } from '../core/validation/label-selector.js';
import { arrayAt, child, index, isSet, objectAt, stringAt, stringsAt, type JsonObject } from '../core/validation/json-fields.js';
import { validateTopologySelectorTerm } from '../core/validation/node-selector.js';
import { validateNonnegativeQuantity } from '../core/validation/resources.js';
import { semanticEqual } from '../core/validation/semantic.js';
import { validatePersistentVolumeSpec } from '../core/validation/persistentvolume.js';
import { validateCSIDriverName } from '../core/validation/volume-sources.js';

const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;
const MAX_ATTACHMENT_METADATA_SIZE = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE = 1024;
/** CSINode's strategy allows the longer node IDs (AllowLongNodeID) in 1.24. */
const MAX_CSI_NODE_ID = 256;

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];

const bytes = (s: string): number => Buffer.byteLength(s);

/** apimachinery's ValidateQualifiedName. */
function validateQualifiedName(value: string, path: string): FieldError[] {
  return isQualifiedName(value).map((m) => fieldErr.invalid(path, value, m));
}

/** An immutable field (apimachinery's ValidateImmutableField): `shown` is the new value as Go prints it. */
function immutable(next: unknown, old: unknown, path: string, shown: unknown = next): FieldError[] {
  return semanticEqual(next ?? null, old ?? null) ? [] : [fieldErr.invalid(path, shown ?? null, 'field is immutable')];
}

// ---------------------------------------------------------------------------------------------
// StorageClass
// ---------------------------------------------------------------------------------------------

/** kube's ValidateStorageClass (after the metadata). */
export function validateStorageClass(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner = stringAt(obj, 'provisioner');
  if (!provisioner) errs.push(fieldErr.required('provisioner', ''));
  else errs.push(...validateQualifiedName(provisioner.toLowerCase(), 'provisioner'));
  const params = objectAt(obj, 'parameters');
  if (params) {
    const entries = Object.entries(params);
    if (entries.length > MAX_PARAMETERS) {
      errs.push(fieldErr.tooLong('parameters', 'Provisioner Parameters exceeded max allowed', MAX_PARAMETERS));
    } else {
      let size = 0;
      for (const [k, v] of entries) {
        if (k.length < 1) errs.push(fieldErr.invalid('parameters', k, 'field can not be empty.'));
        size += bytes(k) + bytes(typeof v === 'string' ? v : '');
      }
      if (size > MAX_PARAMETERS_SIZE) errs.push(fieldErr.tooLong('parameters', '', MAX_PARAMETERS_SIZE));
    }
  }
  const reclaim = stringAt(obj, 'reclaimPolicy');
  if (reclaim && !RECLAIM_POLICIES.includes(reclaim)) errs.push(fieldErr.notSupported('reclaimPolicy', reclaim, RECLAIM_POLICIES));
  if (!isSet(obj, 'volumeBindingMode')) errs.push(fieldErr.required('volumeBindingMode', ''));
  else {
    const mode = stringAt(obj, 'volumeBindingMode');
    if (!BINDING_MODES.includes(mode)) errs.push(fieldErr.notSupported('volumeBindingMode', mode, BINDING_MODES));
  }
  const seen: Array<Map<string, string[]>> = [];
  arrayAt(obj, 'allowedTopologies').forEach((term, i) => {
    const path = index('allowedTopologies', i);
    errs.push(...validateTopologySelectorTerm(term, path));
    const exprs = topologyExpressions(term);
    if (seen.some((t) => sameTopology(t, exprs))) errs.push(fieldErr.duplicate(child(path, 'matchLabelExpressions'), ''));
    seen.push(exprs);
  });
  return errs;
}

/** A topology term as kube compares them: key → its set of values (sorted). */
function topologyExpressions(term: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const req of arrayAt(term, 'matchLabelExpressions')) out.set(stringAt(req, 'key'), [...new Set(stringsAt(req, 'values'))].sort());
  return out;
}

function sameTopology(a: Map<string, string[]>, b: Map<string, string[]>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k)?.join('\u0000') !== v.join('\u0000')) return false;
  return true;
}

/** kube's ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and volumeBindingMode fixed. */
export function validateStorageClassUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const params = (o: StoredObject): unknown => {
    const p = objectAt(o, 'parameters');
    return p && Object.keys(p).length > 0 ? p : null;
  };
  if (!semanticEqual(params(obj), params(old))) errs.push(fieldErr.forbidden('parameters', 'updates to parameters are forbidden.'));
  if (stringAt(obj, 'provisioner') !== stringAt(old, 'provisioner')) errs.push(fieldErr.forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (stringAt(obj, 'reclaimPolicy') !== stringAt(old, 'reclaimPolicy')) errs.push(fieldErr.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  errs.push(...immutable(obj['volumeBindingMode'], old['volumeBindingMode'], 'volumeBindingMode'));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// VolumeAttachment
// ---------------------------------------------------------------------------------------------

/** kube's ValidateVolumeAttachment (spec and status, after the metadata). */
export function validateVolumeAttachment(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = objectAt(obj, 'spec') ?? {};
  const attacher = stringAt(spec, 'attacher');
  if (!attacher) errs.push(fieldErr.required('spec.attacher', ''));
  const source = objectAt(spec, 'source') ?? {};
  const hasInline = isSet(source, 'inlineVolumeSpec');
  const hasPV = typeof source['persistentVolumeName'] === 'string';
  if (!hasInline && !hasPV) errs.push(fieldErr.required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (hasInline && hasPV) errs.push(fieldErr.forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (hasPV) {
    if (stringAt(source, 'persistentVolumeName') === '') errs.push(fieldErr.required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  } else {
    errs.push(...validatePersistentVolumeSpec(source['inlineVolumeSpec'], '', 'spec.source.inlineVolumeSpec', { inline: true }));
  }
  const node = stringAt(spec, 'nodeName');
  for (const m of isDNS1123Subdomain(node)) errs.push(fieldErr.invalid('spec.nodeName', node, m));
  const status = objectAt(obj, 'status') ?? {};
  const metadata = objectAt(status, 'attachmentMetadata');
  if (metadata) {
    let size = 0;
    for (const [k, v] of Object.entries(metadata)) size += bytes(k) + bytes(typeof v === 'string' ? v : '');
    if (size > MAX_ATTACHMENT_METADATA_SIZE) errs.push(fieldErr.tooLong('status.attachmentMetadata', metadata, MAX_ATTACHMENT_METADATA_SIZE));
  }
  for (const which of ['attachError', 'detachError']) {
    const message = stringAt(objectAt(status, which), 'message');
    // kube reports the metadata limit here, not the message's own (1.24's text).
    if (bytes(message) > MAX_VOLUME_ERROR_MESSAGE) errs.push(fieldErr.tooLong(`status.${which}.message`, message, MAX_ATTACHMENT_METADATA_SIZE));
  }
  return errs;
}

/** kube's ValidateVolumeAttachmentV1: the attacher is a CSI driver name, the PV name a DNS subdomain. */
export function validateVolumeAttachmentV1(obj: StoredObject): FieldError[] {
  const spec = objectAt(obj, 'spec') ?? {};
  const errs = validateCSIDriverName(stringAt(spec, 'attacher'), 'spec.attacher');
  const source = objectAt(spec, 'source') ?? {};
  if (typeof source['persistentVolumeName'] === 'string') {
    const pv = source['persistentVolumeName'];
    for (const m of isDNS1123Subdomain(pv)) errs.push(fieldErr.invalid('spec.source.persistentVolumeName', pv, m));
  }
  return errs;
}

/** kube's ValidateVolumeAttachmentUpdate: the spec is immutable. */
export function validateVolumeAttachmentUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs = validateVolumeAttachment(obj);
  if (!semanticEqual(obj['spec'] ?? null, old['spec'] ?? null)) errs.push(fieldErr.invalid('spec', obj['spec'] ?? {}, 'field is immutable'));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// CSINode
// ---------------------------------------------------------------------------------------------

/** kube's ValidateCSINode (after the metadata), with the long node IDs its strategy allows. */
export function validateCSINode(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  arrayAt(objectAt(obj, 'spec'), 'drivers').forEach((driver, i) => {
    const path = index('spec.drivers', i);
    const name = stringAt(driver, 'name');
    errs.push(...validateCSIDriverName(name, child(path, 'name')));
    const nodeID = stringAt(driver, 'nodeID');
    if (!nodeID) errs.push(fieldErr.required(child(path, 'nodeID'), ''));
    if (nodeID.length > MAX_CSI_NODE_ID) errs.push(fieldErr.invalid(child(path, 'nodeID'), nodeID, `must be ${MAX_CSI_NODE_ID} characters or less`));
    const count = objectAt(driver, 'allocatable')?.['count'];
    if (typeof count === 'number' && count < 0) errs.push(fieldErr.invalid(child(path, 'allocatable', 'count'), count, 'must be greater than or equal to 0'));
    if (names.has(name)) errs.push(fieldErr.duplicate(child(path, 'name'), name));
    names.add(name);
    const keys = new Set<string>();
    for (const k of stringsAt(driver, 'topologyKeys')) {
      if (!k) errs.push(fieldErr.required(path, k));
      if (keys.has(k)) errs.push(fieldErr.duplicate(path, k));
      keys.add(k);
      errs.push(...validateQualifiedName(k, path));
    }
  });
  return errs;
}

/** kube's ValidateCSINodeUpdate: a driver that stays (by name) may not change. */
export function validateCSINodeUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs = validateCSINode(obj);
  const drivers = (o: StoredObject): unknown[] => arrayAt(objectAt(o, 'spec'), 'drivers');
  for (const before of drivers(old)) {
    for (const after of drivers(obj)) {
      if (stringAt(before, 'name') === stringAt(after, 'name') && !semanticEqual(before, after)) {
        errs.push(fieldErr.invalid('CSINodeDriver', after, 'field is immutable'));
      }
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// CSIDriver
// ---------------------------------------------------------------------------------------------

/** kube's validateCSIDriverSpec (its field path for attachRequired is `spec.attachedRequired`). */
export function validateCSIDriverSpec(obj: StoredObject): FieldError[] {
  const spec = objectAt(obj, 'spec') ?? {};
  const errs: FieldError[] = [];
  if (typeof spec['attachRequired'] !== 'boolean') errs.push(fieldErr.required('spec.attachedRequired', ''));
  if (typeof spec['podInfoOnMount'] !== 'boolean') errs.push(fieldErr.required('spec.podInfoOnMount', ''));
  if (typeof spec['storageCapacity'] !== 'boolean') errs.push(fieldErr.required('spec.storageCapacity', ''));
  if (typeof spec['fsGroupPolicy'] === 'string' && !FS_GROUP_POLICIES.includes(spec['fsGroupPolicy'])) {
    errs.push(fieldErr.notSupported('spec.fsGroupPolicy', spec['fsGroupPolicy'], FS_GROUP_POLICIES));
  }
  errs.push(...validateTokenRequests(spec));
  for (const mode of stringsAt(spec, 'volumeLifecycleModes')) {
    if (!LIFECYCLE_MODES.includes(mode)) errs.push(fieldErr.notSupported('spec.volumeLifecycleModes', mode, LIFECYCLE_MODES));
  }
  return errs;
}

function validateTokenRequests(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const audiences = new Set<string>();
  arrayAt(spec, 'tokenRequests').forEach((req, i) => {
    const path = index('spec.tokenRequests', i);
    const audience = stringAt(req, 'audience');
    if (audiences.has(audience)) {
      errs.push(fieldErr.duplicate(child(path, 'audience'), audience));
      return;
    }
    audiences.add(audience);
    const exp = isPlainObject(req) ? req['expirationSeconds'] : undefined;
    if (typeof exp !== 'number') return;
    if (exp < 600) errs.push(fieldErr.invalid(child(path, 'expirationSeconds'), exp, 'may not specify a duration less than 10 minutes'));
    if (exp > 2 ** 32) errs.push(fieldErr.invalid(child(path, 'expirationSeconds'), exp, 'may not specify a duration larger than 2^32 seconds'));
  });
  return errs;
}

/** kube 1.24's ValidateCSIDriverUpdate: the spec again, four immutable fields, the token requests again. */
export function validateCSIDriverUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const spec = objectAt(obj, 'spec') ?? {};
  const prev = objectAt(old, 'spec') ?? {};
  const modes = (s: JsonObject): unknown => (isSet(s, 'volumeLifecycleModes') ? stringsAt(s, 'volumeLifecycleModes') : null);
  const shownModes = modes(spec) === null ? new GoLiteral('[]storage.VolumeLifecycleMode(nil)') : goStringSlice(stringsAt(spec, 'volumeLifecycleModes'), 'storage.VolumeLifecycleMode');
  return [
    ...validateCSIDriverSpec(obj),
    ...immutable(spec['attachRequired'], prev['attachRequired'], 'spec.attachedRequired'),
    ...immutable(spec['fsGroupPolicy'], prev['fsGroupPolicy'], 'spec.fsGroupPolicy'),
    ...immutable(spec['podInfoOnMount'], prev['podInfoOnMount'], 'spec.podInfoOnMount'),
    ...immutable(modes(spec), modes(prev), 'spec.volumeLifecycleModes', shownModes),
    ...validateTokenRequests(spec),
  ];
}

// ---------------------------------------------------------------------------------------------
// CSIStorageCapacity
// ---------------------------------------------------------------------------------------------

/** kube's ValidateCSIStorageCapacity (after the metadata). */
export function validateCSIStorageCapacity(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(obj, 'nodeTopology')) errs.push(...validateLabelSelector(obj['nodeTopology'], 'nodeTopology'));
  const cls = stringAt(obj, 'storageClassName');
  for (const m of isDNS1123Subdomain(cls)) errs.push(fieldErr.invalid('storageClassName', cls, m));
  if (obj['capacity'] !== undefined) errs.push(...validateNonnegativeQuantity(obj['capacity'], 'capacity'));
  return errs;
}

/** kube's ValidateCSIStorageCapacityUpdate: nodeTopology and storageClassName are fixed. */
export function validateCSIStorageCapacityUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!semanticEqual(obj['nodeTopology'] ?? null, old['nodeTopology'] ?? null)) errs.push(fieldErr.invalid('nodeTopology', obj['nodeTopology'] ?? null, 'field is immutable'));
  if (stringAt(obj, 'storageClassName') !== stringAt(old, 'storageClassName')) errs.push(fieldErr.invalid('storageClassName', stringAt(obj, 'storageClassName'), 'field is immutable'));
  return errs;
}
