/**
 * PersistentVolume and PersistentVolumeClaim defaults as kube 1.24 has them (pkg/apis/core/v1
 * `SetDefaults_PersistentVolume`, `SetDefaults_PersistentVolumeClaim(Spec)` and the defaults of
 * the volume sources a PV may hold). ResourceLists (`spec.capacity`, `spec.resources.*`,
 * `status.capacity`, `status.allocatedResources`) get kube's stored form from
 * `canonicalResourceList` (quantity.ts).
 *
 * kube also defaults what it reads back from etcd, so a PV whose status the create strategy
 * cleared reads with `status.phase: Pending`.
 */
import type { JsonObject } from '../../../json.js';
import { defaultPointer, defaultString, ensureObject, objectMember } from './json.js';

/** kube's `SetDefaults_HostPathVolumeSource`: an unset type is "" (no check). */
export function setDefaultsHostPathVolumeSource(source: JsonObject): void {
  defaultPointer(source, 'type', '');
}

/** kube's `SetDefaults_RBD(Persistent)VolumeSource`. */
export function setDefaultsRBDVolumeSource(source: JsonObject): void {
  defaultString(source, 'pool', 'rbd');
  defaultString(source, 'user', 'admin');
  defaultString(source, 'keyring', '/etc/ceph/keyring');
}

/** kube's `SetDefaults_ISCSI(Persistent)VolumeSource`. */
export function setDefaultsISCSIVolumeSource(source: JsonObject): void {
  defaultString(source, 'iscsiInterface', 'default');
}

/** kube's `SetDefaults_AzureDiskVolumeSource`. */
export function setDefaultsAzureDiskVolumeSource(source: JsonObject): void {
  defaultPointer(source, 'cachingMode', 'ReadWrite');
  defaultPointer(source, 'kind', 'Shared');
  defaultPointer(source, 'fsType', 'ext4');
  defaultPointer(source, 'readOnly', false);
}

/** kube's `SetDefaults_ScaleIO(Persistent)VolumeSource`. */
export function setDefaultsScaleIOVolumeSource(source: JsonObject): void {
  defaultString(source, 'storageMode', 'ThinProvisioned');
  defaultString(source, 'fsType', 'xfs');
}

const PV_SOURCE_DEFAULTS: Array<[string, (source: JsonObject) => void]> = [
  ['hostPath', setDefaultsHostPathVolumeSource],
  ['rbd', setDefaultsRBDVolumeSource],
  ['iscsi', setDefaultsISCSIVolumeSource],
  ['azureDisk', setDefaultsAzureDiskVolumeSource],
  ['scaleIO', setDefaultsScaleIOVolumeSource],
];

/** kube's `SetObjectDefaults_PersistentVolume`: phase Pending, reclaim policy Retain, volumeMode Filesystem, source defaults. */
export function setDefaultsPersistentVolume(obj: JsonObject): void {
  defaultString(ensureObject(obj, 'status'), 'phase', 'Pending');
  const spec = ensureObject(obj, 'spec');
  defaultString(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  defaultPointer(spec, 'volumeMode', 'Filesystem');
  for (const [member, setDefaults] of PV_SOURCE_DEFAULTS) {
    const source = objectMember(spec, member);
    if (source) setDefaults(source);
  }
}

/** kube's `SetDefaults_PersistentVolumeClaimSpec`: volumeMode Filesystem. */
export function setDefaultsPersistentVolumeClaimSpec(spec: JsonObject): void {
  defaultPointer(spec, 'volumeMode', 'Filesystem');
}

/** kube's `SetObjectDefaults_PersistentVolumeClaim`: phase Pending, volumeMode Filesystem. */
export function setDefaultsPersistentVolumeClaim(obj: JsonObject): void {
  defaultString(ensureObject(obj, 'status'), 'phase', 'Pending');
  setDefaultsPersistentVolumeClaimSpec(ensureObject(obj, 'spec'));
}
