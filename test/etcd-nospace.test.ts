/**
 * An etcd whose backend quota is used up (`mvcc: database space exceeded`): a write is kube's 500
 * with etcd's text (kube 1.24 passes the client's error on as a Status of reason Unknown), not a
 * 413 about the object's size, and reads still answer.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort } from '@plinth/storage';
import { startInProcess, tempDir, type InProcessPlinth } from './harness.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let member: ChildProcess;
let dir: string;
let plinth: InProcessPlinth;

before(async () => {
  dir = tempDir('plinth-nospace-');
  const [port, peer] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${port}`;
  member = spawn(
    'etcd',
    [
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      // 32 MiB: filled by a few dozen 1 MB objects.
      '--quota-backend-bytes=33554432',
    ],
    { stdio: 'ignore' },
  );
  const client = new Etcd3({ hosts: [endpoint] });
  for (let i = 0; ; i++) {
    try {
      await client.get('/up');
      break;
    } catch (e) {
      if (i > 100) throw e;
      await sleep(100);
    }
  }
  client.close();
  plinth = await startInProcess({ etcd: { endpoint, dir, stop: async () => undefined } });
});

after(async () => {
  await plinth?.stop();
  member?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

test('a write to a full etcd is a 500 with etcd\'s text; what was stored still reads', async () => {
  const path = '/api/v1/namespaces/default/configmaps';
  const big = 'x'.repeat(1_000_000);
  let refused: { status: number; body: { code?: number; reason?: string; message?: string } } | undefined;
  let stored = 0;
  for (let i = 0; i < 100 && !refused; i++) {
    const r = await plinth.client.post(path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` }, data: { a: big } });
    if (r.status === 201) stored++;
    else refused = { status: r.status, body: r.body as { code?: number; reason?: string; message?: string } };
  }
  assert.ok(refused, 'etcd never ran out of space');
  assert.ok(stored > 0);
  assert.equal(refused.status, 500);
  assert.equal(refused.body.code, 500);
  assert.equal(refused.body.reason, undefined);
  assert.equal(refused.body.message, 'etcdserver: mvcc: database space exceeded');
  const got = await plinth.client.get(`${path}/c0`);
  assert.equal(got.status, 200);
  assert.equal((got.body as { data: { a: string } }).data.a.length, 1_000_000);
});
