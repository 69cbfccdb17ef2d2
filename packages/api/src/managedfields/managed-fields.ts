/**
 * `metadata.managedFields` tracking as kube-apiserver 1.24's field manager does it
 * (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager): decoding and encoding entries
 * (internal/managedfields.go), manager identifiers (BuildManagerIdentifier), the strip set
 * (stripmeta.go), merging an update into the manager's entry and stamping its time
 * (managedfieldsupdater.go), capping update entries (capmanagers.go), "before-first-apply"
 * (skipnonapplied.go), the managedFields reset (fieldmanager.go) — around the SMD updater (apply.ts).
 */
import { StatusError, badRequest } from '../errors.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import type { Definitions, Schema } from '../schema.js';
import { type ManagedFieldsEntry, isPlainObject } from '../types.js';
import { cloneJson, setMember } from '../json.js';
import { parseJson, stringifyJson } from '../number-codec.js';
import { ConflictsError, type ManagerSets, Updater, conflictError } from './apply.js';
import { FieldSet, FieldsV1Error, pathOf } from './fieldset.js';
import { TypedError, TypedSchema, compareObjects, createdFieldsV1, dropNulls, toFieldSet } from './typed.js';

export type KubeJSON = Record<string, unknown>;

/** kube's `FieldManagerMaxLength`. */
export const FIELD_MANAGER_MAX_LENGTH = 128;
/** kube's `DefaultMaxUpdateManagers`. */
export const DEFAULT_MAX_UPDATE_MANAGERS = 10;

/** Fields never tracked (stripmeta.go). */
export const STRIP_SET: FieldSet = FieldSet.fromPaths(
  [
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ['metadata', 'name'],
    ['metadata', 'namespace'],
    ['metadata', 'creationTimestamp'],
    ['metadata', 'selfLink'],
    ['metadata', 'uid'],
    ['metadata', 'clusterName'],
    ['metadata', 'generation'],
    ['metadata', 'managedFields'],
    ['metadata', 'resourceVersion'],
  ].map((p) => pathOf(...p)),
);

export interface FieldManagerConfig {
  /** The kind's schema (apiVersion/kind/metadata are added when absent). */
  schema: Schema;
  defs: Definitions;
  /** Paths (field names) the endpoint resets, e.g. `[['status']]` for a main resource. */
  resetFields?: string[][];
  /**
   * The kind's empty object as kube's `New()` serializes it, used as the live object on create and
   * create-by-apply (e.g. `{spec: {}, status: {}}` for Namespace, whose spec/status are non-pointer
   * structs). Defaults to `{}`.
   */
  emptyObject?: KubeJSON;
  /**
   * kube's skipNonAppliedManager: an update of an existing object (live has a uid) that has no
   * managedFields (e.g. after a `[{}]` reset) is not tracked. Off by default, in which case the
   * update is recorded after the reset as the spec describes.
   */
  skipUntrackedUpdates?: boolean;
  maxUpdateManagers?: number;
  /**
   * A create's entry built directly from the object (the default), instead of through the general
   * update path: the same entry either way (the tests compare them).
   */
  createDirect?: boolean;
}

export interface UpdateOptions {
  manager: string;
  apiVersion: string;
  /** RFC 3339 time stamped on the manager's entry when it changed something. */
  time: string;
  subresource?: string;
  /**
   * `next` is the caller's own (e.g. a create's freshly decoded body): its managedFields are set
   * on it and it is returned, instead of a deep copy.
   */
  inPlace?: boolean;
}

export interface ApplyOptions {
  manager: string;
  apiVersion: string;
  time: string;
  force: boolean;
  subresource?: string;
}

/** Decoded managedFields: manager identifier → fields, and → time. */
export interface Managed {
  sets: ManagerSets;
  times: Map<string, string>;
  /**
   * The sets as decoded, before any change: an entry whose fields end up the same is encoded from
   * its decoded set (FieldSet keeps the FieldsV1 of a decoded set) instead of afresh.
   */
  readonly decoded?: ReadonlyMap<string, FieldSet>;
}

const CURRENT_OPERATION = 'current-operation';
const BEFORE_FIRST_APPLY = 'before-first-apply';
const ANCIENT_CHANGES = 'ancient-changes';

/** kube's `BuildManagerIdentifier`: the entry's JSON without fields and time (and apiVersion for Apply). */
export function managerIdentifier(manager: string, operation: 'Apply' | 'Update', apiVersion: string, subresource?: string): string {
  const id: Record<string, string> = { manager };
  if (operation) id['operation'] = operation;
  if (operation !== 'Apply' && apiVersion) id['apiVersion'] = apiVersion;
  if (subresource) id['subresource'] = subresource;
  return JSON.stringify(id);
}

function parseId(id: string): { manager: string; operation: string; subresource: string } {
  const v: unknown = JSON.parse(id);
  const r = isPlainObject(v) ? v : {};
  const str = (x: unknown): string => (typeof x === 'string' ? x : '');
  return { manager: str(r['manager']), operation: str(r['operation']), subresource: str(r['subresource']) };
}

/** kube's `DecodeManagedFields`. Throws an Error on an invalid entry. */
export function decodeManagedFields(entries: unknown): Managed {
  const decoded = new Map<string, FieldSet>();
  const managed: Managed = { sets: new Map(), times: new Map(), decoded };
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  entries.forEach((raw, i) => {
    const e: ManagedFieldsEntry = isPlainObject(raw) ? (raw as ManagedFieldsEntry) : {};
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (!e.fieldsType) throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    const id = managerIdentifier(e.manager ?? '', e.operation, e.apiVersion ?? '', e.subresource);
    let set: FieldSet;
    try {
      set = e.fieldsV1 === undefined || e.fieldsV1 === null ? FieldSet.empty() : FieldSet.fromFieldsV1(e.fieldsV1);
    } catch (err) {
      throw new Error(`error decoding versioned set from entry ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
    managed.sets.set(id, { set, apiVersion: e.apiVersion ?? '', applied: e.operation === 'Apply' });
    decoded.set(id, set);
    if (e.time) managed.times.set(id, e.time);
    else managed.times.delete(id);
  });
  return managed;
}

const seconds = (t: string | undefined): number => (t ? Math.floor(Date.parse(t) / 1000) || 0 : 0);

/** kube's `encodeManagedFields` + `sortEncodedManagedFields` (operation, time in seconds, manager, apiVersion, subresource). */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.sets) {
    const { manager, subresource } = parseId(id);
    const e: ManagedFieldsEntry = { manager, operation: vs.applied ? 'Apply' : 'Update', apiVersion: vs.apiVersion };
    const time = managed.times.get(id);
    if (time) e.time = time;
    e.fieldsType = 'FieldsV1';
    const was = managed.decoded?.get(id);
    e.fieldsV1 = (was && was.equals(vs.set) ? was : vs.set).toFieldsV1();
    if (subresource) e.subresource = subresource;
    out.push(e);
  }
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return out.sort(
    (p, q) =>
      cmp(p.operation ?? '', q.operation ?? '') ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager ?? '', q.manager ?? '') ||
      cmp(p.apiVersion ?? '', q.apiVersion ?? '') ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** `managedFields: [{}]` (one entry with nothing set): the client asks to drop all entries. */
function isResetManagedFields(v: unknown): boolean {
  if (!Array.isArray(v) || v.length !== 1 || !isPlainObject(v[0])) return false;
  return Object.values(v[0]).every((x) => x === undefined || x === null || x === '');
}

/** A deep copy without metadata.managedFields (which is not copied at all). */
function withoutManagedFields(obj: KubeJSON): KubeJSON {
  const copy: KubeJSON = {};
  for (const k in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
    const v = obj[k];
    if (k === 'metadata' && isPlainObject(v)) {
      const meta: KubeJSON = {};
      for (const m in v) if (m !== 'managedFields' && Object.prototype.hasOwnProperty.call(v, m)) setMember(meta, m, cloneJson(v[m], 3));
      copy[k] = meta;
    } else setMember(copy, k, cloneJson(v, 2));
  }
  return copy;
}

/** `obj` with a metadata copy that lacks managedFields; every other member shared, not copied. */
function viewWithoutManagedFields(obj: KubeJSON): KubeJSON {
  const meta = obj['metadata'];
  if (!isPlainObject(meta) || !Object.prototype.hasOwnProperty.call(meta, 'managedFields')) return obj;
  const { managedFields: _mf, ...rest } = meta;
  const view: KubeJSON = {};
  for (const k in obj) if (Object.prototype.hasOwnProperty.call(obj, k)) setMember(view, k, k === 'metadata' ? rest : obj[k]);
  return view;
}

function setManagedFields(obj: KubeJSON, entries: ManagedFieldsEntry[]): KubeJSON {
  const meta = isPlainObject(obj['metadata']) ? obj['metadata'] : (obj['metadata'] = {});
  if (entries.length > 0) meta['managedFields'] = entries;
  else delete meta['managedFields'];
  return obj;
}

export class FieldManager {
  readonly #ts: TypedSchema;
  readonly #updater: Updater;
  readonly #empty: KubeJSON;
  readonly #skipUntracked: boolean;
  readonly #maxUpdateManagers: number;
  readonly #ignored: FieldSet;
  readonly #createDirect: boolean;

  constructor(cfg: FieldManagerConfig) {
    this.#ts = new TypedSchema(cfg.schema, cfg.defs);
    this.#ignored = FieldSet.fromPaths((cfg.resetFields ?? []).map((p) => pathOf(...p)));
    this.#updater = new Updater(this.#ts, this.#ignored);
    this.#createDirect = cfg.createDirect ?? true;
    this.#empty = cfg.emptyObject ?? {};
    this.#skipUntracked = cfg.skipUntrackedUpdates ?? false;
    this.#maxUpdateManagers = cfg.maxUpdateManagers ?? DEFAULT_MAX_UPDATE_MANAGERS;
  }

  /**
   * Create, update and non-apply patch (kube's `UpdateNoErrors`): `next` with managedFields
   * recomputed. `live` is undefined on create. Errors in the data drop managedFields, as kube does.
   */
  update(live: KubeJSON | undefined, next: KubeJSON, opts: UpdateOptions): KubeJSON {
    const liveMF = isPlainObject(live?.['metadata']) ? live['metadata']['managedFields'] : undefined;
    const nextMF = isPlainObject(next['metadata']) ? next['metadata']['managedFields'] : undefined;
    const decodeLive = (): Managed => {
      try {
        return decodeManagedFields(liveMF);
      } catch {
        return decodeManagedFields(undefined);
      }
    };
    let managed: Managed;
    if (opts.subresource) {
      managed = decodeLive();
    } else if (isResetManagedFields(nextMF)) {
      managed = decodeManagedFields(undefined);
    } else {
      try {
        managed = decodeManagedFields(nextMF);
        if (managed.sets.size === 0) managed = decodeLive();
      } catch {
        managed = decodeLive();
      }
    }
    const out = opts.inPlace ? next : withoutManagedFields(next);
    // Compared: `out` without managedFields (a view of it when they are still on it).
    const compared = opts.inPlace ? viewWithoutManagedFields(out) : out;
    // Only read (compared): a view without managedFields, sharing everything else with live.
    const liveClean = live ? viewWithoutManagedFields(live) : this.#empty;
    const liveUid = isPlainObject(live?.['metadata']) ? live['metadata']['uid'] : undefined;
    if (managed.sets.size === 0 && this.#skipUntracked && live && liveUid) return setManagedFields(out, []);
    if (!live && !opts.subresource && managed.sets.size === 0 && this.#createDirect) return this.#created(out, compared, opts);
    try {
      const id = managerIdentifier(opts.manager || 'unknown', 'Update', opts.apiVersion, opts.subresource);
      this.#trackUpdate(liveClean, compared, managed, id, opts.apiVersion, opts.time);
    } catch (e) {
      if (e instanceof TypedError) return setManagedFields(out, []);
      throw e;
    }
    return setManagedFields(out, encodeManagedFields(managed));
  }

  /**
   * A create with no managers yet: the one entry the general path (Updater.update from the empty
   * object, stripMeta) would record, its FieldsV1 built directly from the object (typed.ts
   * createdFieldsV1) instead of through field sets. Same entry, same errors.
   */
  #created(out: KubeJSON, compared: KubeJSON, opts: UpdateOptions): KubeJSON {
    let fieldsV1: Record<string, unknown> | undefined;
    try {
      fieldsV1 = createdFieldsV1(this.#ts, this.#empty, compared, this.#ignored, STRIP_SET);
    } catch (e) {
      if (e instanceof TypedError) return setManagedFields(out, []);
      throw e;
    }
    if (!fieldsV1) return setManagedFields(out, []);
    const e: ManagedFieldsEntry = { manager: opts.manager || 'unknown', operation: 'Update', apiVersion: opts.apiVersion };
    if (opts.time) e.time = opts.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = fieldsV1;
    return setManagedFields(out, [e]);
  }

  /** managedFieldsUpdater + stripMeta + SMD Update, then capManagers. Mutates `managed`. */
  #trackUpdate(live: unknown, next: unknown, managed: Managed, id: string, apiVersion: string, time: string): void {
    const sets = this.#updater.update(live, next, apiVersion, managed.sets, CURRENT_OPERATION);
    const cur = sets.get(CURRENT_OPERATION);
    sets.delete(CURRENT_OPERATION);
    const stripped = cur?.set.difference(STRIP_SET);
    if (cur && stripped && !stripped.isEmpty()) {
      const prev = sets.get(id);
      sets.set(id, { set: prev ? stripped.union(prev.set) : stripped, apiVersion: cur.apiVersion, applied: false });
      managed.times.set(id, time);
    }
    managed.sets = sets;
    this.#capUpdateManagers(managed);
  }

  /** capmanagers.go: merges the oldest update entries into `ancient-changes` buckets per version. */
  #capUpdateManagers(managed: Managed): void {
    const updaters = [...managed.sets].filter(([, vs]) => !vs.applied).map(([id]) => id);
    if (updaters.length <= this.#maxUpdateManagers) return;
    updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || (a < b ? -1 : a > b ? 1 : 0));
    const firstOfVersion = new Map<string, string>();
    let length = updaters.length;
    for (let i = 0; i < updaters.length && length > this.#maxUpdateManagers; i++) {
      const id = updaters[i]!;
      const vs = managed.sets.get(id)!;
      const bucket = managerIdentifier(ANCIENT_CHANGES, 'Update', vs.apiVersion);
      const first = firstOfVersion.get(vs.apiVersion);
      if (first === undefined) {
        firstOfVersion.set(vs.apiVersion, id);
        continue;
      }
      if (!managed.sets.has(bucket)) {
        managed.sets.set(bucket, managed.sets.get(first)!);
        managed.sets.delete(first);
      }
      managed.sets.set(bucket, { set: vs.set.union(managed.sets.get(bucket)!.set), apiVersion: vs.apiVersion, applied: false });
      managed.sets.delete(id);
      length--;
      const t = managed.times.get(id);
      if (t) managed.times.set(bucket, t);
      else managed.times.delete(bucket);
    }
  }

  /**
   * The fields of the live object's last-applied configuration whose live values still equal
   * what was applied (kube's allowedConflictsFromLastApplied); undefined without one.
   */
  #allowedFromLastApplied(liveClean: KubeJSON): FieldSet | undefined {
    const meta = liveClean['metadata'];
    const annotations = isPlainObject(meta) && isPlainObject(meta['annotations']) ? meta['annotations'] : undefined;
    const text = annotations?.[LAST_APPLIED_ANNOTATION];
    if (typeof text !== 'string' || text === '') return undefined;
    try {
      const lastApplied: unknown = parseJson(text);
      const set = toFieldSet(this.#ts, lastApplied);
      return set.difference(compareObjects(this.#ts, liveClean, lastApplied).modified);
    } catch {
      return undefined;
    }
  }

  /**
   * Server-side apply: `applied` merged into `live` (undefined: create-by-apply), ownership updated.
   * Throws StatusError 400 for a bad body, 409 Conflict for conflicts without `force`.
   */
  apply(live: KubeJSON | undefined, applied: KubeJSON, opts: ApplyOptions): KubeJSON {
    const patchVersion = typeof applied['apiVersion'] === 'string' ? applied['apiVersion'] : '';
    if (patchVersion !== opts.apiVersion) {
      throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${patchVersion}, expected: ${opts.apiVersion}`);
    }
    const appliedMeta = applied['metadata'];
    if (isPlainObject(appliedMeta) && appliedMeta['managedFields'] !== undefined && appliedMeta['managedFields'] !== null) {
      throw badRequest('metadata.managedFields must be nil');
    }
    const liveMF = isPlainObject(live?.['metadata']) ? live['metadata']['managedFields'] : undefined;
    let managed: Managed;
    try {
      managed = decodeManagedFields(liveMF);
    } catch (e) {
      throw unknownError(`failed to decode managed fields: ${e instanceof Error ? e.message : String(e)}`);
    }
    const liveClean = live ? withoutManagedFields(live) : cloneJson(this.#empty);
    try {
      toFieldSet(this.#ts, applied);
    } catch (e) {
      // kube answers 500 here (kubernetes/kubernetes#122480); the fault is in the request, so 400.
      if (e instanceof TypedError) throw badRequest(`failed to create typed patch object: ${e.message}`);
      throw e;
    }
    try {
      if (managed.sets.size === 0) {
        // skipNonAppliedManager: existing fields are attributed to "before-first-apply" first.
        const id = managerIdentifier(BEFORE_FIRST_APPLY, 'Update', opts.apiVersion, opts.subresource);
        this.#trackUpdate(cloneJson(this.#empty), liveClean, managed, id, opts.apiVersion, opts.time);
      }
      const id = managerIdentifier(opts.manager || 'unknown', 'Apply', opts.apiVersion, opts.subresource);
      const res = this.#updater.apply(liveClean, applied, opts.apiVersion, managed.sets, id, opts.force);
      const mine = res.managers.get(id);
      if (mine) {
        const stripped = mine.set.difference(STRIP_SET);
        if (stripped.isEmpty()) res.managers.delete(id);
        else res.managers.set(id, { ...mine, set: stripped });
      }
      managed.sets = res.managers;
      let result: KubeJSON;
      if (res.object !== undefined && isPlainObject(res.object)) {
        managed.times.set(id, opts.time);
        result = dropNulls(res.object) as KubeJSON;
      } else {
        result = liveClean;
      }
      if (opts.manager === KUBECTL_MANAGER) syncLastApplied(result, applied);
      return setManagedFields(result, encodeManagedFields(managed));
    } catch (e) {
      if (e instanceof ConflictsError) {
        // kube's lastAppliedManager: `kubectl apply --server-side` over a client-side-applied
        // object may take the fields its last-applied configuration still holds as they are live.
        if (opts.manager === KUBECTL_MANAGER && !opts.force && live) {
          const allowed = this.#allowedFromLastApplied(liveClean);
          if (allowed) {
            const remaining = e.conflicts.filter((c) => !allowed.has(c.path));
            if (remaining.length === 0) return this.apply(live, applied, { ...opts, force: true });
            throw conflictError(remaining);
          }
        }
        throw conflictError(e.conflicts);
      }
      if (e instanceof TypedError) throw unknownError(`failed to create typed live object: ${e.message}`);
      if (e instanceof FieldsV1Error) throw unknownError(e.message);
      throw e;
    }
  }
}

/** The field manager `kubectl apply --server-side` uses, whose client-side history is honoured. */
const KUBECTL_MANAGER = 'kubectl';
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * kube's lastAppliedUpdater: after `kubectl apply --server-side`, an object that still carries a
 * client-side last-applied annotation gets it rewritten to the applied configuration, so a later
 * client-side apply computes its patch from what was really applied last.
 */
function syncLastApplied(result: KubeJSON, applied: KubeJSON): void {
  const meta = result['metadata'];
  if (!isPlainObject(meta) || !isPlainObject(meta['annotations']) || typeof meta['annotations'][LAST_APPLIED_ANNOTATION] !== 'string') return;
  const copy = cloneJson(applied);
  const copyMeta = copy['metadata'];
  if (isPlainObject(copyMeta) && isPlainObject(copyMeta['annotations'])) delete copyMeta['annotations'][LAST_APPLIED_ANNOTATION];
  meta['annotations'] = { ...meta['annotations'], [LAST_APPLIED_ANNOTATION]: stringifyJson(copy) };
}

/** A plain error as kube's `ErrorToAPIStatus` answers it: 500 with an empty reason. */
function unknownError(message: string): StatusError {
  return new StatusError({ code: 500, reason: '', message });
}

/**
 * kube's `ValidateFieldManager`: at most 128 bytes, printable characters only. Whether it is
 * required (apply) is the caller's check (`fieldManager: Required value: is required for apply patch`).
 */
export function validateManager(name: string, field = 'fieldManager'): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(name, 'utf8') > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldErr.tooLong(field, name, FIELD_MANAGER_MAX_LENGTH));
  let pos = 0;
  for (const ch of name) {
    if (!isPrintable(ch)) {
      const cp = ch.codePointAt(0) ?? 0;
      const u = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      errs.push(fieldErr.invalid(field, name, `invalid character ${u} (at position ${pos})`));
    }
    pos += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrintable(ch: string): boolean {
  return ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);
}

/** kube's `prefixFromUserAgent`: text before the first '/', printable characters, at most 128 bytes. */
export function defaultManagerFromUserAgent(ua: string): string {
  const head = ua.split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of head) {
    if (!isPrintable(ch)) continue;
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** kube's `managerOrUserAgent`. */
export function managerOrUserAgent(manager: string | undefined, ua: string): string {
  return manager ? manager : defaultManagerFromUserAgent(ua);
}
