/**
 * Resource flows over real HTTPS against a real etcd: CRUD of serviceaccounts, secrets, RBAC
 * kinds; metadata rules; optimistic concurrency; two-phase deletion; dry-run; lists and watches.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestEtcd, startInProcess, eventually, type TestEtcd, type InProcessPlinth, type TestClient, type Response } from './harness.js';
import { causeFields, expectCode, expectStatus } from './assertions.js';

const NS = 'api-test';
const SA = `/api/v1/namespaces/${NS}/serviceaccounts`;
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CRB = `${RBAC}/clusterrolebindings`;
const CR = `${RBAC}/clusterroles`;
const ROLES = `${RBAC}/namespaces/${NS}/roles`;
const RBS = `${RBAC}/namespaces/${NS}/rolebindings`;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

let etcd: TestEtcd;
let plinth: InProcessPlinth;
let c: TestClient;

function sa(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, ...extra } };
}

function crb(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }],
    ...extra,
  };
}

async function create(path: string, body: unknown): Promise<any> {
  const res = await c.post(path, body);
  expectCode(res, 201, `POST ${path}`);
  return res.body;
}

async function names(path: string): Promise<string[]> {
  const res = await c.get(path);
  expectCode(res, 200);
  return (res.body.items as any[]).map((i) => i.metadata.name as string).sort();
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

describe('serviceaccounts CRUD', () => {
  it('creates, gets, lists, updates and deletes', async () => {
    const created = await create(SA, sa('crud', { labels: { app: 'a' } }));
    assert.equal(created.kind, 'ServiceAccount');
    assert.equal(created.apiVersion, 'v1');
    assert.equal(created.metadata.namespace, NS);
    assert.match(created.metadata.uid, UUID_RE);
    assert.match(created.metadata.creationTimestamp, RFC3339_RE);
    const got = await c.get(`${SA}/crud`);
    expectCode(got, 200);
    assert.equal(got.body.metadata.uid, created.metadata.uid);
    assert.equal(got.body.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.ok((await names(SA)).includes('crud'));

    const upd = await c.put(`${SA}/crud`, { ...got.body, metadata: { ...got.body.metadata, labels: { app: 'b' } } });
    expectCode(upd, 200);
    assert.equal(upd.body.metadata.labels.app, 'b');
    assert.notEqual(upd.body.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.equal(upd.body.metadata.uid, created.metadata.uid);
    assert.equal(upd.body.metadata.creationTimestamp, created.metadata.creationTimestamp);
    const after1 = await c.get(`${SA}/crud`);
    assert.equal(after1.body.metadata.resourceVersion, upd.body.metadata.resourceVersion);
    assert.equal(after1.body.metadata.labels.app, 'b');

    // ServiceAccounts are a ReturnDeletedObject store in kube: the answer is the object deleted.
    const del = await c.delete(`${SA}/crud`);
    expectCode(del, 200);
    assert.equal(del.body.kind, 'ServiceAccount');
    assert.equal(del.body.apiVersion, 'v1');
    assert.deepEqual({ name: del.body.metadata.name, uid: del.body.metadata.uid }, { name: 'crud', uid: created.metadata.uid });
    expectStatus(await c.get(`${SA}/crud`), 404, 'NotFound', 'serviceaccounts "crud" not found');
  });

  it('rejects a duplicate name with 409 AlreadyExists, and re-create after delete works', async () => {
    const first = await create(SA, sa('dup'));
    const again = await c.post(SA, sa('dup'));
    expectStatus(again, 409, 'AlreadyExists', 'serviceaccounts "dup" already exists');
    assert.equal(again.body.details.name, 'dup');
    assert.equal(again.body.details.kind, 'serviceaccounts');
    assert.equal((await c.get(`${SA}/dup`)).body.metadata.uid, first.metadata.uid);
    expectCode(await c.delete(`${SA}/dup`), 200);
    const second = await create(SA, sa('dup'));
    assert.notEqual(second.metadata.uid, first.metadata.uid);
  });

  it('generateName gives unique names with the prefix', async () => {
    const a = await create(SA, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { generateName: 'gen-' } });
    const b = await create(SA, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { generateName: 'gen-' } });
    assert.match(a.metadata.name, /^gen-[a-z0-9]{5}$/);
    assert.match(b.metadata.name, /^gen-[a-z0-9]{5}$/);
    assert.notEqual(a.metadata.name, b.metadata.name);
    expectCode(await c.get(`${SA}/${a.metadata.name}`), 200);
  });

  it('a taken name with generateName set is kube\'s generate-name conflict (409 AlreadyExists, retry after 1 s)', async () => {
    const a = await create(SA, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { generateName: 'gen-' } });
    // kube's CheckGeneratedNameError looks at generateName only: the server's own pick collided.
    const r = await c.post(SA, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: a.metadata.name, generateName: 'gen-' } });
    expectStatus(r, 409, 'AlreadyExists', `serviceaccounts "${a.metadata.name}" already exists, the server was not able to generate a unique name for the object`);
    assert.deepEqual(r.body.details, { name: a.metadata.name, kind: 'serviceaccounts', retryAfterSeconds: 1 });
  });

  it('PUT of a missing serviceaccount is 404 (no create-on-update)', async () => {
    expectStatus(await c.put(`${SA}/ghost`, sa('ghost')), 404, 'NotFound', 'serviceaccounts "ghost" not found');
    expectCode(await c.get(`${SA}/ghost`), 404);
  });

  it('PUT with a stale resourceVersion is 409 Conflict', async () => {
    const v1 = await create(SA, sa('stale'));
    expectCode(await c.put(`${SA}/stale`, { ...v1, metadata: { ...v1.metadata, labels: { n: '1' } } }), 200);
    const res = await c.put(`${SA}/stale`, { ...v1, metadata: { ...v1.metadata, labels: { n: '2' } } });
    expectStatus(
      res,
      409,
      'Conflict',
      'Operation cannot be fulfilled on serviceaccounts "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.equal((await c.get(`${SA}/stale`)).body.metadata.labels.n, '1');
  });

  it('two concurrent PUTs with the same resourceVersion: one wins, one conflicts', async () => {
    const obj = await create(SA, sa('race'));
    let rv = obj.metadata.resourceVersion as string;
    for (let round = 0; round < 10; round++) {
      const put = (who: string): Promise<Response> =>
        c.put(`${SA}/race`, { ...sa('race'), metadata: { name: 'race', resourceVersion: rv, labels: { who, round: String(round) } } });
      const results = await Promise.all([put('a'), put('b')]);
      const codes = results.map((r) => r.status).sort();
      assert.deepEqual(codes, [200, 409], `round ${round}: ${results.map((r) => r.raw.toString()).join(' | ')}`);
      const winner = results.find((r) => r.status === 200)!;
      const now = (await c.get(`${SA}/race`)).body;
      assert.equal(now.metadata.resourceVersion, winner.body.metadata.resourceVersion);
      assert.equal(now.metadata.labels.who, winner.body.metadata.labels.who);
      rv = now.metadata.resourceVersion;
    }
  });
});

describe('secrets', () => {
  it('merges stringData into base64 data and defaults type to Opaque', async () => {
    const created = await create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1' },
      data: { b: Buffer.from('bee').toString('base64'), a: Buffer.from('old').toString('base64') },
      stringData: { a: 'hello' },
    });
    assert.equal(created.type, 'Opaque');
    const got = (await c.get(`${SECRETS}/s1`)).body;
    assert.equal(got.type, 'Opaque');
    assert.equal(got.stringData, undefined);
    assert.equal(Buffer.from(got.data.a, 'base64').toString(), 'hello');
    assert.equal(Buffer.from(got.data.b, 'base64').toString(), 'bee');
    const upd = await c.put(`${SECRETS}/s1`, { ...got, stringData: { c: 'sea' } });
    expectCode(upd, 200);
    assert.equal(Buffer.from(upd.body.data.c, 'base64').toString(), 'sea');
    assert.equal(Buffer.from((await c.get(`${SECRETS}/s1`)).body.data.c, 'base64').toString(), 'sea');
    expectCode(await c.delete(`${SECRETS}/s1`), 200);
    expectCode(await c.get(`${SECRETS}/s1`), 404);
  });
});

describe('RBAC kinds', () => {
  it('clusterroles, roles and rolebindings: create/get/list/update/delete', async () => {
    const rule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    const cases: Array<[string, Record<string, unknown>]> = [
      [CR, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cr1' }, rules: [rule] }],
      [ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r1' }, rules: [rule] }],
      [
        RBS,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'rb1' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r1' },
          subjects: [{ kind: 'ServiceAccount', name: 'default' }],
        },
      ],
    ];
    for (const [path, body] of cases) {
      const name = (body['metadata'] as { name: string }).name;
      const created = await create(path, body);
      assert.equal(created.kind, body['kind']);
      const got = await c.get(`${path}/${name}`);
      expectCode(got, 200);
      assert.ok((await names(path)).includes(name));
      const upd = await c.put(`${path}/${name}`, { ...got.body, metadata: { ...got.body.metadata, labels: { x: 'y' } } });
      expectCode(upd, 200, `PUT ${path}/${name}`);
      assert.equal((await c.get(`${path}/${name}`)).body.metadata.labels.x, 'y');
      const del = await c.delete(`${path}/${name}`);
      expectCode(del, 200);
      assert.equal(del.body.status, 'Success');
      expectCode(await c.get(`${path}/${name}`), 404);
    }
  });

  it('clusterrolebindings: CRUD, and PUT creates a missing one (201)', async () => {
    const created = await create(CRB, crb('b1'));
    assert.equal(created.metadata.namespace, undefined);
    assert.ok((await names(CRB)).includes('b1'));
    const got = (await c.get(`${CRB}/b1`)).body;
    const upd = await c.put(`${CRB}/b1`, { ...got, subjects: [{ kind: 'Group', name: 'devs' }] });
    expectCode(upd, 200);
    assert.equal((await c.get(`${CRB}/b1`)).body.subjects[0].name, 'devs');
    const put = await c.put(`${CRB}/b-put`, crb('b-put'));
    expectCode(put, 201);
    assert.match(put.body.metadata.uid, UUID_RE);
    expectCode(await c.get(`${CRB}/b-put`), 200);
    const del = await c.delete(`${CRB}/b1`);
    expectCode(del, 200);
    assert.equal(del.body.details?.kind, 'clusterrolebindings');
    assert.equal(del.body.details?.group, 'rbac.authorization.k8s.io');
    expectStatus(await c.get(`${CRB}/b1`), 404, 'NotFound', 'clusterrolebindings.rbac.authorization.k8s.io "b1" not found');
  });

  it('clusterrolebinding validation', async () => {
    const noRef = await c.post(CRB, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'v-noref' } });
    expectStatus(noRef, 422, 'Invalid');
    assert.ok(causeFields(noRef).includes('roleRef.kind'), `causes: ${causeFields(noRef)}`);
    assert.ok(causeFields(noRef).includes('roleRef.name'), `causes: ${causeFields(noRef)}`);
    const role = await c.post(CRB, crb('v-role', { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'view' } }));
    expectStatus(role, 422, 'Invalid');
    assert.deepEqual(causeFields(role), ['roleRef.kind']);
    const badKind = await c.post(CRB, crb('v-kind', { subjects: [{ kind: 'Robot', name: 'r2d2' }] }));
    expectStatus(badKind, 422, 'Invalid');
    assert.equal(causeFields(badKind)[0], 'subjects[0].kind');
    const saNoNs = await c.post(CRB, crb('v-sans', { subjects: [{ kind: 'ServiceAccount', name: 'default' }] }));
    expectStatus(saNoNs, 422, 'Invalid');
    assert.ok(causeFields(saNoNs).includes('subjects[0].namespace'));
    for (const n of ['v-noref', 'v-role', 'v-kind', 'v-sans']) expectCode(await c.get(`${CRB}/${n}`), 404, n);

    const ok = await create(CRB, crb('v-ok'));
    const changed = await c.put(`${CRB}/v-ok`, { ...ok, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' } });
    expectStatus(changed, 422, 'Invalid');
    assert.equal(causeFields(changed)[0], 'roleRef');
    assert.equal((await c.get(`${CRB}/v-ok`)).body.roleRef.name, 'view');
  });

  it('clusterrolebinding subject apiGroup defaults; a User namespace is stored', async () => {
    await create(
      CRB,
      crb('defaults', {
        subjects: [
          { kind: 'ServiceAccount', name: 'default', namespace: NS },
          { kind: 'User', name: 'alice', namespace: 'somewhere' },
          { kind: 'Group', name: 'devs' },
        ],
      }),
    );
    const got = (await c.get(`${CRB}/defaults`)).body;
    assert.equal('apiGroup' in got.subjects[0], false, JSON.stringify(got.subjects[0]));
    assert.equal(got.subjects[1].apiGroup, 'rbac.authorization.k8s.io');
    assert.equal(got.subjects[1].namespace, 'somewhere');
    assert.equal(got.subjects[2].apiGroup, 'rbac.authorization.k8s.io');
  });
});

describe('finalizers and deletion', () => {
  it('two-phase deletion follows the finalizers', async () => {
    await create(SA, sa('fin', { finalizers: ['example.com/a', 'example.com/b'] }));
    const del = await c.delete(`${SA}/fin`);
    expectCode(del, 200);
    assert.equal(del.body.kind, 'ServiceAccount');
    assert.match(del.body.metadata.deletionTimestamp, RFC3339_RE);
    const pending = await c.get(`${SA}/fin`);
    expectCode(pending, 200);
    assert.ok(pending.body.metadata.deletionTimestamp);
    const one = await c.put(`${SA}/fin`, { ...pending.body, metadata: { ...pending.body.metadata, finalizers: ['example.com/b'] } });
    expectCode(one, 200);
    const still = await c.get(`${SA}/fin`);
    expectCode(still, 200);
    assert.deepEqual(still.body.metadata.finalizers, ['example.com/b']);
    const last = await c.put(`${SA}/fin`, { ...still.body, metadata: { ...still.body.metadata, finalizers: [] } });
    expectCode(last, 200);
    await eventually(async () => (await c.get(`${SA}/fin`)).status === 404, 10_000, 'finalized SA to go');
    expectStatus(await c.get(`${SA}/fin`), 404, 'NotFound');
  });

  it('deletecollection with a labelSelector deletes only matching objects', async () => {
    await create(SA, sa('dc-1', { labels: { dc: 'yes' } }));
    await create(SA, sa('dc-2', { labels: { dc: 'yes' } }));
    await create(SA, sa('dc-3', { labels: { dc: 'no' } }));
    const res = await c.delete(`${SA}?labelSelector=dc%3Dyes`);
    expectCode(res, 200);
    // kube answers with the list of what it deleted.
    assert.equal(res.body.kind, 'ServiceAccountList');
    assert.deepEqual(res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['dc-1', 'dc-2']);
    const left = await names(`${SA}?labelSelector=dc`);
    assert.deepEqual(left, ['dc-3']);
  });
});

describe('dry-run', () => {
  it('dryRun=All changes nothing on create, update, delete and deletecollection', async () => {
    const dc = await c.post(`${SA}?dryRun=All`, sa('dry'));
    expectCode(dc, 201);
    assert.equal(dc.body.metadata.name, 'dry');
    expectCode(await c.get(`${SA}/dry`), 404);

    const real = await create(SA, sa('dry', { labels: { v: '1', dry: 'x' } }));
    const du = await c.put(`${SA}/dry?dryRun=All`, { ...real, metadata: { ...real.metadata, labels: { v: '2', dry: 'x' } } });
    expectCode(du, 200);
    assert.equal(du.body.metadata.labels.v, '2');
    const afterUpd = (await c.get(`${SA}/dry`)).body;
    assert.equal(afterUpd.metadata.labels.v, '1');
    assert.equal(afterUpd.metadata.resourceVersion, real.metadata.resourceVersion);

    expectCode(await c.delete(`${SA}/dry?dryRun=All`), 200);
    expectCode(await c.get(`${SA}/dry`), 200);
    expectCode(await c.delete(`${SA}?dryRun=All&labelSelector=dry%3Dx`), 200);
    assert.deepEqual(await names(`${SA}?labelSelector=dry%3Dx`), ['dry']);
    expectCode(await c.get(`${SA}/dry`), 200);
  });
});

describe('lists', () => {
  it('pretty=true indents', async () => {
    const res = await c.get(`${SA}?pretty=true`);
    expectCode(res, 200);
    assert.match(res.raw.toString(), /^\{\n {2}"/);
    assert.equal(res.body.kind, 'ServiceAccountList');
    const plain = await c.get(SA);
    assert.doesNotMatch(plain.raw.toString().trimEnd(), /\n/);
  });

  it('list shape, label and field selectors', async () => {
    await create(SA, sa('sel-a', { labels: { sel: 'a' } }));
    await create(SA, sa('sel-b', { labels: { sel: 'b' } }));
    const res = await c.get(SA);
    expectCode(res, 200);
    assert.equal(res.body.kind, 'ServiceAccountList');
    assert.equal(res.body.apiVersion, 'v1');
    assert.equal(typeof res.body.metadata.resourceVersion, 'string');
    assert.ok(res.body.metadata.resourceVersion.length > 0);
    assert.ok(Array.isArray(res.body.items));
    assert.deepEqual(await names(`${SA}?labelSelector=sel%3Da`), ['sel-a']);
    assert.deepEqual(await names(`${SA}?labelSelector=sel%20in%20(a%2Cb)`), ['sel-a', 'sel-b']);
    assert.deepEqual(await names(`${SA}?fieldSelector=metadata.name%3Dsel-b`), ['sel-b']);
    const all = await names('/api/v1/serviceaccounts?fieldSelector=metadata.name%3Dsel-b');
    assert.deepEqual(all, ['sel-b']);
  });

  it('limit=2 pages with continue tokens return every item once', async () => {
    const want: string[] = [];
    for (let i = 0; i < 5; i++) {
      await create(SA, sa(`page-${i}`, { labels: { page: 'yes' } }));
      want.push(`page-${i}`);
    }
    const seen: string[] = [];
    let cont = '';
    let rv: string | undefined;
    let pages = 0;
    do {
      const res = await c.get(`${SA}?labelSelector=page%3Dyes&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      expectCode(res, 200);
      assert.ok(res.body.items.length <= 2);
      if (rv === undefined) rv = res.body.metadata.resourceVersion;
      else assert.equal(res.body.metadata.resourceVersion, rv);
      seen.push(...res.body.items.map((i: any) => i.metadata.name));
      cont = res.body.metadata.continue ?? '';
      assert.ok(++pages < 10, 'too many pages');
    } while (cont);
    assert.ok(pages >= 3, `expected at least 3 pages, got ${pages}`);
    assert.deepEqual(seen.sort(), want);
  });
});

describe('watch', () => {
  it('from a list resourceVersion sees ADDED, MODIFIED, DELETED in order', async () => {
    const rv = (await c.get(SA)).body.metadata.resourceVersion;
    const mine = (evs: any[]): any[] => evs.filter((e) => e.object?.metadata?.name === 'w1');
    const watching = c.watch(`${SA}?watch=1&resourceVersion=${rv}`, (evs) => mine(evs).length >= 3, 15_000);
    const created = await create(SA, sa('w1'));
    expectCode(await c.put(`${SA}/w1`, { ...created, metadata: { ...created.metadata, labels: { w: '1' } } }), 200);
    expectCode(await c.delete(`${SA}/w1`), 200);
    const { status, events } = await watching;
    assert.equal(status, 200);
    assert.deepEqual(mine(events).map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.equal(mine(events)[1].object.metadata.labels.w, '1');
    assert.equal(mine(events)[0].object.kind, 'ServiceAccount');
  });

  it('without resourceVersion starts with synthetic ADDED events', async () => {
    await create(SA, sa('syn-1', { labels: { syn: 'y' } }));
    await create(SA, sa('syn-2', { labels: { syn: 'y' } }));
    const { status, events } = await c.watch(`${SA}?watch=1&labelSelector=syn%3Dy`, (evs) => evs.length >= 2, 10_000);
    assert.equal(status, 200);
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED']);
    assert.deepEqual(events.map((e) => e.object.metadata.name).sort(), ['syn-1', 'syn-2']);
  });

  it('the legacy /api/v1/watch path works', async () => {
    const rv = (await c.get(SA)).body.metadata.resourceVersion;
    const watching = c.watch(`/api/v1/watch/namespaces/${NS}/serviceaccounts?resourceVersion=${rv}`, (evs) => evs.some((e) => e.object?.metadata?.name === 'legacy'), 10_000);
    await create(SA, sa('legacy'));
    const { status, events } = await watching;
    assert.equal(status, 200);
    const ev = events.find((e) => e.object?.metadata?.name === 'legacy');
    assert.equal(ev?.type, 'ADDED');
  });
});
