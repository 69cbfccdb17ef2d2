/**
 * Where the RBAC escalation check runs (issue 23 point 12): as in kube 1.24's policybased
 * storages, on the object mutating admission left — on create after the mutating webhooks, on
 * update, patch and apply inside the update attempt after them. A mutating webhook that adds a
 * rule the user does not hold (or points a binding at a role the user does not hold) makes the
 * write a 403 that stores nothing; one that removes an escalating rule makes it allowed. For
 * create, update (PUT), patch and server-side apply, of Roles, ClusterRoles and RoleBindings.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { eventually, tempDir, usePlinth, type Response } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';
import { Pki } from './auth-fixtures.js';

const dir = tempDir('plinth-rbac-order-');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'rae-token,rae,rae-uid\n');
const env = usePlinth([`--token-auth-file=${tokenFile}`]);
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const NS = 'esc';
const ROLES = `${RBAC}/namespaces/${NS}/roles`;
const BINDINGS = `${RBAC}/namespaces/${NS}/rolebindings`;
const CLUSTER_ROLES = `${RBAC}/clusterroles`;
const rae = { token: 'rae-token' };

const cmReader = { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] };
const secretReader = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
const clusterRoleRef = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });

/**
 * The webhook: by the object's `mutate` label, `add` grants secrets (a rule, or a binding to
 * secret-reader) and `strip` takes them away (rules: configmaps only, or a binding to cm-reader).
 */
function mutation(review: { request: { kind: { kind: string }; object: { metadata?: { labels?: Record<string, string> } } } }): unknown[] {
  const mode = review.request.object?.metadata?.labels?.['mutate'];
  const binding = review.request.kind.kind.endsWith('Binding');
  if (mode === 'add') return binding ? [{ op: 'add', path: '/roleRef', value: clusterRoleRef('secret-reader') }] : [{ op: 'add', path: '/rules', value: [cmReader, secretReader] }];
  if (mode === 'strip') return binding ? [{ op: 'add', path: '/roleRef', value: clusterRoleRef('cm-reader') }] : [{ op: 'add', path: '/rules', value: [cmReader] }];
  return [];
}

let server: Server;
let ready: Promise<void> | undefined;
const setUp = (): Promise<void> => (ready ??= createFixtures());

async function createFixtures(): Promise<void> {
  const c = env.plinth.client;
  const certs = join(dir, 'certs');
  mkdirSync(certs);
  const pki = new Pki(certs).rootCA('ca').serving('server', 'ca');
  server = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const ops = mutation(review);
      const patch = ops.length > 0 ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') } : {};
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, ...patch } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
  expectCode(await c.post(CLUSTER_ROLES, { metadata: { name: 'cm-reader' }, rules: [cmReader] }), 201);
  expectCode(await c.post(CLUSTER_ROLES, { metadata: { name: 'secret-reader' }, rules: [secretReader] }), 201);
  // rae manages Roles and RoleBindings in esc and ClusterRoles, and reads ConfigMaps; no escalate, no bind.
  const manage = (resources: string[]) => ({ verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'], apiGroups: ['rbac.authorization.k8s.io'], resources });
  expectCode(await c.post(ROLES, { metadata: { name: 'rbac-manager' }, rules: [manage(['roles', 'rolebindings'])] }), 201);
  expectCode(await c.post(BINDINGS, { metadata: { name: 'rae-manager' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rbac-manager' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'rae' }] }), 201);
  expectCode(await c.post(CLUSTER_ROLES, { metadata: { name: 'rae-cluster' }, rules: [manage(['clusterroles']), cmReader] }), 201);
  expectCode(await c.post(`${RBAC}/clusterrolebindings`, { metadata: { name: 'rae-cluster' }, roleRef: clusterRoleRef('rae-cluster'), subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'rae' }] }), 201);

  const hooks = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'rbac-order' },
    webhooks: [
      {
        name: 'rbac-order.plinth.test',
        clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: Buffer.from(pki.pem('ca')).toString('base64') },
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['rbac.authorization.k8s.io'], apiVersions: ['v1'], resources: ['roles', 'clusterroles', 'rolebindings'] }],
        objectSelector: { matchExpressions: [{ key: 'mutate', operator: 'Exists' }] },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
  expectCode(await c.post('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', hooks), 201);
  await eventually(async () => (await c.get('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations?resourceVersion=0')).body.items.length > 0, 10_000, 'the webhook in the watch cache');
}

after(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
});

const role = (name: string, mutate: string | undefined, rules: unknown[], kind = 'Role') => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: { name, ...(mutate ? { labels: { mutate } } : {}) },
  rules,
});
const roleBinding = (name: string, mutate: string, roleName: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name, labels: { mutate } },
  roleRef: clusterRoleRef(roleName),
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'someone' }],
});

const MERGE = { 'content-type': 'application/merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const send = (method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  env.plinth.client.request(method, path, { ...rae, rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

/** kube's refusal of an escalation: 403 on the object, naming what the user lacks (the webhook's rule). */
function expectEscalation(res: Response, resource: string, name: string): void {
  expectStatus(res, 403, 'Forbidden', new RegExp(`^${resource}\\.rbac\\.authorization\\.k8s\\.io "${name}" is forbidden: user "rae" .* is attempting to grant RBAC permissions not currently held:\\n.*Resources:\\["secrets"\\]`));
}

async function stored(path: string): Promise<any> {
  return (await env.plinth.client.get(path)).body;
}

describe('the escalation check sees what mutating admission made of the object', () => {
  before(setUp);

  it('create: a webhook adding a rule the user lacks is refused; one removing the escalating rule is allowed', async () => {
    expectEscalation(await send('POST', ROLES, role('c-add', 'add', [cmReader])), 'roles', 'c-add');
    expectCode(await env.plinth.client.get(`${ROLES}/c-add`), 404);
    const ok = await send('POST', ROLES, role('c-strip', 'strip', [secretReader]));
    expectCode(ok, 201);
    assert.deepEqual(ok.body.rules, [cmReader]);
    // ClusterRoles too.
    expectEscalation(await send('POST', CLUSTER_ROLES, role('cr-add', 'add', [cmReader], 'ClusterRole')), 'clusterroles', 'cr-add');
    expectCode(await env.plinth.client.get(`${CLUSTER_ROLES}/cr-add`), 404);
    expectCode(await send('POST', CLUSTER_ROLES, role('cr-strip', 'strip', [secretReader], 'ClusterRole')), 201);
    // Bindings: the roleRef checked is the one the webhook set.
    expectEscalation(await send('POST', BINDINGS, roleBinding('b-add', 'add', 'cm-reader')), 'rolebindings', 'b-add');
    expectCode(await env.plinth.client.get(`${BINDINGS}/b-add`), 404);
    const bound = await send('POST', BINDINGS, roleBinding('b-strip', 'strip', 'secret-reader'));
    expectCode(bound, 201);
    assert.equal(bound.body.roleRef.name, 'cm-reader');
  });

  it('update (PUT): the same, on the object the webhook returns', async () => {
    const c = env.plinth.client;
    expectCode(await c.post(ROLES, role('u1', undefined, [cmReader])), 201);
    const current = await stored(`${ROLES}/u1`);
    const put = (mutate: string, rules: unknown[]) => send('PUT', `${ROLES}/u1`, { ...role('u1', mutate, rules), metadata: { ...current.metadata, labels: { mutate } } });
    expectEscalation(await put('add', [cmReader]), 'roles', 'u1');
    assert.deepEqual((await stored(`${ROLES}/u1`)).rules, [cmReader]);
    assert.equal((await stored(`${ROLES}/u1`)).metadata.resourceVersion, current.metadata.resourceVersion);
    const ok = await put('strip', [cmReader, secretReader]);
    expectCode(ok, 200);
    assert.deepEqual(ok.body.rules, [cmReader]);
    expectCode(await c.post(CLUSTER_ROLES, role('u2', undefined, [cmReader], 'ClusterRole')), 201);
    const cr = await stored(`${CLUSTER_ROLES}/u2`);
    expectEscalation(await send('PUT', `${CLUSTER_ROLES}/u2`, { ...role('u2', 'add', [cmReader], 'ClusterRole'), metadata: { ...cr.metadata, labels: { mutate: 'add' } } }), 'clusterroles', 'u2');
    expectCode(await send('PUT', `${CLUSTER_ROLES}/u2`, { ...role('u2', 'strip', [secretReader], 'ClusterRole'), metadata: { ...cr.metadata, labels: { mutate: 'strip' } } }), 200);
  });

  it('patch (merge): the same', async () => {
    expectCode(await env.plinth.client.post(ROLES, role('p1', undefined, [cmReader])), 201);
    expectEscalation(await send('PATCH', `${ROLES}/p1`, { metadata: { labels: { mutate: 'add' } } }, MERGE), 'roles', 'p1');
    assert.equal((await stored(`${ROLES}/p1`)).metadata.labels, undefined);
    const ok = await send('PATCH', `${ROLES}/p1`, { metadata: { labels: { mutate: 'strip' } }, rules: [secretReader] }, MERGE);
    expectCode(ok, 200);
    assert.deepEqual(ok.body.rules, [cmReader]);
  });

  it('server-side apply, creating and updating: the same', async () => {
    const apply = (name: string, mutate: string, rules: unknown[]) => send('PATCH', `${ROLES}/${name}?fieldManager=rae`, role(name, mutate, rules), APPLY);
    expectEscalation(await apply('a1', 'add', [cmReader]), 'roles', 'a1');
    expectCode(await env.plinth.client.get(`${ROLES}/a1`), 404);
    const created = await apply('a1', 'strip', [secretReader]);
    expectCode(created, 201);
    assert.deepEqual(created.body.rules, [cmReader]);
    expectEscalation(await apply('a1', 'add', [cmReader]), 'roles', 'a1');
    assert.equal((await stored(`${ROLES}/a1`)).metadata.labels.mutate, 'strip');
    expectCode(await apply('a1', 'strip', [cmReader, secretReader]), 200);
    assert.deepEqual((await stored(`${ROLES}/a1`)).rules, [cmReader]);
    // A binding created by apply.
    expectEscalation(await send('PATCH', `${BINDINGS}/ab?fieldManager=rae`, roleBinding('ab', 'add', 'cm-reader'), APPLY), 'rolebindings', 'ab');
    expectCode(await send('PATCH', `${BINDINGS}/ab?fieldManager=rae`, roleBinding('ab', 'strip', 'secret-reader'), APPLY), 201);
  });

  it("a binding's roleRef kind that no role has: kube's resolver error, before validation, for a user who is not system:masters", async () => {
    const res = await send('POST', BINDINGS, { ...roleBinding('bad-kind', 'none', 'x'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Foo', name: 'x' } });
    expectCode(res, 500);
    // kube's StatusReasonUnknown ("") is omitted from the Status.
    assert.deepEqual([Object.hasOwn(res.body, 'reason'), res.body.message], [false, 'unsupported role reference kind: "Foo"']);
    // The admin is not checked: validation answers.
    const admin = await env.plinth.client.post(BINDINGS, { ...roleBinding('bad-kind', 'none', 'x'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Foo', name: 'x' } });
    expectStatus(admin, 422, 'Invalid');
  });
});
