/**
 * Volume mounts and devices as kube 1.24 validates them (ValidateVolumeMounts,
 * ValidateVolumeDevices, validateMountPropagation).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, objects, str } from './access.js';
import { validateLocalDescendingPath, validatePathNoBacksteps } from './volume-paths.js';

/** The pod's valid volumes by name (kube's `map[string]core.VolumeSource`). */
export type VolumeMap = Map<string, JsonObject>;

/** name → path of a container's mounts or devices (kube's GetVolumeMountMap/GetVolumeDeviceMap). */
export function pathsByName(items: unknown, pathKey: 'mountPath' | 'devicePath'): Map<string, string> {
  const m = new Map<string, string>();
  for (const it of objects(items)) m.set(str(it['name']), str(it[pathKey]));
  return m;
}

const MOUNT_PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'];

/** kube's `validateMountPropagation`; Bidirectional needs a privileged container. */
function validateMountPropagation(mode: string, container: JsonObject | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!MOUNT_PROPAGATIONS.includes(mode)) errs.push(fieldErr.notSupported(field, mode, MOUNT_PROPAGATIONS));
  if (!container) return errs;
  const privileged = asObject(container['securityContext'])?.['privileged'] === true;
  if (mode === 'Bidirectional' && !privileged) errs.push(fieldErr.forbidden(field, 'Bidirectional mount propagation is available only to privileged containers'));
  return errs;
}

/**
 * kube's `ValidateVolumeMounts`. subPath, subPathExpr and mountPropagation errors carry the list's
 * path without the index, as kube's do.
 */
export function validateVolumeMounts(mounts: unknown, devices: Map<string, string>, volumes: VolumeMap, container: JsonObject | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  const devicePaths = new Set(devices.values());
  objects(mounts).forEach((mnt, i) => {
    const p = `${field}[${i}]`;
    const name = str(mnt['name']);
    const mountPath = str(mnt['mountPath']);
    if (name.length === 0) errs.push(fieldErr.required(`${p}.name`));
    if (!volumes.has(name)) errs.push(fieldErr.notFound(`${p}.name`, name));
    if (mountPath.length === 0) errs.push(fieldErr.required(`${p}.mountPath`));
    if (mountPoints.has(mountPath)) errs.push(fieldErr.invalid(`${p}.mountPath`, mountPath, 'must be unique'));
    mountPoints.add(mountPath);
    if (devices.has(name)) errs.push(fieldErr.invalid(`${p}.name`, name, 'must not already exist in volumeDevices'));
    if (devicePaths.has(mountPath)) errs.push(fieldErr.invalid(`${p}.mountPath`, mountPath, 'must not already exist as a path in volumeDevices'));
    const subPath = str(mnt['subPath']);
    if (subPath.length > 0) errs.push(...validateLocalDescendingPath(subPath, `${field}.subPath`));
    const subPathExpr = str(mnt['subPathExpr']);
    if (subPathExpr.length > 0) {
      if (subPath.length > 0) errs.push(fieldErr.invalid(`${p}.subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      errs.push(...validateLocalDescendingPath(subPathExpr, `${field}.subPathExpr`));
    }
    if (isSet(mnt['mountPropagation'])) errs.push(...validateMountPropagation(str(mnt['mountPropagation']), container, `${field}.mountPropagation`));
  });
  return errs;
}

/** kube's `ValidateVolumeDevices`: block devices only from PVC or ephemeral volumes. */
export function validateVolumeDevices(devices: unknown, mounts: Map<string, string>, volumes: VolumeMap, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  const names = new Set<string>();
  const mountPaths = new Set(mounts.values());
  objects(devices).forEach((dev, i) => {
    const p = `${field}[${i}]`;
    const name = str(dev['name']);
    const devicePath = str(dev['devicePath']);
    const source = volumes.get(name);
    const isPVC = source !== undefined && (isSet(source['persistentVolumeClaim']) || isSet(source['ephemeral']));
    if (name.length === 0) errs.push(fieldErr.required(`${p}.name`));
    if (names.has(name)) errs.push(fieldErr.invalid(`${p}.name`, name, 'must be unique'));
    if (source && !isPVC) errs.push(fieldErr.invalid(`${p}.name`, name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'));
    if (!source) errs.push(fieldErr.notFound(`${p}.name`, name));
    if (devicePath.length === 0) errs.push(fieldErr.required(`${p}.devicePath`));
    if (paths.has(devicePath)) errs.push(fieldErr.invalid(`${p}.devicePath`, devicePath, 'must be unique'));
    if (devicePath.length > 0 && validatePathNoBacksteps(devicePath, p).length > 0) {
      errs.push(fieldErr.invalid(`${p}.devicePath`, devicePath, "can not contain backsteps ('..')"));
    } else paths.add(devicePath);
    if (mounts.has(name)) errs.push(fieldErr.invalid(`${p}.name`, name, 'must not already exist in volumeMounts'));
    if (mountPaths.has(devicePath)) errs.push(fieldErr.invalid(`${p}.devicePath`, devicePath, 'must not already exist as a path in volumeMounts'));
    if (name.length > 0) names.add(name);
  });
  return errs;
}
