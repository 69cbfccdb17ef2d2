import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileVersionSchema } from './compile.js';
import { fieldErrorString } from '../field-errors.js';
import { parseJson } from '../number-codec.js';

/** The causes for `spec` (JSON text: numbers as kube reads them) under a schema of spec's properties. */
function errors(properties: string, spec: string): string[] {
  const schema = parseJson(`{"type":"object","properties":{"spec":{"type":"object","properties":${properties}}}}`);
  return compileVersionSchema(schema).validate({ spec: parseJson(spec) as Record<string, unknown> }).map(fieldErrorString);
}

describe('custom resource validation of int64 values above 2^53 (kube-openapi rules, exactly)', () => {
  const cases: Array<[string, string, string, string[]]> = [
    ['maximum', '{"x":{"type":"integer","maximum":9007199254740992}}', '{"x":9007199254740993}', ['spec.x: Invalid value: 9007199254740993: spec.x in body should be less than or equal to 9007199254740992']],
    // A CRD's bounds are float64s: 2^53 + 1 there is 2^53.
    ['exclusiveMinimum', '{"x":{"type":"integer","minimum":9007199254740993,"exclusiveMinimum":true}}', '{"x":9007199254740992}', ['spec.x: Invalid value: 9007199254740992: spec.x in body should be greater than 9007199254740992']],
    ['exclusiveMinimum takes 2^53 + 1', '{"x":{"type":"integer","minimum":9007199254740993,"exclusiveMinimum":true}}', '{"x":9007199254740993}', []],
    // MaximumInt(value, int64(10.5)): 10 is not below 10.
    ['an int64 bound is truncated', '{"x":{"type":"integer","maximum":10.5,"exclusiveMaximum":true}}', '{"x":10,"y":9007199254740993}', ['spec.x: Invalid value: 10: spec.x in body should be less than 10']],
    ['multipleOf', '{"x":{"type":"integer","multipleOf":7}}', '{"x":9007199254740994}', ['spec.x: Invalid value: 9007199254740994: spec.x in body should be a multiple of 7']],
    ['multipleOf takes a multiple (2^53 + 3 = 7 × 1286742750677285)', '{"x":{"type":"integer","multipleOf":7}}', '{"x":9007199254740995}', []],
    ['type string', '{"x":{"type":"string"}}', '{"x":9007199254740993}', ['spec.x: Invalid value: "integer": spec.x in body must be of type string: "integer"']],
    ['nullable', '{"x":{"type":"integer","nullable":true},"y":{"type":"integer"}}', '{"x":null,"y":-9223372036854775808}', []],
    ['int-or-string', '{"x":{"x-kubernetes-int-or-string":true}}', '{"x":9223372036854775807}', []],
    ['an object enum with an int64', '{"x":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"enum":[{"a":9007199254740993}]}}', '{"x":{"a":9007199254740993}}', []],
    ['an object enum, another value', '{"x":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"enum":[{"a":9007199254740993}]}}', '{"x":{"a":9007199254740995}}', ['spec.x: Unsupported value: map[string]interface {}{"a":9007199254740995}: supported values: "{\\"a\\":9007199254740993}"']],
    ['inside allOf', '{"x":{"type":"integer","allOf":[{"maximum":9007199254740992}]}}', '{"x":9007199254740993}', ['spec.x: Invalid value: 9007199254740993: spec.x in body should be less than or equal to 9007199254740992']],
    ['inside anyOf', '{"x":{"type":"integer","anyOf":[{"maximum":5},{"minimum":9007199254740994}]}}', '{"x":9007199254740993}', ['spec.x: Invalid value: 9007199254740993: spec.x in body should be less than or equal to 5', '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)']],
    ['items', '{"x":{"type":"array","items":{"type":"integer","minimum":0}}}', '{"x":[1,-9007199254740993]}', ['spec.x[1]: Invalid value: -9007199254740993: spec.x[1] in body should be greater than or equal to 0']],
    ['a float64 integer above 2^53 is no integer', '{"x":{"type":"integer"}}', '{"x":1e16}', ['spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"']],
  ];
  for (const [what, props, spec, want] of cases) {
    it(what, () => assert.deepEqual(errors(props, spec), want));
  }
});
