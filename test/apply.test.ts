/**
 * Server-side apply over real HTTPS against a real etcd, as kube-apiserver 1.24 answers it
 * (`Content-Type: application/apply-patch+yaml`, JSON or YAML bodies): PatchOptions validation,
 * bad bodies, field ownership and the three conflict resolutions, removal of dropped fields,
 * map-lists and atomic lists, YAML, idempotence and the managedFields entries apply records.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestEtcd, startInProcess, type TestEtcd, type InProcessPlinth, type TestClient, type Response } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const NS = 'apply-test';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CRB = `${RBAC}/clusterrolebindings`;
const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;

function sa(name: string, labels?: Record<string, string>, rest: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, ...(labels ? { labels } : {}) }, ...rest };
}

const ROLE_REF = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' };

function crb(name: string, rest: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, ...rest };
}

function user(name: string): Record<string, string> {
  return { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name };
}

/** Server-side apply of `body` (an object sent as JSON, or a YAML string) by `manager`. */
function apply(path: string, body: unknown, manager: string | undefined, query = ''): Promise<Response> {
  const rawBody = typeof body === 'string' ? body : JSON.stringify(body);
  const params = new URLSearchParams(query);
  if (manager !== undefined) params.set('fieldManager', manager);
  const qs = params.toString();
  return c.request('PATCH', `${path}${qs ? `?${qs}` : ''}`, { rawBody, headers: { 'content-type': APPLY } });
}

async function applyOk(path: string, body: unknown, manager: string, query = '', code?: number): Promise<any> {
  const res = await apply(path, body, manager, query);
  if (code !== undefined) expectCode(res, code, `apply by ${manager}`);
  else assert.ok(res.status === 200 || res.status === 201, `apply by ${manager}: ${res.status} ${res.raw.toString().slice(0, 800)}`);
  return res.body;
}

async function get(path: string): Promise<any> {
  const res = await c.get(path);
  expectCode(res, 200, `GET ${path}`);
  return res.body;
}

function managedFields(obj: any): any[] {
  return (obj?.metadata?.managedFields ?? []) as any[];
}

function entryOf(obj: any, manager: string, operation = 'Apply'): any {
  return managedFields(obj).find((e) => e.manager === manager && e.operation === operation);
}

/** The label keys a manager's entry owns. */
function ownedLabels(obj: any, manager: string, operation = 'Apply'): string[] {
  const e = entryOf(obj, manager, operation);
  const labels = e?.fieldsV1?.['f:metadata']?.['f:labels'] ?? {};
  return Object.keys(labels)
    .filter((k) => k.startsWith('f:'))
    .map((k) => k.slice(2))
    .sort();
}

/** The secret names a manager's entry owns in the `secrets` map-list. */
function ownedSecrets(obj: any, manager: string, operation = 'Apply'): string[] {
  const e = entryOf(obj, manager, operation);
  const secrets = e?.fieldsV1?.['f:secrets'] ?? {};
  return Object.keys(secrets)
    .filter((k) => k.startsWith('k:'))
    .map((k) => (JSON.parse(k.slice(2)) as { name: string }).name)
    .sort();
}

before(async () => {
  etcd = await startTestEtcd();
  plinth = await startInProcess({ etcd });
  c = plinth.client;
  expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
});

after(async () => {
  await plinth?.stop();
  await etcd?.stop();
});

describe('apply: options and bodies', () => {
  it('without fieldManager → 422 Invalid with cause field fieldManager, nothing created', async () => {
    const res = await apply(`${SA}/no-manager`, sa('no-manager'), undefined);
    expectStatus(res, 422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    assert.deepEqual(causeFields(res), ['fieldManager']);
    assert.equal(res.body.details.causes[0].reason, 'FieldValueRequired');
    assert.equal(res.body.details.kind, 'PatchOptions');
    assert.equal(res.body.details.group, 'meta.k8s.io');
    expectCode(await c.get(`${SA}/no-manager`), 404);
    // An empty value is the same as none.
    expectStatus(await apply(`${SA}/no-manager`, sa('no-manager'), ''), 422, 'Invalid');
  });

  it('force on a non-apply patch → 422 Invalid with cause field force', async () => {
    expectCode(await c.post(SA, sa('force-merge')), 201);
    for (const force of ['true', 'false']) {
      const res = await c.request('PATCH', `${SA}/force-merge?force=${force}`, {
        rawBody: JSON.stringify({ metadata: { labels: { a: '1' } } }),
        headers: { 'content-type': MERGE },
      });
      expectStatus(res, 422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
      assert.deepEqual(causeFields(res), ['force']);
    }
    assert.equal((await get(`${SA}/force-merge`)).metadata.labels, undefined);
  });

  it('an applied object containing metadata.managedFields → 400', async () => {
    const body = {
      ...sa('with-mf'),
      metadata: {
        name: 'with-mf',
        managedFields: [{ manager: 'x', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }],
      },
    };
    expectStatus(await apply(`${SA}/with-mf`, body, 'alice'), 400, 'BadRequest', 'metadata.managedFields must be nil');
    expectCode(await c.get(`${SA}/with-mf`), 404);
    // Also on an existing object.
    await applyOk(`${SA}/with-mf`, sa('with-mf', { a: '1' }), 'alice', '', 201);
    expectStatus(await apply(`${SA}/with-mf`, body, 'alice'), 400, 'BadRequest', 'metadata.managedFields must be nil');
  });

  it('a wrong apiVersion in the body → 400 Incorrect version', async () => {
    await applyOk(`${SA}/wrong-version`, sa('wrong-version', { a: '1' }), 'alice', '', 201);
    const res = await apply(`${SA}/wrong-version`, { ...sa('wrong-version', { a: '2' }), apiVersion: 'v2' }, 'alice');
    expectStatus(res, 400, 'BadRequest', 'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1');
    assert.equal((await get(`${SA}/wrong-version`)).metadata.labels.a, '1');
    const rb = await apply(
      `${CRB}/ap-wrong-version`,
      { ...crb('ap-wrong-version', { roleRef: ROLE_REF }), apiVersion: 'rbac.authorization.k8s.io/v1beta1' },
      'alice',
    );
    expectStatus(
      rb,
      400,
      'BadRequest',
      'Incorrect version specified in apply patch. Specified patch version: rbac.authorization.k8s.io/v1beta1, expected: rbac.authorization.k8s.io/v1',
    );
  });

  it('a keyed list element without its key (also a null key) → 400, and nothing is stored', async () => {
    for (const element of [{}, { name: null, namespace: 'x' }]) {
      const res = await apply(`${SA}/no-key`, { ...sa('no-key', { a: '1' }), secrets: [element] }, 'alice');
      expectStatus(res, 400, 'BadRequest', 'failed to create typed patch object: .secrets: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)');
      expectCode(await c.get(`${SA}/no-key`), 404);
    }
  });

  it('a body that is not YAML/JSON → 400', async () => {
    const res = await apply(`${SA}/bad-yaml`, '{"apiVersion": "v1", "kind": [', 'alice');
    expectStatus(res, 400, 'BadRequest');
    expectCode(await c.get(`${SA}/bad-yaml`), 404);
  });

  it('a name in the body that differs from the URL → 400', async () => {
    const res = await apply(`${SA}/url-name`, sa('body-name'), 'alice');
    expectStatus(res, 400, 'BadRequest', 'the name of the object (body-name) does not match the name on the URL (url-name)');
    expectCode(await c.get(`${SA}/url-name`), 404);
    expectCode(await c.get(`${SA}/body-name`), 404);
  });

  it('an applied object that fails validation → 422, nothing stored', async () => {
    const res = await apply(`${CRB}/ap-invalid`, crb('ap-invalid', { roleRef: { ...ROLE_REF, kind: 'Role' } }), 'alice');
    expectStatus(res, 422, 'Invalid');
    assert.ok(causeFields(res).includes('roleRef.kind'), JSON.stringify(res.body.details?.causes));
    expectCode(await c.get(`${CRB}/ap-invalid`), 404);
  });
});

describe('apply: ownership and conflicts', () => {
  it('a conflicting apply → 409 Conflict with one cause per field', async () => {
    const path = `${SA}/conflict`;
    await applyOk(path, sa('conflict', { team: 'a', owner: 'alice' }), 'alice', '', 201);
    const res = await apply(path, sa('conflict', { team: 'b' }), 'bob');
    expectStatus(res, 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "alice": .metadata.labels.team');
    assert.deepEqual(res.body.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.metadata.labels.team' },
    ]);
    const got = await get(path);
    assert.deepEqual(got.metadata.labels, { team: 'a', owner: 'alice' });
    assert.equal(entryOf(got, 'bob'), undefined);
  });

  it('two conflicting fields → 409 with two causes and the multi-conflict message', async () => {
    const path = `${SA}/conflict2`;
    await applyOk(path, sa('conflict2', { team: 'a', owner: 'alice' }), 'alice', '', 201);
    const res = await apply(path, sa('conflict2', { team: 'b', owner: 'bob' }), 'bob');
    expectStatus(
      res,
      409,
      'Conflict',
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .metadata.labels.owner\n- .metadata.labels.team',
    );
    const causes = (res.body.details.causes as Array<{ field: string; message: string; reason: string }>).slice().sort((x, y) => x.field.localeCompare(y.field));
    assert.deepEqual(causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.metadata.labels.owner' },
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.metadata.labels.team' },
    ]);
  });

  it('a conflict with an updater names its apiVersion', async () => {
    const path = `${SA}/conflict-upd`;
    expectCode(await c.post(`${SA}?fieldManager=alice`, sa('conflict-upd', { team: 'a' })), 201);
    const res = await apply(path, sa('conflict-upd', { team: 'b' }), 'bob');
    expectStatus(res, 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "alice" using v1: .metadata.labels.team');
    assert.deepEqual(res.body.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice" using v1', field: '.metadata.labels.team' },
    ]);
  });

  it('an update (non-apply) of an applied field does not conflict and takes ownership', async () => {
    const path = `${SA}/upd-takes`;
    await applyOk(path, sa('upd-takes', { team: 'a', owner: 'alice' }), 'alice', '', 201);
    const res = await c.request('PATCH', `${path}?fieldManager=bob`, {
      rawBody: JSON.stringify({ metadata: { labels: { team: 'b' } } }),
      headers: { 'content-type': MERGE },
    });
    expectCode(res, 200);
    assert.equal(res.body.metadata.labels.team, 'b');
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['owner']);
    assert.deepEqual(ownedLabels(res.body, 'bob', 'Update'), ['team']);
  });

  it('overwrite: force=true makes the applier sole owner', async () => {
    const path = `${SA}/force`;
    await applyOk(path, sa('force', { team: 'a', owner: 'alice' }), 'alice', '', 201);
    expectCode(await apply(path, sa('force', { team: 'b' }), 'bob'), 409);
    const res = await apply(path, sa('force', { team: 'b' }), 'bob', 'force=true');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { team: 'b', owner: 'alice' });
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['owner']);
    assert.deepEqual(ownedLabels(res.body, 'bob'), ['team']);
    const got = await get(path);
    assert.deepEqual(got.metadata.labels, { team: 'b', owner: 'alice' });
    assert.deepEqual(ownedLabels(got, 'alice'), ['owner']);
    assert.deepEqual(ownedLabels(got, 'bob'), ['team']);
    // alice re-applying her old value now conflicts with bob.
    const back = await apply(path, sa('force', { team: 'a', owner: 'alice' }), 'alice');
    expectStatus(back, 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "bob": .metadata.labels.team');
  });

  it('force=true when a manager loses all its fields removes its entry', async () => {
    const path = `${SA}/force-all`;
    await applyOk(path, sa('force-all', { team: 'a' }), 'alice', '', 201);
    const res = await apply(path, sa('force-all', { team: 'b' }), 'bob', 'force=true');
    expectCode(res, 200);
    assert.equal(entryOf(res.body, 'alice'), undefined, JSON.stringify(managedFields(res.body)));
    assert.deepEqual(ownedLabels(res.body, 'bob'), ['team']);
  });

  it('give up: dropping the field from the body keeps the value and bob does not own it', async () => {
    const path = `${SA}/giveup`;
    await applyOk(path, sa('giveup', { team: 'a' }), 'alice', '', 201);
    expectCode(await apply(path, sa('giveup', { team: 'b', bobs: 'x' }), 'bob'), 409);
    const res = await apply(path, sa('giveup', { bobs: 'x' }), 'bob');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { team: 'a', bobs: 'x' });
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['team']);
    assert.deepEqual(ownedLabels(res.body, 'bob'), ['bobs']);
    assert.deepEqual((await get(path)).metadata.labels, { team: 'a', bobs: 'x' });
  });

  it('share: applying the live value makes both owners', async () => {
    const path = `${SA}/share`;
    await applyOk(path, sa('share', { team: 'a' }), 'alice', '', 201);
    expectCode(await apply(path, sa('share', { team: 'b' }), 'bob'), 409);
    const res = await apply(path, sa('share', { team: 'a' }), 'bob');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { team: 'a' });
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['team']);
    assert.deepEqual(ownedLabels(res.body, 'bob'), ['team']);
    // Shared ownership: now nobody can change it without conflicting with the other.
    expectStatus(await apply(path, sa('share', { team: 'c' }), 'alice'), 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "bob": .metadata.labels.team');
  });
});

describe('apply: removal of dropped fields', () => {
  it('a label dropped from the applied body is removed', async () => {
    const path = `${SA}/remove`;
    await applyOk(path, sa('remove', { a: '1', b: '2' }), 'alice', '', 201);
    const res = await apply(path, sa('remove', { a: '1' }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '1' });
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['a']);
    assert.deepEqual((await get(path)).metadata.labels, { a: '1' });
  });

  it('a label dropped by alice but also owned by bob stays', async () => {
    const path = `${SA}/remove-shared`;
    await applyOk(path, sa('remove-shared', { a: '1', b: '2' }), 'alice', '', 201);
    await applyOk(path, sa('remove-shared', { b: '2' }), 'bob', '', 200);
    const res = await apply(path, sa('remove-shared', { a: '1' }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '1', b: '2' });
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['a']);
    assert.deepEqual(ownedLabels(res.body, 'bob'), ['b']);
    // bob dropping it too removes it.
    const gone = await apply(path, sa('remove-shared'), 'bob');
    expectCode(gone, 200);
    assert.deepEqual(gone.body.metadata.labels, { a: '1' });
  });

  it('a label dropped by the applier but set by an updater in between is kept', async () => {
    const path = `${SA}/remove-upd`;
    await applyOk(path, sa('remove-upd', { a: '1', b: '2' }), 'alice', '', 201);
    const upd = await c.request('PATCH', `${path}?fieldManager=kubectl-label`, {
      rawBody: JSON.stringify({ metadata: { labels: { b: '3' } } }),
      headers: { 'content-type': MERGE },
    });
    expectCode(upd, 200);
    const res = await apply(path, sa('remove-upd', { a: '1' }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '1', b: '3' });
  });
});

describe('apply: list types', () => {
  it('ServiceAccount secrets (map-list by name): managers own separate items', async () => {
    const path = `${SA}/secrets`;
    await applyOk(path, sa('secrets', undefined, { secrets: [{ name: 'x' }] }), 'alice', '', 201);
    const bob = await apply(path, sa('secrets', undefined, { secrets: [{ name: 'y' }] }), 'bob');
    expectCode(bob, 200);
    assert.deepEqual(
      (bob.body.secrets as Array<{ name: string }>).map((s) => s.name).sort(),
      ['x', 'y'],
    );
    assert.deepEqual(ownedSecrets(bob.body, 'alice'), ['x']);
    assert.deepEqual(ownedSecrets(bob.body, 'bob'), ['y']);
    // alice applies an empty list: x goes, y stays.
    const res = await apply(path, sa('secrets', undefined, { secrets: [] }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.secrets, [{ name: 'y' }]);
    assert.deepEqual((await get(path)).secrets, [{ name: 'y' }]);
  });

  it('ServiceAccount secrets: omitting the list removes only the applier’s items', async () => {
    const path = `${SA}/secrets-omit`;
    await applyOk(path, sa('secrets-omit', undefined, { secrets: [{ name: 'x' }] }), 'alice', '', 201);
    await applyOk(path, sa('secrets-omit', undefined, { secrets: [{ name: 'y' }] }), 'bob', '', 200);
    const res = await apply(path, sa('secrets-omit', { keep: 'me' }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.secrets, [{ name: 'y' }]);
    assert.deepEqual(res.body.metadata.labels, { keep: 'me' });
    assert.deepEqual(ownedSecrets(res.body, 'alice'), []);
    assert.deepEqual(ownedSecrets(res.body, 'bob'), ['y']);
  });

  it('ServiceAccount secrets: the same item applied by two managers is shared', async () => {
    const path = `${SA}/secrets-shared`;
    await applyOk(path, sa('secrets-shared', undefined, { secrets: [{ name: 'x' }] }), 'alice', '', 201);
    await applyOk(path, sa('secrets-shared', undefined, { secrets: [{ name: 'x' }] }), 'bob', '', 200);
    const res = await apply(path, sa('secrets-shared', undefined, { secrets: [] }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.secrets, [{ name: 'x' }]);
  });

  it('ClusterRoleBinding subjects (atomic): a different list from another manager conflicts', async () => {
    const path = `${CRB}/ap-subjects`;
    const created = await applyOk(path, crb('ap-subjects', { roleRef: ROLE_REF, subjects: [user('alice')] }), 'alice', '', 201);
    assert.deepEqual(created.subjects, [user('alice')]);
    const alice = entryOf(created, 'alice');
    assert.ok(alice?.fieldsV1?.['f:subjects'], JSON.stringify(managedFields(created)));
    // Atomic: the whole list is one leaf, no per-item keys.
    assert.deepEqual(alice.fieldsV1['f:subjects'], {});

    const res = await apply(path, crb('ap-subjects', { subjects: [user('bob')] }), 'bob');
    expectStatus(res, 409, 'Conflict', 'Apply failed with 1 conflict: conflict with "alice": .subjects');
    assert.deepEqual(res.body.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.subjects' }]);
    // Adding an item (a superset) is a change of the atomic list too.
    const superset = await apply(path, crb('ap-subjects', { subjects: [user('alice'), user('bob')] }), 'bob');
    expectStatus(superset, 409, 'Conflict');
    assert.deepEqual((await get(path)).subjects, [user('alice')]);

    // Forced, bob replaces the whole list and alice loses it.
    const forced = await apply(path, crb('ap-subjects', { subjects: [user('bob')] }), 'bob', 'force=true');
    expectCode(forced, 200);
    assert.deepEqual(forced.body.subjects, [user('bob')]);
    assert.equal(entryOf(forced.body, 'alice')?.fieldsV1?.['f:subjects'], undefined);
    assert.deepEqual(entryOf(forced.body, 'bob')?.fieldsV1?.['f:subjects'], {});
  });

  it('ClusterRoleBinding roleRef (atomic struct) changed by apply → 422 immutable', async () => {
    const path = `${CRB}/ap-roleref`;
    await applyOk(path, crb('ap-roleref', { roleRef: ROLE_REF, subjects: [user('alice')] }), 'alice', '', 201);
    const res = await apply(path, crb('ap-roleref', { roleRef: { ...ROLE_REF, name: 'edit' }, subjects: [user('alice')] }), 'alice');
    expectStatus(res, 422, 'Invalid');
    assert.deepEqual(causeFields(res), ['roleRef']);
    assert.equal((await get(path)).roleRef.name, 'view');
  });
});

describe('apply: YAML, idempotence and managedFields', () => {
  it('applies a YAML body', async () => {
    const yaml = [
      'apiVersion: v1',
      'kind: ServiceAccount',
      'metadata:',
      '  name: yaml-sa',
      '  labels:',
      '    app: web',
      '    tier: "1"',
      '  annotations:',
      '    note: |',
      '      multi',
      '      line',
      'secrets:',
      '- name: one',
      '- name: two',
      'automountServiceAccountToken: false',
      '',
    ].join('\n');
    const res = await apply(`${SA}/yaml-sa`, yaml, 'yaml-applier');
    expectCode(res, 201);
    assert.deepEqual(res.body.metadata.labels, { app: 'web', tier: '1' });
    assert.equal(res.body.metadata.annotations.note, 'multi\nline\n');
    assert.deepEqual(res.body.secrets, [{ name: 'one' }, { name: 'two' }]);
    assert.equal(res.body.automountServiceAccountToken, false);
    const got = await get(`${SA}/yaml-sa`);
    assert.deepEqual(got.metadata.labels, { app: 'web', tier: '1' });
    // The same content as YAML again is a no-op.
    const again = await apply(`${SA}/yaml-sa`, yaml, 'yaml-applier');
    expectCode(again, 200);
    assert.equal(again.body.metadata.resourceVersion, got.metadata.resourceVersion);
  });

  it('is idempotent: re-applying the same body writes nothing', async () => {
    const path = `${SA}/idem`;
    const body = sa('idem', { a: '1' }, { secrets: [{ name: 's' }] });
    const first = await applyOk(path, body, 'alice', '', 201);
    const second = await apply(path, body, 'alice');
    expectCode(second, 200);
    assert.equal(second.body.metadata.resourceVersion, first.metadata.resourceVersion);
    assert.deepEqual(managedFields(second.body), managedFields(first));
    const got = await get(path);
    assert.equal(got.metadata.resourceVersion, first.metadata.resourceVersion);
    // A forced re-apply of the same body is a no-op too.
    const forced = await apply(path, body, 'alice', 'force=true');
    expectCode(forced, 200);
    assert.equal(forced.body.metadata.resourceVersion, first.metadata.resourceVersion);
  });

  it('is idempotent after an update too: a re-apply following a changing apply writes nothing', async () => {
    const path = `${SA}/idem2`;
    await applyOk(path, sa('idem2', { a: '1' }), 'alice', '', 201);
    const changed = await apply(path, sa('idem2', { a: '2' }), 'alice');
    expectCode(changed, 200);
    const again = await apply(path, sa('idem2', { a: '2' }), 'alice');
    expectCode(again, 200);
    assert.equal(again.body.metadata.resourceVersion, changed.body.metadata.resourceVersion);
  });

  it('a no-op apply over an object created by POST writes nothing', async () => {
    const path = `${SA}/idem-post`;
    expectCode(await c.post(`${SA}?fieldManager=alice`, sa('idem-post', { a: '1' })), 201);
    const first = await apply(path, sa('idem-post', { a: '1' }), 'alice');
    expectCode(first, 200);
    const again = await apply(path, sa('idem-post', { a: '1' }), 'alice');
    expectCode(again, 200);
    assert.equal(again.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  });

  it('managedFields entries have operation Apply and fieldsType FieldsV1', async () => {
    const path = `${SA}/mf`;
    const res = await apply(path, sa('mf', { app: 'x' }, { secrets: [{ name: 's1' }] }), 'alice');
    expectCode(res, 201);
    const mf = managedFields(res.body);
    assert.equal(mf.length, 1, JSON.stringify(mf));
    const e = mf[0];
    assert.equal(e.manager, 'alice');
    assert.equal(e.operation, 'Apply');
    assert.equal(e.apiVersion, 'v1');
    assert.equal(e.fieldsType, 'FieldsV1');
    assert.match(e.time, RFC3339_RE);
    assert.deepEqual(e.fieldsV1, {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      // ObjectReference is `+structType=atomic`: the item is one leaf, its fields are not listed.
      'f:secrets': { 'k:{"name":"s1"}': {} },
    });
    assert.deepEqual(Object.keys(e).sort(), ['apiVersion', 'fieldsType', 'fieldsV1', 'manager', 'operation', 'time']);
    assert.deepEqual(managedFields(await get(path)), mf);
  });

  it('apply over an object created by an update keeps the updater entry and adds an Apply entry', async () => {
    const path = `${SA}/mixed`;
    expectCode(await c.post(`${SA}?fieldManager=creator`, sa('mixed', { a: '1' })), 201);
    const res = await apply(path, sa('mixed', { b: '2' }), 'alice');
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '1', b: '2' });
    const ops = managedFields(res.body).map((e) => `${e.manager}/${e.operation}`);
    assert.deepEqual(ops, ['alice/Apply', 'creator/Update']);
    assert.deepEqual(ownedLabels(res.body, 'creator', 'Update'), ['a']);
    assert.deepEqual(ownedLabels(res.body, 'alice'), ['b']);
  });

  it('dryRun=All apply returns the result and stores nothing', async () => {
    const path = `${SA}/apply-dry`;
    const res = await apply(path, sa('apply-dry', { a: '1' }), 'alice', 'dryRun=All');
    expectCode(res, 201);
    assert.equal(res.body.metadata.labels.a, '1');
    expectCode(await c.get(path), 404);
  });
});
