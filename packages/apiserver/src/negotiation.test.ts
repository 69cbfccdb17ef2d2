import { test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiate, parseAccept, bodyEncoding } from './negotiation.js';

test('Accept with q-values orders by preference', () => {
  assert.deepEqual(parseAccept('application/yaml;q=0.5, application/json').map((r) => r.subtype), ['json', 'yaml']);
  assert.equal(negotiate('application/yaml;q=0.9, text/html', { allowTable: false }).encoding, 'yaml');
  assert.equal(negotiate(undefined, { allowTable: false }).contentType, 'application/json');
  assert.equal(negotiate('*/*', { allowTable: false }).contentType, 'application/json');
});

test('unsupported conversions fall through to the JSON fallback; nothing supported is 406', () => {
  const aggregated = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  assert.equal(negotiate(aggregated, { allowTable: false }).contentType, 'application/json');
  assert.throws(() => negotiate('text/html', { allowTable: false }), (e: { code?: number; reason?: string }) => e.code === 406 && e.reason === 'NotAcceptable');
});

test('Table is chosen only where allowed', () => {
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  assert.equal(negotiate(accept, { allowTable: true }).table, 'v1');
  assert.equal(negotiate(accept, { allowTable: false }).table, undefined);
});

test('body content types', () => {
  assert.equal(bodyEncoding(undefined), 'json');
  assert.equal(bodyEncoding('application/json; charset=utf-8'), 'json');
  assert.equal(bodyEncoding('application/yaml'), 'yaml');
  assert.throws(() => bodyEncoding('text/plain'), (e: { code?: number }) => e.code === 415);
});

test('PartialObjectMetadata(List) of meta.k8s.io v1/v1beta1, in JSON, YAML or Protobuf, where allowed', () => {
  const pb = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
  // Protobuf even where the kind has none (custom resources): the metadata form is meta.k8s.io's.
  assert.deepEqual(negotiate(pb, { allowTable: false, allowProtobuf: false, allowPartial: true }), {
    encoding: 'protobuf',
    contentType: 'application/vnd.kubernetes.protobuf',
    partial: { list: true, version: 'v1' },
  });
  assert.deepEqual(negotiate('application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1', { allowTable: false, allowPartial: true }).partial, { list: false, version: 'v1beta1' });
  assert.equal(negotiate(pb, { allowTable: false, allowProtobuf: true }).partial, undefined, 'not where the endpoint has none');
  // Another group or version is no conversion kube serves: the range is skipped.
  assert.equal(negotiate('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2,application/json', { allowTable: false, allowPartial: true }).partial, undefined);
  assert.equal(negotiate('application/json;g=meta.k8s.io;v=v1,application/yaml', { allowTable: false, allowPartial: true }).encoding, 'yaml');
});
