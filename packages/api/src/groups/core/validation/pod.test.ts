import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setDefaultsPod } from '../defaults/pod.js';
import type { JsonObject } from './access.js';
import { validatePod, validatePodIPs } from './pod.js';
import { type Cause, DNS_LABEL_MSG, DNS_SUBDOMAIN_MSG, QUALIFIED_NAME_MSG, causes, containerFixture, createOptions, firstContainer, podFixture, specOf } from './test-fixtures.js';

/** A realistic pod body as a client sends it (two containers, probes, env, volumes). */
function realisticPod(): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web' }, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-10' } },
    spec: {
      serviceAccountName: 'web',
      initContainers: [{ name: 'init', image: 'busybox', command: ['sh', '-c', 'true'] }],
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/team/app@sha256:' + 'a'.repeat(64),
          ports: [{ name: 'http', containerPort: 8080 }, { containerPort: 9090, protocol: 'UDP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
            { name: 'LABEL', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
            { name: 'CM', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k.1' } } },
            { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
            { name: 'PLAIN', value: 'x' },
          ],
          envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cfg' } }, { secretRef: { name: 'sec' } }],
          livenessProbe: { httpGet: { port: 'http', httpHeaders: [{ name: 'X-Probe', value: '1' }] }, initialDelaySeconds: 5 },
          readinessProbe: { tcpSocket: { port: 8080 } },
          startupProbe: { grpc: { port: 9090 } },
          lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } },
          volumeMounts: [
            { name: 'data', mountPath: '/data', subPath: 'app' },
            { name: 'cfg', mountPath: '/etc/app', readOnly: true },
            { name: 'token', mountPath: '/var/run/token' },
          ],
          securityContext: { runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
        },
        { name: 'sidecar', image: 'envoyproxy/envoy:v1.22.0', imagePullPolicy: 'Always', ports: [{ containerPort: 15000, hostPort: 15000 }] },
      ],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'a', path: 'a.conf', mode: 0o400 }] } },
        {
          name: 'token',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
              { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
              { secret: { name: 'sec', items: [{ key: 'ca', path: 'ca.crt' }] } },
            ],
          },
        },
        { name: 'scratch' },
      ],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }, { operator: 'Exists' }],
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }] } },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' } }],
        },
      },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
      dnsConfig: { nameservers: ['10.0.0.10'], searches: ['svc.cluster.local.'], options: [{ name: 'ndots', value: '2' }] },
      hostAliases: [{ ip: '127.0.0.1', hostnames: ['foo.local'] }],
      readinessGates: [{ conditionType: 'example.com/ready' }],
      securityContext: { fsGroup: 2000, sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }] },
      priorityClassName: 'high',
      runtimeClassName: 'gvisor',
      preemptionPolicy: 'PreemptLowerPriority',
      os: { name: 'linux' },
      hostname: 'web-0',
      subdomain: 'web',
      nodeSelector: { 'kubernetes.io/arch': 'amd64' },
      imagePullSecrets: [{ name: 'regcred' }],
    },
  };
}

describe('pods: a realistic pod, defaulted, is valid', () => {
  it('has no causes', () => {
    const pod = realisticPod();
    setDefaultsPod(pod);
    assert.deepEqual(causes(validatePod(pod, createOptions())), []);
  });
  it('the minimal fixture has no causes', () => {
    assert.deepEqual(causes(validatePod(podFixture(), createOptions())), []);
  });
});

interface Case {
  name: string;
  spec?: JsonObject;
  mutate?: (pod: JsonObject) => void;
  opts?: Parameters<typeof createOptions>[0];
  want: Cause[];
}

function run(table: Case[]): void {
  for (const c of table) {
    it(c.name, () => {
      const pod = podFixture(c.spec ?? {});
      c.mutate?.(pod);
      assert.deepEqual(causes(validatePod(pod, createOptions(c.opts))), c.want);
    });
  }
}

describe('pods: spec rules (ValidatePodSpec)', () => {
  run([
    { name: 'no containers', spec: { containers: [] }, want: [['FieldValueRequired', 'spec.containers', 'Required value']] },
    { name: 'restartPolicy empty', spec: { restartPolicy: '' }, want: [['FieldValueRequired', 'spec.restartPolicy', 'Required value']] },
    {
      name: 'restartPolicy unknown',
      spec: { restartPolicy: 'Sometimes' },
      want: [['FieldValueNotSupported', 'spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']],
    },
    {
      name: 'dnsPolicy unknown',
      spec: { dnsPolicy: 'Cluster' },
      want: [['FieldValueNotSupported', 'spec.dnsPolicy', 'Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"']],
    },
    {
      name: 'nodeSelector key invalid',
      spec: { nodeSelector: { 'a b': 'x' } },
      want: [['FieldValueInvalid', 'spec.nodeSelector', `Invalid value: "a b": ${QUALIFIED_NAME_MSG}`]],
    },
    {
      name: 'serviceAccountName invalid (also via the deprecated serviceAccount)',
      spec: { serviceAccount: 'Bad_Name' },
      want: [['FieldValueInvalid', 'spec.serviceAccountName', `Invalid value: "Bad_Name": ${DNS_SUBDOMAIN_MSG}`]],
    },
    { name: 'nodeName invalid', spec: { nodeName: 'Node1' }, want: [['FieldValueInvalid', 'spec.nodeName', `Invalid value: "Node1": ${DNS_SUBDOMAIN_MSG}`]] },
    {
      name: 'activeDeadlineSeconds 0',
      spec: { activeDeadlineSeconds: 0 },
      want: [['FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: 0: must be between 1 and 2147483647, inclusive']],
    },
    {
      name: 'activeDeadlineSeconds above int32',
      spec: { activeDeadlineSeconds: 2147483648 },
      want: [['FieldValueInvalid', 'spec.activeDeadlineSeconds', 'Invalid value: 2147483648: must be between 1 and 2147483647, inclusive']],
    },
    { name: 'activeDeadlineSeconds 1', spec: { activeDeadlineSeconds: 1 }, want: [] },
    { name: 'hostname not a DNS label', spec: { hostname: 'a.b' }, want: [['FieldValueInvalid', 'spec.hostname', `Invalid value: "a.b": ${DNS_LABEL_MSG}`]] },
    { name: 'subdomain not a DNS label', spec: { subdomain: 'A' }, want: [['FieldValueInvalid', 'spec.subdomain', `Invalid value: "A": ${DNS_LABEL_MSG}`]] },
    {
      name: 'priorityClassName invalid',
      spec: { priorityClassName: 'High' },
      want: [['FieldValueInvalid', 'spec.priorityClassName', `Invalid value: "High": ${DNS_SUBDOMAIN_MSG}`]],
    },
    {
      name: 'runtimeClassName set but empty',
      spec: { runtimeClassName: '' },
      want: [['FieldValueInvalid', 'spec.runtimeClassName', `Invalid value: "": ${DNS_SUBDOMAIN_MSG}`]],
    },
    { name: 'preemptionPolicy empty', spec: { preemptionPolicy: '' }, want: [['FieldValueRequired', 'spec.preemptionPolicy', 'Required value']] },
    {
      name: 'preemptionPolicy unknown',
      spec: { preemptionPolicy: 'Always' },
      want: [['FieldValueNotSupported', 'spec.preemptionPolicy', 'Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"']],
    },
    { name: 'preemptionPolicy Never', spec: { preemptionPolicy: 'Never' }, want: [] },
    {
      name: 'readinessGates conditionType not a qualified name',
      spec: { readinessGates: [{ conditionType: 'a/b/c' }] },
      want: [
        [
          'FieldValueInvalid',
          'spec.readinessGates[0].conditionType',
          "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ],
      ],
    },
    {
      name: 'imagePullSecrets with more than a name',
      spec: { imagePullSecrets: [{ name: 'a', namespace: 'b' }] },
      want: [['FieldValueInvalid', 'spec.imagePullSecrets[0]', 'Invalid value: {"name":"a","namespace":"b"}: only name may be set']],
    },
    { name: 'os without name', spec: { os: {} }, want: [['FieldValueRequired', 'spec.os.name', 'Required value: cannot be empty']] },
    {
      name: 'os unknown',
      spec: { os: { name: 'plan9' } },
      want: [['FieldValueNotSupported', 'spec.os', 'Unsupported value: "plan9": supported values: "linux", "windows"']],
    },
    {
      name: 'os set while IdentifyPodOS is off',
      spec: { os: { name: 'linux' } },
      opts: { allowOSField: false },
      want: [['FieldValueForbidden', 'spec.os', 'Forbidden: cannot be set when IdentifyPodOS feature is not enabled']],
    },
  ]);
});

describe('pods: rules for pods only (validatePodMetadataAndSpec, ValidatePodCreate)', () => {
  run([
    {
      name: 'ephemeral containers on create',
      spec: { ephemeralContainers: [{ ...containerFixture('debug') }] },
      want: [['FieldValueForbidden', 'spec.ephemeralContainers', 'Forbidden: cannot be set on create']],
    },
    {
      name: 'a projected service account token without a service account',
      spec: { volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] } }] },
      want: [['FieldValueForbidden', 'spec.volumes[0].projected.sources[0].serviceAccountToken', 'Forbidden: must not be specified when serviceAccountName is not set']],
    },
    {
      name: 'image with surrounding whitespace (pods only, not templates)',
      mutate: (pod) => (firstContainer(pod)['image'] = ' nginx '),
      want: [['FieldValueInvalid', 'spec.containers[0].image', 'Invalid value: " nginx ": must not have leading or trailing whitespace']],
    },
    {
      name: 'seccomp pod annotation and field disagree',
      spec: { securityContext: { seccompProfile: { type: 'Unconfined' } } },
      mutate: (pod) => ((pod['metadata'] as JsonObject)['annotations'] = { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' }),
      want: [['FieldValueForbidden', 'spec.securityContext.seccompProfile.type', 'Forbidden: seccomp type in annotation and field must match']],
    },
    {
      name: 'seccomp container localhost profiles differ',
      mutate: (pod) => {
        firstContainer(pod)['securityContext'] = { seccompProfile: { type: 'Localhost', localhostProfile: 'a.json' } };
        (pod['metadata'] as JsonObject)['annotations'] = { 'container.seccomp.security.alpha.kubernetes.io/c': 'localhost/b.json' };
      },
      want: [['FieldValueForbidden', 'spec.containers[0].securityContext.seccompProfile.localhostProfile', 'Forbidden: seccomp profile in annotation and field must match']],
    },
    {
      name: 'seccomp docker/default annotation matches RuntimeDefault',
      spec: { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } },
      mutate: (pod) => ((pod['metadata'] as JsonObject)['annotations'] = { 'seccomp.security.alpha.kubernetes.io/pod': 'docker/default' }),
      want: [],
    },
  ]);
});

describe('pods: status.podIPs (validatePodIPs)', () => {
  const ips = (status: JsonObject): Cause[] => causes(validatePodIPs({ status }));
  it('accepts one IP per family', () => assert.deepEqual(ips({ podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] }), []));
  it('rejects an invalid IP', () =>
    assert.deepEqual(ips({ podIPs: [{ ip: '10.0.0.300' }] }), [['FieldValueInvalid', 'status.podIPs[0]', 'Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']]));
  it('rejects two IPs of one family, and repeats', () =>
    assert.deepEqual(ips({ podIPs: [{ ip: '10.0.0.1' }, { ip: '10.0.0.1' }] }), [
      ['FieldValueInvalid', 'status.podIPs', 'Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"10.0.0.1"}}: may specify no more than one IP for each IP family'],
      ['FieldValueDuplicate', 'status.podIPs[1]', 'Duplicate value: core.PodIP{IP:"10.0.0.1"}'],
    ]));
  it('takes podIP as authoritative when it disagrees with podIPs[0]', () => assert.deepEqual(ips({ podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.1' }, { ip: '10.0.0.3' }] }), []));
});
