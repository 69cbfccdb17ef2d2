import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from './request-info.js';

const info = (method: string, url: string) => {
  const u = new URL(url, 'https://x');
  return parseRequestInfo(method, u.pathname, u.searchParams);
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
