/**
 * A watch's bytes on the wire: HTTP/1.1 clients get a well-formed chunked body, HTTP/1.0 clients
 * (no chunking: the body ends when the connection closes) get the same event stream, and a watch
 * pipelined behind another response on one connection waits its turn. The server writes shared
 * chunks straight to the socket when it can, one per run of events written together; these pin
 * that the bytes stay what Node's own `res.write` framing of that run would give.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tlsConnect } from 'node:tls';
import { decodeWatchEventFrames } from '@plinth/apiserver';
import { startInProcess, startTestEtcd, eventually, type InProcessPlinth, type TestEtcd } from './harness.js';

/** Sends raw request bytes over TLS and returns everything the server sent until it closed. */
function exchange(base: string, request: string): Promise<Buffer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false }, () => s.write(request));
    const parts: Buffer[] = [];
    s.on('data', (d: Buffer) => parts.push(d));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(parts)));
  });
}

/** Splits a raw HTTP/1.1 response into head and chunks; asserts the framing is exact. */
function dechunk(raw: Buffer): { head: string; chunks: Buffer[]; rest: Buffer } {
  const headEnd = raw.indexOf('\r\n\r\n');
  assert.ok(headEnd > 0, 'a response head');
  const head = raw.subarray(0, headEnd).toString('latin1');
  const chunks: Buffer[] = [];
  let pos = headEnd + 4;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', pos);
    assert.ok(lineEnd > pos, `a chunk size line at ${pos}`);
    const sizeText = raw.subarray(pos, lineEnd).toString('latin1');
    assert.match(sizeText, /^[0-9a-f]+$/, 'a lower-case hex chunk size, no extensions');
    const size = parseInt(sizeText, 16);
    pos = lineEnd + 2;
    if (size === 0) {
      assert.equal(raw.subarray(pos, pos + 2).toString('latin1'), '\r\n', 'the last chunk ends the body');
      return { head, chunks, rest: raw.subarray(pos + 2) };
    }
    chunks.push(raw.subarray(pos, pos + size));
    assert.equal(raw.subarray(pos + size, pos + size + 2).toString('latin1'), '\r\n', 'each chunk ends in CRLF');
    pos += size + 2;
  }
}

describe('watch on the wire', () => {
  let etcd: TestEtcd;
  let plinth: InProcessPlinth;
  let space: string;
  let rv: string;
  const path = (): string => `/api/v1/namespaces/${space}/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=2`;

  before(async () => {
    etcd = await startTestEtcd();
    plinth = await startInProcess({ etcd });
    space = 'wire';
    assert.equal((await plinth.client.post('/api/v1/namespaces', { metadata: { name: space } })).status, 201);
    // The namespace's kube-root-ca.crt (root-ca-cert-publisher) is written before the watched revision.
    await eventually(async () => (await plinth.client.get(`/api/v1/namespaces/${space}/configmaps/kube-root-ca.crt`)).status === 200, 10_000, 'kube-root-ca.crt');
    rv = (await plinth.client.get(`/api/v1/namespaces/${space}/configmaps`)).body.metadata.resourceVersion;
    for (let i = 0; i < 20; i++) {
      const r = await plinth.client.post(`/api/v1/namespaces/${space}/configmaps`, { metadata: { name: `cm-${i}` }, data: { i: String(i).repeat(i * 50) } });
      assert.equal(r.status, 201);
    }
    await plinth.client.delete(`/api/v1/namespaces/${space}/configmaps/cm-3`);
    // The cache has every event before the watches below replay them.
    await eventually(async () => (await plinth.client.watch(path(), (evs) => evs.length >= 21, 5000)).events.length >= 21, 10_000, 'events in the cache');
  });

  after(async () => {
    await plinth.stop();
    await etcd.stop();
  });

  const auth = (): string => `Authorization: Bearer ${plinth.client.token}\r\n`;

  test('HTTP/1.1: a well-formed chunked stream of the events, then the last chunk', async () => {
    const raw = await exchange(plinth.client.base, `GET ${path()} HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
    const { head, chunks, rest } = dechunk(raw);
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(head, /\r\nTransfer-Encoding: chunked(\r\n|$)/i);
    assert.match(head, /\r\nContent-Type: application\/json(\r\n|$)/i);
    assert.equal(rest.length, 0);
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    assert.equal(lines.pop(), '', 'every event ends in a newline');
    const events = lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    assert.deepEqual(events.map((e) => `${e.type}:${e.object.metadata.name}`), [...Array.from({ length: 20 }, (_, i) => `ADDED:cm-${i}`), 'DELETED:cm-3']);
    // The replay (~16 KB, all ready at once) goes out in one write: one chunk, not one per event
    // (a client's HTTP parser then makes one body callback for it, not 21).
    assert.equal(chunks.length, 1, 'the events ready together share one chunk');
  });

  test('HTTP/1.0: the same body, not chunked, ended by the connection closing', async () => {
    const raw11 = await exchange(plinth.client.base, `GET ${path()} HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
    const body11 = Buffer.concat(dechunk(raw11).chunks);
    const raw10 = await exchange(plinth.client.base, `GET ${path()} HTTP/1.0\r\nHost: x\r\n${auth()}\r\n`);
    const headEnd = raw10.indexOf('\r\n\r\n');
    const head = raw10.subarray(0, headEnd).toString('latin1');
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.doesNotMatch(head, /Transfer-Encoding/i);
    assert.deepEqual(raw10.subarray(headEnd + 4), body11);
  });

  test('a watch pipelined behind another request on one connection follows its response', async () => {
    const get = `GET /api/v1/namespaces/${space}/configmaps/cm-1 HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`;
    const raw = await exchange(plinth.client.base, `${get}GET ${path()} HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
    const first = raw.indexOf('HTTP/1.1 200 OK');
    const second = raw.indexOf('HTTP/1.1 200 OK', first + 1);
    assert.ok(first === 0 && second > 0, 'two responses, in order');
    const one = raw.subarray(0, second).toString('utf8');
    assert.match(one, /"name":"cm-1"/);
    const { chunks, rest } = dechunk(raw.subarray(second));
    assert.equal(rest.length, 0);
    const lines = Buffer.concat(chunks).toString('utf8').trimEnd().split('\n');
    assert.equal(lines.length, 21);
  });
  test('many watches of one collection, mixed (selectors, protobuf), each get exactly their own stream', async () => {
    const ns = 'mixed';
    assert.equal((await plinth.client.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    const col = `/api/v1/namespaces/${ns}/configmaps`;
    // The root CA publisher's ConfigMap arrives in a new namespace on its own time: start after it.
    await eventually(async () => (await plinth.client.get(`${col}/kube-root-ca.crt`)).status === 200, 10_000, 'kube-root-ca.crt');
    const from = (await plinth.client.get(col)).body.metadata.resourceVersion as string;
    const open = (query: string, accept = 'application/json'): Promise<Buffer> =>
      exchange(plinth.client.base, `GET ${col}?watch=1&resourceVersion=${from}&timeoutSeconds=6${query} HTTP/1.1\r\nHost: x\r\n${auth()}Accept: ${accept}\r\nConnection: close\r\n\r\n`);
    // Many plain watches woken by the same flushes (shared buffers).
    const plain = Array.from({ length: 48 }, () => open(''));
    const blue = Array.from({ length: 8 }, () => open('&labelSelector=team%3Dblue'));
    const proto = Array.from({ length: 8 }, () => open('', 'application/vnd.kubernetes.protobuf;stream=watch'));
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 30; i++) {
      const team = i % 3 === 0 ? 'blue' : 'red';
      assert.equal((await plinth.client.post(col, { metadata: { name: `m-${i}`, labels: { team } }, data: { v: 'x'.repeat(i * 100) } })).status, 201);
      if (i % 5 === 4) {
        const prev = (await plinth.client.get(`${col}/m-${i - 1}`)).body;
        const flip = prev.metadata.labels.team === 'blue' ? 'red' : 'blue';
        assert.equal((await plinth.client.put(`${col}/m-${i - 1}`, { ...prev, metadata: { ...prev.metadata, labels: { team: flip } } })).status, 200);
      }
      if (i % 7 === 6) assert.equal((await plinth.client.delete(`${col}/m-${i - 2}`)).status, 200);
    }
    type E = { type: string; object: { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } } };
    const linesOf = (raw: Buffer): E[] => {
      const body = Buffer.concat(dechunk(raw).chunks).toString('utf8');
      return body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as E);
    };
    const key = (e: E): string => `${e.type}:${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;
    const plainRaw = await Promise.all(plain);
    const all = linesOf(plainRaw[0]!);
    assert.equal(all.length, 30 + 6 + 4, 'every create, update and delete');
    const bodyOf = (raw: Buffer): Buffer => Buffer.concat(dechunk(raw).chunks);
    for (const raw of plainRaw) assert.deepEqual(bodyOf(raw), bodyOf(plainRaw[0]!), 'every plain watch gets the same body');
    // The selector's view, derived from the full stream: entering is ADDED, leaving is DELETED.
    const expected: string[] = [];
    const inSel = new Map<string, boolean>();
    for (const e of all) {
      const name = e.object.metadata.name;
      const was = inSel.get(name) ?? false;
      const now = e.type !== 'DELETED' && e.object.metadata.labels?.['team'] === 'blue';
      const rv = e.object.metadata.resourceVersion;
      if (e.type === 'DELETED') {
        if (was) expected.push(`DELETED:${name}@${rv}`);
      } else if (now && !was) expected.push(`ADDED:${name}@${rv}`);
      else if (now && was) expected.push(`MODIFIED:${name}@${rv}`);
      else if (!now && was) expected.push(`DELETED:${name}@${rv}`);
      inSel.set(name, now);
    }
    for (const raw of await Promise.all(blue)) assert.deepEqual(linesOf(raw).map(key), expected);
    for (const raw of await Promise.all(proto)) {
      const events = decodeWatchEventFrames(Buffer.concat(dechunk(raw).chunks));
      assert.deepEqual(events.map((e) => `${e.type}:${(e.object as E['object']).metadata.name}@${(e.object as E['object']).metadata.resourceVersion}`), all.map(key));
    }
  });
});
