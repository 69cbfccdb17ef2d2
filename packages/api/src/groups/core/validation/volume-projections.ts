/**
 * The pod-only volume sources that project API data into files, as kube 1.24 validates them
 * (validateDownwardAPIVolumeSource, validateProjectedVolumeSource); secret and configMap volumes
 * and their items are volume-paths.ts's.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, num, objects, str } from './access.js';
import { FILE_MODE_ERROR, validateKeyToPath, validateLocalNonReservedPath } from './volume-paths.js';
import { VOLUME_DOWNWARD_API_FIELD_PATHS, validateContainerResourceFieldSelector, validateObjectFieldSelector } from './env.js';
import type { PodValidationOptions } from './pod-options.js';

/** A file mode outside 0..0777 (kube prints the mode in decimal). */
function validateMode(source: JsonObject, key: 'defaultMode' | 'mode', field: string): FieldError[] {
  if (!isSet(source[key])) return [];
  const mode = num(source[key]);
  return mode > 0o777 || mode < 0 ? [fieldErr.invalid(`${field}.${key}`, source[key], FILE_MODE_ERROR)] : [];
}

/** kube's `validateDownwardAPIVolumeFile` (errors of every item share the source's path). */
function validateDownwardAPIVolumeFile(file: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const path = str(file['path']);
  if (path.length === 0) errs.push(fieldErr.required(`${field}.path`));
  errs.push(...validateLocalNonReservedPath(path, `${field}.path`));
  const fieldRef = asObject(file['fieldRef']);
  const resourceFieldRef = asObject(file['resourceFieldRef']);
  if (fieldRef) {
    errs.push(...validateObjectFieldSelector(fieldRef, VOLUME_DOWNWARD_API_FIELD_PATHS, `${field}.fieldRef`));
    if (resourceFieldRef) errs.push(fieldErr.invalid(field, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (resourceFieldRef) {
    errs.push(...validateContainerResourceFieldSelector(resourceFieldRef, `${field}.resourceFieldRef`, true, opts));
  } else {
    errs.push(fieldErr.required(field, 'one of fieldRef and resourceFieldRef is required'));
  }
  errs.push(...validateMode(file, 'mode', field));
  return errs;
}

/** kube's `validateDownwardAPIVolumeSource`. */
export function validateDownwardAPIVolumeSource(source: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const errs = validateMode(source, 'defaultMode', field);
  for (const file of objects(source['items'])) errs.push(...validateDownwardAPIVolumeFile(file, field, opts));
  return errs;
}

const TEN_MINUTES = 10 * 60;
const TWO_TO_32 = 2 ** 32;

/** kube's `validateProjectedVolumeSource`: one kind per source, no path twice. */
export function validateProjectedVolumeSource(source: JsonObject, field: string, opts: PodValidationOptions): FieldError[] {
  const errs = validateMode(source, 'defaultMode', field);
  const paths = new Set<string>();
  const claim = (path: string, value: string): void => {
    if (path.length === 0) return;
    if (paths.has(path)) errs.push(fieldErr.invalid(field, value, 'conflicting duplicate paths'));
    else paths.add(path);
  };
  objects(source['sources']).forEach((src, i) => {
    const srcPath = `${field}.sources[${i}]`;
    let n = 0;
    for (const kind of ['secret', 'configMap'] as const) {
      const ref = asObject(src[kind]);
      if (!ref) continue;
      n++;
      const p = `${srcPath}.${kind}`;
      const name = str(ref['name']);
      if (name.length === 0) errs.push(fieldErr.required(`${p}.name`));
      objects(ref['items']).forEach((kp, j) => {
        errs.push(...validateKeyToPath(kp, `${p}.items[${j}]`));
        claim(str(kp['path']), name);
      });
    }
    const downward = asObject(src['downwardAPI']);
    if (downward) {
      n++;
      for (const file of objects(downward['items'])) {
        errs.push(...validateDownwardAPIVolumeFile(file, `${srcPath}.downwardAPI`, opts));
        claim(str(file['path']), str(file['path']));
      }
    }
    const token = asObject(src['serviceAccountToken']);
    if (token) {
      n++;
      const p = `${srcPath}.serviceAccountToken`;
      const expiration = num(token['expirationSeconds']);
      if (expiration < TEN_MINUTES) errs.push(fieldErr.invalid(`${p}.expirationSeconds`, token['expirationSeconds'] ?? 0, 'may not specify a duration less than 10 minutes'));
      if (expiration > TWO_TO_32) errs.push(fieldErr.invalid(`${p}.expirationSeconds`, token['expirationSeconds'], 'may not specify a duration larger than 2^32 seconds'));
      // kube names the projected volume's path here, not the token's.
      if (str(token['path']) === '') errs.push(fieldErr.required(`${field}.path`));
    }
    if (n > 1) errs.push(fieldErr.forbidden(srcPath, 'may not specify more than 1 volume type'));
  });
  return errs;
}
