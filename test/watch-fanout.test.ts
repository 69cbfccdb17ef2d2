/**
 * 500 concurrent watchers on one process: each gets every event, and etcd carries one watch per
 * resource (the watch cache's feed), not one per client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { eventually, usePlinth } from './harness.js';

const env = usePlinth();
const WATCHERS = 500;
const WRITES = 20;

/** etcd's own count of open watchers, from its Prometheus metrics. */
async function etcdWatchers(): Promise<number> {
  const text = await (await fetch(`${env.etcd.endpoint}/metrics`)).text();
  const m = /^etcd_debugging_mvcc_watcher_total (\d+)/m.exec(text);
  assert.ok(m, 'etcd exposes etcd_debugging_mvcc_watcher_total');
  return Number(m[1]);
}

test(`${WATCHERS} watchers each receive every event over one etcd watch per resource`, async () => {
  const c = env.plinth.client;
  const path = '/api/v1/namespaces/default/serviceaccounts';
  // The namespace's `default` ServiceAccount comes from a controller after start-up: wait for it,
  // so that the watches below start after it (only the writes of this test are counted anyway).
  await eventually(async () => (await c.get(`${path}/default`)).status === 200, 10_000, 'the default ServiceAccount');
  const rv = (await c.get(path)).body.metadata.resourceVersion;
  const baseline = await etcdWatchers();
  const cacheWatchers = (): number => env.plinth.server.watchCaches!.all().reduce((n, ch) => n + ch.stats().watchers, 0);
  const before = cacheWatchers(); // the in-process controllers' own watches
  const resources = env.plinth.server.watchCaches!.all().length;
  // One etcd watch per cached resource, plus the one on compact_rev_key.
  assert.equal(env.plinth.server.storage.activeEtcdWatches, resources + 1);

  const agent = new Agent({ ca: readFileSync(env.plinth.server.caFile!), keepAlive: false, maxSockets: Infinity });
  const received: number[] = new Array(WATCHERS).fill(0);
  let open = 0;
  const requests = Array.from({ length: WATCHERS }, (_, i) => {
    const req = request(new URL(`${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=60`, c.base), { headers: { authorization: `Bearer ${c.token}` }, agent }, (res) => {
      open++;
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const e = JSON.parse(buf.slice(0, nl)) as { type: string; object: { metadata: { name: string } } };
          buf = buf.slice(nl + 1);
          if (e.type === 'ADDED' && e.object.metadata.name.startsWith('fan-')) received[i]!++;
        }
      });
    });
    req.on('error', () => undefined);
    req.end();
    return req;
  });
  try {
    await eventually(async () => open === WATCHERS, 60_000, `every watch to be open (${open} of ${WATCHERS})`);
    assert.equal(env.plinth.server.storage.activeEtcdWatches, resources + 1, 'client watches add no etcd watch');
    assert.equal(await etcdWatchers(), baseline, 'etcd sees no new watcher');
    for (let i = 0; i < WRITES; i++) assert.equal((await c.post(path, { metadata: { name: `fan-${i}` } })).status, 201);
    await eventually(
      async () => received.every((n) => n === WRITES),
      60_000,
      'every watcher to get every event',
    ).catch((e: Error) => {
      const short = received.filter((n) => n !== WRITES);
      throw new Error(`${e.message}; ${short.length} watchers short, e.g. ${short.slice(0, 5).join(',')} events; open=${open}`);
    });
    assert.equal(received.reduce((a, b) => a + b, 0), WATCHERS * WRITES);
    assert.ok(cacheWatchers() >= before + WATCHERS);
  } finally {
    for (const r of requests) r.destroy();
    agent.destroy();
  }
  await eventually(async () => cacheWatchers() === before, 10_000, 'watchers to be released');
});
