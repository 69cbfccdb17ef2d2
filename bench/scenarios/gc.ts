/**
 * The garbage collector (issue 27): an owner ConfigMap with 1,000 dependent ConfigMaps is deleted
 * in the background, then another in the foreground; measured from the owner's DELETE to the last
 * dependent gone (a watch sees every DELETED event; foreground: to the owner gone, which is
 * after its dependents), with plinth's process CPU over that time per collected object. No
 * target is given by the issue.
 */
import type { BenchContext } from '../lib/context.js';
import { ensureNamespace } from '../lib/plinth.js';
import { CpuMeter } from '../lib/proc.js';
import { runLoad } from '../lib/stats.js';

const NS = 'bench-gc';
const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

interface Meta {
  metadata: { name: string; uid: string; resourceVersion: string };
}

interface Collection {
  seconds: number;
  cpuUsPerObject: number;
}

async function collect(ctx: BenchContext, n: number, policy: 'Background' | 'Foreground'): Promise<Collection> {
  const client = ctx.plinth.client;
  const cms = `/api/v1/namespaces/${NS}/configmaps`;
  const tag = policy.toLowerCase();
  const owner = await client.json<Meta>('POST', cms, json({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `owner-${tag}` } }), 201);
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: true };
  const made = await runLoad(n, 32, async (i) => {
    await client.json('POST', cms, json({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `dep-${tag}-${i}`, labels: { gc: tag }, ownerReferences: [ref] }, data: { k: 'v' } }), 201);
  });
  if (made.errors > 0) throw new Error(`creating dependents: ${made.errors} failed, e.g. ${made.firstError ?? ''}`);
  // Let the collector's informers see every dependent before the owner goes.
  await new Promise((r) => setTimeout(r, 2000));
  const list = await client.json<{ metadata: { resourceVersion: string } }>('GET', `${cms}?labelSelector=gc%3D${tag}&limit=1`, undefined, 200);
  let deleted = 0;
  let ownerGone = false;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  let buf = '';
  const agent = client.streamAgent();
  const stream = await client.openStream(`${cms}?watch=1&resourceVersion=${list.metadata.resourceVersion}&allowWatchBookmarks=false`, agent, (chunk) => {
    buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const e = JSON.parse(line) as { type: string; object: Meta };
      if (e.type !== 'DELETED') continue;
      if (e.object.metadata.uid === owner.metadata.uid) ownerGone = true;
      else deleted++;
      if (deleted === n && (policy === 'Background' || ownerGone)) done();
    }
  });
  const meter = new CpuMeter({ plinth: ctx.plinth.pid });
  meter.start();
  const t0 = performance.now();
  await client.json('DELETE', `${cms}/${owner.metadata.name}`, json({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: policy }), 200);
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${policy}: ${deleted} of ${n} dependents collected after 300 s`)), 300_000).unref());
  try {
    await Promise.race([finished, timeout]);
  } finally {
    stream.close();
    agent.destroy();
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = meter.stop();
  return { seconds, cpuUsPerObject: cpu['plinth']!.cpuUs / n };
}

export async function gcScenario(ctx: BenchContext): Promise<void> {
  const N = ctx.size(1000);
  await ensureNamespace(ctx.plinth.client, NS);
  const background = await collect(ctx, N, 'Background');
  ctx.log(`gc background: ${N} dependents collected in ${background.seconds.toFixed(2)} s, ${background.cpuUsPerObject.toFixed(0)} µs plinth CPU each`);
  const foreground = await collect(ctx, N, 'Foreground');
  ctx.log(`gc foreground: ${N} dependents and the owner gone in ${foreground.seconds.toFixed(2)} s, ${foreground.cpuUsPerObject.toFixed(0)} µs plinth CPU each`);
  const note = `owner ConfigMap with ${N} dependent ConfigMaps; no target in the issue`;
  ctx.rows.push({ scenario: `GC: owner delete → last of ${N} dependents gone (Background)`, unit: 's', plinth: background.seconds, raw: null, target: { kind: 'none' }, note });
  ctx.rows.push({ scenario: 'GC: plinth CPU per collected object (Background)', unit: 'µs', plinth: background.cpuUsPerObject, raw: null, target: { kind: 'none' }, note: 'plinth process CPU (/proc) from the DELETE to the last dependent gone, per dependent' });
  ctx.rows.push({ scenario: `GC: owner delete → owner gone after ${N} dependents (Foreground)`, unit: 's', plinth: foreground.seconds, raw: null, target: { kind: 'none' }, note });
  ctx.rows.push({ scenario: 'GC: plinth CPU per collected object (Foreground)', unit: 'µs', plinth: foreground.cpuUsPerObject, raw: null, target: { kind: 'none' }, note: 'plinth process CPU (/proc) from the DELETE to the owner gone, per dependent' });
  ctx.details['gc'] = { dependents: N, background, foreground };
}
