import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type FieldError, fieldErrorBody } from '../../field-errors.js';
import { builtinDefinitions } from '../../kube-schema/definitions.js';
import { DecodeError, type Schema, conform } from '../../schema.js';
import type { StoredObject } from '../../types.js';
import { configmaps } from './configmaps.js';

const defs = builtinDefinitions();
const KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const MiB = 1024 * 1024;
const b64 = (v: string | Buffer): string => Buffer.from(v).toString('base64');

/** A body as the handlers see it: decoded through the schema, then given metadata. */
function decode(body: Record<string, unknown>): StoredObject {
  const out = conform(body, configmaps.schema, defs, 'ConfigMap') as Record<string, unknown>;
  return { ...out, metadata: { name: 'x', namespace: 'ns' } } as StoredObject;
}

/** [type, field, cause message] as the 422's causes list them. */
const causes = (errs: FieldError[]): Array<[string, string, string]> => errs.map((e) => [e.type, e.field, fieldErrorBody(e)]);

describe('configmaps: definition', () => {
  it("has kube's discovery facts and table", () => {
    assert.equal(configmaps.kind, 'ConfigMap');
    assert.deepEqual(configmaps.shortNames, ['cm']);
    assert.equal(configmaps.namespaced, true);
    assert.deepEqual(configmaps.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal(configmaps.nameValidator('a.b', false).length, 0, 'DNS subdomain');
    assert.equal(configmaps.nameValidator('A', false).length, 1);
    assert.deepEqual(configmaps.table!.columns.map((c) => c.name), ['Name', 'Data', 'Age']);
    const now = Date.parse('2026-01-01T00:10:00Z');
    const cells = configmaps.table!.cells({ metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z' }, data: { a: '1', b: '2' }, binaryData: { c: b64('x') } }, now);
    assert.deepEqual(cells, ['c', 3, '10m']);
  });
});

describe('configmaps: validation (each rule and its 422 cause)', () => {
  const table: Array<{ name: string; body: Record<string, unknown>; want: Array<[string, string, string]> }> = [
    { name: 'valid keys in both bags', body: { data: { 'key.name': 'v', KEY_NAME: '', 'key-name': 'x' }, binaryData: { bin: b64('\u0000\u00ff') } }, want: [] },
    { name: 'a key with a slash', body: { data: { 'a/b': 'v' } }, want: [['FieldValueInvalid', 'data[a/b]', `Invalid value: "a/b": ${KEY_MSG}`]] },
    { name: 'a key with a space in binaryData', body: { binaryData: { 'a b': b64('v') } }, want: [['FieldValueInvalid', 'binaryData[a b]', `Invalid value: "a b": ${KEY_MSG}`]] },
    { name: "the key '.'", body: { data: { '.': 'v' } }, want: [['FieldValueInvalid', 'data[.]', `Invalid value: ".": must not be '.'`]] },
    { name: "the key '..'", body: { data: { '..': 'v' } }, want: [['FieldValueInvalid', 'data[..]', `Invalid value: "..": must not be '..'`]] },
    { name: "a key starting with '..'", body: { data: { '..a': 'v' } }, want: [['FieldValueInvalid', 'data[..a]', `Invalid value: "..a": must not start with '..'`]] },
    {
      name: 'a key of 254 characters',
      body: { data: { ['k'.repeat(254)]: 'v' } },
      want: [['FieldValueInvalid', `data[${'k'.repeat(254)}]`, `Invalid value: "${'k'.repeat(254)}": must be no more than 253 characters`]],
    },
    {
      name: 'a key in both data and binaryData',
      body: { data: { same: 'v' }, binaryData: { same: b64('v') } },
      want: [['FieldValueInvalid', 'data[same]', 'Invalid value: "same": duplicate of key present in binaryData']],
    },
    {
      name: 'more than 1 MiB of values in total (data bytes + decoded binaryData bytes)',
      body: { data: { a: 'x'.repeat(MiB / 2) }, binaryData: { b: b64(Buffer.alloc(MiB / 2 + 1)) } },
      want: [['FieldValueTooLong', '[]', 'Too long: must have at most 1048576 bytes']],
    },
  ];
  for (const c of table) {
    it(c.name, () => assert.deepEqual(causes(configmaps.strategy.validate(decode(c.body))), c.want));
  }

  it('exactly 1 MiB is allowed; UTF-8 values count in bytes, not characters', () => {
    assert.deepEqual(configmaps.strategy.validate(decode({ data: { a: 'x'.repeat(MiB) } })), []);
    assert.deepEqual(causes(configmaps.strategy.validate(decode({ data: { a: 'é'.repeat(MiB / 2 + 1) } }))), [
      ['FieldValueTooLong', '[]', 'Too long: must have at most 1048576 bytes'],
    ]);
  });

  it('binaryData is strict base64 as Go decodes it; a bad value is a decode error (400), not stored', () => {
    assert.throws(() => decode({ binaryData: { a: 'YQ' } }), (e: unknown) => e instanceof DecodeError && e.message === 'illegal base64 data at input byte 0');
    assert.throws(() => decode({ binaryData: { a: 'a!==' } }), (e: unknown) => e instanceof DecodeError && e.message === 'illegal base64 data at input byte 1');
    // newlines are skipped, and the value is stored re-encoded
    assert.deepEqual(decode({ binaryData: { a: 'YW\nJj' } })['binaryData'], { a: 'YWJj' });
  });

  it('data values must be strings', () => {
    assert.throws(
      () => decode({ data: { a: 1 } }),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal number into Go struct field ConfigMap.data.a of type string',
    );
  });
});

describe('configmaps: immutable', () => {
  const old = decode({ immutable: true, data: { a: '1' }, binaryData: { b: b64('2') } });
  const upd = (body: Record<string, unknown>): Array<[string, string, string]> => causes(configmaps.strategy.validateUpdate!(decode(body), old));
  const FORBIDDEN = 'Forbidden: field is immutable when `immutable` is set';

  it('metadata may change while data stays', () => assert.deepEqual(upd({ immutable: true, data: { a: '1' }, binaryData: { b: b64('2') } }), []));
  it('immutable cannot be unset or set to false', () => {
    assert.deepEqual(upd({ data: { a: '1' }, binaryData: { b: b64('2') } }), [['FieldValueForbidden', 'immutable', FORBIDDEN]]);
    assert.deepEqual(upd({ immutable: false, data: { a: '1' }, binaryData: { b: b64('2') } }), [['FieldValueForbidden', 'immutable', FORBIDDEN]]);
  });
  it('data cannot change (value, added key, removed key)', () => {
    assert.deepEqual(upd({ immutable: true, data: { a: '2' }, binaryData: { b: b64('2') } }), [['FieldValueForbidden', 'data', FORBIDDEN]]);
    assert.deepEqual(upd({ immutable: true, data: { a: '1', c: '' }, binaryData: { b: b64('2') } }), [['FieldValueForbidden', 'data', FORBIDDEN]]);
    assert.deepEqual(upd({ immutable: true, binaryData: { b: b64('2') } }), [['FieldValueForbidden', 'data', FORBIDDEN]]);
  });
  it('binaryData cannot change; all three errors together', () => {
    assert.deepEqual(upd({ immutable: true, data: { a: '1' }, binaryData: { b: b64('3') } }), [['FieldValueForbidden', 'binaryData', FORBIDDEN]]);
    assert.deepEqual(upd({}), [
      ['FieldValueForbidden', 'immutable', FORBIDDEN],
      ['FieldValueForbidden', 'data', FORBIDDEN],
      ['FieldValueForbidden', 'binaryData', FORBIDDEN],
    ]);
  });
  it('a mutable configmap may become immutable, and change data on the way', () => {
    const mutable = decode({ data: { a: '1' } });
    assert.deepEqual(configmaps.strategy.validateUpdate!(decode({ immutable: true, data: { a: '2' } }), mutable), []);
    assert.deepEqual(configmaps.strategy.validateUpdate!(decode({ immutable: false, data: { a: '2' } }), decode({ immutable: false })), []);
  });
});
