import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasLongNumbers, parseStoredJson, stringifyJson, type StoredObject } from '@plinth/api';
import { decodeObject, encodeForWrite, writtenJson, writtenObject } from './object-codec.js';
import { cutItemJson, cutJson, cutOf, withResourceVersion } from './object-json.js';

const deployment = (): StoredObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'a', uid: 'u1', generation: 2, labels: { app: 'web', 'x<y': '&' } },
  spec: { replicas: 3, big: 9007199254740993n, template: { metadata: { labels: { app: 'web' } } } },
  status: {},
});

test('writtenJson: the JSON of a written object, from the bytes written', () => {
  for (const input of [deployment(), { ...deployment(), metadata: { ...deployment().metadata, resourceVersion: '5' } }]) {
    const { data, text, stored } = encodeForWrite(input);
    assert.equal(data.toString(), text);
    assert.equal(text.includes('resourceVersion'), false, 'resourceVersion is never stored');
    const out = writtenObject(stored, 42, text);
    assert.equal(out.metadata.resourceVersion, '42');
    assert.equal(writtenJson(out), stringifyJson(out));
  }
  // Without the text (or for any other object): nothing to answer from.
  assert.equal(writtenJson(writtenObject(deployment(), 1)), undefined);
  assert.equal(writtenJson(deployment()), undefined);
});

test('writtenJson: nothing once the result was changed at its top (type, metadata, members)', () => {
  const written = (): StoredObject => {
    const { text, stored } = encodeForWrite(deployment());
    return writtenObject(stored, 7, text);
  };
  const changes: Array<(o: StoredObject) => void> = [
    (o) => (o.metadata.resourceVersion = '8'),
    (o) => delete o.metadata.resourceVersion,
    (o) => (o.metadata = { ...o.metadata }),
    (o) => (o.metadata.annotations = { a: 'b' }),
    (o) => (o.apiVersion = 'apps/v1beta2'),
    (o) => delete o.kind,
    (o) => delete o['status'],
    (o) => (o['extra'] = 1),
  ];
  for (const change of changes) {
    const o = written();
    change(o);
    assert.equal(writtenJson(o), undefined, String(change));
  }
});

test('encodeForWrite: the text JSON.stringify writes, and where its metadata ends', () => {
  const objects: StoredObject[] = [
    deployment(),
    // Empty metadata, members that encode to nothing, escapes in keys and values, numbers.
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { 'a"b\\c': 'é\u2028\n' } },
    { kind: 'X', metadata: { name: 'n', annotations: { '\u0000': '"' } }, skipped: undefined, f: () => 1, big: -9007199254740993n, n: -0, e: 1e21 } as unknown as StoredObject,
    { metadata: { name: 'first' }, apiVersion: 'v1', kind: 'Late', list: [1, undefined, { x: null }] } as unknown as StoredObject,
    { apiVersion: 'v1', kind: 'K', __proto__x: 1, ['__proto__']: { a: 1 }, metadata: { name: 'p' } } as unknown as StoredObject,
  ];
  for (const input of objects) {
    const { text, stored, metaEnd } = encodeForWrite(input);
    assert.equal(text, stringifyJson(stored));
    assert.ok(metaEnd > 0 && text[metaEnd - 1] === '}');
    assert.deepEqual(JSON.parse(text.slice(text.lastIndexOf('"metadata":', metaEnd) + '"metadata":'.length, metaEnd)), JSON.parse(stringifyJson(stored.metadata)));
    const out = writtenObject(stored, 9, text, metaEnd);
    assert.equal(writtenJson(out), stringifyJson(out));
  }
  // A metadata that is no object: no offset, and the scanner's answer (none) stands.
  const odd = encodeForWrite({ apiVersion: 'v1', kind: 'K', metadata: 'x' } as unknown as StoredObject);
  assert.equal(odd.metaEnd, -1);
});

test('encodeForWrite: typeCut is what cutOf finds in the text, and serves the bytes a decode and encode would give', () => {
  const objects: StoredObject[] = [
    deployment(),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { '}': '{"resourceVersion":"1"}' } }, data: { a: 'é\u2028\n"' } },
    { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'kind first' }, data: {} },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small numbers' }, n: 123456789012345, f: 0.123456789012345, e: 1e21, z: -0 } as unknown as StoredObject,
    // cutOf finds no cut: a type member after another member, empty metadata, no metadata.
    { apiVersion: 'v1', metadata: { name: 'x' }, kind: 'Late' },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: {} },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: 'x', data: {} } as unknown as StoredObject,
  ];
  let cuts = 0;
  for (const input of objects) {
    const { text, typeCut, roundTrips } = encodeForWrite(input);
    // What roundTrips claims, and what the scanner then serves: the bytes a decode and encode give.
    assert.equal(roundTrips, !hasLongNumbers(text) && typeof input.metadata === 'object', text);
    if (roundTrips) {
      assert.equal(stringifyJson(parseStoredJson(text)), text);
      const scanned = withResourceVersion(text, '77');
      if (scanned !== undefined) assert.equal(scanned, stringifyJson(decodeObject(text, 77)));
    }
    // The fixture Deployment has an int64 beyond 2^53 (see below).
    assert.equal(typeCut, hasLongNumbers(text) ? undefined : cutOf(text, ['apiVersion', 'kind']), text);
    if (typeCut === undefined) continue;
    cuts++;
    const decoded = decodeObject(text, 77);
    assert.equal(cutJson(text, typeCut, '77'), stringifyJson(decoded));
    const { apiVersion: _a, kind: _k, ...item } = decoded;
    assert.equal(cutItemJson(text, typeCut, '77'), stringifyJson(item));
  }
  assert.equal(cuts, 3);
  // Numbers of 16 digits and more are read back by the exact parser, which may not give the text
  // back (an integer beyond int64 becomes a float): no cut is claimed for them.
  for (const n of [12345678901234567890n, 9007199254740993n, 0.1234567890123456]) {
    const { text, typeCut, roundTrips } = encodeForWrite({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'long' }, n } as unknown as StoredObject);
    assert.equal(typeCut, undefined, text);
    assert.equal(roundTrips, false, text);
  }
});
