import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validateEnv } from './env.js';
import { podValidationOptions } from './pod-options.js';
import { validatePodSpec } from './pod-spec.js';
import { validateVolumes } from './volumes.js';
import { type Cause, causes, createOptions, firstContainer, podFixture, specOf } from './test-fixtures.js';

function run(spec: JsonObject, container: JsonObject = {}, opts = createOptions()): Cause[] {
  const pod = podFixture(spec);
  Object.assign(firstContainer(pod), container);
  return causes(validatePodSpec(specOf(pod), 'p', 'spec', opts));
}

const r = 'spec.containers[0].resources';

describe('pod resources: containers and overhead (ValidateResourceRequirements, validateOverhead)', () => {
  it('accepts requests below limits', () => assert.deepEqual(run({}, { resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '512Mi' } } }), []));
  it('rejects requests above limits and unknown names', () =>
    assert.deepEqual(run({}, { resources: { limits: { cpu: '1' }, requests: { cpu: '2', gpu: '1' } } }), [
      ['FieldValueInvalid', `${r}.requests`, 'Invalid value: "2": must be less than or equal to cpu limit'],
      ['FieldValueInvalid', `${r}.requests[gpu]`, 'Invalid value: "gpu": must be a standard resource type or fully qualified'],
      ['FieldValueInvalid', `${r}.requests[gpu]`, 'Invalid value: "gpu": must be a standard resource for containers'],
    ]));
  it('reports overhead errors under overhead.limits, as kube does', () =>
    assert.deepEqual(run({ overhead: { cpu: '-1' } }), [['FieldValueInvalid', 'spec.overhead.limits[cpu]', 'Invalid value: "-1": must be greater than or equal to 0']]));
  it('rejects hugepages that are not whole pages, unless the old pod had some', () => {
    const spec = { containers: [{ ...firstContainer(podFixture()), resources: { limits: { 'hugepages-2Mi': '3Mi', memory: '1Gi' }, requests: { memory: '1Gi' } } }] };
    assert.deepEqual(run(spec), [['FieldValueInvalid', `${r}.limits[hugepages-2Mi]`, 'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi']]);
    const opts = podValidationOptions({ spec, oldSpec: spec });
    assert.equal(opts.allowIndivisibleHugePagesValues, true);
    assert.deepEqual(run(spec, {}, opts), []);
  });
});

describe('pod resources: downward API divisors (validateContainerResourceDivisor)', () => {
  const env = (resource: string, divisor: unknown): Cause[] => causes(validateEnv([{ name: 'X', valueFrom: { resourceFieldRef: { resource, divisor } } }], 'env', createOptions()));
  const p = 'env[0].valueFrom.resourceFieldRef.divisor';
  it('accepts the divisors kube lists, and 0 as none', () => {
    for (const [res, div] of [['limits.cpu', '1m'], ['requests.cpu', '1'], ['limits.memory', '1Mi'], ['requests.ephemeral-storage', '1G'], ['limits.hugepages-2Mi', '1Ki'], ['limits.cpu', '0']] as const) {
      assert.deepEqual(env(res, div), [], `${res} ${div}`);
    }
  });
  it('rejects others, printing the resource as the value', () => {
    assert.deepEqual(env('limits.cpu', '10m'), [['FieldValueInvalid', p, 'Invalid value: "limits.cpu": only divisor\'s values 1m and 1 are supported with the cpu resource']]);
    assert.deepEqual(env('requests.memory', '2'), [
      ['FieldValueInvalid', p, 'Invalid value: "requests.memory": only divisor\'s values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource'],
    ]);
    assert.deepEqual(env('limits.ephemeral-storage', '1m'), [
      ['FieldValueInvalid', p, 'Invalid value: "limits.ephemeral-storage": only divisor\'s values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource'],
    ]);
    assert.deepEqual(env('requests.hugepages-1Gi', '3'), [
      ['FieldValueInvalid', p, 'Invalid value: "requests.hugepages-1Gi": only divisor\'s values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource'],
    ]);
  });
});

describe('pod resources: emptyDir sizeLimit', () => {
  const vols = (sizeLimit: unknown): Cause[] => causes(validateVolumes([{ name: 'a', emptyDir: { medium: 'Memory', sizeLimit } }], 'p', 'spec.volumes', createOptions()).errors);
  it('accepts a size', () => assert.deepEqual(vols('1Gi'), []));
  it('rejects a negative one', () => assert.deepEqual(vols('-1'), [['FieldValueForbidden', 'spec.volumes[0].emptyDir.sizeLimit', 'Forbidden: SizeLimit field must be a valid resource quantity']]));
});
