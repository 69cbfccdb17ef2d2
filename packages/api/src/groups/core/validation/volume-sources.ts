/**
 * Storage-backend volume sources as kube 1.24 validates them (pkg/apis/core/validation
 * `validate*VolumeSource`, `validate*PersistentVolumeSource`). A pod volume and a
 * PersistentVolume use the same checks where kube shares them, and the `*PersistentVolumeSource`
 * variants where kube has its own (secret references with namespaces, iSCSI name lengths…).
 * The path-like sources (hostPath, local, secret, configMap, gitRepo) are in volume-paths.ts.
 */
import { Buffer } from 'node:buffer';
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../validation.js';
import { arrayAt, boolAt, child, isSet, key, numberAt, objectAt, optionalStringAt, stringAt, stringsAt } from './json-fields.js';
import { isAbsPath } from './volume-paths.js';

const LUN_RANGE = 'must be between 0 and 255, inclusive';
const PD_PARTITION = 'must be between 1 and 255, inclusive';

/** kube's `ValidateDNS1123Label`. */
function dns1123LabelErrors(value: string, path: string): FieldError[] {
  return isDNS1123Label(value).map((m) => fieldErr.invalid(path, value, m));
}

/** Go's `%#v` of a `[]string` member. */
function goStrings(o: unknown, member: string): GoLiteral {
  if (!isSet(o, member)) return new GoLiteral('[]string(nil)');
  return new GoLiteral(`[]string{${stringsAt(o, member).map((s) => JSON.stringify(s)).join(', ')}}`);
}

const required = (path: string, ...names: string[]): FieldError => fieldErr.required(child(path, ...names), '');

// ---------------------------------------------------------------------------------------------
// iSCSI and FC
// ---------------------------------------------------------------------------------------------

// Go RE2 patterns, unanchored where kube's are; `\s` is RE2's ASCII class.
const ISCSI_IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)$/;
const ISCSI_EUI = /^eui.[A-Za-z0-9]{16}$/;
const ISCSI_NAA = /^naa.[A-Za-z0-9]{32}$/;

/** Whether an iSCSI name with a known prefix has that prefix's format. */
function iscsiNameFormatOk(name: string): boolean {
  if (name.startsWith('iqn')) return ISCSI_IQN.test(name);
  if (name.startsWith('eui')) return ISCSI_EUI.test(name);
  if (name.startsWith('naa')) return ISCSI_NAA.test(name);
  return true;
}

const hasIscsiPrefix = (name: string): boolean => name.startsWith('iqn') || name.startsWith('eui') || name.startsWith('naa');

/** The checks pod and PV iSCSI sources share after `targetPortal`, with the prefix message each uses. */
function iscsiCommon(iscsi: unknown, path: string, prefixMessage: string, pv: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const iqn = stringAt(iscsi, 'iqn');
  if (!iqn) errs.push(required(path, 'iqn'));
  else if (!hasIscsiPrefix(iqn)) errs.push(fieldErr.invalid(child(path, 'iqn'), iqn, prefixMessage));
  else if (!iscsiNameFormatOk(iqn)) errs.push(fieldErr.invalid(child(path, 'iqn'), iqn, 'must be valid format'));
  const lun = numberAt(iscsi, 'lun') ?? 0;
  if (lun < 0 || lun > 255) errs.push(fieldErr.invalid(child(path, 'lun'), lun, LUN_RANGE));
  const chap = boolAt(iscsi, 'chapAuthDiscovery') || boolAt(iscsi, 'chapAuthSession');
  if (chap && !isSet(iscsi, 'secretRef')) errs.push(required(path, 'secretRef'));
  if (pv && isSet(iscsi, 'secretRef') && !stringAt(objectAt(iscsi, 'secretRef'), 'name')) errs.push(required(path, 'secretRef', 'name'));
  const initiator = optionalStringAt(iscsi, 'initiatorName');
  if (initiator !== undefined) {
    const p = child(path, 'initiatorname');
    if (!hasIscsiPrefix(initiator)) errs.push(fieldErr.invalid(p, initiator, prefixMessage));
    if (!iscsiNameFormatOk(initiator)) errs.push(fieldErr.invalid(p, initiator, 'must be valid format'));
  }
  return errs;
}

/** kube's `validateISCSIVolumeSource` (pod volumes). */
export function validateISCSIVolumeSource(iscsi: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(iscsi, 'targetPortal')) errs.push(required(path, 'targetPortal'));
  return [...errs, ...iscsiCommon(iscsi, path, 'must be valid format starting with iqn, eui, or naa', false)];
}

/** kube's `validateISCSIPersistentVolumeSource`; `pvName` bounds `<pv name>:<targetPortal>` when an initiator is named. */
export function validateISCSIPersistentVolumeSource(iscsi: unknown, pvName: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const portal = stringAt(iscsi, 'targetPortal');
  if (!portal) errs.push(required(path, 'targetPortal'));
  if (optionalStringAt(iscsi, 'initiatorName') !== undefined && Buffer.byteLength(`${pvName}:${portal}`) > 64) {
    errs.push(
      fieldErr.invalid(child(path, 'targetportal'), portal, 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'),
    );
  }
  return [...errs, ...iscsiCommon(iscsi, path, 'must be valid format', true)];
}

/** kube's `validateFCVolumeSource`. */
export function validateFCVolumeSource(fc: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const wwns = arrayAt(fc, 'targetWWNs').length;
  const wwids = arrayAt(fc, 'wwids').length;
  if (wwns < 1 && wwids < 1) errs.push(fieldErr.required(child(path, 'targetWWNs'), 'must specify either targetWWNs or wwids, but not both'));
  if (wwns !== 0 && wwids !== 0) errs.push(fieldErr.invalid(child(path, 'targetWWNs'), goStrings(fc, 'targetWWNs'), 'targetWWNs and wwids can not be specified simultaneously'));
  if (wwns !== 0) {
    const lun = numberAt(fc, 'lun');
    if (lun === undefined) errs.push(fieldErr.required(child(path, 'lun'), 'lun is required if targetWWNs is specified'));
    else if (lun < 0 || lun > 255) errs.push(fieldErr.invalid(child(path, 'lun'), lun, LUN_RANGE));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Cloud disks
// ---------------------------------------------------------------------------------------------

function partitionErrors(source: unknown, path: string): FieldError[] {
  const partition = numberAt(source, 'partition') ?? 0;
  return partition < 0 || partition > 255 ? [fieldErr.invalid(child(path, 'partition'), partition, PD_PARTITION)] : [];
}

/** kube's `validateGCEPersistentDiskVolumeSource`. */
export function validateGCEPersistentDiskVolumeSource(pd: unknown, path: string): FieldError[] {
  return [...(stringAt(pd, 'pdName') ? [] : [required(path, 'pdName')]), ...partitionErrors(pd, path)];
}

/** kube's `validateAWSElasticBlockStoreVolumeSource`. */
export function validateAWSElasticBlockStoreVolumeSource(ebs: unknown, path: string): FieldError[] {
  return [...(stringAt(ebs, 'volumeID') ? [] : [required(path, 'volumeID')]), ...partitionErrors(ebs, path)];
}

const AZURE_CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'];
const AZURE_DISK_KINDS = ['Dedicated', 'Managed', 'Shared'];

/** kube's `validateAzureDisk`. */
export function validateAzureDisk(azure: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const uri = stringAt(azure, 'diskURI');
  if (!stringAt(azure, 'diskName')) errs.push(required(path, 'diskName'));
  if (!uri) errs.push(required(path, 'diskURI'));
  const caching = optionalStringAt(azure, 'cachingMode');
  if (caching !== undefined && !AZURE_CACHING_MODES.includes(caching)) errs.push(fieldErr.notSupported(child(path, 'cachingMode'), caching, AZURE_CACHING_MODES));
  const kind = optionalStringAt(azure, 'kind');
  if (kind !== undefined && !AZURE_DISK_KINDS.includes(kind)) errs.push(fieldErr.notSupported(child(path, 'kind'), kind, AZURE_DISK_KINDS));
  if (kind === 'Managed' && !uri.startsWith('/subscriptions/')) {
    errs.push(fieldErr.notSupported(child(path, 'diskURI'), uri, ['/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}']));
  }
  if (kind !== undefined && kind !== 'Managed' && !uri.startsWith('https://')) {
    errs.push(fieldErr.notSupported(child(path, 'diskURI'), uri, ['https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd']));
  }
  return errs;
}

/** kube's `validateAzureFile` (pod volumes). */
export function validateAzureFile(azure: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(azure, 'secretName')) errs.push(required(path, 'secretName'));
  if (!stringAt(azure, 'shareName')) errs.push(required(path, 'shareName'));
  return errs;
}

/** kube's `validateAzureFilePV`. */
export function validateAzureFilePV(azure: unknown, path: string): FieldError[] {
  const errs = validateAzureFile(azure, path);
  if (optionalStringAt(azure, 'secretNamespace') === '') errs.push(required(path, 'secretNamespace'));
  return errs;
}

/** kube's `validateVsphereVolumeSource`. */
export function validateVsphereVolumeSource(vs: unknown, path: string): FieldError[] {
  return stringAt(vs, 'volumePath') ? [] : [required(path, 'volumePath')];
}

/** kube's `validatePhotonPersistentDiskVolumeSource`. */
export function validatePhotonPersistentDiskVolumeSource(pd: unknown, path: string): FieldError[] {
  return stringAt(pd, 'pdID') ? [] : [required(path, 'pdID')];
}

/** kube's `validatePortworxVolumeSource`. */
export function validatePortworxVolumeSource(pwx: unknown, path: string): FieldError[] {
  return stringAt(pwx, 'volumeID') ? [] : [required(path, 'volumeID')];
}

/** kube's `validateScaleIOVolumeSource` (pod and PV sources check the same fields). */
export function validateScaleIOVolumeSource(sio: unknown, path: string): FieldError[] {
  return ['gateway', 'system', 'volumeName'].filter((f) => !stringAt(sio, f)).map((f) => required(path, f));
}

/** kube's `validateScaleIOPersistentVolumeSource`. */
export const validateScaleIOPersistentVolumeSource = validateScaleIOVolumeSource;

// ---------------------------------------------------------------------------------------------
// Network file systems and Ceph
// ---------------------------------------------------------------------------------------------

/** kube's `validateNFSVolumeSource`. */
export function validateNFSVolumeSource(nfs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const p = stringAt(nfs, 'path');
  if (!stringAt(nfs, 'server')) errs.push(required(path, 'server'));
  if (!p) errs.push(required(path, 'path'));
  if (!isAbsPath(p)) errs.push(fieldErr.invalid(child(path, 'path'), p, 'must be an absolute path'));
  return errs;
}

/** Go's `net.SplitHostPort` succeeding. */
export function isHostPort(hostport: string): boolean {
  const i = hostport.lastIndexOf(':');
  if (i < 0) return false;
  let j = 0;
  let k = 0;
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']');
    if (end < 0 || end + 1 === hostport.length || end + 1 !== i) return false;
    j = 1;
    k = end + 1;
  } else if (hostport.slice(0, i).includes(':')) {
    return false;
  }
  return !hostport.slice(j).includes('[') && !hostport.slice(k).includes(']');
}

/** kube's `validateQuobyteVolumeSource`. */
export function validateQuobyteVolumeSource(quobyte: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const registry = stringAt(quobyte, 'registry');
  const message = 'must be a host:port pair or multiple pairs separated by commas';
  if (!registry) errs.push(fieldErr.required(child(path, 'registry'), message));
  else if (Buffer.byteLength(stringAt(quobyte, 'tenant')) >= 65) errs.push(fieldErr.required(child(path, 'tenant'), 'must be a UUID and may not exceed a length of 64 characters'));
  else for (const pair of registry.split(',')) if (!isHostPort(pair)) errs.push(fieldErr.invalid(child(path, 'registry'), registry, message));
  if (!stringAt(quobyte, 'volume')) errs.push(required(path, 'volume'));
  return errs;
}

/** kube's `validateGlusterfsVolumeSource`. */
export function validateGlusterfsVolumeSource(glusterfs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(glusterfs, 'endpoints')) errs.push(required(path, 'endpoints'));
  if (!stringAt(glusterfs, 'path')) errs.push(required(path, 'path'));
  return errs;
}

/** kube's `validateGlusterfsPersistentVolumeSource`. */
export function validateGlusterfsPersistentVolumeSource(glusterfs: unknown, path: string): FieldError[] {
  const errs = validateGlusterfsVolumeSource(glusterfs, path);
  const ns = optionalStringAt(glusterfs, 'endpointsNamespace');
  const p = child(path, 'endpointsNamespace');
  if (ns === '') errs.push(fieldErr.invalid(p, ns, 'if the endpointnamespace is set, it must be a valid namespace name'));
  else if (ns !== undefined) errs.push(...dns1123LabelErrors(ns, p));
  return errs;
}

/** kube's `validateFlockerVolumeSource`. */
export function validateFlockerVolumeSource(flocker: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringAt(flocker, 'datasetName');
  const uuid = stringAt(flocker, 'datasetUUID');
  if (!name && !uuid) errs.push(fieldErr.required(path, 'one of datasetName and datasetUUID is required'));
  if (name && uuid) errs.push(fieldErr.invalid(path, 'resource', 'datasetName and datasetUUID can not be specified simultaneously'));
  if (name.includes('/')) errs.push(fieldErr.invalid(child(path, 'datasetName'), name, "must not contain '/'"));
  return errs;
}

/** kube's `validateRBDVolumeSource` (pod and PV sources check the same fields). */
export function validateRBDVolumeSource(rbd: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (arrayAt(rbd, 'monitors').length === 0) errs.push(required(path, 'monitors'));
  if (!stringAt(rbd, 'image')) errs.push(required(path, 'image'));
  return errs;
}

/** kube's `validateRBDPersistentVolumeSource`. */
export const validateRBDPersistentVolumeSource = validateRBDVolumeSource;

/** kube's `validateCephFSVolumeSource` (pod and PV sources check the same field). */
export function validateCephFSVolumeSource(cephfs: unknown, path: string): FieldError[] {
  return arrayAt(cephfs, 'monitors').length === 0 ? [required(path, 'monitors')] : [];
}

/** kube's `validateCephFSPersistentVolumeSource`. */
export const validateCephFSPersistentVolumeSource = validateCephFSVolumeSource;

/** kube's `validateCinderVolumeSource` (pod volumes). */
export function validateCinderVolumeSource(cinder: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(cinder, 'volumeID')) errs.push(required(path, 'volumeID'));
  if (isSet(cinder, 'secretRef') && !stringAt(objectAt(cinder, 'secretRef'), 'name')) errs.push(required(path, 'secretRef', 'name'));
  return errs;
}

/** kube's `validateCinderPersistentVolumeSource`: the secret reference also names its namespace. */
export function validateCinderPersistentVolumeSource(cinder: unknown, path: string): FieldError[] {
  const errs = validateCinderVolumeSource(cinder, path);
  if (isSet(cinder, 'secretRef') && !stringAt(objectAt(cinder, 'secretRef'), 'namespace')) errs.push(required(path, 'secretRef', 'namespace'));
  return errs;
}

/** kube's `validateFlexVolumeSource` / `validateFlexPersistentVolumeSource` (the same checks). */
export function validateFlexVolumeSource(flex: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(flex, 'driver')) errs.push(required(path, 'driver'));
  const options = objectAt(flex, 'options');
  for (const k of Object.keys(options ?? {}).sort()) {
    const slash = k.indexOf('/');
    const namespace = `.${(slash >= 0 ? k.slice(0, slash) : k).toLowerCase()}`;
    if (namespace.endsWith('.kubernetes.io') || namespace.endsWith('.k8s.io')) {
      errs.push(fieldErr.invalid(key(child(path, 'options'), k), k, 'kubernetes.io and k8s.io namespaces are reserved'));
    }
  }
  return errs;
}

/** kube's `validateFlexPersistentVolumeSource`. */
export const validateFlexPersistentVolumeSource = validateFlexVolumeSource;

/** kube's `validateStorageOSVolumeSource` (pod volumes). */
export function validateStorageOSVolumeSource(storageos: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringAt(storageos, 'volumeName');
  const ns = stringAt(storageos, 'volumeNamespace');
  if (!name) errs.push(required(path, 'volumeName'));
  else errs.push(...dns1123LabelErrors(name, child(path, 'volumeName')));
  if (ns) errs.push(...dns1123LabelErrors(ns, child(path, 'volumeNamespace')));
  if (isSet(storageos, 'secretRef') && !stringAt(objectAt(storageos, 'secretRef'), 'name')) errs.push(required(path, 'secretRef', 'name'));
  return errs;
}

/** kube's `validateStorageOSPersistentVolumeSource`: the secret reference also names its namespace. */
export function validateStorageOSPersistentVolumeSource(storageos: unknown, path: string): FieldError[] {
  const errs = validateStorageOSVolumeSource(storageos, path);
  if (isSet(storageos, 'secretRef') && !stringAt(objectAt(storageos, 'secretRef'), 'namespace')) errs.push(required(path, 'secretRef', 'namespace'));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// CSI
// ---------------------------------------------------------------------------------------------

/** kube's `ValidateCSIDriverName`. */
export function validateCSIDriverName(driver: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!driver) errs.push(fieldErr.required(path, ''));
  if (Buffer.byteLength(driver) > 63) errs.push(fieldErr.tooLong(path, driver, 63));
  for (const m of isDNS1123Subdomain(driver.toLowerCase())) errs.push(fieldErr.invalid(path, driver, m));
  return errs;
}

/** kube's `validateCSIPersistentVolumeSource`. */
export function validateCSIPersistentVolumeSource(csi: unknown, path: string): FieldError[] {
  const errs = validateCSIDriverName(stringAt(csi, 'driver'), child(path, 'driver'));
  if (!stringAt(csi, 'volumeHandle')) errs.push(required(path, 'volumeHandle'));
  for (const ref of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef']) {
    if (!isSet(csi, ref)) continue;
    const secret = objectAt(csi, ref);
    const name = stringAt(secret, 'name');
    const ns = stringAt(secret, 'namespace');
    // kube reports the reference's name and namespace at `<path>.name` / `<path>.namespace`.
    if (!name) errs.push(required(path, ref, 'name'));
    else errs.push(...dns1123LabelErrors(name, child(path, 'name')));
    if (!ns) errs.push(required(path, ref, 'namespace'));
    else errs.push(...dns1123LabelErrors(ns, child(path, 'namespace')));
  }
  return errs;
}

/** kube's `validateCSIVolumeSource` (inline CSI volumes of pods). */
export function validateCSIVolumeSource(csi: unknown, path: string): FieldError[] {
  const errs = validateCSIDriverName(stringAt(csi, 'driver'), child(path, 'driver'));
  if (isSet(csi, 'nodePublishSecretRef')) {
    const name = stringAt(objectAt(csi, 'nodePublishSecretRef'), 'name');
    if (!name) errs.push(required(path, 'nodePublishSecretRef', 'name'));
    else errs.push(...isDNS1123Subdomain(name).map((m) => fieldErr.invalid(child(path, 'name'), name, m)));
  }
  return errs;
}
