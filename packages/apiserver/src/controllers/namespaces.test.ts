import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namespaceConditions } from './namespaces.js';

test("kube's five deletion conditions: sorted remaining resources and finalizers, counted errors", () => {
  const cs = namespaceConditions({
    remaining: new Map([['widgets.example.com', 2], ['configmaps.', 1]]),
    finalizers: new Map([['example.com/b', 1], ['example.com/a', 2]]),
    errors: ['unexpected items still remain in namespace: team for gvr: v1, Resource=secrets'],
  });
  assert.deepEqual(cs.map((c) => c.type), ['NamespaceDeletionDiscoveryFailure', 'NamespaceDeletionGroupVersionParsingFailure', 'NamespaceDeletionContentFailure', 'NamespaceContentRemaining', 'NamespaceFinalizersRemaining']);
  assert.equal(cs[2]!.message, 'Failed to delete all resource types, 1 remaining: unexpected items still remain in namespace: team for gvr: v1, Resource=secrets');
  assert.equal(cs[3]!.message, 'Some resources are remaining: configmaps. has 1 resource instances, widgets.example.com has 2 resource instances');
  assert.equal(cs[4]!.message, 'Some content in the namespace has finalizers remaining: example.com/a in 2 resource instances, example.com/b in 1 resource instances');
  const done = namespaceConditions({ remaining: new Map(), finalizers: new Map(), errors: [] });
  assert.deepEqual(done.map((c) => `${c.status}/${c.reason}`), ['False/ResourcesDiscovered', 'False/ParsedGroupVersions', 'False/ContentDeleted', 'False/ContentRemoved', 'False/ContentHasNoFinalizers']);
});
