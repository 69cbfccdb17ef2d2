/**
 * Keys named like Object.prototype members are data in every algorithm that walks or builds
 * objects from client input: patches, schema decoding, server-side apply, CRD schemas. Inputs are
 * JSON text (an object literal would turn `__proto__` into a prototype); after each case the
 * process's prototypes are as they were.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, PatchError } from './patch/index.js';
import { conform, type Schema } from './schema.js';
import { FieldManager } from './managedfields/index.js';
import { compileVersionSchema } from './apiextensions/compile.js';
import { OBJECT_META } from './kube-schema/source.js';
import { builtinDefinitions } from './kube-schema/definitions.js';
import { cloneJson, getOwn, hasOwn, setMember } from './json.js';

const j = (text: string): unknown => JSON.parse(text);
const BASELINE = Object.getOwnPropertyNames(Object.prototype).sort();
afterEach(() => {
  assert.deepEqual(Object.keys(Object.prototype), [], 'Object.prototype has enumerable members');
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), BASELINE);
  assert.deepEqual(Object.keys(Array.prototype), []);
});

describe('the primitives', () => {
  it('getOwn/hasOwn never see inherited members; setMember defines `__proto__` as a member', () => {
    const o = j('{"a":1}') as Record<string, unknown>;
    for (const k of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      assert.equal(getOwn(o, k), undefined, k);
      assert.equal(hasOwn(o, k), false, k);
    }
    setMember(o, '__proto__', { polluted: true });
    setMember(o, 'constructor', 'c');
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.deepEqual(Object.keys(o), ['a', '__proto__', 'constructor']);
    assert.equal(JSON.stringify(cloneJson(o)), '{"a":1,"__proto__":{"polluted":true},"constructor":"c"}');
  });
});

describe('patches', () => {
  const doc = j('{"metadata":{"name":"a"},"data":{"__proto__":"p","k":"v"}}');

  it('merge patch: `__proto__` and `constructor` members are merged as data, never into what an object inherits', () => {
    const out = applyMergePatch(doc, j('{"metadata":{"__proto__":{"retryAfterSeconds":7},"constructor":{"prototype":{"x":1}}},"data":{"__proto__":"q","toString":"t"}}'));
    assert.equal(JSON.stringify(out), '{"metadata":{"name":"a","__proto__":{"retryAfterSeconds":7},"constructor":{"prototype":{"x":1}}},"data":{"__proto__":"q","k":"v","toString":"t"}}');
    assert.equal(JSON.stringify(applyMergePatch(doc, j('{"data":{"__proto__":null}}'))), '{"metadata":{"name":"a"},"data":{"k":"v"}}');
  });

  it('JSON patch: paths through such keys follow own members only; add and replace define them', () => {
    const out = applyJsonPatch(doc, j('[{"op":"add","path":"/metadata/__proto__","value":{"deletionTimestamp":"x"}},{"op":"replace","path":"/data/__proto__","value":"r"},{"op":"add","path":"/data/constructor","value":"c"}]'));
    assert.equal(JSON.stringify(out), '{"metadata":{"name":"a","__proto__":{"deletionTimestamp":"x"}},"data":{"__proto__":"r","k":"v","constructor":"c"}}');
    for (const path of ['/metadata/__proto__/x', '/constructor/prototype/x', '/data/toString/x']) {
      assert.throws(() => applyJsonPatch(doc, j(`[{"op":"add","path":"${path}","value":1}]`)), (e: unknown) => e instanceof PatchError && e.code === 422, path);
    }
    assert.throws(() => applyJsonPatch(doc, j('[{"op":"remove","path":"/metadata/constructor"}]')), PatchError);
  });

  it('strategic merge patch: the same, and the schema lookup sees only declared properties', () => {
    const schema: Schema = { type: 'object', properties: { metadata: { $ref: OBJECT_META }, data: { type: 'object', additionalProperties: { type: 'string' } } } };
    const out = applyStrategicMergePatch(doc, j('{"metadata":{"__proto__":{"retryAfterSeconds":7},"$setElementOrder/constructor":[]},"data":{"__proto__":"s","$retainKeys":["__proto__"]}}'), schema, builtinDefinitions());
    assert.equal(JSON.stringify(out), '{"metadata":{"name":"a","__proto__":{"retryAfterSeconds":7}},"data":{"__proto__":"s"}}');
  });
});

describe('decoding and server-side apply', () => {
  const defs = builtinDefinitions();
  const schema: Schema = {
    type: 'object',
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META }, data: { type: 'object', additionalProperties: { type: 'string' } } },
  };

  it('conform drops such members of structs and keeps them in maps', () => {
    const out = conform(j('{"metadata":{"name":"a","__proto__":{"deletionTimestamp":"x"},"constructor":{"prototype":{}},"labels":{"constructor":"c"}},"__proto__":{"immutable":true},"data":{"__proto__":"p"}}'), schema, defs, 'ConfigMap');
    assert.equal(JSON.stringify(out), '{"metadata":{"name":"a","labels":{"constructor":"c"}},"data":{"__proto__":"p"}}');
    assert.equal((out as { metadata: { deletionTimestamp?: unknown } }).metadata.deletionTimestamp, undefined);
  });

  it('the field manager tracks, merges and removes such keys as fields', () => {
    const fm = new FieldManager({ schema, defs });
    const created = fm.update(undefined, j('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"__proto__":"p","constructor":"c"}}') as Record<string, unknown>, { manager: 'm', apiVersion: 'v1', time: '2020-01-01T00:00:00Z' });
    assert.equal(JSON.stringify((created['metadata'] as { managedFields: Array<{ fieldsV1: unknown }> }).managedFields[0]!.fieldsV1), '{"f:data":{".":{},"f:__proto__":{},"f:constructor":{}}}');
    const applied = fm.apply(created, j('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"__proto__":"q"}}') as Record<string, unknown>, { manager: 'a', apiVersion: 'v1', time: '2020-01-01T00:00:00Z', force: true });
    assert.equal(JSON.stringify(applied['data']), '{"__proto__":"q","constructor":"c"}');
  });
});

describe('CRD schemas', () => {
  const compiled = compileVersionSchema(
    j(`{"type":"object","properties":{"spec":{"type":"object","properties":{
      "__proto__":{"type":"string","maxLength":2},
      "constructor":{"type":"string","default":"d"},
      "toString":{"type":"string","format":"constructor"},
      "list":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["constructor"],
        "items":{"type":"object","properties":{"constructor":{"type":"string"}}}}}}}}`),
  );

  it('a property named __proto__ is validated; one named constructor is defaulted where the object lacks it', () => {
    assert.deepEqual(compiled.validate(j('{"spec":{}}') as Record<string, unknown>), []);
    assert.deepEqual(compiled.validate(j('{"spec":{"__proto__":"abc"}}') as Record<string, unknown>).map((e) => e.field), ['spec.__proto__']);
    const obj = j('{"spec":{"toString":"x"}}') as Record<string, unknown>;
    compiled.applyDefaults(obj);
    assert.equal(JSON.stringify(obj), '{"spec":{"toString":"x","constructor":"d"}}');
  });

  it('an unknown format named like a prototype member checks nothing; list-map keys are own members', () => {
    const errs = compiled.validate(j('{"spec":{"list":[{"constructor":"a"},{"constructor":"a"},{},{}]}}') as Record<string, unknown>);
    assert.deepEqual(errs.map((e) => e.field), ['spec.list[1]', 'spec.list[3]']);
  });

  it('pruning keeps declared properties of these names and drops the rest', () => {
    const obj = j('{"spec":{"__proto__":"a","valueOf":"v","constructor":"c"}}') as Record<string, unknown>;
    compiled.prune(obj);
    assert.equal(JSON.stringify(obj), '{"spec":{"__proto__":"a","constructor":"c"}}');
  });
});
