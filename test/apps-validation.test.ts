/**
 * apps/v1 validation on a real server, the kube 1.24 causes of pkg/apis/apps/validation for
 * Deployments' strategy, ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions: the selector (required, matching
 * the template, immutable), non-negative counts, the StatefulSet policies and update strategies
 * (struct values printed as kube's `%#v`), the DaemonSet rolling-update rules, and a
 * ControllerRevision's revision and immutable data.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { usePlinth, type Response } from './harness.js';
import { expectCode } from './assertions.js';

const env = usePlinth();
const APPS = '/apis/apps/v1/namespaces/default';
type Obj = Record<string, unknown>;

const template = { metadata: { labels: { app: 'v' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
const selector = { matchLabels: { app: 'v' } };
const object = (kind: string, name: string, spec: Obj): Obj => ({ apiVersion: 'apps/v1', kind, metadata: { name }, spec: { selector, template, ...spec } });
/** The causes of a 422, as `field: message`. */
function causes(res: Response): string[] {
  expectCode(res, 422);
  assert.equal(res.body.reason, 'Invalid');
  return (res.body.details.causes as Array<{ field: string; message: string }>).map((c) => `${c.field}: ${c.message}`);
}
const post = (plural: string, body: Obj) => env.plinth.client.post(`${APPS}/${plural}`, body);
const merge = (path: string, body: unknown) => env.plinth.client.request('PATCH', path, { headers: { 'content-type': 'application/merge-patch+json' }, body });

describe('Deployment validation', () => {
  it('prints an unsupported strategy as kube\'s internal struct', async () => {
    assert.deepEqual(causes(await post('deployments', object('Deployment', 'dep-type', { strategy: { type: 'Sometimes' } }))), [
      'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
    ]);
  });
});

describe('ReplicaSet validation', () => {
  it('requires a selector that matches the template, and non-negative counts', async () => {
    assert.deepEqual(causes(await post('replicasets', object('ReplicaSet', 'rs-neg', { replicas: -1, minReadySeconds: -1 }))), [
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      'spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0',
    ]);
    assert.deepEqual(causes(await post('replicasets', object('ReplicaSet', 'rs-nosel', { selector: undefined }))), [
      'spec.selector: Required value',
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"v"}: `selector` does not match template `labels`',
    ]);
    // kube's ReplicaSet rule names deployments in this message.
    assert.deepEqual(causes(await post('replicasets', object('ReplicaSet', 'rs-empty', { selector: {} }))), [
      'spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for deployment',
    ]);
    assert.deepEqual(causes(await post('replicasets', object('ReplicaSet', 'rs-mismatch', { selector: { matchLabels: { app: 'other' } } }))), [
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"v"}: `selector` does not match template `labels`',
    ]);
  });

  it('keeps the selector immutable', async () => {
    expectCode(await post('replicasets', object('ReplicaSet', 'rs1', {})), 201);
    const res = await merge(`${APPS}/replicasets/rs1`, { spec: { selector: { matchLabels: { app: 'v', x: 'y' } }, template: { metadata: { labels: { app: 'v', x: 'y' } } } } });
    assert.deepEqual(causes(res).map((c) => c.split(':')[0]), ['spec.selector']);
    assert.match(res.body.message, /field is immutable/);
  });
});

describe('StatefulSet validation', () => {
  it('checks the pod management policy, the update strategy and the replicas', async () => {
    assert.deepEqual(causes(await post('statefulsets', object('StatefulSet', 'sts-bad', { serviceName: 's', replicas: -1, podManagementPolicy: 'Sometimes', updateStrategy: { type: 'Whenever' } }))), [
      'spec.podManagementPolicy: Invalid value: "Sometimes": must be \'OrderedReady\' or \'Parallel\'',
      'spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Whenever", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be \'RollingUpdate\' or \'OnDelete\'',
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ]);
    assert.deepEqual(causes(await post('statefulsets', object('StatefulSet', 'sts-ondelete', { serviceName: 's', updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } } }))), [
      'spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy \'RollingUpdate\'',
    ]);
    assert.deepEqual(causes(await post('statefulsets', object('StatefulSet', 'sts-part', { serviceName: 's', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } } }))), [
      'spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0',
    ]);
    assert.deepEqual(causes(await post('statefulsets', object('StatefulSet', 'sts-empty', { serviceName: 's', selector: {} }))), [
      'spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for statefulset',
    ]);
  });

  it('allows only replicas, template, updateStrategy, the retention policy and minReadySeconds to change', async () => {
    expectCode(await post('statefulsets', object('StatefulSet', 'sts1', { serviceName: 's' })), 201);
    expectCode(await merge(`${APPS}/statefulsets/sts1`, { spec: { replicas: 3, updateStrategy: { type: 'OnDelete', rollingUpdate: null } } }), 200);
    const res = await merge(`${APPS}/statefulsets/sts1`, { spec: { serviceName: 'other' } });
    const got = causes(res);
    assert.equal(got.length, 1);
    assert.match(got[0]!, /^spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy'/);
  });
});

describe('DaemonSet validation', () => {
  it('checks the update strategy and its rolling-update rules', async () => {
    const ds = (name: string, updateStrategy: Obj) => post('daemonsets', object('DaemonSet', name, { updateStrategy }));
    assert.deepEqual(causes(await ds('ds-type', { type: 'Sometimes' })), [
      'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
    ]);
    assert.deepEqual(causes(await ds('ds-zero', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } })), [
      'spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0',
    ]);
    assert.deepEqual(causes(await ds('ds-both', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } })), [
      'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
    ]);
    assert.deepEqual(causes(await ds('ds-pct', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '101%', maxSurge: 0 } })), [
      'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}: must not be greater than 100%',
    ]);
    expectCode(await ds('ds-surge', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '10%' } }), 201);
    expectCode(await ds('ds-ondelete', { type: 'OnDelete' }), 201);
  });

  it('keeps the selector immutable', async () => {
    const res = await merge(`${APPS}/daemonsets/ds-ondelete`, { spec: { selector: { matchLabels: { app: 'v', x: 'y' } }, template: { metadata: { labels: { app: 'v', x: 'y' } } } } });
    assert.deepEqual(causes(res).map((c) => c.split(':')[0]), ['spec.selector']);
  });
});

describe('ControllerRevision validation', () => {
  const revision = (name: string, body: Obj): Obj => ({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name }, ...body });
  it('requires data and a non-negative revision', async () => {
    assert.deepEqual(causes(await post('controllerrevisions', revision('cr-bad', { revision: -1 }))), [
      'data: Required value: data is mandatory',
      'revision: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('keeps data immutable', async () => {
    expectCode(await post('controllerrevisions', revision('cr1', { revision: 1, data: { spec: { a: 1 } } })), 201);
    const res = await merge(`${APPS}/controllerrevisions/cr1`, { data: { spec: { a: 2 } } });
    const got = causes(res);
    assert.equal(got.length, 1);
    assert.match(got[0]!, /^data: Invalid value: .*: field is immutable$/);
    expectCode(await merge(`${APPS}/controllerrevisions/cr1`, { revision: 2 }), 200);
  });
});
