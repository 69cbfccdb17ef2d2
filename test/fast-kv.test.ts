/**
 * The storage's own gRPC calls for Range and Txn (packages/storage/src/fast-kv.ts): answers and
 * errors exactly as etcd3's client gives them, against a real etcd; a first call made before its
 * session is up goes through etcd3; and the faults a member can cause mid-call — no answer, a
 * broken connection, an oversized answer — end as etcd3 would end them (a read is read again
 * through etcd3, a write is reported as a cut call for the store's write loop to resolve).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { Etcd3, GRPCDeadlineExceededError, GRPCResourceExhastedError } from 'etcd3';
import { EtcdCallCut, EtcdDeadlineExceeded, EtcdStatusError, EtcdUnavailable, FastKV, freePort, isCutCall, toEtcd3Error, type FastKVOptions } from '@plinth/storage';
import { startTestEtcd, tempDir, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let client: Etcd3;

before(async () => {
  etcd = await startTestEtcd();
  client = new Etcd3({ hosts: [etcd.endpoint] });
});

after(async () => {
  client.close();
  await etcd.stop();
});

const options = (endpoint: string, mode: FastKVOptions['mode'], extra: Partial<FastKVOptions> = {}): FastKVOptions => ({
  endpoints: [endpoint],
  timeoutMs: 10_000,
  maxReceiveBytes: 8 * 1024 * 1024,
  mode,
  // As EtcdStore configures it: its typed errors become etcd3's, once.
  mapError: toEtcd3Error,
  ...extra,
});

/** etcd3's kv, counting the calls it serves for a FastKV. */
function countingFallback(kv: Etcd3['kv']): { kv: Etcd3['kv']; calls: () => number } {
  let n = 0;
  const wrapped = Object.create(kv) as Etcd3['kv'];
  wrapped.range = (req) => (n++, kv.range(req));
  wrapped.txn = (req) => (n++, kv.txn(req));
  return { kv: wrapped, calls: () => n };
}

/** Calls until the FastKV serves one without its fallback (its session is up). */
async function connected(fast: FastKV, calls: () => number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const before = calls();
    await fast.range({ key: Buffer.from('/probe') });
    if (calls() === before) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail('the session never came up');
}

const outcome = async (p: Promise<unknown>): Promise<string> => {
  try {
    return `ok ${JSON.stringify(await p)}`;
  } catch (e) {
    return `${(e as Error).constructor.name} ${(e as Error).message}`;
  }
};

test('Range and Txn answer exactly as etcd3 does, errors included, and only the first call waits for the session', async () => {
  const fb = countingFallback(client.kv);
  const fast = new FastKV(options(etcd.endpoint, 'write'), fb.kv);
  try {
    await fast.range({ key: Buffer.from('/fk/') });
    assert.equal(fb.calls(), 1, 'the first call, made with no session up, went through etcd3');
    await connected(fast, fb.calls);
    const served = fb.calls();
    const k = (i: number): Buffer => Buffer.from(`/fk/k${i}`);
    for (let i = 0; i < 5; i++) await client.put(k(i)).value(`v${i}`);
    const create = (key: Buffer) => ({
      compare: [{ key, target: 'Create' as const, create_revision: 0, result: 'Equal' as const }],
      success: [{ request_put: { key, value: Buffer.from('new'), prev_kv: true } }],
      failure: [{ request_range: { key } }],
    });
    const head = Number((await client.kv.range({ key: k(0) })).header.revision);
    const cases: Array<[string, (kv: Pick<Etcd3['kv'], 'range' | 'txn'>) => Promise<unknown>]> = [
      ['prefix, limit 2', (kv) => kv.range({ key: Buffer.from('/fk/'), range_end: Buffer.from('/fk0'), limit: 2 })],
      ['count only', (kv) => kv.range({ key: Buffer.from('/fk/'), range_end: Buffer.from('/fk0'), count_only: true })],
      ['keys only at a revision', (kv) => kv.range({ key: Buffer.from('/fk/'), range_end: Buffer.from('/fk0'), keys_only: true, revision: head - 2 })],
      ['missing key', (kv) => kv.range({ key: Buffer.from('/fk/none') })],
      ['future revision', (kv) => kv.range({ key: k(0), revision: head + 1000 })],
      ['txn whose compare fails', (kv) => kv.txn(create(k(1)))],
      ['txn of ranges', (kv) => kv.txn({ compare: [], success: [{ request_range: { key: k(2) } }, { request_range: { key: k(3), keys_only: true } }], failure: [] })],
      ['txn with an empty key', (kv) => kv.txn({ compare: [], success: [{ request_put: { key: Buffer.alloc(0), value: Buffer.from('x') } }], failure: [] })],
    ];
    for (const [name, call] of cases) {
      assert.equal(await outcome(call(fast)), await outcome(call(client.kv)), name);
    }
    // A write applied through each: same shape, the revisions one apart.
    const mine = (await fast.txn(create(Buffer.from('/fk/new-a')))) as unknown as { succeeded: boolean; header: { revision: string } };
    const theirs = (await client.kv.txn(create(Buffer.from('/fk/new-b')))) as unknown as { succeeded: boolean; header: { revision: string } };
    assert.equal(mine.succeeded, true);
    assert.equal(Number(theirs.header.revision), Number(mine.header.revision) + 1);
    // A compacted revision.
    await client.kv.compact({ revision: Number(theirs.header.revision) });
    assert.equal(await outcome(fast.range({ key: k(0), revision: head })), await outcome(client.kv.range({ key: k(0), revision: head })));
    assert.equal(fb.calls(), served, 'every later call used the session');
    // Without the mapping, the same failures are its own typed errors: etcd's status and text.
    const raw = new FastKV(options(etcd.endpoint, 'write', { mapError: undefined }), fb.kv);
    try {
      await connected(raw, fb.calls);
      await assert.rejects(raw.range({ key: k(0), revision: head }), (e: Error) => {
        assert.ok(e instanceof EtcdStatusError, e.constructor.name);
        assert.equal(e.code, 11);
        assert.equal(e.details, 'etcdserver: mvcc: required revision has been compacted');
        return true;
      });
      await assert.rejects(raw.txn({ compare: [], success: [{ request_put: { key: Buffer.alloc(0), value: Buffer.from('x') } }], failure: [] }), (e: Error) => e instanceof EtcdStatusError && e.code === 3 && e.details === 'etcdserver: key is not provided');
    } finally {
      raw.close();
    }
  } finally {
    fast.close();
  }
});

test('an answer larger than maxReceiveBytes fails with RESOURCE_EXHAUSTED, as etcd3 fails it', async () => {
  await client.put('/fk-big/a').value('x'.repeat(64 * 1024));
  const fb = countingFallback(client.kv);
  const fast = new FastKV(options(etcd.endpoint, 'read', { maxReceiveBytes: 16 * 1024 }), fb.kv);
  try {
    await connected(fast, fb.calls);
    await assert.rejects(fast.range({ key: Buffer.from('/fk-big/a') }), (e: Error) => e instanceof GRPCResourceExhastedError && /larger than max/.test(e.message));
    // The session survives a refused answer.
    const before = fb.calls();
    assert.equal((await fast.range({ key: Buffer.from('/fk-big/a'), keys_only: true })).kvs.length, 1);
    assert.equal(fb.calls(), before);
  } finally {
    fast.close();
  }
});

/** An HTTP/2 server standing in for a member that misbehaves once a call arrives. */
async function faultyMember(onStream: (stream: http2.ServerHttp2Stream, session: http2.Http2Session) => void): Promise<{ endpoint: string; streams: () => number; close: () => void }> {
  const server = http2.createServer();
  let streams = 0;
  server.on('stream', (stream) => {
    streams++;
    stream.on('error', () => undefined);
    onStream(stream, stream.session!);
  });
  server.on('sessionError', () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams: () => streams,
    close: () => server.close(),
  };
}

/** A FastKV whose session is up against `endpoint` (the probe calls answer 'ok' through `member`). */
async function fastAgainst(endpoint: string, mode: FastKVOptions['mode'], extra: Partial<FastKVOptions> = {}): Promise<{ fast: FastKV; fallbackCalls: () => number }> {
  const fb = countingFallback(client.kv);
  const fast = new FastKV(options(endpoint, mode, extra), fb.kv);
  // The first call dials; wait for the session by the member seeing a stream.
  await fast.range({ key: Buffer.from('/probe') }).catch(() => undefined);
  return { fast, fallbackCalls: fb.calls };
}

test('a member that never answers: the call fails with DEADLINE_EXCEEDED at its deadline', async () => {
  const member = await faultyMember(() => undefined); // holds every stream open
  const { fast, fallbackCalls } = await fastAgainst(member.endpoint, 'read', { timeoutMs: 300 });
  try {
    await new Promise((r) => setTimeout(r, 100)); // the session connects
    const calls = fallbackCalls();
    await assert.rejects(fast.range({ key: Buffer.from('/k') }), (e: Error) => e instanceof GRPCDeadlineExceededError && e.cause instanceof EtcdDeadlineExceeded);
    assert.equal(fallbackCalls(), calls, 'it went to the member, not to etcd3');
    assert.equal(member.streams(), 1);
  } finally {
    fast.close();
    member.close();
  }
});

test('a connection cut with a call in flight: a read is read again through etcd3, a write fails as a cut call', async () => {
  const member = await faultyMember((_stream, session) => session.destroy());
  try {
    for (const mode of ['read', 'write'] as const) {
      const { fast, fallbackCalls } = await fastAgainst(member.endpoint, mode);
      try {
        await new Promise((r) => setTimeout(r, 100));
        const streams = member.streams();
        const calls = fallbackCalls();
        const key = Buffer.from(`/fk-cut/${mode}`);
        const req = { compare: [], success: [{ request_put: { key, value: Buffer.from('v') } }], failure: [] };
        if (mode === 'read') {
          await client.put(key).value('there');
          const r = await fast.range({ key });
          assert.equal(r.kvs[0]?.value.toString(), 'there', 'served by etcd3 after the cut');
          assert.equal(fallbackCalls(), calls + 1);
        } else {
          await assert.rejects(fast.txn(req), (e: Error) => isCutCall(e) && e.cause instanceof EtcdCallCut);
          assert.equal(fallbackCalls(), calls, 'a cut write is not sent again here');
        }
        assert.equal(member.streams(), streams + 1, 'the call reached the member before the cut');
      } finally {
        fast.close();
      }
    }
  } finally {
    member.close();
  }
});

test('a member answering UNAVAILABLE (no leader): a read goes through etcd3, a write fails as etcd3 reports it, and the next call dials again', async () => {
  const member = await faultyMember((stream) => stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'etcdserver:%20no%20leader' }, { endStream: true }));
  try {
    for (const mode of ['read', 'write'] as const) {
      const { fast, fallbackCalls } = await fastAgainst(member.endpoint, mode);
      try {
        await new Promise((r) => setTimeout(r, 100));
        const calls = fallbackCalls();
        const key = Buffer.from(`/fk-unavailable/${mode}`);
        if (mode === 'read') {
          await client.put(key).value('there');
          assert.equal((await fast.range({ key })).kvs[0]?.value.toString(), 'there');
          assert.equal(fallbackCalls(), calls + 1);
        } else {
          await assert.rejects(fast.txn({ compare: [], success: [{ request_put: { key, value: Buffer.from('v') } }], failure: [] }), (e: Error) => {
            assert.equal(e.message, '14 UNAVAILABLE: etcdserver: no leader');
            assert.ok(e.cause instanceof EtcdUnavailable);
            return isCutCall(e);
          });
        }
        // The session was dropped: the next call is etcd3's while a new one is dialled.
        await fast.range({ key });
        assert.equal(fallbackCalls(), calls + (mode === 'read' ? 2 : 1));
      } finally {
        fast.close();
      }
    }
  } finally {
    member.close();
  }
});

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl in `dir`. */
function makePki(dir: string): void {
  writeFileSync(
    join(dir, 'openssl.cnf'),
    [
      '[req]',
      'distinguished_name = dn',
      'prompt = no',
      '[dn]',
      'CN = unused',
      '[ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign,cRLSign,digitalSignature',
      '[server]',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = IP:127.0.0.1',
      '[client]',
      'extendedKeyUsage = clientAuth',
      '',
    ].join('\n'),
  );
  const ssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  for (const name of ['ca', 'server', 'client']) ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  ssl('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=test-ca', '-days', '1', '-config', 'openssl.cnf', '-extensions', 'ca', '-out', 'ca.crt');
  for (const name of ['server', 'client']) {
    ssl('req', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-config', 'openssl.cnf', '-out', `${name}.csr`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', '1', '-days', '1', '-extfile', 'openssl.cnf', '-extensions', name, '-out', `${name}.crt`);
  }
}

test('over TLS with client-certificate auth (--client-cert-auth) the calls use its own session, not etcd3', async () => {
  const dir = tempDir('plinth-fastkv-tls-');
  makePki(dir);
  const [port, peer] = [await freePort(), await freePort()];
  const endpoint = `https://127.0.0.1:${port}`;
  const member = spawn(
    'etcd',
    [
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      `--cert-file=${join(dir, 'server.crt')}`,
      `--key-file=${join(dir, 'server.key')}`,
      `--trusted-ca-file=${join(dir, 'ca.crt')}`,
      '--client-cert-auth',
    ],
    { stdio: 'ignore' },
  );
  const tls = { ca: readFileSync(join(dir, 'ca.crt')), cert: readFileSync(join(dir, 'client.crt')), key: readFileSync(join(dir, 'client.key')) };
  const tlsClient = new Etcd3({ hosts: [endpoint], credentials: { rootCertificate: tls.ca, certChain: tls.cert, privateKey: tls.key } });
  const fb = countingFallback(tlsClient.kv);
  const fast = new FastKV(options(endpoint, 'write', { tls }), fb.kv);
  try {
    // etcd is up once etcd3 (the fallback) can write through it.
    for (let i = 0; ; i++) {
      try {
        await tlsClient.put('/fk-tls/a').value('over tls');
        break;
      } catch (e) {
        if (i > 100) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await connected(fast, fb.calls);
    const before = fb.calls();
    assert.equal((await fast.range({ key: Buffer.from('/fk-tls/a') })).kvs[0]?.value.toString(), 'over tls');
    assert.equal(fb.calls(), before, 'served over its own TLS session');
  } finally {
    fast.close();
    tlsClient.close();
    member.kill('SIGKILL');
    await new Promise((r) => member.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a member that keeps refusing the session: redials back off exponentially (×1.6, jittered) up to the cap, calls meanwhile go through etcd3', async () => {
  const dials: number[] = [];
  // Takes each connection and drops it at once: every dial fails.
  const server = createServer((socket) => {
    dials.push(performance.now());
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fb = countingFallback(client.kv);
  const fast = new FastKV(options(endpoint, 'read', { redial: { initialMs: 100, maxMs: 400 } }), fb.kv);
  try {
    const t0 = performance.now();
    let calls = 0;
    while (performance.now() - t0 < 2500) {
      await fast.range({ key: Buffer.from('/probe') });
      calls++;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(fb.calls(), calls, 'every call was served by etcd3');
    const gaps = dials.slice(1).map((t, i) => t - dials[i]!);
    // 100, 160, 256, 400, 400... ms (±20 %): about eight dials in 2.5 s; a fixed 1 s delay makes three.
    assert.ok(dials.length >= 5 && dials.length <= 12, `${dials.length} dials, gaps ${gaps.map(Math.round).join()}`);
    assert.ok(gaps[0]! >= 70, `first redial after ${Math.round(gaps[0]!)} ms`);
    assert.ok(Math.max(...gaps.slice(0, 3)) < Math.min(...gaps.slice(-2)), `the delay grows: ${gaps.map(Math.round).join()}`);
    assert.ok(Math.max(...gaps) < 400 * 1.2 + 150, `capped: ${gaps.map(Math.round).join()}`);
  } finally {
    fast.close();
    server.close();
  }
});
