/**
 * kube 1.24's storage admission plugins (plugin/pkg/admission/storage):
 * - DefaultStorageClass (mutating, CREATE of a PVC with no class): the class annotated
 *   storageclass.kubernetes.io/is-default-class=true (or the beta annotation); none, nothing; more
 *   than one, 403 wrapping kube 1.24's internal error "<n> default StorageClasses were found"
 *   (the newest-wins rule came in 1.26).
 * - PersistentVolumeClaimResize (validating, UPDATE of a PVC): a larger storage request needs a
 *   bound claim whose (unchanged) StorageClass has allowVolumeExpansion: true.
 * - StorageObjectInUseProtection (mutating, CREATE): the kubernetes.io/pvc-protection finalizer on
 *   new PVCs, kubernetes.io/pv-protection on new PVs.
 */
import { decodeQuantity, forbidden, groupResourceOf, internalError, isPlainObject, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

/** The StorageClasses as the watch cache has them (kube's informer lister). */
export type StorageClassLister = () => Promise<StoredObject[]>;

const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
const DEFAULT_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

const isCore = (a: AdmissionAttributes, plural: string): boolean => a.resource.group === '' && a.resource.plural === plural && a.subresource === '';
const specOf = (o: StoredObject): Record<string, unknown> => (isPlainObject(o['spec']) ? o['spec'] : {});
const refuse = (a: AdmissionAttributes, why: string) => forbidden(groupResourceOf(a.resource), a.name, why);

/** kube's PersistentVolumeClaimHasClass: the beta annotation or spec.storageClassName (even ''). */
function hasClass(pvc: StoredObject): boolean {
  return pvc.metadata.annotations?.[BETA_CLASS_ANNOTATION] !== undefined || typeof specOf(pvc)['storageClassName'] === 'string';
}

/** kube's GetPersistentVolumeClaimClass. */
function classOf(pvc: StoredObject): string {
  const beta = pvc.metadata.annotations?.[BETA_CLASS_ANNOTATION];
  if (beta !== undefined) return beta;
  const name = specOf(pvc)['storageClassName'];
  return typeof name === 'string' ? name : '';
}

export function createDefaultStorageClass(list: StorageClassLister): AdmissionPlugin {
  return {
    name: 'DefaultStorageClass',
    handles: (op) => op === 'CREATE',
    async admit(a) {
      if (!isCore(a, 'persistentvolumeclaims') || !a.object || hasClass(a.object)) return;
      const defaults = (await list()).filter((c) => DEFAULT_ANNOTATIONS.some((k) => c.metadata.annotations?.[k] === 'true'));
      if (defaults.length === 0) return;
      if (defaults.length > 1) throw refuse(a, internalError(new Error(`${defaults.length} default StorageClasses were found`)).message);
      const spec = isPlainObject(a.object['spec']) ? a.object['spec'] : (a.object['spec'] = {});
      spec['storageClassName'] = defaults[0]!.metadata.name;
    },
  };
}

function storageRequest(pvc: StoredObject): ReturnType<typeof decodeQuantity> | undefined {
  const resources = specOf(pvc)['resources'];
  const requests = isPlainObject(resources) ? resources['requests'] : undefined;
  const v = isPlainObject(requests) ? requests['storage'] : undefined;
  if (v === undefined) return undefined;
  try {
    return decodeQuantity(v);
  } catch {
    return undefined;
  }
}

export function createPersistentVolumeClaimResize(list: StorageClassLister): AdmissionPlugin {
  return {
    name: 'PersistentVolumeClaimResize',
    handles: (op) => op === 'UPDATE',
    async validate(a) {
      if (!isCore(a, 'persistentvolumeclaims') || !a.object || !a.oldObject) return;
      const next = storageRequest(a.object) ?? decodeQuantity('0');
      const old = storageRequest(a.oldObject) ?? decodeQuantity('0');
      if (next.cmp(old) <= 0) return;
      const phase = isPlainObject(a.oldObject['status']) ? a.oldObject['status']['phase'] : undefined;
      if (phase !== 'Bound') throw refuse(a, 'Only bound persistent volume claims can be expanded');
      const cls = classOf(a.object);
      let allowed = false;
      if (cls !== '' && cls === classOf(a.oldObject)) {
        const sc = (await list()).find((c) => c.metadata.name === cls);
        allowed = sc?.['allowVolumeExpansion'] === true;
      }
      if (!allowed) throw refuse(a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    },
  };
}

export function createStorageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: 'StorageObjectInUseProtection',
    handles: (op) => op === 'CREATE',
    admit(a) {
      const finalizer = isCore(a, 'persistentvolumes') ? PV_PROTECTION_FINALIZER : isCore(a, 'persistentvolumeclaims') ? PVC_PROTECTION_FINALIZER : '';
      if (!finalizer || !a.object) return;
      const list = a.object.metadata.finalizers ?? [];
      if (!list.includes(finalizer)) a.object.metadata.finalizers = [...list, finalizer];
    },
  };
}
