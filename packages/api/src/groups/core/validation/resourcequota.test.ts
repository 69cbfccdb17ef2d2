import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import type { JsonObject } from './json-fields.js';
import { validateResourceQuota, validateResourceQuotaStatusUpdate, validateResourceQuotaUpdate } from './resourcequota.js';

const rq = (spec: JsonObject, status: JsonObject = {}, rv = '1'): JsonObject => ({ metadata: { name: 'q', resourceVersion: rv }, spec, status });
const texts = (errs: ReturnType<typeof validateResourceQuota>): string[] => errs.map(fieldErrorString);

describe('validateResourceQuota', () => {
  it('accepts standard, prefixed and hugepage quota resources', () => {
    const spec = { hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi', 'requests.hugepages-2Mi': '1Gi', 'gold.storageclass.storage.k8s.io/requests.storage': '500Gi', 'count/deployments.apps': '2' } };
    assert.deepEqual(texts(validateResourceQuota(rq(spec, { hard: { pods: '10' }, used: { pods: '0' } }))), []);
  });

  it('reports names, negative and fractional values in spec and status', () => {
    assert.deepEqual(texts(validateResourceQuota(rq({ hard: { storage: '1Gi', pods: '1.5', cpu: '-1' } }, { used: { secrets: '500m' } }))), [
      'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount{value:15, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be an integer',
      'spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota',
      'status.used[secrets]: Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an integer',
    ]);
  });

  it('checks scopes against each other and against the resources', () => {
    assert.deepEqual(texts(validateResourceQuota(rq({ hard: { pods: '1', services: '1', cpu: '1' }, scopes: ['BestEffort', 'NotBestEffort', 'Foo'] }))), [
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Foo"}: unsupported scope applied to resource',
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Foo"}: unsupported scope applied to resource',
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Foo"}: unsupported scope applied to resource',
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Foo"}: unsupported scope',
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Foo"}: conflicting scopes',
    ]);
  });

  it('checks scope selectors', () => {
    const spec = {
      hard: { pods: '1' },
      scopeSelector: {
        matchExpressions: [
          { scopeName: 'PriorityClass', operator: 'In', values: ['high'] },
          { scopeName: 'Terminating', operator: 'In' },
          { scopeName: 'NotTerminating', operator: 'Exists', values: ['x'] },
          { scopeName: 'Nope', operator: 'Gt' },
        ],
      },
    };
    assert.deepEqual(texts(validateResourceQuota(rq(spec))), [
      "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
      "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
      "spec.scopeSelector.matchExpressions.values: Invalid value: []string{\"x\"}: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
      'spec.scopeSelector.matchExpressions.scopeName: Invalid value: "Nope": unsupported scope',
      'spec.scopeSelector.matchExpressions.operator: Invalid value: "Gt": not a valid selector operator',
      'spec.scopeSelector.matchExpressions: Invalid value: []core.ResourceQuotaScope(nil): conflicting scopes',
    ]);
    const applied = { hard: { services: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'Exists' }] } };
    assert.deepEqual(texts(validateResourceQuota(rq(applied))), [
      'spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:"BestEffort", Operator:"Exists", Values:[]string(nil)}}}: unsupported scope applied to resource',
    ]);
  });
});

describe('ResourceQuota updates', () => {
  it('keeps scopes immutable and re-checks the spec', () => {
    const old = rq({ hard: { pods: '1' }, scopes: ['BestEffort'] });
    assert.deepEqual(texts(validateResourceQuotaUpdate(rq({ hard: { pods: '2' }, scopes: ['BestEffort'] }), old)), []);
    assert.deepEqual(texts(validateResourceQuotaUpdate(rq({ hard: { pods: '-2' } }), old)), [
      'spec.hard[pods]: Invalid value: "-2": must be greater than or equal to 0',
      'spec.scopes: Invalid value: []core.ResourceQuotaScope(nil): field is immutable',
    ]);
  });

  it('requires a resourceVersion on status updates and checks status lists', () => {
    assert.deepEqual(texts(validateResourceQuotaStatusUpdate(rq({}, { used: { pods: '-1' } }, ''), rq({}))), [
      'resourceVersion: Required value',
      'status.used[pods]: Invalid value: "-1": must be greater than or equal to 0',
    ]);
  });
});
