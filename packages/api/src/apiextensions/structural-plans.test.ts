/**
 * The compiled defaulting and list-type walks give exactly what the general walks give: the same
 * objects (key order included) and the same errors in the same order, over generated schemas and
 * objects that follow them, half-follow them, or not at all.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldError } from '../field-errors.js';
import { applyDefaults, compileDefaulter, compileListTypeValidator, toStructural, validateListTypes } from './structural.js';

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['a', 'b', 'name', 'port', 'toString', 'x-y', 'spec', 'items'];

function genSchema(r: () => number, depth: number): Record<string, unknown> {
  const pick = r();
  const s: Record<string, unknown> = {};
  if (r() < 0.2) s['nullable'] = true;
  if (depth <= 0 || pick < 0.3) {
    const t = ['string', 'integer', 'boolean', 'number'][Math.floor(r() * 4)]!;
    s['type'] = t;
    if (r() < 0.4) s['default'] = t === 'string' ? 'd' : t === 'boolean' ? false : t === 'integer' ? 7 : 0.5;
    return s;
  }
  if (pick < 0.55) {
    s['type'] = 'array';
    const items = genSchema(r, depth - 1);
    s['items'] = items;
    const lt = r();
    if (lt < 0.3) s['x-kubernetes-list-type'] = 'set';
    else if (lt < 0.6) {
      s['x-kubernetes-list-type'] = 'map';
      s['x-kubernetes-list-map-keys'] = r() < 0.5 ? ['name'] : ['name', 'port'];
    } else if (lt < 0.7) s['x-kubernetes-list-type'] = 'atomic';
    if (r() < 0.2) s['default'] = [{ name: 'n' }];
    return s;
  }
  s['type'] = 'object';
  if (pick < 0.7) {
    s['additionalProperties'] = r() < 0.2 ? true : genSchema(r, depth - 1);
  } else {
    const props: Record<string, unknown> = {};
    for (const n of NAMES) if (r() < 0.45) props[n] = genSchema(r, depth - 1);
    s['properties'] = props;
    if (r() < 0.15) s['additionalProperties'] = genSchema(r, depth - 1);
  }
  if (r() < 0.2) s['default'] = { a: 'x', b: { c: 1 } };
  return s;
}

function genValue(r: () => number, s: unknown, depth: number): unknown {
  const sch = (s ?? {}) as Record<string, unknown>;
  const roll = r();
  if (roll < 0.08) return null;
  if (depth <= 0 || roll < 0.12) return ['s', 3, true, 1.5][Math.floor(r() * 4)];
  if (sch['type'] === 'array' || (roll < 0.2 && sch['type'] !== 'object')) {
    const n = Math.floor(r() * 4);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) {
      if (r() < 0.5) out.push({ name: ['n', 'm'][Math.floor(r() * 2)]!, port: Math.floor(r() * 2), ...(r() < 0.5 ? { a: genValue(r, undefined, depth - 1) } : {}) });
      else out.push(genValue(r, sch['items'], depth - 1));
    }
    return out;
  }
  if (sch['type'] === 'object' || roll < 0.3) {
    const out: Record<string, unknown> = {};
    const props = (sch['properties'] ?? {}) as Record<string, unknown>;
    for (const n of [...NAMES, 'extra']) if (r() < 0.5) out[n] = genValue(r, props[n] ?? (typeof sch['additionalProperties'] === 'object' ? sch['additionalProperties'] : undefined), depth - 1);
    return out;
  }
  return ['s', 3, true, 1.5][Math.floor(r() * 4)];
}

describe('compiled structural walks', () => {
  it('default exactly as applyDefaults does', () => {
    let compared = 0;
    let changed = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const raw = { type: 'object', properties: { spec: genSchema(r, 4), status: genSchema(r, 3) } };
      const node = toStructural(raw);
      const compiled = compileDefaulter(node);
      for (let j = 0; j < 10; j++) {
        const obj = { spec: genValue(r, raw.properties.spec, 4), status: genValue(r, raw.properties.status, 3) };
        const a = structuredClone(obj);
        const b = structuredClone(obj);
        applyDefaults(a, node);
        compiled?.(b);
        assert.equal(JSON.stringify(b), JSON.stringify(a), `seed ${seed}: ${JSON.stringify(raw)} on ${JSON.stringify(obj)}`);
        compared++;
        if (JSON.stringify(a) !== JSON.stringify(obj)) changed++;
      }
    }
    assert.ok(compared >= 4000);
    assert.ok(changed > 500, `only ${changed} objects defaulted`);
  });

  it('find the same list-type errors in the same order as validateListTypes', () => {
    let withErrors = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed * 7919);
      const raw = { type: 'object', properties: { spec: genSchema(r, 4), status: genSchema(r, 3) } };
      const node = toStructural(raw);
      const compiled = compileListTypeValidator(node);
      for (let j = 0; j < 10; j++) {
        const obj = { spec: genValue(r, raw.properties.spec, 4), status: genValue(r, raw.properties.status, 3) };
        const a: FieldError[] = [];
        const b: FieldError[] = [];
        validateListTypes(obj, node, '', a);
        compiled?.(obj, b);
        assert.deepEqual(b, a, `seed ${seed}: ${JSON.stringify(raw)} on ${JSON.stringify(obj)}`);
        if (a.length > 0) withErrors++;
      }
    }
    assert.ok(withErrors > 50, `only ${withErrors} objects with list-type errors`);
  });
});
