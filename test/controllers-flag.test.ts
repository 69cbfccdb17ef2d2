/**
 * --controllers: plinth's in-process kube-controller-manager controllers turned off one by one,
 * so a real kube-controller-manager can do their work instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, usePlinth } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth(['--controllers=*,-serviceaccount,-root-ca-cert-publisher,-resourcequota']);

test('turned-off controllers leave their objects alone while the others run', async () => {
  const c = env.plinth.client;
  expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ctl-off' } }), 201);
  expectCode(await c.post('/api/v1/namespaces/ctl-off/resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '2' } } }), 201);
  // A controller still on (clusterrole-aggregation) acts: the controllers have started.
  const G = 'rbac.authorization.k8s.io';
  expectCode(await c.post(`/apis/${G}/v1/clusterroles`, { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'ctl-agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/ctl': 'true' } }] } }), 201);
  expectCode(await c.post(`/apis/${G}/v1/clusterroles`, { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'ctl-part', labels: { 'example.com/ctl': 'true' } }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }), 201);
  await eventually(async () => ((await c.get(`/apis/${G}/v1/clusterroles/ctl-agg`)).body.rules?.length ?? 0) > 0, 10_000, 'aggregation');
  // The namespace informer has seen ctl-off (it was created before), yet nothing was added to it.
  assert.equal((await c.get('/api/v1/namespaces/ctl-off/serviceaccounts/default')).status, 404, 'no default ServiceAccount');
  assert.equal((await c.get('/api/v1/namespaces/ctl-off/configmaps/kube-root-ca.crt')).status, 404, 'no kube-root-ca.crt');
  assert.equal((await c.get('/api/v1/namespaces/ctl-off/resourcequotas/q')).body.status?.hard, undefined, 'quota status not written');
});

