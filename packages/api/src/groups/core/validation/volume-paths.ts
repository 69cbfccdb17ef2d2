/**
 * Path rules of volume sources, and the sources that are mostly paths (hostPath, local, the
 * key-to-path items of secret and configMap volumes, gitRepo), as kube 1.24's
 * pkg/apis/core/validation has them. Shared by Pods and PersistentVolumes.
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { arrayAt, child, index, numberAt, optionalStringAt, stringAt } from './json-fields.js';

export const FILE_MODE_ERROR = 'must be a number between 0 and 0777 (octal), both inclusive';

/** kube's supported `hostPath.type` values, sorted as kube lists them. */
export const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];

/** Go's `path.IsAbs`. */
export const isAbsPath = (p: string): boolean => p.startsWith('/');

/** Go's `path.Clean`. */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** kube's `validatePathNoBacksteps`: no `..` element. */
export function validatePathNoBacksteps(targetPath: string, path: string): FieldError[] {
  return targetPath.split('/').includes('..') ? [fieldErr.invalid(path, targetPath, "must not contain '..'")] : [];
}

/** kube's `validateLocalDescendingPath`: relative, without `..` elements. */
export function validateLocalDescendingPath(targetPath: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (isAbsPath(targetPath)) errs.push(fieldErr.invalid(path, targetPath, 'must be a relative path'));
  return [...errs, ...validatePathNoBacksteps(targetPath, path)];
}

/** kube's `validateLocalNonReservedPath`: a descending path that does not start with `..`. */
export function validateLocalNonReservedPath(targetPath: string, path: string): FieldError[] {
  const errs = validateLocalDescendingPath(targetPath, path);
  if (targetPath.startsWith('..') && !targetPath.startsWith('../')) errs.push(fieldErr.invalid(path, targetPath, "must not start with '..'"));
  return errs;
}

/** kube's `validateHostPathType` (`type` is a `*HostPathType`: absent is fine). */
export function validateHostPathType(type: string | undefined, path: string): FieldError[] {
  return type !== undefined && !HOST_PATH_TYPES.includes(type) ? [fieldErr.notSupported(path, type, HOST_PATH_TYPES)] : [];
}

/** kube's `validateHostPathVolumeSource`. */
export function validateHostPathVolumeSource(hostPath: unknown, path: string): FieldError[] {
  const p = stringAt(hostPath, 'path');
  if (!p) return [fieldErr.required(child(path, 'path'), '')];
  return [...validatePathNoBacksteps(p, child(path, 'path')), ...validateHostPathType(optionalStringAt(hostPath, 'type'), child(path, 'type'))];
}

/** kube's `validateLocalVolumeSource`. */
export function validateLocalVolumeSource(local: unknown, path: string): FieldError[] {
  const p = stringAt(local, 'path');
  if (!p) return [fieldErr.required(child(path, 'path'), '')];
  return validatePathNoBacksteps(p, child(path, 'path'));
}

/** kube's `validateGitRepoVolumeSource`. */
export function validateGitRepoVolumeSource(gitRepo: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(gitRepo, 'repository')) errs.push(fieldErr.required(child(path, 'repository'), ''));
  return [...errs, ...validateLocalDescendingPath(stringAt(gitRepo, 'directory'), child(path, 'directory'))];
}

/** A file mode outside 0..0777 (`*int32`). */
function modeErrors(o: unknown, member: string, path: string): FieldError[] {
  const mode = numberAt(o, member);
  return mode !== undefined && (mode > 0o777 || mode < 0) ? [fieldErr.invalid(child(path, member), mode, FILE_MODE_ERROR)] : [];
}

/** kube's `validateKeyToPath`. */
export function validateKeyToPath(item: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const p = stringAt(item, 'path');
  if (!stringAt(item, 'key')) errs.push(fieldErr.required(child(path, 'key'), ''));
  if (!p) errs.push(fieldErr.required(child(path, 'path'), ''));
  errs.push(...validateLocalNonReservedPath(p, child(path, 'path')));
  return [...errs, ...modeErrors(item, 'mode', path)];
}

function keyToPathItems(source: unknown, path: string): FieldError[] {
  return arrayAt(source, 'items').flatMap((item, i) => validateKeyToPath(item, index(child(path, 'items'), i)));
}

/** kube's `validateSecretVolumeSource`. */
export function validateSecretVolumeSource(secret: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(secret, 'secretName')) errs.push(fieldErr.required(child(path, 'secretName'), ''));
  return [...errs, ...modeErrors(secret, 'defaultMode', path), ...keyToPathItems(secret, path)];
}

/** kube's `validateConfigMapVolumeSource`. */
export function validateConfigMapVolumeSource(configMap: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!stringAt(configMap, 'name')) errs.push(fieldErr.required(child(path, 'name'), ''));
  return [...errs, ...modeErrors(configMap, 'defaultMode', path), ...keyToPathItems(configMap, path)];
}

/** kube's `validatePersistentClaimVolumeSource`. */
export function validatePersistentClaimVolumeSource(claim: unknown, path: string): FieldError[] {
  return stringAt(claim, 'claimName') ? [] : [fieldErr.required(child(path, 'claimName'), '')];
}
