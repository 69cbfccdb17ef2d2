import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import { setDefaultsLimitRange } from '../defaults/limitrange.js';
import { goFormatFixed } from './go-format.js';
import type { JsonObject } from './json-fields.js';
import { validateLimitRange } from './limitrange.js';

const lr = (...limits: JsonObject[]): JsonObject => ({ metadata: { name: 'l' }, spec: { limits } });
const causes = (obj: JsonObject): string[] => validateLimitRange(obj).map(fieldErrorString);
const q = (i: string, s: string, f = 'DecimalSI'): string =>
  `resource.Quantity{i:resource.int64Amount{${i}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:${JSON.stringify(s)}, Format:"${f}"}`;

describe('validateLimitRange', () => {
  it('accepts kube’s example limit ranges', () => {
    assert.deepEqual(
      causes(
        lr(
          { type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '100m' }, default: { cpu: '1' }, defaultRequest: { cpu: '500m' }, maxLimitRequestRatio: { cpu: '10' } },
          { type: 'Pod', max: { cpu: '4' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
        ),
      ),
      [],
    );
  });

  it('reports types: unknown, duplicate, and the PVC storage requirement', () => {
    assert.deepEqual(causes(lr({ type: 'Node' }, { type: 'Container' }, { type: 'Container' }, { type: 'PersistentVolumeClaim', max: { cpu: '1' } })), [
      'spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully qualified',
      'spec.limits[2].type: Duplicate value: "Container"',
      'spec.limits[3].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
    ]);
  });

  it('forbids defaults on Pod limits and checks resource names per type', () => {
    assert.deepEqual(causes(lr({ type: 'Pod', default: { cpu: '1' }, defaultRequest: { cpu: '1' }, max: { storage: '1Gi' } })), [
      'spec.limits[0].max[storage]: Invalid value: "storage": must be a standard resource for containers',
      "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
      "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'",
    ]);
  });

  it('checks min ≤ defaultRequest ≤ default ≤ max with kube’s messages and Quantity values', () => {
    assert.deepEqual(causes(lr({ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' }, default: { cpu: '3' }, defaultRequest: { cpu: '4' } })), [
      `spec.limits[0].min[cpu]: Invalid value: ${q('value:2, scale:0', '2')}: min value 2 is greater than max value 1`,
      `spec.limits[0].defaultRequest[cpu]: Invalid value: ${q('value:4, scale:0', '4')}: default request value 4 is greater than max value 1`,
      `spec.limits[0].defaultRequest[cpu]: Invalid value: ${q('value:4, scale:0', '4')}: default request value 4 is greater than default limit value 3`,
      `spec.limits[0].default[cpu]: Invalid value: ${q('value:1, scale:0', '1')}: default value 3 is greater than max value 1`,
    ]);
    assert.deepEqual(causes(lr({ type: 'Container', min: { memory: '1Gi' }, defaultRequest: { memory: '512Mi' }, default: { memory: '256Mi' } })), [
      `spec.limits[0].defaultRequest[memory]: Invalid value: ${q('value:536870912, scale:0', '', 'BinarySI')}: min value 1Gi is greater than default request value 512Mi`,
      `spec.limits[0].defaultRequest[memory]: Invalid value: ${q('value:536870912, scale:0', '', 'BinarySI')}: default request value 512Mi is greater than default limit value 256Mi`,
      `spec.limits[0].default[memory]: Invalid value: ${q('value:1073741824, scale:0', '1Gi', 'BinarySI')}: min value 1Gi is greater than default value 256Mi`,
    ]);
  });

  it('checks maxLimitRequestRatio against 1 and max/min', () => {
    assert.deepEqual(causes(lr({ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } })), [
      `spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: ${q('value:500, scale:-3', '500m')}: ratio 500m is less than 1`,
    ]);
    assert.deepEqual(causes(lr({ type: 'Container', min: { cpu: '300m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '4' } })), [
      `spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: ${q('value:4, scale:0', '4')}: ratio 4 is greater than max/min = 3.333333`,
    ]);
  });

  it('requires default == defaultRequest for resources that cannot be overcommitted', () => {
    assert.deepEqual(causes(lr({ type: 'Container', default: { 'example.com/gpu': '2' }, defaultRequest: { 'example.com/gpu': '1' } })), [
      `spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: ${q('value:1, scale:0', '1')}: default value 2 must equal to defaultRequest value 1 in example.com/gpu`,
    ]);
  });
});

describe('setDefaultsLimitRange', () => {
  it('defaults Container limits from max, default and min as kube does', () => {
    const obj = lr({ type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '100m', 'ephemeral-storage': '1Gi' }, default: { memory: '512Mi' } }, { type: 'Pod', max: { cpu: '4' } });
    setDefaultsLimitRange(obj);
    assert.deepEqual(obj['spec'], {
      limits: [
        {
          type: 'Container',
          max: { cpu: '2', memory: '1Gi' },
          min: { cpu: '100m', 'ephemeral-storage': '1Gi' },
          default: { memory: '512Mi', cpu: '2' },
          defaultRequest: { memory: '512Mi', cpu: '2', 'ephemeral-storage': '1Gi' },
        },
        { type: 'Pod', max: { cpu: '4' } },
      ],
    });
    const empty = lr({ type: 'Container' });
    setDefaultsLimitRange(empty);
    assert.deepEqual(empty['spec'], { limits: [{ type: 'Container' }] });
  });
});

describe('goFormatFixed', () => {
  it('is Go’s %f, ties to even', () => {
    assert.equal(goFormatFixed(10 / 3), '3.333333');
    assert.equal(goFormatFixed(1 / 128), '0.007812');
    assert.equal(goFormatFixed(3 / 128), '0.023438');
    assert.equal(goFormatFixed(-2.5, 0), '-2');
    assert.equal(goFormatFixed(1e21), '1000000000000000000000.000000');
    assert.equal(goFormatFixed(Infinity), '+Inf');
    assert.equal(goFormatFixed(0), '0.000000');
  });
});
