/**
 * What kube's PV and PVC printers show (pkg/apis/core/helper): access modes as kubectl's short
 * names, the storage class (the beta annotation wins over the field), and a ResourceList entry as
 * Quantity.String() prints it (a missing entry is the zero Quantity, "0").
 */
import { fieldAt } from '../../../tables.js';
import { decodeQuantity } from '../../../quantity.js';
import { BETA_STORAGE_CLASS_ANNOTATION } from '../validation/persistentvolumeclaim.js';

const SHORT_MODES: Array<[mode: string, short: string]> = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

/** kube's `helper.GetAccessModesAsString`: each mode once, in kube's fixed order. */
export function accessModesAsString(modes: unknown): string {
  const set = new Set(Array.isArray(modes) ? modes : []);
  return SHORT_MODES.filter(([m]) => set.has(m))
    .map(([, s]) => s)
    .join(',');
}

/** kube's `GetPersistentVolume(Claim)Class`: the beta annotation if present, else `spec.storageClassName`. */
export function storageClassOf(obj: unknown): string {
  const annotations = fieldAt(obj, 'metadata', 'annotations');
  const beta = fieldAt(annotations, BETA_STORAGE_CLASS_ANNOTATION);
  if (annotations && typeof annotations === 'object' && Object.hasOwn(annotations, BETA_STORAGE_CLASS_ANNOTATION)) return typeof beta === 'string' ? beta : '';
  const name = fieldAt(obj, 'spec', 'storageClassName');
  return typeof name === 'string' ? name : '';
}

/** `list[name]` as Quantity.String() prints it; "0" when absent (Go's zero Quantity). */
export function quantityCell(list: unknown, name: string): string {
  const v = fieldAt(list, name);
  if (v === undefined) return '0';
  try {
    return decodeQuantity(v).toString();
  } catch {
    return String(v);
  }
}
