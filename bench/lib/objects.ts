/**
 * ServiceAccounts of about 500 bytes of JSON: the request body a client sends, and the stored form
 * (with uid and creationTimestamp) used for raw etcd writes and bulk loads. Secrets of a chosen
 * size and Namespaces in stored form, for collections written straight into etcd.
 */
import { randomBytes, randomUUID } from 'node:crypto';

export interface ServiceAccount {
  apiVersion: 'v1';
  kind: 'ServiceAccount';
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    creationTimestamp?: string;
    resourceVersion?: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
}

/** A ServiceAccount whose JSON is about 500 bytes (names up to ~12 characters). */
export function serviceAccount(namespace: string, name: string, serial = 0): ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name,
      namespace,
      labels: {
        'app.kubernetes.io/part-of': 'plinth-bench',
        'app.kubernetes.io/component': 'load-generator',
        'bench.plinth.io/tier': `tier-${serial % 7}`,
        'bench.plinth.io/shard': `shard-${serial % 16}`,
      },
      annotations: {
        'bench.plinth.io/description': 'A benchmark object sized like a typical small resource.',
        'bench.plinth.io/owner': 'team-platform@example.com',
        'bench.plinth.io/serial': String(serial).padStart(8, '0'),
      },
    },
  };
}

/** The stored form: what the server itself would keep (uid, creationTimestamp; no resourceVersion). */
export function storedServiceAccount(namespace: string, name: string, serial = 0): ServiceAccount {
  const sa = serviceAccount(namespace, name, serial);
  sa.metadata.uid = randomUUID();
  sa.metadata.creationTimestamp = nowTimestamp();
  return sa;
}

export function toBytes(obj: unknown): Buffer {
  return Buffer.from(JSON.stringify(obj));
}

export interface Secret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; uid: string; creationTimestamp: string };
  type: 'Opaque';
  data: Record<string, string>;
}

/**
 * A Secret as the server stores it, with `dataBytes` of base64 under one key (random bytes, so
 * nothing along the way can make it smaller than it looks).
 */
export function storedSecret(namespace: string, name: string, dataBytes: number): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, uid: randomUUID(), creationTimestamp: nowTimestamp() },
    type: 'Opaque',
    data: { payload: randomBytes(Math.floor((dataBytes * 3) / 4)).toString('base64') },
  };
}

/** An active Namespace as the server stores it, for objects written straight into etcd. */
export function storedNamespace(name: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, uid: randomUUID(), creationTimestamp: nowTimestamp(), labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * A Pod as a real workload writes it (two containers with probes, env, resources and mounts, three
 * volumes, affinity and tolerations): about 3.5 KB of JSON in its stored form, the issue's
 * "realistic size". Quantities are in canonical form and every default the server would add is
 * already there, so the stored form (written straight into etcd) is what plinth would keep.
 */
export function pod(namespace: string, name: string, serial = 0): Record<string, unknown> & { metadata: Record<string, unknown> } {
  const app = `app-${serial % 13}`;
  const container = (cname: string, image: string, port: number): Record<string, unknown> => ({
    name: cname,
    image,
    args: ['--port', String(port), '--log-level=info', `--shard=${serial % 16}`],
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'LOG_FORMAT', value: 'json' },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: `${app}-db`, key: 'url' } } },
    ],
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app', readOnly: true },
      { name: 'cache', mountPath: '/var/cache/app' },
      { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
    livenessProbe: { httpGet: { path: '/healthz', port, scheme: 'HTTP' }, initialDelaySeconds: 10, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/ready', port, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app, 'app.kubernetes.io/part-of': 'plinth-bench', 'pod-template-hash': `7d9f8c${serial % 1000}` },
      annotations: { 'bench.plinth.io/serial': String(serial).padStart(8, '0'), 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
    },
    spec: {
      containers: [container('app', `registry.example.com/team/${app}:1.4.${serial % 10}`, 8080), container('sidecar', 'registry.example.com/platform/proxy:2.1.0', 9090)],
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      securityContext: { fsGroup: 2000 },
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app } } } },
          ],
        },
      },
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
  };
}

/** The stored form of `pod`: uid, creationTimestamp and the status a new pod has. */
export function storedPod(namespace: string, name: string, serial = 0): Record<string, unknown> {
  const p = pod(namespace, name, serial);
  p.metadata['uid'] = randomUUID();
  p.metadata['creationTimestamp'] = nowTimestamp();
  p['status'] = { phase: 'Pending', qosClass: 'Burstable' };
  return p;
}

/** What a scenario needs of the kind it measures. */
export interface ObjectProfile {
  /** Prefix of the rows' names ('' for the ServiceAccount rows the bench has always had). */
  label: string;
  /** The resource's plural (URL segment and etcd key segment). */
  resource: string;
  /** The body a client sends. */
  make(namespace: string, name: string, serial: number): { metadata: Record<string, unknown> };
  /** What the server stores (raw etcd writes and bulk loads). */
  stored(namespace: string, name: string, serial: number): { metadata: Record<string, unknown> };
}

export const serviceAccountProfile: ObjectProfile = {
  label: '',
  resource: 'serviceaccounts',
  make: (ns, n, serial) => serviceAccount(ns, n, serial) as unknown as { metadata: Record<string, unknown> },
  stored: (ns, n, serial) => storedServiceAccount(ns, n, serial) as unknown as { metadata: Record<string, unknown> },
};

export const podProfile: ObjectProfile = {
  label: 'pods: ',
  resource: 'pods',
  make: pod,
  stored: (ns, n, serial) => storedPod(ns, n, serial) as { metadata: Record<string, unknown> },
};
