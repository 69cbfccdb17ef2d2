import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo, splitRequestTarget } from './request-info.js';

/** As the request-info filter does it: the raw target, never normalised. */
const info = (method: string, url: string) => {
  const t = splitRequestTarget(url);
  return parseRequestInfo(method, t.path, new URLSearchParams(t.query));
};

test('resource paths as kube parses them', () => {
  const cases: Array<[string, string, Partial<ReturnType<typeof info>>]> = [
    ['GET', '/api/v1/namespaces/ns1/serviceaccounts/sa1', { verb: 'get', apiGroup: '', apiVersion: 'v1', namespace: 'ns1', resource: 'serviceaccounts', name: 'sa1' }],
    ['GET', '/api/v1/namespaces/ns1/serviceaccounts', { verb: 'list', namespace: 'ns1', resource: 'serviceaccounts', name: '' }],
    ['GET', '/api/v1/serviceaccounts?watch=1', { verb: 'watch', namespace: '', resource: 'serviceaccounts' }],
    ['GET', '/api/v1/serviceaccounts?watch=false', { verb: 'list' }],
    ['GET', '/api/v1/watch/namespaces/ns1/serviceaccounts', { verb: 'watch', namespace: 'ns1', resource: 'serviceaccounts' }],
    ['POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { verb: 'create', apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' }],
    ['PUT', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/x', { verb: 'update', name: 'x' }],
    ['DELETE', '/api/v1/namespaces/ns1/secrets', { verb: 'deletecollection', resource: 'secrets' }],
    ['DELETE', '/api/v1/namespaces/ns1', { verb: 'delete', resource: 'namespaces', name: 'ns1', namespace: 'ns1' }],
    ['PUT', '/api/v1/namespaces/ns1/finalize', { verb: 'update', resource: 'namespaces', name: 'ns1', subresource: 'finalize' }],
    ['GET', '/api/v1/namespaces', { verb: 'list', resource: 'namespaces', namespace: '' }],
  ];
  for (const [method, url, want] of cases) {
    const got = info(method, url);
    assert.equal(got.isResourceRequest, true, url);
    for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof typeof got], v, `${method} ${url}: ${k}`);
  }
});

test('path segments are unescaped after splitting', () => {
  const got = info('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aaggregate-to-view');
  assert.equal(got.name, 'system:aggregate-to-view');
  assert.equal(info('GET', '/api/v1/namespaces/a/serviceaccounts/x%2Fy').name, 'x/y');
});

test('discovery and other paths are not resource requests', () => {
  for (const url of ['/api', '/api/v1', '/apis', '/apis/rbac.authorization.k8s.io', '/apis/rbac.authorization.k8s.io/v1', '/healthz', '/version']) {
    assert.equal(info('GET', url).isResourceRequest, false, url);
  }
});

test('dot segments stay where they are: they never shorten the path', () => {
  // `new URL()` would turn this into DELETE /api/v1/namespaces/victim (the Namespace).
  const del = info('DELETE', '/api/v1/namespaces/victim/secrets/..');
  assert.deepEqual([del.verb, del.namespace, del.resource, del.name], ['delete', 'victim', 'secrets', '..']);
  assert.equal(info('DELETE', '/api/v1/namespaces/victim/secrets/.').name, '.');
  const list = info('GET', '/api/v1/namespaces/%2e%2e/secrets');
  assert.deepEqual([list.verb, list.namespace, list.resource], ['list', '..', 'secrets']);
  assert.equal(info('GET', '/api/v1/namespaces/a/secrets/%2E').name, '.');
});

test('empty segments are marked, never dropped', () => {
  const trailing = info('DELETE', '/api/v1/namespaces/victim/secrets/');
  assert.equal(trailing.hasEmptySegment, true);
  assert.equal(info('GET', '/api/v1/namespaces//secrets').hasEmptySegment, true);
  assert.equal(info('GET', '/api//v1/namespaces').hasEmptySegment, true);
  assert.equal(info('GET', '/api/v1/namespaces/a/secrets').hasEmptySegment, false);
});

test('request targets split without normalisation', () => {
  assert.deepEqual(splitRequestTarget('/a/../b?x=1&y'), { path: '/a/../b', query: 'x=1&y' });
  assert.deepEqual(splitRequestTarget('https://h:6443/api/v1/x/..?q'), { path: '/api/v1/x/..', query: 'q' });
  assert.deepEqual(splitRequestTarget('*'), { path: '', query: '' });
  assert.deepEqual(splitRequestTarget('/p#frag'), { path: '/p', query: '' });
});
