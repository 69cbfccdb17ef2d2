import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinDefinitions } from '../kube-schema/definitions.js';
import type { Schema } from '../schema.js';
import { serviceaccounts } from '../groups/index.js';
import { FieldSet, fieldPE, indexPE, keyPE, pathOf, pathString, serializePE, valuePE } from './fieldset.js';
import { TypedSchema, compareObjects, fieldSetOf, removeItems } from './typed.js';

const defs = builtinDefinitions();

const sa = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: {
    name: 'builder',
    namespace: 'default',
    labels: { app: 'web', tier: 'b' },
    annotations: { note: 'x' },
    finalizers: ['example.com/keep'],
  },
  secrets: [{ name: 's1' }, { name: 's2' }],
  automountServiceAccountToken: false,
};

describe('FieldsV1 encoding', () => {
  it('encodes an applied ServiceAccount as SMD ToFieldSet does (struct fields are not members)', () => {
    const set = fieldSetOf(sa, serviceaccounts.schema, defs);
    // The strip set (apiVersion, kind, metadata.name, ...) is removed by the field manager, not here.
    const expected = {
      'f:apiVersion': {},
      'f:automountServiceAccountToken': {},
      'f:kind': {},
      'f:metadata': {
        'f:annotations': { 'f:note': {} },
        'f:finalizers': { 'v:"example.com/keep"': {} },
        'f:labels': { 'f:app': {}, 'f:tier': {} },
        'f:name': {},
        'f:namespace': {},
      },
      'f:secrets': {
        // v1.ObjectReference is an atomic struct (+structType=atomic): items are leaves.
        'k:{"name":"s1"}': {},
        'k:{"name":"s2"}': {},
      },
    };
    assert.deepEqual(set.toFieldsV1(), expected);
    assert.equal(JSON.stringify(set.toFieldsV1()), JSON.stringify(expected), 'key order is SMD order');
  });

  it('encodes what a create added as kube does for an Update entry (added maps and lists get ".")', () => {
    const ts = new TypedSchema(serviceaccounts.schema, defs);
    const c = compareObjects(ts, {}, sa);
    const expected = {
      'f:apiVersion': {},
      'f:automountServiceAccountToken': {},
      'f:kind': {},
      'f:metadata': {
        '.': {},
        'f:annotations': { '.': {}, 'f:note': {} },
        'f:finalizers': { '.': {}, 'v:"example.com/keep"': {} },
        'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} },
        'f:name': {},
        'f:namespace': {},
      },
      'f:secrets': {
        '.': {},
        // v1.ObjectReference is an atomic struct (+structType=atomic): items are leaves.
        'k:{"name":"s1"}': {},
        'k:{"name":"s2"}': {},
      },
    };
    assert.equal(JSON.stringify(c.added.toFieldsV1()), JSON.stringify(expected));
    assert.ok(c.modified.isEmpty());
    assert.ok(c.removed.isEmpty());
  });

  it('round-trips through FieldsV1 and keeps membership of nodes with children', () => {
    const set = fieldSetOf(sa, serviceaccounts.schema, defs);
    const back = FieldSet.fromFieldsV1(JSON.parse(JSON.stringify(set.toFieldsV1())));
    assert.ok(back.equals(set));
    assert.ok(back.has([fieldPE('secrets'), keyPE([{ name: 'name', value: 's1' }])]));
    assert.ok(!back.has(pathOf('metadata', 'labels')));
    assert.ok(back.has(pathOf('metadata', 'labels', 'app')));
  });

  it('sorts key fields by name, escapes like Go, and orders f < k < v < i', () => {
    assert.equal(serializePE(keyPE([{ name: 'protocol', value: 'TCP' }, { name: 'containerPort', value: 80 }])), 'k:{"containerPort":80,"protocol":"TCP"}');
    assert.equal(serializePE(valuePE('a<b&c')), 'v:"a\\u003cb\\u0026c"');
    assert.equal(serializePE(indexPE(3)), 'i:3');
    const s = FieldSet.fromPaths([[indexPE(0)], [valuePE('x')], [keyPE([{ name: 'n', value: 'a' }])], [fieldPE('z')]]);
    assert.deepEqual(Object.keys(s.toFieldsV1()), ['f:z', 'k:{"n":"a"}', 'v:"x"', 'i:0']);
  });

  it('drops unknown element types and rejects malformed keys when decoding', () => {
    const s = FieldSet.fromFieldsV1({ 'f:a': {}, 'x:whatever': {}, 'f:b': { '.': {}, 'f:c': {} } });
    assert.deepEqual(s.toFieldsV1(), { 'f:a': {}, 'f:b': { '.': {}, 'f:c': {} } });
    assert.throws(() => FieldSet.fromFieldsV1({ f: {} }), /2 characters/);
    assert.throws(() => FieldSet.fromFieldsV1({ 'fa:b': {} }), /missing colon/);
    assert.throws(() => FieldSet.fromFieldsV1({ 'i:x': {} }), /invalid syntax/);
  });
});

describe('set operations and paths', () => {
  const a = FieldSet.fromPaths([pathOf('spec', 'x'), pathOf('spec', 'y'), pathOf('meta')]);
  const b = FieldSet.fromPaths([pathOf('spec', 'y'), pathOf('other')]);

  it('union, intersection, difference, equality, emptiness', () => {
    assert.deepEqual(a.union(b).paths().map(pathString), ['.meta', '.other', '.spec.x', '.spec.y']);
    assert.deepEqual(a.intersection(b).paths().map(pathString), ['.spec.y']);
    assert.deepEqual(a.difference(b).paths().map(pathString), ['.meta', '.spec.x']);
    assert.ok(a.difference(a).isEmpty());
    assert.ok(FieldSet.empty().isEmpty());
    assert.ok(a.union(b).equals(b.union(a)));
    assert.ok(!a.equals(b));
  });

  it('recursive difference removes whole subtrees', () => {
    const r = a.recursiveDifference(FieldSet.fromPaths([pathOf('spec')]));
    assert.deepEqual(r.paths().map(pathString), ['.meta']);
  });

  it('prints paths as kube does in conflicts', () => {
    assert.equal(pathString([fieldPE('secrets'), keyPE([{ name: 'name', value: 's1' }]), fieldPE('name')]), '.secrets[name="s1"].name');
    assert.equal(pathString([fieldPE('metadata'), fieldPE('finalizers'), valuePE('a')]), '.metadata.finalizers[="a"]');
    assert.equal(pathString([fieldPE('subjects'), indexPE(0)]), '.subjects[0]');
  });
});

describe('decoding the same FieldsV1 again', () => {
  const v1 = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } }, 'f:replicas': {} } };

  it('gives the one decoded set, whose encoding is one shared canonical object nobody can change', () => {
    const first = FieldSet.fromFieldsV1(structuredClone(v1));
    const again = FieldSet.fromFieldsV1(structuredClone(v1));
    assert.equal(again, first, 'a text decoded before is not decoded again');
    const out = again.toFieldsV1();
    assert.deepEqual(out, v1);
    assert.equal(again.toFieldsV1(), out, 'encoded once, shared');
    assert.throws(() => {
      (out['f:spec'] as Record<string, unknown>)['f:template'] = {};
    }, TypeError);
    assert.throws(() => {
      delete (out['f:metadata'] as Record<string, Record<string, unknown>>)['f:labels']!['f:app'];
    }, TypeError);
    assert.deepEqual(again.toFieldsV1(), v1, 'the encoding is unchanged');
    // A set built by operations is encoded once too, and shares its unchanged children's encodings.
    const built = again.union(FieldSet.fromPaths([pathOf('metadata', 'annotations', 'note')]));
    const encoded = built.toFieldsV1();
    assert.equal(built.toFieldsV1(), encoded);
    assert.equal(encoded['f:spec'], out['f:spec'], 'the unchanged spec is the decoded set\'s encoding');
    assert.notEqual(encoded['f:metadata'], out['f:metadata']);
    assert.deepEqual(encoded, { 'f:metadata': { 'f:annotations': { 'f:note': {} }, 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': v1['f:spec'] });
    assert.ok(Object.isFrozen(encoded['f:metadata']) && Object.isFrozen((encoded['f:metadata'] as Record<string, unknown>)['f:annotations']));
  });

  it('encodes a set again after it changes', () => {
    const s = FieldSet.fromPaths([pathOf('spec', 'replicas')]);
    assert.deepEqual(s.toFieldsV1(), { 'f:spec': { 'f:replicas': {} } });
    s.insert(pathOf('spec', 'paused'));
    s.insert(pathOf('metadata', 'name'));
    assert.deepEqual(JSON.stringify(s.toFieldsV1()), JSON.stringify({ 'f:metadata': { 'f:name': {} }, 'f:spec': { 'f:paused': {}, 'f:replicas': {} } }));
  });

  it('encodes a set decoded from a non-canonical text canonically, and still rejects bad ones', () => {
    const reordered = { 'f:spec': { 'f:replicas': {}, 'f:ports': { 'k:{"protocol":"TCP","port":81}': { 'f:port': {}, '.': {} } } } };
    const set = FieldSet.fromFieldsV1(reordered);
    assert.deepEqual(JSON.stringify(set.toFieldsV1()), JSON.stringify({ 'f:spec': { 'f:ports': { 'k:{"port":81,"protocol":"TCP"}': { '.': {}, 'f:port': {} } }, 'f:replicas': {} } }));
    assert.equal(FieldSet.fromFieldsV1(structuredClone(reordered)).toFieldsV1()['f:spec'] !== undefined, true);
    assert.throws(() => FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': 1 } }), /expected object for "f:replicas"/);
    assert.throws(() => FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': [] } }), /expected object for "f:replicas"/);
  });

  it('knows a FieldsV1 by its members in any order, and only by all of them', () => {
    const first = FieldSet.fromFieldsV1(structuredClone(v1));
    const reordered = { 'f:spec': { 'f:replicas': {}, 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { 'f:port': {}, '.': {} } } }, 'f:metadata': { 'f:labels': { 'f:app': {}, '.': {} } } };
    assert.equal(FieldSet.fromFieldsV1(reordered), first);
    const other = structuredClone(v1) as Record<string, Record<string, unknown>>;
    other['f:spec']!['f:paused'] = {};
    const set = FieldSet.fromFieldsV1(other);
    assert.notEqual(set, first);
    assert.ok(set.has(pathOf('spec', 'paused')) && !first.has(pathOf('spec', 'paused')));
    const fewer = structuredClone(v1) as Record<string, Record<string, unknown>>;
    delete fewer['f:spec']!['f:replicas'];
    assert.ok(!FieldSet.fromFieldsV1(fewer).has(pathOf('spec', 'replicas')));
    // A member that is no object is the decoder's error, whatever was decoded before.
    assert.throws(() => FieldSet.fromFieldsV1({ ...structuredClone(v1), 'f:spec': { 'f:replicas': true } }), /expected object/);
  });

  it('compares sets by membership (empty children are no members)', () => {
    const x = FieldSet.fromFieldsV1(v1);
    const y = FieldSet.fromPaths(x.paths());
    assert.notEqual(y, x);
    assert.ok(y.equals(x) && x.equals(y));
    assert.ok(!x.equals(y.difference(FieldSet.fromPaths([pathOf('spec', 'replicas')]))));
    assert.ok(FieldSet.fromPaths([pathOf('a', 'b')]).difference(FieldSet.fromPaths([pathOf('a', 'b')])).equals(FieldSet.empty()));
  });
});

describe('RemoveItems', () => {
  it('removes map-list items, set items and map keys', () => {
    const ts = new TypedSchema(serviceaccounts.schema, defs);
    const out = removeItems(
      ts,
      sa,
      FieldSet.fromPaths([
        [fieldPE('secrets'), keyPE([{ name: 'name', value: 's1' }])],
        [fieldPE('metadata'), fieldPE('finalizers'), valuePE('example.com/keep')],
        pathOf('metadata', 'labels', 'tier'),
      ]),
    );
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder', namespace: 'default', labels: { app: 'web' }, annotations: { note: 'x' } },
      secrets: [{ name: 's2' }],
      automountServiceAccountToken: false,
    });
  });
});
