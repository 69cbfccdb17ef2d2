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

test('pod templates follow --allow-privileged too: a Deployment and a PodTemplate with a privileged container', async () => {
  const template = { metadata: { labels: { app: 'priv' } }, spec: { containers: [{ name: 'app', image: 'busybox', securityContext: { privileged: true } }] } };
  const deploy = await env.plinth.client.post('/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'priv' },
    spec: { selector: { matchLabels: { app: 'priv' } }, template },
  });
  expectCode(deploy, 201);
  const pt = await env.plinth.client.post('/api/v1/namespaces/default/podtemplates', { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'priv' }, template });
  expectCode(pt, 201);
});
