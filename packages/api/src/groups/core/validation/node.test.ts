import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import { setDefaultsNode } from '../defaults/node.js';
import type { JsonObject } from './json-fields.js';
import { dropDisabledNodeFields, validateNode, validateNodeUpdate } from './node.js';

const texts = (errs: ReturnType<typeof validateNode>): string[] => errs.map(fieldErrorString);
const node = (spec: JsonObject = {}, status: JsonObject = {}, annotations?: JsonObject): JsonObject => ({
  metadata: { name: 'n1', ...(annotations ? { annotations } : {}) },
  spec,
  status,
});

describe('setDefaultsNode', () => {
  it('copies capacity to a missing allocatable', () => {
    const obj = node({}, { capacity: { cpu: '4', memory: '8Gi' } });
    setDefaultsNode(obj);
    assert.deepEqual((obj['status'] as JsonObject)['allocatable'], { cpu: '4', memory: '8Gi' });
    const kept = node({}, { capacity: { cpu: '4' }, allocatable: { cpu: '3' } });
    setDefaultsNode(kept);
    assert.deepEqual((kept['status'] as JsonObject)['allocatable'], { cpu: '3' });
  });
});

describe('validateNode', () => {
  it('accepts a kubelet-registered node', () => {
    const obj = node(
      { podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'], providerID: 'kind://docker/kind/n1', taints: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }] },
      { capacity: { cpu: '8', memory: '16Gi', pods: '110', 'hugepages-2Mi': '0', 'ephemeral-storage': '100Gi' }, addresses: [{ type: 'InternalIP', address: '172.18.0.2' }] },
    );
    setDefaultsNode(obj);
    assert.deepEqual(texts(validateNode(obj)), []);
  });

  it('reports taints under metadata.taints, as kube does', () => {
    assert.deepEqual(
      texts(
        validateNode(
          node({
            taints: [
              { key: 'a', value: 'b', effect: 'NoSchedule' },
              { key: 'a', value: 'c', effect: 'NoSchedule' },
              { key: 'bad key', effect: '' },
              { key: 'k', effect: 'Sometimes' },
            ],
          }),
        ),
      ),
      [
        'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"c", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair',
        "metadata.taints[2].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'metadata.taints[2].effect: Required value',
        'metadata.taints[3].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    );
  });

  it('validates taints given through the annotation', () => {
    assert.deepEqual(texts(validateNode(node({}, {}, { 'scheduler.alpha.kubernetes.io/taints': '[{"key":"a","effect":"Nope"}]' }))), [
      'metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].effect: Unsupported value: "Nope": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]);
    assert.deepEqual(texts(validateNode(node({}, {}, { 'scheduler.alpha.kubernetes.io/taints': 'x' }))), [
      'metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/taints": invalid character \'x\' looking for beginning of value',
    ]);
  });

  it('checks capacity values and pod CIDRs', () => {
    assert.deepEqual(texts(validateNode(node({ podCIDRs: ['10.0.0.0/24', '10.1.0.0/24', '10.0.0.0/24'] }, { capacity: { pods: '1.5', cpu: '-1' } }))), [
      'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
      'status.capacity.pods: Invalid value: resource.Quantity{i:resource.int64Amount{value:15, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be an integer',
      'spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24", "10.0.0.0/24"}: may specify no more than one CIDR for each IP family',
      'spec.podCIDRs[2]: Duplicate value: "10.0.0.0/24"',
    ]);
    assert.deepEqual(texts(validateNode(node({ podCIDRs: ['10.0.0.0/33', 'fd00::/64'] }))), [
      'spec.podCIDRs[0]: Invalid value: []string{"10.0.0.0/33", "fd00::/64"}: must be valid CIDR',
      'spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:failed to parse cidr value:"10.0.0.0/33" with error:invalid CIDR address: 10.0.0.0/33',
      'spec.podCIDRs: Invalid value: []string{"10.0.0.0/33", "fd00::/64"}: may specify no more than one CIDR for each IP family',
    ]);
    assert.deepEqual(texts(validateNode(node({ podCIDRs: ['010.000.001.000/24'] }))), []);
  });
});

describe('validateNodeUpdate', () => {
  it('fixes pod CIDRs, provider ID and external ID once set', () => {
    const old = node({ podCIDRs: ['10.0.0.0/24'], providerID: 'p1', externalID: 'e' });
    assert.deepEqual(texts(validateNodeUpdate(node({ podCIDRs: ['10.0.0.0/24'], providerID: 'p1', externalID: 'e', unschedulable: true }), old)), []);
    assert.deepEqual(texts(validateNodeUpdate(node({ podCIDRs: ['10.9.0.0/24'], providerID: 'p2' }), old)), [
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
      'spec.externalID: Forbidden: may not be updated',
    ]);
    assert.deepEqual(texts(validateNodeUpdate(node({ podCIDRs: ['10.0.0.0/24'] }), node())), []);
  });

  it('rejects duplicate addresses and checks config sources', () => {
    const addresses = [
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'InternalIP', address: '10.0.0.1' },
    ];
    assert.deepEqual(texts(validateNodeUpdate(node({ configSource: { configMap: { name: 'c', uid: 'u' } } }, { addresses, config: { active: {} } }), node())), [
      'status.addresses[1]: Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}',
      'spec.configSource.configMap.uid: Forbidden: uid must not be set in spec',
      'spec.configSource.configMap.namespace: Required value: namespace must be set',
      'spec.configSource.configMap.kubeletConfigKey: Required value: kubeletConfigKey must be set',
      'status.config.active: Invalid value: core.NodeConfigSource{ConfigMap:(*core.ConfigMapNodeConfigSource)(nil)}: exactly one reference subfield must be non-nil',
    ]);
  });

  it('drops a new configSource, as the 1.24 strategy does with DynamicKubeletConfig off', () => {
    const obj = node({ configSource: { configMap: {} } });
    dropDisabledNodeFields(obj, undefined);
    assert.deepEqual(obj['spec'], {});
    const kept = node({ configSource: { configMap: {} } });
    dropDisabledNodeFields(kept, node({ configSource: { configMap: {} } }));
    assert.ok(Object.hasOwn(kept['spec'] as JsonObject, 'configSource'));
  });
});
