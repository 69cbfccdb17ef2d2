import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../validation/access.js';
import { causes } from '../validation/test-fixtures.js';
import { validatePodLogOptions } from '../validation/pod-log-options.js';
import {
  preparePodEphemeralContainersUpdate,
  preparePodForCreate,
  preparePodForUpdate,
  preparePodStatusUpdate,
  prepareReplicationControllerForCreate,
  prepareReplicationControllerForUpdate,
  prepareReplicationControllerStatusUpdate,
} from './pod-strategy.js';

const container = { name: 'c', image: 'x', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } } };

describe('pod strategy preparation (podStrategy, podStatusStrategy, podEphemeralContainersStrategy)', () => {
  it('create: status reset with the QoS class, disabled fields dropped, seccomp synced', () => {
    const pod: JsonObject = {
      metadata: { name: 'p' },
      spec: { containers: [{ ...container, livenessProbe: { exec: { command: ['x'] }, terminationGracePeriodSeconds: 3 } }], securityContext: { seccompProfile: { type: 'RuntimeDefault' } } },
      status: { phase: 'Running', podIP: '1.2.3.4' },
    };
    preparePodForCreate(pod);
    assert.deepEqual(pod['status'], { phase: 'Pending', qosClass: 'Guaranteed' });
    assert.deepEqual((pod['metadata'] as JsonObject)['annotations'], { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' });
    assert.equal((((pod['spec'] as JsonObject)['containers'] as JsonObject[])[0]!['livenessProbe'] as JsonObject)['terminationGracePeriodSeconds'], undefined);
  });
  it('update: the old status is kept', () => {
    const pod: JsonObject = { spec: {}, status: { phase: 'Failed' } };
    preparePodForUpdate(pod, { spec: {}, status: { phase: 'Running' } });
    assert.deepEqual(pod['status'], { phase: 'Running' });
  });
  it('status: the old spec and owner references are kept', () => {
    const pod: JsonObject = { metadata: { ownerReferences: [{ uid: 'new' }], deletionTimestamp: 'x' }, spec: { nodeName: 'other' }, status: { phase: 'Running' } };
    preparePodStatusUpdate(pod, { metadata: { ownerReferences: [{ uid: 'old' }] }, spec: { nodeName: 'n' } });
    assert.deepEqual(pod, { metadata: { ownerReferences: [{ uid: 'old' }] }, spec: { nodeName: 'n' }, status: { phase: 'Running' } });
  });
  it('ephemeral containers: only spec.ephemeralContainers of the body counts', () => {
    const old: JsonObject = { metadata: { labels: { a: 'b' }, generation: 1 }, spec: { containers: [container] }, status: { phase: 'Running' } };
    const pod: JsonObject = { metadata: { labels: { a: 'changed' } }, spec: { containers: [], ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }, status: {} };
    preparePodEphemeralContainersUpdate(pod, old);
    assert.deepEqual(pod, {
      metadata: { labels: { a: 'b' }, generation: 1 },
      spec: { containers: [container], ephemeralContainers: [{ name: 'debug', image: 'busybox' }] },
      status: { phase: 'Running' },
    });
  });
});

describe('replication controller strategy preparation (rcStrategy)', () => {
  it('create: empty status, generation 1', () => {
    const rc: JsonObject = { metadata: {}, spec: { replicas: 1 }, status: { replicas: 5 } };
    prepareReplicationControllerForCreate(rc);
    assert.deepEqual(rc, { metadata: { generation: 1 }, spec: { replicas: 1 }, status: { replicas: 0 } });
  });
  it('update: a spec change bumps the generation, a metadata change does not', () => {
    const old: JsonObject = { metadata: { generation: 3 }, spec: { replicas: 1 }, status: { replicas: 1 } };
    const scaled: JsonObject = { metadata: {}, spec: { replicas: 2 }, status: { replicas: 9 } };
    prepareReplicationControllerForUpdate(scaled, old);
    assert.deepEqual(scaled, { metadata: { generation: 4 }, spec: { replicas: 2 }, status: { replicas: 1 } });
    const relabelled: JsonObject = { metadata: { labels: { a: 'b' } }, spec: { replicas: 1 } };
    prepareReplicationControllerForUpdate(relabelled, old);
    assert.equal((relabelled['metadata'] as JsonObject)['generation'], 3);
  });
  it('status: the old spec is kept', () => {
    const rc: JsonObject = { spec: { replicas: 7 }, status: { replicas: 2 } };
    prepareReplicationControllerStatusUpdate(rc, { spec: { replicas: 1 } });
    assert.deepEqual(rc, { spec: { replicas: 1 }, status: { replicas: 2 } });
  });
});

describe('pods/log options (ValidatePodLogOptions)', () => {
  it('accepts sensible options', () => assert.deepEqual(causes(validatePodLogOptions({ tailLines: 0, limitBytes: 1, sinceSeconds: 1 })), []));
  it('rejects negative or zero limits', () =>
    assert.deepEqual(causes(validatePodLogOptions({ tailLines: -1, limitBytes: 0, sinceSeconds: 0 })), [
      ['FieldValueInvalid', 'tailLines', 'Invalid value: -1: must be greater than or equal to 0'],
      ['FieldValueInvalid', 'limitBytes', 'Invalid value: 0: must be greater than 0'],
      ['FieldValueInvalid', 'sinceSeconds', 'Invalid value: 0: must be greater than 0'],
    ]));
  it('rejects sinceSeconds with sinceTime', () =>
    assert.deepEqual(causes(validatePodLogOptions({ sinceSeconds: 5, sinceTime: '2022-01-01T00:00:00Z' })), [['FieldValueForbidden', '', 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified']]));
});
