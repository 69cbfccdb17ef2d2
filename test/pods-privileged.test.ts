/** --allow-privileged=true: kube's capabilities.AllowPrivileged lets privileged containers through pod validation. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth(['--allow-privileged=true']);

test('a privileged container is accepted with --allow-privileged=true', async () => {
  const res = await env.plinth.client.post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'priv' },
    spec: { containers: [{ name: 'app', image: 'busybox', securityContext: { privileged: true } }] },
  });
  expectCode(res, 201);
  assert.equal(res.body.spec.containers[0].securityContext.privileged, true);
});
