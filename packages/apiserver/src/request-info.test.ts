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

test("a Namespace's own paths are no namespaced paths; namespaces/<ns>/<resource> is", () => {
  const own = info('DELETE', '/api/v1/namespaces/team');
  assert.deepEqual([own.namespace, own.resource, own.name, own.pathName, own.namespacedPath], ['team', 'namespaces', 'team', 'team', false]);
  const fin = info('PUT', '/api/v1/namespaces/team/finalize');
  assert.deepEqual([fin.namespace, fin.name, fin.subresource, fin.namespacedPath], ['team', 'team', 'finalize', false]);
  // The same RequestInfo kube derives, but a namespaced path: no route serves it.
  const other = info('DELETE', '/api/v1/namespaces/team/namespaces/other');
  assert.deepEqual([other.namespace, other.resource, other.name, other.namespacedPath], ['team', 'namespaces', 'other', true]);
  assert.equal(info('GET', '/api/v1/namespaces/team/namespaces').namespacedPath, true);
  assert.equal(info('GET', '/api/v1/watch/namespaces/team/namespaces').namespacedPath, true);
});

test("kube's special verbs: /watch/ and /proxy/ set the verb whatever the method", () => {
  const post = info('POST', '/api/v1/watch/namespaces/a/secrets');
  assert.deepEqual([post.verb, post.legacyWatch, post.namespace, post.resource], ['watch', true, 'a', 'secrets']);
  assert.deepEqual([info('DELETE', '/api/v1/watch/namespaces/a/secrets/s1').verb, info('GET', '/api/v1/watch/secrets').verb], ['watch', 'watch']);
  const proxy = info('GET', '/api/v1/proxy/namespaces/a/pods/p/x/y');
  assert.deepEqual([proxy.verb, proxy.legacyProxy, proxy.resource, proxy.name, proxy.subresource], ['proxy', true, 'pods', 'p', '']);
  assert.equal(info('GET', '/api/v1/pods?watch=FALSE').verb, 'list');
});

test("kube 1.24: a list or watch whose fieldSelector requires metadata.name names that object (RequestInfo.Name)", () => {
  const cases: Array<[string, string, string]> = [
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1', 'list', 's1'],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3D%3Ds1&watch=true', 'watch', 's1'],
    ['/api/v1/secrets?fieldSelector=metadata.namespace%3Da,metadata.name%3Ds1', 'list', 's1'],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name!%3Ds1', 'list', ''],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.namespace%3Da', 'list', ''],
    // Not a valid path segment: no name.
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3D..', 'list', ''],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Da%2Fb', 'list', ''],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Da%25b', 'list', ''],
    // The query does not decode as ListOptions: kube ignores it all.
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1&labelSelector=%3D%3D', 'list', ''],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1&limit=x', 'list', ''],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1&timeoutSeconds=', 'list', ''],
    ['/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1&limit=10&timeoutSeconds=5', 'list', 's1'],
    // /watch/ paths have the verb watch from the start: kube sets no name from the selector there.
    ['/api/v1/watch/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1', 'watch', ''],
  ];
  for (const [url, verb, name] of cases) {
    const got = info('GET', url);
    assert.deepEqual([got.verb, got.name, got.pathName], [verb, name, ''], url);
  }
  // Only get becomes list: a DELETE of a collection stays deletecollection, unnamed.
  const dc = info('DELETE', '/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1');
  assert.deepEqual([dc.verb, dc.name], ['deletecollection', '']);
});
