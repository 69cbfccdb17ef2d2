/**
 * Issue 28 §2: the bench's fan-out floor (bench/floor/), with plinth's etcd client (FastKV and the
 * watch feed) and with etcd3: every watch gets every event of its namespace as plinth frames it
 * (`{"type":"ADDED","object":{…}}` lines, the object as the write answered it), a reader that
 * stops reading holds back nobody else and gets everything once it reads again. No timings here
 * (those are `make bench`'s).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { Etcd3 } from 'etcd3';
import { eventually, usePlinth } from './harness.js';
// Bench code (built by `tsc -b` before the tests): types from its declarations, loaded at run time.
import type * as FloorModule from '../bench/dist/lib/floor.js';
import type * as HttpModule from '../bench/dist/lib/http.js';
import type * as ReportModule from '../bench/dist/lib/report.js';
import type * as RoundsModule from '../bench/dist/lib/rounds.js';
import type * as PlinthModule from '../bench/dist/lib/plinth.js';

const benchModule = <T>(path: string): Promise<T> => import(new URL(`../../bench/dist/${path}`, import.meta.url).href) as Promise<T>;
const { startFloor } = await benchModule<typeof FloorModule>('lib/floor.js');
const { KubeClient, parseKubeconfig } = await benchModule<typeof HttpModule>('lib/http.js');
const { evaluate, formatTable } = await benchModule<typeof ReportModule>('lib/report.js');
const { medianRound, cpuPerOp } = await benchModule<typeof RoundsModule>('lib/rounds.js');

const env = usePlinth();

interface Event {
  type: string;
  object: { metadata: { name: string; namespace: string; resourceVersion: string; annotations?: Record<string, string> } };
}

/** A watch on the floor read as JSON lines (Node's HTTP client undoes the chunking). */
async function watch(client: InstanceType<typeof KubeClient>, path: string): Promise<{ events: Event[]; res: IncomingMessage; close(): void }> {
  const events: Event[] = [];
  let tail = '';
  const s = await client.openStream(path, new Agent({ ca: client.info.caPem, keepAlive: false }), (chunk) => {
    const lines = (tail + chunk.toString('utf8')).split('\n');
    tail = lines.pop()!;
    for (const l of lines) events.push(JSON.parse(l) as Event);
  });
  assert.equal(s.res.headers['content-type'], 'application/json');
  return { events, res: s.res, close: s.close };
}

const serviceAccount = (ns: string, name: string, note = ''): Buffer =>
  Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns, annotations: { note } } }));

for (const etcdClient of ['fastkv', 'etcd3'] as const) {
  describe(`the fan-out floor (${etcdClient})`, () => {
    it('writes every event of its namespace to every watch as plinth frames it, and a stalled reader holds back nobody', async () => {
      const info = parseKubeconfig(readFileSync(env.plinth.server.kubeconfigPath, 'utf8'));
      const plinth = { pid: process.pid, client: new KubeClient(info, 4), dataDir: env.plinth.dataDir, startupMs: 0, output: () => '', stop: async () => undefined } satisfies PlinthModule.PlinthProcess;
      const prefix = `/floor-test-${etcdClient}`;
      const floor = await startFloor({ kind: 'floor', etcdClient, etcdEndpoint: env.etcd.endpoint, plinth, prefix, maxSockets: 4 });
      const etcd = new Etcd3({ hosts: [env.etcd.endpoint] });
      try {
        assert.equal(floor.etcdClient, etcdClient);
        const path = '/api/v1/namespaces/fan/serviceaccounts';
        const rv = (await etcd.kv.range({ key: Buffer.from(prefix), count_only: true })).header.revision;
        const watches = await Promise.all([1, 2, 3].map(() => watch(floor.client, `${path}?watch=1&resourceVersion=${rv}`)));
        const stalled = await watch(floor.client, `${path}?watch=1&resourceVersion=${rv}`);
        stalled.res.pause();
        const other = await watch(floor.client, `/api/v1/namespaces/other/serviceaccounts?watch=true&resourceVersion=${rv}`);

        // Objects of ~256 KB: 24 of them overflow a paused reader's socket buffers.
        const big = 'x'.repeat(256 * 1024);
        const created: Event['object'][] = [];
        for (let i = 0; i < 24; i++) created.push(await floor.client.json<Event['object']>('POST', path, serviceAccount('fan', `sa-${i}`, big), 201));
        const updated = await floor.client.json<Event['object']>(
          'PUT',
          `${path}/sa-0`,
          Buffer.from(JSON.stringify({ ...created[0], metadata: { ...created[0]!.metadata, annotations: { note: 'small' } } })),
          200,
        );
        await floor.client.json('POST', '/api/v1/namespaces/elsewhere/serviceaccounts', serviceAccount('elsewhere', 'sa-x'), 201);
        await floor.client.json('POST', '/api/v1/namespaces/other/serviceaccounts', serviceAccount('other', 'sa-o'), 201);

        const expected: Event[] = [...created.map((object) => ({ type: 'ADDED', object })), { type: 'MODIFIED', object: updated }];
        assert.notEqual(updated.metadata.resourceVersion, created[0]!.metadata.resourceVersion);
        for (const w of watches) {
          await eventually(async () => w.events.length >= expected.length, 20_000, 'every event on every reading watch');
          assert.deepEqual(w.events, expected);
        }
        // The stalled reader gets everything, in order, once it reads again.
        stalled.res.resume();
        await eventually(async () => stalled.events.length >= expected.length, 20_000, 'the stalled watch catching up');
        assert.deepEqual(stalled.events, expected);
        // Another namespace's watch sees its own namespace only (one etcd watch serves both).
        await eventually(async () => other.events.length >= 1, 10_000, 'the other namespace');
        assert.deepEqual(other.events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'sa-o']]);
        for (const w of [...watches, stalled, other]) w.close();
      } finally {
        await floor.stop();
        await etcd.delete().prefix(`${prefix}/`).exec();
        etcd.close();
        plinth.client.close();
      }
    });
  });
}

describe('bench report', () => {
  it('names the etcd3 floor in the ratio and target, and checks a floor row on the floor figure', () => {
    const rows = [
      evaluate({ scenario: 'p99 vs floor (etcd3)', unit: 'ms', plinth: 120, floor: 100, raw: 50, vs: 'floor', floorName: 'floor (etcd3)', target: { kind: 'ratioAtMost', value: 1.25 } }),
      evaluate({ scenario: 'floor delivered', unit: '', plinth: null, floor: 10, raw: 10, of: 'floor', target: { kind: 'floorEquals', value: 10, text: 'all' } }),
      evaluate({ scenario: 'floor (etcd3) delivered', unit: '', plinth: null, floor: 9, raw: 10, of: 'floor', floorName: 'floor (etcd3)', target: { kind: 'floorEquals', value: 10, text: 'all' } }),
    ];
    assert.deepEqual(
      rows.map((r) => [r.ratio, r.targetText, r.metResult]),
      [
        [1.2, '≤ 1.25× floor (etcd3)', true],
        [1, 'all', true],
        [0.9, 'all', false],
      ],
    );
    const table = formatTable(rows);
    assert.match(table, /1\.20× floor \(etcd3\)/);
    assert.match(table, /floor \(etcd3\) 0\.90× raw/);
  });
});

describe('bench interleaved rounds', () => {
  const side = (opsPerSec: number, ops = 100, plinthCpuUs = 0) => ({ opsPerSec, ops, plinthCpuUs }) as unknown as Parameters<typeof cpuPerOp>[0][number][string];
  it('takes the round whose ratio is the median, both sides from that round, and reports every ratio in order', () => {
    const rounds = [
      { pod: side(600), cm: side(1000) },
      { pod: side(900), cm: side(1000) },
      { pod: side(500), cm: side(1000) },
    ];
    const { round, ratios } = medianRound(rounds, 'pod', 'cm');
    assert.equal(round, rounds[0]);
    assert.deepEqual(ratios, [0.6, 0.9, 0.5]);
    // An even count takes the lower middle round: the row never rounds up.
    assert.equal(medianRound(rounds.slice(1), 'pod', 'cm').round, rounds[2]);
    assert.throws(() => medianRound([], 'pod', 'cm'));
  });
  it('averages CPU per request over every round, weighted by requests', () => {
    assert.equal(cpuPerOp([{ pod: side(1, 100, 50_000) }, { pod: side(1, 300, 90_000) }], 'pod'), 350);
  });
});
