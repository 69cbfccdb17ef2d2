import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../errors.js';
import { builtinDefinitions } from '../kube-schema/definitions.js';
import type { Schema } from '../schema.js';
import { clusterrolebindings, namespaces, serviceaccounts } from '../groups/index.js';
import type { ManagedFieldsEntry } from '../types.js';
import { FieldManager, type KubeJSON } from './managed-fields.js';

const defs = builtinDefinitions();
const fm = new FieldManager({ schema: serviceaccounts.schema, defs });
const T1 = '2024-01-01T00:00:01Z';
const T2 = '2024-01-01T00:00:02Z';
const T3 = '2024-01-01T00:00:03Z';

const body = (extra: KubeJSON = {}, meta: KubeJSON = {}): KubeJSON => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'sa', namespace: 'default', ...meta },
  ...extra,
});
const meta = (o: KubeJSON): KubeJSON => o['metadata'] as KubeJSON;
const entries = (o: KubeJSON): ManagedFieldsEntry[] => (meta(o)['managedFields'] as ManagedFieldsEntry[] | undefined) ?? [];
const entry = (o: KubeJSON, manager: string, op = 'Apply'): ManagedFieldsEntry | undefined => entries(o).find((e) => e.manager === manager && e.operation === op);
const apply = (live: KubeJSON | undefined, b: KubeJSON, manager: string, force = false, time = T2): KubeJSON =>
  fm.apply(live, b, { manager, apiVersion: 'v1', time, force });
/** An object alice created by a plain create (Update), as stored (uid etc. set). */
const created = (): KubeJSON =>
  fm.update(undefined, body({ automountServiceAccountToken: true }, { uid: 'u-1', labels: { a: '1', keep: 'k' } }), { manager: 'alice', apiVersion: 'v1', time: T1 });

function catchStatus(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  assert.fail('expected a StatusError');
}

describe('apply: create and basic ownership', () => {
  it('creates by apply: the Apply entry is exactly the applied fields minus the strip set, with time', () => {
    const out = apply(undefined, body({ secrets: [{ name: 's1' }] }, { labels: { app: 'web' }, finalizers: ['example.com/f'] }), 'kubectl');
    assert.deepEqual(out['secrets'], [{ name: 's1' }]);
    assert.deepEqual(meta(out)['labels'], { app: 'web' });
    assert.deepEqual(entries(out), [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: T2,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:finalizers': { 'v:"example.com/f"': {} }, 'f:labels': { 'f:app': {} } },
          'f:secrets': { 'k:{"name":"s1"}': {} },
        },
      },
    ]);
  });

  it('rejects managedFields in the body and a wrong apiVersion with 400', () => {
    const e1 = catchStatus(() => apply(undefined, body({}, { managedFields: [] }), 'x'));
    assert.equal(e1.code, 400);
    assert.equal(e1.reason, 'BadRequest');
    assert.equal(e1.message, 'metadata.managedFields must be nil');
    const e2 = catchStatus(() => apply(undefined, { ...body(), apiVersion: 'v2' }, 'x'));
    assert.equal(e2.message, 'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1');
  });

  it('an applied list element without its key field is 400, not a server error', () => {
    for (const element of [{}, { namespace: 'x' }]) {
      const e = catchStatus(() => apply(undefined, body({ secrets: [element] }), 'x'));
      assert.equal(e.code, 400);
      assert.equal(e.reason, 'BadRequest');
      assert.equal(e.message, 'failed to create typed patch object: .secrets: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)');
    }
  });

  it('a no-op apply keeps the object and does not restamp time', () => {
    const v1 = apply(undefined, body({}, { labels: { a: '1' } }), 'ctl', false, T1);
    const v2 = apply(v1, body({}, { labels: { a: '1' } }), 'ctl', false, T3);
    assert.equal(entry(v2, 'ctl')?.time, T1);
    assert.deepEqual(meta(v2)['labels'], { a: '1' });
  });
});

describe('apply: conflicts and their three resolutions', () => {
  it('fails with 409 Conflict worded as kube, one FieldManagerConflict cause per field', () => {
    const e = catchStatus(() => apply(created(), body({}, { labels: { a: '2' } }), 'bob'));
    assert.equal(e.code, 409);
    assert.equal(e.reason, 'Conflict');
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "alice" using v1: .metadata.labels.a');
    assert.deepEqual(e.details, { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice" using v1', field: '.metadata.labels.a' }] });
    assert.deepEqual(e.toStatus().details, e.details);
  });

  it('lists several conflicts grouped by manager', () => {
    let live = created();
    live = apply(live, body({}, { annotations: { n: '1' } }), 'carol');
    const e = catchStatus(() => apply(live, body({ automountServiceAccountToken: false }, { labels: { a: '2' }, annotations: { n: '2' } }), 'bob'));
    assert.equal(
      e.message,
      'Apply failed with 3 conflicts: conflicts with "alice" using v1:\n- .automountServiceAccountToken\n- .metadata.labels.a\nconflicts with "carol":\n- .metadata.annotations.n',
    );
    assert.deepEqual(
      e.details?.causes?.map((c) => [c.message, c.field]),
      [
        ['conflict with "alice" using v1', '.automountServiceAccountToken'],
        ['conflict with "alice" using v1', '.metadata.labels.a'],
        ['conflict with "carol"', '.metadata.annotations.n'],
      ],
    );
  });

  it('overwrite: force makes the applier sole owner and removes the field from the others', () => {
    const out = apply(created(), body({}, { labels: { a: '2' } }), 'bob', true);
    assert.deepEqual(meta(out)['labels'], { a: '2', keep: 'k' });
    assert.deepEqual(entry(out, 'bob')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:a': {} } } });
    assert.deepEqual(entry(out, 'alice', 'Update')?.fieldsV1, { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:keep': {} } } });
  });

  it('give up: dropping the field from the body leaves the value and the other owner in place', () => {
    const out = apply(created(), body({}, { labels: { b: 'new' } }), 'bob');
    assert.deepEqual(meta(out)['labels'], { a: '1', keep: 'k', b: 'new' });
    assert.deepEqual(entry(out, 'bob')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:b': {} } } });
    assert.ok(JSON.stringify(entry(out, 'alice', 'Update')?.fieldsV1).includes('f:a'));
  });

  it('share: applying the live value makes both managers owners', () => {
    const out = apply(created(), body({}, { labels: { a: '1' } }), 'bob');
    assert.deepEqual(entry(out, 'bob')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:a': {} } } });
    assert.ok(JSON.stringify(entry(out, 'alice', 'Update')?.fieldsV1).includes('f:a'));
    // The object did not change, so kube's managedFieldsUpdater stamps no time on bob's new entry.
    assert.equal(entry(out, 'bob')?.time, undefined);
    // bob may now change it only with force, since alice still owns it.
    assert.equal(catchStatus(() => apply(out, body({}, { labels: { a: '3' } }), 'bob')).code, 409);
  });

  it('an object without managedFields attributes existing fields to before-first-apply', () => {
    const live = body({}, { uid: 'u', labels: { a: '1' } });
    const e = catchStatus(() => apply(live, body({}, { labels: { a: '2' } }), 'bob'));
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .metadata.labels.a');
  });
});

describe('apply: removing what the applier no longer applies', () => {
  it('removes a field it alone owned; keeps a field another manager also owns', () => {
    let o = apply(undefined, body({ automountServiceAccountToken: true }, { labels: { x: '1', y: '2' } }), 'bob', false, T1);
    o = apply(o, body({}, { labels: { x: '1' } }), 'bob');
    assert.deepEqual(meta(o)['labels'], { x: '1' });
    assert.equal(o['automountServiceAccountToken'], undefined);
    assert.deepEqual(entry(o, 'bob')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:x': {} } } });
    // carol shares x (applies the same value); bob dropping x keeps it.
    o = apply(o, body({}, { labels: { x: '1' } }), 'carol');
    o = apply(o, body({}, { annotations: { n: '1' } }), 'bob');
    assert.deepEqual(meta(o)['labels'], { x: '1' });
    assert.deepEqual(entry(o, 'bob')?.fieldsV1, { 'f:metadata': { 'f:annotations': { 'f:n': {} } } });
  });

  it('keeps a field an updater changed after the apply', () => {
    let o = apply(undefined, body({}, { labels: { x: '1', y: '2' } }), 'bob', false, T1);
    o = fm.update(o, body({}, { labels: { x: '1', y: 'edited' }, managedFields: entries(o) }), { manager: 'kubectl-edit', apiVersion: 'v1', time: T2 });
    o = apply(o, body({}, { labels: { x: '1' } }), 'bob', false, T3);
    assert.deepEqual(meta(o)['labels'], { x: '1', y: 'edited' });
  });

  it('removes map-list items and set items that are no longer applied', () => {
    let o = apply(undefined, body({ secrets: [{ name: 's1' }, { name: 's2' }] }, { finalizers: ['a.io/x', 'a.io/y'] }), 'bob', false, T1);
    o = apply(o, body({ secrets: [{ name: 's2' }] }, { finalizers: ['a.io/y'] }), 'bob');
    assert.deepEqual(o['secrets'], [{ name: 's2' }]);
    assert.deepEqual(meta(o)['finalizers'], ['a.io/y']);
    assert.deepEqual(entry(o, 'bob')?.fieldsV1, { 'f:metadata': { 'f:finalizers': { 'v:"a.io/y"': {} } }, 'f:secrets': { 'k:{"name":"s2"}': {} } });
  });

  it('merges map-list items by key and keeps items other managers own', () => {
    let o = apply(undefined, body({ secrets: [{ name: 's1' }] }), 'bob', false, T1);
    o = apply(o, body({ secrets: [{ name: 's2' }] }), 'carol');
    assert.deepEqual(o['secrets'], [{ name: 's1' }, { name: 's2' }]);
    o = apply(o, body({ secrets: [{ name: 's3' }] }), 'bob');
    assert.deepEqual(o['secrets'], [{ name: 's2' }, { name: 's3' }]);
  });

  it('tracks fields inside granular map-list items (Namespace status.conditions, merge key type)', () => {
    const nsFM = new FieldManager({ schema: namespaces.schema, defs, emptyObject: { spec: {}, status: {} } });
    const ns = (conds: KubeJSON[]): KubeJSON => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, status: { conditions: conds } });
    let o = nsFM.apply(undefined, ns([{ type: 'A', status: 'True', reason: 'r' }]), { manager: 'ctl', apiVersion: 'v1', time: T1, force: false });
    assert.deepEqual(entries(o)[0]?.fieldsV1, { 'f:status': { 'f:conditions': { 'k:{"type":"A"}': { '.': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} } } } });
    o = nsFM.apply(o, ns([{ type: 'A', status: 'True' }]), { manager: 'ctl', apiVersion: 'v1', time: T2, force: false });
    assert.deepEqual((o['status'] as KubeJSON)['conditions'], [{ type: 'A', status: 'True' }]);
  });
});

describe('apply: atomic lists (ClusterRoleBinding subjects)', () => {
  const crbFM = new FieldManager({ schema: clusterrolebindings.schema, defs });
  const crb = (subjects: KubeJSON[]): KubeJSON => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'b' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects,
  });
  const opts = (manager: string, force = false): { manager: string; apiVersion: string; time: string; force: boolean } => ({
    manager,
    apiVersion: 'rbac.authorization.k8s.io/v1',
    time: T2,
    force,
  });
  const u = (name: string): KubeJSON => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });

  it('owns and replaces the list as a whole', () => {
    const o = crbFM.apply(undefined, crb([u('a'), u('b')]), opts('alice'));
    assert.deepEqual(entries(o)[0]?.fieldsV1, { 'f:roleRef': {}, 'f:subjects': {} });
    const e = catchStatus(() => crbFM.apply(o, crb([u('c')]), opts('bob')));
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "alice": .subjects');
    const forced = crbFM.apply(o, crb([u('c')]), opts('bob', true));
    assert.deepEqual(forced['subjects'], [u('c')]);
    assert.deepEqual(entry(forced, 'alice')?.fieldsV1, { 'f:roleRef': {} });
    assert.deepEqual(entry(forced, 'bob')?.fieldsV1, { 'f:roleRef': {}, 'f:subjects': {} });
  });
});

describe('reset fields (status on the main resource)', () => {
  const nsFM = new FieldManager({ schema: namespaces.schema, defs, emptyObject: { spec: {}, status: {} }, resetFields: [['status']] });
  it('neither apply nor update takes ownership of reset fields', () => {
    const o = nsFM.apply(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { a: 'b' } }, status: { phase: 'Active' } }, { manager: 'ctl', apiVersion: 'v1', time: T1, force: false });
    assert.deepEqual(entries(o)[0]?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:a': {} } } });
    const u = nsFM.update(o, { ...structuredClone(o), status: { phase: 'Terminating' } }, { manager: 'other', apiVersion: 'v1', time: T2 });
    assert.equal(entry(u, 'other', 'Update'), undefined);
  });
});
