/**
 * The field manager's shortcuts against its general paths, on objects generated from the schema of
 * every built-in kind (map lists with keys, sets, maps, nulls, unknown fields, bad list items):
 * - a create's managedFields entry built directly (FieldManager's default) against the general
 *   update path (`createDirect: false`): the same entry, byte for byte, or both none;
 * - compareObjects skipping equal subtrees (checking only their list item keys) against the walk
 *   of every subtree: the same added, modified and removed paths, or the same TypedError.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinResources } from '../groups/index.js';
import { builtinDefinitions } from '../kube-schema/definitions.js';
import type { Schema } from '../schema.js';
import { setMember } from '../json.js';
import { FieldManager } from './managed-fields.js';
import { TypedError, TypedSchema, compareObjects } from './typed.js';

const defs = builtinDefinitions();

/** A small seeded PRNG (mulberry32): the same objects on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const deref = (s: Schema | undefined): Schema | undefined => {
  for (let i = 0; s?.$ref && i < 32; i++) s = defs.get(s.$ref);
  return s;
};

const NAMES = ['a', 'b', 'web', 'a.b', 'x/y', 'ü', '<tag>', '__proto__', 'constructor', '0', 'Z'];

function gen(schema: Schema | undefined, r: () => number, depth: number): unknown {
  const s = deref(schema);
  if (depth > 0 && r() < 0.04) return null;
  if (!s || depth > 9) return r() < 0.5 ? 'leaf' : 7;
  if (s['x-kubernetes-int-or-string']) return r() < 0.5 ? Math.floor(r() * 100) : `${Math.floor(r() * 100)}%`;
  if (s.type === 'array' || s.items) {
    const n = Math.floor(r() * 4);
    const keys = s['x-kubernetes-list-map-keys'] ?? (s['x-kubernetes-patch-merge-key'] ? [s['x-kubernetes-patch-merge-key']] : []);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) {
      const item = gen(s.items, r, depth + 1);
      if (keys.length > 0 && item && typeof item === 'object' && !Array.isArray(item)) {
        // Keys mostly distinct; now and then a duplicate or a missing key field (SMD refuses both).
        for (const k of keys) if (r() > 0.05) setMember(item as Record<string, unknown>, k, r() < 0.1 ? 'dup' : `${k}-${i}`);
      }
      out.push(item);
    }
    return out;
  }
  if (s.properties || s.additionalProperties) {
    const out: Record<string, unknown> = {};
    const keep = depth < 2 ? 0.8 : 0.45;
    for (const [k, v] of Object.entries(s.properties ?? {})) if (r() < keep) setMember(out, k, gen(v, r, depth + 1));
    if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      const n = Math.floor(r() * 3);
      for (let i = 0; i < n; i++) setMember(out, NAMES[Math.floor(r() * NAMES.length)]!, gen(s.additionalProperties, r, depth + 1));
    }
    // An unknown field now and then (kept by a schemaless walk, an untyped leaf by a typed one).
    if (r() < 0.05) setMember(out, 'unknownField', { nested: [1, { x: true }] });
    return out;
  }
  if (s['x-kubernetes-preserve-unknown-fields'] || s.type === 'object') return { free: { form: [1, 2, { deep: 'x' }] }, n: null };
  switch (s.type) {
    case 'integer':
      return Math.floor(r() * 1000) - 10;
    case 'number':
      return r() * 10;
    case 'boolean':
      return r() < 0.5;
    default:
      return NAMES[Math.floor(r() * NAMES.length)];
  }
}

/** kube's empty object: the top level's non-pointer structs as `{}` (registry/meta.ts emptyObjectOf). */
function emptyOf(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind' || v.goPointer) continue;
    const sch = deref(v);
    if (sch?.properties && sch['x-kubernetes-map-type'] !== 'atomic') setMember(out, k, {});
  }
  return out;
}

const clone = (o: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;

test('a create\'s managedFields built directly equal the general path\'s for every built-in kind', () => {
  let objects = 0;
  let withEntry = 0;
  let dropped = 0;
  for (const def of builtinResources()) {
    const schema = def.schema;
    for (const reset of [[], ['status'], ['spec']]) {
      const cfg = { schema, defs, resetFields: reset.filter((f) => schema.properties?.[f]).map((f) => [f]), emptyObject: emptyOf(schema) };
      const direct = new FieldManager(cfg);
      const general = new FieldManager({ ...cfg, createDirect: false });
      const r = rng(objects + 17);
      for (let i = 0; i < 12; i++) {
        const obj = gen(schema, r, 0) as Record<string, unknown>;
        obj['apiVersion'] = 'v1';
        obj['kind'] = def.kind;
        setMember(obj, 'metadata', { name: `o-${i}`, namespace: 'ns', creationTimestamp: '2026-11-29T00:00:00Z', uid: 'u', ...(i % 3 === 0 ? { labels: { app: 'x', 'a.b/c': 'd' }, finalizers: ['f/1', 'f/2'] } : {}), ...(i % 4 === 1 ? { managedFields: [{}] } : {}) });
        const opts = { manager: i % 5 === 0 ? '' : 'kubectl-create', apiVersion: 'v1', time: '2026-11-29T00:00:00Z' };
        const a = direct.update(undefined, clone(obj), opts);
        const b = general.update(undefined, clone(obj), opts);
        assert.equal(JSON.stringify(a), JSON.stringify(b), `${def.group}/${def.version} ${def.kind} reset=${reset.join()} #${i}: ${JSON.stringify(obj)}`);
        objects++;
        const mf = (a['metadata'] as { managedFields?: unknown[] }).managedFields;
        if (mf) withEntry++;
        else dropped++;
      }
    }
  }
  // The generator reached both outcomes often: entries, and items SMD refuses (no entry).
  assert.ok(withEntry > objects / 2, `${withEntry} of ${objects} with an entry`);
  assert.ok(dropped > 20, `${dropped} of ${objects} without one`);
});

test('a create with a kept status and nested defaults: the direct entry is the general one', () => {
  const def = builtinResources().find((d) => d.group === 'apps' && d.kind === 'Deployment' && d.version === 'v1')!;
  const cfg = { schema: def.schema, defs, resetFields: [['status']], emptyObject: emptyOf(def.schema) };
  const labels = { app: 'web' };
  const obj = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels, annotations: { note: 'x' }, creationTimestamp: '2026-11-29T00:00:00Z' },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      template: {
        metadata: { creationTimestamp: null, labels },
        spec: {
          containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' }],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
    },
    status: {},
  };
  const opts = { manager: 'kubectl-create', apiVersion: 'apps/v1', time: '2026-11-29T00:00:00Z' };
  const a = new FieldManager(cfg).update(undefined, clone(obj), opts);
  const b = new FieldManager({ ...cfg, createDirect: false }).update(undefined, clone(obj), opts);
  assert.deepEqual(a, b);
  assert.equal(JSON.stringify(a), JSON.stringify(b));
  const v1 = (a['metadata'] as { managedFields: Array<{ fieldsV1: Record<string, Record<string, unknown>> }> }).managedFields[0]!.fieldsV1;
  // kube's shape: labels a member map (`.`), metadata not one (stripped), the container keyed by name.
  assert.deepEqual(v1['f:metadata'], { 'f:annotations': { '.': {}, 'f:note': {} }, 'f:labels': { '.': {}, 'f:app': {} } });
  assert.ok(Object.hasOwn((v1['f:spec'] as Record<string, Record<string, Record<string, Record<string, unknown>>>>)['f:template']!['f:spec']!['f:containers']!, 'k:{"name":"web"}'));
});

/** A changed copy of `v`: some leaves changed, members dropped or added, map order reversed; most of it equal. */
function mutate(v: unknown, schema: Schema | undefined, r: () => number, depth: number): unknown {
  if (Array.isArray(v)) {
    const out = v.map((x) => (r() < 0.3 ? mutate(x, deref(schema)?.items, r, depth + 1) : JSON.parse(JSON.stringify(x)) as unknown));
    if (r() < 0.1) out.pop();
    if (r() < 0.1 && out.length > 0) out.push(JSON.parse(JSON.stringify(out[0])));
    return out;
  }
  if (v && typeof v === 'object') {
    const s = deref(schema);
    const keys = Object.keys(v);
    if (r() < 0.2) keys.reverse();
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      if (r() < 0.05) continue;
      const x = (v as Record<string, unknown>)[k];
      const child = s?.properties?.[k] ?? (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
      setMember(out, k, r() < 0.35 ? mutate(x, child, r, depth + 1) : JSON.parse(JSON.stringify(x ?? null)));
    }
    if (r() < 0.05 && s?.properties) {
      const names = Object.keys(s.properties);
      const k = names[Math.floor(r() * names.length)]!;
      setMember(out, k, gen(s.properties[k], r, depth + 1));
    }
    return out;
  }
  if (r() < 0.3) return typeof v === 'number' ? v + 1 : typeof v === 'string' ? `${v}x` : typeof v === 'boolean' ? !v : 'changed';
  return v;
}

const outcome = (ts: TypedSchema, l: unknown, r: unknown, skipEqual: boolean): string => {
  try {
    const c = compareObjects(ts, l, r, skipEqual);
    return JSON.stringify([c.added.toFieldsV1(), c.modified.toFieldsV1(), c.removed.toFieldsV1()]);
  } catch (e) {
    if (e instanceof TypedError) return `TypedError: ${e.message}`;
    throw e;
  }
};

test('compareObjects skipping equal subtrees finds what the full walk finds, errors of their list items included', () => {
  let pairs = 0;
  let errors = 0;
  let changes = 0;
  for (const def of builtinResources()) {
    const ts = new TypedSchema(def.schema, defs);
    const r = rng(pairs + 101);
    for (let i = 0; i < 16; i++) {
      const live = gen(def.schema, r, 0) as Record<string, unknown>;
      const next = i % 4 === 0 ? JSON.parse(JSON.stringify(live)) : mutate(live, def.schema, r, 0);
      const fast = outcome(ts, live, next, true);
      assert.equal(fast, outcome(ts, live, next, false), `${def.group}/${def.version} ${def.kind} #${i}: ${JSON.stringify(live)} -> ${JSON.stringify(next)}`);
      pairs++;
      if (fast.startsWith('TypedError')) errors++;
      else if (fast !== '[{},{},{}]') changes++;
    }
  }
  // Both outcomes were reached often: changes found, and item-key errors (also in equal subtrees).
  assert.ok(changes > pairs / 3, `${changes} of ${pairs} with changes`);
  assert.ok(errors > 20, `${errors} of ${pairs} with errors`);
});
