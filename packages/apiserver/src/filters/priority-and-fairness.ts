/**
 * API Priority and Fairness (kube 1.24's WithPriorityAndFairness, feature gate
 * APIPriorityAndFairness, Beta and on by default): each request is classified by the first
 * matching flow schema (by matching precedence) into a priority level; a level has a share of the
 * server's concurrency limit (--max-requests-inflight + --max-mutating-requests-inflight) in seats.
 * A request that finds no free seat waits in one of its level's queues, picked by shuffle sharding
 * on its flow (flow schema + distinguisher: user name or namespace) — the shortest queue of the
 * flow's hand; queues are served round-robin. A full queue, or a wait longer than the limit
 * (kube: --request-timeout / 4 = 15 s), answers kube's 429. `exempt` never waits.
 *
 * The configuration starts as kube 1.24's bootstrap one and then follows the FlowSchema and
 * PriorityLevelConfiguration objects (controllers/flowcontrol.ts calls `configure`). The response
 * headers name the flow schema and priority level by their objects' UIDs. Simplifications: every request takes one seat (kube 1.24's work estimator
 * gives wide lists and mutations with many watchers more), and fair queuing is round-robin over the
 * non-empty queues rather than virtual-time fair queuing.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { contextOf, type Handler, type RequestDeadline } from '../context.js';
import { closeIfBodyUnread, responseDone } from '../http.js';
import type { RequestInfo } from '../request-info.js';
import { BOOTSTRAP_FLOW_SCHEMA_OBJECTS, BOOTSTRAP_PRIORITY_LEVEL_OBJECTS, FLOWCONTROL_NAME_CATCH_ALL, FLOWCONTROL_NAME_EXEMPT, type StoredObject } from '@plinth/api';

const ALL = '*';

interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  /** User or group name, `*` for all; for service accounts the full user name or, for all of a namespace, its prefix. */
  name: string;
  /** ServiceAccount: matches every account of the namespace (`name` is then the prefix). */
  prefix?: boolean;
}

interface ResourceRule {
  verbs: readonly string[];
  apiGroups: readonly string[];
  /** `resource` or `resource/subresource`; `*` for all. */
  resources: readonly string[];
  namespaces: readonly string[];
  clusterScope: boolean;
}

interface NonResourceRule {
  verbs: readonly string[];
  urls: readonly string[];
}

interface Rules {
  subjects: readonly Subject[];
  resourceRules: readonly ResourceRule[];
  nonResourceRules: readonly NonResourceRule[];
}

export interface PriorityLevelSpec {
  name: string;
  /** The object's UID (the X-Kubernetes-PF-PriorityLevel-UID header); derived from the name when absent. */
  uid?: string;
  exempt?: boolean;
  /** AssuredConcurrencyShares (v1beta2; nominalConcurrencyShares later). */
  shares: number;
  /** Undefined: LimitResponse Reject (no queuing). */
  queuing?: { queues: number; handSize: number; queueLengthLimit: number };
}

export interface FlowSchemaSpec {
  name: string;
  /** The object's UID (the X-Kubernetes-PF-FlowSchema-UID header); derived from the name when absent. */
  uid?: string;
  priorityLevel: string;
  matchingPrecedence: number;
  distinguisher?: 'ByUser' | 'ByNamespace';
  /** Any of these rules matching matches. */
  rules: readonly Rules[];
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asObj) : []);
/** A wildcard list is matched by its first entry alone (validation allows `*` only by itself). */
const wild = (l: string[]): string[] => (l.includes(ALL) ? [ALL] : l);

function compileSubject(s: Obj): Subject | undefined {
  switch (s['kind']) {
    case 'User':
      return { kind: 'User', name: String(asObj(s['user'])['name'] ?? '') };
    case 'Group':
      return { kind: 'Group', name: String(asObj(s['group'])['name'] ?? '') };
    case 'ServiceAccount': {
      const sa = asObj(s['serviceAccount']);
      const prefix = `system:serviceaccount:${String(sa['namespace'] ?? '')}:`;
      return sa['name'] === ALL ? { kind: 'ServiceAccount', name: prefix, prefix: true } : { kind: 'ServiceAccount', name: `${prefix}${String(sa['name'] ?? '')}` };
    }
    default:
      return undefined;
  }
}

/** A PriorityLevelConfiguration object (v1beta2) as the filter's level spec. */
export function compilePriorityLevel(obj: StoredObject): PriorityLevelSpec {
  const spec = asObj(obj['spec']);
  const name = obj.metadata.name ?? '';
  const uid = obj.metadata.uid ?? bootstrapUID('prioritylevelconfigurations', name);
  if (spec['type'] === 'Exempt') return { name, uid, exempt: true, shares: 0 };
  const limited = asObj(spec['limited']);
  const lr = asObj(limited['limitResponse']);
  const q = asObj(lr['queuing']);
  const shares = typeof limited['assuredConcurrencyShares'] === 'number' ? limited['assuredConcurrencyShares'] : 30;
  if (lr['type'] !== 'Queue') return { name, uid, shares };
  const n = (v: unknown, d: number): number => (typeof v === 'number' && v > 0 ? v : d);
  return { name, uid, shares, queuing: { queues: n(q['queues'], 64), handSize: n(q['handSize'], 8), queueLengthLimit: n(q['queueLengthLimit'], 50) } };
}

/** A FlowSchema object (v1beta2) as the filter's schema spec. */
export function compileFlowSchema(obj: StoredObject): FlowSchemaSpec {
  const spec = asObj(obj['spec']);
  const name = obj.metadata.name ?? '';
  const dm = asObj(spec['distinguisherMethod'])['type'];
  return {
    name,
    uid: obj.metadata.uid ?? bootstrapUID('flowschemas', name),
    priorityLevel: String(asObj(spec['priorityLevelConfiguration'])['name'] ?? ''),
    matchingPrecedence: typeof spec['matchingPrecedence'] === 'number' ? spec['matchingPrecedence'] : 1000,
    ...(dm === 'ByUser' || dm === 'ByNamespace' ? { distinguisher: dm } : {}),
    rules: list(spec['rules']).map((r) => ({
      subjects: list(r['subjects']).flatMap((s) => compileSubject(s) ?? []),
      resourceRules: list(r['resourceRules']).map((rr) => ({
        verbs: wild(strs(rr['verbs'])),
        apiGroups: wild(strs(rr['apiGroups'])),
        resources: wild(strs(rr['resources'])),
        namespaces: wild(strs(rr['namespaces'])),
        clusterScope: rr['clusterScope'] === true,
      })),
      nonResourceRules: list(r['nonResourceRules']).map((nr) => ({ verbs: wild(strs(nr['verbs'])), urls: wild(strs(nr['nonResourceURLs'])) })),
    })),
  };
}

/** kube 1.24's bootstrap configuration (@plinth/api's objects, the one source), compiled. */
export const BOOTSTRAP_PRIORITY_LEVELS: readonly PriorityLevelSpec[] = BOOTSTRAP_PRIORITY_LEVEL_OBJECTS.map(compilePriorityLevel);
export const BOOTSTRAP_FLOW_SCHEMAS: readonly FlowSchemaSpec[] = BOOTSTRAP_FLOW_SCHEMA_OBJECTS.map(compileFlowSchema);

/** A UUID derived from a bootstrap object's kind and name (name-based, SHA-1, as UUID v5). */
export function bootstrapUID(kind: 'flowschemas' | 'prioritylevelconfigurations', name: string): string {
  const h = createHash('sha1').update(`flowcontrol.apiserver.k8s.io/${kind}/${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

interface Waiter {
  proceed(): void;
  queue: Waiter[];
  timer: NodeJS.Timeout;
}

/**
 * A priority level's run-time state. A reconfiguration updates it in place (kube reconfigures a
 * level's queueSet): requests already running keep their seats counted and queued ones stay queued.
 */
class Level {
  uid: string;
  seats: number;
  spec: PriorityLevelSpec;
  inUse = 0;
  waiting = 0;
  /** Empty for a level that rejects instead of queuing (or keeps the queues it had until they drain). */
  #queues: Waiter[][];
  #next = 0;

  constructor(spec: PriorityLevelSpec, seats: number) {
    this.spec = spec;
    this.uid = spec.uid ?? bootstrapUID('prioritylevelconfigurations', spec.name);
    this.seats = seats;
    this.#queues = Array.from({ length: spec.queuing?.queues ?? 0 }, () => []);
  }

  /**
   * A new spec and seat count for the same level. Queued requests move to the new queues (queue
   * `i` to `i mod n`, order kept); with no queues any more they stay where they are until
   * dispatched. More seats dispatch waiting requests at once.
   */
  reconfigure(spec: PriorityLevelSpec, seats: number): void {
    this.spec = spec;
    this.uid = spec.uid ?? bootstrapUID('prioritylevelconfigurations', spec.name);
    this.seats = seats;
    const n = spec.queuing?.queues ?? 0;
    if (n !== this.#queues.length && n > 0) {
      const queues: Waiter[][] = Array.from({ length: n }, () => []);
      this.#queues.forEach((q, i) => {
        const target = queues[i % n]!;
        for (const w of q) {
          w.queue = target;
          target.push(w);
        }
      });
      this.#queues = queues;
      this.#next = 0;
    } else if (n === 0) {
      this.#queues = this.#queues.filter((q) => q.length > 0);
      this.#next = 0;
    }
    this.#dispatch();
  }

  /** Shuffle sharding: the shortest queue of the flow's hand of `handSize` out of `queues`. */
  pickQueue(flowHash: number): Waiter[] | undefined {
    const queues = this.#queues;
    const q = this.spec.queuing;
    if (!q || queues.length !== q.queues) return undefined;
    // Deal distinct cards from the hash, as kube's shufflesharding.Dealer does.
    let hash = flowHash;
    let best: Waiter[] | undefined;
    const dealt: number[] = [];
    for (let i = 0; i < q.handSize && i < q.queues; i++) {
      const remaining = q.queues - i;
      let card = hash % remaining;
      hash = Math.floor(hash / remaining);
      // Skip cards already dealt (keeps the hand distinct).
      for (const d of dealt.sort((a, b) => a - b)) if (card >= d) card++;
      dealt.push(card);
      const candidate = queues[card]!;
      if (!best || candidate.length < best.length) best = candidate;
    }
    return best;
  }

  /** Frees one seat and hands it to the next queued request, queues taken round-robin. */
  release(): void {
    this.inUse--;
    this.#dispatch();
  }

  #dispatch(): void {
    const queues = this.#queues;
    let found = true;
    while (found && this.waiting > 0 && this.inUse < this.seats) {
      found = false;
      for (let i = 0; i < queues.length; i++) {
        const q = queues[(this.#next + i) % queues.length]!;
        if (q.length === 0) continue;
        this.#next = (this.#next + i + 1) % queues.length;
        const w = q.shift()!;
        this.waiting--;
        this.inUse++;
        clearTimeout(w.timer);
        w.proceed();
        found = true;
        break;
      }
    }
  }
}

interface CompiledSchema {
  spec: FlowSchemaSpec;
  uid: string;
  level: Level;
}

/** 32-bit FNV-1a over the flow's schema name and distinguisher, spread to 53 bits. */
function flowHash(schema: string, distinguisher: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  const mix = (s: string): void => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    }
  };
  mix(schema);
  mix('\u0000');
  mix(distinguisher);
  return (h1 >>> 0) * 0x200000 + ((h2 >>> 0) & 0x1fffff);
}

const matchesList = (list: readonly string[], value: string): boolean => list[0] === ALL || list.includes(value);

function subjectMatches(s: Subject, name: string, groups: readonly string[]): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === ALL || s.name === name;
    case 'Group':
      return s.name === ALL || groups.includes(s.name);
    case 'ServiceAccount':
      return s.prefix ? name.startsWith(s.name) : name === s.name;
  }
}

function resourceMatches(r: ResourceRule, info: RequestInfo): boolean {
  if (!matchesList(r.verbs, info.verb) || !matchesList(r.apiGroups, info.apiGroup)) return false;
  if (r.resources[0] !== ALL) {
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    if (!r.resources.includes(resource)) return false;
  }
  return info.namespace === '' ? r.clusterScope : matchesList(r.namespaces, info.namespace);
}

function nonResourceMatches(r: NonResourceRule, info: RequestInfo): boolean {
  if (!matchesList(r.verbs, info.verb)) return false;
  for (const u of r.urls) {
    if (u === ALL || u === info.path) return true;
    if (u.endsWith('*') && info.path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

function rulesMatch(r: Rules, info: RequestInfo, name: string, groups: readonly string[]): boolean {
  let subject = false;
  for (const s of r.subjects) {
    if (subjectMatches(s, name, groups)) {
      subject = true;
      break;
    }
  }
  if (!subject) return false;
  if (info.isResourceRequest) {
    for (const rr of r.resourceRules) if (resourceMatches(rr, info)) return true;
    return false;
  }
  for (const nr of r.nonResourceRules) if (nonResourceMatches(nr, info)) return true;
  return false;
}

/** Plain loops, no closures: classification runs on every request and allocates nothing. */
function schemaMatches(fs: FlowSchemaSpec, info: RequestInfo, name: string, groups: readonly string[]): boolean {
  for (const r of fs.rules) if (rulesMatch(r, info, name, groups)) return true;
  return false;
}

/** kube's long-running requests that APF does not track at all (watches it tracks until they start). */
const LONG_RUNNING_SUBRESOURCES = new Set(['proxy', 'attach', 'exec', 'log', 'portforward']);

/** Go's http.Error with kube's tooManyRequests text and `Retry-After: 1`. */
export function writeTooManyRequests(res: ServerResponse): void {
  closeIfBodyUnread(res.req, res);
  res.writeHead(429, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Retry-After': '1' });
  res.end('Too many requests, please try again later.\n');
}

export interface PriorityAndFairnessOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrencyLimit: number;
  /** How long a request may wait in a queue (ms); kube: --request-timeout / 4. */
  requestWaitLimitMs: number;
  levels?: readonly PriorityLevelSpec[];
  schemas?: readonly FlowSchemaSpec[];
  /** An existing instance (reconfigured by the config controller) instead of a new one. */
  apf?: PriorityAndFairness;
}

/** The classifier and seat accounting, without the HTTP side (for the filter and its tests). */
export class PriorityAndFairness {
  #levels: ReadonlyMap<string, Level> = new Map();
  #schemas: readonly CompiledSchema[] = [];
  readonly #waitLimitMs: number;
  readonly #serverConcurrencyLimit: number;

  constructor(opts: PriorityAndFairnessOptions) {
    this.#waitLimitMs = opts.requestWaitLimitMs;
    this.#serverConcurrencyLimit = opts.serverConcurrencyLimit;
    this.configure(opts.levels ?? BOOTSTRAP_PRIORITY_LEVELS, opts.schemas ?? BOOTSTRAP_FLOW_SCHEMAS);
  }

  get levels(): ReadonlyMap<string, Level> {
    return this.#levels;
  }

  /**
   * Replaces the configuration (kube's config controller digesting the objects): a schema naming
   * a missing level is ignored, the mandatory objects stand in when missing, and a level that
   * stays keeps its state (seats in use, queued requests) under its new spec and seat count.
   */
  configure(levelSpecs: readonly PriorityLevelSpec[], schemaSpecs: readonly FlowSchemaSpec[]): void {
    const specs = [...levelSpecs];
    const schemasIn = [...schemaSpecs];
    for (const name of [FLOWCONTROL_NAME_EXEMPT, FLOWCONTROL_NAME_CATCH_ALL]) {
      // kube's config controller adds a missing mandatory object's bootstrap value.
      const bl = BOOTSTRAP_PRIORITY_LEVELS.find((l) => l.name === name);
      if (bl && !specs.some((l) => l.name === name)) specs.push(bl);
      const bs = BOOTSTRAP_FLOW_SCHEMAS.find((s) => s.name === name);
      if (bs && !schemasIn.some((s) => s.name === name)) schemasIn.push(bs);
    }
    const sumShares = specs.reduce((s, l) => s + (l.exempt ? 0 : l.shares), 0);
    const levels = new Map<string, Level>();
    for (const l of specs) {
      const seats = l.exempt ? Infinity : Math.ceil((this.#serverConcurrencyLimit * l.shares) / sumShares);
      const old = this.#levels.get(l.name);
      if (old && (old.seats !== seats || !isDeepStrictEqual(old.spec, l))) old.reconfigure(l, seats);
      levels.set(l.name, old ?? new Level(l, seats));
    }
    this.#levels = levels;
    const sorted = schemasIn.sort((a, b) => a.matchingPrecedence - b.matchingPrecedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#schemas = sorted.flatMap((spec) => {
      const level = levels.get(spec.priorityLevel);
      return level ? [{ spec, uid: spec.uid ?? bootstrapUID('flowschemas', spec.name), level }] : [];
    });
  }

  /** The first schema (by precedence) matching the request; catch-all matches everyone. */
  classify(info: RequestInfo, userName: string, groups: readonly string[]): CompiledSchema | undefined {
    for (const s of this.#schemas) if (schemaMatches(s.spec, info, userName, groups)) return s;
    return undefined;
  }

  /**
   * Takes a seat of the schema's level: resolves true once the request may run (call
   * `level.release()` after), false when it is rejected (queue full, waited too long, the client
   * went away or the request's deadline passed while queued).
   */
  acquire(s: CompiledSchema, distinguisher: string, req: IncomingMessage, deadline?: RequestDeadline): true | Promise<boolean> | false {
    const level = s.level;
    if (level.spec.exempt) return true;
    if (level.inUse < level.seats && level.waiting === 0) {
      level.inUse++;
      return true;
    }
    const queue = level.pickQueue(flowHash(s.spec.name, distinguisher));
    if (!queue || queue.length >= level.spec.queuing!.queueLengthLimit) return false;
    return new Promise<boolean>((resolve) => {
      const leave = (): void => {
        // A reconfiguration may have moved the request to another queue of its level.
        const i = w.queue.indexOf(w);
        if (i < 0) return;
        w.queue.splice(i, 1);
        level.waiting--;
        clearTimeout(w.timer);
        req.off('close', onClose);
        stopWaiting?.();
        resolve(false);
      };
      const onClose = (): void => leave();
      const w: Waiter = {
        queue,
        timer: setTimeout(leave, this.#waitLimitMs),
        proceed: () => {
          req.off('close', onClose);
          stopWaiting?.();
          resolve(true);
        },
      };
      queue.push(w);
      level.waiting++;
      req.once('close', onClose);
      const stopWaiting = deadline?.onExpired(leave);
    });
  }
}

/**
 * The filter: classifies, sets kube's X-Kubernetes-PF-* headers, waits for a seat (or answers
 * 429), runs the request and frees the seat. Watches hold their seat only until their response
 * starts (kube 1.24: until the watch is initialized); other long-running requests bypass it.
 */
export function withPriorityAndFairness(next: Handler, opts: PriorityAndFairnessOptions): Handler {
  const apf = opts.apf ?? new PriorityAndFairness(opts);
  return async (req, res) => {
    const ctx = contextOf(req);
    const { info } = ctx;
    if (info.isResourceRequest && (info.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(info.subresource))) return next(req, res);
    const name = ctx.user?.name ?? '';
    const groups = ctx.user?.groups ?? [];
    const schema = apf.classify(info, name, groups);
    if (!schema) return next(req, res);
    res.setHeader('X-Kubernetes-PF-FlowSchema-UID', schema.uid);
    res.setHeader('X-Kubernetes-PF-PriorityLevel-UID', schema.level.uid);
    const level = schema.level;
    if (level.spec.exempt) return next(req, res);
    const distinguisher = schema.spec.distinguisher === 'ByUser' ? name : schema.spec.distinguisher === 'ByNamespace' ? info.namespace : '';
    const got = apf.acquire(schema, distinguisher, req, ctx.deadline);
    if (got !== true && !(await got)) {
      // Past its deadline the request is withRequestTimeout's to answer (504).
      if (!res.headersSent && !res.destroyed && !ctx.deadline?.reason) writeTooManyRequests(res);
      return;
    }
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      level.release();
    };
    if (info.verb === 'watch') {
      // The seat is given back once the watch is established and its response begins.
      const flush = res.flushHeaders.bind(res);
      res.flushHeaders = () => {
        release();
        flush();
      };
    }
    try {
      await next(req, res);
      // The seat is held until the response is written, as kube's handler holds it while its
      // writes block on a slow client (withRequestTimeout bounds how long).
      if (info.verb !== 'watch') await responseDone(res);
    } finally {
      release();
    }
  };
}
