/**
 * Seeded fuzzing over real HTTPS against a real etcd: a few thousand generated requests (odd
 * methods, paths, query strings, headers, content types and bodies built from what discovery
 * serves), then an integrity pass over everything stored.
 *
 * What must hold for every request:
 * - no 5xx, no reset connection, no hang (each request has a deadline), and the server is ready at
 *   the end;
 * - every error answer with a decodable body is a kube Status whose `code` is the HTTP status;
 * - a few answers the generator knows must be refusals are refusals: a dot segment in an API path
 *   (kube never normalises paths, so `.`/`..` cannot retarget a request), Secret data that is not
 *   base64, a `limit` that is not an int64, and credentials kube would not accept.
 * Afterwards every listed object can be read by name (identical to its list item) and PUT back
 * unchanged with `dryRun=All`.
 *
 * Keys named like `Object.prototype` members (`__proto__`, `constructor`, `prototype`, ...) go into
 * bodies at any depth, into patches and patch paths, selectors, media-type parameters and query
 * names: they are data, so after every answer `Object.prototype`, `Array.prototype` and
 * `Function.prototype` of this process (the server runs in it) must have exactly the members they
 * had. Huge but legal inputs (bodies near the 3 MiB limit whose bulk decoding drops, thousands of
 * labels, annotations or JSON patch operations, long strings within the limits) must never be
 * refused as too large. Throughout the run a few slow clients hold connections open (bodies sent a
 * byte at a time, a large list never read; fuzz-pressure.ts), and a probe of its own must get
 * `/readyz` and a GET answered within 2 s every half second; the suite ends the slow clients itself.
 *
 * The 5xx kube answers on core/v1's computed and connect sub-resources (component statuses,
 * proxies, logs, bindings: see kubeAnswers5xx) are expected answers, not failures.
 * Other inputs kube itself answers 5xx to are not generated: a resourceVersion etcd has not reached
 * (504 after 3 s), a stored object over etcd's 1.5 MiB request limit (huge strings only go where
 * validation refuses them), strategic-merge inputs kube's merge code answers 500 to.
 *
 * The seed is printed first (console output survives even a crash of the process). Replay with
 * `PLINTH_FUZZ_SEED=<seed>`; `PLINTH_FUZZ_COUNT` and `PLINTH_FUZZ_CONCURRENCY` change the size.
 * The request sequence depends only on the seed (and on the resourceVersions and protobuf
 * encodings setup gets back); the interleaving of concurrent requests, and so some answers, does
 * not. An error thrown outside any request (which would end a plinth process) stops the run at
 * once; `PLINTH_FUZZ_KEEP_GOING=1` records it and carries on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { usePlinth } from './harness.js';
import { Rng } from './rng.js';
import { startProbe, startSlowClients, watchPrototypes } from './fuzz-pressure.js';

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value && Number.isInteger(n) && n > 0 ? n : fallback;
}

/** A decimal seed is used as is; any other text is hashed (FNV-1a), so `PLINTH_FUZZ_SEED=abc` works too. */
function parseSeed(value: string | undefined): number {
  if (!value) return randomInt(0, 2 ** 32);
  if (/^\d+$/.test(value)) return Number(BigInt(value) % 2n ** 32n);
  let h = 0x811c9dc5;
  for (const ch of value) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

const SEED = parseSeed(process.env['PLINTH_FUZZ_SEED']);
const COUNT = positiveInt(process.env['PLINTH_FUZZ_COUNT'], 3000);
const CONCURRENCY = positiveInt(process.env['PLINTH_FUZZ_CONCURRENCY'], 8);
/** Record an error outside any request (a crash) and go on, to see the rest while it is unfixed. */
const KEEP_GOING = process.env['PLINTH_FUZZ_KEEP_GOING'] === '1';
/** A request without an answer by then is a hang. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How long a streaming answer (a watch) is read before the client hangs up. */
const STREAM_PEEK_MS = 200;
const REPLAY = `PLINTH_FUZZ_SEED=${SEED} PLINTH_FUZZ_COUNT=${COUNT} node --test --test-timeout=300000 test/dist/fuzz.test.js`;

const RBAC = 'rbac.authorization.k8s.io';
const SETUP_NAMESPACES = ['fuzz-a', 'fuzz-b', 'fuzz-c'];
/** Objects of every kind created before the run (in fuzz-a and fuzz-b for namespaced kinds). */
const SETUP_NAMES = ['obj-0', 'obj-1'];
/** Valid names the run may create. */
const CREATABLE_NAMES = ['fz-0', 'fz-1', 'fz-2', 'fz-3'];
/** Namespaces the run creates and deletes, so deleting the setup namespaces stays rare. */
const DISPOSABLE_NAMESPACES = ['fz-ns-0', 'fz-ns-1', 'fz-ns-2'];
/** Names of Object.prototype members: ordinary keys in kube. */
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
/** The body limit (3 MiB): huge legal bodies stay just below it. */
const BODY_LIMIT = 3 * 1024 * 1024;
/** Namespace of a few large ConfigMaps: the list slow clients ask for and never read. */
const BIG_NAMESPACE = 'fuzz-big';
/** Stands in for a deeply nested value until serialization (JSON.stringify would recurse 10,000 deep). */
const DEEP = 'FUZZ_DEEP_SENTINEL';

// ---------------------------------------------------------------------------------------------
// Seeded randomness (mulberry32: small, fast, and good enough to pick among choices)
// ---------------------------------------------------------------------------------------------

type Weighted<T> = ReadonlyArray<readonly [number, T]>;

// ---------------------------------------------------------------------------------------------
// A raw HTTPS client: the path goes on the wire exactly as generated (no URL normalisation)
// ---------------------------------------------------------------------------------------------

interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  /**
   * Not a watch: read the answer to its end even when it comes without a Content-Length (a large
   * list is streamed chunked, and on a loaded machine takes longer than STREAM_PEEK_MS).
   */
  whole?: boolean;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** A streaming answer (a watch), read for STREAM_PEEK_MS and then hung up on. */
  streamed: boolean;
}

type Outcome = { answer: Answer; error?: undefined } | { answer?: undefined; error: string };

class WireClient {
  readonly #agent: Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    ca: string,
    sockets: number,
  ) {
    this.#agent = new Agent({ ca, keepAlive: true, maxSockets: sockets });
  }

  send(r: WireRequest, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Outcome> {
    return new Promise((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (o: Outcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(o);
      };
      const headers = { ...r.headers };
      // Node frames a body it is not told the length of only for some methods: say chunked explicitly.
      if (r.body && r.chunked) headers['transfer-encoding'] = 'chunked';
      else if (r.body) headers['content-length'] = String(r.body.length);
      let req: ClientRequest;
      try {
        req = httpsRequest({ host: this.host, port: this.port, method: r.method, path: r.path, headers, agent: this.#agent }, (res) => {
          const chunks: Buffer[] = [];
          const answer = (streamed: boolean): Answer => ({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), streamed });
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish({ answer: answer(false) }));
          res.on('error', (e) => finish({ error: describeError(e) }));
          // A 200 without a length is a stream (a watch): read a little, then hang up.
          if (!r.whole && res.statusCode === 200 && res.headers['content-length'] === undefined && r.method !== 'HEAD') {
            setTimeout(() => {
              finish({ answer: answer(true) });
              req.destroy();
            }, STREAM_PEEK_MS);
          }
        });
      } catch (e) {
        finish({ error: `the client refused to send it: ${(e as Error).message}` });
        return;
      }
      timer = setTimeout(() => {
        finish({ error: `no answer within ${timeoutMs / 1000} s` });
        req.destroy();
      }, timeoutMs);
      req.on('error', (e) => finish({ error: describeError(e) }));
      if (r.body && r.chunked) {
        req.write(r.body);
        req.end();
      } else {
        req.end(r.body);
      }
    });
  }

  /** Cuts every connection (after a crash, so requests in flight fail at once instead of hanging). */
  close(): void {
    this.#agent.destroy();
  }
}

function describeError(e: Error): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code ? `${code}: ${e.message}` : e.message;
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

// ---------------------------------------------------------------------------------------------
// What the server serves, from discovery
// ---------------------------------------------------------------------------------------------

interface ServedResource {
  /** `/api/v1` or `/apis/<group>/<version>` */
  prefix: string;
  /** `v1` or `<group>/<version>` */
  apiVersion: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  subresources: string[];
  /** Served versions of one storage share it (kube's discovery `storageVersionHash`). */
  storageVersionHash?: string;
}

interface DiscoveryResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  storageVersionHash?: string;
}

async function getJson<T>(c: WireClient, token: string, path: string): Promise<T> {
  const o = await c.send({ method: 'GET', path, headers: { ...bearer(token), accept: 'application/json' }, whole: true });
  assert.equal(o.answer?.status, 200, `GET ${path}: ${o.error ?? o.answer?.body.toString().slice(0, 300)}`);
  return JSON.parse(o.answer!.body.toString('utf8')) as T;
}

async function discover(c: WireClient, token: string): Promise<ServedResource[]> {
  const groupVersions: Array<{ prefix: string; apiVersion: string }> = [];
  for (const v of (await getJson<{ versions: string[] }>(c, token, '/api')).versions) groupVersions.push({ prefix: `/api/${v}`, apiVersion: v });
  const apis = await getJson<{ groups: Array<{ versions: Array<{ groupVersion: string }> }> }>(c, token, '/apis');
  for (const g of apis.groups) for (const v of g.versions) groupVersions.push({ prefix: `/apis/${v.groupVersion}`, apiVersion: v.groupVersion });
  const out: ServedResource[] = [];
  for (const gv of groupVersions) {
    const list = await getJson<{ resources: DiscoveryResource[] }>(c, token, gv.prefix);
    for (const r of list.resources) {
      if (r.name.includes('/')) continue;
      const subresources = list.resources.filter((s) => s.name.startsWith(`${r.name}/`)).map((s) => s.name.slice(r.name.length + 1));
      out.push({ ...gv, plural: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs, subresources, ...(r.storageVersionHash ? { storageVersionHash: r.storageVersionHash } : {}) });
    }
  }
  return out;
}

function collectionPath(r: ServedResource, namespace?: string): string {
  return namespace && r.namespaced ? `${r.prefix}/namespaces/${encodeURIComponent(namespace)}/${r.plural}` : `${r.prefix}/${r.plural}`;
}

function objectPath(r: ServedResource, name: string, namespace?: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

// ---------------------------------------------------------------------------------------------
// Object templates: a valid object of each served kind
// ---------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `o[k] = v` as data, `__proto__` included (an assignment would set the prototype). */
function put(o: Obj, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** An object from entries, each key a member (Object.fromEntries defines `__proto__` as data too). */
const objOf = (entries: Array<[string, unknown]>): Obj => Object.fromEntries(entries);

/** A value that would pollute a prototype if a key of it were walked into: it must stay data. */
function protoPoison(depth: number): Obj {
  const leaf = objOf([['deletionTimestamp', '2020-01-01T00:00:00Z'], ['retryAfterSeconds', 7], ['polluted', true]]);
  return depth <= 0 ? leaf : objOf([['__proto__', protoPoison(depth - 1)], ['constructor', objOf([['prototype', protoPoison(depth - 1)]])]]);
}

/** A valid object of `r`'s kind (the fields kube validates are filled as it wants them). */
/** A PEM certificate request (CN=fuzz, P-256), base64 as CertificateSigningRequest.spec.request carries it. */
const FUZZ_CSR = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlISk1IRUNBUUF3RHpFTk1Bc0dBMVVFQXd3RVpuVjZlakJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSApBMElBQkIvZ1hhN01sZCtLWUxGcmRscVdEcGJmSUNCVHY0dWRKWnU4SXFlQzEvZ0dPblUrZWJ0NjBzRVRtMTVCCm1ENU1wRlZSamtSL0VtYkJPRGxkQVhpWmpscWdBREFLQmdncWhrak9QUVFEQWdOSUFEQkZBaUVBcXNBeWZqdE8KeUhaY0dXRGthN09NZzl6NGVnOVFQakZ0bCtBY2dhUXlpYWNDSUV3M0graU53U2VNSjVUZ0FkZ0t4WmdJbVZIaApxRFIxc1JFcUFUOEdRSHhVCi0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=';

function validObject(r: ServedResource, name: string, namespace: string | undefined, rng: Rng): Obj {
  const metadata: Obj = { name };
  if (namespace !== undefined) metadata['namespace'] = namespace;
  if (rng.chance(0.5)) metadata['labels'] = { app: 'fuzz', 'example.com/tier': 'a' };
  if (rng.chance(0.3)) metadata['annotations'] = { note: 'fuzzed' };
  const base: Obj = { apiVersion: r.apiVersion, kind: r.kind, metadata };
  switch (r.kind) {
    case 'ConfigMap':
      if (isObj(metadata['labels'])) put(metadata['labels'], 'constructor', 'c');
      return { ...base, data: objOf([['__proto__', 'p'], ['constructor', 'c'], ['toString', 't'], ['key', 'value']]) };
    case 'ServiceAccount':
      return { ...base, secrets: [{ name: 'token' }], imagePullSecrets: [{ name: 'pull' }], automountServiceAccountToken: rng.chance(0.5) };
    case 'Secret':
      return { ...base, type: 'Opaque', data: { key: 'dmFsdWU=' }, stringData: { other: 'plain text' } };
    case 'Namespace':
      return { ...base, spec: { finalizers: ['kubernetes'] } };
    case 'Event': {
      // Valid in every version: kube's strict events.k8s.io/v1 rules, the legacy ones elsewhere.
      const about = { kind: 'Pod', namespace: namespace ?? 'default', name: 'web-1' };
      const newer = { eventTime: '2022-05-01T10:00:00.000000Z', action: 'Start', reason: 'Started', type: rng.pick(['Normal', 'Warning']), reportingInstance: 'node-1' };
      return r.apiVersion === 'v1'
        ? { ...base, ...newer, involvedObject: about, message: 'started', reportingComponent: 'kubelet', source: { component: 'kubelet' } }
        : { ...base, ...newer, regarding: about, note: 'started', reportingController: 'example.com/kubelet' };
    }
    case 'CustomResourceDefinition': {
      // A CRD's name is <plural>.<group>: derived from the given name.
      const plural = `${name.replace(/[^a-z0-9]/g, '')}things`;
      const schema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer', maximum: 10 }, mode: { type: 'string', default: 'a' } } } } };
      return {
        ...base,
        metadata: { ...metadata, name: `${plural}.fuzz.example.com` },
        spec: {
          group: 'fuzz.example.com',
          scope: rng.pick(['Namespaced', 'Cluster']),
          names: { plural, singular: plural.slice(0, -1), kind: `Fz${plural[0]!.toUpperCase()}${plural.slice(1)}`, listKind: `Fz${plural[0]!.toUpperCase()}${plural.slice(1)}List` },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
        },
      };
    }
    case 'Role':
      return { ...base, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }] };
    case 'ClusterRole':
      return {
        ...base,
        rules: [
          { apiGroups: [RBAC], resources: ['roles'], verbs: ['*'], resourceNames: ['a'] },
          { nonResourceURLs: ['/healthz'], verbs: ['get'] },
        ],
        ...(rng.chance(0.2) ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] } } : {}),
      };
    case 'RoleBinding':
      return {
        ...base,
        roleRef: { apiGroup: RBAC, kind: 'Role', name: 'obj-0' },
        subjects: [
          { kind: 'ServiceAccount', name: 'default', namespace: namespace ?? 'default' },
          { kind: 'User', apiGroup: RBAC, name: 'alice' },
        ],
      };
    case 'ClusterRoleBinding':
      return {
        ...base,
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' },
        subjects: [
          { kind: 'Group', apiGroup: RBAC, name: 'devs' },
          { kind: 'ServiceAccount', name: 'default', namespace: 'default' },
        ],
      };
    case 'Pod':
      return { ...base, spec: podSpec(rng) };
    case 'PodTemplate':
      return { ...base, template: { metadata: { labels: { app: 'fuzz' } }, spec: podSpec(rng) } };
    case 'ReplicationController':
      return { ...base, spec: { replicas: rng.pick([0, 1, 3]), selector: { app: 'fuzz' }, template: { metadata: { labels: { app: 'fuzz' } }, spec: podSpec(rng) } } };
    case 'Service':
      return rng.chance(0.2)
        ? { ...base, spec: { type: 'ExternalName', externalName: 'db.example.com' } }
        : { ...base, spec: { type: rng.pick(['ClusterIP', 'NodePort']), selector: { app: 'fuzz' }, ports: [{ name: 'http', port: 80, targetPort: rng.pick([8080, 'http']) }] } };
    case 'Endpoints':
      return { ...base, subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ name: 'http', port: 8080 }] }] };
    case 'Node':
      return { ...base, spec: { podCIDR: '10.244.1.0/24', taints: rng.chance(0.5) ? [{ key: 'example.com/dedicated', value: 'fuzz', effect: 'NoSchedule' }] : [] } };
    case 'PersistentVolume':
      return { ...base, spec: { capacity: { storage: rng.pick(['1Gi', '500Mi', '0.5Gi']) }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data/fuzz' } } };
    case 'PersistentVolumeClaim':
      return { ...base, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: rng.pick(['1Gi', '1000Mi', '2e9']) } } } };
    case 'LimitRange':
      return { ...base, spec: { limits: [{ type: 'Container', default: { cpu: '1', memory: '256Mi' }, defaultRequest: { cpu: '100m' } }] } };
    case 'ResourceQuota':
      return { ...base, spec: { hard: { pods: '10', 'requests.cpu': rng.pick(['4', '4000m']), 'count/configmaps': '20' } } };
    case 'Deployment':
    case 'ReplicaSet':
      return { ...base, spec: { replicas: rng.pick([0, 1, 3]), selector: { matchLabels: { app: 'fuzz' } }, template: podTemplate(rng) } };
    case 'StatefulSet':
      return { ...base, spec: { serviceName: 'fuzz', selector: { matchLabels: { app: 'fuzz' } }, template: podTemplate(rng) } };
    case 'DaemonSet':
      return { ...base, spec: { selector: { matchLabels: { app: 'fuzz' } }, template: podTemplate(rng) } };
    case 'ControllerRevision':
      return { ...base, data: { spec: { template: { metadata: { labels: { app: 'fuzz' } } } } }, revision: rng.pick([1, 2]) };
    case 'Job':
      return { ...base, spec: { template: { ...podTemplate(rng), spec: { ...podSpec(rng), restartPolicy: 'Never' } } } };
    case 'CronJob':
      return { ...base, spec: { schedule: rng.pick(['*/5 * * * *', '@hourly', '0 3 * * 1-5']), jobTemplate: { spec: { template: { spec: { ...podSpec(rng), restartPolicy: 'OnFailure' } } } } } };
    case 'HorizontalPodAutoscaler':
      return { ...base, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: rng.pick([3, 10]) } };
    case 'PodDisruptionBudget':
      return { ...base, spec: { selector: { matchLabels: { app: 'fuzz' } }, ...(rng.chance(0.5) ? { minAvailable: rng.pick([1, '50%']) } : { maxUnavailable: 1 }) } };
    case 'PodSecurityPolicy':
      return {
        ...base,
        spec: { seLinux: { rule: 'RunAsAny' }, runAsUser: { rule: 'RunAsAny' }, supplementalGroups: { rule: 'RunAsAny' }, fsGroup: { rule: 'RunAsAny' }, volumes: ['configMap', 'secret', 'emptyDir'] },
      };
    case 'Ingress':
      return {
        ...base,
        spec: { rules: [{ host: rng.pick(['example.com', '*.example.com']), http: { paths: [{ path: '/', pathType: rng.pick(['Prefix', 'Exact', 'ImplementationSpecific']), backend: { service: { name: 'web', port: rng.chance(0.5) ? { number: 80 } : { name: 'http' } } } }] } }] },
      };
    case 'IngressClass':
      return { ...base, spec: { controller: 'example.com/ingress-controller' } };
    case 'NetworkPolicy':
      return { ...base, spec: { podSelector: { matchLabels: { app: 'fuzz' } }, ingress: [{ from: [{ podSelector: {} }], ports: [{ port: 80 }] }] } };
    case 'PriorityClass':
      return { ...base, value: rng.pick([0, 1000, 1_000_000]), description: 'fuzzed' };
    case 'APIService': {
      // An APIService's name is <version>.<group>: derived from the given name; a local one.
      const group = `${name.replace(/[^a-z0-9-]/g, '')}.fuzz.example.com`;
      return { ...base, metadata: { ...metadata, name: `v1.${group}` }, spec: { group, version: 'v1', groupPriorityMinimum: rng.pick([100, 20000]), versionPriority: rng.pick([1, 1000]) } };
    }
    case 'RuntimeClass':
      return { ...base, handler: rng.pick(['runc', 'kata']) };
    case 'EndpointSlice':
      return { ...base, addressType: 'IPv4', endpoints: [{ addresses: [rng.pick(['10.0.0.1', '10.0.0.2'])], conditions: { ready: rng.chance(0.5) } }], ports: [{ name: 'http', port: rng.pick([80, 8080]) }] };
    case 'FlowSchema':
      return { ...base, spec: { priorityLevelConfiguration: { name: rng.pick(['global-default', 'workload-low']) }, matchingPrecedence: rng.pick([500, 5000]), rules: [{ subjects: [{ kind: 'User', user: { name: 'fuzz' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/fuzz'] }] }] } };
    case 'StorageClass':
      return { ...base, provisioner: rng.pick(['csi.example.com', 'kubernetes.io/no-provisioner']), reclaimPolicy: rng.pick(['Delete', 'Retain']) };
    case 'CSIDriver':
      return { ...base, metadata: { ...metadata, name: `${name}.csi.example.com` }, spec: { attachRequired: rng.chance(0.5) } };
    case 'CSINode':
      return { ...base, spec: { drivers: [{ name: 'csi.example.com', nodeID: name }] } };
    case 'VolumeAttachment':
      return { ...base, spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: `pv-${name}` } } };
    case 'CSIStorageCapacity':
      return { ...base, storageClassName: 'standard' };
    case 'CertificateSigningRequest':
      // A fixed ECDSA request made with openssl for this test (its key is not kept).
      return { ...base, spec: { request: FUZZ_CSR, signerName: 'example.com/fuzz', usages: rng.pick([['digital signature'], ['client auth', 'key encipherment']]) } };
    case 'PriorityLevelConfiguration':
      return { ...base, spec: { type: 'Limited', limited: { assuredConcurrencyShares: rng.pick([1, 10]), limitResponse: { type: 'Reject' } } } };
    default:
      return base;
  }
}

/** A valid pod template whose labels match the workloads' selector. */
function podTemplate(rng: Rng): Obj {
  return { metadata: { labels: { app: 'fuzz' } }, spec: podSpec(rng) };
}

/** A valid pod spec: one or two containers, sometimes with resources, probes and a volume. */
function podSpec(rng: Rng): Obj {
  const container = (name: string): Obj => ({
    name,
    image: rng.pick(['nginx', 'nginx:1.23', 'registry.example.com/app@sha256:' + 'a'.repeat(64)]),
    ...(rng.chance(0.5) ? { resources: { requests: { cpu: rng.pick(['100m', '0.1', '1']), memory: '64Mi' }, limits: { memory: '128Mi' } } } : {}),
    ...(rng.chance(0.3) ? { readinessProbe: { httpGet: { path: '/ready', port: 8080 } } } : {}),
    ...(rng.chance(0.3) ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
  });
  const containers = rng.chance(0.5) ? [container('app')] : [container('app'), container('sidecar')];
  return { containers, volumes: [{ name: 'data', emptyDir: {} }] };
}

// ---------------------------------------------------------------------------------------------
// The generator's vocabulary
// ---------------------------------------------------------------------------------------------

const ODD_METHODS = ['TRACE', 'PROPFIND', 'PURGE', 'LINK', 'QUERY', 'FOO', 'M-SEARCH'];
/** Methods Node's HTTP parser hands to plinth (an unknown one is answered 400 by Node itself). */
const STANDARD_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Spellings of `.` and `..` that a URL parser treats as dot segments. */
const DOT_SEGMENTS = ['.', '..', '%2e', '%2E', '%2e%2e', '%2E%2E', '.%2e', '%2e.'];
const ODD_SEGMENTS = [
  '%2F',
  'a%2Fb',
  '..%2F..',
  '%2e%2e%2f',
  '...',
  '',
  'a'.repeat(300),
  'b'.repeat(3000),
  '%C3%BCn%C3%AFc%C3%B6d%C3%A9',
  '%E2%98%83',
  '%F0%9F%92%A9',
  '%00',
  'a%00b',
  'UPPER',
  'Obj-0',
  '%',
  '%zz',
  '%25',
  'a%20b',
  'a+b',
  'a:b',
  'system%3Aview',
  '~',
  '-',
  '*',
  'a;b',
  '%22%3Cx%3E',
  '"',
  '{name}',
];
const DEPTHS = [20, 99, 101, 150, 1000, 5000, 10_000];
/** Secret data Go's base64.StdEncoding refuses (kube decodes `data` with it). */
const INVALID_BASE64 = ['YQ', 'YWJ', 'YQ=', '==', 'Y', 'a b', 'YW-_', '!!!!', 'YWJjZA', '=YWJ', 'YQ==YQ==', 'dmFsdWU'];
const GO_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const CONTENT_TYPES: Weighted<string | undefined> = [
  [45, 'application/json'],
  [18, 'application/yaml'],
  [6, 'application/vnd.kubernetes.protobuf'],
  [3, 'application/json-patch+json'],
  [3, 'application/merge-patch+json'],
  [3, 'application/strategic-merge-patch+json'],
  [3, 'application/apply-patch+yaml'],
  [3, 'text/plain'],
  [6, undefined],
  [2, 'application/json; charset=utf-8'],
  [2, 'APPLICATION/JSON'],
  [2, 'application/json;;;x'],
  [2, 'foo/bar; a=b; c'],
  [1, ';'],
  [1, 'application/x-www-form-urlencoded'],
  [1, 'multipart/form-data; boundary=x'],
  [1, 'constructor'],
  [1, '__proto__'],
  [1, 'application/json; __proto__=x; constructor=y'],
];
const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
type PatchType = keyof typeof PATCH_TYPES;

const ACCEPTS = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v1;g=meta.k8s.io, application/json',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/vnd.kubernetes.protobuf, */*',
  'application/json;stream=watch',
  'text/html',
  '*/*',
  'application/*',
  'application/yaml;q=0.5, application/json;q=0.9',
  'application/json;q=0',
  'application/json;q=abc',
  ';;;',
  ',,,',
  'garbage',
  'application/json;__proto__=x;constructor=y',
  'application/json;as=__proto__;g=constructor;v=toString',
  'text/html, application/xml;q=0.9',
  'application/json, '.repeat(200),
];

/** How an Authorization variant must be treated: `denied` ones must never reach a non-public path. */
type AuthClass = 'valid' | 'denied' | 'unspecified';
interface AuthVariant {
  tag: string;
  klass: AuthClass;
  value(token: string): string | undefined;
}
const AUTH_VARIANTS: Weighted<AuthVariant> = [
  [85, { tag: 'auth:valid', klass: 'valid', value: (t) => `Bearer ${t}` }],
  [5, { tag: 'auth:lowercase-bearer', klass: 'valid', value: (t) => `bearer ${t}` }],
  [6, { tag: 'auth:none', klass: 'denied', value: () => undefined }],
  // kube splits on single spaces: the token is the empty second field, so no credentials at all.
  [4, { tag: 'auth:two-spaces', klass: 'denied', value: (t) => `Bearer  ${t}` }],
  [2, { tag: 'auth:tab', klass: 'denied', value: (t) => `Bearer\t${t}` }],
  [3, { tag: 'auth:garbage', klass: 'denied', value: () => 'Bearer not-a-token' }],
  [2, { tag: 'auth:token-suffix', klass: 'denied', value: (t) => `Bearer ${t}x` }],
  [2, { tag: 'auth:basic', klass: 'denied', value: () => 'Basic dXNlcjpwYXNz' }],
  [2, { tag: 'auth:very-long', klass: 'denied', value: () => `Bearer ${'a'.repeat(8000)}` }],
  [1, { tag: 'auth:bare-bearer', klass: 'denied', value: () => 'Bearer' }],
  // kube takes the second space-separated field as the token and ignores the rest.
  [1, { tag: 'auth:trailing-field', klass: 'unspecified', value: (t) => `Bearer ${t} extra` }],
];

/** Paths plinth serves without credentials (kube: system:public-info-viewer). */
const PUBLIC_PATH = /^\/(healthz|livez|readyz|version)(\/.*)?$/;
const NON_RESOURCE_PATHS = [
  '/healthz',
  '/healthz/ping',
  '/livez',
  '/livez/etcd',
  '/livez/ping',
  '/readyz',
  '/readyz/x',
  '/readyz/shutdown',
  '/readyz/etcd/extra',
  '/version',
  '/version/',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/api/v1',
  `/openapi/v3/apis/${RBAC}/v1`,
  '/openapi/v3/junk',
  '/openapi/v3/apis/x/y/z',
  '/metrics',
  '/logs',
  '/debug/pprof/',
  '/',
  '/ui',
  '/apis/apiregistration.k8s.io/v1',
];

interface DeepSpec {
  depth: number;
  shape: 'array' | 'object';
}

function deepText(d: DeepSpec): string {
  return d.shape === 'array' ? `${'['.repeat(d.depth)}${']'.repeat(d.depth)}` : `${'{"a":'.repeat(d.depth)}1${'}'.repeat(d.depth)}`;
}

// ---------------------------------------------------------------------------------------------
// Generated requests
// ---------------------------------------------------------------------------------------------

interface FuzzRequest extends WireRequest {
  index: number;
  /** What the generator chose, for the report. */
  tags: string[];
  /** Why a 2xx answer would be wrong, when the generator knows the request must be refused. */
  mustRefuse?: string;
  /** Why the answer must be 401 or 403 (credentials kube does not accept, on a non-public path). */
  mustDenyAuth?: string;
  /** Why a 413 would be wrong: the input is huge but within every limit. */
  mustAccept?: string;
  /** A member of metadata the answer must not have (kube's types drop it). */
  dropsMember?: string;
}

/** Static facts the generator draws on; nothing from answers, so a seed replays the same sequence. */
interface World {
  resources: ServedResource[];
  token: string;
  /** Protobuf encodings of setup objects, mutated into protobuf bodies. */
  protobufSamples: Buffer[];
  /** A resourceVersion etcd had reached before the run: any value up to it is never waited for. */
  maxRv: number;
}

/** Where a resource path points, when it was built from a served resource. */
interface Target {
  resource: ServedResource;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface BuiltPath {
  path: string;
  target?: Target;
  /** Built only from well-formed pieces (no odd segment, prefix, slash or case change). */
  clean: boolean;
  legacyWatch: boolean;
}

interface BuiltBody {
  body?: Buffer;
  contentType?: string;
  /** Query parameters the body needs (fieldManager for apply). */
  query: string[];
  /** The payload writes Secret data that is not base64, and nothing else disturbed it. */
  invalidSecretData: boolean;
  /** Why a 413 would be wrong (a huge input within every limit). */
  mustAccept?: string;
}

interface Slot {
  parent: Obj | unknown[];
  key: string | number;
}

function slotsOf(root: Obj): Slot[] {
  const out: Slot[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 8) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push({ parent: v, key: i });
        walk(x, depth + 1);
      });
    } else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) {
        out.push({ parent: v, key: k });
        walk(x, depth + 1);
      }
    }
  };
  walk(root, 0);
  return out;
}

function slotValue(s: Slot): unknown {
  return Array.isArray(s.parent) ? s.parent[s.key as number] : s.parent[s.key as string];
}

function setSlot(s: Slot, value: unknown): void {
  if (Array.isArray(s.parent)) s.parent[s.key as number] = value;
  else put(s.parent, s.key as string, value);
}

function metadataOf(obj: Obj): Obj {
  if (!isObj(obj['metadata'])) obj['metadata'] = {};
  return obj['metadata'] as Obj;
}

function hasInvalidSecretData(payload: unknown): boolean {
  return isObj(payload) && isObj(payload['data']) && Object.values(payload['data']).some((v) => typeof v === 'string' && !GO_BASE64.test(v));
}

/** kube reads `limit` as Go's strconv.ParseInt(strings.TrimSpace(v), 10, 64); an empty value is 0. */
function notInt64(value: string): boolean {
  const t = value.trim();
  if (t === '') return false;
  if (!/^[+-]?\d+$/.test(t)) return true;
  const n = BigInt(t);
  return n > 9223372036854775807n || n < -9223372036854775808n;
}

/** Bytes in a path that Node's HTTP parser may refuse before plinth sees the request. */
function parserMayRefuse(path: string): boolean {
  return /[^\x21-\x7e]|["{}|\\^`<>]/.test(path);
}

function hasDotSegment(path: string): boolean {
  return path
    .split('?')[0]!
    .split('/')
    .some((seg) => /^(\.|%2e){1,2}$/i.test(seg));
}

class RequestGenerator {
  readonly #rng: Rng;
  readonly #world: World;

  constructor(world: World, seed: number) {
    this.#world = world;
    this.#rng = new Rng(seed);
  }

  /** The request number `index`; call in order (the sequence is the seed's). */
  next(index: number): FuzzRequest {
    if (this.#rng.chance(0.02)) return this.#protoAttack(index);
    const tags: string[] = [];
    const method = this.#method();
    const built = this.#path(method, tags);
    const auth = this.#rng.weighted(AUTH_VARIANTS);
    tags.push(auth.tag);
    const headers = this.#headers(auth, tags);
    // A request Node's parser refuses is answered 400 and its connection closed: a body still being
    // sent would then fail as a reset, which says nothing about plinth.
    const withBody = STANDARD_METHODS.has(method) && !parserMayRefuse(built.path);
    const body = withBody ? this.#body(method, built, tags) : { query: [], invalidSecretData: false };
    if (body.contentType !== undefined) headers['content-type'] = body.contentType;
    const query = this.#query(method, built, tags);
    const parts = [...query.parts, ...body.query];
    const path = parts.length > 0 || this.#rng.chance(0.02) ? `${built.path}?${parts.join('&')}` : built.path;
    fitHeaderLimit(path, headers, tags);
    const req: FuzzRequest = { index, method, path, headers, tags };
    if (body.body) req.body = body.body;
    if (body.mustAccept) req.mustAccept = body.mustAccept;
    if (body.body && this.#rng.chance(0.1)) {
      req.chunked = true;
      tags.push('chunked');
    }
    this.#expectations(req, built, auth, body, query.firstLimit);
    return req;
  }

  /**
   * Issue 23's attack, aimed: an authorized merge or strategic merge patch of `metadata.__proto__`
   * (or `constructor`, `prototype`) on a setup object. kube answers 200 with nothing changed: the
   * member is one the type does not have.
   */
  #protoAttack(index: number): FuzzRequest {
    const rng = this.#rng;
    const r = rng.pick(this.#world.resources.filter((x) => x.verbs.includes('patch') && x.plural !== 'namespaces'));
    const type = rng.pick(['merge', 'strategic'] as const);
    const key = rng.weighted<string>([[3, '__proto__'], [1, 'constructor'], [1, 'prototype']]);
    const patch = objOf([['metadata', objOf([[key, protoPoison(rng.pick([0, 0, 1]))]])]]);
    if (rng.chance(0.3)) put(patch, rng.pick(PROTO_KEYS), protoPoison(0));
    const path = `${objectPath(r, rng.pick(SETUP_NAMES), r.namespaced ? rng.pick(SETUP_NAMESPACES.slice(0, 2)) : undefined)}${rng.chance(0.5) ? '?dryRun=All' : ''}`;
    return {
      index,
      method: 'PATCH',
      path,
      headers: { ...bearer(this.#world.token), 'content-type': PATCH_TYPES[type], accept: 'application/json' },
      body: Buffer.from(JSON.stringify(patch)),
      tags: ['proto-attack', `kind:${r.kind}`, `patch:${type}`, `key:${key}`],
      dropsMember: key,
    };
  }

  // --- oracles -------------------------------------------------------------------------------

  #expectations(req: FuzzRequest, built: BuiltPath, auth: AuthVariant, body: BuiltBody, firstLimit: string | undefined): void {
    const t = built.target;
    if (/^\/apis?\//.test(built.path) && hasDotSegment(built.path)) {
      req.mustRefuse = 'a dot segment (., .., %2e…) in an API path addresses no object: kube does not normalise paths, so it cannot retarget the request';
    } else if (built.clean && t && !t.subresource && t.resource.plural === 'secrets' && ['POST', 'PUT', 'PATCH'].includes(req.method) && body.invalidSecretData) {
      req.mustRefuse = 'Secret data that is not valid base64 (Go base64.StdEncoding) cannot be decoded: kube answers 400';
    } else if (built.clean && t && !t.name && (req.method === 'GET' || req.method === 'DELETE') && firstLimit !== undefined && notInt64(firstLimit)) {
      req.mustRefuse = `limit=${firstLimit} is not an int64: kube's ListOptions decoding answers 400`;
    }
    if (auth.klass === 'denied' && STANDARD_METHODS.has(req.method) && !PUBLIC_PATH.test(built.path) && !parserMayRefuse(built.path)) {
      req.mustDenyAuth = `${auth.tag.slice('auth:'.length)}: an Authorization header kube does not accept authenticated a request to a non-public path`;
    }
  }

  // --- method and path ------------------------------------------------------------------------

  #method(): string {
    const m = this.#rng.weighted([
      [30, 'GET'],
      [14, 'POST'],
      [12, 'PUT'],
      [18, 'PATCH'],
      [10, 'DELETE'],
      [4, 'HEAD'],
      [4, 'OPTIONS'],
      [3, 'ODD'],
    ] as const);
    return m === 'ODD' ? this.#rng.pick(ODD_METHODS) : m;
  }

  #path(method: string, tags: string[]): BuiltPath {
    const kind = this.#rng.weighted([
      [72, 'resource'],
      [5, 'legacy-watch'],
      [7, 'discovery'],
      [10, 'non-resource'],
      [6, 'junk'],
    ] as const);
    tags.push(`path:${kind}`);
    let built: BuiltPath;
    switch (kind) {
      case 'resource':
        built = this.#resourcePath(method, false, tags);
        break;
      case 'legacy-watch':
        built = this.#resourcePath('GET', true, tags);
        break;
      case 'discovery':
        built = { path: this.#discoveryPath(), clean: false, legacyWatch: false };
        break;
      case 'non-resource':
        built = { path: this.#rng.pick(NON_RESOURCE_PATHS), clean: false, legacyWatch: false };
        break;
      default:
        built = { path: this.#junkPath(), clean: false, legacyWatch: false };
    }
    return this.#mangle(built, tags);
  }

  #resourcePath(method: string, legacyWatch: boolean, tags: string[]): BuiltPath {
    const rng = this.#rng;
    const r = rng.pick(this.#world.resources);
    const target: Target = { resource: r };
    let clean = true;
    let path = r.prefix;
    if (rng.chance(0.05)) {
      path = rng.pick([r.prefix.toUpperCase(), r.prefix.replace(/v1$/, 'v2'), r.prefix.replace(/v1$/, 'V1'), `${r.prefix}/`, '/apis/nope.example.com/v1']);
      clean = false;
      tags.push('seg:odd-prefix');
    }
    if (legacyWatch) path += '/watch';
    const inNamespace = r.namespaced ? rng.chance(0.85) : rng.chance(0.03);
    if (inNamespace && r.plural !== 'namespaces') {
      const validNamespace = (): string =>
        rng.weighted([[70, rng.pick(SETUP_NAMESPACES)], [10, rng.pick(['default', 'kube-system'])], [10, 'missing-ns'], [10, rng.pick(DISPOSABLE_NAMESPACES)]]);
      const ns = this.#segment(validNamespace, tags, 'ns');
      path += `/namespaces/${ns.seg}`;
      target.namespace = ns.seg;
      clean &&= ns.clean && r.namespaced;
    }
    if (rng.chance(0.05)) {
      path += `/${this.#oddSegment(tags, 'resource')}`;
      clean = false;
    } else {
      path += `/${r.plural}`;
    }
    const wantsObject = method === 'PUT' || method === 'PATCH' ? rng.chance(0.9) : method === 'POST' ? rng.chance(0.12) : rng.chance(0.6);
    if (wantsObject) {
      // A setup namespace is addressed (and so deleted) rarely: what is in it is most of the state.
      const validName = (): string =>
        r.plural === 'namespaces'
          ? rng.weighted([[70, rng.pick(DISPOSABLE_NAMESPACES)], [8, rng.pick(SETUP_NAMESPACES)], [12, rng.pick(['default', 'kube-system'])], [10, 'missing-ns']])
          : rng.weighted([[50, rng.pick(SETUP_NAMES)], [40, rng.pick(CREATABLE_NAMES)], [10, 'missing']]);
      const name = this.#segment(validName, tags, 'name');
      path += `/${name.seg}`;
      target.name = name.seg;
      clean &&= name.clean;
      if (rng.chance(0.15)) {
        const sub =
          r.subresources.length > 0 && rng.chance(0.7)
            ? rng.pick(r.subresources)
            : rng.chance(0.15)
              ? this.#oddSegment(tags, 'subresource')
              : rng.pick(['status', 'finalize', 'junk', 'proxy', 'exec', 'status/extra']);
        path += `/${sub}`;
        target.subresource = sub;
        tags.push('subresource');
      }
    }
    return { path, target, clean, legacyWatch };
  }

  /** A well-formed segment from `valid`, or (20% of the time) a dot or odd one. */
  #segment(valid: () => string, tags: string[], what: string): { seg: string; clean: boolean } {
    if (!this.#rng.chance(0.2)) return { seg: valid(), clean: true };
    return { seg: this.#oddSegment(tags, what), clean: false };
  }

  #oddSegment(tags: string[], what: string): string {
    if (this.#rng.chance(0.4)) {
      tags.push(`seg:dot-${what}`);
      return this.#rng.pick(DOT_SEGMENTS);
    }
    tags.push(`seg:odd-${what}`);
    return this.#rng.pick(ODD_SEGMENTS);
  }

  #discoveryPath(): string {
    const r = this.#rng.pick(this.#world.resources);
    const group = r.apiVersion.includes('/') ? `/apis/${r.apiVersion.split('/')[0]}` : '/api';
    return this.#rng.pick(['/api', '/api/v1', '/apis', group, r.prefix, '/apis/nope.example.com', '/apis/nope.example.com/v1', '/api/v2', '/API', `${r.prefix}/`]);
  }

  #junkPath(): string {
    const alphabet = 'abcXYZ019-._~%:@!$&\'()*+,;=';
    const segs = Array.from({ length: 1 + this.#rng.int(5) }, () => Array.from({ length: this.#rng.int(12) }, () => this.#rng.pick([...alphabet])).join(''));
    return `/${segs.join('/')}`;
  }

  /** Trailing slashes, doubled slashes and case changes; any of them makes the path unclean. */
  #mangle(built: BuiltPath, tags: string[]): BuiltPath {
    const rng = this.#rng;
    let { path, clean } = built;
    if (rng.chance(0.04)) {
      path += '/';
      clean = false;
      tags.push('seg:trailing-slash');
    }
    if (rng.chance(0.03)) {
      const slashes = [...path.matchAll(/\//g)].map((m) => m.index);
      const at = rng.pick(slashes);
      path = `${path.slice(0, at)}/${path.slice(at)}`;
      clean = false;
      tags.push('seg:double-slash');
    }
    if (rng.chance(0.015)) {
      path = path.toUpperCase();
      clean = false;
      tags.push('seg:uppercase');
    }
    return { ...built, path, clean };
  }

  // --- query ------------------------------------------------------------------------------------

  #query(method: string, built: BuiltPath, tags: string[]): { parts: string[]; firstLimit?: string } {
    const rng = this.#rng;
    const params: Array<[string, string]> = [];
    if (method === 'GET' && built.target && !built.target.name && rng.chance(0.12)) params.push(['watch', rng.pick(['1', 'true', '0', 'false', 'junk'])]);
    const n = rng.weighted([
      [40, 0],
      [30, 1],
      [18, 2],
      [12, 4],
    ] as const);
    for (let i = 0; i < n; i++) params.push(this.#param());
    if (params.length > 0 && rng.chance(0.08)) {
      const [k] = rng.pick(params);
      params.push([k, this.#paramValue(k)]);
      tags.push('query:repeated');
    }
    const parts = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
    if (rng.chance(0.04)) {
      parts.push(rng.pick(['%', '%zz', '&&', '=', '==x', 'a=%E0%A4%A', '%00=%00', 'x', '&', 'limit']));
      tags.push('query:raw-junk');
    }
    // A watch lasts 1 s at most (the client also hangs up after peeking): the first
    // timeoutSeconds wins, and a junk or 0 one would mean the default 30–60 minutes.
    if (built.legacyWatch || params.some(([k]) => k === 'watch')) {
      parts.unshift('timeoutSeconds=1');
      tags.push('watch');
    }
    if (params.length > 0) tags.push(`query:${[...new Set(params.map(([k]) => k))].join(',')}`);
    const limit = params.find(([k]) => k === 'limit');
    return limit ? { parts, firstLimit: limit[1] } : { parts };
  }

  #param(): [string, string] {
    const key = this.#rng.pick([
      'limit',
      'limit',
      'continue',
      'resourceVersion',
      'resourceVersion',
      'resourceVersionMatch',
      'labelSelector',
      'fieldSelector',
      'watch',
      'timeoutSeconds',
      'dryRun',
      'dryRun',
      'fieldManager',
      'force',
      'pretty',
      'propagationPolicy',
      'gracePeriodSeconds',
      'allowWatchBookmarks',
      'includeObject',
      'fieldValidation',
      'orphanDependents',
      'junk',
      '__proto__',
      'constructor',
    ]);
    return [key, this.#paramValue(key)];
  }

  #paramValue(key: string): string {
    const rng = this.#rng;
    const smallRv = (): string => String(1 + rng.int(this.#world.maxRv));
    switch (key) {
      case 'limit':
        return rng.pick(['0', '-1', '1', '2', '500', '99999999999999999999', '9223372036854775808', '9223372036854775807', '-9223372036854775809', 'abc', '1.5', '1e3', '0x10', '', ' 5', '+5']);
      case 'continue':
        return rng.pick(['abc', '!!!', '', this.#continueToken(), this.#continueToken(), 'x'.repeat(500)]);
      case 'resourceVersion':
        // Never far above what etcd has reached: that read waits 3 s and answers 504, as in kube.
        return rng.pick(['0', '1', smallRv(), smallRv(), 'abc', '-1', '', '1.5', ' ']);
      case 'resourceVersionMatch':
        return rng.pick(['Exact', 'NotOlderThan', 'junk', '']);
      case 'labelSelector':
        return rng.pick(['a=b', 'app=fuzz', 'a in (b', '!!bad==', 'a,b', `x=${'y'.repeat(300)}`, 'a notin (x,y)', '=', 'a!=', 'example.com/tier', '!a', 'a in ()', 'constructor', 'constructor=c', '!toString', '__proto__', 'hasOwnProperty in (a,b)']);
      case 'fieldSelector':
        return rng.pick(['metadata.name=obj-0', 'metadata.namespace!=fuzz-a', 'spec.junk=1', 'a==b==c', 'metadata.name', 'type=Opaque', '', 'metadata.__proto__=x', 'constructor=x', 'metadata.labels.constructor=c']);
      case 'watch':
        return rng.pick(['1', 'true', '0', 'false', 'junk']);
      case 'timeoutSeconds':
        return rng.pick(['0', '-1', 'abc', '99999999999999999999', '5', '']);
      case 'dryRun':
        return rng.pick(['All', 'All', 'junk', '', 'all']);
      case 'fieldManager':
        return rng.pick(['fuzz', 'kubectl', 'x'.repeat(200), '', 'ünï', '\u0000', 'a b']);
      case 'force':
      case 'pretty':
      case 'allowWatchBookmarks':
      case 'orphanDependents':
        return rng.pick(['true', 'false', '1', '0', 'junk', '']);
      case 'propagationPolicy':
        return rng.pick(['Foreground', 'Orphan', 'Background', 'junk', '']);
      case 'gracePeriodSeconds':
        return rng.pick(['0', '-1', '30', 'abc', '99999999999999999999']);
      case 'includeObject':
        return rng.pick(['Object', 'None', 'Metadata', 'junk']);
      case 'fieldValidation':
        return rng.pick(['Strict', 'Warn', 'Ignore', 'junk']);
      default:
        return rng.pick(['x', '', '%', '\u00ff']);
    }
  }

  /** A well-formed or broken continue token, never for a revision etcd has not reached. */
  #continueToken(): string {
    const rng = this.#rng;
    const token = {
      v: rng.pick(['meta.k8s.io/v1', 'meta.k8s.io/v1', 'v0', 5]),
      rv: rng.pick([1 + rng.int(this.#world.maxRv), -1, 0, 'x']),
      start: rng.pick(['obj-0\u0000', 'fuzz-a/obj-0\u0000', '../../', '/', '', 'zzz']),
    };
    return Buffer.from(JSON.stringify(token)).toString('base64url');
  }

  // --- headers ----------------------------------------------------------------------------------

  #headers(auth: AuthVariant, tags: string[]): Record<string, string> {
    const rng = this.#rng;
    const headers: Record<string, string> = {};
    const credential = auth.value(this.#world.token);
    if (credential !== undefined) headers['authorization'] = credential;
    if (rng.chance(0.75)) {
      headers['accept'] = rng.pick(ACCEPTS);
      tags.push(`accept:${headers['accept'].slice(0, 40)}`);
    }
    if (rng.chance(0.08)) headers['user-agent'] = rng.pick(['curl/8.5.0', 'kubectl/v1.24.0 (linux/amd64)', 'Wget/1.21', 'u'.repeat(4000), '', '\u00fc\u00f1']);
    if (rng.chance(0.02)) {
      headers['x-fuzz-padding'] = 'p'.repeat(8000);
      tags.push('header:huge');
    }
    return headers;
  }

  // --- bodies -----------------------------------------------------------------------------------

  #body(method: string, built: BuiltPath, tags: string[]): BuiltBody {
    const rng = this.#rng;
    switch (method) {
      case 'POST':
      case 'PUT':
        if (rng.chance(0.012)) return this.#hugeLegalBody(built, tags);
        return rng.chance(0.88) ? this.#objectBody(built, tags) : this.#junkBody(tags);
      case 'PATCH':
        return rng.chance(0.015) ? this.#hugeLegalPatch(built, tags) : this.#patchBody(built, tags);
      case 'DELETE':
        return rng.chance(0.3) ? this.#deleteOptionsBody(tags) : { query: [], invalidSecretData: false };
      default:
        return rng.chance(0.05) ? this.#junkBody(tags) : { query: [], invalidSecretData: false };
    }
  }

  /** The target's kind (sometimes another one), valid, then mutated. */
  #object(built: BuiltPath, tags: string[], deep: { spec?: DeepSpec }): Obj {
    const rng = this.#rng;
    const t = built.target;
    const r = t && rng.chance(0.85) ? t.resource : rng.pick(this.#world.resources);
    const name = t?.name && built.clean && rng.chance(0.8) ? t.name : rng.pick(r.plural === 'namespaces' ? [...DISPOSABLE_NAMESPACES, ...SETUP_NAMESPACES] : [...CREATABLE_NAMES, ...SETUP_NAMES]);
    let namespace: string | undefined;
    if (r.namespaced) namespace = rng.weighted([[70, t?.namespace], [20, undefined], [10, 'fuzz-b']]);
    const obj = validObject(r, name, namespace, rng);
    tags.push(`kind:${r.kind}`);
    const n = rng.weighted([
      [50, 0],
      [30, 1],
      [15, 2],
      [5, 3],
    ] as const);
    for (let i = 0; i < n; i++) tags.push(this.#mutate(obj, deep));
    if (r.kind === 'Secret' && rng.chance(0.1)) tags.push(this.#mutate(obj, deep, 'invalid-base64'));
    return obj;
  }

  #mutate(obj: Obj, deep: { spec?: DeepSpec }, forced?: 'invalid-base64'): string {
    const rng = this.#rng;
    const which = forced ?? rng.weighted([
      [12, 'wrong-type'],
      [8, 'unknown-field'],
      [6, 'null'],
      [5, 'huge-string'],
      [5, 'long-string'],
      [8, 'deep'],
      [10, 'invalid-base64'],
      [7, 'bad-name'],
      [6, 'bad-labels'],
      [5, 'bad-annotations'],
      [7, 'type-meta'],
      [9, 'metadata-junk'],
      [5, 'secret-type'],
      [2, 'empty'],
      [10, 'proto-keys'],
    ] as const);
    const slots = slotsOf(obj);
    const containers = [obj, ...slots.map(slotValue).filter(isObj)];
    switch (which) {
      case 'wrong-type': {
        const s = rng.pick(slots);
        const current = typeof slotValue(s);
        setSlot(s, rng.pick([42, -1, 1.5, true, false, 'str', [], {}, [1, 'a'], { x: 1 }, 1e308, ''].filter((v) => typeof v !== current || rng.chance(0.2))));
        break;
      }
      case 'unknown-field':
        rng.pick(containers)[`bogus${rng.int(100)}`] = this.#randomValue(2);
        break;
      case 'null':
        setSlot(rng.pick(slots), null);
        break;
      case 'huge-string':
        return `mut:huge-string:${this.#hugeString(obj)}`;
      case 'long-string': {
        const strings = slots.filter((s) => typeof slotValue(s) === 'string');
        if (strings.length > 0) setSlot(rng.pick(strings), 'm'.repeat(rng.pick([1000, 10_000, 65_536])));
        break;
      }
      case 'deep':
        deep.spec ??= { depth: rng.pick(DEPTHS), shape: rng.pick(['array', 'object'] as const) };
        rng.pick(containers)[rng.pick(['extra', 'data', 'rules', 'subjects', 'labels', 'secrets', 'spec'])] = DEEP;
        return `mut:deep:${deep.spec.shape}:${deep.spec.depth}`;
      case 'invalid-base64': {
        const data = isObj(obj['data']) ? obj['data'] : (obj['data'] = {});
        data[rng.pick(['key', 'other', 'new'])] = rng.pick(INVALID_BASE64);
        break;
      }
      case 'bad-name':
        metadataOf(obj)['name'] = rng.pick(['UPPER', 'a/b', '..', '.', '', 'a'.repeat(300), 'ünï', 'a_b', '-a', 'a-', 'a..b', 'system:fuzz', ' ', 'a\u0000b', 123]);
        break;
      case 'bad-labels':
        metadataOf(obj)['labels'] = rng.pick<unknown>([
          { 'bad key!': 'v' },
          { k: 'bad value!' },
          { ['a'.repeat(64)]: 'v' },
          { 'UPPER_/x': 'v' },
          { 'example.com/': 'v' },
          { k: 'v'.repeat(64) },
          { k: 5 },
          ['a'],
          'str',
          { '': 'v' },
        ]);
        break;
      case 'bad-annotations':
        metadataOf(obj)['annotations'] = rng.pick<unknown>([{ '': 'x' }, { 'a/b/c': 'x' }, { 'bad key': 'x' }, { k: 5 }, { k: null }, [], { k: 'x'.repeat(70_000) }]);
        break;
      case 'type-meta':
        Object.assign(
          obj,
          rng.pick<Obj>([
            { apiVersion: 'v2' },
            { apiVersion: `${RBAC}/v1` },
            { apiVersion: 'v1' },
            { kind: 'Pod' },
            { kind: String(obj['kind']).toLowerCase() },
            { kind: '' },
            { apiVersion: 5 },
            { kind: null },
            { apiVersion: undefined, kind: undefined },
            { apiVersion: 'apps/v1', kind: 'Deployment' },
          ]),
        );
        break;
      case 'metadata-junk':
        Object.assign(
          metadataOf(obj),
          rng.pick<Obj>([
            { resourceVersion: rng.pick(['abc', '-1', '0', '1', String(1 + rng.int(this.#world.maxRv)), '99999999999999999999', 5]) },
            { uid: rng.pick(['not-a-uid', '', 7]) },
            { name: undefined, generateName: rng.pick(['gen-', 'BAD-', '', 'x'.repeat(300)]) },
            { finalizers: rng.pick<unknown>([['example.com/fuzz'], ['bad finalizer!'], ['kubernetes'], 'x', [1]]) },
            {
              ownerReferences: rng.pick<unknown>([
                [{ apiVersion: 'v1', kind: 'X', name: 'y', uid: 'z' }],
                [{}],
                'x',
                [
                  { apiVersion: 'v1', kind: 'X', name: 'y', uid: 'z', controller: true },
                  { apiVersion: 'v1', kind: 'Y', name: 'y', uid: 'w', controller: true },
                ],
              ]),
            },
            { managedFields: rng.pick<unknown>([[{ manager: 5 }], 'x', [{ manager: 'm', operation: 'Junk', fieldsType: 'FieldsV1', fieldsV1: { 'f:x': {} } }], [{}]]) },
            { creationTimestamp: rng.pick(['yesterday', '2020-01-01T00:00:00Z', 5]) },
            { deletionTimestamp: '2020-01-01T00:00:00Z', deletionGracePeriodSeconds: rng.pick([-5, 0, 'x']) },
            { namespace: rng.pick(['other-ns', '', 'UPPER', 5]) },
            { selfLink: '/api/v1/x', clusterName: 'c' },
          ]),
        );
        break;
      case 'secret-type':
        Object.assign(
          obj,
          rng.pick<Obj>([
            { type: 'kubernetes.io/tls' },
            { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'bm90IGpzb24=' } },
            { type: 'kubernetes.io/service-account-token' },
            { type: 'kubernetes.io/basic-auth' },
            { type: 'x'.repeat(300) },
            { type: 5 },
            { immutable: true },
            { immutable: 'yes' },
            { data: { '.': 'YQ==', 'a/b': 'YQ==', ['k'.repeat(300)]: 'YQ==' } },
          ]),
        );
        break;
      case 'proto-keys': {
        // Prototype-named keys are data: kept in maps, dropped from structs, never walked into.
        const key = rng.pick(PROTO_KEYS);
        put(rng.pick(containers), key, rng.chance(0.6) ? protoPoison(rng.int(3)) : rng.pick<unknown>(['v', 'YQ==', 7, [protoPoison(0)]]));
        return `mut:proto-keys:${key}`;
      }
      default:
        for (const k of Object.keys(obj)) if (k !== 'apiVersion' && k !== 'kind') delete obj[k];
    }
    return `mut:${which}`;
  }

  /**
   * A string of 300 KB to 1.45 MB, only where validation refuses it (or decoding drops it): a
   * stored object that large would exceed etcd's 1.5 MiB request limit, which kube answers 500.
   */
  #hugeString(obj: Obj): string {
    const rng = this.#rng;
    const size = rng.pick([300_000, 700_000, 1_450_000]);
    const place = rng.pick(['annotation', 'label', 'name', 'unknown-field', 'secret-data', 'secret-string-data'] as const);
    const meta = metadataOf(obj);
    switch (place) {
      case 'annotation':
        meta['annotations'] = { big: 'a'.repeat(size) };
        break;
      case 'label':
        meta['labels'] = { big: 'l'.repeat(size) };
        break;
      case 'name':
        meta['name'] = 'n'.repeat(size);
        break;
      case 'unknown-field':
        obj['bogusHuge'] = 'u'.repeat(size);
        break;
      case 'secret-data':
        // Valid base64 that decodes to more than the 1 MiB a Secret may hold.
        obj['data'] = { big: 'A'.repeat(1_450_000) };
        break;
      default:
        obj['stringData'] = { big: 's'.repeat(rng.pick([1_100_000, 1_450_000])) };
    }
    return place;
  }

  #randomValue(depth: number): unknown {
    const rng = this.#rng;
    const kind = rng.int(depth > 0 ? 7 : 5);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return rng.chance(0.5);
      case 2:
        return rng.pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308]);
      case 3:
        return rng.pick(['', 'x', 'ünï', '\u0000', 'YQ==', '${x}', 'a'.repeat(100)]);
      case 4:
        return DEEP.toLowerCase();
      case 5:
        return Array.from({ length: rng.int(3) }, () => this.#randomValue(depth - 1));
      default:
        return Object.fromEntries(Array.from({ length: rng.int(3) }, (_, i) => [`k${i}`, this.#randomValue(depth - 1)]));
    }
  }

  #objectBody(built: BuiltPath, tags: string[]): BuiltBody {
    const rng = this.#rng;
    const contentType = rng.weighted(CONTENT_TYPES);
    tags.push(`ct:${contentType ?? 'none'}`);
    const family = familyOf(contentType);
    if (family !== 'protobuf' && rng.chance(0.05)) return { body: this.#deepRawBody(family, tags), contentType, query: [], invalidSecretData: false };
    if (family === 'protobuf' && rng.chance(0.7)) return { body: this.#protobufBody(tags), contentType, query: [], invalidSecretData: false };
    const deep: { spec?: DeepSpec } = {};
    const obj = this.#object(built, tags, deep);
    const { body, intact } = this.#finish(obj, family, deep.spec, tags);
    return { body, contentType, query: [], invalidSecretData: intact && hasInvalidSecretData(obj) };
  }

  /** Serializes (JSON or YAML), splices in the deep value, and sometimes corrupts the bytes. */
  #finish(value: unknown, family: 'json' | 'yaml' | 'protobuf', deep: DeepSpec | undefined, tags: string[]): { body: Buffer; intact: boolean } {
    const rng = this.#rng;
    let text = family === 'yaml' && rng.chance(0.75) ? stringifyYaml(value, { lineWidth: 0 }) : JSON.stringify(value, null, rng.chance(0.1) ? 2 : undefined) ?? 'null';
    if (deep) {
      const d = deepText(deep);
      text = text.split(`"${DEEP}"`).join(d).split(DEEP).join(d);
    }
    const body = Buffer.from(text);
    if (!rng.chance(0.12)) return { body, intact: true };
    return { body: this.#corrupt(body, tags), intact: false };
  }

  #corrupt(body: Buffer, tags: string[]): Buffer {
    const rng = this.#rng;
    const how = rng.pick(['truncate', 'append', 'flip', 'bom', 'nul', 'random', 'empty', 'non-object'] as const);
    tags.push(`bytes:${how}`);
    switch (how) {
      case 'truncate':
        return body.subarray(0, rng.int(body.length));
      case 'append':
        return Buffer.concat([body, Buffer.from(rng.pick(['}', ']]', '\u0000', 'garbage', '{"a":1}', '\n---\nkind: Secret\n']))]);
      case 'flip': {
        const b = Buffer.from(body);
        for (let i = 0; i < 1 + rng.int(8) && b.length > 0; i++) b[rng.int(b.length)] = rng.int(256);
        return b;
      }
      case 'bom':
        return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]);
      case 'nul': {
        const at = rng.int(body.length + 1);
        return Buffer.concat([body.subarray(0, at), Buffer.from([0]), body.subarray(at)]);
      }
      case 'random':
        return rng.bytes(1 + rng.int(4096));
      case 'empty':
        return Buffer.alloc(0);
      default:
        return Buffer.from(rng.pick(['[]', '"x"', '1', 'null', 'true', '{}', '[{}]', '{"metadata":null}']));
    }
  }

  /** Bodies deep by construction: JSON arrays/objects, YAML flow `[[[` and block `- - -` nesting. */
  #deepRawBody(family: 'json' | 'yaml', tags: string[]): Buffer {
    const rng = this.#rng;
    const depth = rng.pick(DEPTHS);
    const field = rng.pick(['data', 'rules', 'bogus', 'subjects', 'secrets']);
    const header = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: deep\n';
    const shape = family === 'json' ? rng.pick(['json-top', 'json-field'] as const) : rng.pick(['yaml-flow', 'yaml-block', 'yaml-block-lines', 'yaml-map-lines', 'yaml-top-block'] as const);
    tags.push(`deep-body:${shape}:${depth}`);
    const lines = (n: number, item: string): string => Array.from({ length: Math.min(n, 700) }, (_, i) => `${' '.repeat(i)}${item}`).join('\n');
    switch (shape) {
      case 'json-top':
        return Buffer.from(deepText({ depth, shape: rng.pick(['array', 'object'] as const) }));
      case 'json-field':
        return Buffer.from(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"deep"},"${field}":${deepText({ depth, shape: 'array' })}}`);
      case 'yaml-flow':
        return Buffer.from(`${header}${field}: ${deepText({ depth, shape: rng.pick(['array', 'object'] as const) })}\n`);
      case 'yaml-block':
        return Buffer.from(`${header}${field}:\n${'- '.repeat(depth)}x\n`);
      case 'yaml-block-lines':
        return Buffer.from(`${header}${field}:\n${lines(depth, '-')} x\n`);
      case 'yaml-map-lines':
        return Buffer.from(`${header}${field}:\n${lines(depth, ' a:')} 1\n`);
      default:
        return Buffer.from(`${'- '.repeat(depth)}x\n`);
    }
  }

  #protobufBody(tags: string[]): Buffer {
    const rng = this.#rng;
    const sample = this.#world.protobufSamples.length > 0 ? rng.pick(this.#world.protobufSamples) : Buffer.from('k8s\u0000');
    const how = rng.pick(['valid', 'truncate', 'flip', 'flip', 'random', 'magic-only', 'magic-random'] as const);
    tags.push(`protobuf:${how}`);
    switch (how) {
      case 'valid':
        return sample;
      case 'truncate':
        return sample.subarray(0, rng.int(sample.length));
      case 'flip': {
        const b = Buffer.from(sample);
        for (let i = 0; i < 1 + rng.int(6); i++) b[rng.int(b.length)] = rng.int(256);
        return b;
      }
      case 'random':
        return rng.bytes(1 + rng.int(2048));
      case 'magic-only':
        return Buffer.from('k8s\u0000');
      default:
        return Buffer.concat([Buffer.from('k8s\u0000'), rng.bytes(1 + rng.int(512))]);
    }
  }

  #junkBody(tags: string[]): BuiltBody {
    const rng = this.#rng;
    const contentType = rng.weighted(CONTENT_TYPES);
    const which = rng.weighted([
      [30, 'random-bytes'],
      [3, 'huge-random-bytes'],
      [10, 'empty'],
      [10, 'truncated-json'],
      [8, 'huge-json-string'],
      [8, 'yaml-aliases'],
      [8, 'yaml-multi-doc'],
      [6, 'yaml-circular'],
      [6, 'yaml-tags'],
      [10, 'non-object-json'],
      [7, 'deep-json'],
    ] as const);
    tags.push(`ct:${contentType ?? 'none'}`, `junk-body:${which}`);
    let body: Buffer;
    switch (which) {
      case 'random-bytes':
        body = rng.bytes(1 + rng.int(4096));
        break;
      case 'huge-random-bytes':
        body = rng.bytes(1_500_000);
        break;
      case 'empty':
        body = Buffer.alloc(0);
        break;
      case 'truncated-json':
        body = Buffer.from('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"trunc"').subarray(0, 1 + rng.int(60));
        break;
      case 'huge-json-string':
        body = Buffer.from(JSON.stringify('j'.repeat(1_450_000)));
        break;
      case 'yaml-aliases': {
        // A small "billion laughs": 9 levels of 9 aliases each.
        const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
        for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
        body = Buffer.from(`${levels.join('\n')}\nkind: Secret\napiVersion: v1\nmetadata: {name: laughs}\n`);
        break;
      }
      case 'yaml-circular':
        body = this.#circularYaml();
        break;
      case 'yaml-multi-doc':
        body = Buffer.from('apiVersion: v1\nkind: Secret\nmetadata: {name: doc1}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: doc2}\n');
        break;
      case 'yaml-tags':
        body = Buffer.from(
          rng.pick(['apiVersion: v1\nkind: Secret\nmetadata: {name: t}\ndata: {k: !!binary YQ==}\n', '!foo {apiVersion: v1}\n', 'apiVersion: !!int 1\n', '? [a]\n: b\n', '<<: {a: 1}\n']),
        );
        break;
      case 'non-object-json':
        body = Buffer.from(rng.pick(['[]', '"x"', '1', 'null', 'true', '[{"kind":"Secret"}]', '{"a":1}{"b":2}']));
        break;
      default:
        body = Buffer.from(deepText({ depth: rng.pick(DEPTHS), shape: rng.pick(['array', 'object'] as const) }));
    }
    return { body, contentType, query: [], invalidSecretData: false };
  }

  /** Anchors can make a YAML document refer to itself: a cycle, not a tree. */
  #circularYaml(): Buffer {
    const rng = this.#rng;
    return Buffer.from(
      rng.pick([
        'apiVersion: v1\nkind: Secret\nmetadata: {name: circ}\nbogus: &b [*b]\n',
        '&r {apiVersion: v1, kind: Secret, metadata: {name: circ}, x: *r}\n',
        'apiVersion: v1\nkind: Secret\nmetadata: &m {name: circ, labels: *m}\n',
        'apiVersion: v1\nkind: ServiceAccount\nmetadata: &m {name: circ, managedFields: [{manager: a, operation: Update, fieldsType: FieldsV1, fieldsV1: *m}]}\n',
        `apiVersion: ${RBAC}/v1\nkind: ClusterRole\nmetadata: {name: circ}\nrules: &r [{apiGroups: [""], resources: [x], verbs: [get], nonResourceURLs: *r}]\n`,
      ]),
    );
  }

  #deleteOptionsBody(tags: string[]): BuiltBody {
    const rng = this.#rng;
    tags.push('body:delete-options');
    const opts: Obj = {
      apiVersion: rng.pick(['v1', 'meta.k8s.io/v1', 'v2', 5]),
      kind: rng.pick(['DeleteOptions', 'Secret', '', 'x']),
    };
    if (rng.chance(0.5)) opts['propagationPolicy'] = rng.pick(['Foreground', 'Orphan', 'Background', 'junk', 5]);
    if (rng.chance(0.4)) opts['gracePeriodSeconds'] = rng.pick([0, -1, 30, 'x', 1e20]);
    if (rng.chance(0.3)) opts['preconditions'] = { uid: rng.pick(['junk', 5, null]), resourceVersion: rng.pick(['1', 'abc', String(1 + rng.int(this.#world.maxRv)), 5]) };
    if (rng.chance(0.3)) opts['dryRun'] = rng.pick<unknown>([['All'], 'All', ['junk'], [5]]);
    if (rng.chance(0.2)) opts['orphanDependents'] = rng.pick<unknown>([true, 'yes']);
    const contentType = rng.chance(0.85) ? 'application/json' : rng.weighted(CONTENT_TYPES);
    return { body: this.#finish(opts, familyOf(contentType), undefined, tags).body, contentType, query: [], invalidSecretData: false };
  }

  #patchBody(built: BuiltPath, tags: string[]): BuiltBody {
    const rng = this.#rng;
    const type = rng.pick(Object.keys(PATCH_TYPES) as PatchType[]);
    const contentType = rng.chance(0.88) ? PATCH_TYPES[type] : rng.weighted(CONTENT_TYPES);
    tags.push(`patch:${type}`, `ct:${contentType ?? 'none'}`);
    const out = type === 'json' ? this.#jsonPatch(built, tags) : type === 'apply' ? this.#applyPatch(built, tags) : this.#mergePatch(built, type === 'strategic', tags);
    return { ...out, contentType };
  }

  /** A merge (or strategic merge) patch: part of a mutated object, sometimes with directives. */
  #mergePatch(built: BuiltPath, strategic: boolean, tags: string[]): Omit<BuiltBody, 'contentType'> {
    const rng = this.#rng;
    if (rng.chance(0.12)) return { body: this.#deepPatch(false, tags), query: [], invalidSecretData: false };
    if (rng.chance(0.06)) {
      tags.push('patch:non-object');
      return { body: Buffer.from(rng.pick(['[]', '"x"', '1', 'null', 'true'])), query: [], invalidSecretData: false };
    }
    const deep: { spec?: DeepSpec } = {};
    const full = this.#object(built, tags, deep);
    const patch: Obj = {};
    for (const [k, v] of Object.entries(full)) if (rng.chance(0.5)) put(patch, k, v);
    if (Object.keys(patch).length === 0) patch['metadata'] = { labels: { patched: String(rng.int(10)) } };
    if (rng.chance(0.1)) put(patch, rng.pick(Object.keys(patch)), null);
    if (rng.chance(0.3)) {
      // Issue 23's attack: `metadata.__proto__` merged into what the object inherits.
      const key = rng.weighted<string>([[3, '__proto__'], [1, 'constructor'], [1, 'prototype'], [1, 'toString']]);
      tags.push(`patch:proto-keys:${key}`);
      put(metadataOf(patch), key, protoPoison(rng.pick([0, 0, 1, 2])));
      if (rng.chance(0.3)) put(patch, rng.pick(PROTO_KEYS), protoPoison(1));
    }
    let directives = false;
    if (strategic) {
      keepOutOfKube500s(patch);
      if (rng.chance(0.3)) {
        directives = true;
        tags.push('patch:directives');
        Object.assign(
          rng.pick([patch, metadataOf(patch)]),
          rng.pick<Obj>([
            { $patch: rng.pick(['delete', 'replace']) },
            { '$setElementOrder/finalizers': ['kubernetes', 'example.com/fuzz'] },
            { '$deleteFromPrimitiveList/finalizers': ['kubernetes'] },
            { $retainKeys: ['metadata', 'x'] },
            { '$setElementOrder/junk': [] },
            { '$setElementOrder/__proto__': [] },
            { '$deleteFromPrimitiveList/constructor': ['x'] },
            { $retainKeys: ['__proto__', 'constructor', 'metadata'] },
          ]),
        );
        // `$setElementOrder/<k>` beside a <k> that is no list is one of kube's own 500s.
        for (const m of [patch, metadataOf(patch)]) {
          for (const k of Object.keys(m)) {
            const field = k.startsWith('$setElementOrder/') ? k.slice('$setElementOrder/'.length) : undefined;
            if (field !== undefined && Object.prototype.hasOwnProperty.call(m, field) && !Array.isArray(m[field])) delete m[k];
          }
        }
      }
    }
    const { body, intact } = this.#finish(patch, 'json', deep.spec, tags);
    return { body, query: [], invalidSecretData: intact && !directives && hasInvalidSecretData(patch) };
  }

  #jsonPatch(built: BuiltPath, tags: string[]): Omit<BuiltBody, 'contentType'> {
    const rng = this.#rng;
    if (built.target?.resource.plural === 'secrets' && rng.chance(0.1)) {
      // One op writing non-base64 Secret data: whatever the object holds, the result cannot decode.
      tags.push('json-patch:invalid-base64');
      const ops = [{ op: rng.pick(['add', 'replace']), path: `/data/${rng.pick(['key', 'new'])}`, value: rng.pick(INVALID_BASE64) }];
      return { body: Buffer.from(JSON.stringify(ops)), query: [], invalidSecretData: true };
    }
    if (rng.chance(0.12)) return { body: this.#deepPatch(true, tags), query: [], invalidSecretData: false };
    if (rng.chance(0.08)) {
      tags.push('json-patch:malformed');
      const bad = rng.pick<unknown>([
        {},
        { op: 'add' },
        'x',
        [[]],
        [null],
        [{ op: 'add', path: '/metadata/labels/x' }],
        [{ path: '/x', value: 1 }],
        [{ op: 'move', path: '/a' }],
        [{ op: 'add', path: 5, value: 1 }],
      ]);
      return { body: Buffer.from(JSON.stringify(bad)), query: [], invalidSecretData: false };
    }
    const deep: { spec?: DeepSpec } = {};
    const ops = Array.from({ length: 1 + rng.int(3) }, () => this.#jsonPatchOp(deep));
    return { body: this.#finish(ops, 'json', deep.spec, tags).body, query: [], invalidSecretData: false };
  }

  #jsonPatchOp(deep: { spec?: DeepSpec }): Obj {
    const rng = this.#rng;
    const path = rng.pick([
      '/metadata/labels/fuzz',
      '/metadata/labels',
      '/metadata/annotations',
      '/metadata/name',
      '/metadata/namespace',
      '/metadata/resourceVersion',
      '/metadata/finalizers/-',
      '/metadata/labels/a~1b',
      '/metadata/labels/~2bad',
      '/metadata/__proto__',
      '/metadata/__proto__/deletionTimestamp',
      '/constructor/prototype/x',
      '/__proto__',
      '/metadata/labels/constructor',
      '/metadata/annotations/toString',
      '/data/__proto__',
      '/metadata/constructor/prototype',
      '/data/key',
      '/rules/0/verbs/-',
      '/subjects/0/name',
      '/secrets/-',
      '/rules/99999999999',
      '/rules/-1',
      '/nope/deeper/path',
      '',
      '/',
      'no-slash',
    ]);
    const op: Obj = { op: rng.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'junk']), path };
    if (op['op'] === 'move' || op['op'] === 'copy') op['from'] = rng.pick(['/metadata/labels', '/metadata', '/nope', '/metadata/name', '', '/metadata/__proto__', '/constructor', '/data/__proto__']);
    if (op['op'] !== 'remove') {
      if (rng.chance(0.15)) {
        deep.spec ??= { depth: rng.pick(DEPTHS), shape: rng.pick(['array', 'object'] as const) };
        op['value'] = DEEP;
      } else {
        op['value'] = rng.chance(0.05) ? 'v'.repeat(65_536) : rng.pick<unknown>(['fuzz', 'dmFsdWU=', { a: 'b' }, ['get'], null, 5, this.#randomValue(2), protoPoison(1)]);
      }
    }
    return op;
  }

  /** A patch whose one value is nested `depth` deep, in a field the kind has or an unknown one. */
  #deepPatch(jsonPatch: boolean, tags: string[]): Buffer {
    const rng = this.#rng;
    const d: DeepSpec = { depth: rng.pick([150, 1000, 5000, 10_000, 10_000]), shape: rng.pick(['array', 'object'] as const) };
    const field = rng.pick(['metadata/labels', 'metadata/annotations', 'data', 'rules', 'subjects', 'spec', 'bogus']);
    tags.push(`deep-patch:${field}:${d.shape}:${d.depth}`);
    if (jsonPatch) return Buffer.from(`[{"op":"add","path":"/${field}","value":${deepText(d)}}]`);
    const [outer, inner] = field.split('/');
    return Buffer.from(inner ? `{"${outer}":{"${inner}":${deepText(d)}}}` : `{"${outer}":${deepText(d)}}`);
  }

  /**
   * A huge body every limit allows: near 3 MiB with the bulk in a field decoding drops, thousands
   * of labels, annotations or data keys, or a string as long as the annotation limit lets it be.
   * What is stored stays far below etcd's request limit, so a 413 is wrong.
   */
  #hugeLegalBody(built: BuiltPath, tags: string[]): BuiltBody {
    const rng = this.#rng;
    const t = built.target;
    const r = t?.resource ?? rng.pick(this.#world.resources);
    const name = t?.name && built.clean ? t.name : rng.pick(CREATABLE_NAMES);
    const obj = validObject(r, name, r.namespaced ? t?.namespace : undefined, rng);
    const meta = metadataOf(obj);
    const how = rng.pick(['bulk-dropped', 'many-labels', 'many-annotations', 'long-annotation', 'many-data'] as const);
    tags.push(`kind:${r.kind}`, `huge-legal:${how}`);
    let family: 'json' | 'yaml' = 'json';
    switch (how) {
      case 'bulk-dropped':
        // The bulk in a field the kind does not have: decoding drops it.
        obj['bogusBulk'] = 'u'.repeat(BODY_LIMIT - 64 * 1024);
        break;
      case 'many-labels':
        meta['labels'] = objOf(Array.from({ length: 5000 }, (_, i) => [`l${i}`, 'v']));
        break;
      case 'many-annotations':
        meta['annotations'] = objOf(Array.from({ length: 2000 }, (_, i) => [`a${i}`, 'x'.repeat(100)]));
        break;
      case 'long-annotation':
        // The annotations' total limit is 256 KiB: one value just below it, in YAML half the time.
        meta['annotations'] = { long: 'x'.repeat(250_000) };
        family = rng.chance(0.5) ? 'yaml' : 'json';
        break;
      default: {
        const keys = Array.from({ length: 20_000 }, (_, i): [string, unknown] => [`k${i}`, 'YQ==']);
        if (r.kind === 'ConfigMap' || r.kind === 'Secret') obj['data'] = objOf(keys);
        else obj['bogusKeys'] = objOf(keys);
      }
    }
    const text = family === 'yaml' ? stringifyYaml(obj, { lineWidth: 0 }) : JSON.stringify(obj);
    return {
      body: Buffer.from(text),
      contentType: family === 'yaml' ? 'application/yaml' : 'application/json',
      query: [],
      invalidSecretData: false,
      mustAccept: `a huge but legal body (${how}, ${text.length} bytes)`,
    };
  }

  /** A huge patch every limit allows (see #hugeLegalBody): merge, JSON patch of thousands of operations, apply. */
  #hugeLegalPatch(built: BuiltPath, tags: string[]): BuiltBody {
    const rng = this.#rng;
    const how = rng.pick(['merge-bulk', 'merge-annotations', 'json-many-ops', 'apply-long-string'] as const);
    tags.push(`huge-legal:${how}`);
    let body: string;
    let contentType: string;
    const query: string[] = [];
    switch (how) {
      case 'merge-bulk':
        body = JSON.stringify({ metadata: { labels: { patched: 'yes' } }, bogusBulk: 'u'.repeat(BODY_LIMIT - 64 * 1024) });
        contentType = rng.pick([PATCH_TYPES.merge, PATCH_TYPES.strategic]);
        break;
      case 'merge-annotations':
        body = JSON.stringify({ metadata: { annotations: objOf(Array.from({ length: 2000 }, (_, i) => [`m${i}`, 'y'.repeat(100)])) } });
        contentType = PATCH_TYPES.merge;
        break;
      case 'json-many-ops':
        // Below kube's 10,000 operations: an annotations map, then 9,000 members of it.
        body = JSON.stringify([{ op: 'add', path: '/metadata/annotations', value: {} }, ...Array.from({ length: 9000 }, (_, i) => ({ op: 'add', path: `/metadata/annotations/j${i}`, value: 'v' }))]);
        contentType = PATCH_TYPES.json;
        break;
      default: {
        const t = built.target;
        const r = t?.resource ?? rng.pick(this.#world.resources);
        const obj = validObject(r, t?.name && built.clean ? t.name : rng.pick(CREATABLE_NAMES), r.namespaced ? t?.namespace : undefined, rng);
        metadataOf(obj)['annotations'] = { long: 'z'.repeat(250_000) };
        body = stringifyYaml(obj, { lineWidth: 0 });
        contentType = PATCH_TYPES.apply;
        query.push('fieldManager=fuzz-huge', 'force=true');
      }
    }
    return { body: Buffer.from(body), contentType, query, invalidSecretData: false, mustAccept: `a huge but legal patch (${how}, ${body.length} bytes)` };
  }

  /** A server-side apply body: a mutated object in YAML (or JSON, which is YAML too). */
  #applyPatch(built: BuiltPath, tags: string[]): Omit<BuiltBody, 'contentType'> {
    const rng = this.#rng;
    const query: string[] = [];
    if (rng.chance(0.85)) query.push(`fieldManager=${rng.pick(['fuzz-apply', 'other-manager'])}`);
    if (rng.chance(0.1)) query.push(`force=${rng.pick(['true', 'false', 'junk'])}`);
    if (rng.chance(0.1)) return { body: this.#deepRawBody('yaml', tags), query, invalidSecretData: false };
    if (rng.chance(0.04)) {
      tags.push('apply:circular-yaml');
      return { body: this.#circularYaml(), query, invalidSecretData: false };
    }
    const deep: { spec?: DeepSpec } = {};
    const obj = this.#object(built, tags, deep);
    const { body, intact } = this.#finish(obj, 'yaml', deep.spec, tags);
    return { body, query, invalidSecretData: intact && hasInvalidSecretData(obj) };
  }
}

/**
 * Leaves out of a strategic merge patch what kube's own strategic merge answers 500 to (plinth
 * copies those answers, so they would be findings about kube, not plinth): elements of a merge-keyed
 * list without their key or of mixed types. `secrets` goes entirely: a stored ServiceAccount may
 * hold a nameless reference (`{}`, which kube keeps too), and then any `secrets` patch is that 500.
 * Directives are limited likewise: `$patch` other than delete/replace in a map, or a non-list
 * `$setElementOrder`, are kube 500s.
 */
function keepOutOfKube500s(patch: Obj): void {
  const wellKeyed = (v: unknown, key: string): boolean => Array.isArray(v) && v.every((e) => isObj(e) && typeof e[key] === 'string' && !('$patch' in e));
  delete patch['secrets'];
  const meta = patch['metadata'];
  if (isObj(meta)) {
    if ('ownerReferences' in meta && !wellKeyed(meta['ownerReferences'], 'uid')) delete meta['ownerReferences'];
    if (Array.isArray(meta['finalizers'])) meta['finalizers'] = meta['finalizers'].filter((f) => typeof f === 'string' && f !== DEEP);
  }
  const status = patch['status'];
  if (isObj(status) && 'conditions' in status && !wellKeyed(status['conditions'], 'type')) delete status['conditions'];
}

/** Node answers 431 itself past 16 KiB of request line and headers: stay under it, padding first. */
function fitHeaderLimit(path: string, headers: Record<string, string>, tags: string[]): void {
  const size = (): number => path.length + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  for (const h of ['x-fuzz-padding', 'user-agent', 'accept']) {
    if (size() <= 14_000) return;
    if (headers[h] !== undefined) {
      delete headers[h];
      tags.push(`header:${h}-dropped-for-size`);
    }
  }
}

function familyOf(contentType: string | undefined): 'json' | 'yaml' | 'protobuf' {
  const mt = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mt === 'application/yaml' || mt === 'application/apply-patch+yaml') return 'yaml';
  if (mt === 'application/vnd.kubernetes.protobuf') return 'protobuf';
  return 'json';
}

// ---------------------------------------------------------------------------------------------
// Judging answers
// ---------------------------------------------------------------------------------------------

interface Failure {
  check: string;
  /** Groups failures of one cause (numbers and quoted names blanked out). */
  cause: string;
  request?: FuzzRequest | WireRequest;
  answer?: string;
  detail?: string;
}

function contentTypeOf(a: Answer): string {
  return String(a.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** The wire fields of a protobuf message, by field number (varints as numbers, the rest as bytes). */
function protoFields(buf: Buffer): Map<number, Array<number | Buffer>> {
  const out = new Map<number, Array<number | Buffer>>();
  let i = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    let value: number | Buffer;
    switch (key & 7) {
      case 0:
        value = varint();
        break;
      case 1:
        value = buf.subarray(i, (i += 8));
        break;
      case 2: {
        const len = varint();
        if (i + len > buf.length) throw new Error('truncated field');
        value = buf.subarray(i, (i += len));
        break;
      }
      case 5:
        value = buf.subarray(i, (i += 4));
        break;
      default:
        throw new Error(`wire type ${key & 7}`);
    }
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

/** kube's protobuf envelope (`k8s\0` + runtime.Unknown) around a Status, read into its JSON shape. */
function decodeProtobufStatus(buf: Buffer): Obj {
  if (buf.subarray(0, 4).toString('latin1') !== 'k8s\u0000') throw new Error('no k8s protobuf magic');
  const bytes = (m: Map<number, Array<number | Buffer>>, f: number): Buffer => {
    const v = m.get(f)?.[0];
    return Buffer.isBuffer(v) ? v : Buffer.alloc(0);
  };
  const text = (m: Map<number, Array<number | Buffer>>, f: number): string | undefined => (m.has(f) ? bytes(m, f).toString('utf8') : undefined);
  const unknown = protoFields(buf.subarray(4));
  const typeMeta = protoFields(bytes(unknown, 1));
  const status = protoFields(bytes(unknown, 2));
  const code = status.get(6)?.[0];
  return { apiVersion: text(typeMeta, 1), kind: text(typeMeta, 2), status: text(status, 2), message: text(status, 3), reason: text(status, 4), code };
}

/** The answer's body decoded by its Content-Type; undefined when it is of another type. */
function decodeAnswer(a: Answer): { value?: unknown; error?: string } | undefined {
  const ct = contentTypeOf(a);
  try {
    if (ct === 'application/json') return { value: JSON.parse(a.body.toString('utf8')) };
    if (ct === 'application/yaml') return { value: parseYaml(a.body.toString('utf8')) };
    if (ct === 'application/vnd.kubernetes.protobuf' && a.status >= 300) return { value: decodeProtobufStatus(a.body) };
  } catch (e) {
    return { error: `${ct} body does not decode: ${(e as Error).message.split('\n')[0]}` };
  }
  return undefined;
}

function statusProblems(v: unknown, code: number): string[] {
  if (!isObj(v)) return ['the error body is not an object'];
  const problems: string[] = [];
  if (v['kind'] !== 'Status') problems.push(`kind is ${JSON.stringify(v['kind'])}, not "Status"`);
  if (v['apiVersion'] !== 'v1') problems.push(`apiVersion is ${JSON.stringify(v['apiVersion'])}, not "v1"`);
  if (v['status'] !== 'Failure') problems.push(`status is ${JSON.stringify(v['status'])}, not "Failure"`);
  if (v['code'] !== code) problems.push(`code ${JSON.stringify(v['code'])} is not the HTTP status ${code}`);
  // kube omits an unknown reason (""); a present one is a non-empty string.
  if (v['reason'] !== undefined && (typeof v['reason'] !== 'string' || v['reason'] === '')) problems.push(`reason is ${JSON.stringify(v['reason'])}`);
  return problems;
}

/** Blanks out what varies between instances of one cause, so they group together. */
function normalizeCause(s: string): string {
  return s
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, 'N')
    .slice(0, 160);
}

function isPrintable(b: Buffer): boolean {
  return /^[\x09\x0a\x0d\x20-\x7e\u00a0-\uffff]*$/.test(b.subarray(0, 2000).toString('utf8'));
}

function briefAnswer(a: Answer): string {
  const head = a.body.subarray(0, 400);
  return `${a.status} ${contentTypeOf(a) || '(no content type)'} ${isPrintable(head) ? head.toString('utf8') : `hex ${head.subarray(0, 64).toString('hex')}…`}`;
}

/**
 * The 5xx kube-apiserver 1.24 itself answers for what the generator sends to core/v1's computed
 * and connect sub-resources, so plinth must answer them too: an unknown component status (500
 * `Component not found`), a proxy, log or stream whose backend is unknown or unreachable (500,
 * 502, 503: no node address, no endpoints, a failed dial), a Binding that fails validation
 * (kube answers its aggregate error as a 500), and a create (POST) whose metadata.resourceVersion
 * is a non-zero number: kube's etcd3 store refuses it with a plain error, a 500 with no reason
 * (the generator's `metadata-junk` sends such values; see refuseResourceVersionOnCreate).
 */
function kubeAnswers5xx(method: string, path: string, status: number, body: unknown): boolean {
  const p = path.split('?')[0]!;
  const message = isObj(body) && typeof body['message'] === 'string' ? body['message'] : '';
  if (/^\/api\/v1\/componentstatuses\/[^/]+$/.test(p)) return status === 500 && (method === 'HEAD' || message.startsWith('Component not found: '));
  if (/^\/api\/v1\/(namespaces\/[^/]+\/)?(pods|services|nodes)\/[^/]+\/(proxy|log|exec|attach|portforward)(\/|$)/.test(p)) return status >= 500 && status <= 503;
  if (/^\/api\/v1\/namespaces\/[^/]+\/(pods\/[^/]+\/binding|bindings)$/.test(p)) return status === 500;
  if (method === 'POST' && status === 500 && message === 'resourceVersion should not be set on objects to be created') return true;
  return false;
}

function judge(req: FuzzRequest, outcome: Outcome): Failure[] {
  if (outcome.error !== undefined) return [{ check: 'connection', cause: normalizeCause(outcome.error), request: req, detail: outcome.error }];
  const a = outcome.answer;
  const failures: Failure[] = [];
  const fail = (check: string, cause: string): void => void failures.push({ check, cause, request: req, answer: briefAnswer(a) });
  const decoded = a.streamed || req.method === 'HEAD' || a.body.length === 0 ? undefined : decodeAnswer(a);
  if (a.status >= 500 && !kubeAnswers5xx(req.method, req.path, a.status, decoded?.value)) {
    const v = decoded?.value;
    fail('5xx', normalizeCause(isObj(v) ? `${a.status} ${String(v['reason'])}: ${String(v['message'])}` : `${a.status} ${a.body.subarray(0, 100).toString('utf8')}`));
  }
  const ok = a.status >= 200 && a.status < 300;
  if (req.mustRefuse && ok) fail('accepted what must be refused', req.mustRefuse);
  if (req.mustDenyAuth && a.status !== 401 && a.status !== 403) fail('not 401/403', req.mustDenyAuth);
  if (req.mustAccept && a.status === 413) fail('a legal input refused as too large', req.mustAccept);
  if (req.dropsMember && ok && isObj(decoded?.value) && isObj(decoded.value['metadata']) && Object.hasOwn(decoded.value['metadata'], req.dropsMember)) {
    fail('a member kube drops was kept', `metadata.${req.dropsMember} of a patch answered with the object holding it`);
  }
  if (decoded?.error) fail(ok ? 'undecodable success body' : 'undecodable error body', normalizeCause(decoded.error));
  else if (decoded && !ok) {
    const problems = statusProblems(decoded.value, a.status);
    if (problems.length > 0) fail('error answer is not a Status', normalizeCause(`${a.status}: ${problems.join('; ')}`));
  }
  return failures;
}

// ---------------------------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------------------------

function preview(body: Buffer): string {
  if (!isPrintable(body)) return `hex ${body.subarray(0, 64).toString('hex')}${body.length > 64 ? '…' : ''}`;
  const text = body.toString('utf8');
  return JSON.stringify(text.length > 240 ? `${text.slice(0, 180)} … ${text.slice(-40)}` : text);
}

function describeRequest(r: FuzzRequest | WireRequest, token: string): string {
  const lines = [`${'index' in r ? `#${r.index} ` : ''}${r.method} ${r.path.length > 400 ? `${r.path.slice(0, 400)}… (${r.path.length} chars)` : r.path}`];
  for (const [k, v] of Object.entries(r.headers)) {
    const shown = v.split(token).join('<admin token>');
    lines.push(`${k}: ${shown.length > 120 ? `${shown.slice(0, 80)}… (${shown.length} chars)` : shown}`);
  }
  if (r.body) lines.push(`body (${r.body.length} bytes${r.chunked ? ', chunked' : ''}): ${preview(r.body)}`);
  if ('tags' in r) lines.push(`generator: ${r.tags.join(', ')}`);
  return lines.map((l) => `      ${l}`).join('\n');
}

function requestSize(r: FuzzRequest | WireRequest | undefined): number {
  return r ? r.path.length + (r.body?.length ?? 0) + Object.values(r.headers).join('').length : 0;
}

/** One entry per cause with its count and its smallest reproduction. */
function report(failures: Failure[], token: string, sent: number): string {
  const groups = new Map<string, { count: number; smallest: Failure }>();
  for (const f of failures) {
    const key = `${f.check}: ${f.cause}`;
    const g = groups.get(key);
    if (!g) groups.set(key, { count: 1, smallest: f });
    else {
      g.count++;
      if (requestSize(f.request) < requestSize(g.smallest.request)) g.smallest = f;
    }
  }
  const sorted = [...groups.entries()].sort((a, b) => b[1].count - a[1].count);
  const out = [`fuzz: ${failures.length} failure(s) of ${groups.size} kind(s) in ${sent} requests (seed ${SEED}; replay: ${REPLAY})`];
  sorted.slice(0, 25).forEach(([key, { count, smallest }], i) => {
    out.push('', `[${i + 1}] ${key} (${count}×)`);
    if (smallest.request) out.push('    smallest reproduction:', describeRequest(smallest.request, token));
    if (smallest.answer) out.push(`    answered: ${smallest.answer.split(token).join('<admin token>').slice(0, 400)}`);
    if (smallest.detail) out.push(`    ${smallest.detail.split(token).join('<admin token>').slice(0, 3000)}`);
  });
  if (sorted.length > 25) out.push('', `… and ${sorted.length - 25} more kinds`);
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Setup and the integrity pass
// ---------------------------------------------------------------------------------------------

async function create(c: WireClient, token: string, r: ServedResource, obj: Obj, namespace?: string): Promise<void> {
  const path = collectionPath(r, namespace);
  const o = await c.send({ method: 'POST', path, headers: { ...bearer(token), 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(obj)) });
  assert.equal(o.answer?.status, 201, `setup: POST ${path}: ${o.error ?? o.answer?.body.toString().slice(0, 300)}`);
}

/** Setup objects of every kind, their protobuf encodings, and the revision etcd reached. */
async function populate(c: WireClient, token: string, resources: ServedResource[]): Promise<{ protobufSamples: Buffer[]; maxRv: number }> {
  const rng = new Rng(1);
  const namespaces = resources.find((r) => r.plural === 'namespaces' && r.prefix === '/api/v1');
  assert.ok(namespaces, 'discovery lists no namespaces');
  for (const ns of SETUP_NAMESPACES) await create(c, token, namespaces, validObject(namespaces, ns, undefined, rng));
  // What can be created and read back: the review resources answer a create and keep nothing.
  const creatable = resources.filter((r) => r !== namespaces && r.verbs.includes('create') && r.verbs.includes('get'));
  const samples: Buffer[] = [];
  // Versions of one storage share its objects: created through the first version served.
  const populated = new Set<string>();
  for (const r of creatable) {
    if (r.storageVersionHash !== undefined) {
      if (populated.has(r.storageVersionHash)) continue;
      populated.add(r.storageVersionHash);
    }
    for (const ns of r.namespaced ? SETUP_NAMESPACES.slice(0, 2) : [undefined]) {
      for (const name of SETUP_NAMES) await create(c, token, r, validObject(r, name, ns, rng), ns);
    }
  }
  for (const r of [namespaces, ...creatable]) {
    const path = r === namespaces ? objectPath(r, SETUP_NAMESPACES[0]!) : objectPath(r, SETUP_NAMES[0]!, r.namespaced ? SETUP_NAMESPACES[0] : undefined);
    const o = await c.send({ method: 'GET', path, headers: { ...bearer(token), accept: 'application/vnd.kubernetes.protobuf' }, whole: true });
    if (o.answer?.status === 200) samples.push(o.answer.body);
  }
  const list = await getJson<{ metadata: { resourceVersion: string } }>(c, token, '/api/v1/namespaces');
  return { protobufSamples: samples, maxRv: Number(list.metadata.resourceVersion) };
}

/** A list of about 2.8 MB (four ConfigMaps of 700 KB) for the slow clients that never read it. */
async function populateLargeList(c: WireClient, token: string): Promise<void> {
  const post = async (path: string, obj: Obj): Promise<void> => {
    const o = await c.send({ method: 'POST', path, headers: { ...bearer(token), 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(obj)) });
    assert.equal(o.answer?.status, 201, `setup: POST ${path}: ${o.error ?? o.answer?.body.toString().slice(0, 300)}`);
  };
  await post('/api/v1/namespaces', { metadata: { name: BIG_NAMESPACE } });
  for (let i = 0; i < 4; i++) await post(`/api/v1/namespaces/${BIG_NAMESPACE}/configmaps`, { metadata: { name: `big-${i}` }, data: { blob: 'b'.repeat(700_000) } });
}

interface Listed {
  resource: ServedResource;
  item: Obj;
}

function nameOf(item: Obj): { name: string; namespace?: string; rv: string } {
  const meta = isObj(item['metadata']) ? item['metadata'] : {};
  const namespace = typeof meta['namespace'] === 'string' ? meta['namespace'] : undefined;
  return { name: String(meta['name']), rv: String(meta['resourceVersion']), ...(namespace ? { namespace } : {}) };
}

async function listAll(c: WireClient, token: string, resources: ServedResource[]): Promise<Listed[]> {
  const out: Listed[] = [];
  for (const r of resources.filter((x) => x.verbs.includes('list'))) {
    const list = await getJson<{ items: Obj[] }>(c, token, collectionPath(r));
    for (const item of list.items) out.push({ resource: r, item });
  }
  return out;
}

/**
 * Waits (up to 20 s) until two listings half a second apart agree: the namespace controller may
 * still be emptying and finalizing namespaces the run deleted.
 */
async function settle(c: WireClient, token: string, resources: ServedResource[]): Promise<Listed[]> {
  const fingerprint = (l: Listed[]): string =>
    l
      .map(({ resource, item }) => {
        const n = nameOf(item);
        return `${resource.prefix}/${resource.plural}/${n.namespace ?? ''}/${n.name}@${n.rv}`;
      })
      .sort()
      .join('\n');
  const deadline = Date.now() + 20_000;
  let last = await listAll(c, token, resources);
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await listAll(c, token, resources);
    if (fingerprint(now) === fingerprint(last) || Date.now() > deadline) return now;
    last = now;
  }
}

function withoutTypeMeta(o: unknown): unknown {
  if (!isObj(o)) return o;
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

/**
 * Every listed object reads back by name identical to its list item, and PUT back unchanged with
 * dryRun=All it is accepted (200): what was stored still validates. An object may change or vanish
 * between the list and the checks — one being deleted can be finalized meanwhile, and objects in a
 * terminating namespace are removed by the namespace controller — so a 404/409 or a difference
 * only counts when a fresh list still shows the object, unchanged. Otherwise a deletionTimestamp
 * changes nothing: kube accepts updates of objects being deleted (that is how finalizers are
 * removed), and an unchanged update of one in a terminating namespace.
 */
async function checkIntegrity(c: WireClient, token: string, resources: ServedResource[], failures: Failure[]): Promise<{ checked: number; beingDeleted: number }> {
  const listed = await settle(c, token, resources);
  // Asked of a fresh list, not of GET by name: that is what is being checked.
  const stillListed = async (r: ServedResource, n: { name: string; namespace?: string; rv: string }): Promise<boolean> => {
    const list = await getJson<{ items: Obj[] }>(c, token, collectionPath(r, n.namespace));
    return list.items.some((i) => nameOf(i).name === n.name && nameOf(i).rv === n.rv);
  };
  for (const { resource: r, item } of listed) {
    // A computed resource (componentstatuses) is read, never written back.
    if (!r.verbs.includes('update')) continue;
    const n = nameOf(item);
    const path = objectPath(r, n.name, n.namespace);
    const get: WireRequest = { method: 'GET', path, headers: { ...bearer(token), accept: 'application/json' }, whole: true };
    const got = await c.send(get);
    const body = got.answer?.status === 200 ? (JSON.parse(got.answer.body.toString('utf8')) as unknown) : undefined;
    if (!isDeepStrictEqual(withoutTypeMeta(body), withoutTypeMeta(item))) {
      if (await stillListed(r, n)) {
        failures.push({
          check: 'integrity',
          cause: `GET by name ${body === undefined ? 'failed' : 'differs from the list item'} (${r.kind})`,
          request: get,
          detail: `answered: ${got.error ?? got.answer?.body.toString('utf8').slice(0, 600)}\n    list item: ${JSON.stringify(item).slice(0, 600)}`,
        });
      }
      continue;
    }
    const put: WireRequest = {
      method: 'PUT',
      path: `${path}?dryRun=All`,
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json' },
      body: Buffer.from(JSON.stringify({ apiVersion: r.apiVersion, kind: r.kind, ...item })),
    };
    const o = await c.send(put);
    if (o.answer?.status !== 200 && (await stillListed(r, n))) {
      failures.push({
        check: 'integrity',
        cause: `a stored ${r.kind} does not re-validate (unchanged PUT with dryRun=All: ${o.answer?.status ?? o.error})`,
        request: put,
        ...(o.answer ? { answer: briefAnswer(o.answer) } : { detail: o.error }),
      });
    }
  }
  const beingDeleted = listed.filter(({ item }) => isObj(item['metadata']) && item['metadata']['deletionTimestamp'] !== undefined).length;
  return { checked: listed.length, beingDeleted };
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/** Reports errors thrown outside any request (a crash of the in-process server) until disposed. */
function trapProcessErrors(onError: (what: string) => void): () => void {
  const onException = (e: unknown): void => onError(`uncaught exception: ${(e as Error)?.stack ?? String(e)}`);
  const onRejection = (e: unknown): void => onError(`unhandled rejection: ${(e as Error)?.stack ?? String(e)}`);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}

const env = usePlinth();

test('fuzz: seeded requests get no 5xx, reset or hang, errors are Status objects, and stored objects stay valid', async (t) => {
  const started = Date.now();
  console.log(`fuzz: seed ${SEED}, ${COUNT} requests, concurrency ${CONCURRENCY} (replay: ${REPLAY})`);
  const server = env.plinth.server;
  assert.ok(server.caFile, 'the harness serves a self-signed certificate');
  const token = server.adminToken;
  const client = new WireClient('127.0.0.1', server.port, readFileSync(server.caFile, 'utf8'), CONCURRENCY);
  t.after(() => client.close());

  const protos = watchPrototypes();
  const resources = await discover(client, token);
  const { protobufSamples, maxRv } = await populate(client, token, resources);
  await populateLargeList(client, token);
  const generator = new RequestGenerator({ resources, token, protobufSamples, maxRv }, SEED);

  const failures: Failure[] = [];
  const statuses = new Map<string, number>();
  const inFlight = new Map<number, FuzzRequest>();
  let next = 0;
  let sent = 0;
  let aborted: string | undefined;
  const abort = (why: string): void => {
    aborted ??= why;
  };
  // An error outside any request would end a plinth process: stop generating at once (unless
  // PLINTH_FUZZ_KEEP_GOING). The request that caused it usually never gets an answer, so what of
  // the requests in flight is still unanswered 2 s later is named.
  const crashReports: Array<Promise<void>> = [];
  const release = trapProcessErrors((what) => {
    if (aborted) return;
    if (!KEEP_GOING) abort('the process reported an error outside any request');
    const atTheTime = [...inFlight.values()];
    crashReports.push(
      (async () => {
        await new Promise((r) => setTimeout(r, 2000));
        const unanswered = atTheTime.filter((r) => inFlight.has(r.index));
        const suspects = unanswered.length > 0 ? unanswered : atTheTime;
        failures.push({
          check: 'server process error',
          cause: normalizeCause(what.split('\n')[0]!),
          ...(suspects.length === 1 ? { request: suspects[0] } : {}),
          detail: [
            what.split('\n').slice(0, 10).join('\n    '),
            ...(suspects.length === 1 ? [] : [`${unanswered.length > 0 ? 'still unanswered 2 s later' : 'in flight at the time'}:`, ...suspects.map((r) => describeRequest(r, token))]),
          ].join('\n    '),
        });
        if (!KEEP_GOING) client.close();
      })(),
    );
  });
  t.after(release);

  // Slow clients hold connections for the whole run; a probe of its own must still be answered.
  const ca = readFileSync(server.caFile, 'utf8');
  const slow = startSlowClients({ host: '127.0.0.1', port: server.port, ca, token, tricklers: 3, nonReaders: 3, largePath: `/api/v1/namespaces/${BIG_NAMESPACE}/configmaps` });
  const probe = startProbe({ host: '127.0.0.1', port: server.port, ca, token, paths: ['/readyz', '/api/v1/namespaces/default'], intervalMs: 500, deadlineMs: 2000 });
  t.after(async () => {
    slow.stop();
    await probe.stop();
  });
  await slow.ready;
  await probe.once();

  const fuzzStart = Date.now();
  const worker = async (): Promise<void> => {
    while (next < COUNT && !aborted) {
      const req = generator.next(next++);
      inFlight.set(req.index, req);
      const outcome = await client.send(req);
      inFlight.delete(req.index);
      if (aborted) return;
      sent++;
      const key = outcome.answer ? String(outcome.answer.status) : 'no answer';
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      failures.push(...judge(req, outcome));
      // The server runs in this process: a prototype-named key walked into would show here.
      const damage = protos.damage();
      if (damage) {
        const others = [...inFlight.values()];
        failures.push({ check: 'prototype changed', cause: normalizeCause(damage), request: req, detail: `${damage}${others.length > 0 ? `\n    also in flight:\n${others.map((r) => describeRequest(r, token)).join('\n')}` : ''}` });
      }
      if (outcome.error !== undefined) {
        // One broken connection may be that request's alone; a server that stopped answering ends the run.
        const probe = await client.send({ method: 'GET', path: '/readyz', headers: bearer(token) }, 5000);
        if (probe.answer?.status !== 200) abort(`the server stopped answering after request #${req.index} (${outcome.error})`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await Promise.all(crashReports);
  const fuzzSeconds = (Date.now() - fuzzStart) / 1000;

  // One more round while the slow clients still hold their connections, then they go.
  await probe.once();
  const probed = await probe.stop();
  const slowReport = slow.stop();
  for (const f of probed.failures) failures.push({ check: 'probe', cause: normalizeCause(f), detail: `${f} (while ${slowReport.tricklers} clients trickled bodies and ${slowReport.nonReaders} left a large list unread)` });
  const damage = protos.damage();
  if (damage) failures.push({ check: 'prototype changed', cause: normalizeCause(damage), detail: damage });

  let integrity = { checked: 0, beingDeleted: 0 };
  if (!aborted) {
    const ready = await client.send({ method: 'GET', path: '/readyz', headers: bearer(token) });
    if (ready.answer?.status !== 200) failures.push({ check: 'readiness', cause: 'GET /readyz is not 200 after the run', detail: ready.error ?? briefAnswer(ready.answer!) });
    else integrity = await checkIntegrity(client, token, resources, failures);
  } else {
    failures.push({ check: 'run aborted', cause: aborted, detail: `after ${sent} of ${COUNT} requests; integrity not checked` });
  }

  const summary = [
    `seed ${SEED}; ${sent} requests in ${fuzzSeconds.toFixed(1)} s (${(sent / fuzzSeconds).toFixed(0)}/s, concurrency ${CONCURRENCY}); total ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `statuses: ${[...statuses.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}×${v}`)
      .join(' ')}`,
    `integrity: ${integrity.checked} stored objects read back and re-validated (${integrity.beingDeleted} with a deletionTimestamp); failures: ${failures.length}`,
    `slow clients: ${slowReport.tricklers} trickling (${slowReport.bytesTrickled} bytes sent, ${slowReport.answeredEarly.length} answered early), ${slowReport.nonReaders} not reading; probe: ${probed.rounds} rounds, slowest ${probed.slowest} ms`,
  ];
  for (const line of summary) {
    t.diagnostic(line);
    console.log(`fuzz: ${line}`);
  }
  if (failures.length > 0) assert.fail(report(failures, token, sent));
});
