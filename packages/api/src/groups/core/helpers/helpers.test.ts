import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../validation/access.js';
import { dropDisabledPodFields, dropDisabledTemplateFields } from './drop-disabled.js';
import { podGracePeriod } from './pod-deletion.js';
import { normalizePod, normalizePodTemplateSpec } from './pod-conversion.js';
import { computePodQOS } from './qos.js';
import { applySeccompVersionSkew, seccompAnnotationForField, seccompFieldForAnnotation } from './seccomp-skew.js';

const withResources = (...rs: Array<JsonObject | undefined>): JsonObject => ({ spec: { containers: rs.map((resources, i) => ({ name: `c${i}`, ...(resources ? { resources } : {}) })) } });

describe('QoS class (qos.GetPodQOS)', () => {
  const table: Array<[string, JsonObject, string]> = [
    ['no resources', withResources(undefined), 'BestEffort'],
    ['only other resources, or zero', withResources({ limits: { 'ephemeral-storage': '1Gi', cpu: '0' } }), 'BestEffort'],
    ['cpu and memory limits (requests defaulted to them)', withResources({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } }), 'Guaranteed'],
    ['limits only, before defaulting copies them into requests', withResources({ limits: { cpu: '1', memory: '1Gi' } }), 'Burstable'],
    ['requests below limits', withResources({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } }), 'Burstable'],
    ['a limit missing memory', withResources({ limits: { cpu: '1' }, requests: { cpu: '1' } }), 'Burstable'],
    ['one guaranteed container, one best-effort', withResources({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } }, undefined), 'Burstable'],
    ['sums over containers', withResources({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } }, { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '2', memory: '1Gi' } }), 'Guaranteed'],
  ];
  for (const [name, pod, want] of table) it(name, () => assert.equal(computePodQOS(pod), want));
  it('counts init containers', () => {
    const pod = withResources({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } });
    (pod['spec'] as JsonObject)['initContainers'] = [{ name: 'i', resources: { requests: { cpu: '100m' } } }];
    assert.equal(computePodQOS(pod), 'Burstable');
  });
});

describe('graceful deletion of pods (podStrategy.CheckGracefulDelete)', () => {
  const pod = (spec: JsonObject, phase?: string): JsonObject => ({ spec, ...(phase ? { status: { phase } } : {}) });
  it('the pod\'s terminationGracePeriodSeconds when scheduled', () => assert.equal(podGracePeriod(pod({ nodeName: 'n', terminationGracePeriodSeconds: 30 }), {}), 30));
  it('the requested period', () => assert.equal(podGracePeriod(pod({ nodeName: 'n', terminationGracePeriodSeconds: 30 }), { gracePeriodSeconds: 5 }), 5));
  it('0 without a period', () => assert.equal(podGracePeriod(pod({ nodeName: 'n' }), {}), 0));
  it('0 when not scheduled', () => assert.equal(podGracePeriod(pod({ terminationGracePeriodSeconds: 30 }), { gracePeriodSeconds: 10 }), 0));
  it('0 when finished', () => {
    assert.equal(podGracePeriod(pod({ nodeName: 'n', terminationGracePeriodSeconds: 30 }, 'Succeeded'), {}), 0);
    assert.equal(podGracePeriod(pod({ nodeName: 'n', terminationGracePeriodSeconds: 30 }, 'Failed'), {}), 0);
  });
  it('1 for a negative period', () => assert.equal(podGracePeriod(pod({ nodeName: 'n', terminationGracePeriodSeconds: -1 }), {}), 1));
});

describe('seccomp version skew (applySeccompVersionSkew)', () => {
  it('a field gains its annotation, an annotation its field, per pod and container', () => {
    const pod: JsonObject = {
      metadata: { annotations: { 'container.seccomp.security.alpha.kubernetes.io/b': 'localhost/p.json' } },
      spec: {
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'a', securityContext: { seccompProfile: { type: 'Unconfined' } } }, { name: 'b' }],
      },
    };
    applySeccompVersionSkew(pod);
    assert.deepEqual(pod, {
      metadata: {
        annotations: {
          'container.seccomp.security.alpha.kubernetes.io/b': 'localhost/p.json',
          'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default',
          'container.seccomp.security.alpha.kubernetes.io/a': 'unconfined',
        },
      },
      spec: {
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          { name: 'a', securityContext: { seccompProfile: { type: 'Unconfined' } } },
          { name: 'b', securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' } } },
        ],
      },
    });
  });
  it('leaves both alone when both are set, and unknown values alone', () => {
    const pod: JsonObject = { metadata: { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'bogus' } }, spec: { containers: [] } };
    applySeccompVersionSkew(pod);
    assert.deepEqual(pod, { metadata: { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'bogus' } }, spec: { containers: [] } });
  });
  it('maps both ways', () => {
    assert.equal(seccompAnnotationForField({ type: 'Localhost' }), '');
    assert.deepEqual(seccompFieldForAnnotation('docker/default'), { type: 'RuntimeDefault' });
    assert.equal(seccompFieldForAnnotation('localhost/'), undefined);
  });
});

describe('disabled 1.24 features (DropDisabledPodFields)', () => {
  const spec = (): JsonObject => ({
    containers: [
      {
        name: 'c',
        livenessProbe: { exec: { command: ['x'] }, terminationGracePeriodSeconds: 5 },
        startupProbe: { exec: { command: ['x'] }, terminationGracePeriodSeconds: 5 },
        securityContext: { procMount: 'Unmasked' },
      },
    ],
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'z', whenUnsatisfiable: 'DoNotSchedule', minDomains: 2 }],
  });
  it('drops probe grace periods and minDomains, forces procMount Default, on create', () => {
    const pod: JsonObject = { spec: spec() };
    dropDisabledPodFields(pod);
    assert.deepEqual(pod['spec'], {
      containers: [{ name: 'c', livenessProbe: { exec: { command: ['x'] } }, startupProbe: { exec: { command: ['x'] } }, securityContext: { procMount: 'Default' } }],
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'z', whenUnsatisfiable: 'DoNotSchedule' }],
    });
  });
  it('keeps them when the old object uses them', () => {
    const pod: JsonObject = { spec: spec() };
    dropDisabledPodFields(pod, { spec: spec() });
    assert.deepEqual(pod['spec'], spec());
  });
  it('works on templates too', () => {
    const template: JsonObject = { spec: spec() };
    dropDisabledTemplateFields(template, undefined);
    assert.equal(((template['spec'] as JsonObject)['topologySpreadConstraints'] as JsonObject[])[0]!['minDomains'], undefined);
  });
});

describe('v1 conversion effects (Convert_v1_Pod_To_core_Pod and back)', () => {
  it('serviceAccount mirrors serviceAccountName; init container annotations go; podIP and podIPs agree', () => {
    const pod: JsonObject = {
      metadata: { annotations: { 'pod.beta.kubernetes.io/init-containers': '[]', keep: 'x' } },
      spec: { serviceAccount: 'old' },
      status: { podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.1' }] },
    };
    normalizePod(pod);
    assert.deepEqual(pod, { metadata: { annotations: { keep: 'x' } }, spec: { serviceAccount: 'old', serviceAccountName: 'old' }, status: { podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.2' }] } });
  });
  it('serviceAccountName wins; podIPs fill podIP', () => {
    const pod: JsonObject = { spec: { serviceAccount: 'a', serviceAccountName: 'b' }, status: { podIPs: [{ ip: 'fd00::1' }, { ip: '10.0.0.1' }] } };
    normalizePod(pod);
    assert.deepEqual(pod, { spec: { serviceAccount: 'b', serviceAccountName: 'b' }, status: { podIPs: [{ ip: 'fd00::1' }, { ip: '10.0.0.1' }], podIP: 'fd00::1' } });
  });
  it('templates', () => {
    const t: JsonObject = { metadata: { annotations: { 'pod.alpha.kubernetes.io/init-container-statuses': 'x' } }, spec: { serviceAccountName: 's' } };
    normalizePodTemplateSpec(t);
    assert.deepEqual(t, { metadata: { annotations: {} }, spec: { serviceAccountName: 's', serviceAccount: 's' } });
  });
});
