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
