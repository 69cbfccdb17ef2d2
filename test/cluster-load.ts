/**
 * Load and verification for the fault tests (test/cluster-faults.test.ts): a mixed write/read load
 * that records every acknowledged write, informer-style caches built from list+watch by the
 * official clients (@kubernetes/client-node in this process, python3-kubernetes in a child), and a
 * verifier that compares what the server holds and what the caches hold with what was
 * acknowledged.
 *
 * The load's objects are ConfigMaps `<prefix><worker>-<n>` in one namespace; each worker owns its names,
 * so the final state of every object is known from the acknowledged writes alone. A write that
 * ends without a response (connection reset, timeout) or with a 5xx has an unknown outcome: the
 * object is retired (never written again) and the verifier accepts either outcome. A failed write
 * is never counted as acknowledged.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { get as httpGet } from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './harness.js';

// ---- a plain client: Node's https agent with keep-alive, no retries ----------------------------

export interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON from the server
}

/** Why a request failed: `http <status> <reason>`, a socket error code, `socket hang up`, or `timeout`. */
export function failureKind(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code) return err.code;
  return String(err?.message ?? e);
}

export class PlainClient {
  readonly agent: Agent;
  readonly #url: URL;
  readonly #token: string;
  /** Requests that took longest (ms), for the figures. */
  maxLatencyMs = 0;

  constructor(base: string, caPem: string, token: string, opts: { maxSockets?: number } = {}) {
    this.#url = new URL(base);
    this.#token = token;
    this.agent = new Agent({ ca: caPem, keepAlive: true, maxSockets: opts.maxSockets ?? 8 });
  }

  /** One request, never retried; rejects on a socket error or after `timeoutMs` (error message 'timeout'). */
  request(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<Reply> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const t0 = performance.now();
    return new Promise<Reply>((resolve, reject) => {
      const req = httpsRequest({ hostname: this.#url.hostname, port: this.#url.port, path, method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          this.maxLatencyMs = Math.max(this.maxLatencyMs, performance.now() - t0);
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
      });
      const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        this.maxLatencyMs = Math.max(this.maxLatencyMs, performance.now() - t0);
        reject(e);
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** `http <code> <reason>` of a non-2xx reply. */
export function replyKind(r: Reply): string {
  const reason = r.body?.reason;
  // A Status without a reason (kube's StatusReasonUnknown, e.g. an etcd error) says what it is in its message.
  if (!reason && r.status >= 500) return `http ${r.status}: ${String(r.body?.message ?? '').slice(0, 120)}`;
  return `http ${r.status} ${reason ?? ''}`.trim();
}

// ---- the ledger of acknowledged writes ----------------------------------------------------------

export interface Known {
  present: boolean;
  rv?: string;
  value?: string;
}

export interface TrackedObject {
  name: string;
  /** The state after the last acknowledged write (absent before the first create). */
  acked: Known;
  /** Set when a write's outcome is unknown: the object is retired, either outcome is accepted. */
  unknown?: { op: 'create' | 'update' | 'delete'; value?: string };
}

export interface LoadStats {
  acknowledged: { create: number; update: number; delete: number };
  reads: number;
  /** Failures by kind ("create: http 500 InternalError", "update: ECONNRESET", ...). */
  errors: Record<string, number>;
  /** Writes whose outcome is unknown (the failures of writes). */
  unknownOutcomes: number;
  /** The first failures (up to 20): when each ended (epoch ms), how long it took, and its kind. */
  firstFailures: Array<{ at: number; tookMs: number; kind: string }>;
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

export function totalErrors(s: LoadStats): number {
  return Object.values(s.errors).reduce((a, b) => a + b, 0);
}

export interface Load {
  ns: string;
  objects: TrackedObject[];
  stats: LoadStats;
  /** Stops the workers after their current request; resolves with the figures. */
  stop(): Promise<LoadStats>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `workers` loops, each over its own `namesPerWorker` ConfigMaps in `ns` (which must exist):
 * create when absent, else update (read-modify-write with the acknowledged resourceVersion),
 * delete or read. `pauseMs` between a worker's requests keeps the load modest on a small machine.
 */
export function startLoad(client: PlainClient, ns: string, opts: { prefix?: string; workers?: number; namesPerWorker?: number; pauseMs?: number; timeoutMs?: number } = {}): Load {
  const prefix = opts.prefix ?? 'w';
  const workers = opts.workers ?? 4;
  const per = opts.namesPerWorker ?? 8;
  const pauseMs = opts.pauseMs ?? 5;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const stats: LoadStats = { acknowledged: { create: 0, update: 0, delete: 0 }, reads: 0, errors: {}, unknownOutcomes: 0, firstFailures: [] };
  const failed = (kind: string, t0: number): void => {
    bump(stats.errors, kind);
    if (stats.firstFailures.length < 20) stats.firstFailures.push({ at: Date.now(), tookMs: Math.round(performance.now() - t0), kind });
  };
  const objects: TrackedObject[] = [];
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  let stopped = false;
  let seq = 0;

  const one = async (o: TrackedObject, w: number): Promise<void> => {
    const value = `w${w}-${++seq}`;
    const r = Math.random();
    const op: 'create' | 'update' | 'delete' | 'read' = !o.acked.present ? 'create' : r < 0.15 ? 'delete' : r < 0.45 ? 'read' : 'update';
    let reply: Reply;
    const t0 = performance.now();
    try {
      if (op === 'create') {
        reply = await client.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name }, data: { v: value } }, timeoutMs);
      } else if (op === 'update') {
        reply = await client.request('PUT', `${base}/${o.name}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name, resourceVersion: o.acked.rv }, data: { v: value } }, timeoutMs);
      } else if (op === 'delete') {
        reply = await client.request('DELETE', `${base}/${o.name}`, undefined, timeoutMs);
      } else {
        reply = await client.request('GET', `${base}/${o.name}`, undefined, timeoutMs);
      }
    } catch (e) {
      failed(`${op}: ${failureKind(e)}`, t0);
      if (op !== 'read') {
        o.unknown = { op, ...(op === 'delete' ? {} : { value }) };
        stats.unknownOutcomes++;
      }
      return;
    }
    const ok = reply.status >= 200 && reply.status < 300;
    if (op === 'read') {
      if (!ok) failed(`read: ${replyKind(reply)}`, t0);
      else if (reply.body?.metadata?.resourceVersion !== o.acked.rv || reply.body?.data?.v !== o.acked.value) failed('read: not the acknowledged state', t0);
      else stats.reads++;
      return;
    }
    if (!ok) {
      failed(`${op}: ${replyKind(reply)}`, t0);
      // A 5xx (or anything unexpected: the worker owns the name) may or may not have been applied.
      o.unknown = { op, ...(op === 'delete' ? {} : { value }) };
      stats.unknownOutcomes++;
      return;
    }
    stats.acknowledged[op]++;
    o.acked = op === 'delete' ? { present: false } : { present: true, rv: String(reply.body.metadata.resourceVersion), value };
  };

  const loops = Array.from({ length: workers }, async (_, w) => {
    const mine: TrackedObject[] = Array.from({ length: per }, (_, i) => ({ name: `${prefix}${w}-${i}`, acked: { present: false } }));
    objects.push(...mine);
    while (!stopped) {
      const live = mine.filter((o) => !o.unknown);
      if (live.length === 0) {
        // Every name had an unknown outcome: continue with fresh names.
        const o: TrackedObject = { name: `${prefix}${w}-${mine.length}`, acked: { present: false } };
        mine.push(o);
        objects.push(o);
        continue;
      }
      await one(live[Math.floor(Math.random() * live.length)]!, w);
      if (pauseMs > 0) await sleep(pauseMs);
    }
  });
  return {
    ns,
    objects,
    stats,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return stats;
    },
  };
}

// ---- verification -------------------------------------------------------------------------------

/** name → [resourceVersion, data.v] */
export type State = Map<string, [string, string]>;

/** Lists the namespace's ConfigMaps (one consistent list). */
export async function listState(client: PlainClient, ns: string): Promise<{ state: State; rv: string }> {
  const r = await client.request('GET', `/api/v1/namespaces/${ns}/configmaps`);
  if (r.status !== 200) throw new Error(`list ${ns}: ${replyKind(r)} ${r.body?.message ?? ''}`);
  const state: State = new Map();
  for (const cm of r.body.items as any[]) {
    if (cm.metadata.name === 'kube-root-ca.crt') continue;
    state.set(cm.metadata.name, [cm.metadata.resourceVersion, cm.data?.v]);
  }
  return { state, rv: r.body.metadata.resourceVersion };
}

export interface Verification {
  /** Objects whose last write was acknowledged: present ones and deleted ones. */
  acknowledgedPresent: number;
  acknowledgedAbsent: number;
  /** Unknown outcomes, and how they resolved. */
  unknownApplied: number;
  unknownNotApplied: number;
  /** Differences (empty when everything acknowledged is there in its final state). */
  problems: string[];
}

/** Compares the server's state with the acknowledged writes of `objects`. */
export function verify(objects: TrackedObject[], state: State): Verification {
  const v: Verification = { acknowledgedPresent: 0, acknowledgedAbsent: 0, unknownApplied: 0, unknownNotApplied: 0, problems: [] };
  const names = new Set<string>();
  for (const o of objects) {
    names.add(o.name);
    const got = state.get(o.name);
    const matchesAcked = o.acked.present ? got?.[0] === o.acked.rv && got?.[1] === o.acked.value : got === undefined;
    if (!o.unknown) {
      if (o.acked.present) v.acknowledgedPresent++;
      else v.acknowledgedAbsent++;
      if (!matchesAcked) v.problems.push(`${o.name}: acknowledged ${JSON.stringify(o.acked)}, server has ${JSON.stringify(got ?? 'nothing')}`);
      continue;
    }
    const u = o.unknown;
    const applied = u.op === 'delete' ? got === undefined : got !== undefined && got[1] === u.value && got[0] !== o.acked.rv;
    if (applied) v.unknownApplied++;
    else if (matchesAcked) v.unknownNotApplied++;
    else v.problems.push(`${o.name}: ${u.op} of unknown outcome after ${JSON.stringify(o.acked)}, server has ${JSON.stringify(got ?? 'nothing')}`);
  }
  for (const name of state.keys()) if (!names.has(name)) v.problems.push(`${name}: on the server, never written`);
  return v;
}

/** Differences between a cache and the server's state (empty when equal). */
export function diffStates(cache: State, server: State): string[] {
  const out: string[] = [];
  for (const [name, s] of server) {
    const c = cache.get(name);
    if (!c) out.push(`${name}: missing (server ${s.join(' ')})`);
    else if (c[0] !== s[0] || c[1] !== s[1]) out.push(`${name}: cache ${c.join(' ')}, server ${s.join(' ')}`);
  }
  for (const name of cache.keys()) if (!server.has(name)) out.push(`${name}: in the cache, not on the server`);
  return out;
}

// ---- informer-style caches ----------------------------------------------------------------------

export interface ReflectorStats {
  lists: number;
  /** Watches opened again from the last resourceVersion after a stream ended or broke. */
  resumes: number;
  /** Lists after 410 Gone. */
  relists: number;
  /** Events that contradict the cache (ADDED of a cached name, MODIFIED/DELETED of an unknown one, an old resourceVersion). */
  anomalies: string[];
  /** Why watches ended or failed, by kind. */
  errors: Record<string, number>;
}

export interface Reflector {
  name: string;
  stats(): Promise<ReflectorStats>;
  cache(): Promise<State>;
  stop(): Promise<void>;
}

/** Applies one watch event to a cache; returns an anomaly description or undefined. */
function applyEvent(cache: State, type: string, obj: any): string | undefined {
  const name = obj?.metadata?.name as string;
  if (name === 'kube-root-ca.crt') return undefined;
  const rv = String(obj.metadata.resourceVersion);
  const have = cache.get(name);
  let anomaly: string | undefined;
  if (type === 'ADDED' && have) anomaly = `ADDED ${name}@${rv} while cached @${have[0]}`;
  if ((type === 'MODIFIED' || type === 'DELETED') && !have) anomaly = `${type} ${name}@${rv} not cached`;
  if (have && BigInt(rv) <= BigInt(have[0])) anomaly = `${type} ${name}@${rv} not newer than cached @${have[0]}`;
  if (type === 'DELETED') cache.delete(name);
  else cache.set(name, [rv, obj.data?.v]);
  return anomaly;
}

/**
 * An informer-style cache with @kubernetes/client-node 1.4 (its typed list and its Watch): list,
 * then watch from the list's resourceVersion; when a watch ends or breaks, watch again from the
 * last resourceVersion seen (events and bookmarks); on 410 Gone, list again.
 */
export async function startNodeReflector(kubeconfig: string, ns: string): Promise<Reflector & { watchOpened(): Promise<void>; reconnect(): void }> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const watch = new k8s.Watch(kc);
  const cache: State = new Map();
  const stats: ReflectorStats = { lists: 0, resumes: 0, relists: 0, anomalies: [], errors: {} };
  let rv = '';
  let stopped = false;
  let controller: AbortController | undefined;
  let opened: () => void = () => undefined;
  let openedOnce = new Promise<void>((r) => (opened = r));

  const list = async (): Promise<void> => {
    stats.lists++;
    const l = await core.listNamespacedConfigMap({ namespace: ns });
    cache.clear();
    for (const cm of l.items) if (cm.metadata!.name !== 'kube-root-ca.crt') cache.set(cm.metadata!.name!, [cm.metadata!.resourceVersion!, cm.data?.['v'] ?? '']);
    rv = l.metadata!.resourceVersion!;
  };

  const run = async (): Promise<void> => {
    let needList = true;
    while (!stopped) {
      try {
        if (needList) {
          await list();
          needList = false;
        }
      } catch (e) {
        bump(stats.errors, `list: ${failureKind(e)}`);
        await sleep(500);
        continue;
      }
      let gone = false;
      const ended = new Promise<void>((resolveEnded) => {
        void watch
          .watch(
            `/api/v1/namespaces/${ns}/configmaps`,
            { resourceVersion: rv, allowWatchBookmarks: true },
            (type: string, obj: any) => {
              if (type === 'ERROR') {
                if (obj?.code === 410) gone = true;
                else bump(stats.errors, `watch ERROR ${obj?.code} ${obj?.reason}`);
                return;
              }
              if (type !== 'BOOKMARK') {
                const a = applyEvent(cache, type, obj);
                if (a) stats.anomalies.push(a);
              }
              rv = String(obj.metadata.resourceVersion);
            },
            (err: any) => {
              if (err?.statusCode === 410) gone = true;
              else if (err && err.name === 'AbortError') bump(stats.errors, 'watch: aborted');
              else if (err) bump(stats.errors, `watch: ${failureKind(err)}`);
              else bump(stats.errors, 'watch: ended');
              resolveEnded();
            },
          )
          .then((c) => {
            controller = c;
            opened();
          });
      });
      await ended;
      if (stopped) return;
      if (gone) {
        stats.relists++;
        needList = true;
      } else {
        stats.resumes++;
        await sleep(100);
      }
    }
  };
  const running = run();
  return {
    name: 'client-node',
    async stats() {
      return stats;
    },
    async cache() {
      return new Map(cache);
    },
    /** Resolves when the next watch request has its response (reset after each call). */
    async watchOpened() {
      await openedOnce;
      openedOnce = new Promise<void>((r) => (opened = r));
    },
    /** Ends the current watch (the reflector resumes it on a new connection). */
    reconnect() {
      controller?.abort();
    },
    async stop() {
      stopped = true;
      controller?.abort();
      await running;
    },
  };
}

/**
 * The same informer-style cache in the official Python client (test/python/cluster_reflector.py),
 * driven over its stdin/stdout.
 */
export async function startPythonReflector(kubeconfig: string, ns: string): Promise<Reflector & { child: ChildProcess; output(): string }> {
  const child = spawn('/usr/bin/python3', [join(REPO_ROOT, 'test/python/cluster_reflector.py'), kubeconfig, ns], { stdio: ['pipe', 'pipe', 'pipe'] });
  let errOut = '';
  child.stderr!.on('data', (d: Buffer) => (errOut = (errOut + d.toString()).slice(-5000)));
  const lines = createInterface(child.stdout!);
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ask = (cmd: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`python reflector: no answer to ${cmd}\n${errOut}`)), 30_000);
      waiting.push((l) => {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(l));
        } catch {
          reject(new Error(`python reflector said: ${l}\n${errOut}`));
        }
      });
      child.stdin!.write(`${cmd}\n`);
    });
  // The first answer: listed and watching.
  await ask('ready');
  return {
    name: 'python',
    child,
    output: () => errOut,
    async stats() {
      const s = await ask('stats');
      return s as ReflectorStats;
    },
    async cache() {
      const c = (await ask('cache')) as Record<string, [string, string]>;
      return new Map(Object.entries(c));
    },
    async stop() {
      if (child.exitCode === null) {
        child.stdin!.end();
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

// ---- haproxy: which replica holds a connection --------------------------------------------------

/**
 * haproxy's view of each replica (0, 1, 2), from its stats page (the port is in DIR/ports.env):
 * its current sessions and its check status (UP, DOWN, "UP 1/2", ...).
 */
export async function lbBackends(clusterDir: string): Promise<Array<{ sessions: number; status: string }>> {
  const port = /^LB_STATS=(\d+)$/m.exec(readFileSync(join(clusterDir, 'ports.env'), 'utf8'))?.[1];
  if (!port) throw new Error('no LB_STATS in ports.env');
  const csv = await new Promise<string>((resolve, reject) => {
    httpGet(`http://127.0.0.1:${port}/stats;csv`, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (b += c));
      res.on('end', () => resolve(b));
    }).on('error', reject);
  });
  const out = [0, 1, 2].map(() => ({ sessions: 0, status: '' }));
  for (const l of csv.split('\n')) {
    const f = l.split(',');
    const m = /^apiserver-(\d)$/.exec(f[1] ?? '');
    if (f[0] === 'apiservers' && m) out[Number(m[1])] = { sessions: Number(f[4]), status: f[17] ?? '' };
  }
  return out;
}

/** haproxy's current sessions on each replica. */
export async function lbSessions(clusterDir: string): Promise<number[]> {
  return (await lbBackends(clusterDir)).map((b) => b.sessions);
}
