import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinDefinitions } from '../kube-schema/definitions.js';
import { clusterrolebindings, serviceaccounts } from '../groups/index.js';
import { type Schema, s } from '../schema.js';
import { PatchError } from './errors.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

// The schema of kube's patch_test.go `MergeItem` / `RetainKeysMergeItem`.
const merge = (mergeKey?: string): Partial<Schema> => ({
  'x-kubernetes-patch-strategy': 'merge',
  ...(mergeKey ? { 'x-kubernetes-patch-merge-key': mergeKey } : {}),
});
const testDefs = new Map<string, Schema>([
  [
    'MergeItem',
    s.obj({
      name: s.str(),
      value: s.str(),
      other: s.str(),
      mergingList: s.arr(s.ref('MergeItem'), merge('name')),
      nonMergingList: s.arr(s.ref('MergeItem')),
      mergingIntList: s.arr(s.int(), merge()),
      nonMergingIntList: s.arr(s.int()),
      mergeItemPtr: s.arr(s.ref('MergeItem'), merge('name')),
      simpleMap: s.map(s.str()),
      replacingItem: { ...s.any(), 'x-kubernetes-patch-strategy': 'replace' },
      retainKeysMap: { ...s.ref('RetainKeysMergeItem'), 'x-kubernetes-patch-strategy': 'retainKeys' },
      retainKeysMergingList: s.arr(s.ref('MergeItem'), { 'x-kubernetes-patch-strategy': 'merge,retainKeys', 'x-kubernetes-patch-merge-key': 'name' }),
    }),
  ],
  [
    'RetainKeysMergeItem',
    s.obj({
      name: s.str(),
      value: s.str(),
      other: s.str(),
      simpleMap: s.map(s.str()),
      mergingIntList: s.arr(s.int(), merge()),
      mergingList: s.arr(s.ref('MergeItem'), merge('name')),
      nonMergingList: s.arr(s.ref('MergeItem')),
    }),
  ],
]);
const mergeItem = s.ref('MergeItem');
const smp = (original: unknown, patch: unknown): unknown => applyStrategicMergePatch(original, patch, mergeItem, testDefs);

function patchError(fn: () => unknown, code: number, message: string | RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof PatchError, `expected a PatchError, got ${String(e)}`);
    assert.equal(e.code, code);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

type Case = [description: string, original: unknown, patch: unknown, result: unknown];

// Cases of kube's patch_test.go: original (or current) + patch (two-way or three-way) = result.
const kubeCases: Case[] = [
  ['unique scalars when merging lists', { mergingIntList: [1, 2] }, { mergingIntList: [2, 3] }, { mergingIntList: [1, 2, 3] }],
  ['delete map from nested map', { simpleMap: { key1: 1, key2: 1 } }, { simpleMap: { $patch: 'delete' } }, { simpleMap: {} }],
  ['delete all items from merging list', { mergingList: [{ name: 1 }, { name: 2 }] }, { mergingList: [{ $patch: 'replace' }] }, { mergingList: [] }],
  ['merge empty merging lists', { mergingList: [] }, { mergingList: [] }, { mergingList: [] }],
  ['delete all keys from map', { name: 1, value: 1 }, { $patch: 'replace' }, {}],
  ['add key and delete all keys from map', { name: 1, value: 1 }, { other: 'a', $patch: 'replace' }, { other: 'a' }],
  [
    'delete all duplicate entries in a merging list',
    { mergingList: [{ name: 1 }, { name: 1 }, { name: 2, value: 'a' }, { name: 3 }, { name: 3 }] },
    { mergingList: [{ name: 1, $patch: 'delete' }, { name: 3, $patch: 'delete' }] },
    { mergingList: [{ name: 2, value: 'a' }] },
  ],
  ['retainKeys map can add a field when no retainKeys directive present', { retainKeysMap: { name: 'foo' } }, { retainKeysMap: { value: 'bar' } }, { retainKeysMap: { name: 'foo', value: 'bar' } }],
  ['retainKeys map can delete a field when no retainKeys directive present', { retainKeysMap: { name: 'foo', value: 'a' } }, { retainKeysMap: { value: null } }, { retainKeysMap: { name: 'foo' } }],
  ['retainKeys map merge an empty map', { retainKeysMap: { name: 'foo', value: 'a' } }, { retainKeysMap: {} }, { retainKeysMap: { name: 'foo', value: 'a' } }],
  [
    'retainKeys list can change a field when no retainKeys directive present',
    { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a' }] },
    { retainKeysMergingList: [{ name: 'foo', value: 'b' }] },
    { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'b' }] },
  ],
  [
    'preserve the order from the patch in a merging list',
    { mergingList: [{ name: 1 }, { name: 2, value: 'b' }, { name: 3 }] },
    { mergingList: [{ name: 3, value: 'c' }, { name: 1, value: 'a' }, { name: 2, other: 'x' }] },
    { mergingList: [{ name: 3, value: 'c' }, { name: 1, value: 'a' }, { name: 2, value: 'b', other: 'x' }] },
  ],
  [
    'preserve the order from the patch in a merging list 2',
    { mergingList: [{ name: 1 }, { name: 2, value: 'b' }, { name: 3 }] },
    { mergingList: [{ name: 3, value: 'c' }, { name: 1, value: 'a' }] },
    { mergingList: [{ name: 2, value: 'b' }, { name: 3, value: 'c' }, { name: 1, value: 'a' }] },
  ],
  ['preserve the order from the patch in a merging int list', { mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1, 2] }, { mergingIntList: [3, 1, 2] }],
  ['preserve the order from the patch in a merging int list 2', { mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1] }, { mergingIntList: [2, 3, 1] }],
  [
    '$setElementOrder contains item that is not present in the list to be merged',
    { mergingList: [{ name: 1 }, { name: 3 }] },
    { '$setElementOrder/mergingList': [{ name: 3 }, { name: 2 }, { name: 1 }], mergingList: [{ name: 3, value: 3 }, { name: 1, value: 1 }] },
    { mergingList: [{ name: 3, value: 3 }, { name: 1, value: 1 }] },
  ],
  ['$setElementOrder contains item that is not present in the int list', { mergingIntList: [1, 3] }, { '$setElementOrder/mergingIntList': [3, 2, 1] }, { mergingIntList: [3, 1] }],
  ['$deleteFromPrimitiveList of nonexistent item', { mergingIntList: [1, 2] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [1, 2] }],
  ['$deleteFromPrimitiveList on empty primitive list', { mergingIntList: null }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: null }],
  ['$deleteFromPrimitiveList on nonexistent primitive list', { foo: ['bar'] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { foo: ['bar'] }],
  ['$deleteFromPrimitiveList deletes from a merging list', { mergingIntList: [1, 2, 3] }, { '$deleteFromPrimitiveList/mergingIntList': [2] }, { mergingIntList: [1, 3] }],
  // 1.24 behaviour (kubernetes#110472 changed it in 1.25 to delete): the list is replaced.
  ['$deleteFromPrimitiveList on a non-merging list (1.24)', { nonMergingIntList: [1, 2, 3] }, { '$deleteFromPrimitiveList/nonMergingIntList': [2] }, { nonMergingIntList: [2] }],
  ['nil original', {}, { name: 1, value: 1 }, { name: 1, value: 1 }],
  ['add field and delete field from map', { name: 1, other: 'a' }, { name: null, value: 1 }, { value: 1, other: 'a' }],
  ['delete field from nested map', { simpleMap: { key1: 1, key2: 1, other: 'a' } }, { simpleMap: { key2: null } }, { simpleMap: { key1: 1, other: 'a' } }],
  ['replace list of scalars', { nonMergingIntList: [1, 2] }, { nonMergingIntList: [2, 3] }, { nonMergingIntList: [2, 3] }],
  ['null for an absent key is ignored', { name: 2 }, { name: 1, value: 1, other: null }, { name: 1, value: 1 }],
  [
    'delete all maps from merging list',
    { mergingList: [{ name: 1, other: 'a' }, { name: 2, other: 'b' }] },
    { mergingList: [{ name: 1, $patch: 'delete' }, { name: 2, $patch: 'delete' }] },
    { mergingList: [] },
  ],
  [
    'delete all maps from empty merging list',
    { mergingList: [] },
    { mergingList: [{ name: 1, $patch: 'delete' }, { name: 2, $patch: 'delete' }] },
    { mergingList: [] },
  ],
  [
    'nested patch merge with empty list (three-way)',
    { name: 'hi', mergingList: [{ name: 'hello2' }] },
    { '$setElementOrder/mergingList': [{ name: 'hello' }, { name: 'doesntexist' }], mergingList: [{ name: 'hello' }, { $patch: 'delete', name: 'doesntexist' }] },
    { name: 'hi', mergingList: [{ name: 'hello' }, { name: 'hello2' }] },
  ],
  [
    'delete items in lists of scalars',
    { mergingIntList: [1, 2, 3, 4] },
    { '$setElementOrder/mergingIntList': [1, 2], '$deleteFromPrimitiveList/mergingIntList': [3] },
    { mergingIntList: [1, 2, 4] },
  ],
  [
    'add and delete items in lists of scalars',
    { mergingIntList: [1, 2, 3] },
    { '$setElementOrder/mergingIntList': [1, 2, 4], '$deleteFromPrimitiveList/mergingIntList': [3], mergingIntList: [4] },
    { mergingIntList: [1, 2, 4] },
  ],
  [
    'merge lists of maps',
    { mergingList: [{ name: 1, other: 'a' }, { name: 2, value: 2, other: 'b' }] },
    { '$setElementOrder/mergingList': [{ name: 4 }, { name: 1 }, { name: 2 }, { name: 3 }], mergingList: [{ name: 4, value: 4 }, { name: 3, value: 3 }] },
    { mergingList: [{ name: 4, value: 4 }, { name: 1, other: 'a' }, { name: 2, value: 2, other: 'b' }, { name: 3, value: 3 }] },
  ],
  [
    'add map and delete map from merging list',
    { mergingList: [{ name: 1 }, { name: 2, other: 'b' }, { name: 4, other: 'c' }] },
    { '$setElementOrder/mergingList': [{ name: 2 }, { name: 3 }], mergingList: [{ name: 3 }, { name: 1, $patch: 'delete' }] },
    { mergingList: [{ name: 2, other: 'b' }, { name: 4, other: 'c' }, { name: 3 }] },
  ],
  [
    'add map and delete map from merging list with conflict',
    { mergingList: [{ name: 1, other: 'a' }, { name: 4, other: 'c' }] },
    { '$setElementOrder/mergingList': [{ name: 2 }, { name: 3 }], mergingList: [{ name: 2 }, { name: 3 }, { name: 1, $patch: 'delete' }] },
    { mergingList: [{ name: 4, other: 'c' }, { name: 2 }, { name: 3 }] },
  ],
  [
    'delete missing map from merging list with conflict',
    { mergingList: [{ name: 3, other: 'a' }] },
    { '$setElementOrder/mergingList': [{ name: 2 }], mergingList: [{ name: 2 }, { name: 1, $patch: 'delete' }] },
    { mergingList: [{ name: 2 }, { name: 3, other: 'a' }] },
  ],
  [
    'replace non merging list nested in merging list',
    { mergingList: [{ name: 1, other: 'a', nonMergingList: [{ name: 1 }, { name: 2, value: 2 }] }, { name: 2, other: 'b' }] },
    { '$setElementOrder/mergingList': [{ name: 1 }, { name: 2 }], mergingList: [{ name: 1, nonMergingList: [{ name: 1, value: 1 }] }] },
    { mergingList: [{ name: 1, other: 'a', nonMergingList: [{ name: 1, value: 1 }] }, { name: 2, other: 'b' }] },
  ],
  [
    'retainKeys map deletes nested non-merging list',
    { retainKeysMap: { name: 'foo', nonMergingList: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } },
    { retainKeysMap: { $retainKeys: ['name', 'value'], value: 'bar', nonMergingList: null } },
    { retainKeysMap: { name: 'foo', value: 'bar' } },
  ],
  [
    'retainKeys map adds an item in nested merging int list',
    { retainKeysMap: { name: 'foo', mergingIntList: [1, 2, 3] } },
    { retainKeysMap: { '$setElementOrder/mergingIntList': [1, 2, 4], $retainKeys: ['mergingIntList', 'name'], mergingIntList: [4] } },
    { retainKeysMap: { name: 'foo', mergingIntList: [1, 2, 4, 3] } },
  ],
  [
    'retainKeys map adds an item and deletes an item in nested merging int list',
    { retainKeysMap: { name: 'foo', mergingIntList: [1, 2, 3, 4] } },
    {
      retainKeysMap: {
        $retainKeys: ['mergingIntList', 'name'],
        mergingIntList: [5],
        '$deleteFromPrimitiveList/mergingIntList': [2],
        '$setElementOrder/mergingIntList': [1, 3, 5],
      },
    },
    { retainKeysMap: { name: 'foo', mergingIntList: [1, 3, 5, 4] } },
  ],
  [
    'retainKeys map deletes an item in nested merging list',
    { retainKeysMap: { name: 'foo', mergingList: [{ name: 'a' }, { name: 'b' }, { name: 'x' }] } },
    { retainKeysMap: { $retainKeys: ['mergingList', 'name'], '$setElementOrder/mergingList': [{ name: 'a' }], mergingList: [{ name: 'b', $patch: 'delete' }] } },
    { retainKeysMap: { name: 'foo', mergingList: [{ name: 'a' }, { name: 'x' }] } },
  ],
  [
    'retainKeys list of maps deletes a field and clears a field',
    { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a', other: 'x' }] },
    { '$setElementOrder/retainKeysMergingList': [{ name: 'bar' }, { name: 'foo' }], retainKeysMergingList: [{ $retainKeys: ['name'], name: 'foo', value: null }] },
    { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo' }] },
  ],
  [
    'delete and reorder in one list, reorder in another',
    { mergingList: [{ name: 'a', value: 'a' }, { name: 'b', value: 'b' }], mergeItemPtr: [{ name: 'c', value: 'c' }, { name: 'd', value: 'd' }] },
    {
      '$setElementOrder/mergingList': [{ name: 'b' }],
      '$setElementOrder/mergeItemPtr': [{ name: 'd' }, { name: 'c' }],
      mergingList: [{ $patch: 'delete', name: 'a' }],
    },
    { mergingList: [{ name: 'b', value: 'b' }], mergeItemPtr: [{ name: 'd', value: 'd' }, { name: 'c', value: 'c' }] },
  ],
];

describe('applyStrategicMergePatch: cases from kube patch_test.go', () => {
  for (const [description, original, patch, result] of kubeCases) {
    it(description, () => assert.deepEqual(smp(original, patch), result));
  }

  it('errors: $setElementOrder and patch list disagree', () => {
    const patch = { '$setElementOrder/mergingList': [{ name: 1 }, { name: 2 }, { name: 3 }], mergingList: [{ name: 3, value: 3 }, { name: 1, value: 1 }] };
    patchError(() => smp({ mergingList: [{ name: 1 }, { name: 3 }, { name: 2 }] }, patch), 500, /doesn't match \$setElementOrder list/);
    patchError(() => smp({ mergingIntList: [1, 3, 2] }, { '$setElementOrder/mergingIntList': [1, 2, 3], mergingIntList: [3, 1] }), 500, /doesn't match/);
  });

  it('errors: missing merge key', () => {
    patchError(() => smp({ mergingList: [{ name: 1, value: 'a' }] }, { mergingList: [{ value: 'b' }] }), 500, 'map: map[value:b] does not contain declared merge key: name');
  });
});

describe('applyStrategicMergePatch: directives and errors', () => {
  it('replace strategy replaces a map wholesale', () => {
    assert.deepEqual(smp({ replacingItem: { a: 1, b: { c: 1 } } }, { replacingItem: { b: { d: 2 } } }), { replacingItem: { b: { d: 2 } } });
  });

  it('$patch: replace inside a nested map', () => {
    assert.deepEqual(smp({ simpleMap: { a: '1', b: '2' }, name: 'n' }, { simpleMap: { $patch: 'replace', c: '3' } }), { simpleMap: { c: '3' }, name: 'n' });
  });

  it('$retainKeys clears keys not listed', () => {
    const got = smp({ retainKeysMap: { name: 'foo', value: 'a', other: 'b' } }, { retainKeysMap: { $retainKeys: ['name', 'other'], other: 'c' } });
    assert.deepEqual(got, { retainKeysMap: { name: 'foo', other: 'c' } });
  });

  it('directives never appear in the output, even in values the original lacks', () => {
    const got = smp(
      { name: 'x' },
      { mergingList: [{ name: 'a', '$setElementOrder/mergingList': [], mergingList: [{ name: 'z', $patch: 'delete' }] }], simpleMap: { $patch: 'replace', k: 'v' } },
    );
    assert.deepEqual(got, { name: 'x', mergingList: [{ name: 'a', mergingList: [{ name: 'z' }] }], simpleMap: { k: 'v' } });
  });

  it('unknown fields merge like maps, their lists are replaced', () => {
    const got = smp({ extra: { a: 1, l: [1, 2], m: { x: 1 } } }, { extra: { b: 2, l: [3], m: { y: 2 } } });
    assert.deepEqual(got, { extra: { a: 1, b: 2, l: [3], m: { x: 1, y: 2 } } });
  });

  it('a value of another JSON type replaces the original', () => {
    assert.deepEqual(smp({ mergingList: [{ name: 1 }] }, { mergingList: { name: 1 } }), { mergingList: { name: 1 } });
  });

  it('a null patch changes nothing; a non-object patch is a 400', () => {
    assert.deepEqual(smp({ name: 1 }, null), { name: 1 });
    patchError(() => smp({}, [1]), 400, 'json: cannot unmarshal array into Go value of type map[string]interface {}');
    patchError(() => smp({}, 'x'), 400, 'json: cannot unmarshal string into Go value of type map[string]interface {}');
  });

  it('bad $patch values', () => {
    patchError(() => smp({ simpleMap: {} }, { simpleMap: { $patch: 'foo' } }), 500, 'unknown patch type: foo in map: map[$patch:foo]');
    patchError(() => smp({ mergingList: [{ name: 1 }] }, { mergingList: [{ name: 1, $patch: 'merge' }] }), 500, 'merging lists cannot yet be specified in the patch');
    patchError(() => smp({ mergingList: [{ name: 1 }] }, { mergingList: [{ name: 1, $patch: 'x' }] }), 500, 'unknown patch type: x in map: map[$patch:x name:1]');
    patchError(() => smp({ mergingList: [{ name: 1 }] }, { mergingList: [{ $patch: 'delete' }] }), 500, 'map: map[$patch:delete] does not contain declared merge key: name');
  });

  it('bad $retainKeys', () => {
    patchError(() => smp({ retainKeysMap: {} }, { retainKeysMap: { $retainKeys: 'name' } }), 400, 'invalid patch format of retainKeys');
    patchError(() => smp({ retainKeysMap: {} }, { retainKeysMap: { $retainKeys: ['name'], value: 'x' } }), 400, 'invalid patch format of retainKeys');
  });

  it('bad parallel list directives', () => {
    patchError(() => smp({}, { '$deleteFromPrimitiveListX/mergingIntList': [1] }), 400, 'invalid patch format of primitive list');
    patchError(() => smp({}, { $setElementOrderX: [1] }), 400, 'invalid patch format of setElementOrder list');
    patchError(() => smp({}, { '$setElementOrder/mergingList': { name: 1 } }), 500, 'expected a []interface {}, but received a map[string]interface {}');
  });

  it('lists of lists, and mixed element types', () => {
    patchError(() => smp({ mergingIntList: [[1]] }, { mergingIntList: [[2]] }), 422, 'lists of lists are not supported');
    patchError(() => smp({ mergingList: [{ name: 'a' }] }, { mergingList: ['a'] }), 500, 'list element types are not identical: [[map[name:a]] [a]]');
  });

  it('does not mutate its inputs', () => {
    const original = { mergingList: [{ name: 1, value: 'a' }, { name: 2 }], simpleMap: { a: '1' } };
    const patch = { '$setElementOrder/mergingList': [{ name: 2 }, { name: 1 }], mergingList: [{ name: 1, value: 'b' }, { name: 2, $patch: 'delete' }], simpleMap: { a: null } };
    const o0 = structuredClone(original);
    const p0 = structuredClone(patch);
    assert.deepEqual(smp(original, patch), { mergingList: [{ name: 1, value: 'b' }], simpleMap: {} });
    assert.deepEqual(original, o0);
    assert.deepEqual(patch, p0);
  });
});

describe('applyStrategicMergePatch: served kinds', () => {
  const defs = builtinDefinitions();
  const sa = serviceaccounts.schema;
  const crb = clusterrolebindings.schema;
  const base = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'ns', labels: { a: '1' }, finalizers: ['x/a'] }, secrets: [{ name: 'a' }] };

  it('ServiceAccount secrets merge by name: a new secret is added (kube puts it first)', () => {
    assert.deepEqual(applyStrategicMergePatch(base, { secrets: [{ name: 'b' }] }, sa, defs), { ...base, secrets: [{ name: 'b' }, { name: 'a' }] });
  });

  it('ServiceAccount secrets: $setElementOrder puts the new secret last', () => {
    const patch = { '$setElementOrder/secrets': [{ name: 'a' }, { name: 'b' }], secrets: [{ name: 'b' }] };
    assert.deepEqual(applyStrategicMergePatch(base, patch, sa, defs), { ...base, secrets: [{ name: 'a' }, { name: 'b' }] });
  });

  it('ServiceAccount secrets: $setElementOrder reorders existing secrets', () => {
    const two = { ...base, secrets: [{ name: 'a' }, { name: 'b' }] };
    assert.deepEqual(applyStrategicMergePatch(two, { '$setElementOrder/secrets': [{ name: 'b' }, { name: 'a' }] }, sa, defs), { ...base, secrets: [{ name: 'b' }, { name: 'a' }] });
  });

  it('ServiceAccount secrets: $patch delete removes by name', () => {
    const two = { ...base, secrets: [{ name: 'a' }, { name: 'b' }] };
    assert.deepEqual(applyStrategicMergePatch(two, { secrets: [{ name: 'a', $patch: 'delete' }] }, sa, defs), { ...base, secrets: [{ name: 'b' }] });
  });

  it('ServiceAccount secrets: $patch replace replaces the list', () => {
    const got = applyStrategicMergePatch(base, { secrets: [{ $patch: 'replace' }, { name: 'c' }] }, sa, defs);
    assert.deepEqual(got, { ...base, secrets: [{ name: 'c' }] });
  });

  it('ServiceAccount imagePullSecrets (no strategy) are replaced', () => {
    const o = { ...base, imagePullSecrets: [{ name: 'p' }] };
    assert.deepEqual(applyStrategicMergePatch(o, { imagePullSecrets: [{ name: 'q' }] }, sa, defs), { ...base, imagePullSecrets: [{ name: 'q' }] });
  });

  it('metadata: labels merge, null deletes, finalizers merge as a set', () => {
    const got = applyStrategicMergePatch(base, { metadata: { labels: { a: null, b: '2' }, finalizers: ['x/b', 'x/a'] } }, sa, defs);
    assert.deepEqual(got, { ...base, metadata: { ...base.metadata, labels: { b: '2' }, finalizers: ['x/b', 'x/a'] } });
  });

  it('metadata: $deleteFromPrimitiveList/finalizers', () => {
    const o = { ...base, metadata: { ...base.metadata, finalizers: ['x/a', 'x/b', 'x/c'] } };
    const got = applyStrategicMergePatch(o, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x/b'] } }, sa, defs);
    assert.deepEqual(got, { ...base, metadata: { ...base.metadata, finalizers: ['x/a', 'x/c'] } });
  });

  it('metadata: ownerReferences merge by uid', () => {
    const ref = (uid: string, name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });
    const o = { ...base, metadata: { ...base.metadata, ownerReferences: [ref('1', 'one')] } };
    const got = applyStrategicMergePatch(o, { metadata: { ownerReferences: [{ uid: '1', controller: true }, ref('2', 'two')] } }, sa, defs);
    assert.deepEqual(got, { ...base, metadata: { ...base.metadata, ownerReferences: [{ ...ref('1', 'one'), controller: true }, ref('2', 'two')] } });
  });

  it('a secret reference without a name cannot be merged', () => {
    patchError(() => applyStrategicMergePatch(base, { secrets: [{ namespace: 'x' }] }, sa, defs), 500, 'map: map[namespace:x] does not contain declared merge key: name');
  });

  it('ClusterRoleBinding subjects have no merge strategy: replaced', () => {
    const binding = {
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
    };
    const got = applyStrategicMergePatch(binding, { subjects: [{ kind: 'User', name: 'bob' }], roleRef: { name: 'edit' } }, crb, defs);
    assert.deepEqual(got, { ...binding, roleRef: { ...binding.roleRef, name: 'edit' }, subjects: [{ kind: 'User', name: 'bob' }] });
  });
});

// Large inputs: kube's scans made these quadratic (12,000 secrets held the event loop for 15 s).
// Each merge takes a fraction of a second here and minutes when quadratic; the results are those
// of kube's algorithm. (node:test's timeout cannot stop synchronous code, hence the explicit bound.)
function within<T>(ms: number, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  const took = performance.now() - t0;
  assert.ok(took < ms, `took ${Math.round(took)} ms, over the ${ms} ms bound: not linear`);
  return out;
}

describe('applyStrategicMergePatch: large lists merge in linear time with the same results', () => {
  const BOUND_MS = 3000;
  const defs = builtinDefinitions();
  const sa = serviceaccounts.schema;
  const N = 20_000;
  const refs = (ns: number[]): Array<{ name: string }> => ns.map((i) => ({ name: `secret-${i}` }));
  const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

  it(`${N} ServiceAccount secrets: $setElementOrder reverses the server's order, every third deleted`, () => {
    const original = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' }, secrets: refs(range(N)) };
    const order = refs(range(N).reverse());
    const patch = { '$setElementOrder/secrets': order, secrets: order.map((r, i) => (i % 3 === 0 ? { ...r, $patch: 'delete' } : r)) };
    const got = within(BOUND_MS, () => applyStrategicMergePatch(original, patch, sa, defs)) as { secrets: unknown[] };
    assert.deepEqual(got.secrets, refs(range(N).reverse().filter((_, i) => i % 3 !== 0)));
  });

  it(`${N} new secrets go before the server's, in patch order; with $setElementOrder, where it says`, () => {
    const original = { metadata: { name: 'sa' }, secrets: refs(range(N)) };
    const added = refs(range(N).map((i) => 2 * N - 1 - i));
    const got = within(BOUND_MS, () => applyStrategicMergePatch(original, { secrets: added }, sa, defs)) as { secrets: unknown[] };
    assert.deepEqual(got.secrets, [...added, ...original.secrets]);
    const interleaved = refs(range(2 * N).map((i) => (i % 2 === 0 ? i / 2 : 2 * N - 1 - (i - 1) / 2)));
    const ordered = within(BOUND_MS, () => applyStrategicMergePatch(original, { '$setElementOrder/secrets': interleaved, secrets: added }, sa, defs)) as { secrets: unknown[] };
    assert.deepEqual(ordered.secrets, interleaved);
  });

  it(`${N} merging-list items, each name twice: $patch delete removes both copies of half the names`, () => {
    const original = { mergingList: range(2 * N).map((i) => ({ name: i % N, value: `v${i}` })) };
    const deletes = range(N / 2).map((i) => ({ name: 2 * i, $patch: 'delete' }));
    const got = within(BOUND_MS, () => smp(original, { mergingList: [...deletes, { name: 1, other: 'x' }] })) as { mergingList: unknown[] };
    // Server-only items are sorted by the position of their name's first copy: copies end up together.
    const kept: Array<Record<string, unknown>> = range(N / 2).flatMap((i) => [{ name: 2 * i + 1, value: `v${2 * i + 1}` }, { name: 2 * i + 1, value: `v${2 * i + 1 + N}` }]);
    kept[0] = { ...kept[0]!, other: 'x' };
    assert.deepEqual(got.mergingList, kept);
  });

  it(`${N}-item primitive lists: union, order, $deleteFromPrimitiveList`, () => {
    const original = { mergingIntList: range(N) };
    const patchList = range(N).map((i) => N + i / 2); // half new values, half repeated
    const merged = within(BOUND_MS, () => smp(original, { mergingIntList: patchList.map(Math.floor) })) as { mergingIntList: number[] };
    assert.deepEqual(merged.mergingIntList, [...new Set(patchList.map(Math.floor))].concat(range(N)));
    const deleted = within(BOUND_MS, () => smp(original, { '$deleteFromPrimitiveList/mergingIntList': range(N).filter((i) => i % 2 === 0) })) as { mergingIntList: number[] };
    assert.deepEqual(deleted.mergingIntList, range(N).filter((i) => i % 2 === 1));
  });

  it(`$retainKeys with ${5 * N} keys`, () => {
    const keys = range(5 * N).map((i) => `k${i}`);
    const original = { simpleMap: Object.fromEntries(keys.map((k) => [k, 'old'])) };
    const retained = keys.filter((_, i) => i % 2 === 0);
    const got = within(BOUND_MS, () => smp(original, { simpleMap: { $retainKeys: retained, [retained[0]!]: 'new' } })) as { simpleMap: Record<string, string> };
    assert.deepEqual(got.simpleMap, Object.fromEntries(retained.map((k, i) => [k, i === 0 ? 'new' : 'old'])));
  });
});
