import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type FieldError, fieldErrorString } from '../../../field-errors.js';
import { invalid } from '../../../errors.js';
import type { Service, ServiceSpec } from '../service-types.js';
import { defaultService } from '../defaults/service.js';
import { nameIsDNS1035Label, validateService, validateServiceCreate, validateServiceStatusUpdate, validateServiceUpdate } from './service.js';

/** A Service as the REST layer leaves it: defaulted, clusterIPs following clusterIP. */
function svc(spec: ServiceSpec, annotations?: Record<string, string>): Service {
  const s: Service = { metadata: { name: 'web', namespace: 'default', ...(annotations ? { annotations } : {}) }, spec: structuredClone(spec) };
  defaultService(s);
  if (s.spec!.clusterIP && !s.spec!.clusterIPs) s.spec!.clusterIPs = [s.spec!.clusterIP];
  return s;
}

const texts = (errs: FieldError[]): string[] => errs.map(fieldErrorString);
const port80 = [{ port: 80 }];

describe('validateService (kube 1.24 ValidateService causes)', () => {
  it('accepts a defaulted ClusterIP, NodePort, LoadBalancer, headless and ExternalName service', () => {
    assert.deepEqual(texts(validateServiceCreate(svc({ ports: port80, selector: { app: 'web' } }))), []);
    assert.deepEqual(texts(validateServiceCreate(svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }))), []);
    assert.deepEqual(texts(validateServiceCreate(svc({ type: 'LoadBalancer', ports: port80, loadBalancerSourceRanges: ['10.0.0.0/8'] }))), []);
    assert.deepEqual(texts(validateServiceCreate(svc({ clusterIP: 'None' }))), []);
    assert.deepEqual(texts(validateServiceCreate(svc({ type: 'ExternalName', externalName: 'example.com.' }))), []);
  });

  it('requires ports, port names when several, and checks numbers, protocols and target ports', () => {
    assert.deepEqual(texts(validateService(svc({}))), ['spec.ports: Required value']);
    assert.deepEqual(texts(validateService(svc({ ports: [{ port: 80 }, { port: 0, protocol: 'HTTP', targetPort: 'Bad_Name' }] }))), [
      'spec.ports[0].name: Required value',
      'spec.ports[1].name: Required value',
      'spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'spec.ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      'spec.ports[1].targetPort: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ]);
    assert.deepEqual(texts(validateService(svc({ ports: [{ name: 'a', port: 80 }, { name: 'a', port: 80, appProtocol: 'a/b/c' }] }))), [
      'spec.ports[1].name: Duplicate value: "a"',
      "spec.ports[1].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    ]);
  });

  it('checks node ports by type and duplicates per protocol', () => {
    assert.deepEqual(texts(validateService(svc({ ports: [{ port: 80, nodePort: 30000 }] }))), ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]);
    const dup = svc({ type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 30000 }, { name: 'b', port: 81, nodePort: 30000 }, { name: 'c', port: 82, protocol: 'UDP', nodePort: 30000 }] });
    assert.deepEqual(texts(validateService(dup)), ['spec.ports[1].nodePort: Duplicate value: 30000']);
  });

  it('checks clusterIP, clusterIPs and ipFamilies together', () => {
    const v = (spec: ServiceSpec): string[] => texts(validateService(svc({ ports: port80, ...spec })));
    assert.deepEqual(v({ clusterIP: 'bogus' }), ['spec.clusterIPs[0]: Invalid value: "bogus": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
    assert.deepEqual(v({ clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.2'] }), ['spec.clusterIPs: Invalid value: []string{"10.0.0.2"}: first value must match `clusterIP`']);
    assert.deepEqual(v({ clusterIPs: ['10.0.0.2'] }), ['spec.clusterIPs: Invalid value: []string{"10.0.0.2"}: must be empty when `clusterIP` is not specified']);
    assert.deepEqual(v({ clusterIP: 'None', clusterIPs: ['None', '10.0.0.1'] }), ['spec.clusterIPs: Invalid value: []string{"None", "10.0.0.1"}: \'None\' must be the first and only value']);
    assert.deepEqual(v({ clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1', '10.0.0.2'] }), ['spec.clusterIPs: Invalid value: []string{"10.0.0.1", "10.0.0.2"}: may specify no more than one IP for each IP family']);
    assert.deepEqual(v({ clusterIP: 'fd00::1', ipFamilies: ['IPv4'] }), ['spec.clusterIPs[0]: Invalid value: "fd00::1": expected an IPv4 value as indicated by `ipFamilies[0]`']);
    assert.deepEqual(v({ ipFamilies: ['IPv4', 'IPv4', 'IPv5'], ipFamilyPolicy: 'Both' }), [
      'spec.ipFamilies[1]: Duplicate value: "IPv4"',
      'spec.ipFamilies[2]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"',
      'spec.ipFamilyPolicy: Unsupported value: "Both": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
    ]);
    assert.deepEqual(v({ clusterIP: '010.000.000.001', ipFamilies: ['IPv4'] }), [], 'leading zeros are read as decimal (ParseIPSloppy)');
  });

  it('refuses special external IPs and session affinity mistakes', () => {
    assert.deepEqual(texts(validateService(svc({ ports: port80, externalIPs: ['127.0.0.1', '169.254.1.1', '0.0.0.0', 'x'] }))), [
      'spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'spec.externalIPs[1]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'spec.externalIPs[2]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
      'spec.externalIPs[3]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ]);
    assert.deepEqual(texts(validateService(svc({ ports: port80, sessionAffinity: 'Sticky' }))), ['spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"']);
    assert.deepEqual(texts(validateService(svc({ ports: port80, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 86401 } } }))), [
      'spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400',
    ]);
  });

  it('applies the type-specific rules', () => {
    assert.deepEqual(texts(validateService(svc({ type: 'LoadBalancer', clusterIP: 'None', ports: [{ port: 10250 }] }))), [
      'spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet',
      "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for LoadBalancer services",
    ]);
    assert.deepEqual(texts(validateService(svc({ type: 'NodePort', clusterIP: 'None', ports: port80 }))), ["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"]);
    const ext = svc({ type: 'ExternalName', clusterIP: '10.0.0.1', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    assert.deepEqual(texts(validateService(ext)), [
      'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
      'spec.ipFamilies: Forbidden: may not be set for ExternalName services',
      'spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services',
      'spec.externalName: Required value',
    ]);
    assert.match(texts(validateService(svc({ type: 'ExternalName', externalName: 'Not_DNS' })))[0]!, /^spec\.externalName: Invalid value: "Not_DNS": a lowercase RFC 1123 subdomain/);
    assert.deepEqual(texts(validateService(svc({ type: 'Magic', ports: port80 }))), ['spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"']);
  });

  it('checks the LoadBalancer-only fields and the traffic policies', () => {
    const ranges = svc({ ports: port80, loadBalancerSourceRanges: ['10.0.0.0/33'] });
    assert.deepEqual(texts(validateService(ranges)), [
      "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
      'spec.LoadBalancerSourceRanges: Invalid value: "[10.0.0.0/33]": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 ',
    ]);
    const annotated = svc({ type: 'LoadBalancer', ports: port80 }, { 'service.beta.kubernetes.io/load-balancer-source-ranges': '1.2.3.4/32, nope' });
    assert.deepEqual(texts(validateService(annotated)), [
      'metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "1.2.3.4/32, nope": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 ',
    ]);
    const cluster = svc({ ports: port80, allocateLoadBalancerNodePorts: false, loadBalancerClass: 'x/y', externalTrafficPolicy: 'Local', healthCheckNodePort: 30001 });
    assert.deepEqual(texts(validateService(cluster)), [
      "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'",
      "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'",
      "spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set when `type` is 'NodePort' or 'LoadBalancer'",
      "spec.healthCheckNodePort: Invalid value: 30001: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
    ]);
    const local = svc({ type: 'LoadBalancer', ports: port80, externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Nowhere' });
    assert.deepEqual(texts(validateService(local)), ['spec.healthCheckNodePort: Required value', 'spec.internalTrafficPolicy: Unsupported value: "Nowhere": supported values: "Cluster", "Local"']);
    const undefaulted: Service = { metadata: { name: 'web' }, spec: { type: 'LoadBalancer', sessionAffinity: 'None', ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] } };
    assert.deepEqual(texts(validateService(undefaulted)), ['allocateLoadBalancerNodePorts: Required value', 'spec.externalTrafficPolicy: Required value', 'spec.internalTrafficPolicy: Required value']);
  });

  it('names Services as DNS-1035 labels', () => {
    assert.deepEqual(nameIsDNS1035Label('web-1', false), []);
    assert.deepEqual(nameIsDNS1035Label('1web', false), [
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
    assert.deepEqual(nameIsDNS1035Label('web-', true), []);
  });

  it('aggregates into kube\'s 422 message', () => {
    const err = invalid({ group: '', kind: 'Service' }, 'web', validateService(svc({ ports: [{ port: 80, nodePort: 30000 }] })));
    assert.equal(err.message, "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'");
  });
});

describe('validateServiceUpdate (kube 1.24 ValidateServiceUpdate causes)', () => {
  const old = svc({ type: 'LoadBalancer', clusterIP: '10.0.0.5', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ port: 80, nodePort: 30080 }], externalTrafficPolicy: 'Local', healthCheckNodePort: 30500, loadBalancerClass: 'a.io/x' });

  it('keeps clusterIP, loadBalancerClass and a needed healthCheckNodePort', () => {
    const next = structuredClone(old);
    next.spec!.clusterIP = '10.0.0.6';
    next.spec!.clusterIPs = ['10.0.0.6'];
    next.spec!.loadBalancerClass = 'a.io/y';
    next.spec!.healthCheckNodePort = 30501;
    assert.deepEqual(texts(validateServiceUpdate(next, old)), [
      'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.6"}: may not change once set',
      'spec.loadBalancerClass: Invalid value: "a.io/y": may not change once set',
      'spec.healthCheckNodePort: Forbidden: field is immutable',
    ]);
  });

  it('refuses dropping the primary IP or the secondary without SingleStack, and allows ExternalName', () => {
    const dual = svc({ clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack', ports: port80 });
    const down = structuredClone(dual);
    down.spec!.clusterIPs = ['10.0.0.5'];
    down.spec!.ipFamilies = ['IPv4'];
    assert.deepEqual(texts(validateServiceUpdate(down, dual)), [
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be set to \'SingleStack\' when releasing the secondary clusterIP',
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be set to \'SingleStack\' when releasing the secondary ipFamily',
    ]);
    const toExternal = svc({ type: 'ExternalName', externalName: 'db.example.com' });
    assert.deepEqual(texts(validateServiceUpdate(toExternal, dual)), []);
  });

  it('reports a bad loadBalancerClass twice in the causes and once in the message, as kube', () => {
    const next = structuredClone(old);
    next.spec!.loadBalancerClass = 'a/b/c';
    const errs = validateServiceUpdate(next, old).filter((e) => e.field === 'spec.loadBalancerClass');
    assert.deepEqual(errs.map((e) => e.detail.slice(0, 22)), ['may not change once se', 'a qualified name must ', 'a qualified name must ']);
    const err = invalid({ group: '', kind: 'Service' }, 'web', errs);
    assert.equal(err.details!.causes!.length, 3);
    assert.equal((err.message.match(/a qualified name/g) ?? []).length, 1);
  });

  it('validates the load-balancer status of a status update', () => {
    const s = svc({ type: 'LoadBalancer', ports: port80 });
    s.status = { loadBalancer: { ingress: [{ ip: '1.2.3.x' }, { hostname: '10.1.2.3' }] } };
    assert.deepEqual(texts(validateServiceStatusUpdate(s)), [
      'status.loadBalancer.ingress[0].ip: Invalid value: "1.2.3.x": must be a valid IP address',
      'status.loadBalancer.ingress[1].hostname: Invalid value: "10.1.2.3": must be a DNS name, not an IP address',
    ]);
  });
});
