/**
 * Bad input over real HTTPS against a real etcd: every error is a kube Status with the right code
 * and reason, and nothing is stored (checked with a follow-up read each time).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestEtcd, startInProcess, eventually, type TestEtcd, type InProcessPlinth, type TestClient, type Response } from './harness.js';
import { expectStatus } from './assertions.js';

const NS = 'errors-test';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
const CRB = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;

function sa(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name }, ...extra };
}

function crb(name: string): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
  };
}

/** Names and resourceVersions of every serviceaccount in NS and every clusterrolebinding. */
async function snapshot(): Promise<string> {
  const out: string[] = [];
  for (const path of [SA, CRB]) {
    const res = await c.get(path);
    assert.equal(res.status, 200);
    for (const i of res.body.items) out.push(`${path}/${i.metadata.name}@${i.metadata.resourceVersion}`);
  }
  return out.sort().join('\n');
}

/** Runs a bad request and checks that nothing stored changed. */
async function unchanged(fn: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  await fn();
  assert.equal(await snapshot(), before, 'a rejected request changed stored objects');
}

async function absent(path: string): Promise<void> {
  assert.equal((await c.get(path)).status, 404, `${path} should not exist`);
}

function nested(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  c = plinth.client;
  assert.equal((await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  // The namespace's `default` ServiceAccount arrives asynchronously; wait so snapshots are stable.
  await eventually(async () => (await c.get(`${SA}/default`)).status === 200, 15_000, 'default serviceaccount');
  assert.equal((await c.post(SA, sa('existing'))).status, 201);
  assert.equal((await c.post(CRB, crb('existing'))).status, 201);
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

describe('malformed bodies', () => {
  it('malformed JSON is 400 BadRequest', async () => {
    await unchanged(async () => {
      expectStatus(await c.post(SA, undefined, { rawBody: '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"bad"' }), 400, 'BadRequest');
    });
    await absent(`${SA}/bad`);
  });

  it('a body of another kind is 400', async () => {
    await unchanged(async () => {
      expectStatus(await c.post(SA, crb('kind-mismatch')), 400, 'BadRequest');
    });
    await absent(`${SA}/kind-mismatch`);
    await absent(`${CRB}/kind-mismatch`);
  });

  it('a wrong apiVersion is 400', async () => {
    await unchanged(async () => {
      expectStatus(await c.post(SA, { ...sa('bad-version'), apiVersion: 'v2' }), 400, 'BadRequest');
      expectStatus(await c.post(CRB, { ...crb('bad-version'), apiVersion: 'v1' }), 400, 'BadRequest');
    });
    await absent(`${SA}/bad-version`);
    await absent(`${CRB}/bad-version`);
  });

  it('a field of the wrong JSON type is 400', async () => {
    await unchanged(async () => {
      expectStatus(await c.post(SA, sa('wrong-type', { secrets: 'x' })), 400, 'BadRequest');
      expectStatus(await c.post(CRB, { ...crb('wrong-type'), subjects: { kind: 'User' } }), 400, 'BadRequest');
    });
    await absent(`${SA}/wrong-type`);
  });

  it('nesting deeper than 100 levels is 400', async () => {
    await unchanged(async () => {
      expectStatus(await c.post(SA, sa('deep', { extra: nested(150) })), 400, 'BadRequest');
    });
    await absent(`${SA}/deep`);
  });

  it('a 4 MiB body is 413 RequestEntityTooLarge', async () => {
    const big = { ...sa('huge'), metadata: { name: 'huge', annotations: { a: 'x'.repeat(4 * 1024 * 1024) } } };
    await unchanged(async () => {
      expectStatus(await c.post(SA, big), 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    });
    await absent(`${SA}/huge`);
  });

  it('unknown fields are dropped, not stored', async () => {
    const res = await c.post(SA, { ...sa('unknown-fields', { bogusField: 'x' }), metadata: { name: 'unknown-fields', bogusMeta: 1 } });
    assert.equal(res.status, 201, res.raw.toString());
    const got = await c.get(`${SA}/unknown-fields`);
    assert.equal(got.status, 200);
    assert.equal('bogusField' in got.body, false);
    assert.equal('bogusMeta' in got.body.metadata, false);
  });
});

describe('invalid names', () => {
  const cases: Array<[string, string, (n: string) => unknown]> = [
    ['slash in a serviceaccount name', 'a/b', (n) => sa(n)],
    ['slash in a clusterrolebinding name', 'a/b', (n) => crb(n)],
    ['.. as a clusterrolebinding name', '..', (n) => crb(n)],
    ['uppercase serviceaccount name', 'UpperCase', (n) => sa(n)],
    ['300-character serviceaccount name', 'a'.repeat(300), (n) => sa(n)],
  ];
  for (const [what, name, body] of cases) {
    it(`${what} is 422 Invalid on metadata.name`, async () => {
      const path = (body(name) as { kind: string }).kind === 'ServiceAccount' ? SA : CRB;
      await unchanged(async () => {
        const res = await c.post(path, body(name));
        expectStatus(res, 422, 'Invalid');
        assert.equal(res.body.details?.causes?.[0]?.field, 'metadata.name');
        assert.equal(res.body.details?.name, name);
        assert.equal(res.body.details?.kind, (body(name) as { kind: string }).kind);
        assert.ok(res.body.message.startsWith(`${path === SA ? 'ServiceAccount' : 'ClusterRoleBinding.rbac.authorization.k8s.io'} "${name}" is invalid: metadata.name: Invalid value:`), res.body.message);
      });
    });
  }
});

describe('paths and methods', () => {
  it('an unknown resource is 404 NotFound', async () => {
    expectStatus(await c.get('/api/v1/foos'), 404, 'NotFound', 'the server could not find the requested resource');
    await unchanged(async () => expectStatus(await c.post('/api/v1/foos', { kind: 'Foo' }), 404, 'NotFound'));
  });

  it('an unknown group is 404', async () => {
    expectStatus(await c.get('/apis/nope.io/v1/things'), 404, 'NotFound');
  });

  it('POST to a single object URL is 405 MethodNotAllowed', async () => {
    await unchanged(async () =>
      expectStatus(await c.post(`${SA}/existing`, sa('existing')), 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'),
    );
  });

  it('across all namespaces only list and watch are served: no create, no deletecollection, no named object', async () => {
    await unchanged(async () => {
      expectStatus(await c.delete('/api/v1/serviceaccounts'), 405, 'MethodNotAllowed');
      expectStatus(await c.post('/api/v1/serviceaccounts', sa('cluster-wide')), 405, 'MethodNotAllowed');
    });
    expectStatus(await c.get('/api/v1/serviceaccounts/existing'), 404, 'NotFound', 'the server could not find the requested resource');
    assert.equal((await c.get('/api/v1/serviceaccounts')).status, 200);
  });

  it('a cluster-scoped resource under a namespace path is 404; PUT or PATCH on a collection is 405', async () => {
    expectStatus(await c.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/clusterrolebindings`), 404, 'NotFound');
    await unchanged(async () => {
      expectStatus(await c.put(SA, sa('collection-put')), 405, 'MethodNotAllowed');
      expectStatus(await c.request('PATCH', SA, { body: {}, headers: { 'content-type': 'application/merge-patch+json' } }), 405, 'MethodNotAllowed');
    });
  });

  it('escaped path segments are unescaped: a colon finds its object, a slash or .. is a bad name', async () => {
    const crb = { metadata: { name: 'system:esc' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } };
    assert.equal((await c.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', crb)).status, 201);
    assert.equal((await c.get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system%3Aesc')).body.metadata.name, 'system:esc');
    await unchanged(async () => {
      expectStatus(await c.get(`${SA}/a%2Fb`), 400, 'BadRequest', `invalid resource name "a/b": [may not contain '/']`);
      expectStatus(await c.delete(`/api/v1/namespaces/${NS}%2Fx/serviceaccounts`), 400, 'BadRequest');
    });
  });

  it('deletecollection on namespaces is 405', async () => {
    const before = (await c.get('/api/v1/namespaces')).body.items.length;
    expectStatus(await c.delete('/api/v1/namespaces'), 405, 'MethodNotAllowed');
    const ns = await c.get(`/api/v1/namespaces/${NS}`);
    assert.equal(ns.status, 200);
    assert.equal(ns.body.metadata.deletionTimestamp, undefined);
    assert.equal((await c.get('/api/v1/namespaces')).body.items.length, before);
  });
});

describe('namespace and name mismatches', () => {
  it('a body namespace different from the path is 400', async () => {
    await unchanged(async () => {
      const res = await c.post(SA, { ...sa('ns-mismatch'), metadata: { name: 'ns-mismatch', namespace: 'default' } });
      expectStatus(res, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    });
    await absent(`${SA}/ns-mismatch`);
    await absent('/api/v1/namespaces/default/serviceaccounts/ns-mismatch');
  });

  it('PUT with a different name in the body than the URL is 400', async () => {
    const cur = (await c.get(`${SA}/existing`)).body;
    await unchanged(async () => {
      expectStatus(
        await c.put(`${SA}/existing`, { ...cur, metadata: { ...cur.metadata, name: 'other' } }),
        400,
        'BadRequest',
        'the name of the object (other) does not match the name on the URL (existing)',
      );
      expectStatus(await c.put(`${CRB}/existing`, crb('other')), 400, 'BadRequest');
    });
    await absent(`${SA}/other`);
    await absent(`${CRB}/other`);
  });

  it('PUT with an empty name in the body is 400 (kube checkName: the name is undeterminable)', async () => {
    const cur = (await c.get(`${SA}/existing`)).body;
    await unchanged(async () => {
      expectStatus(
        await c.put(`${SA}/existing`, { ...cur, metadata: { ...cur.metadata, name: '', labels: { changed: 'yes' } } }),
        400,
        'BadRequest',
        'the name of the object (existing based on URL) was undeterminable: name must be provided',
      );
    });
  });

  it('PUT with a body namespace different from the URL is 400', async () => {
    const cur = (await c.get(`${SA}/existing`)).body;
    await unchanged(async () => {
      expectStatus(
        await c.put(`${SA}/existing`, { ...cur, metadata: { ...cur.metadata, namespace: 'default' } }),
        400,
        'BadRequest',
        `the namespace of the object (default) does not match the namespace on the request (${NS})`,
      );
    });
    await absent('/api/v1/namespaces/default/serviceaccounts/existing');
  });

  it('creating in a missing namespace is 404', async () => {
    const res = await c.post('/api/v1/namespaces/nope/serviceaccounts', sa('orphan'));
    expectStatus(res, 404, 'NotFound', 'namespaces "nope" not found');
    await absent('/api/v1/namespaces/nope/serviceaccounts/orphan');
    await absent('/api/v1/namespaces/nope');
  });
});

describe('authentication', () => {
  it('missing credentials are the anonymous user, whom authorization refuses (403 Forbidden)', async () => {
    expectStatus(await c.get(SA, { token: null }), 403, 'Forbidden', 'serviceaccounts is forbidden: User "system:anonymous" cannot list resource "serviceaccounts" in API group "" in the namespace "errors-test"');
    await unchanged(async () => expectStatus(await c.post(SA, sa('anon'), { token: null }), 403, 'Forbidden'));
    await absent(`${SA}/anon`);
  });

  it('a wrong token is 401', async () => {
    expectStatus(await c.get(SA, { token: 'not-a-valid-token' }), 401, 'Unauthorized');
    await unchanged(async () => expectStatus(await c.delete(`${SA}/existing`, { token: 'not-a-valid-token' }), 401, 'Unauthorized'));
  });
});

describe('content negotiation', () => {
  it('an unsupported Content-Type is 415 UnsupportedMediaType', async () => {
    await unchanged(async () => {
      const res = await c.post(SA, undefined, { rawBody: JSON.stringify(sa('plain')), headers: { 'content-type': 'text/plain' } });
      expectStatus(res, 415, 'UnsupportedMediaType');
    });
    await absent(`${SA}/plain`);
  });

  it('Accept: text/html only is 406 NotAcceptable; with a JSON fallback it is 200', async () => {
    expectStatus(await c.get(SA, { headers: { accept: 'text/html' } }), 406, 'NotAcceptable');
    const ok = await c.get(SA, { headers: { accept: 'application/vnd.example.unknown, application/json' } });
    assert.equal(ok.status, 200);
    assert.match(String(ok.headers['content-type']), /^application\/json/);
    assert.equal(ok.body.kind, 'ServiceAccountList');
  });
});

describe('query parameters', () => {
  it('a bad dryRun value is 422', async () => {
    await unchanged(async () =>
      expectStatus(await c.post(`${SA}?dryRun=Everything`, sa('dry-bad')), 422, 'Invalid', /^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: .*Everything.*: supported values: "All"$/),
    );
    await absent(`${SA}/dry-bad`);
    await unchanged(async () => expectStatus(await c.delete(`${SA}/existing?dryRun=Everything`), 422, 'Invalid'));
  });

  it('a bad labelSelector is 400', async () => {
    expectStatus(await c.get(`${SA}?labelSelector=${encodeURIComponent('a in (b')}`), 400, 'BadRequest');
    await unchanged(async () => expectStatus(await c.delete(`${SA}?labelSelector=${encodeURIComponent('!!bad==')}`), 400, 'BadRequest'));
  });

  it('resourceVersionMatch=Exact without resourceVersion is 422', async () => {
    expectStatus(
      await c.get(`${SA}?resourceVersionMatch=Exact`),
      422,
      'Invalid',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
  });
});
