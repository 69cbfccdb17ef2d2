import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { decodeTolerationsAnnotation, deletionCostError, validatePodSpecificAnnotationUpdates, validatePodSpecificAnnotations } from './pod-annotations.js';
import { podValidationOptions } from './pod-options.js';
import { type Cause, causes, createOptions, podFixture, specOf } from './test-fixtures.js';

const a = 'metadata.annotations';
function run(annotations: Record<string, string>, spec: JsonObject = {}, opts = createOptions()): Cause[] {
  return causes(validatePodSpecificAnnotations(annotations, specOf(podFixture(spec)), a, opts));
}

describe('pod annotations (ValidatePodSpecificAnnotations)', () => {
  const table: Array<[string, Record<string, string>, JsonObject, Cause[]]> = [
    ['a mirror pod on a node', { 'kubernetes.io/config.mirror': 'x' }, { nodeName: 'n' }, []],
    [
      'a mirror pod without a node',
      { 'kubernetes.io/config.mirror': 'x' },
      {},
      [['FieldValueInvalid', `${a}[kubernetes.io/config.mirror]`, 'Invalid value: "x": must set spec.nodeName if mirror pod annotation is set']],
    ],
    ['tolerations in the annotation', { 'scheduler.alpha.kubernetes.io/tolerations': '[{"key":"k","operator":"Exists","effect":"NoSchedule"}]' }, {}, []],
    [
      'tolerations annotation that is no JSON',
      { 'scheduler.alpha.kubernetes.io/tolerations': 'nope' },
      {},
      [['FieldValueInvalid', a, 'Invalid value: "scheduler.alpha.kubernetes.io/tolerations": invalid character \'o\' in literal null (expecting \'u\')']],
    ],
    [
      'tolerations annotation with an invalid toleration (kube\'s path uses .key)',
      { 'scheduler.alpha.kubernetes.io/tolerations': '[{"operator":"Equal"}]' },
      {},
      [['FieldValueInvalid', `${a}.scheduler.alpha.kubernetes.io/tolerations[0].operator`, 'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"']],
    ],
    ['a deletion cost', { 'controller.kubernetes.io/pod-deletion-cost': '-2147483648' }, {}, []],
    [
      'a deletion cost that is not an int32',
      { 'controller.kubernetes.io/pod-deletion-cost': '2147483648' },
      {},
      [['FieldValueInvalid', `${a}[controller.kubernetes.io/pod-deletion-cost]`, 'Invalid value: "2147483648": must be a 32bit integer']],
    ],
    [
      'seccomp annotations (kube\'s paths use .key)',
      { 'seccomp.security.alpha.kubernetes.io/pod': 'foo', 'container.seccomp.security.alpha.kubernetes.io/c': 'localhost//abs', 'container.seccomp.security.alpha.kubernetes.io/d': 'runtime/default' },
      {},
      [
        ['FieldValueInvalid', `${a}.seccomp.security.alpha.kubernetes.io/pod`, 'Invalid value: "foo": must be a valid seccomp profile'],
        ['FieldValueInvalid', `${a}.container.seccomp.security.alpha.kubernetes.io/c`, 'Invalid value: "/abs": must be a relative path'],
      ],
    ],
    [
      'AppArmor: an unknown container and a bad profile',
      { 'container.apparmor.security.beta.kubernetes.io/x': 'custom', 'container.apparmor.security.beta.kubernetes.io/c': 'localhost/p' },
      {},
      [
        ['FieldValueInvalid', `${a}[container.apparmor.security.beta.kubernetes.io/x]`, 'Invalid value: "x": container not found'],
        ['FieldValueInvalid', `${a}[container.apparmor.security.beta.kubernetes.io/x]`, 'Invalid value: "custom": invalid AppArmor profile name: "custom"'],
      ],
    ],
  ];
  for (const [name, annotations, spec, want] of table) it(name, () => assert.deepEqual(run(annotations, spec), want));
  it('an invalid deletion cost is kept when the old pod had one', () => {
    const old = { annotations: { 'controller.kubernetes.io/pod-deletion-cost': 'x' } };
    const opts = podValidationOptions({ oldMeta: old, oldSpec: {} });
    assert.equal(opts.allowInvalidPodDeletionCost, true);
    assert.deepEqual(run({ 'controller.kubernetes.io/pod-deletion-cost': 'y' }, {}, opts), []);
  });
});

describe('pod annotations: helpers', () => {
  it('deletion cost: sign, leading zeros, range', () => {
    assert.equal(deletionCostError({ 'controller.kubernetes.io/pod-deletion-cost': '0' }), undefined);
    assert.equal(deletionCostError({ 'controller.kubernetes.io/pod-deletion-cost': '+1' }), 'invalid value "+1"');
    assert.equal(deletionCostError({ 'controller.kubernetes.io/pod-deletion-cost': '01' }), 'invalid value "01"');
    assert.equal(deletionCostError({ 'controller.kubernetes.io/pod-deletion-cost': '1x' }), 'strconv.ParseInt: parsing "1x": invalid syntax');
    assert.equal(deletionCostError({}), undefined);
  });
  it('the tolerations annotation decodes as Go would', () => {
    assert.deepEqual(decodeTolerationsAnnotation('[{"KEY":"k","tolerationSeconds":5,"other":1}]'), { tolerations: [{ key: 'k', tolerationSeconds: 5 }] });
    assert.deepEqual(decodeTolerationsAnnotation('{}'), { error: 'json: cannot unmarshal object into Go value of type []core.Toleration' });
    assert.deepEqual(decodeTolerationsAnnotation('[{"key":1}]'), { error: 'json: cannot unmarshal number 1 into Go struct field Toleration.key of type string' });
    assert.deepEqual(decodeTolerationsAnnotation('[1'), { error: 'unexpected end of JSON input' });
  });
});

describe('pod annotation updates (ValidatePodSpecificAnnotationUpdates)', () => {
  const pod = (annotations: Record<string, string>): JsonObject => ({ ...podFixture({ nodeName: 'n' }), metadata: { name: 'p', namespace: 'ns', annotations } });
  const upd = (next: Record<string, string>, old: Record<string, string>): Cause[] => causes(validatePodSpecificAnnotationUpdates(pod(next), pod(old), a, createOptions()));
  const aa = 'container.apparmor.security.beta.kubernetes.io/c';
  const mirror = 'kubernetes.io/config.mirror';
  it('AppArmor and mirror annotations may not be added', () =>
    assert.deepEqual(upd({ [aa]: 'runtime/default', [mirror]: 'm' }, {}), [
      ['FieldValueForbidden', `${a}[${aa}]`, 'Forbidden: may not add AppArmor annotations'],
      ['FieldValueForbidden', `${a}[${mirror}]`, 'Forbidden: may not add mirror pod annotation'],
    ]));
  it('nor changed or removed', () =>
    assert.deepEqual(upd({ [aa]: 'unconfined' }, { [aa]: 'runtime/default', [mirror]: 'm' }), [
      ['FieldValueForbidden', `${a}[${aa}]`, 'Forbidden: may not remove or update AppArmor annotations'],
      ['FieldValueForbidden', `${a}[${mirror}]`, 'Forbidden: may not remove or update mirror pod annotation'],
    ]));
  it('others may change', () => assert.deepEqual(upd({ [aa]: 'runtime/default', x: '2' }, { [aa]: 'runtime/default', x: '1' }), []));
});
