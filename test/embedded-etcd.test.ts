/**
 * The executable's embedded etcd (issue 23, points 8 and 9):
 * - it is served as k3s serves its own: HTTPS on loopback with client-certificate authentication,
 *   certificates of its own CA in <data-dir>/etcd/pki (keys 0600), reused across restarts; a
 *   client without plinth's certificate reads nothing, on the client URL or the peer URL;
 * - it dies with plinth: after kill -9 the next start on the same data directory comes up, and no
 *   etcd is left behind; a leftover etcd of the directory (an earlier plinth's, its parent gone)
 *   is stopped; a directory a live plinth uses is refused at once;
 * - start-up steps have deadlines: an etcd that never answers fails start-up with a clear message.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, delimiter } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Etcd3 } from 'etcd3';
import { noop } from 'cockatiel';
import { EXECUTABLE, startProcess, tempDir, type PlinthProcess } from './harness.js';

const dirs: string[] = [];
const running: PlinthProcess[] = [];
after(async () => {
  for (const p of running) await p.stop().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = tempDir('plinth-embedded-');
  dirs.push(d);
  return d;
}

async function start(dir: string, args: string[] = []): Promise<PlinthProcess> {
  const p = await startProcess(dir, args);
  running.push(p);
  return p;
}

/** Live (not zombie) processes started with `--data-dir=<dir>/etcd/member-data`. */
function etcdProcessesOf(dir: string): Array<{ pid: number; ppid: number }> {
  const arg = `--data-dir=${join(dir, 'etcd', 'member-data')}`;
  const out: Array<{ pid: number; ppid: number }> = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(arg)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') out.push({ pid, ppid: Number(fields[1]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  for (const end = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

function ports(dir: string): { client: number; peer: number } {
  return JSON.parse(readFileSync(join(dir, 'etcd', 'plinth-ports.json'), 'utf8')) as { client: number; peer: number };
}

function pki(dir: string, name: string): Buffer {
  return readFileSync(join(dir, 'etcd', 'pki', name));
}

const RANGE_ALL = JSON.stringify({ key: Buffer.from('/').toString('base64'), range_end: Buffer.from('0').toString('base64'), count_only: true });

/** etcd's JSON gateway: POST /v3/kv/range over the given transport; resolves with the status, rejects on a refused handshake. */
function gatewayRange(port: number, tls?: { ca: Buffer; cert?: Buffer; key?: Buffer }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: '/v3/kv/range', method: 'POST', headers: { 'content-type': 'application/json' }, timeout: 5000 };
    const req = tls ? httpsRequest({ ...options, ca: tls.ca, cert: tls.cert, key: tls.key, servername: 'localhost' }) : httpRequest(options);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(RANGE_ALL);
  });
}

/** A single etcd3 read with no retries; rejects (or times out) when etcd refuses the client. */
async function etcd3Read(endpoint: string, credentials?: { rootCertificate: Buffer; certChain?: Buffer; privateKey?: Buffer }): Promise<number> {
  const client = new Etcd3({ hosts: [endpoint], dialTimeout: 2000, defaultCallOptions: () => ({ deadline: Date.now() + 4000 }), faultHandling: { host: () => noop, global: noop }, ...(credentials ? { credentials } : {}) });
  try {
    return Number(await client.getAll().prefix('/registry/').count());
  } finally {
    client.close();
  }
}

test('the embedded etcd takes only clients with plinth\'s certificate (TLS, client-certificate auth); keys are 0600', async () => {
  const dir = dataDir();
  const p = await start(dir);
  // plinth works over it.
  const c = p.client;
  assert.equal((await c.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's1' }, stringData: { password: 'hunter2' } })).status, 201);
  assert.equal((await c.get('/api/v1/namespaces/default/secrets/s1')).status, 200);

  const { client, peer } = ports(dir);
  // Plain HTTP and gRPC on the client URL: refused (Go's TLS server answers plain HTTP with 400).
  const plain = await gatewayRange(client).catch(() => ({ status: 0, body: '' }));
  assert.notEqual(plain.status, 200);
  assert.doesNotMatch(plain.body, /count/);
  await assert.rejects(etcd3Read(`http://127.0.0.1:${client}`));
  const ca = pki(dir, 'ca.crt');
  const withCert = { ca, cert: pki(dir, 'client.crt'), key: pki(dir, 'client.key') };
  // TLS that trusts the CA but presents no client certificate: the handshake is refused.
  await assert.rejects(gatewayRange(client, { ca }));
  await assert.rejects(etcd3Read(`https://127.0.0.1:${client}`, { rootCertificate: ca }));
  // A certificate of another CA: refused as well.
  const other = join(dir, 'other');
  mkdirSync(other);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-subj', '/CN=intruder', '-days', '1'], { cwd: other, stdio: 'ignore' });
  await assert.rejects(gatewayRange(client, { ca, cert: readFileSync(join(other, 'c.pem')), key: readFileSync(join(other, 'k.pem')) }));
  // The peer URL is TLS with client-certificate auth too.
  const peerPlain = await gatewayRange(peer).catch(() => ({ status: 0, body: '' }));
  assert.notEqual(peerPlain.status, 200);
  await assert.rejects(gatewayRange(peer, { ca }));
  // With plinth's client certificate (what only the server's user can read), it answers.
  const ok = await gatewayRange(client, withCert);
  assert.equal(ok.status, 200, ok.body);
  assert.ok(Number(JSON.parse(ok.body).count) > 0);
  assert.ok((await etcd3Read(`https://127.0.0.1:${client}`, { rootCertificate: ca, certChain: withCert.cert, privateKey: withCert.key })) > 0);

  // Private keys and the directories holding them: the server's user only.
  for (const key of ['ca.key', 'server.key', 'client.key']) assert.equal(statSync(join(dir, 'etcd', 'pki', key)).mode & 0o777, 0o600, key);
  for (const d of ['etcd', 'etcd/pki']) assert.equal(statSync(join(dir, d)).mode & 0o777, 0o700, d);
  assert.equal(statSync(join(dir, 'etcd', 'etcd.log')).mode & 0o077, 0, 'etcd.log');
  await p.stop();
});

test('kill -9 of plinth: its etcd dies with it, and the next start on the same data directory serves, reusing the certificates', async () => {
  const dir = dataDir();
  const first = await start(dir);
  assert.equal((await first.client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'kept' }, data: { a: '1' } })).status, 201);
  const [etcd] = etcdProcessesOf(dir);
  assert.ok(etcd, 'the embedded etcd runs');
  assert.equal(etcd.ppid, first.child.pid);
  const caFile = join(dir, 'etcd', 'pki', 'ca.crt');
  const ca = existsSync(caFile) ? readFileSync(caFile) : undefined;
  first.child.kill('SIGKILL');
  await first.stop();
  // No etcd of this directory outlives its plinth (parent-death signal).
  await until('the embedded etcd to exit', 10_000, () => etcdProcessesOf(dir).length === 0);

  const started = Date.now();
  const second = await start(dir);
  // The bound: it comes up and serves within seconds (startProcess gives up after 30 s).
  assert.ok(Date.now() - started < 30_000);
  assert.equal((await second.client.get('/api/v1/namespaces/default/configmaps/kept')).body.data.a, '1');
  const now = etcdProcessesOf(dir);
  assert.equal(now.length, 1);
  assert.equal(now[0]!.ppid, second.child.pid);
  assert.ok(ca, 'the embedded etcd has a CA');
  assert.deepEqual(pki(dir, 'ca.crt'), ca, 'the CA is reused');
  await second.stop();
  await until('no etcd left after a clean stop', 10_000, () => etcdProcessesOf(dir).length === 0);
});

test('a leftover etcd of the data directory whose plinth is gone is stopped at the next start', async () => {
  const dir = dataDir();
  const first = await start(dir);
  await first.stop();
  // An etcd on this directory whose parent exits at once (as after a kill -9 of a plinth that
  // could not give it a parent-death signal): it holds the data directory's lock.
  const { client, peer } = ports(dir);
  const member = join(dir, 'etcd', 'member-data');
  const script = `etcd --name=plinth --data-dir=${member} --listen-client-urls=http://127.0.0.1:${client} --advertise-client-urls=http://127.0.0.1:${client} --listen-peer-urls=http://127.0.0.1:${peer} --initial-advertise-peer-urls=http://127.0.0.1:${peer} --initial-cluster=plinth=http://127.0.0.1:${peer} --log-level=error >/dev/null 2>&1 & echo $!`;
  const orphan = Number(execFileSync('sh', ['-c', script], { encoding: 'utf8' }).trim());
  await until('the orphan etcd to run', 10_000, () => etcdProcessesOf(dir).some((e) => e.pid === orphan));
  assert.notEqual(etcdProcessesOf(dir).find((e) => e.pid === orphan)!.ppid, process.pid);

  const second = await start(dir);
  assert.match(second.output(), /stopping an embedded etcd left running by an earlier plinth/);
  assert.ok(!etcdProcessesOf(dir).some((e) => e.pid === orphan), 'the leftover is gone');
  assert.equal((await second.client.get('/readyz')).status, 200);
  await second.stop();
});

test('a data directory a live plinth uses is refused at once, with a clear message', async () => {
  const dir = dataDir();
  const first = await start(dir);
  const started = Date.now();
  const r = spawnSync(process.execPath, [EXECUTABLE, '--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dir}`], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /Error: the embedded etcd data directory .* is in use by etcd pid \d+, started by the live process \d+/);
  assert.ok(Date.now() - started < 20_000);
  // The first one was not disturbed.
  assert.equal((await first.client.get('/readyz')).status, 200);
  await first.stop();
});

test('an etcd that never answers fails start-up within --startup-step-timeout, naming it, and leaves nothing running', async () => {
  const dir = dataDir();
  // A fake etcd that accepts connections on its client URL and never answers (as an etcd stuck
  // on its data directory's lock does).
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'etcd'),
    `#!${process.execPath}\nconst url = process.argv.find((a) => a.startsWith('--listen-client-urls='));\nconst port = Number(new URL(url.split('=')[1]).port);\nrequire('node:net').createServer(() => undefined).listen(port, '127.0.0.1');\n`,
  );
  chmodSync(join(bin, 'etcd'), 0o755);
  const started = Date.now();
  const r = spawnSync(process.execPath, [EXECUTABLE, '--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${join(dir, 'data')}`, '--startup-step-timeout=3s'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}` },
  });
  const took = Date.now() - started;
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /Error: the embedded etcd did not answer within 3 s/);
  assert.ok(took < 20_000, `failed after ${took} ms`);
  assert.ok(existsSync(join(dir, 'data', 'etcd', 'pki', 'ca.crt')));
  await until('the fake etcd to be gone', 10_000, () => etcdProcessesOf(join(dir, 'data')).length === 0);
});
