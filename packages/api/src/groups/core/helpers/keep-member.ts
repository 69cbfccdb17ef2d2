/** Status/spec isolation as kube's strategies do it (`new.Status = old.Status`, `new.Spec = old.Spec`). */
import type { StoredObject } from '../../../types.js';
import { cloneJson } from '../../../json.js';

/** Gives `obj` the old object's `member` (a copy), or none when the old object had none. */
export function keepMember(obj: StoredObject, old: StoredObject, member: string): void {
  if (old[member] !== undefined) obj[member] = cloneJson(old[member]);
  else delete obj[member];
}
