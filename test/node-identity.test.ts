/**
 * Node identity as kube 1.24 enforces it (`--authorization-mode=Node,RBAC`,
 * `--enable-admission-plugins=NodeRestriction`): a kubelet presenting a client certificate
 * `CN=system:node:n1, O=system:nodes` reads the secrets, ConfigMaps, PVCs and PVs of the pods bound
 * to n1 only (the graph follows binds and deletions from the watch cache), and writes only its own
 * Node, Lease, mirror pods and pods' status, with kube's 403 messages.
 */
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { tempDir, usePlinth } from './harness.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-node-');
const pki = new Pki(dir);
pki.rootCA('client-ca');
pki.issue('n1', '/O=system:nodes/CN=system:node:n1', 'client-ca');
pki.issue('nameless', '/O=system:nodes/CN=system:node:', 'client-ca');
writeFileSync(join(dir, 'bundle.crt'), pki.pem('client-ca'));

const env = usePlinth(['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', `--client-ca-file=${join(dir, 'bundle.crt')}`]);
after(() => rmSync(dir, { recursive: true, force: true }));

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

const agents = new Map<string, Agent>();
/** One request as the kubelet whose certificate is `cert`. */
function asNode(cert: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  let agent = agents.get(cert);
  if (!agent) agents.set(cert, (agent = new Agent({ ca: readFileSync(env.plinth.server.caFile!, 'utf8'), cert: pki.pem(cert), key: pki.keyPem(cert), keepAlive: true })));
  const u = new URL(env.plinth.server.url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { hostname: u.hostname, port: u.port, path, method, agent, headers: payload ? { 'content-type': contentType, 'content-length': String(payload.length) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
after(() => {
  for (const a of agents.values()) a.destroy();
});

const n1 = (method: string, path: string, body?: unknown, contentType?: string): Promise<Reply> => asNode('n1', method, path, body, contentType);

const NS = 'ns';
const api = `/api/v1/namespaces/${NS}`;

function expectForbidden(r: Reply, message: string): void {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.equal(r.body.reason, 'Forbidden');
  assert.equal(r.body.message, message);
}

const noRelationship = (resource: string, name: string, verb = 'get'): string =>
  `${resource} "${name}" is forbidden: User "system:node:n1" cannot ${verb} resource "${resource}" in API group "" in the namespace "${NS}": no relationship found between node 'n1' and this object`;

const container = { name: 'c', image: 'busybox' };
/** A pod that uses secret `secret`, ConfigMap `cm`, claim `claim` and account `sa`, bound to `node` ('' = unscheduled). */
const pod = (name: string, node: string, refs: { secret: string; cm?: string; claim?: string; sa?: string }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    ...(node ? { nodeName: node } : {}),
    ...(refs.sa ? { serviceAccountName: refs.sa } : {}),
    automountServiceAccountToken: false,
    containers: [{ ...container, ...(refs.cm ? { envFrom: [{ configMapRef: { name: refs.cm } }] } : {}) }],
    volumes: [{ name: 's', secret: { secretName: refs.secret } }, ...(refs.claim ? [{ name: 'd', persistentVolumeClaim: { claimName: refs.claim } }] : [])],
  },
});

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`not within 10 s: ${what}`);
}

describe('Node authorizer and NodeRestriction', () => {
  let p1Uid = '';
  let p2Uid = '';
  before(async () => {
    const c = env.plinth.client;
    const ok = async (p: Promise<{ status: number; body: unknown }>): Promise<any> => {
      const r = await p;
      assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
      return r.body;
    };
    await ok(c.post('/api/v1/namespaces', { metadata: { name: NS } }));
    for (const s of ['s1', 's2', 's3', 'pv-secret']) await ok(c.post(`${api}/secrets`, { metadata: { name: s }, stringData: { k: 'v' } }));
    for (const cm of ['cm1', 'cm2']) await ok(c.post(`${api}/configmaps`, { metadata: { name: cm } }));
    for (const sa of ['sa1', 'sa2']) await ok(c.post(`${api}/serviceaccounts`, { metadata: { name: sa } }));
    for (const claim of ['claim1', 'claim2']) {
      await ok(c.post(`${api}/persistentvolumeclaims`, { metadata: { name: claim }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }));
    }
    await ok(
      c.post('/api/v1/persistentvolumes', {
        metadata: { name: 'pv1' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          claimRef: { namespace: NS, name: 'claim1' },
          csi: { driver: 'csi.example.com', volumeHandle: 'h1', nodePublishSecretRef: { namespace: NS, name: 'pv-secret' } },
        },
      }),
    );
    await ok(c.post('/api/v1/persistentvolumes', { metadata: { name: 'pv2' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], claimRef: { namespace: NS, name: 'claim2' }, hostPath: { path: '/x' } } }));
    p1Uid = (await ok(c.post(`${api}/pods`, pod('p1', 'n1', { secret: 's1', cm: 'cm1', claim: 'claim1', sa: 'sa1' })))).metadata.uid;
    p2Uid = (await ok(c.post(`${api}/pods`, pod('p2', 'n2', { secret: 's2', cm: 'cm2', claim: 'claim2', sa: 'sa2' })))).metadata.uid;
    await ok(c.post(`${api}/pods`, pod('p3', '', { secret: 's3' })));
    // The graph is fed by the watch cache: wait until n1 sees its pod's secret.
    await eventually(async () => (await n1('GET', `${api}/secrets/s1`)).status === 200, 'the graph has pod p1');
  });

  it("reads its pods' secrets, ConfigMaps, PVCs, PVs and the PV's secret; nothing of another node's pods", async () => {
    for (const path of [`${api}/secrets/s1`, `${api}/configmaps/cm1`, `${api}/persistentvolumeclaims/claim1`, '/api/v1/persistentvolumes/pv1', `${api}/secrets/pv-secret`]) {
      assert.equal((await n1('GET', path)).status, 200, path);
    }
    // A list or watch naming one object (kube's metadata.name field selector) reads it too.
    assert.equal((await n1('GET', `${api}/secrets?fieldSelector=metadata.name%3Ds1`)).status, 200);
    expectForbidden(await n1('GET', `${api}/secrets/s2`), noRelationship('secrets', 's2'));
    expectForbidden(await n1('GET', `${api}/configmaps/cm2`), noRelationship('configmaps', 'cm2'));
    expectForbidden(await n1('GET', `${api}/persistentvolumeclaims/claim2`), noRelationship('persistentvolumeclaims', 'claim2'));
    expectForbidden(
      await n1('GET', '/api/v1/persistentvolumes/pv2'),
      `persistentvolumes "pv2" is forbidden: User "system:node:n1" cannot get resource "persistentvolumes" in API group "" at the cluster scope: no relationship found between node 'n1' and this object`,
    );
    expectForbidden(await n1('GET', `${api}/secrets/missing`), noRelationship('secrets', 'missing'));
    expectForbidden(await n1('GET', `${api}/secrets`), `secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" in the namespace "${NS}": No Object name found`);
    expectForbidden(
      await n1('PUT', `${api}/secrets/s1`, { metadata: { name: 's1' } }),
      `secrets "s1" is forbidden: User "system:node:n1" cannot update resource "secrets" in API group "" in the namespace "${NS}": can only read resources of this type`,
    );
    expectForbidden(
      await n1('GET', `${api}/persistentvolumeclaims?fieldSelector=metadata.name%3Dclaim1`),
      `persistentvolumeclaims "claim1" is forbidden: User "system:node:n1" cannot list resource "persistentvolumeclaims" in API group "" in the namespace "${NS}": can only get individual resources of this type`,
    );
    // A node's permissions are not enumerable (kube's RulesFor for nodes).
    const review = await n1('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: NS } });
    assert.equal(review.status, 201, JSON.stringify(review.body));
    assert.equal(review.body.status.incomplete, true);
    assert.equal(review.body.status.evaluationError, 'node authorizer does not support user rule resolution');
    // A user in system:nodes without a node name: kube's "unknown node".
    expectForbidden(
      await asNode('nameless', 'GET', `${api}/secrets/s1`),
      `secrets "s1" is forbidden: User "system:node:" cannot get resource "secrets" in API group "" in the namespace "${NS}": unknown node for user "system:node:"`,
    );
  });

  it('binding a pod to the node grants its secret; deleting the pod revokes it', async () => {
    expectForbidden(await n1('GET', `${api}/secrets/s3`), noRelationship('secrets', 's3'));
    const bound = await env.plinth.client.post(`${api}/pods/p3/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p3' }, target: { kind: 'Node', name: 'n1' } });
    assert.equal(bound.status, 201, JSON.stringify(bound.body));
    await eventually(async () => (await n1('GET', `${api}/secrets/s3`)).status === 200, 'bound pod grants its secret');
    const del = await env.plinth.client.delete(`${api}/pods/p3?gracePeriodSeconds=0`);
    assert.equal(del.status, 200, JSON.stringify(del.body));
    await eventually(async () => (await n1('GET', `${api}/secrets/s3`)).status === 403, 'deleted pod revokes its secret');
    expectForbidden(await n1('GET', `${api}/secrets/s3`), noRelationship('secrets', 's3'));
  });

  it("tokens for its pods' service accounts only, bound to a pod on the node", async () => {
    const tokenRequest = (podName: string, uid: string) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: podName, uid } } });
    // A token bound to its pod, as the kubelet asks for the projected volume; it authenticates as
    // the account with the pod in the user's extra (kube's pod-bound token).
    const r = await n1('POST', `${api}/serviceaccounts/sa1/token`, tokenRequest('p1', p1Uid));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const token = (r.body as { status: { token: string } }).status.token;
    const review = await env.plinth.client.post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    assert.equal(review.body.status.authenticated, true, JSON.stringify(review.body.status));
    assert.equal(review.body.status.user.username, `system:serviceaccount:${NS}:sa1`);
    assert.deepEqual(review.body.status.user.extra['authentication.kubernetes.io/pod-name'], ['p1']);
    assert.deepEqual(review.body.status.user.extra['authentication.kubernetes.io/pod-uid'], [p1Uid]);
    expectForbidden(
      await n1('POST', `${api}/serviceaccounts/sa2/token`, tokenRequest('p2', p2Uid)),
      `serviceaccounts "sa2" is forbidden: User "system:node:n1" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${NS}": no relationship found between node 'n1' and this object`,
    );
    // Authorized for sa1 (p1 runs it), but the token would be bound to a pod on another node.
    expectForbidden(await n1('POST', `${api}/serviceaccounts/sa1/token`, tokenRequest('p2', p2Uid)), 'serviceaccounts "sa1" is forbidden: node requested token bound to a pod scheduled on a different node');
    expectForbidden(await n1('POST', `${api}/serviceaccounts/sa1/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [] } }), 'serviceaccounts "sa1" is forbidden: node requested token not bound to a pod');
  });

  it('its own Node only, no taints and no labels outside the kubelet set', async () => {
    const node = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
    expectForbidden(await n1('POST', '/api/v1/nodes', node('n2')), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    expectForbidden(
      await n1('POST', '/api/v1/nodes', node('n1', { 'node-restriction.kubernetes.io/pool': 'a', 'example.k8s.io/x': 'y', 'kubernetes.io/hostname': 'n1' })),
      'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: example.k8s.io/x, node-restriction.kubernetes.io/pool',
    );
    const created = await n1('POST', '/api/v1/nodes', node('n1', { 'kubernetes.io/hostname': 'n1', 'node.kubernetes.io/instance-type': 'm', 'team.example.com/x': 'y' }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const merge = 'application/merge-patch+json';
    expectForbidden(await n1('PATCH', '/api/v1/nodes/n1', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }, merge), 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    expectForbidden(await n1('PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'kubernetes.io/role': 'master' } } }, merge), 'nodes "n1" is forbidden: is not allowed to modify labels: kubernetes.io/role');
    assert.equal((await n1('PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'topology.kubernetes.io/zone': 'z1' } } }, merge)).status, 200);
    // Another node's object: refused before anything else is looked at.
    const other = await env.plinth.client.post('/api/v1/nodes', node('n2'));
    assert.equal(other.status, 201);
    expectForbidden(await n1('PATCH', '/api/v1/nodes/n2', { metadata: { labels: { a: 'b' } } }, merge), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    // kube 1.24's NodeRules grant no delete of nodes: the authorizers' plain refusal.
    expectForbidden(await n1('DELETE', '/api/v1/nodes/n2'), 'nodes "n2" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope');
  });

  it('mirror pods only, bound to itself, referencing no API object', async () => {
    const mirror = (name: string, spec: Record<string, unknown>, node = 'n1') => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, annotations: { 'kubernetes.io/config.mirror': 'hash' } },
      spec: { nodeName: node, containers: [container], ...spec },
    });
    const plain = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain' }, spec: { nodeName: 'n1', containers: [container] } };
    expectForbidden(await n1('POST', `${api}/pods`, plain), 'pods "plain" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods');
    expectForbidden(await n1('POST', `${api}/pods`, mirror('m', {}, 'n2')), 'pods "m" is forbidden: node "n1" can only create pods with spec.nodeName set to itself');
    // The ServiceAccount plugin runs first (kube's order) and refuses these two itself, as on kube.
    expectForbidden(await n1('POST', `${api}/pods`, mirror('m', { serviceAccountName: 'sa1' })), 'pods "m" is forbidden: a mirror pod may not reference service accounts');
    expectForbidden(await n1('POST', `${api}/pods`, mirror('m', { volumes: [{ name: 'v', secret: { secretName: 's1' } }] })), 'pods "m" is forbidden: a mirror pod may not reference secrets');
    expectForbidden(
      await n1('POST', `${api}/pods`, mirror('m', { containers: [{ ...container, env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm1', key: 'k' } } }] }] })),
      'pods "m" is forbidden: node "n1" can not create pods that reference configmaps',
    );
    expectForbidden(
      await n1('POST', `${api}/pods`, mirror('m', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'claim1' } }] })),
      'pods "m" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims',
    );
    const owner = { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'not-the-uid', controller: true };
    const nodeUid = (await env.plinth.client.get('/api/v1/nodes/n1')).body.metadata.uid;
    expectForbidden(
      await n1('POST', `${api}/pods`, { ...mirror('m', {}), metadata: { name: 'm', annotations: { 'kubernetes.io/config.mirror': 'hash' }, ownerReferences: [{ ...owner, controller: false }] } }),
      'pods "m" is forbidden: node "n1" can only create pods with a controller owner reference set to itself',
    );
    expectForbidden(
      await n1('POST', `${api}/pods`, { ...mirror('m', {}), metadata: { name: 'm', annotations: { 'kubernetes.io/config.mirror': 'hash' }, ownerReferences: [owner] } }),
      `pods "m" is forbidden: node n1 UID mismatch: expected not-the-uid got ${nodeUid}`,
    );
    const created = await n1('POST', `${api}/pods`, { ...mirror('m', {}), metadata: { name: 'm', annotations: { 'kubernetes.io/config.mirror': 'hash' }, ownerReferences: [{ ...owner, uid: nodeUid }] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Its pods' status only; delete only pods bound to itself.
    expectForbidden(
      await n1('PATCH', `${api}/pods/p2/status`, { status: { message: 'x' } }, 'application/merge-patch+json'),
      'pods "p2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
    );
    assert.equal((await n1('PATCH', `${api}/pods/p1/status`, { status: { message: 'running' } }, 'application/merge-patch+json')).status, 200);
    expectForbidden(await n1('DELETE', `${api}/pods/p2`), 'pods "p2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
    expectForbidden(
      await n1('POST', `${api}/pods/p2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p2' } }),
      'pods "p2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself',
    );
    expectForbidden(
      await n1('PATCH', `${api}/pods/m`, { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json'),
      `pods "m" is forbidden: User "system:node:n1" cannot patch resource "pods" in API group "" in the namespace "${NS}"`,
    );
    assert.equal((await n1('DELETE', `${api}/pods/m?gracePeriodSeconds=0`)).status, 200);
  });

  it("the status of its pods' claims only, capacity and conditions only", async () => {
    const merge = 'application/merge-patch+json';
    const r = await n1('PATCH', `${api}/persistentvolumeclaims/claim1/status`, { status: { capacity: { storage: '2Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True' }] } }, merge);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    expectForbidden(
      await n1('PATCH', `${api}/persistentvolumeclaims/claim2/status`, { status: { capacity: { storage: '2Gi' } } }, merge),
      `persistentvolumeclaims "claim2" is forbidden: User "system:node:n1" cannot patch resource "persistentvolumeclaims/status" in API group "" in the namespace "${NS}": no relationship found between node 'n1' and this object`,
    );
    const phase = await n1('PATCH', `${api}/persistentvolumeclaims/claim1/status`, { status: { phase: 'Lost' } }, merge);
    assert.equal(phase.status, 403, JSON.stringify(phase.body));
    assert.match(phase.body.message, /^persistentvolumeclaims "claim1" is forbidden: node "n1" is not allowed to update fields other than status.capacity and status.conditions: /);
  });

  it('its own Lease in kube-node-lease only', async () => {
    const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name } });
    const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    assert.equal((await n1('POST', leases, lease('n1'))).status, 201);
    expectForbidden(await n1('POST', leases, lease('n2')), 'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
    expectForbidden(
      await n1('GET', `${leases}/n2`),
      'leases.coordination.k8s.io "n2" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node',
    );
    expectForbidden(
      await n1('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, lease('n1')),
      `leases.coordination.k8s.io is forbidden: User "system:node:n1" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "${NS}": can only access leases in the "kube-node-lease" system namespace`,
    );
  });
});
