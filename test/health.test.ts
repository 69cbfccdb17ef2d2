/**
 * /healthz, /livez, /readyz as kube-apiserver 1.24 serves them: the checks and their order,
 * `?verbose`, `?exclude=`, single checks, who may read what, an etcd outage failing and then
 * recovering /readyz without a restart, post-start hook checks with --livez-grace-period, and
 * /readyz failing first during a graceful shutdown while a request in flight completes.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { freePort, startEmbeddedEtcd, type EmbeddedEtcd } from '@plinth/storage';
import { createLogger, parseFlags, startServer, type RunningServer } from '@plinth/apiserver';
import { TestClient, eventually, tempDir, type Response } from './harness.js';

/** A logger whose lines the test can read (verbosity 2: kube logs failed checks at V(2)). */
function capturedLog(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, log: createLogger(2, out) };
}

const text = (r: Response): string => r.raw.toString('utf8');

const BASE = ['ping', 'log', 'etcd'];
const HOOKS = ['poststarthook/bootstrap-controller', 'poststarthook/rbac/bootstrap-roles', 'poststarthook/scheduling/bootstrap-system-priority-classes', 'poststarthook/generic-apiserver-start-informers', 'poststarthook/crd-informer-synced'];

describe('health endpoints', () => {
  const dir = tempDir('plinth-health-');
  let etcd: EmbeddedEtcd;
  let server: RunningServer;
  let client: TestClient;
  const { lines, log } = capturedLog();

  before(async () => {
    etcd = await startEmbeddedEtcd({ dataDir: join(dir, 'etcd'), transport: 'plain' });
    server = await startServer(parseFlags(['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${join(dir, 'data')}`, `--etcd-servers=${etcd.endpoint}`]), log);
    client = TestClient.fromKubeconfig(server.kubeconfigPath);
  });

  after(async () => {
    client.close();
    await server.stop();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('anyone may read /healthz, /livez, /readyz and /version: `ok` in plain text', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const r = await client.get(path, { token: null });
      assert.equal(r.status, 200, path);
      assert.equal(text(r), 'ok');
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
    }
    assert.equal((await client.get('/version', { token: null })).status, 200);
  });

  test("?verbose lists kube 1.24's checks in order and the trailer", async () => {
    const readyz = await client.get('/readyz?verbose', { token: null });
    assert.equal(readyz.status, 200);
    assert.equal(text(readyz), [...BASE, 'informer-sync', ...HOOKS, 'shutdown'].map((c) => `[+]${c} ok\n`).join('') + 'readyz check passed\n');
    const livez = await client.get('/livez?verbose', { token: null });
    assert.equal(text(livez), [...BASE, ...HOOKS].map((c) => `[+]${c} ok\n`).join('') + 'livez check passed\n');
    const healthz = await client.get('/healthz?verbose', { token: null });
    assert.equal(text(healthz), [...BASE, ...HOOKS].map((c) => `[+]${c} ok\n`).join('') + 'healthz check passed\n');
  });

  test('?exclude= skips checks (repeatable) and warns about names that match none', async () => {
    const r = await client.get('/readyz?verbose&exclude=etcd&exclude=shutdown&exclude=nope&exclude=also-nope', { token: null });
    assert.equal(r.status, 200);
    const out = text(r);
    assert.match(out, /^\[\+\]etcd excluded: ok$/m);
    assert.match(out, /^\[\+\]shutdown excluded: ok$/m);
    assert.match(out, /^warn: some health checks cannot be excluded: no matches for "also-nope","nope"$/m);
    assert.match(out, /readyz check passed\n$/);
    // Without verbose the answer stays `ok`.
    assert.equal(text(await client.get('/livez?exclude=nope', { token: null })), 'ok');
  });

  test('single checks answer `ok`; they need permission (system:monitoring), unknown ones are 404', async () => {
    for (const path of ['/readyz/etcd', '/livez/ping', '/healthz/log', '/readyz/informer-sync', '/readyz/shutdown', '/readyz/poststarthook/rbac/bootstrap-roles']) {
      const r = await client.get(path);
      assert.equal(r.status, 200, path);
      assert.equal(text(r), 'ok');
    }
    assert.equal((await client.get('/livez/informer-sync')).status, 404);
    assert.equal((await client.get('/readyz/no-such-check')).status, 404);
    // system:public-info-viewer grants the endpoints themselves, not their sub-paths.
    const anonymous = await client.get('/readyz/etcd', { token: null });
    assert.equal(anonymous.status, 403);
    assert.equal(anonymous.body.message, 'forbidden: User "system:anonymous" cannot get path "/readyz/etcd"');
  });

  test('etcd stopped: /readyz fails within seconds with the reason withheld (logged), and recovers when etcd is back', async () => {
    await etcd.stop();
    const failed = await eventually(async () => {
      const r = await client.get('/readyz?verbose', { token: null });
      return r.status === 500 ? r : undefined;
    }, 15_000, '/readyz to fail');
    const out = text(failed);
    assert.match(out, /^\[-\]etcd failed: reason withheld$/m);
    assert.match(out, /^\[\+\]ping ok$/m);
    assert.match(out, /readyz check failed\n$/);
    assert.equal(failed.headers['content-type'], 'text/plain; charset=utf-8');
    // Not verbose: a failure is always printed in full.
    assert.match(text(await client.get('/readyz', { token: null })), /^\[-\]etcd failed: reason withheld$/m);
    // kube 1.24's /livez has the etcd check (never delayed) too.
    assert.equal((await client.get('/livez', { token: null })).status, 500);
    assert.equal((await client.get('/livez?exclude=etcd', { token: null })).status, 200);
    // The single check tells those allowed to read it why.
    const single = await client.get('/readyz/etcd');
    assert.equal(single.status, 500);
    assert.match(text(single), /^internal server error: .+\n$/);
    // The reason is in the server log.
    assert.ok(lines.some((l) => l.includes('[-]etcd failed: ') && !l.includes('reason withheld')), 'the reason is logged');

    etcd = await startEmbeddedEtcd({ dataDir: join(dir, 'etcd'), transport: 'plain' });
    await eventually(async () => (await client.get('/readyz', { token: null })).status === 200, 30_000, '/readyz to recover');
    assert.equal(text(await client.get('/readyz', { token: null })), 'ok');
    assert.equal((await client.get('/api/v1/namespaces/default')).status, 200);
  });
});

/** Starts plinth with one extra post-start hook that finishes when `finish()` is called; resolves once it listens. */
async function startWithHeldHook(etcd: EmbeddedEtcd, dataDir: string, args: string[]) {
  const port = await freePort();
  let finish!: () => void;
  const hook = new Promise<void>((r) => (finish = r));
  const started = startServer(
    parseFlags([`--secure-port=${port}`, '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, `--etcd-servers=${etcd.endpoint}`, ...args]),
    createLogger(-1, new Writable({ write: (_c, _e, cb) => cb() })),
    { postStartHooks: [{ name: 'test/held', run: () => hook }] },
  );
  started.catch(() => undefined);
  // Listening (and the admin token and CA written) before the hooks run.
  const client = await eventually(async () => {
    const c = new TestClient(`https://127.0.0.1:${port}`, readFileSync(join(dataDir, 'certs', 'ca.crt'), 'utf8'), readFileSync(join(dataDir, 'admin-token'), 'utf8').trim());
    try {
      await c.get('/livez/ping');
      return c;
    } catch {
      c.close();
      return undefined;
    }
  }, 30_000, 'plinth to listen');
  return { client, finish, started };
}

describe('post-start hooks and --livez-grace-period', () => {
  const dir = tempDir('plinth-health-hooks-');
  let etcd: EmbeddedEtcd;

  before(async () => {
    etcd = await startEmbeddedEtcd({ dataDir: join(dir, 'etcd'), transport: 'plain' });
  });
  after(async () => {
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an unfinished hook fails /readyz and /healthz ("not finished"); /livez passes during the grace period', async () => {
    const { client, finish, started } = await startWithHeldHook(etcd, join(dir, 'a'), ['--livez-grace-period=1h']);
    await eventually(async () => /^\[\+\]poststarthook\/rbac\/bootstrap-roles ok$/m.test(text(await client.get('/readyz?verbose'))), 30_000, "plinth's own hooks");
    const readyz = await client.get('/readyz?verbose', { token: null });
    assert.equal(readyz.status, 500);
    assert.match(text(readyz), /^\[-\]poststarthook\/test\/held failed: reason withheld$/m);
    assert.equal((await client.get('/healthz', { token: null })).status, 500);
    const single = await client.get('/readyz/poststarthook/test/held');
    assert.equal(single.status, 500);
    assert.equal(text(single), 'internal server error: not finished\n');
    // /livez assumes unfinished hooks will succeed during the grace period.
    const livez = await client.get('/livez?verbose', { token: null });
    assert.equal(livez.status, 200);
    assert.match(text(livez), /^\[\+\]poststarthook\/test\/held ok$/m);
    finish();
    const server = await started;
    assert.equal((await client.get('/readyz', { token: null })).status, 200);
    assert.equal(text(await client.get('/readyz/poststarthook/test/held')), 'ok');
    client.close();
    await server.stop();
  });

  test('without a grace period (the default) /livez fails too until the hook has run', async () => {
    const { client, finish, started } = await startWithHeldHook(etcd, join(dir, 'b'), []);
    // Anonymous requests are authorized by RBAC once its caches hold the bootstrap bindings
    // (before that a 403, as on kube); the held hook does not delay that.
    await eventually(async () => (await client.get('/livez', { token: null })).status !== 403, 30_000, 'anonymous /livez authorized');
    const livez = await client.get('/livez?verbose', { token: null });
    assert.equal(livez.status, 500);
    assert.match(text(livez), /^\[-\]poststarthook\/test\/held failed: reason withheld$/m);
    assert.match(text(livez), /livez check failed\n$/);
    finish();
    const server = await started;
    assert.equal((await client.get('/livez', { token: null })).status, 200);
    client.close();
    await server.stop();
  });
});

describe('graceful shutdown with --shutdown-delay-duration', () => {
  const dir = tempDir('plinth-health-shutdown-');
  let etcd: EmbeddedEtcd;
  let server: RunningServer;
  let client: TestClient;

  before(async () => {
    etcd = await startEmbeddedEtcd({ dataDir: join(dir, 'etcd'), transport: 'plain' });
    server = await startServer(
      parseFlags(['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${join(dir, 'data')}`, `--etcd-servers=${etcd.endpoint}`, '--shutdown-delay-duration=10s']),
      createLogger(-1, new Writable({ write: (_c, _e, cb) => cb() })),
    );
    client = TestClient.fromKubeconfig(server.kubeconfigPath);
  });
  after(async () => {
    client.close();
    await server.stop();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('/readyz fails first while a request in flight completes with 2xx', async () => {
    // A create whose body has not finished arriving: in flight until the test sends the rest.
    const body = JSON.stringify({ metadata: { name: 'in-flight' } });
    const held: ClientRequest = request(new URL('/api/v1/namespaces/default/configmaps', client.base), {
      method: 'POST',
      ca: readFileSync(server.caFile!),
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json', 'content-length': String(body.length) },
    });
    const response = new Promise<number>((resolve, reject) => {
      held.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      held.on('error', reject);
    });
    held.write(body.slice(0, 5));
    held.flushHeaders();
    assert.equal((await client.get('/readyz', { token: null })).status, 200);

    const stopped = server.stop();
    const readyz = await eventually(async () => {
      const r = await client.get('/readyz?verbose', { token: null });
      return r.status === 500 ? r : undefined;
    }, 10_000, '/readyz to fail');
    assert.match(text(readyz), /^\[-\]shutdown failed: reason withheld$/m);
    // Still live, and still serving during the delay.
    assert.equal((await client.get('/livez', { token: null })).status, 200);
    const during = await client.get('/api/v1/namespaces/default');
    assert.equal(during.status, 200);
    // Each answer closes its connection: keep-alive clients move to another replica before the
    // idle connections are closed.
    assert.equal(during.headers['connection'], 'close');
    held.end(body.slice(5));
    assert.equal(await response, 201);
    client.close();
    await stopped;
  });
});
