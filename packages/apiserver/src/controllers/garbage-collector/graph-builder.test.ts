import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OwnerReference, StoredObject } from '@plinth/api';
import { GraphBuilder, eventOf } from './graph-builder.js';
import type { Identity } from './graph.js';

function recorder(): { builder: GraphBuilder; del: string[]; limited: string[]; orphan: string[]; warnings: { object: Identity; reason: string; message: string }[] } {
  const r = { del: [] as string[], limited: [] as string[], orphan: [] as string[], warnings: [] as { object: Identity; reason: string; message: string }[] };
  const builder = new GraphBuilder({
    attemptToDelete: (uid) => r.del.push(uid),
    attemptToDeleteRateLimited: (uid) => r.limited.push(uid),
    attemptToOrphan: (uid) => r.orphan.push(uid),
    warn: (object, reason, message) => r.warnings.push({ object, reason, message }),
  });
  return { builder, ...r };
}

const cm = (name: string, uid: string, namespace: string, extra: { owners?: OwnerReference[]; finalizers?: string[]; deleting?: boolean } = {}): StoredObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, uid, namespace, ...(extra.owners ? { ownerReferences: extra.owners } : {}), ...(extra.finalizers ? { finalizers: extra.finalizers } : {}), ...(extra.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
});
const ref = (name: string, uid: string, block = false): OwnerReference => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid, ...(block ? { blockOwnerDeletion: true } : {}) });
const add = (b: GraphBuilder, o: StoredObject, type: 'add' | 'update' | 'delete' = 'add'): void => b.process(eventOf(type, o, 'v1', 'ConfigMap'));

test('an owner only named by a reference becomes a virtual node in the dependent\'s namespace, checked by a worker; seen, it is observed', () => {
  const { builder, del } = recorder();
  add(builder, cm('dep', 'd1', 'ns', { owners: [ref('owner', 'o1')] }));
  const owner = builder.graph.get('o1')!;
  assert.equal(owner.virtual, true);
  assert.deepEqual(owner.identity, { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o1', namespace: 'ns' });
  assert.deepEqual(del, ['o1']);
  add(builder, cm('owner', 'o1', 'ns'));
  assert.equal(builder.graph.get('o1')!.virtual, false);
  assert.equal(builder.graph.get('o1')!.dependents.size, 1);
});

test('an object first seen deleting with foregroundDeletion (a new leader) waits for its dependents: they and it are queued', () => {
  const { builder, del } = recorder();
  add(builder, cm('dep', 'd1', 'ns', { owners: [ref('owner', 'o1', true)] }));
  del.length = 0;
  add(builder, cm('owner', 'o1', 'ns', { finalizers: ['foregroundDeletion'], deleting: true }));
  assert.equal(builder.graph.get('o1')!.deletingDependents, true);
  assert.deepEqual(del.sort(), ['d1', 'o1']);
  assert.deepEqual(builder.graph.get('o1')!.blockingDependents().map((n) => n.identity.uid), ['d1']);
});

test('an orphan deletion is queued once, when it starts', () => {
  const { builder, orphan } = recorder();
  add(builder, cm('owner', 'o1', 'ns'));
  add(builder, cm('owner', 'o1', 'ns', { finalizers: ['orphan'], deleting: true }), 'update');
  add(builder, cm('owner', 'o1', 'ns', { finalizers: ['orphan', 'x'], deleting: true }), 'update');
  assert.deepEqual(orphan, ['o1']);
});

test("a known owner in another namespace: kube's OwnerRefInvalidNamespace warning on the dependent, which is queued", () => {
  const { builder, del, warnings } = recorder();
  add(builder, cm('owner', 'o1', 'a'));
  add(builder, cm('dep', 'd1', 'b', { owners: [ref('owner', 'o1')] }));
  assert.deepEqual(del, ['d1']);
  assert.deepEqual(warnings, [
    {
      object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'dep', uid: 'd1', namespace: 'b' },
      reason: 'OwnerRefInvalidNamespace',
      message: 'ownerRef [v1/ConfigMap, namespace: b, name: owner, uid: o1] does not exist in namespace "b"',
    },
  ]);
});

test('a deleted owner is remembered as absent and its dependents queued; a dependent dropping a blocking reference queues the owner', () => {
  const { builder, del } = recorder();
  add(builder, cm('owner', 'o1', 'ns'));
  add(builder, cm('dep', 'd1', 'ns', { owners: [ref('owner', 'o1', true)] }));
  add(builder, cm('dep', 'd1', 'ns'), 'update');
  assert.deepEqual(del, ['o1'], 'the owner re-checks once no longer blocked');
  assert.equal(builder.graph.get('o1')!.dependents.size, 0);
  add(builder, cm('dep2', 'd2', 'ns', { owners: [ref('owner', 'o1')] }));
  del.length = 0;
  add(builder, cm('owner', 'o1', 'ns'), 'delete');
  assert.equal(builder.graph.get('o1'), undefined);
  assert.deepEqual(del, ['d2']);
  assert.equal(builder.absentOwnerCache.has({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o1', namespace: 'ns' }), true);
});

test('a virtual owner verified absent under coordinates some dependents do not use stays, under the next coordinates', () => {
  const { builder, del, limited } = recorder();
  add(builder, cm('a', 'd1', 'ns', { owners: [ref('owner', 'o1')] }));
  add(builder, cm('b', 'd2', 'ns', { owners: [{ apiVersion: 'v2', kind: 'ConfigMap', name: 'owner', uid: 'o1' }] }));
  del.length = 0;
  builder.virtualDelete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o1', namespace: 'ns' });
  const n = builder.graph.get('o1')!;
  assert.equal(n.identity.apiVersion, 'v2', 'the other coordinates are checked next');
  assert.deepEqual(limited, ['o1']);
  assert.deepEqual(del, ['d1'], 'the dependent naming the absent coordinates is checked');
});

test('a relist forgets objects deleted while no watch was open', () => {
  const { builder, del } = recorder();
  add(builder, cm('owner', 'o1', 'ns'));
  add(builder, cm('dep', 'd1', 'ns', { owners: [ref('owner', 'o1')] }));
  del.length = 0;
  builder.replace('v1', 'ConfigMap', [cm('dep', 'd1', 'ns', { owners: [ref('owner', 'o1')] })]);
  assert.equal(builder.graph.get('o1'), undefined);
  assert.deepEqual(del, ['d1']);
});

test('an object with no owners, deletion or GC finalizer is held by its identity alone; its node is made when needed', () => {
  const { builder, del } = recorder();
  add(builder, cm('plain', 'p1', 'ns'));
  assert.deepEqual(builder.graph.plain('p1'), { apiVersion: 'v1', kind: 'ConfigMap', name: 'plain', uid: 'p1', namespace: 'ns' });
  assert.equal(builder.graph.size, 1);
  // Seen again unchanged: still no node.
  add(builder, cm('plain', 'p1', 'ns'), 'update');
  assert.ok(builder.graph.plain('p1'));
  // A dependent naming it makes its node (observed, not virtual: no worker is asked to check it).
  add(builder, cm('dep', 'd1', 'ns', { owners: [ref('plain', 'p1')] }));
  assert.equal(builder.graph.plain('p1'), undefined);
  const owner = builder.graph.get('p1')!;
  assert.equal(owner.virtual, false);
  assert.deepEqual([...owner.dependents].map((n) => n.identity.uid), ['d1']);
  assert.deepEqual(del, []);
  // Deleted, its dependent is queued as with any node.
  add(builder, cm('plain', 'p1', 'ns'), 'delete');
  assert.equal(builder.graph.get('p1'), undefined);
  assert.deepEqual(del, ['d1']);
});

test('a plain object that gains a GC finalizer while being deleted gets a node and its transition', () => {
  const { builder, orphan } = recorder();
  add(builder, cm('o', 'o1', 'ns'));
  assert.ok(builder.graph.plain('o1'));
  add(builder, cm('o', 'o1', 'ns', { finalizers: ['orphan'], deleting: true }), 'update');
  assert.equal(builder.graph.plain('o1'), undefined);
  assert.equal(builder.graph.get('o1')!.beingDeleted, true);
  assert.deepEqual(orphan, ['o1']);
});

test('a relist forgets plain objects missing from it, and keeps those in it', () => {
  const { builder } = recorder();
  add(builder, cm('a', 'a1', 'ns'));
  add(builder, cm('b', 'b1', 'ns'));
  builder.replace('v1', 'ConfigMap', [cm('a', 'a1', 'ns')]);
  assert.ok(builder.graph.plain('a1'));
  assert.equal(builder.graph.get('b1'), undefined);
  assert.equal(builder.graph.size, 1);
});

test('a verified-absent (virtual) delete of a plain object with other coordinates leaves it', () => {
  const { builder } = recorder();
  add(builder, cm('a', 'a1', 'ns'));
  builder.virtualDelete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'a1', namespace: 'ns' });
  assert.equal(builder.graph.get('a1')!.identity.name, 'a');
  builder.virtualDelete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'a1', namespace: 'ns' });
  assert.equal(builder.graph.get('a1'), undefined);
});
