/**
 * JSON merge patch (RFC 7386), applied the way kube-apiserver 1.24 applies
 * `application/merge-patch+json` (evanphx/json-patch v4 `MergePatch`):
 *
 * - a `null` member deletes the key;
 * - an object merges into an object recursively; anything else replaces the target value;
 * - a value that is added or replaced wholesale has its `null` object members pruned (also inside
 *   objects nested in arrays, as evanphx does; `null` array elements stay);
 * - a non-object patch replaces the whole document (RFC 7386 §2; note kube itself refuses a
 *   `null` or scalar top-level merge patch with "Invalid JSON Patch").
 *
 * Never mutates its inputs. Every key is data (`__proto__` and `constructor` included): members are
 * read as own members only and written with `setMember`.
 */
import { type JsonObject, cloneJson, isObject } from './errors.js';
import { getOwn, setMember } from '../json.js';
import { checkDepth } from '../depth.js';

/** evanphx `pruneNulls`: drops null members of objects, recursively (through arrays too). */
function pruneNulls(v: unknown, depth = 1): unknown {
  if (Array.isArray(v)) {
    checkDepth(depth, 'the patch');
    return v.map((x) => (x === null ? null : pruneNulls(x, depth + 1)));
  }
  if (isObject(v)) {
    checkDepth(depth, 'the patch');
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) setMember(out, k, pruneNulls(x, depth + 1));
    return out;
  }
  return v;
}

/** evanphx `mergeDocs`: `doc` is a private copy and is updated in place. */
function mergeInto(doc: JsonObject, patch: JsonObject, depth = 1): void {
  checkDepth(depth, 'the patch');
  for (const [k, pv] of Object.entries(patch)) {
    if (pv === null) {
      delete doc[k];
      continue;
    }
    const cur = getOwn(doc, k);
    if (cur === undefined || cur === null) {
      setMember(doc, k, pruneNulls(pv));
    } else if (!isObject(cur)) {
      setMember(doc, k, pruneNulls(pv));
    } else if (!isObject(pv)) {
      // evanphx returns the patch value unpruned when only the current value is an object.
      setMember(doc, k, cloneJson(pv));
    } else {
      mergeInto(cur, pv, depth + 1);
    }
  }
}

/** Applies an RFC 7386 merge patch to `target`, returning a new document. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return pruneNulls(patch);
  if (!isObject(target)) return pruneNulls(patch);
  const doc = cloneJson(target);
  mergeInto(doc, patch);
  return doc;
}
