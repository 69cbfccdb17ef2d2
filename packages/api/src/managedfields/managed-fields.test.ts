import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinDefinitions } from '../kube-schema/definitions.js';
import type { Schema } from '../schema.js';
import { namespaces, serviceaccounts } from '../groups/index.js';
import type { ManagedFieldsEntry } from '../types.js';
import { FieldManager, type KubeJSON, defaultManagerFromUserAgent, validateManager } from './managed-fields.js';
import { type Path, fieldPE, keyPE } from './fieldset.js';
import { TypedSchema, compareObjects, mergeObjects } from './typed.js';

const defs = builtinDefinitions();
const fm = new FieldManager({ schema: serviceaccounts.schema, defs });
const T1 = '2024-01-01T00:00:01Z';
const T2 = '2024-01-01T00:00:02Z';
const T3 = '2024-01-01T00:00:03Z';

function sa(extra: KubeJSON = {}, meta: KubeJSON = {}): KubeJSON {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'default', uid: 'u-1', resourceVersion: '5', ...meta }, ...extra };
}

function entries(obj: KubeJSON): ManagedFieldsEntry[] {
  const meta = obj['metadata'] as { managedFields?: ManagedFieldsEntry[] };
  return meta.managedFields ?? [];
}

function entry(obj: KubeJSON, manager: string, operation = 'Update'): ManagedFieldsEntry | undefined {
  return entries(obj).find((e) => e.manager === manager && e.operation === operation);
}

const create = (obj: KubeJSON, manager: string, time = T1): KubeJSON => fm.update(undefined, obj, { manager, apiVersion: 'v1', time });

describe('FieldManager.update', () => {
  it('records a create as an Update entry without the strip set', () => {
    const out = create(sa({ automountServiceAccountToken: true }, { labels: { a: '1' } }), 'kubectl-create');
    assert.deepEqual(entries(out), [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } },
      },
    ]);
    assert.equal(out['automountServiceAccountToken'], true);
  });

  it('transfers ownership of changed fields, drops emptied managers and stamps time only on change', () => {
    const v1 = create(sa({ automountServiceAccountToken: true }, { labels: { a: '1', b: '2' } }), 'alice');
    const v2 = fm.update(v1, { ...structuredClone(v1), metadata: { ...(v1['metadata'] as KubeJSON), labels: { a: 'changed', b: '2' } } }, { manager: 'bob', apiVersion: 'v1', time: T2 });
    assert.deepEqual(entry(v2, 'alice')?.fieldsV1, { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:b': {} } } });
    assert.deepEqual(entry(v2, 'bob')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:a': {} } } });
    assert.equal(entry(v2, 'bob')?.time, T2);
    assert.equal(entry(v2, 'alice')?.time, T1);
    // bob removes the field alice still owned and sets automount: alice owns only the labels map node.
    const next = structuredClone(v2);
    delete (next['metadata'] as KubeJSON)['labels'];
    next['automountServiceAccountToken'] = false;
    const v3 = fm.update(v2, next, { manager: 'bob', apiVersion: 'v1', time: T3 });
    assert.equal(entry(v3, 'alice'), undefined, 'alice owned nothing left and is dropped');
    assert.deepEqual(entry(v3, 'bob')?.fieldsV1, { 'f:automountServiceAccountToken': {} });
    // A no-op update by someone new adds no entry and keeps times.
    const v4 = fm.update(v3, structuredClone(v3), { manager: 'carol', apiVersion: 'v1', time: T3 });
    assert.deepEqual(entries(v4), entries(v3));
  });

  it('orders entries as kube: Apply before Update, then by time, then by manager', () => {
    let o = create(sa({}, { labels: { z: '1' } }), 'zed', T1);
    o = fm.update(o, sa({}, { labels: { z: '1', a: '1' }, managedFields: entries(o) }), { manager: 'amy', apiVersion: 'v1', time: T1 });
    o = fm.apply(o, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', annotations: { k: 'v' } } }, { manager: 'late', apiVersion: 'v1', time: T3, force: false });
    assert.deepEqual(entries(o).map((e) => `${e.operation}:${e.manager}`), ['Apply:late', 'Update:amy', 'Update:zed']);
  });

  it('resets managedFields with [{}] and then records the change (spec point 9)', () => {
    const v1 = create(sa({}, { labels: { a: '1' } }), 'alice');
    const next = sa({ automountServiceAccountToken: true }, { labels: { a: '1' }, managedFields: [{}] });
    const v2 = fm.update(v1, next, { manager: 'resetter', apiVersion: 'v1', time: T2 });
    assert.deepEqual(entries(v2), [
      { manager: 'resetter', operation: 'Update', apiVersion: 'v1', time: T2, fieldsType: 'FieldsV1', fieldsV1: { 'f:automountServiceAccountToken': {} } },
    ]);
    // A reset with no other change strips everything.
    const v3 = fm.update(v2, sa({ automountServiceAccountToken: true }, { labels: { a: '1' }, managedFields: [{}] }), { manager: 'x', apiVersion: 'v1', time: T3 });
    assert.equal((v3['metadata'] as KubeJSON)['managedFields'], undefined);
    // kube's skipNonAppliedManager behaviour, as an option: untracked updates stay untracked.
    const kubeLike = new FieldManager({ schema: serviceaccounts.schema, defs, skipUntrackedUpdates: true });
    const v4 = kubeLike.update(v1, next, { manager: 'resetter', apiVersion: 'v1', time: T2 });
    assert.equal((v4['metadata'] as KubeJSON)['managedFields'], undefined);
  });

  it('keeps live entries when the request has none, takes a valid client list, ignores it on sub-resources', () => {
    const v1 = create(sa({}, { labels: { a: '1' } }), 'alice');
    const v2 = fm.update(v1, sa({}, { labels: { a: '1' } }), { manager: 'bob', apiVersion: 'v1', time: T2 });
    assert.deepEqual(entries(v2), entries(v1));
    const custom: ManagedFieldsEntry[] = [{ manager: 'mallory', operation: 'Update', apiVersion: 'v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:a': {} } } } }];
    const v3 = fm.update(v1, sa({}, { labels: { a: '1' }, managedFields: custom }), { manager: 'bob', apiVersion: 'v1', time: T2 });
    assert.deepEqual(entries(v3), custom);
    const invalid = [{ manager: 'm', operation: 'Bogus', fieldsType: 'FieldsV1', fieldsV1: {} }];
    const v4 = fm.update(v1, sa({}, { labels: { a: '1' }, managedFields: invalid }), { manager: 'bob', apiVersion: 'v1', time: T2 });
    assert.deepEqual(entries(v4), entries(v1), 'an undecodable list falls back to live');
    const v5 = fm.update(v1, sa({}, { labels: { a: '1' }, managedFields: custom }), { manager: 'bob', apiVersion: 'v1', time: T2, subresource: 'status' });
    assert.deepEqual(entries(v5), entries(v1));
  });

  it('keeps separate Update entries per sub-resource', () => {
    const v1 = create(sa({}, { labels: { a: '1' } }), 'ctl');
    const v2 = fm.update(v1, sa({ automountServiceAccountToken: true }, { labels: { a: '1' } }), { manager: 'ctl', apiVersion: 'v1', time: T2, subresource: 'status' });
    assert.deepEqual(entries(v2).map((e) => [e.manager, e.subresource]), [['ctl', undefined], ['ctl', 'status']]);
  });

  it('caps update entries at 10, merging the oldest into ancient-changes', () => {
    let o = create(sa({}, { labels: { l0: 'x' } }), 'm0', '2024-01-01T00:00:00Z');
    for (let i = 1; i <= 11; i++) {
      const labels = { ...((o['metadata'] as KubeJSON)['labels'] as KubeJSON), [`l${i}`]: 'x' };
      o = fm.update(o, sa({}, { labels }), { manager: `m${i}`, apiVersion: 'v1', time: `2024-01-01T00:00:${String(i).padStart(2, '0')}Z` });
    }
    const names = entries(o).map((e) => e.manager);
    assert.equal(names.length, 10);
    assert.ok(names.includes('ancient-changes'));
    assert.ok(!names.includes('m0') && !names.includes('m1') && !names.includes('m2'));
    assert.deepEqual(entry(o, 'ancient-changes')?.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:l0': {}, 'f:l1': {}, 'f:l2': {} } } });
  });

  it('uses the kind empty object as the live object on create (non-pointer structs are not "added")', () => {
    const nsFM = new FieldManager({ schema: namespaces.schema, defs, emptyObject: { spec: {}, status: {} } });
    const out = nsFM.update(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, status: { phase: 'Active' } }, { manager: 'kubectl-create', apiVersion: 'v1', time: T1 });
    assert.deepEqual(entries(out)[0]?.fieldsV1, { 'f:status': { 'f:phase': {} } });
  });

  it('drops managedFields when the object cannot be typed (kube UpdateNoErrors)', () => {
    const out = create(sa({ secrets: [{ namespace: 'no-name-key' }] }), 'x');
    assert.equal((out['metadata'] as KubeJSON)['managedFields'], undefined);
  });

  it('tracks the caller\'s own object in place (a create), with the result of a copy', () => {
    const body = (): KubeJSON => sa({ automountServiceAccountToken: true }, { labels: { a: '1' }, managedFields: [{ manager: 'old', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:a': {} } } } }] });
    const next = body();
    const out = fm.update(undefined, next, { manager: 'kubectl-create', apiVersion: 'v1', time: T1, inPlace: true });
    assert.equal(out, next, 'no copy');
    assert.deepEqual(out, create(body(), 'kubectl-create'));
    // The request's entries are replaced, also when the object cannot be typed (then none are kept).
    const bad = sa({ secrets: [{ namespace: 'no-name-key' }] }, { managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} }] });
    const dropped = fm.update(undefined, bad, { manager: 'x', apiVersion: 'v1', time: T1, inPlace: true });
    assert.equal(dropped, bad);
    assert.equal((dropped['metadata'] as KubeJSON)['managedFields'], undefined);
  });
});

describe('field manager names', () => {
  it('validates length and printable characters', () => {
    assert.deepEqual(validateManager('kubectl'), []);
    const long = validateManager('x'.repeat(129));
    assert.equal(long[0]?.type, 'FieldValueTooLong');
    assert.equal(long[0]?.detail, 'must have at most 128 bytes');
    const bad = validateManager('a\u0007b');
    assert.equal(bad[0]?.detail, 'invalid character U+0007 (at position 1)');
  });

  it('derives a manager from the user agent', () => {
    assert.equal(defaultManagerFromUserAgent('kubectl/v1.24.0 (linux/amd64) kubernetes/abc'), 'kubectl');
    assert.equal(defaultManagerFromUserAgent('curl\u0001x/7.0'), 'curlx');
    assert.equal(defaultManagerFromUserAgent('y'.repeat(200)).length, 128);
    assert.equal(defaultManagerFromUserAgent(''), '');
  });
});

describe('FieldManager.update copies', () => {
  it('keeps a member named __proto__ as an ordinary member and leaves the input untouched', () => {
    const input = JSON.parse('{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"p","namespace":"default","annotations":{"__proto__":"x","a":"b"},"managedFields":[{"manager":"old","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{}}}]}}') as KubeJSON;
    const before = JSON.stringify(input);
    const out = fm.update(undefined, input, { manager: 'm', apiVersion: 'v1', time: T1 });
    assert.equal(JSON.stringify(input), before);
    const annotations = (out['metadata'] as { annotations: Record<string, unknown> }).annotations;
    assert.deepEqual(Object.keys(annotations), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(annotations), Object.prototype);
    assert.notEqual(out['metadata'], input['metadata']);
  });
});

// An associative list of 25,000 items made every write to its object take a second: the merging
// walk took its shared items with Array.shift. 200,000 items take ~1 s now and ~16 s that way;
// the bound (generous) is explicit because node:test's timeout cannot stop synchronous code.
describe('large associative lists: compare and merge in linear time', () => {
  const ts = new TypedSchema(serviceaccounts.schema, defs);
  const N = 200_000;
  const names = Array.from({ length: N }, (_, i) => ({ name: `s${i}` }));
  const within = <T>(fn: () => T): T => {
    const t0 = performance.now();
    const out = fn();
    const took = performance.now() - t0;
    assert.ok(took < 8000, `took ${Math.round(took)} ms: not linear`);
    return out;
  };

  it(`compare: one item of ${N} replaced`, () => {
    const c = within(() => compareObjects(ts, { secrets: names }, { secrets: [{ name: 'x' }, ...names.slice(1)] }));
    const item = (name: string): Path => [fieldPE('secrets'), keyPE([{ name: 'name', value: name }])];
    assert.ok(c.added.has(item('x')));
    assert.ok(c.removed.has(item('s0')));
    assert.ok(!c.removed.has(item('s1')));
    assert.ok(c.modified.isEmpty());
  });

  it(`merge: ${N} items in the other order take the newer order`, () => {
    const reversed = names.slice().reverse();
    const merged = within(() => mergeObjects(ts, { secrets: names }, { secrets: reversed })) as { secrets: unknown[] };
    assert.deepEqual(merged.secrets, reversed);
  });
});
