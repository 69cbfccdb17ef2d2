/**
 * Issue 8's findings, one named regression test each, over real HTTPS against a real etcd: a
 * careless or hostile request must never change the wrong thing, crash the server, or hurt other
 * clients. Every test checks what stayed unchanged as well as the answer.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Etcd3 } from 'etcd3';
import { startTestEtcd, startInProcess, type TestEtcd, type InProcessPlinth, type TestClient } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;

const NS = 'victim';
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;

function secret(name: string, data: Record<string, string> = { k: 'dmFsdWU=' }): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data };
}

async function secretNames(): Promise<string[]> {
  const r = await c.get(SECRETS);
  expectCode(r, 200);
  return (r.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name).sort();
}

async function namespacePhase(): Promise<string> {
  const r = await c.get(`/api/v1/namespaces/${NS}`);
  expectCode(r, 200);
  return r.body.status.phase;
}

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  c = plinth.client;
  expectCode(await c.post('/api/v1/namespaces', { metadata: { name: NS } }), 201);
  for (const n of ['a', 'b']) expectCode(await c.post(SECRETS, secret(n)), 201);
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

describe('finding 1: dot segments and empty segments never retarget a request', () => {
  it('DELETE .../secrets/.. is a 400 and the Namespace stays', async () => {
    expectStatus(await c.delete(`${SECRETS}/..`), 400, 'BadRequest', /may not be '\.\.'/);
    assert.equal(await namespacePhase(), 'Active');
    assert.deepEqual(await secretNames(), ['a', 'b']);
  });

  it('DELETE .../secrets/. and %2e forms are 400s and every secret stays', async () => {
    for (const name of ['.', '%2e', '%2E%2e', '%2e%2E']) {
      expectStatus(await c.delete(`${SECRETS}/${name}`), 400, 'BadRequest');
      expectStatus(await c.get(`${SECRETS}/${name}`), 400, 'BadRequest');
    }
    assert.deepEqual(await secretNames(), ['a', 'b']);
  });

  it('a namespace of %2e%2e or . does not widen a list to all namespaces', async () => {
    for (const ns of ['%2e%2e', '..', '.', '%2E']) expectStatus(await c.get(`/api/v1/namespaces/${ns}/secrets`), 400, 'BadRequest', /invalid namespace/);
  });

  it('a trailing slash or an empty segment is a 404, never a shorter path', async () => {
    // DELETE .../secrets/ would otherwise be a deletecollection of every secret.
    expectStatus(await c.delete(`${SECRETS}/`), 404, 'NotFound');
    expectStatus(await c.get('/api/v1/namespaces//secrets'), 404, 'NotFound');
    expectStatus(await c.delete(`/api/v1/namespaces/${NS}/`), 404, 'NotFound');
    assert.deepEqual(await secretNames(), ['a', 'b']);
    assert.equal(await namespacePhase(), 'Active');
  });

  it('%2F stays inside its segment and names nothing', async () => {
    expectStatus(await c.delete(`${SECRETS}/a%2F..`), 400, 'BadRequest', /may not contain '\/'/);
    assert.deepEqual(await secretNames(), ['a', 'b']);
  });

  it('a request target in absolute form or with an odd host part does not crash the server', async () => {
    for (const path of ['//a:b', '////', '//x/../api']) {
      const r = await c.request('DELETE', path);
      assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status}`);
    }
    expectCode(await c.get('/readyz'), 200);
  });
});

function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe('finding 2: deep bodies are 400s in every decoder, and never crash the process', () => {
  const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
  before(async () => {
    expectCode(await c.post(SA, { metadata: { name: 'deep' } }), 201);
  });

  it('an apply patch of a 10,000-deep JSON body, twice (the second used to abort the process)', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await c.request('PATCH', `${SA}/deep?fieldManager=t`, { rawBody: deepJson(10_000), headers: { 'content-type': 'application/apply-patch+yaml' } });
      expectStatus(r, 400, 'BadRequest', /nests deeper than the limit of 100/);
    }
    expectCode(await c.get('/readyz'), 200);
  });

  it('merge, strategic merge and JSON patches 10,000 deep are 400, not 500', async () => {
    const deepValue = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const bodies: Array<[string, string]> = [
      ['application/merge-patch+json', `{"metadata":{"labels":${deepValue}}}`],
      ['application/strategic-merge-patch+json', `{"metadata":{"labels":${deepValue}}}`],
      ['application/json-patch+json', `[{"op":"add","path":"/metadata/labels","value":${deepValue}}]`],
    ];
    for (const [type, body] of bodies) {
      expectStatus(await c.request('PATCH', `${SA}/deep`, { rawBody: body, headers: { 'content-type': type } }), 400, 'BadRequest', /nests deeper/);
    }
  });

  it('YAML block nesting (- - - ...) and flow nesting are held to the same limit', async () => {
    const block = `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: y\nsecrets:\n${'- '.repeat(5000)}x\n`;
    const flow = `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: y, labels: ${'['.repeat(5000)}${']'.repeat(5000)}}\n`;
    let indented = 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: y\n  annotations:\n';
    for (let i = 0; i < 150; i++) indented += `${'  '.repeat(i + 2)}a:\n`;
    for (const body of [block, flow, indented]) {
      expectStatus(await c.request('POST', SA, { rawBody: body, headers: { 'content-type': 'application/yaml' } }), 400, 'BadRequest', /nests deeper/);
      expectStatus(await c.request('PATCH', `${SA}/y?fieldManager=t`, { rawBody: body, headers: { 'content-type': 'application/apply-patch+yaml' } }), 400, 'BadRequest', /nests deeper/);
    }
    expectStatus(await c.get(`${SA}/y`), 404, 'NotFound');
  });

  it('YAML aliases cannot build a deep (or huge) value from a shallow document', async () => {
    let chain = 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: y}\nx0: &a0 [1]\n';
    for (let i = 1; i < 150; i++) chain += `x${i}: &a${i} [*a${i - 1}]\n`;
    const r = await c.request('POST', SA, { rawBody: chain, headers: { 'content-type': 'application/yaml' } });
    expectCode(r, 400);
    expectStatus(await c.get(`${SA}/y`), 404, 'NotFound');
  });

  it('a JSON patch that copies the document into itself stops at the copy limit', async () => {
    const ops = [{ op: 'add', path: '/metadata/annotations', value: { x: 'y'.repeat(1000) } }];
    for (let i = 0; i < 40; i++) ops.push({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/c${i}` } as never);
    const r = await c.request('PATCH', `${SA}/deep`, { rawBody: JSON.stringify(ops), headers: { 'content-type': 'application/json-patch+json' } });
    expectStatus(r, 422, 'Invalid');
    assert.match(r.body.details.causes[0].message, /accumulated size increase of copy is \d+, exceeding the limit 3145728/);
    expectCode(await c.get('/readyz'), 200);
  });
});

describe('finding 4: one oversized object cannot stop storage for everybody', () => {
  it('a 2.7 MB ClusterRole is a 413 naming the limit, and every following request is served', async () => {
    const rules = Array.from({ length: 27 }, (_, i) => ({ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [`${String(i).padStart(2, '0')}${'x'.repeat(99_990)}`] }));
    const big = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'huge' }, rules };
    for (const q of ['', '?dryRun=All']) {
      const r = await c.post(`/apis/rbac.authorization.k8s.io/v1/clusterroles${q}`, big);
      expectStatus(r, 413, 'RequestEntityTooLarge', /clusterroles\.rbac\.authorization\.k8s\.io "huge" is \d+ bytes when stored; the limit is \d+ bytes/);
    }
    // etcd3's default circuit breaker failed every etcd call for 5 s after three of those.
    for (let i = 0; i < 3; i++) expectCode(await c.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', big), 413);
    for (let i = 0; i < 10; i++) {
      expectCode(await c.post(SECRETS, secret(`after-${i}`)), 201);
      expectCode(await c.get(`${SECRETS}/after-${i}`), 200);
    }
    expectCode(await c.get('/readyz'), 200);
    expectStatus(await c.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/huge'), 404, 'NotFound');
    // An update that would grow an object past the limit is refused the same way.
    const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    expectCode(await c.post(CR, { ...big, metadata: { name: 'grows' }, rules: [] }), 201);
    const grow = await c.request('PATCH', `${CR}/grows`, { rawBody: JSON.stringify({ rules: rules.slice(0, 20) }), headers: { 'content-type': 'application/merge-patch+json' } });
    expectStatus(grow, 413, 'RequestEntityTooLarge', /clusterroles\.rbac\.authorization\.k8s\.io "grows" is \d+ bytes when stored/);
    assert.equal((await c.get(`${CR}/grows`)).body.rules, undefined);
  });
});

describe('finding 6: data kube would refuse is refused', () => {
  it("Secret data is Go's strict base64: YQ and YQ= are 400s, newlines are skipped", async () => {
    expectStatus(await c.post(SECRETS, secret('b64-1', { k: 'YQ' })), 400, 'BadRequest', /illegal base64 data at input byte 0/);
    expectStatus(await c.post(SECRETS, secret('b64-2', { k: 'YQ=' })), 400, 'BadRequest', /illegal base64 data at input byte 3/);
    const ok = await c.post(SECRETS, secret('b64-3', { k: 'YWJj\nZA==' }));
    expectCode(ok, 201);
    // Stored as kube stores []byte: decoded, encoded again.
    assert.equal((await c.get(`${SECRETS}/b64-3`)).body.data.k, 'YWJjZA==');
    for (const n of ['b64-1', 'b64-2']) expectStatus(await c.get(`${SECRETS}/${n}`), 404, 'NotFound');
  });

  it('limit and timeoutSeconds outside int64 are 400s', async () => {
    expectStatus(await c.get(`${SECRETS}?limit=99999999999999999999`), 400, 'BadRequest', /value out of range/);
    expectStatus(await c.get(`${SECRETS}?limit=9223372036854775808`), 400, 'BadRequest', /value out of range/);
    expectStatus(await c.get(`${SECRETS}?watch=1&timeoutSeconds=99999999999999999999`), 400, 'BadRequest', /value out of range/);
    expectCode(await c.get(`${SECRETS}?limit=9223372036854775807`), 200);
    expectStatus(await c.get(`${SECRETS}?resourceVersion=99999999999999999999`), 400, 'BadRequest', /invalid resource version/);
  });

  it("'Bearer  <token>' (two spaces) is no credential, as in kube", async () => {
    const twoSpaces = { 'authorization': `Bearer  ${c.token}` };
    // Anonymous (--anonymous-auth defaults to true), so authorization refuses it: a 403 naming system:anonymous.
    expectStatus(await c.get('/api/v1/namespaces', { token: null, headers: twoSpaces }), 403, 'Forbidden', /User "system:anonymous" cannot list resource "namespaces"/);
    expectStatus(await c.get('/api/v1/namespaces', { token: null, headers: { authorization: `Bearer\t${c.token}` } }), 403, 'Forbidden', /system:anonymous/);
    // With no credential at all a public path is served to the anonymous user.
    expectCode(await c.get('/readyz', { token: null, headers: twoSpaces }), 200);
    expectStatus(await c.get('/readyz', { token: 'not-a-token' }), 401, 'Unauthorized');
  });
});

describe('finding 7: anonymous clients get exactly the public health and version endpoints', () => {
  it('GET /healthz, /livez, /readyz, /version and /version/ and nothing else', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/version', '/version/', '/readyz?verbose']) {
      expectCode(await c.get(path, { token: null }), 200, path);
    }
    for (const [method, path] of [
      ['GET', '/readyz/etcd'],
      ['GET', '/livez/ping'],
      ['GET', '/healthz/x'],
      ['POST', '/healthz'],
      ['PUT', '/readyz'],
      ['DELETE', '/livez'],
      ['GET', '/healthz/'],
      ['GET', '/version/x'],
    ] as const) {
      expectStatus(await c.request(method, path, { token: null }), 403, 'Forbidden', /^forbidden: User "system:anonymous" cannot/);
    }
    // public-info-viewer grants `get` only; a HEAD (verb "head") is not it.
    expectCode(await c.request('HEAD', '/healthz', { token: null }), 403);
    // The same sub-paths are served to authenticated clients.
    expectCode(await c.get('/readyz/etcd'), 200);
  });
});

describe('finding 3: collections larger than one gRPC message', () => {
  it('a 100 MB collection lists (paged and not) and survives a restart', async () => {
    // ~100 MB of Secrets straight into etcd, as plinth stores them, over the 4 MiB limit many times.
    const raw = new Etcd3({ hosts: etcd.endpoint });
    const value = 'A'.repeat(990_000);
    const N = 105;
    try {
      for (let i = 0; i < N; i += 5) {
        await Promise.all(
          Array.from({ length: 5 }, (_, j) => {
            const name = `big-${String(i + j).padStart(3, '0')}`;
            const obj = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name, namespace: 'bulk', uid: `u-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' }, data: { v: value } };
            return raw.put(`/registry/secrets/bulk/${name}`).value(JSON.stringify(obj));
          }),
        );
      }
    } finally {
      raw.close();
    }
    const check = async (client: TestClient): Promise<void> => {
      const all = await client.get('/api/v1/namespaces/bulk/secrets');
      expectCode(all, 200);
      assert.equal(all.body.items.length, N);
      // From the watch cache once it has reached the consistent list's version.
      const cached = await client.get(`/api/v1/namespaces/bulk/secrets?resourceVersion=${all.body.metadata.resourceVersion}`);
      expectCode(cached, 200);
      assert.equal(cached.body.items.length, N);
      let cont = '';
      let seen = 0;
      let pages = 0;
      do {
        const page = await client.get(`/api/v1/namespaces/bulk/secrets?limit=40${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        expectCode(page, 200);
        seen += page.body.items.length;
        pages++;
        cont = page.body.metadata.continue;
      } while (cont);
      assert.equal(seen, N);
      assert.equal(pages, 3);
    };
    await check(c);
    // A fresh server fills its watch cache from etcd at start: it must become ready.
    const second = await startInProcess({ etcd });
    try {
      expectCode(await second.client.get('/readyz'), 200);
      await check(second.client);
    } finally {
      await second.stop();
    }
    // And without a watch cache, every list reads etcd in pages.
    const uncached = await startInProcess({ etcd, args: ['--watch-cache=false'] });
    try {
      await check(uncached.client);
      // Initial events of a watch served from etcd come a page at a time: all of them arrive.
      assert.equal(await countWatchLines(uncached.client, '/api/v1/namespaces/bulk/secrets?watch=1&timeoutSeconds=30', N), N);
    } finally {
      await uncached.stop();
    }
  });
});

/** Counts the lines (events) of a watch response until `n` arrive or it ends, without parsing them. */
function countWatchLines(client: TestClient, path: string, n: number): Promise<number> {
  const base = new URL(client.base);
  return new Promise((resolve, reject) => {
    let lines = 0;
    const req = httpsRequest(
      { hostname: base.hostname, port: base.port, path, headers: { authorization: `Bearer ${client.token}` }, rejectUnauthorized: false },
      (res) => {
        res.on('data', (chunk: Buffer) => {
          for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
          if (lines >= n) {
            req.destroy();
            resolve(lines);
          }
        });
        res.on('end', () => resolve(lines));
      },
    );
    req.on('error', (e) => (lines >= n ? resolve(lines) : reject(e)));
    req.end();
  });
}

/** Writes `n` Secrets of `bytes` data straight into etcd (as plinth stores them), 50 at a time. */
async function bulkSecrets(ns: string, n: number, bytes: number): Promise<void> {
  const raw = new Etcd3({ hosts: etcd.endpoint });
  const value = 'A'.repeat(bytes);
  try {
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) => {
          const name = `s-${String(i + j).padStart(6, '0')}`;
          const obj = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name, namespace: ns, uid: `u-${ns}-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' }, data: { v: value } };
          return raw.put(`/registry/secrets/${ns}/${name}`).value(JSON.stringify(obj));
        }),
      );
    }
  } finally {
    raw.close();
  }
}

/** The process's JS heap and Buffer memory after a full collection (plinth runs in this process). */
function liveBytes(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe('finding 5: watchers stream their initial state and cannot hoard memory', () => {
  it('a watch over more objects than the live-event bound (10,000) gets every initial event', async () => {
    await bulkSecrets('many', 10_050, 10);
    const all = await c.get('/api/v1/namespaces/many/secrets?limit=1');
    expectCode(all, 200);
    assert.equal(all.body.metadata.remainingItemCount + 1, 10_050);
    assert.equal(await countWatchLines(c, '/api/v1/namespaces/many/secrets?watch=1&timeoutSeconds=20', 10_050), 10_050);
  });

  it('40 watchers that never read hold no copy of a 4 MB collection, and others are served meanwhile', async (t) => {
    await bulkSecrets('stalled', 400, 10_000);
    expectCode(await c.get('/api/v1/namespaces/stalled/secrets?limit=1'), 200);
    const base = new URL(c.base);
    const before = liveBytes();
    const sockets: TLSSocket[] = [];
    for (let i = 0; i < 40; i++) {
      const s = tlsConnect({ host: base.hostname, port: Number(base.port), rejectUnauthorized: false });
      s.write(`GET /api/v1/namespaces/stalled/secrets?watch=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.token}\r\n\r\n`);
      s.on('error', () => undefined);
      s.pause(); // never reads: the server's writes back up
      sockets.push(s);
    }
    try {
      // Every watcher has started and filled what it can: the server stopped writing to them.
      await new Promise((r) => setTimeout(r, 1500));
      const grown = liveBytes() - before;
      t.diagnostic(`heap + buffers grew by ${(grown / 2 ** 20).toFixed(1)} MiB with 40 stalled watchers`);
      // Before: each watcher encoded the whole collection ahead of its socket (118 MiB measured).
      assert.ok(grown < 40 * 2 ** 20, `the server holds ${Math.round(grown / 2 ** 20)} MiB more with 40 stalled watchers`);
      expectCode(await c.get('/api/v1/namespaces/stalled/secrets/s-000001'), 200);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});
