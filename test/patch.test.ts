/**
 * PATCH over real HTTPS against a real etcd, as kube-apiserver 1.24 answers it: merge patch,
 * JSON patch, strategic merge patch (merge keys, `$patch: delete`, `$setElementOrder`, lists
 * without a merge strategy), content types, missing objects, optimistic concurrency and retries,
 * validation like PUT, dry-run, and the managedFields an Update records (manager names, reset).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestEtcd, startInProcess, type TestEtcd, type InProcessPlinth, type TestClient, type Response } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const NS = 'patch-test';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CRB = `${RBAC}/clusterrolebindings`;
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const MERGE = 'application/merge-patch+json';
const JSONPATCH = 'application/json-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;

function sa(name: string, extra: Record<string, unknown> = {}, rest: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, ...extra }, ...rest };
}

function crb(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    ...extra,
  };
}

function patch(path: string, contentType: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const rawBody = typeof body === 'string' ? body : JSON.stringify(body);
  return c.request('PATCH', path, { rawBody, headers: { 'content-type': contentType, ...headers } });
}

async function create(path: string, body: unknown, query = ''): Promise<any> {
  const res = await c.post(`${path}${query}`, body);
  expectCode(res, 201, `POST ${path}`);
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

function entryOf(obj: any, manager: string, operation = 'Update'): any {
  return managedFields(obj).find((e) => e.manager === manager && e.operation === operation);
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

describe('merge patch (application/merge-patch+json)', () => {
  it('adds, changes and removes (null) labels', async () => {
    const created = await create(SA, sa('mp', { labels: { keep: '1', change: 'old', drop: 'x' } }));
    const res = await patch(`${SA}/mp`, MERGE, { metadata: { labels: { change: 'new', drop: null, added: 'yes' } } });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { keep: '1', change: 'new', added: 'yes' });
    assert.equal(res.body.kind, 'ServiceAccount');
    assert.equal(res.body.apiVersion, 'v1');
    assert.equal(res.body.metadata.uid, created.metadata.uid);
    assert.notEqual(res.body.metadata.resourceVersion, created.metadata.resourceVersion);
    const got = await get(`${SA}/mp`);
    assert.deepEqual(got.metadata.labels, { keep: '1', change: 'new', added: 'yes' });
    assert.equal(got.metadata.resourceVersion, res.body.metadata.resourceVersion);
  });

  it('a null for the whole map removes it, and lists are replaced wholesale', async () => {
    await create(SA, sa('mp2', { labels: { a: '1' } }, { secrets: [{ name: 's1' }, { name: 's2' }] }));
    const res = await patch(`${SA}/mp2`, MERGE, { metadata: { labels: null }, secrets: [{ name: 's3' }] });
    expectCode(res, 200);
    assert.equal(res.body.metadata.labels, undefined);
    assert.deepEqual(res.body.secrets, [{ name: 's3' }]);
  });

  it('accepts a charset parameter on the Content-Type', async () => {
    await create(SA, sa('mp-charset'));
    const res = await patch(`${SA}/mp-charset`, `${MERGE}; charset=utf-8`, { metadata: { labels: { x: 'y' } } });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { x: 'y' });
  });
});

describe('JSON patch (application/json-patch+json)', () => {
  it('add, replace, remove and a passing test', async () => {
    await create(SA, sa('jp', { labels: { a: '1', b: '2' } }));
    const res = await patch(`${SA}/jp`, JSONPATCH, [
      { op: 'test', path: '/metadata/labels/a', value: '1' },
      { op: 'add', path: '/metadata/labels/c', value: '3' },
      { op: 'replace', path: '/metadata/labels/a', value: '10' },
      { op: 'remove', path: '/metadata/labels/b' },
      { op: 'add', path: '/secrets', value: [{ name: 'one' }] },
      { op: 'add', path: '/secrets/-', value: { name: 'two' } },
    ]);
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '10', c: '3' });
    assert.deepEqual(res.body.secrets, [{ name: 'one' }, { name: 'two' }]);
    assert.deepEqual((await get(`${SA}/jp`)).metadata.labels, { a: '10', c: '3' });
  });

  it('a failing test → 422 Invalid, nothing stored', async () => {
    const created = await create(SA, sa('jp-test', { labels: { a: '1' } }));
    const res = await patch(`${SA}/jp-test`, JSONPATCH, [
      { op: 'replace', path: '/metadata/labels/a', value: 'changed' },
      { op: 'test', path: '/metadata/labels/a', value: 'not-this' },
    ]);
    expectStatus(res, 422, 'Invalid');
    const causes = (res.body.details?.causes ?? []) as Array<{ message?: string }>;
    assert.ok(causes.some((x) => /test/i.test(x.message ?? '')), `a cause describes the failed test: ${JSON.stringify(res.body)}`);
    const got = await get(`${SA}/jp-test`);
    assert.deepEqual(got.metadata.labels, { a: '1' });
    assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('removing a missing path → 422 Invalid, nothing stored', async () => {
    const created = await create(SA, sa('jp-missing'));
    const res = await patch(`${SA}/jp-missing`, JSONPATCH, [{ op: 'remove', path: '/metadata/labels/nope' }]);
    expectStatus(res, 422, 'Invalid');
    assert.equal((await get(`${SA}/jp-missing`)).metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('a body that is not a list of operations → 400', async () => {
    await create(SA, sa('jp-bad'));
    expectStatus(await patch(`${SA}/jp-bad`, JSONPATCH, { op: 'add', path: '/metadata/labels/a', value: '1' }), 400, 'BadRequest');
  });
});

describe('strategic merge patch (application/strategic-merge-patch+json)', () => {
  it('ServiceAccount secrets merge by name: adding b keeps a', async () => {
    await create(SA, sa('smp', {}, { secrets: [{ name: 'a' }] }));
    const res = await patch(`${SA}/smp`, SMP, { secrets: [{ name: 'b' }] });
    expectCode(res, 200);
    // kube's mergeSlice → normalizeElementOrder/mergeSortedSlice: without $setElementOrder the
    // patch's items come before the server-only ones.
    assert.deepEqual(res.body.secrets, [{ name: 'b' }, { name: 'a' }]);
    assert.deepEqual((await get(`${SA}/smp`)).secrets, [{ name: 'b' }, { name: 'a' }]);
  });

  it('merging an item with an existing name does not duplicate it (and references keep only their name)', async () => {
    await create(SA, sa('smp-inplace', {}, { secrets: [{ name: 'a' }, { name: 'b' }] }));
    const res = await patch(`${SA}/smp-inplace`, SMP, { secrets: [{ name: 'b', namespace: NS }] });
    expectCode(res, 200);
    // cleanSecretReferences (the ServiceAccount strategy) drops everything but the name.
    assert.deepEqual(res.body.secrets, [{ name: 'a' }, { name: 'b' }]);
  });

  it('$patch: delete removes an item', async () => {
    await create(SA, sa('smp-del', {}, { secrets: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }));
    const res = await patch(`${SA}/smp-del`, SMP, { secrets: [{ name: 'b', $patch: 'delete' }] });
    expectCode(res, 200);
    assert.deepEqual(res.body.secrets, [{ name: 'a' }, { name: 'c' }]);
    assert.deepEqual((await get(`${SA}/smp-del`)).secrets, [{ name: 'a' }, { name: 'c' }]);
  });

  it('$setElementOrder/secrets orders the merged list', async () => {
    await create(SA, sa('smp-order', {}, { secrets: [{ name: 'a' }, { name: 'b' }] }));
    const res = await patch(`${SA}/smp-order`, SMP, {
      '$setElementOrder/secrets': [{ name: 'c' }, { name: 'b' }, { name: 'a' }],
      secrets: [{ name: 'c' }],
    });
    expectCode(res, 200);
    assert.deepEqual(res.body.secrets, [{ name: 'c' }, { name: 'b' }, { name: 'a' }]);
    assert.deepEqual((await get(`${SA}/smp-order`)).secrets, [{ name: 'c' }, { name: 'b' }, { name: 'a' }]);
  });

  it('labels merge, and null removes a label', async () => {
    await create(SA, sa('smp-labels', { labels: { a: '1', b: '2' } }));
    const res = await patch(`${SA}/smp-labels`, SMP, { metadata: { labels: { b: null, c: '3' } } });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '1', c: '3' });
  });

  it('ClusterRoleBinding subjects (no merge strategy) are replaced', async () => {
    await create(CRB, crb('pt-smp-crb'));
    const res = await patch(`${CRB}/pt-smp-crb`, SMP, { subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }] });
    expectCode(res, 200);
    assert.deepEqual(res.body.subjects, [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }]);
    assert.deepEqual((await get(`${CRB}/pt-smp-crb`)).subjects, [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }]);
  });
});

describe('content type', () => {
  it('application/json → 415 UnsupportedMediaType listing the four patch types', async () => {
    const created = await create(SA, sa('ct', { labels: { a: '1' } }));
    const res = await patch(`${SA}/ct`, 'application/json', { metadata: { labels: { a: '2' } } });
    expectStatus(res, 415, 'UnsupportedMediaType');
    for (const t of [JSONPATCH, MERGE, SMP, APPLY]) assert.ok(res.body.message.includes(t), `message lists ${t}: ${res.body.message}`);
    assert.match(res.body.message, /^the body of the request was in an unknown format - accepted media types include: /);
    assert.equal((await get(`${SA}/ct`)).metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('text/plain and a missing Content-Type → 415', async () => {
    await create(SA, sa('ct2'));
    expectStatus(await patch(`${SA}/ct2`, 'text/plain', '{}'), 415, 'UnsupportedMediaType');
    const res = await c.request('PATCH', `${SA}/ct2`, { rawBody: Buffer.from('{}'), headers: { 'content-type': '' } });
    expectCode(res, 415);
  });
});

describe('missing objects', () => {
  it('PATCH (merge, json, strategic) of a missing object → 404 NotFound, nothing created', async () => {
    expectStatus(await patch(`${SA}/ghost`, MERGE, { metadata: { labels: { a: '1' } } }), 404, 'NotFound', 'serviceaccounts "ghost" not found');
    expectStatus(await patch(`${SA}/ghost`, JSONPATCH, [{ op: 'add', path: '/metadata/labels', value: { a: '1' } }]), 404, 'NotFound');
    expectStatus(await patch(`${SA}/ghost`, SMP, { metadata: { labels: { a: '1' } } }), 404, 'NotFound');
    expectStatus(
      await patch(`${CRB}/pt-ghost`, MERGE, { subjects: [] }),
      404,
      'NotFound',
      'clusterrolebindings.rbac.authorization.k8s.io "pt-ghost" not found',
    );
    expectCode(await c.get(`${SA}/ghost`), 404);
  });

  it('apply of a missing object → 201 (create-by-apply)', async () => {
    const res = await patch(`${SA}/by-apply?fieldManager=creator`, APPLY, sa('by-apply', { labels: { a: '1' } }));
    expectCode(res, 201);
    assert.equal(res.body.metadata.name, 'by-apply');
    assert.equal(res.body.metadata.namespace, NS);
    assert.ok(res.body.metadata.uid);
    assert.deepEqual(res.body.metadata.labels, { a: '1' });
    const got = await get(`${SA}/by-apply`);
    assert.equal(got.metadata.uid, res.body.metadata.uid);
    // A second apply is an update: 200.
    expectCode(await patch(`${SA}/by-apply?fieldManager=creator`, APPLY, sa('by-apply', { labels: { a: '2' } })), 200);
  });
});

describe('optimistic concurrency', () => {
  it('a patch setting a stale metadata.resourceVersion → 409 Conflict', async () => {
    const created = await create(SA, sa('occ', { labels: { a: '1' } }));
    const stale = created.metadata.resourceVersion as string;
    expectCode(await patch(`${SA}/occ`, MERGE, { metadata: { labels: { a: '2' } } }), 200);
    const res = await patch(`${SA}/occ`, MERGE, { metadata: { resourceVersion: stale, labels: { a: '3' } } });
    expectStatus(
      res,
      409,
      'Conflict',
      'Operation cannot be fulfilled on serviceaccounts "occ": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.equal((await get(`${SA}/occ`)).metadata.labels.a, '2');
    // The same with a JSON patch.
    const jp = await patch(`${SA}/occ`, JSONPATCH, [
      { op: 'replace', path: '/metadata/resourceVersion', value: stale },
      { op: 'replace', path: '/metadata/labels/a', value: '4' },
    ]);
    expectStatus(jp, 409, 'Conflict');
    assert.equal((await get(`${SA}/occ`)).metadata.labels.a, '2');
  });

  it('a patch carrying the current resourceVersion succeeds', async () => {
    const created = await create(SA, sa('occ-cur', { labels: { a: '1' } }));
    const res = await patch(`${SA}/occ-cur`, MERGE, { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { a: '2' } } });
    expectCode(res, 200);
    assert.equal(res.body.metadata.labels.a, '2');
  });

  it('a patch without resourceVersion succeeds after concurrent writes', async () => {
    const created = await create(SA, sa('occ-free', { labels: { a: '1' } }));
    const put = await c.put(`${SA}/occ-free`, { ...created, metadata: { ...created.metadata, labels: { a: '1', other: 'writer' } } });
    expectCode(put, 200);
    const res = await patch(`${SA}/occ-free`, MERGE, { metadata: { labels: { mine: 'yes' } } });
    expectCode(res, 200);
    assert.deepEqual(res.body.metadata.labels, { a: '1', other: 'writer', mine: 'yes' });
  });

  it('a patch that changes nothing writes nothing (same resourceVersion)', async () => {
    const created = await create(SA, sa('occ-noop', { labels: { a: '1' } }));
    const res = await patch(`${SA}/occ-noop`, MERGE, { metadata: { labels: { a: '1' } } });
    expectCode(res, 200);
    assert.equal(res.body.metadata.resourceVersion, created.metadata.resourceVersion);
    const jp = await patch(`${SA}/occ-noop`, JSONPATCH, [{ op: 'test', path: '/metadata/labels/a', value: '1' }]);
    expectCode(jp, 200);
    assert.equal(jp.body.metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('a no-op patch on an object created with a field manager writes nothing', async () => {
    const created = await create(SA, sa('occ-noop-mf', { labels: { a: '1' } }), '?fieldManager=tester');
    const res = await patch(`${SA}/occ-noop-mf?fieldManager=tester`, MERGE, { metadata: { labels: { a: '1' } } });
    expectCode(res, 200);
    assert.equal(res.body.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.deepEqual(managedFields(res.body), managedFields(created));
  });

  it('10 concurrent merge patches each adding a label all land', async () => {
    await create(SA, sa('occ-many'));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => patch(`${SA}/occ-many`, MERGE, { metadata: { labels: { [`l${i}`]: String(i) } } })),
    );
    for (const r of results) expectCode(r, 200, 'concurrent patch');
    const labels = (await get(`${SA}/occ-many`)).metadata.labels;
    assert.deepEqual(labels, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`l${i}`, String(i)])));
    const rvs = new Set(results.map((r) => r.body.metadata.resourceVersion));
    assert.equal(rvs.size, 10, 'each patch wrote its own version');
  });

  it('10 concurrent strategic patches each adding a secret all land', async () => {
    await create(SA, sa('occ-smp', {}, { secrets: [] }));
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => patch(`${SA}/occ-smp`, SMP, { secrets: [{ name: `s${i}` }] })));
    for (const r of results) expectCode(r, 200, 'concurrent patch');
    const names = ((await get(`${SA}/occ-smp`)).secrets as Array<{ name: string }>).map((s) => s.name).sort();
    assert.deepEqual(names, Array.from({ length: 10 }, (_, i) => `s${i}`).sort());
  });
});

describe('validation like PUT', () => {
  it('a patch making roleRef.kind "Role" → 422 Invalid, nothing stored', async () => {
    const created = await create(CRB, crb('pt-val-kind'));
    const res = await patch(`${CRB}/pt-val-kind`, MERGE, { roleRef: { kind: 'Role' } });
    expectStatus(res, 422, 'Invalid');
    assert.equal(res.body.details?.kind, 'ClusterRoleBinding');
    assert.equal(res.body.details?.group, 'rbac.authorization.k8s.io');
    assert.equal(res.body.details?.name, 'pt-val-kind');
    assert.ok(causeFields(res).includes('roleRef.kind'), `causes: ${JSON.stringify(res.body.details?.causes)}`);
    assert.match(res.body.message, /^ClusterRoleBinding\.rbac\.authorization\.k8s\.io "pt-val-kind" is invalid: /);
    assert.match(res.body.message, /roleRef\.kind: Unsupported value: "Role": supported values: "ClusterRole"/);
    const got = await get(`${CRB}/pt-val-kind`);
    assert.equal(got.roleRef.kind, 'ClusterRole');
    assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('changing roleRef → 422 immutable, nothing stored', async () => {
    const created = await create(CRB, crb('pt-val-ref'));
    const res = await patch(`${CRB}/pt-val-ref`, SMP, { roleRef: { name: 'edit' } });
    expectStatus(res, 422, 'Invalid');
    assert.deepEqual(causeFields(res), ['roleRef']);
    assert.match(res.body.message, /roleRef: Invalid value: .*cannot change roleRef/);
    const got = await get(`${CRB}/pt-val-ref`);
    assert.equal(got.roleRef.name, 'view');
    assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('a subject of an unknown kind → 422 Invalid', async () => {
    await create(CRB, crb('pt-val-subj'));
    const res = await patch(`${CRB}/pt-val-subj`, MERGE, { subjects: [{ kind: 'Robot', name: 'r2' }] });
    expectStatus(res, 422, 'Invalid');
    assert.ok(causeFields(res).some((f) => f.startsWith('subjects[0]')), `causes: ${JSON.stringify(res.body.details?.causes)}`);
  });

  it('an invalid label value → 422 Invalid', async () => {
    await create(SA, sa('val-label'));
    const res = await patch(`${SA}/val-label`, MERGE, { metadata: { labels: { ok: 'not a valid value!' } } });
    expectStatus(res, 422, 'Invalid');
    assert.ok(causeFields(res).includes('metadata.labels'), `causes: ${JSON.stringify(res.body.details?.causes)}`);
  });

  it('changing metadata.name via patch is rejected (kube: checkName → 400), nothing stored', async () => {
    const created = await create(SA, sa('val-name'));
    // kube 1.24 handlers/patch.go applyPatch → checkName: a BadRequest, before any validation.
    const res = await patch(`${SA}/val-name`, MERGE, { metadata: { name: 'other-name' } });
    expectStatus(res, 400, 'BadRequest', 'the name of the object (other-name) does not match the name on the URL (val-name)');
    expectCode(await c.get(`${SA}/other-name`), 404);
    assert.equal((await get(`${SA}/val-name`)).metadata.resourceVersion, created.metadata.resourceVersion);
    const jp = await patch(`${SA}/val-name`, JSONPATCH, [{ op: 'replace', path: '/metadata/name', value: 'other-name' }]);
    expectStatus(jp, 400, 'BadRequest', 'the name of the object (other-name) does not match the name on the URL (val-name)');
  });

  it('changing metadata.namespace via patch → 400', async () => {
    await create(SA, sa('val-ns'));
    const res = await patch(`${SA}/val-ns`, MERGE, { metadata: { namespace: 'default' } });
    expectCode(res, 400);
  });

  it('changing metadata.uid via patch → 422 (immutable)', async () => {
    const created = await create(SA, sa('val-uid'));
    const res = await patch(`${SA}/val-uid`, MERGE, { metadata: { uid: '00000000-0000-0000-0000-000000000000' } });
    expectStatus(res, 422, 'Invalid');
    assert.ok(causeFields(res).includes('metadata.uid'), `causes: ${JSON.stringify(res.body.details?.causes)}`);
    assert.equal((await get(`${SA}/val-uid`)).metadata.uid, created.metadata.uid);
  });
});

describe('dry-run and bad bodies', () => {
  it('dryRun=All returns the patched object and stores nothing', async () => {
    const created = await create(SA, sa('dry', { labels: { a: '1' } }));
    for (const [type, body] of [
      [MERGE, { metadata: { labels: { a: '2' } } }],
      [JSONPATCH, [{ op: 'replace', path: '/metadata/labels/a', value: '2' }]],
      [SMP, { metadata: { labels: { a: '2' } } }],
    ] as Array<[string, unknown]>) {
      const res = await patch(`${SA}/dry?dryRun=All`, type, body);
      expectCode(res, 200, type);
      assert.equal(res.body.metadata.labels.a, '2');
      assert.equal(res.body.metadata.uid, created.metadata.uid);
      const got = await get(`${SA}/dry`);
      assert.equal(got.metadata.labels.a, '1', type);
      assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion, type);
    }
  });

  it('dryRun with an unknown value → 422', async () => {
    await create(SA, sa('dry-bad'));
    const res = await patch(`${SA}/dry-bad?dryRun=Nope`, MERGE, { metadata: { labels: { a: '2' } } });
    expectStatus(res, 422, 'Invalid');
    assert.deepEqual(causeFields(res), ['dryRun']);
  });

  it('a malformed JSON body → 400 BadRequest (merge, json, strategic), nothing stored', async () => {
    const created = await create(SA, sa('badjson'));
    for (const type of [MERGE, JSONPATCH, SMP]) {
      expectStatus(await patch(`${SA}/badjson`, type, '{"metadata": {'), 400, 'BadRequest');
    }
    assert.equal((await get(`${SA}/badjson`)).metadata.resourceVersion, created.metadata.resourceVersion);
  });
});

describe('managedFields recorded by updates', () => {
  it('POST ?fieldManager=tester records an Update entry for the labels set', async () => {
    const created = await create(SA, sa('mf', { labels: { app: 'x', tier: 'y' } }), '?fieldManager=tester');
    const mf = managedFields(created);
    assert.equal(mf.length, 1, JSON.stringify(mf));
    const e = mf[0];
    assert.equal(e.manager, 'tester');
    assert.equal(e.operation, 'Update');
    assert.equal(e.apiVersion, 'v1');
    assert.equal(e.fieldsType, 'FieldsV1');
    assert.match(e.time, RFC3339_RE);
    assert.deepEqual(e.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } } });
    assert.deepEqual(Object.keys(e).sort(), ['apiVersion', 'fieldsType', 'fieldsV1', 'manager', 'operation', 'time']);
    // The stored object carries it too.
    assert.deepEqual(managedFields(await get(`${SA}/mf`)), mf);
  });

  it('a patch by another manager adds its own entry for the fields it changed', async () => {
    await create(SA, sa('mf2', { labels: { app: 'x' } }), '?fieldManager=first');
    const res = await patch(`${SA}/mf2?fieldManager=second`, MERGE, { metadata: { labels: { extra: '1' } } });
    expectCode(res, 200);
    const first = entryOf(res.body, 'first');
    const second = entryOf(res.body, 'second');
    assert.ok(first && second, JSON.stringify(managedFields(res.body)));
    assert.deepEqual(first.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } });
    assert.deepEqual(second.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:extra': {} } } });
    // An update of a field owned by another takes it over (no conflict for updates).
    const take = await patch(`${SA}/mf2?fieldManager=second`, MERGE, { metadata: { labels: { app: 'z' } } });
    expectCode(take, 200);
    // first keeps only the labels map itself: a leaf member serializes as `{}`.
    assert.deepEqual(entryOf(take.body, 'first').fieldsV1, { 'f:metadata': { 'f:labels': {} } });
    assert.deepEqual(entryOf(take.body, 'second').fieldsV1, { 'f:metadata': { 'f:labels': { 'f:app': {}, 'f:extra': {} } } });
  });

  it('without fieldManager the manager is the User-Agent product', async () => {
    const res = await c.post(SA, sa('mf-ua', { labels: { a: '1' } }), { headers: { 'user-agent': 'mytool/1.2.3 (linux)' } });
    expectCode(res, 201);
    const mf = managedFields(res.body);
    assert.equal(mf.length, 1, JSON.stringify(mf));
    assert.equal(mf[0].manager, 'mytool');
    assert.equal(mf[0].operation, 'Update');
    const p = await patch(`${SA}/mf-ua`, MERGE, { metadata: { labels: { b: '2' } } }, { 'user-agent': 'othertool/0.1' });
    expectCode(p, 200);
    assert.ok(entryOf(p.body, 'othertool'), JSON.stringify(managedFields(p.body)));
  });

  it('with neither fieldManager nor User-Agent the manager is "unknown"', async () => {
    // The harness sends no User-Agent; kube's buildManagerInfo names such a manager "unknown".
    const res = await c.post(SA, sa('mf-unknown', { labels: { a: '1' } }));
    expectCode(res, 201);
    const mf = managedFields(res.body);
    assert.equal(mf.length, 1, JSON.stringify(mf));
    assert.equal(mf[0].manager, 'unknown');
  });

  it('a fieldManager longer than 128 characters → 422', async () => {
    const long = 'm'.repeat(129);
    const post = await c.post(`${SA}?fieldManager=${long}`, sa('mf-long'));
    expectStatus(post, 422, 'Invalid');
    assert.deepEqual(causeFields(post), ['fieldManager']);
    expectCode(await c.get(`${SA}/mf-long`), 404);
    await create(SA, sa('mf-long'));
    const p = await patch(`${SA}/mf-long?fieldManager=${long}`, MERGE, { metadata: { labels: { a: '1' } } });
    expectStatus(p, 422, 'Invalid');
    assert.deepEqual(causeFields(p), ['fieldManager']);
    assert.match(p.body.message, /^PatchOptions\.meta\.k8s\.io "" is invalid: fieldManager: Too long: /);
    // Exactly 128 is fine.
    expectCode(await patch(`${SA}/mf-long?fieldManager=${'m'.repeat(128)}`, MERGE, { metadata: { labels: { a: '1' } } }), 200);
  });

  it('a merge patch {"metadata":{"managedFields":[{}]}} clears all entries', async () => {
    const created = await create(SA, sa('mf-reset', { labels: { a: '1' } }), '?fieldManager=one');
    expectCode(await patch(`${SA}/mf-reset?fieldManager=two`, MERGE, { metadata: { labels: { b: '2' } } }), 200);
    assert.equal(managedFields(await get(`${SA}/mf-reset`)).length, 2);
    const res = await patch(`${SA}/mf-reset?fieldManager=resetter`, MERGE, { metadata: { managedFields: [{}] } });
    expectCode(res, 200);
    assert.deepEqual(managedFields(res.body), []);
    const got = await get(`${SA}/mf-reset`);
    assert.deepEqual(managedFields(got), []);
    assert.deepEqual(got.metadata.labels, { a: '1', b: '2' });
    assert.equal(got.metadata.uid, created.metadata.uid);
  });

  it('a JSON patch replacing /metadata/managedFields with [{}] clears all entries', async () => {
    await create(SA, sa('mf-reset-jp', { labels: { a: '1' } }), '?fieldManager=one');
    const res = await patch(`${SA}/mf-reset-jp?fieldManager=resetter`, JSONPATCH, [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }]);
    expectCode(res, 200);
    assert.deepEqual(managedFields(res.body), []);
    assert.deepEqual(managedFields(await get(`${SA}/mf-reset-jp`)), []);
  });

  it('a reset together with other changes: the reset happens first, the patcher owns the changed fields', async () => {
    await create(SA, sa('mf-reset-more', { labels: { a: '1' } }), '?fieldManager=one');
    const res = await patch(`${SA}/mf-reset-more?fieldManager=resetter`, MERGE, { metadata: { managedFields: [{}], labels: { b: '2' } } });
    expectCode(res, 200);
    const mf = managedFields(res.body);
    assert.equal(mf.length, 1, JSON.stringify(mf));
    assert.equal(mf[0].manager, 'resetter');
    assert.deepEqual(mf[0].fieldsV1, { 'f:metadata': { 'f:labels': { 'f:b': {} } } });
  });

  it('an empty list [] does not reset', async () => {
    const created = await create(SA, sa('mf-empty', { labels: { a: '1' } }), '?fieldManager=one');
    const before = managedFields(created);
    assert.equal(before.length, 1);
    const res = await patch(`${SA}/mf-empty?fieldManager=two`, MERGE, { metadata: { managedFields: [] } });
    expectCode(res, 200);
    assert.deepEqual(managedFields(res.body), before);
    assert.deepEqual(managedFields(await get(`${SA}/mf-empty`)), before);
    const jp = await patch(`${SA}/mf-empty?fieldManager=two`, JSONPATCH, [{ op: 'replace', path: '/metadata/managedFields', value: [] }]);
    expectCode(jp, 200);
    assert.deepEqual(managedFields(jp.body), before);
  });
});
