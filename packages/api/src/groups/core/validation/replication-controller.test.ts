import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setDefaultsPodTemplate, setDefaultsReplicationController } from '../defaults/pod.js';
import type { JsonObject } from './access.js';
import { validatePodTemplate, validatePodTemplateUpdate } from './pod-template.js';
import { validateReplicationController, validateReplicationControllerStatusUpdate } from './replication-controller.js';
import { type Cause, QUALIFIED_NAME_MSG, causes, containerFixture, createOptions } from './test-fixtures.js';

function template(labels: Record<string, string> = { app: 'a' }, spec: JsonObject = {}, annotations?: Record<string, string>): JsonObject {
  const t: JsonObject = { metadata: { labels, ...(annotations ? { annotations } : {}) }, spec: { containers: [containerFixture()], ...spec } };
  setDefaultsPodTemplate({ template: t });
  return t;
}

describe('pod templates (ValidatePodTemplate, ValidatePodTemplateSpec)', () => {
  const pt = (t: JsonObject): Cause[] => causes(validatePodTemplate({ metadata: { name: 't', namespace: 'ns' }, template: t }, createOptions()));
  it('a defaulted template', () => assert.deepEqual(pt(template()), []));
  it('labels and annotations carry no .metadata in their path, as kube\'s do', () =>
    assert.deepEqual(pt(template({ 'a b': 'c' }, {}, { 'container.apparmor.security.beta.kubernetes.io/x': 'runtime/default' })), [
      ['FieldValueInvalid', 'template.labels', `Invalid value: "a b": ${QUALIFIED_NAME_MSG}`],
      ['FieldValueInvalid', 'template.annotations[container.apparmor.security.beta.kubernetes.io/x]', 'Invalid value: "x": container not found'],
    ]));
  it('the spec is validated, without the pod-only rules', () => {
    const t = template({}, {});
    ((t['spec'] as JsonObject)['containers'] as JsonObject[])[0]!['image'] = ' padded ';
    (t['spec'] as JsonObject)['restartPolicy'] = 'Sometimes';
    assert.deepEqual(pt(t), [['FieldValueNotSupported', 'template.spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']]);
  });
  it('no ephemeral containers', () =>
    assert.deepEqual(pt(template({}, { ephemeralContainers: [containerFixture('e')] })), [
      ['FieldValueForbidden', 'template.spec.ephemeralContainers', 'Forbidden: ephemeral containers not allowed in pod template'],
    ]));
  it('an update is validated again (nothing in a template is immutable)', () => {
    const old = { metadata: { name: 't' }, template: template() };
    assert.deepEqual(causes(validatePodTemplateUpdate({ metadata: { name: 't' }, template: template({ app: 'b' }, { restartPolicy: 'Never' }) }, old, createOptions())), []);
  });
});

function rc(spec: JsonObject, labels?: Record<string, string>): JsonObject {
  const obj: JsonObject = { metadata: { name: 'r', namespace: 'ns', ...(labels ? { labels } : {}) }, spec };
  setDefaultsReplicationController(obj);
  return obj;
}

describe('replication controllers (ValidateReplicationController)', () => {
  const v = (obj: JsonObject): Cause[] => causes(validateReplicationController(obj, createOptions()));
  it('selector and labels default from the template; one replica', () => {
    const obj = rc({ template: template({ app: 'web' }) });
    assert.deepEqual((obj['spec'] as JsonObject)['selector'], { app: 'web' });
    assert.deepEqual((obj['metadata'] as JsonObject)['labels'], { app: 'web' });
    assert.equal((obj['spec'] as JsonObject)['replicas'], 1);
    assert.deepEqual(v(obj), []);
  });
  it('a selector that the template labels do not match (kube prints the Go map)', () =>
    assert.deepEqual(v(rc({ selector: { app: 'x' }, template: template({ app: 'web', tier: 'fe' }) })), [
      ['FieldValueInvalid', 'spec.template.metadata.labels', 'Invalid value: map[string]string{"app":"web", "tier":"fe"}: `selector` does not match template `labels`'],
    ]));
  it('no template, no selector, negative numbers', () =>
    assert.deepEqual(v(rc({ replicas: -1, minReadySeconds: -1 })), [
      ['FieldValueInvalid', 'spec.minReadySeconds', 'Invalid value: -1: must be greater than or equal to 0'],
      ['FieldValueRequired', 'spec.selector', 'Required value'],
      ['FieldValueInvalid', 'spec.replicas', 'Invalid value: -1: must be greater than or equal to 0'],
      ['FieldValueRequired', 'spec.template', 'Required value'],
    ]));
  it('restartPolicy Always only, no activeDeadlineSeconds', () =>
    assert.deepEqual(v(rc({ template: template({ a: 'b' }, { restartPolicy: 'OnFailure', activeDeadlineSeconds: 5 }) })), [
      ['FieldValueNotSupported', 'spec.template.spec.restartPolicy', 'Unsupported value: "OnFailure": supported values: "Always"'],
      ['FieldValueForbidden', 'spec.template.spec.activeDeadlineSeconds', 'Forbidden: activeDeadlineSeconds in ReplicationController is not Supported'],
    ]));
  it('GCE PDs of several replicas are read-only', () => {
    const spec = { volumes: [{ name: 'pd', gcePersistentDisk: { pdName: 'disk', fsType: 'ext4' } }] };
    assert.deepEqual(v(rc({ replicas: 1, template: template({ a: 'b' }, spec) })), []);
    assert.deepEqual(v(rc({ replicas: 2, template: template({ a: 'b' }, spec) })), [
      ['FieldValueInvalid', 'spec.template.spec.volumes[0].gcePersistentDisk.readOnly', 'Invalid value: false: must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only'],
    ]);
  });
});

describe('replicationcontrollers/status (ValidateReplicationControllerStatus)', () => {
  const st = (status: JsonObject): Cause[] => causes(validateReplicationControllerStatusUpdate({ status }, {}));
  it('consistent counts', () => assert.deepEqual(st({ replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 2, availableReplicas: 1, observedGeneration: 4 }), []));
  it('negative and inconsistent counts', () =>
    assert.deepEqual(st({ replicas: 1, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 2, observedGeneration: -1 }), [
      ['FieldValueInvalid', 'status.observedGeneration', 'Invalid value: -1: must be greater than or equal to 0'],
      ['FieldValueInvalid', 'status.fullyLabeledReplicas', 'Invalid value: 2: cannot be greater than status.replicas'],
      ['FieldValueInvalid', 'status.availableReplicas', 'Invalid value: 2: cannot be greater than status.replicas'],
      ['FieldValueInvalid', 'status.availableReplicas', 'Invalid value: 2: cannot be greater than readyReplicas'],
    ]));
});
