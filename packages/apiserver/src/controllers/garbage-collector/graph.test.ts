import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbsentOwnerCache, GraphNode, alternateOwnerIdentity, identityString, partitionDependents, referencesDiffs, type Identity } from './graph.js';

const id = (over: Partial<Identity> = {}): Identity => ({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u', namespace: 'ns', ...over });

test("identityString is kube's objectReference.String()", () => {
  assert.equal(identityString(id()), '[v1/ConfigMap, namespace: ns, name: owner, uid: u]');
});

test('partitionDependents: same coordinates and namespace match; another namespace or other coordinates do not', () => {
  const dep = (name: string, namespace: string, apiVersion = 'v1'): GraphNode => new GraphNode({ identity: id({ name, uid: name, namespace }), virtual: false, owners: [{ apiVersion, kind: 'ConfigMap', name: 'owner', uid: 'u' }] });
  const same = dep('same', 'ns');
  const other = dep('other', 'elsewhere');
  const version = dep('version', 'ns', 'v2');
  const { matching, nonmatching } = partitionDependents([same, other, version], id());
  assert.deepEqual(matching, [same]);
  assert.deepEqual(nonmatching, [other, version]);
  // A cluster-scoped owner matches dependents of every namespace.
  assert.deepEqual(partitionDependents([other], id({ namespace: '' })).matching, [other]);
});

test('alternateOwnerIdentity: the next coordinates after the absent ones in kube\'s order, else the first', () => {
  const dep = (apiVersion: string): GraphNode => new GraphNode({ identity: id({ name: apiVersion, uid: apiVersion }), virtual: false, owners: [{ apiVersion, kind: 'ConfigMap', name: 'owner', uid: 'u' }] });
  const deps = [dep('v1'), dep('v0'), dep('v3')];
  assert.equal(alternateOwnerIdentity(deps, id({ apiVersion: 'v1' }))?.apiVersion, 'v3');
  assert.equal(alternateOwnerIdentity(deps, id({ apiVersion: 'v3' }))?.apiVersion, 'v0');
  assert.equal(alternateOwnerIdentity([dep('v1')], id({ apiVersion: 'v1' })), undefined);
});

test('referencesDiffs by UID', () => {
  const a = { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'a' };
  const b = { apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: 'b', blockOwnerDeletion: true };
  const b2 = { ...b, blockOwnerDeletion: false };
  const c = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c' };
  assert.deepEqual(referencesDiffs([a, b], [b2, c]), { added: [c], removed: [a], changed: [{ old: b, next: b2 }] });
});

test('AbsentOwnerCache forgets the least recently used beyond its size', () => {
  const cache = new AbsentOwnerCache(2);
  cache.add(id({ uid: '1' }));
  cache.add(id({ uid: '2' }));
  assert.equal(cache.has(id({ uid: '1' })), true);
  cache.add(id({ uid: '3' }));
  assert.equal(cache.has(id({ uid: '2' })), false);
  assert.equal(cache.has(id({ uid: '1' })), true);
  assert.equal(cache.has(id({ uid: '3' })), true);
});
