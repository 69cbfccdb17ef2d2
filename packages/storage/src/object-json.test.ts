import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutItemJson, cutJson, cutOf, typeAndMetadataJson, withResourceVersion } from './object-json.js';
import { decodeObject } from './object-codec.js';
import { CachedObject } from './cached-object.js';

/** What the general path writes: the decoded object (resourceVersion set) through JSON.stringify. */
function general(text: string, rev: number, drop: string[] = []): string {
  const obj = decodeObject(text, rev) as unknown as Record<string, unknown>;
  for (const k of drop) delete obj[k];
  return JSON.stringify(obj);
}

const cases: Array<[string, unknown]> = [
  ['plain', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'ns', uid: 'u' } }],
  ['metadata not first', { kind: 'ConfigMap', data: { x: 'y' }, metadata: { name: 'b' }, apiVersion: 'v1' }],
  ['nested metadata keys in spec', { apiVersion: 'v1', kind: 'X', spec: { metadata: { resourceVersion: '7', name: 'inner' }, template: { metadata: { labels: { a: 'b' } } } }, metadata: { name: 'c', labels: { metadata: 'x' } } }],
  ['escaped quotes and braces', { apiVersion: 'v1', kind: 'X', metadata: { name: 'd', annotations: { q: 'he said "}{" \\"metadata\\":{', b: '\\', c: '\\\\"' } }, data: { '"metadata"': '}' } }],
  ['unicode', { apiVersion: 'v1', kind: 'X', metadata: { name: 'e', annotations: { u: 'héllo wörld – 日本語 😀', ctl: '\u0001\n\t\u2028' } } }],
  ['empty metadata', { apiVersion: 'v1', kind: 'X', metadata: {} }],
  ['stored resourceVersion kept in place', { apiVersion: 'v1', kind: 'X', metadata: { name: 'f', resourceVersion: '3', uid: 'u' } }],
  ['arrays and numbers', { apiVersion: 'v1', kind: 'X', metadata: { name: 'g', finalizers: ['a', 'b'] }, spec: { n: -1.5e-7, z: 0, t: true, f: false, nul: null, arr: [[], {}, [{ a: [1, 2] }]] } }],
];

for (const [name, obj] of cases) {
  test(`withResourceVersion: ${name}`, () => {
    const text = JSON.stringify(obj);
    assert.equal(withResourceVersion(text, '12345'), general(text, 12345));
    assert.equal(withResourceVersion(text, '9', ['apiVersion', 'kind']), general(text, 9, ['apiVersion', 'kind']));
  });

  test(`cutOf: ${name}`, () => {
    const text = JSON.stringify(obj);
    const cut = cutOf(text, ['apiVersion', 'kind']);
    const o = obj as { apiVersion?: string; metadata: Record<string, unknown> };
    // Only the usual layout is cut: type meta first, metadata with members, no stored resourceVersion.
    const usual = text.startsWith('{"apiVersion"') && Object.keys(o.metadata).length > 0 && !('resourceVersion' in o.metadata);
    assert.equal(cut !== undefined, usual);
    if (cut === undefined) return;
    assert.equal(cutJson(text, cut, '12345'), general(text, 12345));
    assert.equal(cutItemJson(text, cut, '9'), general(text, 9, ['apiVersion', 'kind']));
    // The same text at another revision.
    assert.equal(cutItemJson(text, cut, '1000000007'), general(text, 1000000007, ['apiVersion', 'kind']));
  });
}

test('withResourceVersion: unusual objects are left to the general path', () => {
  assert.equal(withResourceVersion(JSON.stringify({ apiVersion: 'v1', kind: 'X' }), '1'), undefined, 'no metadata');
  assert.equal(withResourceVersion('{"metadata":null}', '1'), undefined, 'metadata null');
  assert.equal(withResourceVersion('{"metadata":"x"}', '1'), undefined, 'metadata a string');
  assert.equal(withResourceVersion('{"metadata":{"name":"a"},"metadata":{"name":"b"}}', '1'), undefined, 'duplicate metadata');
  assert.equal(withResourceVersion('{"meta\\u0064ata":{"name":"a"}}', '1'), undefined, 'escaped key');
  assert.equal(withResourceVersion('[1,2]', '1'), undefined, 'not an object');
  assert.equal(withResourceVersion('{"metadata":{"name":"a"}', '1'), undefined, 'truncated');
});

test('CachedObject serves bytes only when they equal the general encoding', () => {
  const canonical = JSON.stringify({ apiVersion: 'v1', kind: 'X', metadata: { name: 'a' }, spec: { s: '<&>' } });
  const c = new CachedObject(canonical, 42, canonical.length);
  assert.equal(c.json('v1', 'X'), general(canonical, 42));
  assert.equal(c.itemJson('v1', 'X'), general(canonical, 42, ['apiVersion', 'kind']));
  assert.equal(c.object(), c.object(), 'decoded object shared while held');
  assert.equal(c.object().metadata.resourceVersion, '42');
  // Written by another client: spaces, Go's \u003c escapes, another number form.
  for (const text of [
    '{"apiVersion":"v1", "kind":"X","metadata":{"name":"a"}}',
    '{"apiVersion":"v1","kind":"X","metadata":{"name":"a"},"spec":{"s":"\\u003c"}}',
    '{"apiVersion":"v1","kind":"X","metadata":{"name":"a"},"spec":{"n":1.0}}',
  ]) {
    const o = new CachedObject(text, 1, text.length);
    assert.equal(o.json('v1', 'X'), undefined, text);
    assert.equal(o.itemJson('v1', 'X'), undefined, text);
  }
  // Another apiVersion or kind than the cache's: the registry would add its own.
  assert.equal(new CachedObject(canonical, 1, 1).json('v2', 'X'), undefined);
  const noType = JSON.stringify({ metadata: { name: 'a' } });
  assert.equal(new CachedObject(noType, 1, 1).json('v1', 'X'), undefined);
});

test('partialObject: apiVersion, kind and metadata alone (PartialObjectMetadata), the whole object where it is decoded or odd', () => {
  const stored = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'a', uid: 'u1', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u0' }], finalizers: ['x/y'] }, spec: { replicas: 2, template: { metadata: { name: '"metadata":{' } } }, status: {} };
  const text = JSON.stringify(stored);
  assert.equal(typeAndMetadataJson(text), JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: stored.metadata }));
  const partial = new CachedObject(text, 7, text.length).partialObject();
  assert.deepEqual(partial, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { ...stored.metadata, resourceVersion: '7' } });
  // managedFields are left out (no metadata reader needs them).
  const managed = JSON.stringify({ ...stored, metadata: { name: 'web', managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }], uid: 'u1' } });
  assert.equal(typeAndMetadataJson(managed, ['managedFields']), '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","uid":"u1"}}');
  assert.deepEqual(new CachedObject(managed, 8, 1).partialObject().metadata, { name: 'web', uid: 'u1', resourceVersion: '8' });
  // Each call is the caller's own object.
  const c = new CachedObject(text, 7, text.length);
  assert.notEqual(c.partialObject(), c.partialObject());
  // Someone holds the decoded object: that one, nothing decoded again.
  const whole = c.object();
  assert.equal(c.partialObject(), whole);
  // Text the scanner does not take (whitespace, no metadata object): the whole object.
  const spaced = JSON.stringify(stored, null, 1);
  assert.equal(typeAndMetadataJson(spaced), undefined);
  assert.deepEqual(new CachedObject(spaced, 3, 1).partialObject(), { ...stored, metadata: { ...stored.metadata, resourceVersion: '3' } });
  assert.equal(typeAndMetadataJson(JSON.stringify({ apiVersion: 'v1', kind: 'X', metadata: 'm' })), undefined);
});

test('typeAndMetadataJson: the scan ends at the last of apiVersion, kind and metadata, wherever they are', () => {
  const meta = { name: 'p', uid: 'u', labels: { a: 'b' } };
  // What follows the three is not read: a spec the scanner would refuse does not matter.
  const head = JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: meta }).slice(0, -1);
  assert.equal(typeAndMetadataJson(`${head},"spec":"unterminated}`), JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: meta }));
  // The three found after other members, in the stored order.
  const late = JSON.stringify({ spec: { metadata: { name: 'inner' } }, metadata: meta, status: {}, apiVersion: 'v1', data: 'x', kind: 'Pod', more: [1] });
  assert.equal(typeAndMetadataJson(late), JSON.stringify({ metadata: meta, apiVersion: 'v1', kind: 'Pod' }));
  // Without one of them the whole object is scanned, and an odd one is still refused.
  assert.equal(typeAndMetadataJson(JSON.stringify({ kind: 'Pod', metadata: meta, spec: { a: 1 } })), JSON.stringify({ kind: 'Pod', metadata: meta }));
  assert.equal(typeAndMetadataJson(`${JSON.stringify({ kind: 'Pod', metadata: meta }).slice(0, -1)},"spec":"unterminated}`), undefined);
});
