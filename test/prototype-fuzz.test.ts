/**
 * Seeded fuzzing of keys named like `Object.prototype` members (`__proto__`, `constructor`,
 * `prototype`, and a few more) over every way an object gets in: create and update in JSON, YAML
 * and Protobuf, merge, strategic merge and JSON patches (keys as patch paths too), server-side
 * apply, a mutating webhook's JSON patch, label and field selectors — for ConfigMaps (data, labels,
 * annotations: maps that keep any key), ServiceAccounts (structs that keep none) and custom
 * resources (a subtree kept by x-kubernetes-preserve-unknown-fields, and schema properties of
 * these names, one of them a list-map key). The keys go at every depth, in objects and patches.
 *
 * After every request: `Object.prototype`, `Array.prototype` and `Function.prototype` (the server
 * runs in this process) have exactly the members they had at the start and no enumerable one;
 * no 5xx, no broken connection. After every write that succeeded: the object read back equals the
 * answer; maps and preserved subtrees hold exactly what a reference (RFC 7386 merge, evanphx's
 * JSON patch on objects, plain replacement) computes from the previous state, `__proto__` keys
 * included; structs hold none of the keys and nothing of the values they carried; a JSON patch the
 * reference cannot apply (a path through a member the object lacks) is refused.
 *
 * The seed is printed; replay with `PLINTH_PROTO_FUZZ_SEED=<seed>` (`PLINTH_PROTO_FUZZ_COUNT`
 * for more requests).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { stringify as stringifyYaml } from 'yaml';
import { encodeProtobuf } from '@plinth/apiserver';
import { eventually, tempDir, usePlinth, type Response } from './harness.js';
import { Pki } from './auth-fixtures.js';
import { Rng as BaseRng } from './rng.js';

const SEED = process.env['PLINTH_PROTO_FUZZ_SEED'] ? Number(process.env['PLINTH_PROTO_FUZZ_SEED']) >>> 0 : randomInt(0, 2 ** 32);
const COUNT = Number(process.env['PLINTH_PROTO_FUZZ_COUNT']) > 0 ? Number(process.env['PLINTH_PROTO_FUZZ_COUNT']) : 400;

const KEYS = ['__proto__', 'constructor', 'prototype'];
const MORE_KEYS = ['toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];
const NS = 'pfz';
const GROUP = 'proto.example.com';
const PATHS = {
  cm: `/api/v1/namespaces/${NS}/configmaps`,
  sa: `/api/v1/namespaces/${NS}/serviceaccounts`,
  fz: `/apis/${GROUP}/v1/namespaces/${NS}/fuzzies`,
} as const;
type Kind = keyof typeof PATHS;
const NAMES = ['o-0', 'o-1', 'o-2'];
const OPS_ANNOTATION = 'fuzz.example.com/ops';
/** What a poisoned value carries: never stored where kube drops the key that holds it. */
const MARK = 'polluted-marker';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A member as data (`__proto__` too). */
function put(o: Obj, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}
const own = (o: unknown, k: string): unknown => (isObj(o) && Object.hasOwn(o, k) ? o[k] : undefined);
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

// ---------------------------------------------------------------------------------------------
// Prototypes
// ---------------------------------------------------------------------------------------------

const PROTOTYPES: Array<[string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
];
const BASELINE = new Map(PROTOTYPES.map(([n, p]) => [n, Object.getOwnPropertyNames(p).sort()]));

/** What changed on a prototype, or undefined; the change is undone so the run can go on. */
function prototypeDamage(): string | undefined {
  const found: string[] = [];
  for (const [name, p] of PROTOTYPES) {
    const base = BASELINE.get(name)!;
    const now = Object.getOwnPropertyNames(p).sort();
    if (Object.keys(p).length > 0 || !isDeepStrictEqual(now, base)) {
      found.push(`${name}: enumerable ${JSON.stringify(Object.keys(p))}, added ${JSON.stringify(now.filter((k) => !base.includes(k)))}`);
      for (const k of now) if (!base.includes(k)) delete (p as Obj)[k];
    }
  }
  return found.length > 0 ? found.join('; ') : undefined;
}

// ---------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------

class Rng extends BaseRng {
  key(): string {
    return this.chance(0.8) ? this.pick(KEYS) : this.pick(MORE_KEYS);
  }
}

/** A value nesting prototype-named keys `depth` deep; leaves are the marker or strings. */
function poison(rng: Rng, depth: number): unknown {
  if (depth <= 0) {
    return rng.pick<unknown>([
      { deletionTimestamp: '2020-01-01T00:00:00Z', retryAfterSeconds: 7, marker: MARK },
      { finalizers: ['x'], marker: MARK },
      MARK,
      [MARK],
    ]);
  }
  const o: Obj = {};
  for (let i = 0; i < 1 + rng.int(2); i++) put(o, rng.key(), poison(rng, depth - 1));
  return o;
}

/** A string-valued map with prototype-named keys (ConfigMap data, labels, annotations). */
function stringMap(rng: Rng, labelKeysOnly = false): Obj {
  const o: Obj = {};
  for (let i = 0; i < 1 + rng.int(3); i++) {
    const k = labelKeysOnly ? rng.pick(['constructor', 'prototype', ...MORE_KEYS.filter((x) => !x.startsWith('_'))]) : rng.key();
    put(o, k, `v-${rng.int(100)}`);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Objects and what kube keeps of them
// ---------------------------------------------------------------------------------------------

/** A valid object of `kind` with prototype-named keys where the generator chooses to put them. */
function objectOf(rng: Rng, kind: Kind, name: string, hooked: boolean): Obj {
  const metadata: Obj = { name, namespace: NS };
  if (rng.chance(0.6)) metadata['labels'] = stringMap(rng, rng.chance(0.8));
  if (rng.chance(0.4)) metadata['annotations'] = stringMap(rng, true);
  if (hooked) {
    metadata['labels'] = { ...(metadata['labels'] as Obj), 'fuzz-webhook': 'yes' };
    metadata['annotations'] = { ...(metadata['annotations'] as Obj), [OPS_ANNOTATION]: JSON.stringify(webhookOps(rng, kind)) };
  }
  if (rng.chance(0.4)) put(metadata, rng.key(), poison(rng, rng.int(3)));
  const obj: Obj = { apiVersion: kind === 'fz' ? `${GROUP}/v1` : 'v1', kind: kind === 'cm' ? 'ConfigMap' : kind === 'sa' ? 'ServiceAccount' : 'Fuzzy', metadata };
  if (rng.chance(0.3)) put(obj, rng.key(), poison(rng, rng.int(3)));
  switch (kind) {
    case 'cm':
      obj['data'] = stringMap(rng);
      break;
    case 'sa': {
      const secret: Obj = { name: 'token' };
      if (rng.chance(0.6)) put(secret, rng.key(), poison(rng, rng.int(2)));
      obj['secrets'] = [secret];
      break;
    }
    case 'fz': {
      obj['spec'] = poison(rng, 1 + rng.int(4));
      if (!isObj(obj['spec'])) obj['spec'] = { value: obj['spec'] };
      const typed: Obj = {};
      if (rng.chance(0.6)) put(typed, '__proto__', `p${rng.int(10)}`);
      if (rng.chance(0.4)) put(typed, 'constructor', `c${rng.int(10)}`);
      if (rng.chance(0.4)) put(typed, 'prototype', rng.int(10));
      if (rng.chance(0.3)) put(typed, rng.pick(MORE_KEYS), poison(rng, 1));
      if (rng.chance(0.4)) {
        const item = (): Obj => {
          const it: Obj = {};
          put(it, '__proto__', `k${rng.int(3)}`);
          if (rng.chance(0.5)) put(it, 'constructor', rng.int(5));
          return it;
        };
        const items = [item(), item()];
        typed['list'] = own(items[0], '__proto__') === own(items[1], '__proto__') ? [items[0]] : items;
      }
      obj['typed'] = typed;
      break;
    }
  }
  return obj;
}

/** JSON patch operations a webhook returns: always applicable (adds to members that exist). */
function webhookOps(rng: Rng, kind: Kind): Obj[] {
  const ops: Obj[] = [];
  for (let i = 0; i < 1 + rng.int(3); i++) {
    const k = rng.key();
    if (kind === 'cm') ops.push({ op: 'add', path: `/data/${k}`, value: `hook-${rng.int(10)}` });
    else if (kind === 'fz') ops.push({ op: 'add', path: `/spec/${k}`, value: poison(rng, rng.int(2)) });
    if (kind !== 'fz' && rng.chance(0.5)) ops.push({ op: 'add', path: `/metadata/${k}`, value: poison(rng, 1) });
  }
  return ops;
}

/** The parts of an object kube keeps member for member: its maps and preserved subtree. */
function keptParts(kind: Kind, obj: Obj | undefined): Obj {
  const meta = isObj(own(obj, 'metadata')) ? (own(obj, 'metadata') as Obj) : {};
  const labels = { ...(own(meta, 'labels') as Obj | undefined) };
  delete labels['fuzz-webhook'];
  const annotations = { ...(own(meta, 'annotations') as Obj | undefined) };
  delete annotations[OPS_ANNOTATION];
  const parts: Obj = { labels, annotations };
  if (kind === 'cm') parts['data'] = own(obj, 'data') ?? {};
  if (kind === 'fz') parts['spec'] = own(obj, 'spec') ?? null;
  return parts;
}

/** What kube's decoding keeps of a custom resource's `typed` field (prune, default). */
function expectedTyped(typed: unknown): Obj {
  const out: Obj = {};
  for (const k of ['__proto__', 'constructor', 'prototype', 'list']) if (isObj(typed) && Object.hasOwn(typed, k)) put(out, k, typed[k]);
  if (!Object.hasOwn(out, 'constructor')) put(out, 'constructor', 'dflt');
  if (Array.isArray(out['list'])) out['list'] = (out['list'] as Obj[]).map((it) => expectedItem(it));
  return out;
}
function expectedItem(it: Obj): Obj {
  const out: Obj = {};
  for (const k of ['__proto__', 'constructor']) if (Object.hasOwn(it, k)) put(out, k, it[k]);
  return out;
}

/** Where the marker may be stored: only inside a custom resource's preserved spec. */
function markerOutsideKept(kind: Kind, stored: Obj): boolean {
  const rest: Obj = { ...stored };
  if (kind === 'fz') delete rest['spec'];
  // The webhook's operations travel in an annotation, as text.
  const meta = isObj(rest['metadata']) ? rest['metadata'] : {};
  const annotations = { ...(own(meta, 'annotations') as Obj | undefined) };
  delete annotations[OPS_ANNOTATION];
  rest['metadata'] = { ...meta, annotations };
  return JSON.stringify(rest).includes(MARK);
}

/** Prototype-named members where kube's types have none: the top level, metadata, struct items. */
function strayKeys(kind: Kind, stored: Obj): string[] {
  const stray: string[] = [];
  const check = (o: unknown, where: string): void => {
    if (!isObj(o)) return;
    for (const k of [...KEYS, ...MORE_KEYS]) if (Object.hasOwn(o, k)) stray.push(`${where}.${k}`);
  };
  check(stored, '');
  check(stored['metadata'], '.metadata');
  if (kind === 'sa' && Array.isArray(stored['secrets'])) stored['secrets'].forEach((s, i) => check(s, `.secrets[${i}]`));
  if (kind === 'fz' && isObj(stored['typed'])) {
    for (const k of MORE_KEYS) if (Object.hasOwn(stored['typed'], k)) stray.push(`.typed.${k}`);
  }
  return stray;
}

// ---------------------------------------------------------------------------------------------
// References: RFC 7386 (as evanphx applies it) and evanphx v4's JSON patch on objects
// ---------------------------------------------------------------------------------------------

function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === null ? null : pruneNulls(x)));
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) put(out, k, pruneNulls(x));
  return out;
}

function mergeRef(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return pruneNulls(patch);
  const out: Obj = isObj(target) ? copy(target) : {};
  for (const [k, pv] of Object.entries(patch)) {
    if (pv === null) delete out[k];
    else {
      const cur = own(out, k);
      put(out, k, isObj(cur) && isObj(pv) ? mergeRef(cur, pv) : isObj(cur) ? copy(pv) : pruneNulls(pv));
    }
  }
  return out;
}

/** Applies add/replace/remove/test ops through objects only; undefined when one does not apply. */
function jsonPatchRef(doc: Obj, ops: Obj[]): Obj | undefined {
  const out = copy(doc);
  for (const op of ops) {
    const tokens = String(op['path']).split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    let parent: unknown = out;
    for (const t of tokens.slice(0, -1)) {
      parent = Array.isArray(parent) && /^\d+$/.test(t) ? parent[Number(t)] : own(parent, t);
      if (!isObj(parent) && !Array.isArray(parent)) return undefined;
    }
    if (!isObj(parent)) return undefined;
    const last = tokens[tokens.length - 1]!;
    switch (op['op']) {
      case 'add':
      case 'replace': // evanphx v4: replacing a missing object member sets it
        put(parent, last, copy(op['value']));
        break;
      case 'remove':
        if (!Object.hasOwn(parent, last)) return undefined;
        delete parent[last];
        break;
      case 'test': {
        const actual = own(parent, last) ?? null;
        if (!isDeepStrictEqual(actual, op['value'] ?? null)) return undefined;
        break;
      }
      default:
        return undefined;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

interface Planned {
  what: string;
  kind: Kind;
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The kept parts the write must leave, computed from the state before it (undefined: not checked). */
  expect?: (before: Obj | undefined) => Obj | undefined;
  /** A JSON patch the reference cannot apply: must be refused. */
  mustFail?: (before: Obj | undefined) => boolean;
  /** Exact `typed` field a custom resource must hold afterwards. */
  expectTyped?: unknown;
}

const env = usePlinth();
const dir = tempDir('plinth-proto-fuzz-');
let webhook: Server;

/** The namespace, the CRD and the webhook (called from the test: Node 20 runs root-level hooks concurrently). */
async function setup(): Promise<void> {
  const certs = join(dir, 'certs');
  mkdirSync(certs);
  const pki = new Pki(certs).rootCA('ca').serving('server', 'ca');
  // The webhook returns the operations the object carries in an annotation.
  webhook = createServer({ cert: pki.pem('server'), key: pki.keyPem('server') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const text = review.request.object?.metadata?.annotations?.[OPS_ANNOTATION];
      const response: Obj = { uid: review.request.uid, allowed: true };
      if (typeof text === 'string') Object.assign(response, { patchType: 'JSONPatch', patch: Buffer.from(text).toString('base64') });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const port = (webhook.address() as AddressInfo).port;
  const c = env.plinth.client;
  assert.equal((await c.post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  const crd = JSON.parse(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"fuzzies.${GROUP}"},
    "spec":{"group":"${GROUP}","scope":"Namespaced","names":{"plural":"fuzzies","singular":"fuzzy","kind":"Fuzzy","listKind":"FuzzyList"},
    "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
      "spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
      "typed":{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"string","default":"dflt"},"prototype":{"type":"integer"},
        "list":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["__proto__"],
          "items":{"type":"object","required":["__proto__"],"properties":{"__proto__":{"type":"string"},"constructor":{"type":"integer"}}}}}}}}}}]}}`);
  assert.equal((await c.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
  const hook = {
    name: 'fuzz.example.com',
    clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: Buffer.from(pki.pem('ca')).toString('base64') },
    rules: [{ operations: ['CREATE'], apiGroups: ['', GROUP], apiVersions: ['v1'], resources: ['configmaps', 'serviceaccounts', 'fuzzies'] }],
    objectSelector: { matchLabels: { 'fuzz-webhook': 'yes' } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
  };
  assert.equal((await c.post('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', { metadata: { name: 'fuzz' }, webhooks: [hook] })).status, 201);
  await eventually(async () => (await c.get(`${PATHS.fz}`)).status === 200, 10_000, 'fuzzies served');
  await eventually(async () => (await c.get('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations?resourceVersion=0')).body.items.length === 1, 10_000, 'the webhook in the cache');
}

after(async () => {
  webhook?.closeAllConnections();
  await new Promise<void>((r) => (webhook ? webhook.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
});

/** The next request, from the model of what is stored. */
function plan(rng: Rng, state: Map<string, Obj>): Planned {
  const kind = rng.pick<Kind>(['cm', 'cm', 'sa', 'fz', 'fz']);
  const name = rng.pick(NAMES);
  const path = `${PATHS[kind]}/${name}`;
  const exists = state.has(`${kind}/${name}`);
  const action = rng.pick(exists ? ['write', 'write', 'merge', 'merge', 'strategic', 'json', 'json', 'json', 'apply', 'select', 'delete'] : ['write', 'write', 'apply', 'select']);
  const tag = (s: string): string => `${s} ${kind}/${name}`;
  switch (action) {
    case 'write': {
      // The webhook is called on CREATE only, so a later patch of the object is not mutated again.
      const hooked = !exists && rng.chance(0.3);
      const obj = objectOf(rng, kind, name, hooked);
      // kube's custom resources refuse an update without a resourceVersion.
      if (exists) (obj['metadata'] as Obj)['resourceVersion'] = (state.get(`${kind}/${name}`)!['metadata'] as Obj)['resourceVersion'];
      const encoding = kind === 'fz' ? rng.pick(['json', 'yaml']) : rng.pick(['json', 'json', 'yaml', 'protobuf']);
      const body = encoding === 'json' ? JSON.stringify(obj) : encoding === 'yaml' ? stringifyYaml(obj) : encodeProtobuf(obj);
      const contentType = encoding === 'json' ? 'application/json' : encoding === 'yaml' ? 'application/yaml' : 'application/vnd.kubernetes.protobuf';
      const p: Planned = { what: tag(`${exists ? 'PUT' : 'POST'} ${encoding}${hooked ? ' (webhook)' : ''}`), kind, name, method: exists ? 'PUT' : 'POST', path: exists ? path : PATHS[kind], headers: { 'content-type': contentType }, body };
      // A webhook's operations land on the object; their effect on kept parts is computed too.
      const ops = hooked ? (JSON.parse(String(own(own(obj['metadata'], 'annotations'), OPS_ANNOTATION))) as Obj[]) : [];
      p.expect = () => keptParts(kind, jsonPatchRef(obj, ops.filter((o) => !String(o['path']).startsWith('/metadata/'))) ?? obj);
      if (kind === 'fz') p.expectTyped = expectedTyped(obj['typed']);
      return p;
    }
    case 'merge':
    case 'strategic': {
      const patch: Obj = {};
      const part = kind === 'cm' ? 'data' : kind === 'fz' ? 'spec' : 'secrets';
      if (kind === 'cm') {
        const m = stringMap(rng);
        if (rng.chance(0.4)) put(m, rng.key(), null);
        patch['data'] = m;
      } else if (kind === 'fz') {
        const m = poison(rng, 1 + rng.int(3)) as Obj;
        if (rng.chance(0.4)) put(m, rng.key(), null);
        patch['spec'] = m;
      }
      const meta: Obj = {};
      put(meta, rng.key(), poison(rng, rng.int(3)));
      if (rng.chance(0.3)) meta['labels'] = stringMap(rng, true);
      patch['metadata'] = meta;
      if (rng.chance(0.3)) put(patch, rng.key(), poison(rng, rng.int(3)));
      const strategic = action === 'strategic';
      return {
        what: tag(`${strategic ? 'strategic merge' : 'merge'} patch of ${part}`),
        kind,
        name,
        method: 'PATCH',
        path,
        headers: { 'content-type': strategic ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json' },
        body: JSON.stringify(patch),
        expect: (b) => keptParts(kind, mergeRef(b, patch) as Obj),
      };
    }
    case 'json': {
      const ops: Obj[] = [];
      for (let i = 0; i < 1 + rng.int(3); i++) {
        const k = rng.key();
        const k2 = rng.key();
        const where = rng.pick(kind === 'cm' ? [`/data/${k}`, `/metadata/${k}`, `/metadata/${k}/${k2}`, `/${k}/${k2}/x`, `/metadata/labels/${k}`] : kind === 'fz' ? [`/spec/${k}`, `/spec/${k}/${k2}`, `/metadata/${k}/${k2}`, `/${k}/${k2}`, `/typed/${k}/x`] : [`/secrets/0/${k}`, `/secrets/0/${k}/${k2}`, `/metadata/${k}`, `/${k}/${k2}/x`]);
        const op = rng.pick(['add', 'add', 'replace', 'remove', 'test']);
        const value = where.startsWith('/data/') || where.startsWith('/metadata/labels/') ? `j-${rng.int(10)}` : poison(rng, rng.int(2));
        ops.push(op === 'remove' ? { op, path: where } : { op, path: where, value });
      }
      return {
        what: tag(`JSON patch ${ops.map((o) => `${String(o['op'])} ${String(o['path'])}`).join(', ')}`),
        kind,
        name,
        method: 'PATCH',
        path,
        headers: { 'content-type': 'application/json-patch+json' },
        body: JSON.stringify(ops),
        expect: (b) => (b ? keptParts(kind, jsonPatchRef(b, ops)) : undefined),
        mustFail: (b) => !!b && jsonPatchRef(b, ops) === undefined,
      };
    }
    case 'apply': {
      const obj = objectOf(rng, kind, name, false);
      return { what: tag('apply'), kind, name, method: 'PATCH', path: `${path}?fieldManager=fuzz&force=true`, headers: { 'content-type': 'application/apply-patch+yaml' }, body: stringifyYaml(obj) };
    }
    case 'delete':
      return { what: tag('DELETE'), kind, name, method: 'DELETE', path, headers: {} };
    default: {
      const k = rng.key();
      const selector = rng.pick([`labelSelector=${encodeURIComponent(k)}`, `labelSelector=${encodeURIComponent(`!${k}`)}`, `labelSelector=${encodeURIComponent(`${k} in (v-1,v-2)`)}`, `fieldSelector=${encodeURIComponent(`metadata.${k}=x`)}`, `fieldSelector=${encodeURIComponent(`${k}=x`)}`]);
      return { what: `list ${kind} ?${decodeURIComponent(selector)}`, kind, name, method: 'GET', path: `${PATHS[kind]}?${selector}`, headers: {} };
    }
  }
}

test(`prototype-named keys at every depth through every decoder, patch type, apply, webhook and selector (seed ${SEED})`, async (t) => {
  console.log(`prototype fuzz: seed ${SEED}, ${COUNT} requests (replay: PLINTH_PROTO_FUZZ_SEED=${SEED})`);
  await setup();
  const c = env.plinth.client;
  const rng = new Rng(SEED);
  const state = new Map<string, Obj>();
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const fail = (p: Planned, why: string, res?: Response): void => {
    failures.push(`${p.what}: ${why}${res ? `\n    answered ${res.status}: ${res.raw.toString().slice(0, 400)}` : ''}\n    body: ${p.body === undefined ? '' : Buffer.isBuffer(p.body) ? `(protobuf, ${p.body.length} bytes)` : p.body.slice(0, 400)}`);
  };
  for (let i = 0; i < COUNT && failures.length < 20; i++) {
    const p = plan(rng, state);
    const key = `${p.kind}/${p.name}`;
    const before = state.get(key);
    let res: Response;
    try {
      res = await c.request(p.method, p.path, { headers: p.headers, ...(p.body !== undefined ? { rawBody: p.body } : {}) });
    } catch (e) {
      fail(p, `no answer: ${(e as Error).message}`);
      break;
    }
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const damage = prototypeDamage();
    if (damage) fail(p, `a prototype changed: ${damage}`, res);
    if (res.status >= 500) fail(p, 'a 5xx', res);
    if (p.method === 'GET') {
      if (res.status === 200) {
        // Each listed object has the selected label as its own member (or lacks it for `!k`).
        const [, sel] = p.path.split('?');
        const s = decodeURIComponent(sel!.replace(/^labelSelector=/, ''));
        for (const item of res.body.items as Obj[]) {
          const labels = own(item['metadata'], 'labels');
          const k = s.replace(/^!/, '').split(' ')[0]!;
          if (sel!.startsWith('labelSelector') && Object.hasOwn(isObj(labels) ? labels : {}, k) === s.startsWith('!')) fail(p, `listed ${JSON.stringify(item['metadata'])}`, res);
        }
      }
      continue;
    }
    if (p.method === 'DELETE') {
      if (res.status === 200) state.delete(key);
      continue;
    }
    if (p.mustFail?.(before) && res.status < 300) fail(p, 'a JSON patch through a member the object lacks was applied (kube: 422)', res);
    if (res.status >= 300) {
      if (res.status === 404 || res.status === 409) {
        const got = await c.get(`${PATHS[p.kind]}/${p.name}`);
        if (got.status === 200) state.set(key, got.body);
        else state.delete(key);
      }
      continue;
    }
    const got = await c.get(`${PATHS[p.kind]}/${p.name}`);
    if (got.status !== 200) {
      fail(p, `the object does not read back: ${got.status}`, res);
      continue;
    }
    const stored = got.body as Obj;
    state.set(key, stored);
    if (!isDeepStrictEqual(stored, res.body)) fail(p, `read back differs from the answer: ${got.raw.toString().slice(0, 400)}`, res);
    if (markerOutsideKept(p.kind, stored)) fail(p, `a value under a dropped key was stored: ${got.raw.toString().slice(0, 400)}`, res);
    const stray = strayKeys(p.kind, stored);
    if (stray.length > 0) fail(p, `members kube's types do not have were stored: ${stray.join(', ')}`, res);
    if (own(stored['metadata'], 'deletionTimestamp') !== undefined) fail(p, 'the object is being deleted', res);
    const want = p.expect?.(before);
    if (want !== undefined) {
      const have = keptParts(p.kind, stored);
      if (!isDeepStrictEqual(have, want)) fail(p, `kept members differ:\n    stored   ${JSON.stringify(have)}\n    expected ${JSON.stringify(want)}`, res);
    }
    if (p.expectTyped !== undefined && !isDeepStrictEqual(stored['typed'], p.expectTyped)) {
      fail(p, `typed: stored ${JSON.stringify(stored['typed'])}, expected ${JSON.stringify(p.expectTyped)}`, res);
    }
  }
  const summary = `seed ${SEED}: statuses ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`;
  t.diagnostic(summary);
  console.log(`prototype fuzz: ${summary}`);
  assert.equal((await c.get('/readyz')).status, 200);
  if (failures.length > 0) assert.fail(`${failures.length} failure(s) (replay: PLINTH_PROTO_FUZZ_SEED=${SEED})\n${failures.join('\n')}`);
});
