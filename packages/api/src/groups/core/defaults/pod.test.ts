import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../validation/access.js';
import { imageTag } from './image.js';
import { setDefaultsPod, setDefaultsPodTemplate, setDefaultsReplicationController } from './pod.js';

describe('defaults: a pod (SetObjectDefaults_Pod)', () => {
  it('fills in what kube 1.24 fills in', () => {
    const pod: JsonObject = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [{ name: 'i', image: 'busybox', resources: { limits: { cpu: '500m' } } }],
        containers: [
          {
            name: 'c',
            image: 'nginx:1.21',
            ports: [{ containerPort: 80 }],
            env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            resources: { limits: { cpu: '0.5', memory: '1Gi' }, requests: { cpu: '100m' } },
            livenessProbe: { httpGet: { port: 80 } },
            readinessProbe: { grpc: { port: 9000 } },
            lifecycle: { preStop: { httpGet: { port: 80 } } },
          },
        ],
        overhead: { cpu: '0.0001' },
      },
    };
    setDefaultsPod(pod);
    assert.deepEqual(pod['spec'], {
      initContainers: [
        {
          name: 'i',
          image: 'busybox',
          resources: { limits: { cpu: '500m' }, requests: { cpu: '500m' } },
          imagePullPolicy: 'Always',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      containers: [
        {
          name: 'c',
          image: 'nginx:1.21',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
          resources: { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '100m', memory: '1Gi' } },
          livenessProbe: { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          readinessProbe: { grpc: { port: 9000, service: '' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          lifecycle: { preStop: { httpGet: { port: 80, path: '/', scheme: 'HTTP' } } },
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      overhead: { cpu: '1m' },
      enableServiceLinks: true,
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    });
  });
  it('keeps what is set, including false and zero pointers', () => {
    const spec = { containers: [], enableServiceLinks: false, terminationGracePeriodSeconds: 0, dnsPolicy: 'Default', restartPolicy: 'Never', schedulerName: 's', securityContext: { runAsUser: 1 } };
    const pod: JsonObject = { spec: { ...spec } };
    setDefaultsPod(pod);
    assert.deepEqual(pod['spec'], spec);
  });
  it('hostNetwork copies containerPort into an unset hostPort, before the port defaults', () => {
    const pod: JsonObject = { spec: { hostNetwork: true, containers: [{ name: 'c', image: 'x:1', ports: [{ containerPort: 53, protocol: 'UDP' }, { containerPort: 80, hostPort: 8080 }] }] } };
    setDefaultsPod(pod);
    const ports = ((pod['spec'] as JsonObject)['containers'] as JsonObject[])[0]!['ports'];
    assert.deepEqual(ports, [
      { containerPort: 53, protocol: 'UDP', hostPort: 53 },
      { containerPort: 80, hostPort: 8080, protocol: 'TCP' },
    ]);
  });
});

describe('defaults: volumes (SetDefaults_Volume and the sources)', () => {
  const vols = (volumes: JsonObject[]): JsonObject[] => {
    const pod: JsonObject = { spec: { containers: [], volumes } };
    setDefaultsPod(pod);
    return (pod['spec'] as JsonObject)['volumes'] as JsonObject[];
  };
  it('sets every source default kube sets', () =>
    assert.deepEqual(
      vols([
        { name: 'none' },
        { name: 'hp', hostPath: { path: '/x' } },
        { name: 's', secret: { secretName: 's' } },
        { name: 'c', configMap: { name: 'c', defaultMode: 0o600 } },
        { name: 'd', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
        { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }, { downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels' } }] } }] } },
        { name: 'i', iscsi: { targetPortal: 't', iqn: 'q', lun: 0 } },
        { name: 'r', rbd: { monitors: ['m'], image: 'i' } },
        { name: 'a', azureDisk: { diskName: 'd', diskURI: 'u' } },
        { name: 'sio', scaleIO: { gateway: 'g', system: 's', secretRef: { name: 'x' } } },
        { name: 'e', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '1.5Gi' } } } } } },
      ]),
      [
        { name: 'none', emptyDir: {} },
        { name: 'hp', hostPath: { path: '/x', type: '' } },
        { name: 's', secret: { secretName: 's', defaultMode: 420 } },
        { name: 'c', configMap: { name: 'c', defaultMode: 0o600 } },
        { name: 'd', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } }], defaultMode: 420 } },
        {
          name: 'p',
          projected: {
            sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }, { downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels', apiVersion: 'v1' } }] } }],
            defaultMode: 420,
          },
        },
        { name: 'i', iscsi: { targetPortal: 't', iqn: 'q', lun: 0, iscsiInterface: 'default' } },
        { name: 'r', rbd: { monitors: ['m'], image: 'i', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' } },
        { name: 'a', azureDisk: { diskName: 'd', diskURI: 'u', cachingMode: 'ReadWrite', kind: 'Shared', fsType: 'ext4', readOnly: false } },
        { name: 'sio', scaleIO: { gateway: 'g', system: 's', secretRef: { name: 'x' }, storageMode: 'ThinProvisioned', fsType: 'xfs' } },
        { name: 'e', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '1536Mi' } }, volumeMode: 'Filesystem' } } } },
      ],
    ));
});

describe('defaults: pod templates and replication controllers', () => {
  it('a template gets the spec tree but not the pod-only defaults', () => {
    const pt: JsonObject = { template: { spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: '1' } } }] } } };
    setDefaultsPodTemplate(pt);
    const spec = (pt['template'] as JsonObject)['spec'] as JsonObject;
    assert.equal(spec['enableServiceLinks'], undefined);
    assert.deepEqual((spec['containers'] as JsonObject[])[0]!['resources'], { limits: { cpu: '1' } });
    assert.equal(spec['restartPolicy'], 'Always');
  });
  it('an RC keeps its selector, labels and replicas when set', () => {
    const obj: JsonObject = { metadata: { labels: { own: 'x' } }, spec: { replicas: 0, selector: { a: 'b' }, template: { metadata: { labels: { a: 'b', c: 'd' } }, spec: { containers: [] } } } };
    setDefaultsReplicationController(obj);
    assert.deepEqual((obj['metadata'] as JsonObject)['labels'], { own: 'x' });
    assert.deepEqual((obj['spec'] as JsonObject)['selector'], { a: 'b' });
    assert.equal((obj['spec'] as JsonObject)['replicas'], 0);
  });
  it('an RC without a template gets one replica and nothing else', () => {
    const obj: JsonObject = { metadata: {}, spec: {} };
    setDefaultsReplicationController(obj);
    assert.deepEqual(obj, { metadata: {}, spec: { replicas: 1 } });
  });
});

describe('defaults: the image tag that picks the pull policy (parsers.ParseImageName)', () => {
  const table: Array<[string, string | undefined]> = [
    ['nginx', 'latest'],
    ['nginx:latest', 'latest'],
    ['nginx:1.21', '1.21'],
    ['docker.io/library/nginx:1.21', '1.21'],
    ['localhost:5000/team/app', 'latest'],
    ['registry.example.com:443/a/b:v1', 'v1'],
    [`app@sha256:${'a'.repeat(64)}`, ''],
    [`app:v1@sha256:${'a'.repeat(64)}`, 'v1'],
    ['Nginx', undefined],
    ['nginx:', undefined],
    ['', undefined],
    ['a'.repeat(64), undefined],
    [`app@sha256:${'a'.repeat(63)}`, undefined],
  ];
  for (const [image, tag] of table) it(JSON.stringify(image), () => assert.equal(imageTag(image), tag));
  it('pull policy: Always for latest or no tag, IfNotPresent otherwise (also for a digest or an unparsable name)', () => {
    const policy = (image: string): unknown => {
      const pod: JsonObject = { spec: { containers: [{ name: 'c', image }] } };
      setDefaultsPod(pod);
      return ((pod['spec'] as JsonObject)['containers'] as JsonObject[])[0]!['imagePullPolicy'];
    };
    assert.equal(policy('nginx'), 'Always');
    assert.equal(policy('nginx:latest'), 'Always');
    assert.equal(policy('nginx:1'), 'IfNotPresent');
    assert.equal(policy(`nginx@sha256:${'b'.repeat(64)}`), 'IfNotPresent');
    assert.equal(policy('UPPER'), 'IfNotPresent');
  });
});
