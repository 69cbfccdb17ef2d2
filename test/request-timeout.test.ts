/**
 * --request-timeout (kube's WithRequestDeadline + WithTimeoutForNonLongRunningRequests) and
 * --min-request-timeout. The server limit is tiny (1 + 1 in flight: the global-default priority
 * level has one seat) and the timeout short (2 s): a user with no binding whose request body never
 * finishes arriving gets kube's 504 Timeout Status at the deadline, and gives its seat back, so
 * other users are served again; before, such a body held the seat until Node's 300 s limit and
 * every other user of the level got 429. Long-running requests (watches) are exempt.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { eventually, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';

const MALLORY = 'mallory-token-0123456789';
const ALICE = 'alice-token-0123456789';
const dir = tempDir('plinth-timeout-');
writeFileSync(join(dir, 'tokens.csv'), `${MALLORY},mallory,2001\n${ALICE},alice,2002\n`);
const env = {} as { plinth: InProcessPlinth; etcd: TestEtcd };

before(async () => {
  env.etcd = await startTestEtcd();
  env.plinth = await startInProcess({
    etcd: env.etcd,
    args: [`--token-auth-file=${join(dir, 'tokens.csv')}`, '--max-requests-inflight=1', '--max-mutating-requests-inflight=1', '--request-timeout=2s', '--min-request-timeout=1'],
  });
});

after(async () => {
  await env.plinth?.stop();
  await env.etcd?.stop();
});

const SSAR_PATH = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const SSAR = JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } } });

interface RawExchange {
  socket: TLSSocket;
  /** Resolves with the status code and body once the response is complete (or the connection ends). */
  response: Promise<{ status: number; body: string }>;
  /** Resolves when the server closed the connection. */
  closed: Promise<void>;
}

/**
 * A request on a connection of its own whose headers announce `declared` body bytes of which only
 * `sent` go out; the rest never comes (a slow or stalled client).
 */
function slowPost(path: string, token: string, declared: number, sent: string): RawExchange {
  const u = new URL(env.plinth.server.url);
  const socket = connect({ host: u.hostname, port: Number(u.port), ca: readFileSync(env.plinth.server.caFile!), servername: 'localhost' });
  socket.on('error', () => undefined);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`);
  let raw = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (raw += d));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const response = new Promise<{ status: number; body: string }>((resolve) => {
    const check = (): void => {
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = raw.slice(0, end);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? NaN);
      const body = raw.slice(end + 4);
      if (Buffer.byteLength(body) >= length) resolve({ status: Number(head.split(' ')[1]), body });
    };
    socket.on('data', check);
    // Without a Content-Length (a chunked 429) the response ends with the connection.
    socket.once('close', () => {
      const end = raw.indexOf('\r\n\r\n');
      resolve(end < 0 ? { status: 0, body: raw } : { status: Number(raw.slice(0, end).split(' ')[1]), body: raw.slice(end + 4) });
    });
  });
  return { socket, response, closed };
}

async function ssar(token: string): Promise<number> {
  return (await env.plinth.client.request('POST', SSAR_PATH, { rawBody: SSAR, token })).status;
}

/**
 * Waits until the filter classifies alice by the stored FlowSchema objects (the config consumer
 * has digested them): before that, a fresh server may still use its mandatory objects only, where
 * everyone shares catch-all's two seats and one stalled body blocks no one.
 */
async function configuredFromObjects(): Promise<void> {
  const c = env.plinth.client;
  const level = (await c.get('/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations/global-default')).body as { metadata: { uid: string } };
  await eventually(async () => {
    const r = await c.request('POST', SSAR_PATH, { rawBody: SSAR, token: ALICE });
    return r.status === 201 && r.headers['x-kubernetes-pf-prioritylevel-uid'] === level.metadata.uid;
  }, 10_000, 'alice classified into the stored global-default level');
}

test('a request body that does not arrive in time: 504 Timeout at the deadline, the seat is freed, the connection closed', async () => {
  // Both users are served while nothing holds the level's one seat.
  await configuredFromObjects();
  const started = Date.now();
  const slow = slowPost(SSAR_PATH, MALLORY, 100_000, SSAR.slice(0, 10));
  // The stalled body holds the seat: alice waits in the queue, then gets 429 (kube's APF).
  await eventually(async () => (await ssar(ALICE)) === 429, 10_000, 'the seat to be held');

  const { status, body } = await slow.response;
  assert.equal(status, 504, body);
  const s = JSON.parse(body);
  assert.equal(s.kind, 'Status');
  assert.equal(s.status, 'Failure');
  assert.equal(s.reason, 'Timeout');
  assert.equal(s.code, 504);
  assert.equal(s.message, 'Timeout: request did not complete within the allotted timeout');
  // The bound: answered within the request timeout, with room to spare (not Node's 300 s).
  assert.ok(Date.now() - started < 15_000, `answered after ${Date.now() - started} ms`);
  // The body was not read to its end: the connection cannot carry another request.
  await slow.closed;
  // The seat is free again: alice is served.
  await eventually(async () => (await ssar(ALICE)) === 201, 5_000, 'alice served after the timeout');
  slow.socket.destroy();
});

test('many stalled bodies at once: each ends at the deadline and the level serves others again', async () => {
  const started = Date.now();
  const slow = Array.from({ length: 6 }, () => slowPost(SSAR_PATH, MALLORY, 100_000, '{'));
  const statuses = (await Promise.all(slow.map((s) => s.response))).map((r) => r.status).sort();
  // Answered before their bodies arrived, the connections are closed (not kept until Node's own
  // request timeout, reading a body that never comes).
  await Promise.all(slow.map((s) => s.closed));
  assert.ok(Date.now() - started < 15_000, `closed after ${Date.now() - started} ms`);
  // One held the seat until its deadline; the others waited in the queue and were refused (429)
  // or also reached their deadline; none is left hanging.
  for (const st of statuses) assert.ok(st === 504 || st === 429, `status ${st}`);
  assert.ok(statuses.includes(504));
  await eventually(async () => (await ssar(ALICE)) === 201, 5_000, 'alice served after the stalled bodies');
  for (const s of slow) s.socket.destroy();
});

test('the timeout query parameter: a shorter one applies first; a bad one is kube\'s 400', async () => {
  const c = env.plinth.client;
  // The admin is exempt from priority and fairness: no seat to wait for.
  const path = '/api/v1/namespaces/default/configmaps';
  const long = slowPost(path, c.token, 1000, '{');
  const short = slowPost(`${path}?timeout=300ms`, c.token, 1000, '{');
  const first = await Promise.race([long.response.then(() => 'long'), short.response.then(() => 'short')]);
  assert.equal(first, 'short');
  assert.equal((await short.response).status, 504);
  assert.equal((await long.response).status, 504);
  long.socket.destroy();
  short.socket.destroy();

  for (const [value, why] of [
    ['abc', 'time: invalid duration "abc"'],
    ['5', 'time: missing unit in duration "5"'],
    ['5d', 'time: unknown unit "d" in duration "5d"'],
  ]) {
    const r = await c.get(`${path}?timeout=${value}`);
    assert.equal(r.status, 400, value);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, `invalid timeout specified in the request URL - ${why}`);
  }
  // Valid ones, longer or not positive, leave the server's timeout in force.
  for (const value of ['10m', '0s', '-1s', '1.5s']) assert.equal((await c.get(`${path}?timeout=${value}`)).status, 200, value);
});

test('watches are long-running: not cut at --request-timeout; without timeoutSeconds they end after [min, 2×min) of --min-request-timeout', async () => {
  const c = env.plinth.client;
  const started = Date.now();
  // timeoutSeconds=4 outlives the 2 s request timeout: the server ends it, cleanly, at 4 s.
  const w = await c.watch('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=4', () => false, 20_000);
  assert.equal(w.status, 200);
  const lasted = Date.now() - started;
  assert.ok(lasted >= 3_500 && lasted < 20_000, `the watch lasted ${lasted} ms`);
  // --min-request-timeout=1: a watch without timeoutSeconds ends by itself within 1–2 s.
  const started2 = Date.now();
  const w2 = await c.watch('/api/v1/namespaces/default/configmaps?watch=1', () => false, 20_000);
  assert.equal(w2.status, 200);
  assert.ok(Date.now() - started2 < 15_000, `the watch lasted ${Date.now() - started2} ms`);
});
