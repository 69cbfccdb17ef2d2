/**
 * JSON patch (RFC 6902, pointers per RFC 6901), applied the way kube-apiserver 1.24 applies
 * `application/json-patch+json` (evanphx/json-patch v4.12, which kube vendors), including its
 * messages and its departures from the RFC:
 *
 * - `replace` of a missing object member sets it (v4's object `get` never fails); a missing array
 *   index fails with "replace operation does not apply: doc is missing key";
 * - `copy` from a missing object member copies `null`;
 * - negative array indexes count from the end (`SupportNegativeIndices`);
 * - `add` and `remove` at the root path `""` fail ("doc is missing path"); `replace` at `""` swaps
 *   the document when the value is an object or array and silently does nothing otherwise;
 * - `test` treats a missing member and a `null` one alike.
 *
 * Malformed patches are 400s, more than 10,000 operations a 413, and an operation that does not
 * apply a 422 (see {@link PatchError}). Never mutates its inputs. A pointer's tokens are keys like
 * any other (`/metadata/__proto__/x`, `/constructor/prototype`): only own members are followed.
 */
import { type JsonObject, MAX_JSON_PATCH_OPERATIONS, PatchError, cloneJson, isObject, jsonEqual } from './errors.js';
import { getOwn, hasOwn, setMember } from '../json.js';
import { stringifyJson } from '../number-codec.js';
import { ChunkedLists } from './chunked-list.js';

const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';

/** The bytes all `copy` operations of one patch may add (the request body limit, 3 MiB). */
export const MAX_ACCUMULATED_COPY_BYTES = 3 * 1024 * 1024;

/** The document being patched, the bytes its copies have added so far, and its chunked lists. */
interface PatchState {
  doc: unknown;
  copied: number;
  lists: ChunkedLists;
}

/** An internal failure carrying evanphx's message; wrapped by the operation that hit it. */
class OpFailure extends Error {}

function fail(message: string, cause: string): never {
  throw new OpFailure(`${message}: ${cause}`);
}

function goJsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isObject(v)) return 'object';
  if (typeof v === 'boolean') return 'bool';
  // An int64 BigInt, or a number beyond float64 kept in place (number-codec.ts), is a number too.
  return typeof v === 'number' || typeof v === 'bigint' || typeof v === 'symbol' ? 'number' : 'string';
}

/** RFC 6901 token decoding, in one pass (`~01` is `~1`), as Go's strings.Replacer does it. */
function decodeToken(t: string): string {
  return t.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~'));
}

/** Go's strconv.Atoi. */
function atoi(key: string): number {
  if (!/^[+-]?\d+$/.test(key)) throw new OpFailure(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  const n = Number(key);
  if (!Number.isSafeInteger(n)) throw new OpFailure(`strconv.Atoi: parsing ${JSON.stringify(key)}: value out of range`);
  return n;
}

function invalidIndex(idx: number): never {
  return fail(`Unable to access invalid index: ${idx}`, INVALID_INDEX);
}

/** A container found by a pointer: an object or an array of the (private) document. */
type Container = { obj: JsonObject } | { arr: unknown[]; lists: ChunkedLists };

function get(c: Container, key: string): unknown {
  if ('obj' in c) return getOwn(c.obj, key);
  const list = c.lists.get(c.arr);
  const length = list ? list.length : c.arr.length;
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -length) invalidIndex(idx);
    idx += length;
  }
  if (idx >= length) invalidIndex(idx);
  return list ? list.get(idx) : c.arr[idx];
}

function set(c: Container, key: string, val: unknown): void {
  if ('obj' in c) {
    setMember(c.obj, key, val);
    return;
  }
  const list = c.lists.get(c.arr);
  const length = list ? list.length : c.arr.length;
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -length) invalidIndex(idx);
    idx += length;
  }
  if (list) list.set(idx, val);
  else c.arr[idx] = val;
}

function add(c: Container, key: string, val: unknown): void {
  if ('obj' in c) {
    setMember(c.obj, key, val);
    return;
  }
  const list = c.lists.forSplice(c.arr);
  if (key === '-') {
    if (list) list.insert(list.length, val);
    else c.arr.push(val);
    return;
  }
  let idx: number;
  try {
    idx = atoi(key);
  } catch (e) {
    return fail(`value was not a proper array index: '${key}'`, (e as Error).message);
  }
  const size = (list ? list.length : c.arr.length) + 1;
  if (idx >= size) invalidIndex(idx);
  if (idx < 0) {
    if (idx < -size) invalidIndex(idx);
    idx += size;
  }
  if (list) list.insert(idx, val);
  else c.arr.splice(idx, 0, val);
}

function remove(c: Container, key: string): void {
  if ('obj' in c) {
    if (!hasOwn(c.obj, key)) fail(`Unable to remove nonexistent key: ${key}`, MISSING);
    delete c.obj[key];
    return;
  }
  const list = c.lists.forSplice(c.arr);
  const length = list ? list.length : c.arr.length;
  let idx = atoi(key);
  if (idx >= length) invalidIndex(idx);
  if (idx < 0) {
    if (idx < -length) invalidIndex(idx);
    idx += length;
  }
  if (list) list.remove(idx);
  else c.arr.splice(idx, 1);
}

function asContainer(v: unknown, lists: ChunkedLists): Container | undefined {
  if (Array.isArray(v)) return { arr: v, lists };
  if (isObject(v)) return { obj: v };
  return undefined;
}

/** evanphx `findObject`: the container holding the pointer's last token, and that token. */
function findObject(state: PatchState, path: string): { c: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let c = asContainer(state.doc, state.lists);
  for (const part of split.slice(1, -1)) {
    if (!c) return undefined;
    let next: unknown;
    try {
      next = get(c, decodeToken(part));
    } catch {
      return undefined;
    }
    if (next === undefined || next === null) return undefined;
    c = asContainer(next, state.lists);
  }
  return c ? { c, key: decodeToken(split[split.length - 1]!) } : undefined;
}

/** Runs a container operation, wrapping its failure as evanphx's `errors.Wrapf(err, ...)` does. */
function wrap(message: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    if (e instanceof OpFailure) fail(message, e.message);
    throw e;
  }
}

function stringField(op: JsonObject, field: 'path' | 'from'): string {
  const v = op[field];
  if (v === undefined || v === null) {
    throw new OpFailure(field === 'path' ? `operation missing path field: ${MISSING}` : `operation, missing from field: ${MISSING}`);
  }
  if (typeof v !== 'string') throw new OpFailure(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type string`);
  return v;
}

/** Reads `path`/`from`; `bare` ops (add, remove, copy's path) report a plain "missing value". */
function field(op: JsonObject, name: 'path' | 'from', kind: string, bare: boolean): string {
  try {
    return stringField(op, name);
  } catch (e) {
    return fail(`${kind} operation failed to decode ${name}`, bare ? MISSING : (e as Error).message);
  }
}

function applyOne(root: PatchState, op: JsonObject): void {
  const kind = typeof op['op'] === 'string' ? op['op'] : 'unknown';
  const value = (): unknown => cloneJson(op['value'] ?? null);
  switch (kind) {
    case 'add': {
      const path = field(op, 'path', 'add', true);
      const at = findObject(root, path) ?? fail(`add operation does not apply: doc is missing path: "${path}"`, MISSING);
      return wrap(`error in add for path: '${path}'`, () => add(at.c, at.key, value()));
    }
    case 'remove': {
      const path = field(op, 'path', 'remove', true);
      const at = findObject(root, path) ?? fail(`remove operation does not apply: doc is missing path: "${path}"`, MISSING);
      return wrap(`error in remove for path: '${path}'`, () => remove(at.c, at.key));
    }
    case 'replace': {
      const path = field(op, 'path', 'replace', false);
      if (path === '') {
        // v4 swaps the document for an object or array value; for anything else its error wraps a
        // nil error, which is nil, so the operation is silently a no-op.
        const v = value();
        if (Array.isArray(v) || isObject(v)) root.doc = v;
        return;
      }
      const at = findObject(root, path) ?? fail(`replace operation does not apply: doc is missing path: ${path}`, MISSING);
      try {
        get(at.c, at.key);
      } catch {
        fail(`replace operation does not apply: doc is missing key: ${path}`, MISSING);
      }
      return wrap(`error in remove for path: '${path}'`, () => set(at.c, at.key, value()));
    }
    case 'move': {
      const from = field(op, 'from', 'move', false);
      const src = findObject(root, from) ?? fail(`move operation does not apply: doc is missing from path: ${from}`, MISSING);
      let val: unknown;
      wrap(`error in move for path: '${src.key}'`, () => {
        val = get(src.c, src.key);
      });
      wrap(`error in move for path: '${src.key}'`, () => remove(src.c, src.key));
      const path = field(op, 'path', 'move', false);
      const dst = findObject(root, path) ?? fail(`move operation does not apply: doc is missing destination path: ${path}`, MISSING);
      return wrap(`error in move for path: '${path}'`, () => add(dst.c, dst.key, val ?? null));
    }
    case 'copy': {
      const from = field(op, 'from', 'copy', false);
      const src = findObject(root, from) ?? fail(`copy operation does not apply: doc is missing from path: ${from}`, MISSING);
      let val: unknown;
      wrap(`error in copy for from: '${from}'`, () => {
        val = get(src.c, src.key);
      });
      const path = field(op, 'path', 'copy', true);
      const dst = findObject(root, path) ?? fail(`copy operation does not apply: doc is missing destination path: ${path}`, MISSING);
      root.lists.materialize(val);
      const copy = cloneJson(val ?? null);
      // Copies can double the document per operation (copy the root into itself): evanphx's
      // AccumulatedCopySizeLimit bounds what all the copies of one patch may add.
      root.copied += stringifyJson(copy).length;
      if (root.copied > MAX_ACCUMULATED_COPY_BYTES) {
        throw new OpFailure(`Unable to complete the copy, the accumulated size increase of copy is ${root.copied}, exceeding the limit ${MAX_ACCUMULATED_COPY_BYTES}`);
      }
      return wrap('error while adding value during copy', () => add(dst.c, dst.key, copy));
    }
    case 'test':
      return test(root, op);
    default:
      throw new OpFailure(`Unexpected kind: ${kind}`);
  }
}

function test(root: PatchState, op: JsonObject): void {
  const path = field(op, 'path', 'test', false);
  const failed = (): never => fail(`testing value ${path} failed`, 'test failed');
  const expected = op['value'];
  if (path === '') {
    root.lists.materialize(root.doc);
    if (!jsonEqual(root.doc, expected)) failed();
    return;
  }
  const at = findObject(root, path) ?? fail(`test operation does not apply: is missing path: ${path}`, MISSING);
  let actual: unknown;
  wrap(`error in test for path: '${path}'`, () => {
    actual = get(at.c, at.key);
  });
  if (actual === undefined || actual === null) {
    if (expected === undefined || expected === null) return;
    failed();
  }
  // Read whole: an equal value is as large as the patch's own, a different one ends the patch.
  root.lists.materialize(actual);
  if (expected === undefined || !jsonEqual(actual, expected)) failed();
}

/**
 * Validates the shape of a decoded JSON patch the way kube decodes it (`jsonpatch.DecodePatch`)
 * and returns its operations. A `null` patch decodes to no operations.
 */
function decodeOps(ops: unknown): JsonObject[] {
  if (ops === null || ops === undefined) return [];
  if (!Array.isArray(ops)) throw new PatchError(`json: cannot unmarshal ${goJsonKind(ops)} into Go value of type jsonpatch.Patch`, 400);
  const out: JsonObject[] = [];
  for (const op of ops) {
    if (op === null) out.push({});
    else if (isObject(op)) out.push(op);
    else throw new PatchError(`json: cannot unmarshal ${goJsonKind(op)} into Go value of type jsonpatch.Operation`, 400);
  }
  if (out.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${out.length}`, 413);
  }
  return out;
}

/** Applies an RFC 6902 JSON patch (`ops`, the decoded patch body) to `doc`, returning a new document. */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  const list = decodeOps(ops);
  if (!Array.isArray(doc) && !isObject(doc)) {
    throw new PatchError(`json: cannot unmarshal ${doc === null ? 'null' : goJsonKind(doc)} into Go value of type jsonpatch.partialDoc`, 500);
  }
  const root: PatchState = { doc: cloneJson(doc) as unknown, copied: 0, lists: new ChunkedLists() };
  for (const op of list) {
    try {
      applyOne(root, op);
    } catch (e) {
      if (e instanceof OpFailure) throw new PatchError(e.message, 422);
      throw e;
    }
  }
  root.lists.materializeAll();
  return root.doc;
}
