/** When etcd goes away, requests fail with a 500 Status (never hang) and /readyz reports it. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, startTestEtcd, eventually, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
});

after(async () => {
  await plinth.stop();
});

test('an unreachable etcd gives 500 Status errors and a failing /readyz', async () => {
  assert.equal((await plinth.client.get('/readyz')).status, 200);
  await etcd.stop();
  const r = await plinth.client.get('/api/v1/namespaces/default/serviceaccounts/default');
  assert.equal(r.status, 500);
  assert.equal(r.body.kind, 'Status');
  // kube's ErrorToAPIStatus of an etcd client error: no reason, the client's own text.
  console.log(`# GET with etcd gone: ${r.status} reason=${JSON.stringify(r.body.reason)} ${JSON.stringify(r.body.message)}`);
  assert.ok(r.body.reason === undefined || r.body.reason === 'InternalError', `reason ${r.body.reason}`);
  assert.ok(r.body.message.length > 0);
  assert.doesNotMatch(r.body.message, /^\d+ [A-Z_]+: /, 'no gRPC status prefix');
  const ready = await eventually(async () => {
    const res = await plinth.client.get('/readyz?verbose');
    return res.status === 500 ? res : undefined;
  }, 15_000, '/readyz to fail');
  assert.match(ready.raw.toString(), /^\[-\]etcd failed: reason withheld$/m);
  // kube 1.24's /livez includes the etcd check too.
  assert.equal((await plinth.client.get('/livez')).status, 500);
  assert.equal((await plinth.client.get('/livez?exclude=etcd')).status, 200);
});
