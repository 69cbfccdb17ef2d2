/**
 * Metadata-only reads on the real server, as kube 1.24 serves them to client-go's metadata client
 * and metadata informers: `as=PartialObjectMetadata` on get and watch, `as=PartialObjectMetadataList`
 * on list, meta.k8s.io v1 and v1beta1, JSON, YAML and Protobuf (for custom resources too), kube's
 * 406s for the wrong combinations, and no full object from the watch cache's byte fast paths.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { decodeProtobuf, decodeWatchEventFrames } from '@plinth/apiserver';
import { eventually, usePlinth, type TestClient } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const NS = 'partial-meta';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const PB = 'application/vnd.kubernetes.protobuf';
const meta = (as: string, v = 'v1'): string => `;as=${as};g=meta.k8s.io;v=${v}`;
/** client-go's metadata client: Protobuf first, then JSON, then the plain object. */
const METADATA_LIST_ACCEPT = `${PB}${meta('PartialObjectMetadataList')},application/json${meta('PartialObjectMetadataList')},application/json`;
const METADATA_ACCEPT = `${PB}${meta('PartialObjectMetadata')},application/json${meta('PartialObjectMetadata')},application/json`;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GIZMOS = `/apis/meta.example.com/v1/namespaces/${NS}/gizmos`;

const env = usePlinth();
let c: TestClient;
let ready: Promise<void> | undefined;

function setup(): Promise<void> {
  return (ready ??= (async () => {
    c = (await eventually(async () => env.plinth, 60_000, 'plinth')).client;
    expectCode(await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
    // The namespace's kube-root-ca.crt (root-ca-cert-publisher) is there before the lists run.
    await eventually(async () => (await c.get(`${CM}/kube-root-ca.crt`)).status === 200, 10_000, 'kube-root-ca.crt');
    for (const name of ['one', 'two', 'three']) {
      expectCode(await c.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'pm' }, annotations: { note: name } }, data: { big: 'x'.repeat(200) } }), 201);
    }
  })());
}

const accept = (value: string) => ({ headers: { accept: value } });

/** Reads a watch for `ms` (or until `enough` events), returning status, content type and raw bytes. */
function rawWatch(path: string, acceptHeader: string, ms: number, onOpen?: () => Promise<void>): Promise<{ status: number; contentType: string; raw: Buffer }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, c.base);
    const req = httpsRequest(
      u,
      { method: 'GET', headers: { authorization: `Bearer ${c.token}`, accept: acceptHeader }, ca: readFileSync(env.plinth.server.caFile!) },
      (res) => {
        const chunks: Buffer[] = [];
        const done = (): void => {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), raw: Buffer.concat(chunks) });
        };
        const timer = setTimeout(done, ms);
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', done);
        res.on('error', done);
        void onOpen?.().catch(reject);
      },
    );
    req.on('error', (e) => {
      if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
    });
    req.end();
  });
}

function jsonLines(raw: Buffer): any[] {
  return raw
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

describe('get', () => {
  before(setup);

  it('as=PartialObjectMetadata (v1 and v1beta1) answers the whole metadata and nothing else, as plain JSON', async () => {
    const full = (await c.get(`${CM}/one`)).body;
    for (const v of ['v1', 'v1beta1']) {
      // Each read path: the cache's bytes path (no resourceVersion, and 0) and a read from etcd.
      for (const q of ['', '?resourceVersion=0', `?resourceVersion=${full.metadata.resourceVersion}`]) {
        const res = await c.get(`${CM}/one${q}`, accept(`application/json${meta('PartialObjectMetadata', v)}`));
        expectCode(res, 200);
        assert.equal(res.headers['content-type'], 'application/json');
        assert.deepEqual(res.body, { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${v}`, metadata: full.metadata }, `${v} ${q}`);
      }
    }
  });

  it('YAML and Protobuf (the envelope names meta.k8s.io PartialObjectMetadata)', async () => {
    const full = (await c.get(`${CM}/two`)).body;
    const yaml = await c.get(`${CM}/two`, accept(`application/yaml${meta('PartialObjectMetadata')}`));
    expectCode(yaml, 200);
    assert.equal(yaml.headers['content-type'], 'application/yaml');
    assert.deepEqual(parseYaml(yaml.raw.toString()), { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: full.metadata });
    for (const v of ['v1', 'v1beta1']) {
      const pb = await c.get(`${CM}/two`, accept(`${PB}${meta('PartialObjectMetadata', v)}`));
      expectCode(pb, 200);
      assert.equal(pb.headers['content-type'], PB);
      assert.deepEqual(decodeProtobuf(pb.raw), { apiVersion: `meta.k8s.io/${v}`, kind: 'PartialObjectMetadata', metadata: full.metadata });
    }
  });

  it('as=PartialObjectMetadataList on a get is kube\'s 406; an unknown version is skipped for the next media type', async () => {
    expectStatus(
      await c.get(`${CM}/one`, accept(`application/json${meta('PartialObjectMetadataList')}`)),
      406,
      'NotAcceptable',
      'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)',
    );
    expectStatus(
      await c.get('/apis/rbac.authorization.k8s.io/v1/clusterroles/view', accept(`${PB}${meta('PartialObjectMetadataList')}`)),
      406,
      'NotAcceptable',
      'you requested PartialObjectMetadataList, but the requested object is not a list (*rbac.ClusterRole)',
    );
    expectStatus(await c.get(`${CM}/one`, accept(`application/json${meta('PartialObjectMetadata', 'v2')}`)), 406, 'NotAcceptable');
    const fallback = await c.get(`${CM}/one`, accept(`application/json${meta('PartialObjectMetadata', 'v2')},application/json`));
    expectCode(fallback, 200);
    assert.equal(fallback.body.kind, 'ConfigMap');
    // A missing object is a 404 first, as kube reads before it converts.
    expectStatus(await c.get(`${CM}/nope`, accept(`application/json${meta('PartialObjectMetadataList')}`)), 404, 'NotFound');
  });
});

describe('list', () => {
  before(setup);

  it('as=PartialObjectMetadataList: every item with its kind, the list\'s metadata; from the cache and from etcd, paged', async () => {
    const full = (await c.get(`${CM}?labelSelector=app%3Dpm`)).body;
    for (const q of ['?labelSelector=app%3Dpm', '?labelSelector=app%3Dpm&resourceVersion=0', `?labelSelector=app%3Dpm&resourceVersion=${full.metadata.resourceVersion}&resourceVersionMatch=Exact`]) {
      const res = await c.get(`${CM}${q}`, accept(METADATA_LIST_ACCEPT.split(',').slice(1).join(',')));
      expectCode(res, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.body.kind, 'PartialObjectMetadataList');
      assert.equal(res.body.apiVersion, 'meta.k8s.io/v1');
      assert.equal(typeof res.body.metadata.resourceVersion, 'string');
      assert.deepEqual(
        res.body.items,
        full.items.map((i: any) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: i.metadata })),
        q,
      );
    }
    const page = await c.get(`${CM}?limit=3`, accept(`application/json${meta('PartialObjectMetadataList', 'v1beta1')}`));
    expectCode(page, 200);
    assert.equal(page.body.apiVersion, 'meta.k8s.io/v1beta1');
    assert.equal(page.body.items.length, 3);
    assert.equal(page.body.items[0].apiVersion, 'meta.k8s.io/v1beta1');
    assert.ok(page.body.metadata.continue);
    assert.equal(page.body.metadata.remainingItemCount, 1);
    const rest = await c.get(`${CM}?limit=3&continue=${encodeURIComponent(page.body.metadata.continue)}`, accept(`application/json${meta('PartialObjectMetadataList')}`));
    assert.deepEqual(rest.body.items.map((i: any) => i.metadata.name), ['two']);
    assert.equal(rest.body.items[0].data, undefined);
  });

  it('Protobuf, v1 and v1beta1 (whose list has field numbers of its own)', async () => {
    const full = (await c.get(`${CM}?labelSelector=app%3Dpm`)).body;
    const v1 = await c.get(`${CM}?labelSelector=app%3Dpm`, accept(METADATA_LIST_ACCEPT));
    expectCode(v1, 200);
    assert.equal(v1.headers['content-type'], PB);
    const list = decodeProtobuf(v1.raw) as any;
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.deepEqual(list.items.map((i: any) => i.metadata), full.items.map((i: any) => i.metadata));
    const beta = await c.get(`${CM}?labelSelector=app%3Dpm`, accept(`${PB}${meta('PartialObjectMetadataList', 'v1beta1')}`));
    expectCode(beta, 200);
    const b = decodeProtobuf(beta.raw) as any;
    assert.equal(b.apiVersion, 'meta.k8s.io/v1beta1');
    assert.deepEqual(b.items.map((i: any) => i.metadata.name), ['one', 'three', 'two']);
    // runtime.Unknown's raw (field 2) holds the list: items are field 1 there, metadata field 2.
    const raw = unknownRaw(beta.raw);
    assert.equal(raw[0], 0x0a, 'first an item (field 1, bytes)');
    assert.ok(lastTopLevelTag(raw) === 0x12, 'ListMeta last (field 2)');
  });

  it('as=PartialObjectMetadata on a list is kube\'s 406', async () => {
    expectStatus(
      await c.get(CM, accept(`application/json${meta('PartialObjectMetadata')}`)),
      406,
      'NotAcceptable',
      'you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)',
    );
  });
});

/** The `raw` bytes of a Protobuf envelope (after the 4-byte prefix, runtime.Unknown field 2). */
function unknownRaw(buf: Buffer): Buffer {
  let i = 4;
  while (i < buf.length) {
    const tag = buf[i++]!;
    let len = 0;
    let shift = 0;
    for (;;) {
      const b = buf[i++]!;
      len |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) break;
    }
    if (tag === 0x12) return buf.subarray(i, i + len);
    i += len;
  }
  throw new Error('no raw field');
}

/** The tag of the last top-level field of a message made of length-delimited fields. */
function lastTopLevelTag(msg: Buffer): number {
  let i = 0;
  let last = 0;
  while (i < msg.length) {
    last = msg[i++]!;
    let len = 0;
    let shift = 0;
    for (;;) {
      const b = msg[i++]!;
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    i += len;
  }
  return last;
}

describe('watch', () => {
  before(setup);

  it('JSON events carry PartialObjectMetadata, while a plain watch of the same collection gets whole objects', async () => {
    const rv = (await c.get(CM)).body.metadata.resourceVersion;
    const path = `${CM}?watch=1&resourceVersion=${rv}&labelSelector=app%3Dwatch`;
    const mutate = async (): Promise<void> => {
      await new Promise((r) => setTimeout(r, 300));
      expectCode(await c.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1', labels: { app: 'watch' } }, data: { k: 'v' } }), 201);
      const cur = (await c.get(`${CM}/w1`)).body;
      expectCode(await c.put(`${CM}/w1`, { ...cur, data: { k: 'v2' } }), 200);
      expectCode(await c.delete(`${CM}/w1`), 200);
    };
    const [partial, plain] = await Promise.all([
      rawWatch(path, `application/json${meta('PartialObjectMetadata')}`, 2500, mutate),
      rawWatch(path, 'application/json', 2500),
    ]);
    assert.equal(partial.status, 200);
    assert.equal(partial.contentType, 'application/json');
    const pe = jsonLines(partial.raw);
    assert.deepEqual(pe.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    for (const e of pe) {
      assert.deepEqual(Object.keys(e.object), ['kind', 'apiVersion', 'metadata']);
      assert.equal(e.object.kind, 'PartialObjectMetadata');
      assert.equal(e.object.metadata.name, 'w1');
    }
    const fe = jsonLines(plain.raw);
    assert.deepEqual(fe.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.deepEqual(fe.map((e) => e.object.data.k), ['v', 'v2', 'v2']);
    assert.deepEqual(pe.map((e) => e.object.metadata), fe.map((e) => e.object.metadata));
  });

  it('a metadata informer\'s flow in Protobuf: list, then watch from its resourceVersion', async () => {
    const list = await c.get(`${CM}?labelSelector=app%3Dinformer`, accept(METADATA_LIST_ACCEPT));
    expectCode(list, 200);
    const l = decodeProtobuf(list.raw) as any;
    assert.deepEqual(l.items ?? [], []);
    const w = await rawWatch(`${CM}?watch=1&allowWatchBookmarks=true&resourceVersion=${l.metadata.resourceVersion}&labelSelector=app%3Dinformer`, METADATA_ACCEPT, 2000, async () => {
      await new Promise((r) => setTimeout(r, 300));
      expectCode(await c.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inf', labels: { app: 'informer' } }, data: { secret: 'not in the event' } }), 201);
      expectCode(await c.delete(`${CM}/inf`), 200);
    });
    assert.equal(w.status, 200);
    assert.equal(w.contentType, `${PB};stream=watch`);
    const events = decodeWatchEventFrames(w.raw).filter((e) => e.type !== 'BOOKMARK');
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'DELETED']);
    for (const e of events) {
      const obj = e.object as any;
      assert.deepEqual(Object.keys(obj).sort(), ['apiVersion', 'kind', 'metadata']);
      assert.equal(obj.kind, 'PartialObjectMetadata');
      assert.equal(obj.metadata.name, 'inf');
    }
  });

  it('as=PartialObjectMetadataList on a watch: kube cannot encode its events, so the stream ends at the first', async () => {
    const w = await rawWatch(`${CM}?watch=1&labelSelector=app%3Dpm`, `application/json${meta('PartialObjectMetadataList')}`, 3000);
    assert.equal(w.status, 200);
    assert.equal(w.raw.length, 0);
  });
});

describe('custom resources', () => {
  before(setup);

  it('metadata only in JSON and in Protobuf, which the full objects do not have', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.meta.example.com' },
      spec: {
        group: 'meta.example.com',
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
      },
    };
    expectCode(await c.post(CRDS, crd), 201);
    await eventually(async () => (await c.get(GIZMOS)).status === 200, 20_000, 'gizmos served');
    const created = await c.post(GIZMOS, { apiVersion: 'meta.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' }, spec: { size: 3 } });
    expectCode(created, 201);
    const one = await c.get(`${GIZMOS}/g1`, accept(METADATA_ACCEPT));
    expectCode(one, 200);
    assert.equal(one.headers['content-type'], PB);
    assert.deepEqual(decodeProtobuf(one.raw), { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: created.body.metadata });
    expectStatus(await c.get(`${GIZMOS}/g1`, accept(PB)), 406, 'NotAcceptable');
    const list = await c.get(GIZMOS, accept(`application/json${meta('PartialObjectMetadataList')}`));
    expectCode(list, 200);
    assert.deepEqual(list.body.items, [{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: created.body.metadata }]);
    const w = await rawWatch(`${GIZMOS}?watch=1&resourceVersion=0`, METADATA_ACCEPT, 1500);
    assert.equal(w.contentType, `${PB};stream=watch`);
    const added = decodeWatchEventFrames(w.raw);
    assert.deepEqual(added.map((e) => [e.type, e.object]), [['ADDED', { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: created.body.metadata }]]);
    expectStatus(
      await c.get(GIZMOS, accept(`application/json${meta('PartialObjectMetadata')}`)),
      406,
      'NotAcceptable',
      'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
    );
  });
});
