/**
 * --max-requests-inflight / --max-mutating-requests-inflight with the APIPriorityAndFairness gate
 * off (kube's max-in-flight filter): 429 with Retry-After past the limit; system:masters exempt.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { join } from 'node:path';
import { request } from 'node:https';
import { eventually, startInProcess, startTestEtcd, tempDir, type InProcessPlinth, type TestEtcd } from './harness.js';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
const USER_TOKEN = 'bob-token-0123456789';

before(async () => {
  etcd = await startTestEtcd();
  const file = join(tempDir('plinth-tokens-'), 'tokens.csv');
  writeFileSync(file, `${USER_TOKEN},bob,1001,"devs"\n`);
  plinth = await startInProcess({ etcd, args: [`--token-auth-file=${file}`, '--feature-gates=APIPriorityAndFairness=false', '--max-mutating-requests-inflight=1', '--max-requests-inflight=1'] });
  // bob may create service accounts (RBAC); the limit applies before authorization, as in kube.
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  assert.equal((await plinth.client.post(`${rbac}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'sa-writer' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create'] }] })).status, 201);
  assert.equal((await plinth.client.post(`${rbac}/clusterrolebindings`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'bob-sa-writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'sa-writer' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] })).status, 201);
  // The authorizer sees the binding through its cache a moment later.
  await eventually(async () => (await plinth.client.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bob-probe' } }, { token: USER_TOKEN })).status === 201, 10_000, "bob's binding to take effect");
});

after(async () => {
  await plinth.stop();
  await etcd.stop();
});

test('past the mutating limit a user gets 429 TooManyRequests with Retry-After; system:masters is not limited', async () => {
  const c = plinth.client;
  const path = '/api/v1/namespaces/default/serviceaccounts';
  // A create whose body never finishes arriving holds the one mutating slot. It can itself be
  // refused when one of bob's creates holds the slot at that moment: then it is sent again.
  const body = JSON.stringify({ metadata: { name: 'held' } });
  const ca = plinth.server.caFile ? readFileSync(plinth.server.caFile) : undefined;
  const hold = (): { held: ClientRequest; response: Promise<number> } => {
    const held = request(new URL(path, c.base), {
      method: 'POST',
      ca,
      headers: { authorization: `Bearer ${USER_TOKEN}`, 'content-type': 'application/json', 'content-length': String(body.length) },
    });
    held.on('error', () => undefined);
    const response = new Promise<number>((resolve) => held.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }));
    held.write(body.slice(0, 5));
    held.flushHeaders();
    return { held, response };
  };
  let holder = hold();
  let heldStatus: number | undefined;
  void holder.response.then((s) => { heldStatus = s; });
  // Wait until the server counts it: then bob's next write is refused.
  let refused: Awaited<ReturnType<typeof c.post>> | undefined;
  for (let i = 0; i < 200 && !refused; i++) {
    if (heldStatus === 429) {
      heldStatus = undefined;
      const again = hold();
      holder = again;
      void again.response.then((s) => { if (holder === again) heldStatus = s; });
    }
    const r = await c.post(path, { metadata: { name: `bob-${i}` } }, { token: USER_TOKEN });
    if (r.status === 429) refused = r;
    else await new Promise((res) => setTimeout(res, 50));
  }
  assert.ok(refused, 'a 429 while the slot is held');
  // kube's answer is plain text (Go's http.Error), not a Status; no PF headers without APF.
  assert.equal(refused!.headers['retry-after'], '1');
  assert.equal(refused!.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(refused!.raw.toString(), 'Too many requests, please try again later.\n');
  assert.equal(refused!.headers['x-kubernetes-pf-flowschema-uid'], undefined);
  // The admin (system:masters) is never limited; watches are not counted either.
  assert.equal((await c.post(path, { metadata: { name: 'admin-write' } })).status, 201);
  holder.held.end(body.slice(5));
  assert.equal(await holder.response, 201);
  // The slot is free again.
  assert.equal((await c.post(path, { metadata: { name: 'bob-after' } }, { token: USER_TOKEN })).status, 201);
});
