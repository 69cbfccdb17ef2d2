import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../field-errors.js';
import { compileVersionSchema } from './compile.js';
import { compareKubeAwareVersions } from './version.js';

type Obj = Record<string, unknown>;

const root = (spec: Obj, extra: Obj = {}): Obj => ({ type: 'object', properties: { spec: { type: 'object', properties: spec, ...extra } } });
const cr = (spec: unknown): Obj => ({ apiVersion: 'example.com/v1', kind: 'Foo', metadata: { name: 'a', namespace: 'default' }, spec });
const messages = (schema: Obj, obj: Obj): string[] => compileVersionSchema(schema).validate(obj).map(fieldErrorString);

test('each schema keyword is reported with kube-openapi wording', () => {
  const cases: Array<[string, Obj, unknown, string[]]> = [
    ['maximum', { size: { type: 'integer', maximum: 100 } }, { size: 500 }, ['spec.size: Invalid value: 500: spec.size in body should be less than or equal to 100']],
    ['exclusiveMaximum', { size: { type: 'integer', maximum: 100, exclusiveMaximum: true } }, { size: 100 }, ['spec.size: Invalid value: 100: spec.size in body should be less than 100']],
    ['minimum', { size: { type: 'number', minimum: 1.5 } }, { size: 0.5 }, ['spec.size: Invalid value: 0.5: spec.size in body should be greater than or equal to 1.5']],
    ['exclusiveMinimum', { size: { type: 'integer', minimum: 0, exclusiveMinimum: true } }, { size: 0 }, ['spec.size: Invalid value: 0: spec.size in body should be greater than 0']],
    ['multipleOf', { size: { type: 'integer', multipleOf: 5 } }, { size: 7 }, ['spec.size: Invalid value: 7: spec.size in body should be a multiple of 5']],
    ['required', { name: { type: 'string' } }, {}, []],
    ['type', { x: { type: 'integer' } }, { x: 'string' }, ['spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"']],
    ['type of an object', { x: { type: 'object' } }, { x: [1] }, ['spec.x: Invalid value: "array": spec.x in body must be of type object: "array"']],
    ['enum', { mode: { type: 'string', enum: ['a', 'b'] } }, { mode: 'x' }, ['spec.mode: Unsupported value: "x": supported values: "a", "b"']],
    ['maxLength', { n: { type: 'string', maxLength: 3 } }, { n: 'abcd' }, ['spec.n: Invalid value: "abcd": spec.n in body should be at most 3 chars long']],
    ['minLength', { n: { type: 'string', minLength: 3 } }, { n: 'ab' }, ['spec.n: Invalid value: "ab": spec.n in body should be at least 3 chars long']],
    ['pattern', { n: { type: 'string', pattern: '^[a-z]+$' } }, { n: 'A1' }, ["spec.n: Invalid value: \"A1\": spec.n in body should match '^[a-z]+$'"]],
    ['pattern in Go syntax, matching', { n: { type: 'string', pattern: '(?i)^[a-z]+\\z' } }, { n: 'Ab' }, []],
    ['pattern in Go syntax', { n: { type: 'string', pattern: '(?i)^[a-z]+\\z' } }, { n: 'Ab\n' }, ["spec.n: Invalid value: \"Ab\\n\": spec.n in body should match '(?i)^[a-z]+\\z'"]],
    ['maxItems', { l: { type: 'array', items: { type: 'string' }, maxItems: 1 } }, { l: ['a', 'b'] }, ['spec.l: Invalid value: 2: spec.l in body should have at most 1 items']],
    ['minItems', { l: { type: 'array', items: { type: 'string' }, minItems: 2 } }, { l: ['a'] }, ['spec.l: Invalid value: 1: spec.l in body should have at least 2 items']],
    ['maxProperties', { m: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 } }, { m: { a: 'x', b: 'y' } }, ['spec.m: Invalid value: 1: spec.m in body should have at most 1 properties']],
    ['format date-time', { t: { type: 'string', format: 'date-time' } }, { t: 'yesterday' }, ['spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday"']],
    ['format ipv4', { ip: { type: 'string', format: 'ipv4' } }, { ip: '300.1.1.1' }, ['spec.ip: Invalid value: "300.1.1.1": spec.ip in body must be of type ipv4: "300.1.1.1"']],
    ['unknown format ignored', { x: { type: 'string', format: 'no-such-format' } }, { x: 'anything' }, []],
    ['integer formats not range-checked', { x: { type: 'integer', format: 'int32' } }, { x: 2 ** 40 }, []],
    ['nested array path', { items: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer', maximum: 10 } } } } }, { items: [{ port: 1 }, { port: 11 }] }, ['spec.items[1].port: Invalid value: 11: spec.items[1].port in body should be less than or equal to 10']],
  ];
  for (const [name, props, spec, want] of cases) {
    assert.deepEqual(messages(root(props), cr(spec)), want, name);
  }
  assert.deepEqual(messages(root({ name: { type: 'string' } }, { required: ['name'] }), cr({})), ['spec.name: Required value']);
});

test('nullable, int-or-string and anyOf', () => {
  const schema = root({ a: { type: 'string', nullable: true }, b: { type: 'string' }, p: { 'x-kubernetes-int-or-string': true } });
  assert.deepEqual(messages(schema, cr({ a: null, p: 80 })), []);
  assert.deepEqual(messages(schema, cr({ p: 'http' })), []);
  assert.deepEqual(messages(schema, cr({ b: null })), ['spec.b: Invalid value: "null": spec.b in body must be of type string: "null"']);
  assert.deepEqual(messages(schema, cr({ p: 1.5 })), ['spec.p: Invalid value: "number": spec.p in body must be of type integer,string: "number"']);
  const anyOf = root({ q: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } });
  assert.deepEqual(messages(anyOf, cr({ q: true })), [
    'spec.q: Invalid value: "boolean": spec.q in body must be of type integer,string: "boolean"',
    'spec.q: Invalid value: "boolean": spec.q in body must be of type integer: "boolean"',
    '<nil>: Invalid value: "": "spec.q" must validate at least one schema (anyOf)',
  ]);
});

test('a non-nullable null is pruned unless it has a default, which then fills it', () => {
  const c = compileVersionSchema(root({ a: { type: 'string' }, b: { type: 'string', default: 'B' }, n: { type: 'string', nullable: true } }));
  const obj = cr({ a: null, b: null, n: null });
  c.prune(obj);
  c.applyDefaults(obj);
  assert.deepEqual(obj['spec'], { b: 'B', n: null });
  assert.deepEqual(c.validate(obj), []);
});

test('defaulting fills absent fields recursively, in list items and map values', () => {
  const c = compileVersionSchema(
    root({
      replicas: { type: 'integer', default: 1 },
      template: { type: 'object', default: {}, properties: { image: { type: 'string', default: 'nginx' } } },
      ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' }, port: { type: 'integer' } } } },
      limits: { type: 'object', additionalProperties: { type: 'object', properties: { unit: { type: 'string', default: 'Mi' } } } },
      given: { type: 'string', default: 'x' },
    }),
  );
  const obj = cr({ ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }], limits: { mem: {} }, given: 'kept' });
  c.applyDefaults(obj);
  assert.deepEqual(obj['spec'], {
    replicas: 1,
    template: { image: 'nginx' },
    ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }],
    limits: { mem: { unit: 'Mi' } },
    given: 'kept',
  });
});

test('a default object is copied, not shared between objects', () => {
  const c = compileVersionSchema(root({ o: { type: 'object', default: { a: 1 }, properties: { a: { type: 'integer' } } } }));
  const x = cr({});
  const y = cr({});
  c.applyDefaults(x);
  c.applyDefaults(y);
  (x['spec'] as Obj)['o'] = 'changed';
  assert.deepEqual((y['spec'] as Obj)['o'], { a: 1 });
});

test('pruning drops undeclared fields, keeps root and embedded type/object meta and preserved subtrees', () => {
  const c = compileVersionSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          known: { type: 'string' },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          mixed: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { inner: { type: 'object', properties: { k: { type: 'string' } } } } },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } },
          map: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } },
        },
      },
    },
  });
  const obj: Obj = {
    apiVersion: 'example.com/v1',
    kind: 'Foo',
    metadata: { name: 'a' },
    status: { dropped: true },
    spec: {
      known: 'k',
      unknown: 'u',
      free: { anything: { deep: [1, { x: 1 }] } },
      mixed: { extra: 1, inner: { k: 'v', drop: 2 } },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', bogus: 1 }, spec: { a: 'x', b: 'y' }, other: 1 },
      map: { one: { v: 'x', w: 'y' } },
    },
  };
  c.prune(obj);
  assert.deepEqual(obj, {
    apiVersion: 'example.com/v1',
    kind: 'Foo',
    metadata: { name: 'a' },
    spec: {
      known: 'k',
      free: { anything: { deep: [1, { x: 1 }] } },
      mixed: { extra: 1, inner: { k: 'v' } },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { a: 'x' } },
      map: { one: { v: 'x' } },
    },
  });
});

test('embedded resources must name apiVersion and kind', () => {
  const schema = root({ t: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } });
  assert.deepEqual(messages(schema, cr({ t: { metadata: { name: 'x' } } })), ['spec.t.apiVersion: Required value', 'spec.t.kind: Required value']);
  assert.deepEqual(messages(schema, cr({ t: { apiVersion: 'a/b/c', kind: 'Pod_' } })), [
    'spec.t.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    `spec.t.kind: Invalid value: "Pod_": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
  ]);
  assert.deepEqual(messages(schema, cr({ t: { apiVersion: 'v1', kind: 'Pod' } })), []);
});

test('list-type set and map reject duplicates as kube does', () => {
  const schema = root({
    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['port'],
      items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' }, name: { type: 'string' } } },
    },
    pairs: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['a', 'b'],
      items: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'string' } } },
    },
  });
  assert.deepEqual(messages(schema, cr({ tags: ['a', 'b', 'a', 'a'], ports: [{ port: 80, name: 'x' }, { port: 80, name: 'y' }], pairs: [{ a: '1', b: '2' }, { b: '2', a: '1' }] })), [
    'spec.tags[2]: Duplicate value: "a"',
    'spec.ports[1]: Duplicate value: map[string]interface {}{"port":80}',
    'spec.pairs[1]: Duplicate value: map[string]interface {}{"a":"1", "b":"2"}',
  ]);
  assert.deepEqual(messages(schema, cr({ tags: ['a', 'b'], ports: [{ port: 80 }, { port: 81 }] })), []);
});

test('the plinth Schema form carries list and map types for server-side apply, without type/object meta', () => {
  const c = compileVersionSchema({
    type: 'object',
    required: ['spec', 'metadata'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        description: 'the spec',
        properties: {
          ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port'], items: { type: 'object', properties: { port: { type: 'integer', minimum: 1 } } } },
          labels: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
        },
      },
    },
  });
  assert.deepEqual(c.schema, {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: {
        type: 'object',
        description: 'the spec',
        properties: {
          ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port'], items: { type: 'object', properties: { port: { type: 'integer' } } } },
          labels: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
        },
      },
    },
  });
});

test('a schema nested 150 levels deep compiles and validates', () => {
  let leaf: Obj = { type: 'integer', maximum: 1 };
  let value: unknown = 2;
  for (let i = 0; i < 150; i++) {
    leaf = { type: 'object', properties: { n: leaf } };
    value = { n: value };
  }
  const c = compileVersionSchema({ type: 'object', properties: { spec: leaf } });
  const errs = c.validate(cr(value));
  assert.equal(errs.length, 1);
  assert.equal(errs[0]!.field, `spec${'.n'.repeat(150)}`);
  const obj = cr(value);
  c.prune(obj);
  c.applyDefaults(obj);
});

test('a 30-property schema validates 100k objects (figure printed)', () => {
  const props: Obj = {};
  const spec: Obj = {};
  for (let i = 0; i < 30; i++) {
    props[`f${i}`] = i % 3 === 0 ? { type: 'integer', minimum: 0, maximum: 1000 } : i % 3 === 1 ? { type: 'string', maxLength: 64, pattern: '^[a-z0-9-]+$' } : { type: 'boolean' };
    spec[`f${i}`] = i % 3 === 0 ? i : i % 3 === 1 ? `value-${i}` : true;
  }
  const c = compileVersionSchema(root(props, { required: ['f0'] }));
  const obj = cr(spec);
  const start = process.hrtime.bigint();
  for (let i = 0; i < 100_000; i++) assert.equal(c.validate(obj).length, 0);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`# 100k validations of a 30-property object: ${ms.toFixed(0)} ms (${Math.round(100_000 / (ms / 1000))}/s)`);
});

test('kube version priority', () => {
  const sorted = ['foo10', 'v1', 'v11alpha2', 'v2', 'v10beta3', 'foo1', 'v12alpha1', 'v3beta1', 'v11beta2', 'v10'].sort((a, b) => compareKubeAwareVersions(b, a));
  assert.deepEqual(sorted, ['v10', 'v2', 'v1', 'v11beta2', 'v10beta3', 'v3beta1', 'v12alpha1', 'v11alpha2', 'foo1', 'foo10']);
  assert.equal(compareKubeAwareVersions('v1', 'v1'), 0);
  assert.ok(compareKubeAwareVersions('v1', 'v1beta2') > 0);
});

test("a pattern is matched in linear time, as Go's regexp matches it (JavaScript's backtracking took 11 s for 30 characters)", () => {
  const schema = root({ name: { type: 'string', pattern: '^([a-z0-9]+-?)+[a-z0-9]$' } });
  const c = compileVersionSchema(schema);
  for (const bad of [`${'a'.repeat(30)}!`, `${'a'.repeat(100_000)}!`]) {
    const t0 = performance.now();
    const got = c.validate(cr({ name: bad })).map(fieldErrorString);
    const took = performance.now() - t0;
    // An explicit bound: node:test's timeout cannot stop synchronous code.
    assert.ok(took < 2000, `${bad.length} characters took ${Math.round(took)} ms`);
    assert.deepEqual(got, [`spec.name: Invalid value: "${bad}": spec.name in body should match '^([a-z0-9]+-?)+[a-z0-9]$'`]);
  }
  assert.deepEqual(c.validate(cr({ name: 'a-b-c' })), []);
});
