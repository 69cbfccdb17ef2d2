import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../types.js';
import { endpointSliceV1beta1ToV1, endpointSliceV1ToV1beta1 } from './conversion.js';
import { formatDiscoveryEndpoints, formatDiscoveryPorts } from './endpointslices.js';

const HOST = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';
const beta = (endpoints: unknown[]): StoredObject => ({ apiVersion: 'discovery.k8s.io/v1beta1', kind: 'EndpointSlice', metadata: { name: 's' }, addressType: 'IPv4', endpoints });
const v1 = (endpoints: unknown[]): StoredObject => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's' }, addressType: 'IPv4', endpoints });

describe('EndpointSlice conversion (kube 1.24 pkg/apis/discovery/v1beta1)', () => {
  it('v1beta1 topology → zone, nodeName (only when equal) and deprecatedTopology, and back', () => {
    const cases: Array<[unknown, unknown]> = [
      [{ addresses: ['a'], nodeName: 'n', topology: { [HOST]: 'n', [ZONE]: 'z', rack: 'r' } }, { addresses: ['a'], nodeName: 'n', zone: 'z', deprecatedTopology: { rack: 'r' } }],
      [{ addresses: ['a'], nodeName: 'n', topology: { [HOST]: 'other' } }, { addresses: ['a'], nodeName: 'n', deprecatedTopology: { [HOST]: 'other' } }],
      [{ addresses: ['a'], topology: { [HOST]: 'h' } }, { addresses: ['a'], deprecatedTopology: { [HOST]: 'h' } }],
      [{ addresses: ['a'], topology: { [ZONE]: 'z' } }, { addresses: ['a'], zone: 'z' }],
      [{ addresses: ['a'] }, { addresses: ['a'] }],
    ];
    for (const [b, one] of cases) {
      assert.deepEqual(endpointSliceV1beta1ToV1(beta([b])), v1([one]));
      assert.deepEqual(endpointSliceV1ToV1beta1(v1([one])), beta([b]));
    }
  });

  it('v1 nodeName and zone alone become topology keys; the input is not changed', () => {
    const input = v1([{ addresses: ['a'], nodeName: 'n', zone: 'z' }]);
    const copy = structuredClone(input);
    assert.deepEqual(endpointSliceV1ToV1beta1(input), beta([{ addresses: ['a'], nodeName: 'n', topology: { [ZONE]: 'z', [HOST]: 'n' } }]));
    assert.deepEqual(input, copy);
    assert.deepEqual(endpointSliceV1beta1ToV1(endpointSliceV1ToV1beta1(input)), input);
  });

  it("prints ports and addresses as kube's printer", () => {
    assert.equal(formatDiscoveryPorts([]), '<unset>');
    assert.equal(formatDiscoveryPorts([{ port: 80 }, { name: 'x' }, {}]), '80,x,*');
    assert.equal(formatDiscoveryPorts([{ port: 1 }, { port: 2 }, { port: 3 }, { port: 4 }, { port: 5 }]), '1,2,3 + 2 more...');
    assert.equal(formatDiscoveryEndpoints([{ addresses: ['a', 'b'] }, { addresses: ['c'] }]), 'a,b,c');
    assert.equal(formatDiscoveryEndpoints([{ addresses: ['a', 'b'] }, { addresses: ['c', 'd'] }]), 'a,b,c + 1 more...');
    assert.equal(formatDiscoveryEndpoints(null), '<unset>');
  });
});
