/**
 * FastKV's session against a real etcd the test pauses (SIGSTOP) and secures (etcd's auth): the
 * HTTP/2 keepalive notices a member that stopped answering, idle or with a call in flight (the
 * call ends as EtcdCallCut, and EtcdStore's write loop resolves the write), and with credentials
 * the calls carry etcd's auth token — fetched again when etcd says it expired — and answer as
 * etcd3's client does, call by call.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { EtcdCallCut, EtcdStatusError, EtcdStore, FastKV, freePort, toEtcd3Error, type FastKVOptions } from '@plinth/storage';
import type { StoredObject } from '@plinth/api';
import { stopProcess, tempDir } from './harness.js';

let member: ChildProcess;
let endpoint: string;
let dir: string;
let client: Etcd3;

/** Short keepalive so a stopped member is noticed within a second (kube's is 30 s / 10 s). */
const KEEPALIVE = { timeMs: 200, timeoutMs: 300 };

before(async () => {
  dir = tempDir('plinth-fastkv-session-');
  const [port, peer] = [await freePort(), await freePort()];
  endpoint = `http://127.0.0.1:${port}`;
  member = spawn(
    'etcd',
    [
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      // A simple token expires after a second unused: the refresh is seen at once.
      '--auth-token-ttl=1',
      // The test's keepalive PINGs a stalled call every 200 ms; etcd's default policy (5 s) would
      // answer such a client with a too_many_pings GOAWAY.
      '--grpc-keepalive-min-time=100ms',
    ],
    { stdio: 'ignore' },
  );
  client = new Etcd3({ hosts: [endpoint] });
  for (let i = 0; ; i++) {
    try {
      await client.put('/up').value('1');
      break;
    } catch (e) {
      if (i > 100) throw e;
      await sleep(100);
    }
  }
});

after(async () => {
  member.kill('SIGCONT');
  client.close();
  member.kill('SIGKILL');
  await new Promise((r) => member.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** etcd3's kv, counting the calls it serves for a FastKV. */
function countingFallback(kv: Etcd3['kv']): { kv: Etcd3['kv']; calls: () => number } {
  let n = 0;
  const wrapped = Object.create(kv) as Etcd3['kv'];
  wrapped.range = (req) => (n++, kv.range(req));
  wrapped.txn = (req) => (n++, kv.txn(req));
  return { kv: wrapped, calls: () => n };
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

/** A FastKV on the test's member whose session is up. */
async function fastKv(fallback: Etcd3['kv'], extra: Partial<FastKVOptions> = {}): Promise<FastKV> {
  const fast = new FastKV({ endpoints: [endpoint], timeoutMs: 30_000, maxReceiveBytes: 1 << 20, mode: 'write', keepalive: KEEPALIVE, ...extra }, fallback);
  await fast.range({ key: Buffer.from('/probe') });
  await until('the session comes up', () => fast.connected);
  await fast.range({ key: Buffer.from('/probe') }); // answered on the session: a working member
  return fast;
}

/** Runs `fn` with the member stopped (SIGSTOP), then lets it go on (SIGCONT). */
async function whileStopped<T>(fn: () => Promise<T>): Promise<T> {
  await stopProcess(member);
  try {
    return await fn();
  } finally {
    member.kill('SIGCONT');
  }
}

// First: the tests after it stop and replace the member.
test('a closed store lets its process exit, its watch stream cancelled (etcd holds a half-closed one open)', async () => {
  const script = `
    import { EtcdStore } from '@plinth/storage';
    const store = new EtcdStore({ endpoints: [${JSON.stringify(endpoint)}] });
    await store.watchFeed('/exit-test/', false, 1, { onEvents() {}, onCancel() {} });
    await store.create('/exit-test/a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    await store.close();
    process.stdout.write('closed\\n');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | string>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('still running 15 s after close');
    }, 15_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c ?? -1);
    });
  });
  assert.equal(out, 'closed\n');
  assert.equal(code, 0);
});

test('a dead idle connection: the next call PINGs, the unanswered PING drops the session, the read goes through etcd3 and the session is dialled again', async () => {
  const fb = countingFallback(client.kv);
  const fast = await fastKv(fb.kv, { mode: 'read' });
  try {
    await sleep(500); // idle: no PING while no call is in flight
    assert.ok(fast.connected);
    const before = fb.calls();
    const { read } = await whileStopped(async () => {
      const r = fast.range({ key: Buffer.from('/up') });
      // Without the keepalive the call would wait for its 30 s deadline on the dead session.
      await until('the unanswered PING drops the session', () => !fast.connected);
      return { read: r };
    });
    // The member is back: the read, sent again through etcd3, answers.
    assert.equal((await read).kvs[0]?.value.toString(), '1');
    assert.equal(fb.calls(), before + 1, 'read again through etcd3');
    await fast.range({ key: Buffer.from('/up') });
    await until('a new session comes up', () => fast.connected);
    const served = fb.calls();
    assert.equal((await fast.range({ key: Buffer.from('/up') })).kvs[0]?.value.toString(), '1');
    assert.equal(fb.calls(), served, 'served by the new session');
  } finally {
    fast.close();
  }
});

test('a member stopping mid-call: the write fails as EtcdCallCut long before its deadline, and the store resolves its own cut create', async () => {
  const fb = countingFallback(client.kv);
  const fast = await fastKv(fb.kv);
  const store = new EtcdStore({ endpoints: [endpoint], keepalive: KEEPALIVE });
  try {
    const key = Buffer.from('/fk-stop/raw');
    const outcome = await whileStopped(async () => {
      const t0 = Date.now();
      const e = await fast.txn({ compare: [], success: [{ request_put: { key, value: Buffer.from('v') } }], failure: [] }).then(
        () => undefined,
        (err: unknown) => err,
      );
      return { e, ms: Date.now() - t0 };
    });
    assert.ok(outcome.e instanceof EtcdCallCut, String(outcome.e));
    assert.ok(outcome.ms < 10_000, `cut after ${outcome.ms} ms (the deadline is 30 s)`);
    assert.equal(fb.calls(), 1, 'only the first call (before the session) went through etcd3; the cut write is not resent');

    // Through the store: its session up, then the member stops with a create in flight.
    const obj = (name: string): StoredObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `uid-${name}` }, data: { a: 'b' } }) as StoredObject;
    for (let i = 0; i < 20; i++) await store.create(`/fk-stop/warm${i}`, obj(`warm${i}`));
    const created = store.create('/fk-stop/cm', obj('cm'));
    await stopProcess(member);
    await sleep(1500); // the keepalive cuts the call; the write loop resends through etcd3, which waits
    member.kill('SIGCONT');
    const written = await created;
    assert.ok(Number(written.metadata.resourceVersion) > 0);
    const got = await store.get('/fk-stop/cm');
    assert.equal(got.metadata.uid, 'uid-cm');
    assert.equal(got.metadata.resourceVersion, written.metadata.resourceVersion);
  } finally {
    member.kill('SIGCONT');
    fast.close();
    await store.close();
  }
});

test('etcd with auth enabled: calls carry the token, answer as etcd3 does, and an expired token is fetched again', async () => {
  await client.user('root').create('rootpw');
  await client.role('root').create();
  await client.user('root').addRole('root');
  await client.auth.authEnable();
  const auth = { username: 'root', password: 'rootpw' };
  const authed = new Etcd3({ hosts: [endpoint], auth });
  const fb = countingFallback(authed.kv);
  try {
    // No credentials: etcd refuses the call; the refusal is etcd's typed status.
    const anon = new FastKV({ endpoints: [endpoint], timeoutMs: 5000, maxReceiveBytes: 1 << 20, mode: 'read' }, fb.kv);
    try {
      await anon.range({ key: Buffer.from('/up') }).catch(() => undefined);
      await until('the anonymous session comes up', () => anon.connected);
      await assert.rejects(anon.range({ key: Buffer.from('/up') }), (e: Error) => e instanceof EtcdStatusError && e.code === 3 && /user name is empty/.test(e.details));
    } finally {
      anon.close();
    }

    const fast = await fastKv(fb.kv, { auth, mapError: toEtcd3Error });
    try {
      const served = fb.calls();
      const key = Buffer.from('/fk-auth/a');
      const cases: Array<[string, (kv: Pick<Etcd3['kv'], 'range' | 'txn'>) => Promise<unknown>]> = [
        ['range', (kv) => kv.range({ key: Buffer.from('/up') })],
        ['txn success', (kv) => kv.txn({ compare: [{ key, target: 'Create', create_revision: 0, result: 'Equal' }], success: [{ request_range: { key } }], failure: [] })],
        ['txn failure', (kv) => kv.txn({ compare: [{ key: Buffer.from('/up'), target: 'Create', create_revision: 0, result: 'Equal' }], success: [], failure: [{ request_range: { key: Buffer.from('/up') } }] })],
        ['error', (kv) => kv.range({ key: Buffer.from('/up'), revision: 1e9 })],
      ];
      const outcome = async (p: Promise<unknown>): Promise<string> => p.then((v) => `ok ${JSON.stringify(v)}`, (e: Error) => `${e.constructor.name} ${e.message}`);
      for (const [name, call] of cases) assert.equal((await outcome(call(fast))).replace(/"revision":"\d+"/g, ''), (await outcome(call(authed.kv))).replace(/"revision":"\d+"/g, ''), name);
      // The token (--auth-token-ttl=1) expires unused; etcd answers `invalid auth token`, and
      // the call is made again with a new one, still on its own session.
      await sleep(2500);
      assert.equal((await fast.range({ key: Buffer.from('/up') })).kvs[0]?.value.toString(), '1');
      assert.equal(fb.calls(), served, 'every call was served by its own session, not by etcd3');
    } finally {
      fast.close();
    }

    // EtcdStore configured with the credentials works as usual.
    const store = new EtcdStore({ endpoints: [endpoint], auth });
    try {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', uid: 'u-x' } } as StoredObject;
      const written = await store.create('/fk-auth/store/x', cm);
      assert.equal((await store.get('/fk-auth/store/x')).metadata.resourceVersion, written.metadata.resourceVersion);
    } finally {
      await store.close();
    }
  } finally {
    authed.close();
  }
});

