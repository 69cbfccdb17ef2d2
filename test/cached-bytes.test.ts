/**
 * Reads answered from the watch cache's stored bytes (GET and LIST as compact JSON) are byte for
 * byte what the general path writes: compared with the pretty output re-encoded compactly and with
 * a plinth without a watch cache on the same etcd (paged lists read from etcd too), for objects whose JSON has nested metadata,
 * unicode and escapes, and for objects another writer stored in a form JSON.stringify does not
 * write (spaces, \u003c escapes), which must leave through the general path.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { eventually, startInProcess, startTestEtcd, type InProcessPlinth, type TestEtcd } from './harness.js';

const NS = 'bytes';
const CM = `/api/v1/namespaces/${NS}/configmaps`;

/** What the general path writes for a body it pretty-printed: the same JSON, compact. */
function compact(raw: Buffer): string {
  return `${JSON.stringify(JSON.parse(raw.toString('utf8')))}\n`;
}

/**
 * Reads, made one after the other, that should answer the same list. A list read at etcd's latest
 * revision moves with the two servers' own background writes (leases), which may land between
 * them: they are made again (up to five times) until their resourceVersions agree.
 */
async function agreeing<T extends { body: { metadata?: { resourceVersion?: string } } }>(reads: Array<() => Promise<T>>): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    const got: T[] = [];
    for (const read of reads) got.push(await read());
    if (attempt === 5 || new Set(got.map((r) => r.body.metadata?.resourceVersion)).size === 1) return got;
  }
}

describe('responses served from cached bytes', () => {
  let etcd: TestEtcd;
  let cached: InProcessPlinth;
  let direct: InProcessPlinth;
  let raw: Etcd3;

  before(async () => {
    etcd = await startTestEtcd();
    cached = await startInProcess({ etcd });
    direct = await startInProcess({ etcd, args: ['--watch-cache=false'] });
    raw = new Etcd3({ hosts: [etcd.endpoint] });
    assert.equal((await cached.client.post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
    const objects = [
      { metadata: { name: 'nested', labels: { metadata: 'x' }, annotations: { 'a/b': '{"metadata":{"resourceVersion":"1"}}' } }, data: { metadata: '}{', spec: '"resourceVersion":"9"' } },
      { metadata: { name: 'unicode', annotations: { u: 'héllo wörld – 日本語 😀 \u2028', ctl: '\u0001\t\n\r"\\' } }, data: { quoted: 'v\\"}' } },
      { data: { first: 'data before metadata' }, metadata: { name: 'late' } },
    ];
    for (const o of objects) assert.equal((await cached.client.post(CM, o)).status, 201);
    // Written by another client: spaces and Go's escapes, which JSON.stringify does not write.
    await raw.put(`/registry/configmaps/${NS}/foreign`).value('{"apiVersion":"v1", "kind":"ConfigMap","metadata":{"name":"foreign","namespace":"bytes","uid":"f00"},"data":{"html":"\\u003cb\\u003e"}}');
    await eventually(async () => (await cached.client.get(`${CM}/foreign?resourceVersion=0`)).status === 200, 10_000, 'foreign object cached');
  });

  after(async () => {
    raw.close();
    await direct.stop();
    await cached.stop();
    await etcd.stop();
  });

  for (const name of ['nested', 'unicode', 'late', 'foreign']) {
    test(`GET ${name}: cached bytes equal the general path`, async () => {
      for (const rv of ['0', '']) {
        const q = rv === '' ? '' : `resourceVersion=${rv}`;
        const fast = await cached.client.get(`${CM}/${name}?${q}`);
        assert.equal(fast.status, 200);
        const pretty = await cached.client.get(`${CM}/${name}?${q}&pretty=true`);
        assert.equal(fast.raw.toString('utf8'), compact(pretty.raw));
        const general = await direct.client.get(`${CM}/${name}`);
        assert.equal(fast.raw.toString('utf8'), general.raw.toString('utf8'));
        assert.equal(fast.headers['content-type'], general.headers['content-type']);
        assert.equal(fast.headers['content-length'], general.headers['content-length']);
      }
    });
  }

  test('paged LIST from etcd: bytes equal the general path, continue tokens and remainingItemCount included', async () => {
    for (const limit of [1, 2, 3]) {
      let cont = '';
      let pages = 0;
      let sawRemaining = false;
      const names: string[] = [];
      do {
        const q = `limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
        const [fast, pretty, general] = await agreeing([() => cached.client.get(`${CM}?${q}`), () => cached.client.get(`${CM}?${q}&pretty=true`), () => direct.client.get(`${CM}?${q}`)]);
        assert.equal(fast.status, 200);
        assert.equal(fast.raw.toString('utf8'), compact(pretty.raw));
        assert.equal(fast.raw.toString('utf8'), general.raw.toString('utf8'));
        assert.equal(fast.headers['content-length'], general.headers['content-length']);
        if (fast.body.metadata.remainingItemCount !== undefined) sawRemaining = true;
        for (const i of fast.body.items as Array<{ metadata: { name: string } }>) names.push(i.metadata.name);
        cont = fast.body.metadata.continue ?? '';
        pages++;
      } while (cont);
      assert.ok(pages >= 2 && sawRemaining, `limit ${limit}: ${pages} pages`);
      assert.ok(['foreign', 'late', 'nested', 'unicode'].every((n) => names.includes(n)), names.join());
    }
    // At an exact revision with a limit (also read from etcd).
    const rv = (await cached.client.get(CM)).body.metadata.resourceVersion as string;
    const q = `limit=2&resourceVersion=${rv}&resourceVersionMatch=Exact`;
    const fast = await cached.client.get(`${CM}?${q}`);
    assert.equal(fast.raw.toString('utf8'), (await direct.client.get(`${CM}?${q}`)).raw.toString('utf8'));
  });

  test('LIST: cached bytes equal the general path (with and without a non-plain item)', async () => {
    for (const q of ['resourceVersion=0', '', 'resourceVersion=0&limit=2']) {
      const [fast, pretty] = await agreeing([() => cached.client.get(`${CM}?${q}`), () => cached.client.get(`${CM}?${q}&pretty=true`)]);
      assert.equal(fast.status, 200);
      assert.ok(fast.body.items.length >= 4);
      assert.equal(fast.raw.toString('utf8'), compact(pretty.raw));
      // etcd at the cache's revision gives the same list.
      const general = await direct.client.get(`${CM}?resourceVersion=${fast.body.metadata.resourceVersion}&resourceVersionMatch=Exact`);
      assert.equal(fast.raw.toString('utf8'), general.raw.toString('utf8'));
    }
    // Without the foreign object every item is served from bytes.
    await raw.delete().key(`/registry/configmaps/${NS}/foreign`);
    const listed = await eventually(async () => {
      const r = await cached.client.get(`${CM}?resourceVersion=0`);
      return r.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'foreign') ? undefined : r;
    }, 10_000, 'foreign object gone');
    const general = await direct.client.get(`${CM}?resourceVersion=${listed.body.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    assert.equal(listed.raw.toString('utf8'), general.raw.toString('utf8'));
  });

  test('what this plinth writes is served as bytes without re-checking it (known from the write), equal to the general path', async () => {
    const cache = cached.server.watchCaches!.all().find((c) => c.kind === 'ConfigMap' && c.apiVersion === 'v1')!;
    const before = cache.stats().provenByWrite;
    const names = ['proven-a', 'proven-b', 'proven-c'];
    for (const n of names) assert.equal((await cached.client.post(CM, { metadata: { name: n, annotations: { q: '"}{' } }, data: { k: `v ${n} é` } })).status, 201);
    const updated = await cached.client.put(`${CM}/proven-a`, { ...(await cached.client.get(`${CM}/proven-a`)).body, data: { k: 'changed' } });
    assert.equal(updated.status, 200);
    // Each create and the update, once its event reached the cache.
    await eventually(async () => cache.stats().provenByWrite - before === 4, 10_000, 'writes proven');
    for (const n of names) {
      const fast = await cached.client.get(`${CM}/${n}?resourceVersion=0`);
      assert.equal(fast.raw.toString('utf8'), (await direct.client.get(`${CM}/${n}`)).raw.toString('utf8'));
    }
    const list = await cached.client.get(`${CM}?resourceVersion=0`);
    assert.equal(list.raw.toString('utf8'), (await direct.client.get(`${CM}?resourceVersion=${list.body.metadata.resourceVersion}&resourceVersionMatch=Exact`)).raw.toString('utf8'));
    // A number of 16 digits or more (read back by the exact parser, which may not give the same
    // text): that object is checked as before.
    const PODS = `/api/v1/namespaces/${NS}/pods`;
    const pod = { metadata: { name: 'long-number' }, spec: { terminationGracePeriodSeconds: 1234567890123456, containers: [{ name: 'c', image: 'i' }] } };
    // Its namespace's default ServiceAccount first (the ServiceAccount admission needs it).
    await eventually(async () => (await cached.client.post(PODS, pod)).status === 201, 10_000, 'pod created');
    const podCache = cached.server.watchCaches!.all().find((c) => c.kind === 'Pod')!;
    await eventually(async () => (await cached.client.get(`${PODS}/long-number?resourceVersion=0`)).status === 200, 10_000, 'pod cached');
    assert.equal(podCache.stats().provenByWrite, 0);
    const got = await cached.client.get(`${PODS}/long-number?resourceVersion=0`);
    assert.equal(got.raw.toString('utf8'), (await direct.client.get(`${PODS}/long-number`)).raw.toString('utf8'));
    assert.match(got.raw.toString('utf8'), /"terminationGracePeriodSeconds":1234567890123456/);
  });

  test('Events, wrapped for --event-ttl (default 1h), are still answered from the cache\'s bytes, equal to the general path', async () => {
    const EV = `/api/v1/namespaces/${NS}/events`;
    const event = { metadata: { name: 'ev' }, involvedObject: { kind: 'ConfigMap', namespace: NS, name: 'nested' }, reason: 'Tested', message: 'héllo "quoted"', type: 'Normal' };
    assert.equal((await cached.client.post(EV, event)).status, 201);
    const cache = cached.server.watchCaches!.all().find((c) => c.kind === 'Event' && c.apiVersion === 'v1')!;
    await eventually(async () => (await cached.client.get(`${EV}/ev?resourceVersion=0`)).status === 200, 10_000, 'event cached');
    const before = cache.stats().bytesResponses;
    for (const q of ['resourceVersion=0', '']) {
      const fast = await cached.client.get(`${EV}/ev?${q}`);
      assert.equal(fast.status, 200);
      assert.equal(fast.raw.toString('utf8'), (await direct.client.get(`${EV}/ev`)).raw.toString('utf8'));
    }
    const list = await cached.client.get(`${EV}?resourceVersion=0`);
    assert.equal(list.raw.toString('utf8'), (await direct.client.get(`${EV}?resourceVersion=${list.body.metadata.resourceVersion}&resourceVersionMatch=Exact`)).raw.toString('utf8'));
    // Two GETs and a LIST, each answered with the stored bytes (no decode and encode).
    assert.equal(cache.stats().bytesResponses - before, 3);
  });
});
