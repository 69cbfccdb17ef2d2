import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { parseRequestInfo } from '../request-info.js';
import { cleanDryRun, cleanScope, isLongRunning, isMutating, reportedVerb, routeScope } from './labels.js';

/** The labels of a routed request (kube's InstrumentRouteFunc: the route's scope). */
function labels(method: string, path: string, headers: Record<string, string> = {}): { verb: string; scope: string } {
  const [p, q = ''] = path.split('?');
  const info = parseRequestInfo(method, p!, new URLSearchParams(q));
  const scope = info.isResourceRequest ? routeScope(info, method) : cleanScope(info);
  return { verb: reportedVerb({ method, headers } as unknown as IncomingMessage, info, scope), scope };
}

test("kube 1.24's verb and scope labels", () => {
  assert.deepEqual(labels('GET', '/api/v1/namespaces/a/pods/p'), { verb: 'GET', scope: 'resource' });
  assert.deepEqual(labels('HEAD', '/api/v1/namespaces/a/pods/p'), { verb: 'GET', scope: 'resource' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces/a/pods'), { verb: 'LIST', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/api/v1/pods'), { verb: 'LIST', scope: 'cluster' });
  assert.deepEqual(labels('GET', '/api/v1/pods?watch=true'), { verb: 'WATCH', scope: 'cluster' });
  assert.deepEqual(labels('GET', '/api/v1/pods?watch=false'), { verb: 'LIST', scope: 'cluster' });
  assert.deepEqual(labels('GET', '/api/v1/watch/namespaces/a/pods'), { verb: 'WATCH', scope: 'namespace' });
  assert.deepEqual(labels('POST', '/api/v1/namespaces/a/pods'), { verb: 'POST', scope: 'resource' });
  assert.deepEqual(labels('PUT', '/api/v1/namespaces/a/pods/p/status'), { verb: 'PUT', scope: 'resource' });
  assert.deepEqual(labels('PATCH', '/apis/apps/v1/namespaces/a/deployments/d'), { verb: 'PATCH', scope: 'resource' });
  assert.deepEqual(labels('PATCH', '/apis/apps/v1/namespaces/a/deployments/d', { 'content-type': 'application/apply-patch+yaml' }), { verb: 'APPLY', scope: 'resource' });
  // A delete of a collection is reported by its method, DELETE (1.24's CanonicalVerb).
  assert.deepEqual(labels('DELETE', '/api/v1/namespaces/a/pods'), { verb: 'DELETE', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/healthz'), { verb: 'GET', scope: '' });
  assert.deepEqual(labels('OPTIONS', '/api/v1/pods'), { verb: 'other', scope: 'cluster' });
  // A list whose fieldSelector names one object is still the list route (kube's installer scope).
  assert.deepEqual(labels('GET', '/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1'), { verb: 'LIST', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/api/v1/secrets?fieldSelector=metadata.name%3Ds1&watch=1'), { verb: 'WATCH', scope: 'cluster' });
});

test("kube 1.24's CleanScope for a request refused before routing: the RequestInfo's name, fieldSelector included", () => {
  const scope = (method: string, path: string) => {
    const [p, q = ''] = path.split('?');
    return cleanScope(parseRequestInfo(method, p!, new URLSearchParams(q)));
  };
  assert.equal(scope('GET', '/api/v1/namespaces/a/secrets?fieldSelector=metadata.name%3Ds1'), 'resource');
  assert.equal(scope('GET', '/api/v1/namespaces/a/secrets'), 'namespace');
  assert.equal(scope('POST', '/api/v1/namespaces/a/secrets'), 'namespace');
  assert.equal(scope('GET', '/api/v1/secrets'), 'cluster');
  assert.equal(scope('GET', '/healthz'), '');
});

test('dry_run has three values at most', () => {
  assert.equal(cleanDryRun(new URLSearchParams('')), '');
  assert.equal(cleanDryRun(new URLSearchParams('dryRun=All')), 'All');
  assert.equal(cleanDryRun(new URLSearchParams('dryRun=All&dryRun=All')), 'All');
  assert.equal(cleanDryRun(new URLSearchParams('dryRun=Some')), 'invalid');
  assert.equal(cleanDryRun(new URLSearchParams('dryRun=')), 'invalid');
});

test('request kinds: long-running watches and streams; readOnly get/list/watch, the rest mutating', () => {
  const info = (m: string, p: string) => parseRequestInfo(m, p.split('?')[0]!, new URLSearchParams(p.split('?')[1] ?? ''));
  assert.equal(isLongRunning(info('GET', '/api/v1/pods?watch=1')), true);
  assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p/log')), true);
  assert.equal(isLongRunning(info('GET', '/api/v1/pods')), false);
  assert.equal(isMutating(info('GET', '/api/v1/pods')), false);
  assert.equal(isMutating(info('POST', '/api/v1/namespaces/a/pods')), true);
  assert.equal(isMutating(info('DELETE', '/api/v1/namespaces/a/pods')), true);
});
