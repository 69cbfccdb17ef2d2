import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validatePodEphemeralContainersUpdate, validatePodStatusUpdate } from './pod-status.js';
import { type Cause, causes, containerFixture, createOptions, podFixture, specOf } from './test-fixtures.js';

function statusUpdate(status: JsonObject, oldStatus: JsonObject, restartPolicy = 'Always', change?: (p: JsonObject) => void): Cause[] {
  const old = { ...podFixture({ restartPolicy }), status: oldStatus };
  const pod = { ...structuredClone(old), status };
  change?.(pod);
  return causes(validatePodStatusUpdate(pod, old, createOptions()));
}

const terminated = (name: string, exitCode: number): JsonObject => ({ name, state: { terminated: { exitCode } } });
const running = (name: string): JsonObject => ({ name, state: { running: {} } });

describe('pods/status (ValidatePodStatusUpdate)', () => {
  it('phase, conditions, IPs', () =>
    assert.deepEqual(statusUpdate({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }, { type: 'example.com/gate', status: 'True' }], podIP: '10.0.0.1' }, {}), []));
  it('custom condition types are qualified names (kube names the path metadata.conditions[i].Type)', () =>
    assert.deepEqual(statusUpdate({ conditions: [{ type: 'a b', status: 'True' }] }, {}), [
      [
        'FieldValueInvalid',
        'metadata.conditions[0].Type',
        "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    ]));
  it('nominatedNodeName is a node name when it changes', () =>
    assert.deepEqual(statusUpdate({ nominatedNodeName: 'Node_1' }, {}), [
      [
        'FieldValueInvalid',
        'status.nominatedNodeName',
        "Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
    ]));
  it('spec.nodeName may not change here', () =>
    assert.deepEqual(statusUpdate({}, {}, 'Always', (p) => (specOf(p)['nodeName'] = 'n')), [['FieldValueForbidden', 'status.nodeName', 'Forbidden: may not be changed directly']]));
  it('terminated containers stay terminated unless the pod restarts them', () => {
    assert.deepEqual(statusUpdate({ containerStatuses: [running('c')] }, { containerStatuses: [terminated('c', 0)] }, 'Always'), []);
    assert.deepEqual(statusUpdate({ containerStatuses: [running('c')] }, { containerStatuses: [terminated('c', 1)] }, 'OnFailure'), []);
    assert.deepEqual(statusUpdate({ containerStatuses: [running('c')] }, { containerStatuses: [terminated('c', 0)] }, 'OnFailure'), [
      ['FieldValueForbidden', 'status.containerStatuses[0].state', 'Forbidden: may not be transitioned to non-terminated state'],
    ]);
    assert.deepEqual(statusUpdate({ initContainerStatuses: [running('i')] }, { initContainerStatuses: [terminated('i', 2)] }, 'Never'), [
      ['FieldValueForbidden', 'status.initContainerStatuses[0].state', 'Forbidden: may not be transitioned to non-terminated state'],
    ]);
  });
  it('ephemeral containers never restart', () =>
    assert.deepEqual(statusUpdate({ ephemeralContainerStatuses: [running('e')] }, { ephemeralContainerStatuses: [terminated('e', 1)] }, 'Always'), [
      ['FieldValueForbidden', 'status.ephemeralContainerStatuses[0].state', 'Forbidden: may not be transitioned to non-terminated state'],
    ]));
  it('pod IPs', () =>
    assert.deepEqual(statusUpdate({ podIPs: [{ ip: 'fd00::1' }, { ip: 'fd00::2' }] }, {}), [
      ['FieldValueInvalid', 'status.podIPs', 'Invalid value: []core.PodIP{core.PodIP{IP:"fd00::1"}, core.PodIP{IP:"fd00::2"}}: may specify no more than one IP for each IP family'],
    ]));
});

describe('pods/ephemeralcontainers (ValidatePodEphemeralContainersUpdate)', () => {
  const debug = { ...containerFixture('debug', 'busybox'), targetContainerName: 'c' };
  function ecUpdate(next: JsonObject[], old: JsonObject[]): Cause[] {
    const oldPod = podFixture({ ephemeralContainers: old });
    const pod = podFixture({ ephemeralContainers: next });
    return causes(validatePodEphemeralContainersUpdate(pod, oldPod, createOptions()));
  }
  it('adds one', () => assert.deepEqual(ecUpdate([debug], []), []));
  it('keeps old ones, in any order', () => assert.deepEqual(ecUpdate([{ ...containerFixture('b', 'x') }, debug], [debug]), []));
  it('may not remove one', () =>
    assert.deepEqual(ecUpdate([], [debug]), [['FieldValueForbidden', 'spec.ephemeralContainers', 'Forbidden: existing ephemeral containers "debug" may not be removed\n']]));
  it('may not change one (with a diff)', () => {
    const diff = [
      '  core.EphemeralContainer{',
      '  \tEphemeralContainerCommon: core.EphemeralContainerCommon{',
      '  \t\tName:    "debug",',
      '- \t\tImage:   "busybox",',
      '+ \t\tImage:   "busybox:2",',
      '  \t\tCommand: nil,',
      '  \t\tArgs:    nil,',
      '  \t\t... // 18 identical fields',
      '  \t},',
      '  \tTargetContainerName: "c",',
      '  }',
      '',
    ].join('\n');
    assert.deepEqual(ecUpdate([{ ...debug, image: 'busybox:2' }], [debug]), [
      ['FieldValueForbidden', 'spec.ephemeralContainers', `Forbidden: existing ephemeral containers "debug" may not be changed\n${diff}`],
    ]);
  });
  it('validates the new ones as ephemeral containers', () =>
    assert.deepEqual(ecUpdate([{ ...debug, ports: [{ containerPort: 80, protocol: 'TCP' }] }], []), [
      ['FieldValueForbidden', 'spec.ephemeralContainers[0].ports', 'Forbidden: cannot be set for an Ephemeral Container'],
    ]));
});
