import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import {
  isExtendedResourceName,
  isHugePageResourceValueDivisible,
  isIntegerResourceName,
  isNativeResource,
  isOvercommitAllowed,
  resourceListEntries,
  validateBasicResource,
  validateContainerResourceName,
  validateLimitRangeTypeName,
  validateNonnegativeQuantity,
  validatePositiveQuantityValue,
  validateResourceName,
  validateResourceQuantityValue,
  validateResourceQuotaResourceName,
  validateResourceRequirements,
} from './resources.js';
import { parseQuantity } from '../../../quantity.js';

const texts = (errs: Parameters<typeof fieldErrorString>[0][]): string[] => errs.map(fieldErrorString);
const QUALIFIED =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('resource name predicates', () => {
  it('tell native, extended, integer and overcommittable names apart as kube’s helper does', () => {
    assert.equal(isNativeResource('cpu'), true);
    assert.equal(isNativeResource('kubernetes.io/foo'), true);
    assert.equal(isNativeResource('example.com/foo'), false);
    assert.equal(isExtendedResourceName('example.com/gpu'), true);
    assert.equal(isExtendedResourceName('requests.example.com/gpu'), false);
    assert.equal(isExtendedResourceName('cpu'), false);
    assert.equal(isExtendedResourceName('example.com/a*b'), false);
    assert.equal(isIntegerResourceName('pods'), true);
    assert.equal(isIntegerResourceName('example.com/gpu'), true);
    assert.equal(isIntegerResourceName('cpu'), false);
    assert.equal(isOvercommitAllowed('memory'), true);
    assert.equal(isOvercommitAllowed('hugepages-2Mi'), false);
    assert.equal(isOvercommitAllowed('example.com/gpu'), false);
  });

  it('check hugepage values against the page size', () => {
    assert.equal(isHugePageResourceValueDivisible('hugepages-2Mi', parseQuantity('4Mi')), true);
    assert.equal(isHugePageResourceValueDivisible('hugepages-2Mi', parseQuantity('3Mi')), false);
    assert.equal(isHugePageResourceValueDivisible('hugepages-abc', parseQuantity('4Mi')), false);
    assert.equal(isHugePageResourceValueDivisible('hugepages-500m', parseQuantity('1')), false);
  });
});

describe('resource name validation', () => {
  it('validateResourceName', () => {
    assert.deepEqual(validateResourceName('cpu', 'p'), []);
    assert.deepEqual(validateResourceName('example.com/x', 'p'), []);
    assert.deepEqual(texts(validateResourceName('foo', 'p')), ['p: Invalid value: "foo": must be a standard resource type or fully qualified']);
    assert.deepEqual(texts(validateResourceName('a/b/c', 'p')), [
      "p: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]);
    assert.deepEqual(texts(validateResourceName('x/-a', 'p')), [`p: Invalid value: "x/-a": ${QUALIFIED}`]);
  });

  it('validateContainerResourceName', () => {
    assert.deepEqual(validateContainerResourceName('hugepages-2Mi', 'p'), []);
    assert.deepEqual(validateContainerResourceName('example.com/gpu', 'p'), []);
    assert.deepEqual(texts(validateContainerResourceName('pods', 'p')), ['p: Invalid value: "pods": must be a standard resource for containers']);
    assert.deepEqual(texts(validateContainerResourceName('requests.example.com/gpu', 'p')), [
      'p: Invalid value: "requests.example.com/gpu": doesn\'t follow extended resource name standard',
    ]);
    assert.deepEqual(texts(validateContainerResourceName('foo', 'p')), [
      'p: Invalid value: "foo": must be a standard resource type or fully qualified',
      'p: Invalid value: "foo": must be a standard resource for containers',
    ]);
  });

  it('validateResourceQuotaResourceName and validateLimitRangeTypeName', () => {
    assert.deepEqual(validateResourceQuotaResourceName('requests.hugepages-1Gi', 'p'), []);
    assert.deepEqual(texts(validateResourceQuotaResourceName('storage', 'p')), ['p: Invalid value: "storage": must be a standard resource for quota']);
    assert.deepEqual(validateLimitRangeTypeName('PersistentVolumeClaim', 'p'), []);
    assert.deepEqual(validateLimitRangeTypeName('example.com/Thing', 'p'), []);
    assert.deepEqual(texts(validateLimitRangeTypeName('Node', 'p')), ['p: Invalid value: "Node": must be a standard limit type or fully qualified']);
  });
});

describe('quantity validation', () => {
  it('validates signs and integers with kube’s messages and bad values', () => {
    assert.deepEqual(texts(validateNonnegativeQuantity('-1', 'p')), ['p: Invalid value: "-1": must be greater than or equal to 0']);
    assert.deepEqual(validateNonnegativeQuantity(0, 'p'), []);
    assert.deepEqual(texts(validatePositiveQuantityValue('0', 'p')), ['p: Invalid value: "0": must be greater than zero']);
    assert.deepEqual(texts(validateResourceQuantityValue('pods', '1500m', 'p')), [
      'p: Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1500m", Format:"DecimalSI"}: must be an integer',
    ]);
    assert.deepEqual(validateResourceQuantityValue('cpu', '1500m', 'p'), []);
    assert.deepEqual(texts(validateBasicResource('-1.5', 'p')), ['p: Invalid value: -2: must be a valid resource quantity']);
  });

  it('reads ResourceLists rounded to milli, in name order', () => {
    const entries = resourceListEntries({ memory: '1Gi', cpu: '100n', bad: 'x', n: 2 });
    assert.deepEqual(
      entries.map(([k, q]) => [k, q.toString()]),
      [
        ['cpu', '1m'],
        ['memory', '1Gi'],
        ['n', '2'],
      ],
    );
  });
});

describe('validateResourceRequirements', () => {
  it('accepts ordinary requirements', () => {
    assert.deepEqual(validateResourceRequirements({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: 1073741824 } }, 'r'), []);
  });

  it('requires requests ≤ limits, and equality where overcommit is not allowed', () => {
    assert.deepEqual(
      texts(
        validateResourceRequirements(
          { limits: { cpu: '1', 'example.com/gpu': '1' }, requests: { cpu: '2', 'example.com/gpu': '0', 'example.com/fpga': '1' } },
          'spec.containers[0].resources',
        ),
      ),
      [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit',
        'spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources',
        'spec.containers[0].resources.requests: Invalid value: "0": must be equal to example.com/gpu limit',
      ],
    );
  });

  it('checks hugepages: whole pages, and cpu or memory alongside', () => {
    assert.deepEqual(texts(validateResourceRequirements({ limits: { 'hugepages-2Mi': '3Mi' } }, 'r')), [
      'r.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
      'r: Forbidden: HugePages require cpu or memory',
    ]);
    assert.deepEqual(validateResourceRequirements({ limits: { 'hugepages-2Mi': '3Mi', memory: '1Gi' } }, 'r', { allowIndivisibleHugePagesValues: true }), []);
  });

  it('reports names and negative or fractional values per entry', () => {
    assert.deepEqual(texts(validateResourceRequirements({ limits: { pods: '1', memory: '-1' }, requests: { 'example.com/gpu': '0.5' } }, 'r')), [
      'r.limits[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'r.limits[pods]: Invalid value: "pods": must be a standard resource for containers',
      'r.requests[example.com/gpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be an integer',
      'r.limits: Required value: Limit must be set for non overcommitable resources',
    ]);
  });
});
