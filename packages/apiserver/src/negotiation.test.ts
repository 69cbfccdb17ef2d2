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
