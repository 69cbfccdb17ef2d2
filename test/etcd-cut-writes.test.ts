/**
 * Writes whose etcd call is cut after etcd applied them (a member stopping, a connection
 * breaking): the storage sends the compare-and-swap again and must recognise its own applied
 * write, never answer KeyExists to its own create, apply an update twice, or answer NotFound to
 * its own delete. A TCP proxy in front of a real etcd cuts the connection once a write has gone
 * through it, dropping etcd's answer.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Etcd3, GRPCInternalError, GRPCUnavailableError, GRPCUnknownError } from 'etcd3';
import { EtcdStore, isCutCall, isUnsentCall } from '@plinth/storage';
import type { StoredObject } from '@plinth/api';
import { startTestEtcd, type TestEtcd } from './harness.js';

/** Forwards TCP to etcd; `cutNextWrite()` cuts the connection that carries the next large request. */
class CuttingProxy {
  readonly #server: Server;
  #armed: (() => void) | undefined;
  cuts = 0;

  constructor(target: URL) {
    this.#server = createServer((client: Socket) => {
      const upstream = connect(Number(target.port), target.hostname);
      let dropAnswers = false;
      client.on('data', (chunk: Buffer) => {
        // A request large enough to be the test's write (pings and headers are small): it goes
        // through whole, etcd's answer never comes back, and the connection breaks.
        if (this.#armed && chunk.length >= 8 * 1024) {
          const done = this.#armed;
          this.#armed = undefined;
          dropAnswers = true;
          setTimeout(() => {
            this.cuts++;
            client.destroy();
            upstream.destroy();
            done();
          }, 200);
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!dropAnswers) client.write(chunk);
      });
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  listen(): Promise<string> {
    return new Promise((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(this.#server.address() as { port: number }).port}`)));
  }

  /** Resolves once the next large request was forwarded and its connection cut. */
  cutNextWrite(): Promise<void> {
    return new Promise((resolve) => (this.#armed = resolve));
  }

  close(): void {
    this.#server.close();
  }
}

let etcd: TestEtcd;
let proxy: CuttingProxy;
let store: EtcdStore;
let raw: Etcd3;

before(async () => {
  etcd = await startTestEtcd();
  proxy = new CuttingProxy(new URL(etcd.endpoint));
  store = new EtcdStore({ endpoints: [await proxy.listen()] });
  raw = new Etcd3({ hosts: [etcd.endpoint] });
});

after(async () => {
  raw.close();
  await store.close();
  proxy.close();
  await etcd.stop();
});

/** An object whose write is one large request (the proxy's trigger). */
const big = (name: string, n: number): StoredObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', uid: `${name}-${Math.random()}` },
  data: { n: String(n), pad: 'x'.repeat(32 * 1024) },
});

const key = (name: string): string => `/registry/configmaps/ns/${name}`;

async function stored(name: string): Promise<{ n: string; version: number; modRevision: number } | undefined> {
  const kv = (await raw.get(key(name)).exec()).kvs[0];
  if (!kv) return undefined;
  return { n: (JSON.parse(kv.value.toString()) as { data: { n: string } }).data.n, version: Number(kv.version), modRevision: Number(kv.mod_revision) };
}

test('a create applied by a cut call succeeds (no KeyExists for its own write)', async () => {
  const cut = proxy.cutNextWrite();
  const created = await store.create(key('c'), big('c', 1));
  await cut;
  const now = await stored('c');
  assert.equal(proxy.cuts, 1, 'the create went through the proxy and was cut');
  assert.equal(now?.version, 1, 'stored once');
  assert.equal(created.metadata.resourceVersion, String(now!.modRevision));
});

test('an update applied by a cut call is applied once and answered with its revision', async () => {
  await store.create(key('u'), big('u', 1));
  const before = await stored('u');
  const cuts = proxy.cuts;
  const cut = proxy.cutNextWrite();
  let calls = 0;
  const updated = await store.guaranteedUpdate(key('u'), (cur) => {
    calls++;
    const n = Number((cur!['data'] as { n: string }).n);
    return { ...cur!, data: { ...(cur!['data'] as object), n: String(n + 1) } };
  });
  await cut;
  const now = await stored('u');
  assert.equal(proxy.cuts, cuts + 1);
  assert.equal(now?.n, '2', 'incremented once');
  assert.equal(now?.version, before!.version + 1);
  assert.equal(calls, 1, 'the update function ran once: the applied write was recognised');
  assert.equal(updated.metadata.resourceVersion, String(now!.modRevision));
});

test('a delete applied by a cut call succeeds (no NotFound for its own delete)', async () => {
  // The delete request itself is small: the large request that arms the cut is a create of
  // another key sent on the same connection just before it.
  const target = await store.create(key('d'), big('d', 1));
  const cuts = proxy.cuts;
  const cut = proxy.cutNextWrite();
  const companion = store.create(key('d-companion'), big('d-companion', 1));
  const deleted = await store.delete(key('d'), { suggestion: target });
  await Promise.all([cut, companion]);
  assert.equal(proxy.cuts, cuts + 1);
  assert.equal((deleted['data'] as { n: string }).n, '1');
  assert.equal(await stored('d'), undefined);
});

test('a call cut while a member had it is told apart from one that never left', () => {
  assert.equal(isCutCall(new GRPCUnavailableError('14 UNAVAILABLE: Connection dropped')), true);
  assert.equal(isCutCall(new GRPCUnavailableError('14 UNAVAILABLE: etcdserver: server stopped')), true);
  assert.equal(isCutCall(new GRPCInternalError('13 INTERNAL: Received RST_STREAM with code 0 (Call ended without gRPC status)')), true);
  assert.equal(isCutCall(new GRPCUnknownError('2 UNKNOWN: Received HTTP status code 200')), true);
  assert.equal(isCutCall(new GRPCUnavailableError('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379')), false);
  assert.equal(isCutCall(new Error('etcdserver: mvcc: required revision has been compacted')), false);
  assert.equal(isUnsentCall(new GRPCUnavailableError('14 UNAVAILABLE: No connection established')), true);
  assert.equal(isUnsentCall(new GRPCUnavailableError('14 UNAVAILABLE: Connection dropped')), false);
});
