import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringifyJson, type StoredObject } from '@plinth/api';
import { encodeForWrite, writtenJson, writtenObject } from './object-codec.js';

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
