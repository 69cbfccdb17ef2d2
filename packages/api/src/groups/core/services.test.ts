import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../field-errors.js';
import type { Endpoints, Service } from './service-types.js';
import { defaultEndpoints, defaultService } from './defaults/service.js';
import { prepareServiceForCreate, prepareServiceForUpdate, prepareServiceStatusForUpdate } from './service-strategy.js';
import { validateEndpoints } from './validation/endpoints.js';
import { validateBinding } from './validation/binding.js';
import { cidrContains, formatCIDR, formatIP, ipFamilyOf, parseCIDR, parseIP, specialIPMessages } from './validation/net.js';

const mk = (spec: Service['spec']): Service => ({ metadata: { name: 'web' }, spec: structuredClone(spec) });

describe('Service and Endpoints defaults (kube 1.24 SetDefaults_Service / SetDefaults_Endpoints)', () => {
  it('defaults a ClusterIP service', () => {
    const s = mk({ ports: [{ port: 80 }, { port: 81, targetPort: '' }, { port: 82, targetPort: 'http', protocol: 'UDP' }] });
    defaultService(s);
    assert.deepEqual(s.spec, {
      ports: [
        { port: 80, protocol: 'TCP', targetPort: 80 },
        { port: 81, protocol: 'TCP', targetPort: 81 },
        { port: 82, protocol: 'UDP', targetPort: 'http' },
      ],
      sessionAffinity: 'None',
      type: 'ClusterIP',
      internalTrafficPolicy: 'Cluster',
    });
  });

  it('defaults traffic policy for NodePort, LB node ports, ClientIP affinity, and not ExternalName', () => {
    const lb = mk({ type: 'LoadBalancer', sessionAffinity: 'ClientIP', sessionAffinityConfig: {} });
    defaultService(lb);
    assert.equal(lb.spec!.externalTrafficPolicy, 'Cluster');
    assert.equal(lb.spec!.allocateLoadBalancerNodePorts, true);
    assert.deepEqual(lb.spec!.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
    const none = mk({ sessionAffinity: 'None', sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } } });
    defaultService(none);
    assert.equal(none.spec!.sessionAffinityConfig, undefined);
    const ext = mk({ type: 'ExternalName', externalName: 'x.example' });
    defaultService(ext);
    assert.equal(ext.spec!.internalTrafficPolicy, undefined);
    assert.equal(ext.spec!.externalTrafficPolicy, undefined);
    const gated = mk({});
    defaultService(gated, { serviceInternalTrafficPolicy: false });
    assert.equal(gated.spec!.internalTrafficPolicy, undefined);
  });

  it('defaults Endpoints ports to TCP', () => {
    const ep: Endpoints = { metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '10.1.0.1' }], ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }] }] };
    defaultEndpoints(ep);
    assert.deepEqual(ep.subsets![0]!.ports, [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }]);
  });
});

describe('Service strategy field rules', () => {
  it('resets status on create and keeps the stored one on update', () => {
    const s = mk({ ports: [{ port: 80 }] });
    s.status = { loadBalancer: { ingress: [{ ip: '1.1.1.1' }] } };
    prepareServiceForCreate(s);
    assert.deepEqual(s.status, { loadBalancer: {} });
    const old: Service = { ...mk({ type: 'LoadBalancer' }), status: { loadBalancer: { ingress: [{ ip: '2.2.2.2' }] } } };
    const next = mk({ type: 'LoadBalancer' });
    next.status = { loadBalancer: { ingress: [{ ip: '6.6.6.6' }] } };
    prepareServiceForUpdate(next, old);
    assert.deepEqual(next.status, { loadBalancer: { ingress: [{ ip: '2.2.2.2' }] } });
    assert.notEqual(next.status, old.status, 'the stored object is not shared');
  });

  it('wipes what a new type does not use when the user left it unchanged', () => {
    const old = mk({ type: 'LoadBalancer', clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ port: 80, nodePort: 30080 }], externalTrafficPolicy: 'Local', healthCheckNodePort: 30500, allocateLoadBalancerNodePorts: true, loadBalancerClass: 'a.io/x' });
    old.status = { loadBalancer: { ingress: [{ ip: '1.1.1.1' }] } };
    const toExternal = structuredClone(old);
    toExternal.spec!.type = 'ExternalName';
    toExternal.spec!.externalName = 'db.example';
    prepareServiceForUpdate(toExternal, old);
    assert.deepEqual(toExternal.spec, { type: 'ExternalName', externalName: 'db.example', ports: [{ port: 80 }] });
    assert.deepEqual(toExternal.status, { loadBalancer: {} });
    const newNodePort = structuredClone(old);
    newNodePort.spec!.type = 'ClusterIP';
    newNodePort.spec!.ports = [{ port: 80, nodePort: 30999 }];
    prepareServiceForUpdate(newNodePort, old);
    assert.deepEqual(newNodePort.spec!.ports, [{ port: 80, nodePort: 30999 }], 'a node port the user added is kept (validation refuses it)');
  });

  it('keeps the spec on a status update', () => {
    const old = mk({ ports: [{ port: 80 }] });
    const next = mk({ ports: [{ port: 81 }] });
    next.status = { loadBalancer: { ingress: [{ ip: '1.1.1.1' }] } };
    prepareServiceStatusForUpdate(next, old);
    assert.deepEqual(next.spec, { ports: [{ port: 80 }] });
  });
});

describe('validateEndpoints (kube 1.24 ValidateEndpoints causes)', () => {
  it('accepts a valid Endpoints and reports kube\'s causes', () => {
    const ok: Endpoints = { metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '10.1.0.1', nodeName: 'node-1', hostname: 'pod-a' }], notReadyAddresses: [{ ip: 'fd00::1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] };
    assert.deepEqual(validateEndpoints(ok), []);
    const bad: Endpoints = {
      metadata: { name: 'web' },
      subsets: [
        { ports: [{ port: 80, protocol: 'TCP' }] },
        { addresses: [{ ip: '127.0.0.1' }, { ip: 'nope', hostname: 'A' }, { ip: 'fe80::1', nodeName: 'Node_1' }], ports: [{ port: 0, protocol: 'ICMP' }, { name: 'b', port: 1, protocol: 'TCP' }] },
      ],
    };
    assert.deepEqual(validateEndpoints(bad).map(fieldErrorString), [
      'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`',
      'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      "subsets[1].addresses[1].hostname: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address',
      "subsets[1].addresses[2].nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'subsets[1].addresses[2].ip: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'subsets[1].ports[0].name: Required value',
      'subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'subsets[1].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    ]);
  });
});

describe('validateBinding (kube ValidatePodBinding)', () => {
  it('needs a target name and a Node kind', () => {
    assert.deepEqual(validateBinding({ metadata: { name: 'p' }, target: { name: 'node-1' } }), []);
    assert.deepEqual(validateBinding({ metadata: { name: 'p' }, target: { kind: 'Pod' } }).map(fieldErrorString), [
      'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
      'target.name: Required value',
    ]);
  });
});

describe('IP and CIDR handling (Go net / k8s.io/utils/net)', () => {
  it('parses as ParseIPSloppy and prints as Go', () => {
    const fmt = (s: string): string | undefined => {
      const ip = parseIP(s);
      return ip && formatIP(ip);
    };
    assert.equal(fmt('010.001.0.9'), '10.1.0.9');
    assert.equal(fmt('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(fmt('2001:DB8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
    assert.equal(fmt('fd00:0:0:0:0:0:0:0'), 'fd00::');
    assert.equal(fmt('1:0:1:1:1:1:1:1'), '1:0:1:1:1:1:1:1');
    assert.equal(fmt('::'), '::');
    assert.equal(fmt('::1.2.3.4'), '::102:304');
    for (const bad of ['1.2.3', '1.2.3.256', '1::2::3', 'fe80::1%eth0', '', '1.2.3.4 ', ':::', '1:2:3:4:5:6:7:8:9']) assert.equal(parseIP(bad), undefined, bad);
    assert.equal(ipFamilyOf('::ffff:10.0.0.1'), 'IPv4');
    assert.equal(ipFamilyOf('fd00::1'), 'IPv6');
  });

  it('parses CIDRs to their network and tests membership', () => {
    const net = parseCIDR('10.0.0.77/24');
    assert.ok(!(net instanceof Error));
    assert.equal(formatCIDR(net), '10.0.0.0/24');
    assert.ok(cidrContains(net, parseIP('10.0.0.255')!));
    assert.ok(!cidrContains(net, parseIP('10.0.1.0')!));
    const v6 = parseCIDR('FD00::1:0/108');
    assert.ok(!(v6 instanceof Error));
    assert.equal(formatCIDR(v6), 'fd00::/108');
    assert.equal(String(parseCIDR('10.0.0.0/33')), 'Error: invalid CIDR address: 10.0.0.0/33');
    assert.equal(String(parseCIDR('10.0.0.0')), 'Error: invalid CIDR address: 10.0.0.0');
  });

  it('names the special ranges kube refuses', () => {
    assert.deepEqual(specialIPMessages('::'), ['may not be unspecified (::)']);
    assert.deepEqual(specialIPMessages('::1'), ['may not be in the loopback range (127.0.0.0/8, ::1/128)']);
    assert.deepEqual(specialIPMessages('224.0.0.251'), ['may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)']);
    assert.deepEqual(specialIPMessages('ff02::1'), ['may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)']);
    assert.deepEqual(specialIPMessages('10.0.0.1'), []);
  });
});
