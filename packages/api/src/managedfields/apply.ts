/**
 * The ownership engine: structured-merge-diff v4.2's `merge.Updater` (merge/update.go) — Update for
 * create/update/non-apply patch, Apply with pruning of fields the applier gave up — and the conflict
 * error kube builds from its result (apiserver fieldmanager/internal/conflict.go).
 */
import { StatusError } from '../errors.js';
import type { StatusCause } from '../types.js';
import { FieldSet, type Path, pathString } from './fieldset.js';
import {
  type Comparison,
  type TypedSchema,
  compareObjects,
  excludeFields,
  isSame,
  mergeObjects,
  removeItems,
  toFieldSet,
} from './typed.js';

/** One manager's fields (SMD's `VersionedSet`). */
export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Manager identifier (kube's JSON identifier, see managed-fields.ts) → its fields. */
export type ManagerSets = Map<string, VersionedSet>;

export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

/** SMD's `merge.Conflicts`: thrown by an apply without force that would change others' fields. */
export class ConflictsError extends Error {
  readonly conflicts: readonly Conflict[];
  constructor(conflicts: readonly Conflict[]) {
    super(`conflicts: ${conflicts.map((c) => `${c.manager}: ${pathString(c.path)}`).join(', ')}`);
    this.conflicts = conflicts;
  }
}

export class Updater {
  readonly #ts: TypedSchema;
  readonly #ignored: FieldSet;

  /** `ignored` holds the reset fields of the endpoint (kube's IgnoredFields / resetFields). */
  constructor(ts: TypedSchema, ignored: FieldSet = FieldSet.empty()) {
    this.#ts = ts;
    this.#ignored = ignored;
  }

  /**
   * SMD's `update`: other managers lose fields that `workflow` changed (a conflict unless `force`)
   * and fields that were removed. Mutates `managers`.
   */
  #update(oldObj: unknown, newObj: unknown, managers: ManagerSets, workflow: string, force: boolean): Comparison {
    const compare = excludeFields(compareObjects(this.#ts, oldObj, newObj), this.#ignored);
    const changed = compare.modified.union(compare.added);
    const conflicts = new Map<string, FieldSet>();
    for (const [manager, vs] of managers) {
      if (manager === workflow) continue;
      const c = vs.set.intersection(changed);
      if (!c.isEmpty()) conflicts.set(manager, c);
    }
    if (!force && conflicts.size > 0) {
      const list: Conflict[] = [];
      for (const m of [...conflicts.keys()].sort()) for (const path of conflicts.get(m)!.paths()) list.push({ manager: m, path });
      throw new ConflictsError(list);
    }
    for (const [manager, vs] of [...managers]) {
      if (manager === workflow) continue;
      let set = vs.set;
      const c = conflicts.get(manager);
      if (c) set = set.difference(c);
      if (!compare.removed.isEmpty()) set = set.difference(compare.removed);
      managers.set(manager, { ...vs, set });
    }
    for (const [manager, vs] of [...managers]) if (vs.set.isEmpty()) managers.delete(manager);
    return compare;
  }

  /**
   * SMD's `Updater.Update`: after a non-apply change from `live` to `next`, `manager` owns what
   * changed (minus what was removed); others lose it. Returns a new map.
   */
  update(live: unknown, next: unknown, apiVersion: string, managers: ManagerSets, manager: string): ManagerSets {
    const out: ManagerSets = new Map(managers);
    const compare = this.#update(live, next, out, manager, true);
    const prev = out.get(manager)?.set ?? FieldSet.empty();
    const set = prev.union(compare.modified).union(compare.added).difference(compare.removed).recursiveDifference(this.#ignored);
    if (set.isEmpty()) out.delete(manager);
    else out.set(manager, { set, apiVersion, applied: false });
    return out;
  }

  /**
   * SMD's `Updater.Apply`: merges `config` into `live`, makes `config`'s field set the applier's,
   * prunes what the applier owned before and dropped (unless someone else owns it) and takes fields
   * from other managers (conflicts unless `force`). `object` is undefined when nothing changed.
   */
  apply(live: unknown, config: unknown, apiVersion: string, managers: ManagerSets, manager: string, force: boolean): { object: unknown; managers: ManagerSets } {
    const out: ManagerSets = new Map(managers);
    let merged = mergeObjects(this.#ts, live, config);
    const lastSet = out.get(manager);
    const set = toFieldSet(this.#ts, config).recursiveDifference(this.#ignored);
    out.set(manager, { set, apiVersion, applied: true });
    merged = this.#prune(merged, out, lastSet);
    const compare = this.#update(live, merged, out, manager, force);
    return { object: isSame(compare) ? undefined : merged, managers: out };
  }

  /**
   * SMD's `prune`: removes fields, list and map items that the applier applied last time and not
   * this time, unless another manager (applier or updater) or the new config still owns them.
   */
  #prune(merged: unknown, managers: ManagerSets, lastSet: VersionedSet | undefined): unknown {
    if (!lastSet || lastSet.set.isEmpty()) return merged;
    const ts = this.#ts;
    let pruned = removeItems(ts, merged, lastSet.set);
    // addBackOwnedItems
    let managed = FieldSet.empty();
    for (const vs of managers.values()) managed = managed.union(vs.set);
    const mergedSet = toFieldSet(ts, merged);
    let prunedSet = toFieldSet(ts, pruned ?? {});
    pruned = removeItems(ts, merged, mergedSet.difference(prunedSet.union(managed)));
    // addBackDanglingItems
    prunedSet = toFieldSet(ts, pruned ?? {});
    return removeItems(ts, merged, mergedSet.difference(prunedSet).intersection(lastSet.set));
  }
}

// ---------------------------------------------------------------------------------------------
// Conflict error (fieldmanager/internal/conflict.go)
// ---------------------------------------------------------------------------------------------

interface IdentifierFields {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}

function parseIdentifier(id: string): IdentifierFields | undefined {
  try {
    const v: unknown = JSON.parse(id);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as IdentifierFields) : undefined;
  } catch {
    return undefined;
  }
}

/** kube's `printManager`: `"name"`, `"name" with subresource "status"`, `... using v1` for updaters. */
export function printManager(id: string): string {
  const e = parseIdentifier(id);
  if (!e) return JSON.stringify(id);
  let s = JSON.stringify(e.manager ?? '');
  if (e.subresource) s = `${s} with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') return `${s} using ${e.apiVersion ?? ''}`;
  return s;
}

/** kube's `NewConflictError`: 409 Conflict, one `FieldManagerConflict` cause per conflicting path. */
export function conflictError(conflicts: readonly Conflict[]): StatusError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  } else {
    const byManager = new Map<string, Path[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
    const lines: string[] = [];
    for (const m of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${printManager(m)}:`);
      for (const p of byManager.get(m)!) lines.push(`- ${pathString(p)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError({ code: 409, reason: 'Conflict', message, details: { causes } });
}
