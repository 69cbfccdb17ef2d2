import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { goDiff } from './go-diff.js';
import { POD_UPDATE_FORBIDDEN_MSG, validatePodUpdate } from './pod-update.js';
import { type Cause, causes, containerFixture, createOptions, firstContainer, podFixture, specOf } from './test-fixtures.js';

/** Causes of updating a valid pod (old) by `change` (on a copy). */
function update(change: (pod: JsonObject) => void, oldSpec: JsonObject = {}): Cause[] {
  const old = podFixture(oldSpec);
  const pod = structuredClone(old);
  change(pod);
  return causes(validatePodUpdate(pod, old, createOptions()));
}

describe('pod updates: what may change (ValidatePodUpdate)', () => {
  it('a container image', () => assert.deepEqual(update((p) => (firstContainer(p)['image'] = 'nginx:2')), []));
  it('an init container image', () => assert.deepEqual(update((p) => ((specOf(p)['initContainers'] as JsonObject[])[0]!['image'] = 'b:2'), { initContainers: [containerFixture('i', 'b:1')] }), []));
  it('metadata (labels, annotations)', () => assert.deepEqual(update((p) => ((p['metadata'] as JsonObject)['labels'] = { a: 'b' })), []));
  it('activeDeadlineSeconds: set, then lowered', () => {
    assert.deepEqual(update((p) => (specOf(p)['activeDeadlineSeconds'] = 30)), []);
    assert.deepEqual(update((p) => (specOf(p)['activeDeadlineSeconds'] = 20), { activeDeadlineSeconds: 30 }), []);
  });
  it('tolerations: added, or their seconds changed', () =>
    assert.deepEqual(
      update(
        (p) => (specOf(p)['tolerations'] = [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 }, { operator: 'Exists' }]),
        { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }] },
      ),
      [],
    ));
  it('a negative terminationGracePeriodSeconds turned into 1', () => assert.deepEqual(update((p) => (specOf(p)['terminationGracePeriodSeconds'] = 1), { terminationGracePeriodSeconds: -5 }), []));
  it('the serviceAccount alias filled in for serviceAccountName', () => assert.deepEqual(update((p) => (specOf(p)['serviceAccount'] = 'sa'), { serviceAccountName: 'sa' }), []));
});

describe('pod updates: what may not change', () => {
  it('the number of containers', () =>
    assert.deepEqual(update((p) => (specOf(p)['containers'] = [containerFixture('c'), containerFixture('d')])), [
      ['FieldValueForbidden', 'spec.containers', 'Forbidden: pod updates may not add or remove containers'],
    ]));
  it('an image to nothing, or with whitespace', () =>
    assert.deepEqual(update((p) => (firstContainer(p)['image'] = ' x')), [
      ['FieldValueInvalid', 'spec.containers[0].image', 'Invalid value: " x": must not have leading or trailing whitespace'],
      ['FieldValueInvalid', 'spec.containers[0].image', 'Invalid value: " x": must not have leading or trailing whitespace'],
    ]));
  it('activeDeadlineSeconds raised, removed, out of range', () => {
    assert.deepEqual(update((p) => (specOf(p)['activeDeadlineSeconds'] = 40), { activeDeadlineSeconds: 30 }), [
      ['FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: 40: must be less than or equal to previous value'],
    ]);
    assert.deepEqual(update((p) => delete specOf(p)['activeDeadlineSeconds'], { activeDeadlineSeconds: 30 }), [
      ['FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: null: must not update from a positive integer to nil value'],
    ]);
    assert.deepEqual(update((p) => (specOf(p)['activeDeadlineSeconds'] = -1)), [
      ['FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: -1: must be between 1 and 2147483647, inclusive'],
      ['FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: -1: must be between 0 and 2147483647, inclusive'],
    ]);
  });
  it('a toleration modified', () =>
    assert.deepEqual(update((p) => (specOf(p)['tolerations'] = [{ key: 'k', operator: 'Exists' }]), { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }] }), [
      ['FieldValueForbidden', 'spec.tolerations', 'Forbidden: existing toleration can not be modified except its tolerationSeconds'],
    ]));
  it('any other field, with a go-cmp-style diff of the internal PodSpec', () => {
    const got = update((p) => {
      specOf(p)['hostNetwork'] = true;
      firstContainer(p)['image'] = 'nginx:2';
    });
    const diff = [
      '  core.PodSpec{',
      '  \t... // 10 identical fields',
      '  \tAutomountServiceAccountToken: nil,',
      '  \tNodeName:                     "",',
      '  \tSecurityContext: &core.PodSecurityContext{',
      '- \t\tHostNetwork: false,',
      '+ \t\tHostNetwork: true,',
      '  \t\tHostPID:     false,',
      '  \t\tHostIPC:     false,',
      '  \t\t... // 11 identical fields',
      '  \t},',
      '  \tImagePullSecrets: nil,',
      '  \tHostname:         "",',
      '  \t... // 16 identical fields',
      '  }',
      '',
    ].join('\n');
    assert.deepEqual(got, [['FieldValueForbidden', 'spec', `Forbidden: ${POD_UPDATE_FORBIDDEN_MSG}\n${diff}`]]);
  });
});

describe('go-cmp-style diffs (goDiff)', () => {
  it('prints inserted slices with their type and nested changes with theirs', () => {
    const x = { containers: [{ name: 'a', image: 'i', ports: [{ containerPort: 80 }] }] };
    const y = { containers: [{ name: 'a', image: 'i', ports: [{ containerPort: 81 }], env: [{ name: 'E', value: 'v' }] }] };
    assert.equal(
      goDiff(x, y, 'core.PodSpec'),
      [
        '  core.PodSpec{',
        '  \tVolumes:        nil,',
        '  \tInitContainers: nil,',
        '  \tContainers: []core.Container{',
        '  \t\t{',
        '  \t\t\t... // 3 identical fields',
        '  \t\t\tArgs:       nil,',
        '  \t\t\tWorkingDir: "",',
        '  \t\t\tPorts: []core.ContainerPort{',
        '  \t\t\t\t{',
        '  \t\t\t\t\tName:          "",',
        '  \t\t\t\t\tHostPort:      0,',
        '- \t\t\t\t\tContainerPort: 80,',
        '+ \t\t\t\t\tContainerPort: 81,',
        '  \t\t\t\t\tProtocol:      "",',
        '  \t\t\t\t\tHostIP:        "",',
        '  \t\t\t\t},',
        '  \t\t\t},',
        '  \t\t\tEnvFrom:      nil,',
        '- \t\t\tEnv:          nil,',
        '+ \t\t\tEnv:          []core.EnvVar{{Name: "E", Value: "v"}},',
        '  \t\t\tResources:    {},',
        '  \t\t\tVolumeMounts: nil,',
        '  \t\t\t... // 12 identical fields',
        '  \t\t},',
        '  \t},',
        '  \tEphemeralContainers: nil,',
        '  \tRestartPolicy:       "",',
        '  \t... // 26 identical fields',
        '  }',
        '',
      ].join('\n'),
    );
  });
  it('aligns removed and inserted list elements', () =>
    assert.equal(
      goDiff({ tolerations: [{ key: 'a' }] }, { tolerations: [{ key: 'a' }, { key: 'b', operator: 'Exists' }] }, 'core.PodSpec').split('\n').slice(4, 9).join('\n'),
      ['  \tTolerations: []core.Toleration{', '  \t\t{Key: "a"},', '+ \t\t{Key: "b", Operator: "Exists"},', '  \t},', '  \tHostAliases:       nil,'].join('\n'),
    ));
});
