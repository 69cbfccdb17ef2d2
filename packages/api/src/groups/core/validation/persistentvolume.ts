/**
 * PersistentVolume validation as kube 1.24 has it: `ValidatePersistentVolumeSpec`,
 * `ValidatePersistentVolumeUpdate`, `ValidatePersistentVolumeStatusUpdate`, and the volume
 * plugin check the PV strategy adds (pkg/volume/validation `ValidatePersistentVolume`). Object
 * metadata aside: the store validates it, with a DNS-subdomain name.
 *
 * kube's PV strategy validates an update with ValidatePersistentVolume, the plugin check, and
 * ValidatePersistentVolumeUpdate (which validates the PV once more): `validatePersistentVolume` +
 * `validatePersistentVolumeUpdate` here, in that order.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { isDNS1123Subdomain } from '../../../validation.js';
import { type JsonObject, child, isSet, key, mapSize, memberAt, objectAt, optionalStringAt, stringAt, stringsAt } from './json-fields.js';
import { validateVolumeNodeAffinity } from './node-selector.js';
import { resourceListEntries, validateBasicResource, validatePositiveQuantityValue } from './resources.js';
import { describeChange, semanticEqual } from './semantic.js';
import { cleanPath, validateHostPathVolumeSource, validateLocalVolumeSource } from './volume-paths.js';
import {
  validateAWSElasticBlockStoreVolumeSource,
  validateAzureDisk,
  validateAzureFilePV,
  validateCSIPersistentVolumeSource,
  validateCephFSPersistentVolumeSource,
  validateCinderPersistentVolumeSource,
  validateFCVolumeSource,
  validateFlexPersistentVolumeSource,
  validateFlockerVolumeSource,
  validateGCEPersistentDiskVolumeSource,
  validateGlusterfsPersistentVolumeSource,
  validateISCSIPersistentVolumeSource,
  validateNFSVolumeSource,
  validatePhotonPersistentDiskVolumeSource,
  validatePortworxVolumeSource,
  validateQuobyteVolumeSource,
  validateRBDPersistentVolumeSource,
  validateScaleIOPersistentVolumeSource,
  validateStorageOSPersistentVolumeSource,
  validateVsphereVolumeSource,
} from './volume-sources.js';

/** Access modes kube 1.24 supports (ReadWriteOncePod is behind its alpha gate). */
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce'];
export const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
export const VOLUME_MODES = ['Block', 'Filesystem'];
/** The annotation kube's volume plugins read mount options from (before `spec.mountOptions`). */
export const MOUNT_OPTIONS_ANNOTATION = 'volume.beta.kubernetes.io/mount-options';

/** kube's PersistentVolumeSpecValidationOptions. */
export interface PersistentVolumeValidationOptions {
  /** The ReadWriteOncePod access mode: off in 1.24 (alpha gate), on when the old object used it. */
  allowReadWriteOncePod?: boolean;
  /** kube's `validateInlinePersistentVolumeSpec` (a CSI spec inlined in a VolumeAttachment). */
  inline?: boolean;
}

/** kube's `ValidationOptionsForPersistentVolume`: RWOP stays allowed when the old object had it. */
export function persistentVolumeValidationOptions(old?: JsonObject): PersistentVolumeValidationOptions {
  return { allowReadWriteOncePod: old !== undefined && stringsAt(objectAt(old, 'spec'), 'accessModes').includes('ReadWriteOncePod') };
}

/** kube's access-mode checks, shared by PV and PVC specs. */
export function validateAccessModes(spec: unknown, path: string, allowReadWriteOncePod: boolean | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const supported = allowReadWriteOncePod ? [...ACCESS_MODES, 'ReadWriteOncePod'] : ACCESS_MODES;
  let rwop = false;
  let other = false;
  for (const mode of stringsAt(spec, 'accessModes')) {
    if (!supported.includes(mode)) errs.push(fieldErr.notSupported(path, mode, supported));
    if (mode === 'ReadWriteOncePod') rwop = true;
    else if (ACCESS_MODES.includes(mode)) other = true;
  }
  if (rwop && other) errs.push(fieldErr.forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** Go's `%#v` of a decoded ResourceList (`core.ResourceList{"storage":resource.Quantity{...}}`). */
function goResourceList(spec: unknown, member: string): GoLiteral {
  if (!isSet(spec, member)) return new GoLiteral('core.ResourceList(nil)');
  const entries = resourceListEntries(objectAt(spec, member)).map(([k, q]) => `${JSON.stringify(k)}:${q.goSyntax()}`);
  return new GoLiteral(`core.ResourceList{${entries.join(', ')}}`);
}

type SourceCheck = (source: unknown, path: string, pvName: string) => FieldError[];

/**
 * The volume sources of a PV spec in kube's order: the member, the path segment kube validates it
 * under (kube's own spellings, `persistentDisk` and `cephfs` included), and the check.
 */
const PV_SOURCES: Array<[member: string, segment: string, check: SourceCheck]> = [
  ['hostPath', 'hostPath', validateHostPathVolumeSource],
  ['gcePersistentDisk', 'persistentDisk', validateGCEPersistentDiskVolumeSource],
  ['awsElasticBlockStore', 'awsElasticBlockStore', validateAWSElasticBlockStoreVolumeSource],
  ['glusterfs', 'glusterfs', validateGlusterfsPersistentVolumeSource],
  ['flocker', 'flocker', validateFlockerVolumeSource],
  ['nfs', 'nfs', validateNFSVolumeSource],
  ['rbd', 'rbd', validateRBDPersistentVolumeSource],
  ['quobyte', 'quobyte', validateQuobyteVolumeSource],
  ['cephfs', 'cephfs', validateCephFSPersistentVolumeSource],
  ['iscsi', 'iscsi', (s, p, name) => validateISCSIPersistentVolumeSource(s, name, p)],
  ['cinder', 'cinder', validateCinderPersistentVolumeSource],
  ['fc', 'fc', validateFCVolumeSource],
  ['flexVolume', 'flexVolume', validateFlexPersistentVolumeSource],
  ['azureFile', 'azureFile', validateAzureFilePV],
  ['vsphereVolume', 'vsphereVolume', validateVsphereVolumeSource],
  ['photonPersistentDisk', 'photonPersistentDisk', validatePhotonPersistentDiskVolumeSource],
  ['portworxVolume', 'portworxVolume', validatePortworxVolumeSource],
  ['azureDisk', 'azureDisk', validateAzureDisk],
  ['scaleIO', 'scaleIO', validateScaleIOPersistentVolumeSource],
  ['local', 'local', validateLocalVolumeSource],
  ['storageos', 'storageos', validateStorageOSPersistentVolumeSource],
  ['csi', 'csi', validateCSIPersistentVolumeSource],
];

/** The path segment kube's "more than 1 volume type" error names (`cephFS` differs from the member). */
const forbiddenSegment = (member: string): string => (member === 'cephfs' ? 'cephFS' : member);

/** The JSON members of a PersistentVolumeSource. */
export const PERSISTENT_VOLUME_SOURCES = PV_SOURCES.map(([m]) => m);

/** kube's `ValidatePersistentVolumeSpec` on a decoded `spec`. */
export function validatePersistentVolumeSpec(spec: unknown, pvName: string, path: string, opts: PersistentVolumeValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const inline = opts.inline === true;
  if (inline) {
    if (isSet(spec, 'claimRef')) errs.push(fieldErr.forbidden(child(path, 'claimRef'), 'may not be specified in the context of inline volumes'));
    if (mapSize(spec, 'capacity') !== 0) errs.push(fieldErr.forbidden(child(path, 'capacity'), 'may not be specified in the context of inline volumes'));
    if (!isSet(spec, 'csi')) errs.push(fieldErr.required(child(path, 'csi'), 'has to be specified in the context of inline volumes'));
  }
  if (stringsAt(spec, 'accessModes').length === 0) errs.push(fieldErr.required(child(path, 'accessModes'), ''));
  errs.push(...validateAccessModes(spec, child(path, 'accessModes'), opts.allowReadWriteOncePod));

  if (!inline) {
    const capPath = child(path, 'capacity');
    const capacity = objectAt(spec, 'capacity');
    const size = mapSize(spec, 'capacity');
    if (size === 0) errs.push(fieldErr.required(capPath, ''));
    if (!capacity || !Object.hasOwn(capacity, 'storage') || size > 1) errs.push(fieldErr.notSupported(capPath, goResourceList(spec, 'capacity'), ['storage']));
    for (const [r, q] of resourceListEntries(capacity)) errs.push(...validateBasicResource(q, key(capPath, r)), ...validatePositiveQuantityValue(q, key(capPath, r)));
  }

  const policy = stringAt(spec, 'persistentVolumeReclaimPolicy');
  if (policy) {
    const p = child(path, 'persistentVolumeReclaimPolicy');
    if (inline) {
      if (policy !== 'Retain') errs.push(fieldErr.forbidden(p, 'may only be Retain in the context of inline volumes'));
    } else if (!RECLAIM_POLICIES.includes(policy)) {
      errs.push(fieldErr.notSupported(p, policy, RECLAIM_POLICIES));
    }
  }

  let nodeAffinitySpecified = false;
  if (isSet(spec, 'nodeAffinity')) {
    if (inline) {
      errs.push(fieldErr.forbidden(child(path, 'nodeAffinity'), 'may not be specified in the context of inline volumes'));
    } else {
      const r = validateVolumeNodeAffinity(spec, child(path, 'nodeAffinity'));
      nodeAffinitySpecified = r.specified;
      errs.push(...r.errors);
    }
  }

  let volumes = 0;
  for (const [member, segment, check] of PV_SOURCES) {
    if (!isSet(spec, member)) continue;
    // kube counts a flexVolume without checking for another source first.
    if (volumes > 0 && member !== 'flexVolume') {
      errs.push(fieldErr.forbidden(child(path, forbiddenSegment(member)), 'may not specify more than 1 volume type'));
      continue;
    }
    volumes++;
    errs.push(...check(memberAt(spec, member), child(path, segment), pvName));
    if (member === 'local' && !nodeAffinitySpecified) errs.push(fieldErr.required(child(path, 'nodeAffinity'), 'Local volume requires node affinity'));
  }
  if (volumes === 0) errs.push(fieldErr.required(path, 'must specify a volume type'));

  const hostPath = objectAt(spec, 'hostPath');
  if (hostPath && cleanPath(stringAt(hostPath, 'path')) === '/' && policy === 'Recycle') {
    errs.push(fieldErr.forbidden(child(path, 'persistentVolumeReclaimPolicy'), "may not be 'recycle' for a hostPath mount of '/'"));
  }
  const className = stringAt(spec, 'storageClassName');
  if (className) {
    const p = child(path, 'storageClassName');
    if (inline) errs.push(fieldErr.forbidden(p, 'may not be specified in the context of inline volumes'));
    else errs.push(...isDNS1123Subdomain(className).map((m) => fieldErr.invalid(p, className, m)));
  }
  const mode = optionalStringAt(spec, 'volumeMode');
  if (mode !== undefined) {
    const p = child(path, 'volumeMode');
    if (inline) {
      if (mode !== 'Filesystem') errs.push(fieldErr.forbidden(p, 'may not specify volumeMode other than Filesystem in the context of inline volumes'));
    } else if (!VOLUME_MODES.includes(mode)) {
      errs.push(fieldErr.notSupported(p, mode, VOLUME_MODES));
    }
  }
  return errs;
}

/** Sources whose plugins take mount options (pkg/volume/validation `checkMountOption`). */
const MOUNT_OPTION_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cinder',
  'cephfs',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
];

/** The PV strategy's plugin check: the mount-options annotation only on sources that take options. */
export function validatePersistentVolumePlugin(obj: JsonObject): FieldError[] {
  const spec = objectAt(obj, 'spec');
  if (MOUNT_OPTION_SOURCES.some((s) => isSet(spec, s))) return [];
  const annotations = objectAt(objectAt(obj, 'metadata'), 'annotations');
  if (annotations && Object.hasOwn(annotations, MOUNT_OPTIONS_ANNOTATION)) {
    return [fieldErr.forbidden(`metadata.annotations.${MOUNT_OPTIONS_ANNOTATION}`, 'may not specify mount options for this volume type')];
  }
  return [];
}

/** kube's PV strategy Validate (metadata aside): ValidatePersistentVolume's spec part, then the plugin check. */
export function validatePersistentVolume(obj: JsonObject, opts: PersistentVolumeValidationOptions = {}): FieldError[] {
  const name = stringAt(objectAt(obj, 'metadata'), 'name');
  return [...validatePersistentVolumeSpec(objectAt(obj, 'spec'), name, 'spec', opts), ...validatePersistentVolumePlugin(obj)];
}

/** The PersistentVolumeSource members of a spec (what kube keeps immutable). */
function pvSource(spec: JsonObject | undefined, dropExpandSecret: boolean): JsonObject {
  const out: JsonObject = {};
  for (const m of PERSISTENT_VOLUME_SOURCES) if (spec && Object.hasOwn(spec, m)) out[m] = spec[m];
  if (dropExpandSecret && typeof out['csi'] === 'object' && out['csi'] !== null) {
    const csi = { ...(out['csi'] as JsonObject) };
    delete csi['controllerExpandSecretRef'];
    out['csi'] = csi;
  }
  return out;
}

/** Go's `%#v` of a `*core.VolumeNodeAffinity` bad value. */
function goNodeAffinity(spec: JsonObject | undefined): string | GoLiteral {
  if (!isSet(spec, 'nodeAffinity')) return 'null';
  const required = isSet(objectAt(spec, 'nodeAffinity'), 'required') ? '(*core.NodeSelector)(0xc000a1c040)' : '(*core.NodeSelector)(nil)';
  return new GoLiteral(`core.VolumeNodeAffinity{Required:${required}}`);
}

/**
 * kube's `ValidatePersistentVolumeUpdate` (metadata aside): the PV validated again, its source
 * immutable (a CSI `controllerExpandSecretRef` may be added), volumeMode immutable, and node
 * affinity immutable once set.
 */
export function validatePersistentVolumeUpdate(obj: JsonObject, old: JsonObject, opts: PersistentVolumeValidationOptions = persistentVolumeValidationOptions(old)): FieldError[] {
  const errs = validatePersistentVolumeSpec(objectAt(obj, 'spec'), stringAt(objectAt(obj, 'metadata'), 'name'), 'spec', opts);
  const spec = objectAt(obj, 'spec');
  const oldSpec = objectAt(old, 'spec');
  const addsExpandSecret = isSet(oldSpec, 'csi') && !isSet(objectAt(oldSpec, 'csi'), 'controllerExpandSecretRef') && isSet(objectAt(spec, 'csi'), 'controllerExpandSecretRef');
  const next = pvSource(spec, addsExpandSecret);
  const prev = pvSource(oldSpec, false);
  if (!semanticEqual(next, prev)) {
    errs.push(fieldErr.forbidden('spec.persistentvolumesource', `spec.persistentvolumesource is immutable after creation\n${describeChange(prev, next)}`));
  }
  const mode = optionalStringAt(spec, 'volumeMode');
  if (mode !== optionalStringAt(oldSpec, 'volumeMode')) errs.push(fieldErr.invalid('volumeMode', mode ?? 'null', 'field is immutable'));
  if (isSet(oldSpec, 'nodeAffinity') && !semanticEqual(memberAt(spec, 'nodeAffinity'), memberAt(oldSpec, 'nodeAffinity'))) {
    errs.push(fieldErr.invalid('nodeAffinity', goNodeAffinity(spec), 'field is immutable'));
  }
  return errs;
}

/** kube's `ValidatePersistentVolumeStatusUpdate` (metadata aside): a resourceVersion is required. */
export function validatePersistentVolumeStatusUpdate(obj: JsonObject, _old: JsonObject): FieldError[] {
  return stringAt(objectAt(obj, 'metadata'), 'resourceVersion') ? [] : [fieldErr.required('resourceVersion', '')];
}
