/**
 * Clients that do not read what they asked for (issue 23, point 7): a response is encoded and
 * handed to the socket only as fast as the client takes it, so a client that never reads holds a
 * piece of its response, not the response (before: each held its whole encoding, and copies of
 * its items, until it went away); and at --request-timeout its connection is cut, as kube's
 * timeout filter aborts a handler still writing.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { eventually, startProcess, startTestEtcd, tempDir, type PlinthProcess, type TestEtcd } from './harness.js';

const ITEMS = 16;
/** The list's length: the ConfigMaps and the namespace's kube-root-ca.crt (root-ca-cert-publisher). */
const LISTED = ITEMS + 1;
const ITEM_BYTES = 512 * 1024;
const LIST_PATH = '/api/v1/namespaces/big/configmaps';

/** The executable (its RSS is read from /proc), with an 8 MB collection: 16 ConfigMaps of 512 KiB. */
let setup: Promise<{ etcd: TestEtcd; plinth: PlinthProcess }> | undefined;
function server(): Promise<{ etcd: TestEtcd; plinth: PlinthProcess }> {
  return (setup ??= (async () => {
    const etcd = await startTestEtcd();
    const plinth = await startProcess(tempDir('plinth-slow-readers-'), [`--etcd-servers=${etcd.endpoint}`, '--request-timeout=4s']);
    const c = plinth.client;
    assert.equal((await c.post('/api/v1/namespaces', { metadata: { name: 'big' } })).status, 201);
    await eventually(async () => (await c.get(`${LIST_PATH}/kube-root-ca.crt`)).status === 200, 10_000, 'kube-root-ca.crt');
    const value = 'x'.repeat(ITEM_BYTES);
    for (let i = 0; i < ITEMS; i++) assert.equal((await c.post(LIST_PATH, { metadata: { name: `cm-${i}` }, data: { v: value } })).status, 201);
    // resourceVersion=0 reads the cache as it is: wait until it has them all.
    await eventually(async () => (await c.get(`${LIST_PATH}?resourceVersion=0`)).body?.items?.length === LISTED, 10_000, 'the watch cache to hold the list');
    return { etcd, plinth };
  })());
}

after(async () => {
  if (!setup) return;
  const { etcd, plinth } = await setup;
  await plinth.stop();
  rmSync(plinth.dataDir, { recursive: true, force: true });
  await etcd.stop();
});

function rssBytes(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

/** The least RSS over `ms` (freed garbage the collector has not reached yet is not what is held). */
async function settledRss(pid: number, ms: number): Promise<number> {
  let least = Infinity;
  for (let t = 0; t < ms; t += 100) {
    least = Math.min(least, rssBytes(pid));
    await sleep(100);
  }
  return least;
}

/** A connection that sends a GET and then reads nothing (until `resume`). */
function stalledGet(url: string, token: string, path: string): { socket: TLSSocket; received: () => number; closed: Promise<void> } {
  const u = new URL(url);
  const socket = connect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false });
  socket.pause();
  socket.on('error', () => undefined);
  let bytes = 0;
  socket.on('data', (d: Buffer) => (bytes += d.length));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\nAccept: application/json\r\n\r\n`);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => bytes, closed };
}

/** The list's length, read in full. */
async function itemCount(plinth: PlinthProcess, path: string): Promise<number> {
  const r = await plinth.client.get(path);
  assert.equal(r.status, 200);
  return (r.body.items as unknown[]).length;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('10 clients that never read an 8 MB list hold a bounded amount of memory, not the list each', async (t) => {
  const { plinth } = await server();
  const pid = plinth.child.pid!;
  // Half read the cache as it is, half ask for a consistent list (resourceVersion unset): both
  // are answered from the cache's bytes. Readers first, so the stalled requests find the same
  // state (the cache's consistency proof, compiled encoders).
  const paths = [`${LIST_PATH}?resourceVersion=0`, LIST_PATH];
  for (const path of paths) for (let i = 0; i < 3; i++) assert.equal(await itemCount(plinth, path), LISTED);
  const baseline = await settledRss(pid, 1000);
  const clients = Array.from({ length: 10 }, (_, i) => stalledGet(plinth.client.base, plinth.client.token, paths[i % 2]!));
  // The server writes what the sockets take, then waits on them (well within the 4 s deadline).
  await sleep(1000);
  const grown = (await settledRss(pid, 1500)) - baseline;
  t.diagnostic(`plinth's resident memory grew by ${(grown / 1024 / 1024).toFixed(1)} MB for 10 stalled clients`);
  for (const c of clients) c.socket.destroy();
  // Before: each stalled response held its encoding, encrypted and not, and copies of its items
  // (~16-18 MB each, 185 MB here). Now: a piece (at most one item, 512 KiB here) and its
  // socket's buffers each (12-24 MB for the ten, measured).
  assert.ok(grown < 64 * 1024 * 1024, `resident memory grew by ${(grown / 1024 / 1024).toFixed(1)} MB for 10 stalled clients`);
});

test('a response the client stops reading is cut at --request-timeout', async () => {
  const { plinth } = await server();
  const c = stalledGet(plinth.client.base, plinth.client.token, `${LIST_PATH}?resourceVersion=0`);
  // Past the 4 s deadline: the server has ended the connection, with the response unfinished.
  await sleep(6000);
  c.socket.resume();
  const listBytes = (await plinth.client.get(`${LIST_PATH}?resourceVersion=0`)).raw.length;
  const outcome = await Promise.race([c.closed.then(() => 'closed'), sleep(10_000).then(() => 'open')]);
  assert.equal(outcome, 'closed');
  assert.ok(c.received() < listBytes, `received ${c.received()} of ${listBytes} bytes`);
  c.socket.destroy();
});

test('a large list goes out chunked, byte for byte the JSON of the list, from stored bytes or from objects', async () => {
  const { plinth } = await server();
  // Stored bytes (the cache), and objects (a label selector makes the cache filter decoded objects).
  for (const path of [`${LIST_PATH}?resourceVersion=0`, `${LIST_PATH}?labelSelector=!absent`]) {
    const r = await plinth.client.get(path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers['transfer-encoding'], 'chunked', path);
    assert.equal(r.headers['content-length'], undefined, path);
    const text = r.raw.toString('utf8');
    assert.equal(text, `${JSON.stringify(JSON.parse(text))}\n`, path);
    assert.equal(r.body.items.length, LISTED, path);
    assert.equal(r.body.kind, 'ConfigMapList', path);
  }
  // A small list still carries its Content-Length.
  const small = await plinth.client.get('/api/v1/namespaces?limit=1');
  assert.ok(Number(small.headers['content-length']) > 0);
});
