import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorBody } from '../../field-errors.js';
import { builtinDefinitions } from '../../kube-schema/definitions.js';
import { DecodeError, type Schema, conform } from '../../schema.js';
import type { StoredObject } from '../../types.js';
import { leases } from './leases.js';

const defs = builtinDefinitions();

function decode(spec: Record<string, unknown>): StoredObject {
  const out = conform({ spec }, leases.schema, defs, 'Lease') as Record<string, unknown>;
  return { ...out, metadata: { name: 'l', namespace: 'ns' } } as StoredObject;
}

const decodeError = (spec: Record<string, unknown>): string => {
  try {
    decode(spec);
  } catch (e) {
    if (e instanceof DecodeError) return e.message;
    throw e;
  }
  return '';
};

describe('leases: definition', () => {
  it("has kube's discovery facts and table", () => {
    assert.equal(leases.group, 'coordination.k8s.io');
    assert.equal(leases.kind, 'Lease');
    assert.deepEqual(leases.shortNames, []);
    assert.equal(leases.namespaced, true);
    assert.equal(leases.allowCreateOnUpdate, true, 'kube lets a PUT create a Lease');
    assert.deepEqual(leases.table!.columns.map((c) => c.name), ['Name', 'Holder', 'Age']);
    const now = Date.parse('2026-01-01T00:00:30Z');
    const meta = { name: 'l', creationTimestamp: '2026-01-01T00:00:00Z' };
    assert.deepEqual(leases.table!.cells({ metadata: meta, spec: { holderIdentity: 'me' } }, now), ['l', 'me', '30s']);
    assert.deepEqual(leases.table!.cells({ metadata: meta }, now), ['l', '', '30s']);
  });
});

describe('leases: validation', () => {
  const table: Array<[string, Record<string, unknown>, Array<[string, string, string]>]> = [
    ['a full spec', { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0, acquireTime: '2026-01-01T00:00:00.000000Z', renewTime: '2026-01-01T00:00:01.500000Z' }, []],
    ['an empty spec', {}, []],
    ['leaseDurationSeconds 0', { leaseDurationSeconds: 0 }, [['FieldValueInvalid', 'spec.leaseDurationSeconds', 'Invalid value: 0: must be greater than 0']]],
    ['leaseDurationSeconds -1', { leaseDurationSeconds: -1 }, [['FieldValueInvalid', 'spec.leaseDurationSeconds', 'Invalid value: -1: must be greater than 0']]],
    ['leaseTransitions -1', { leaseTransitions: -1 }, [['FieldValueInvalid', 'spec.leaseTransitions', 'Invalid value: -1: must to greater or equal than 0']]],
  ];
  for (const [name, spec, want] of table) {
    it(name, () => assert.deepEqual(leases.strategy.validate(decode(spec)).map((e) => [e.type, e.field, fieldErrorBody(e)]), want));
  }
  it('runs again on update', () => {
    const errs = leases.strategy.validate(decode({ leaseDurationSeconds: 0, leaseTransitions: -2 }));
    assert.deepEqual(errs.map((e) => e.field), ['spec.leaseDurationSeconds', 'spec.leaseTransitions']);
  });
  it('keeps an empty holderIdentity (a *string in Go), drops nothing else', () => {
    assert.deepEqual(decode({ holderIdentity: '' })['spec'], { holderIdentity: '' });
  });
});

describe('leases: MicroTime as apimachinery parses it (RFC3339Micro)', () => {
  it('is stored in UTC with six digits', () => {
    assert.deepEqual(decode({ acquireTime: '2026-03-01T01:30:00.123456+02:00', renewTime: '2026-01-01T00:00:00.000001Z' })['spec'], {
      acquireTime: '2026-02-28T23:30:00.123456Z',
      renewTime: '2026-01-01T00:00:00.000001Z',
    });
  });
  const LAYOUT = '"2006-01-02T15:04:05.000000Z07:00"';
  const cases: Array<[string, string]> = [
    ['2026-01-01T00:00:00Z', `parsing time "2026-01-01T00:00:00Z" as ${LAYOUT}: cannot parse "Z" as ".000000"`],
    ['2026-01-01T00:00:00.123Z', `parsing time "2026-01-01T00:00:00.123Z" as ${LAYOUT}: cannot parse ".123Z" as ".000000"`],
    ['2026-01-01T00:00:00.123456789Z', `parsing time "2026-01-01T00:00:00.123456789Z" as ${LAYOUT}: cannot parse "789Z" as "Z07:00"`],
    ['yesterday', `parsing time "yesterday" as ${LAYOUT}: cannot parse "yesterday" as "2006"`],
    ['2026-13-01T00:00:00.000000Z', 'parsing time "2026-13-01T00:00:00.000000Z": month out of range'],
    ['2026-02-30T00:00:00.000000Z', 'parsing time "2026-02-30T00:00:00.000000Z": day out of range'],
    ['2026-01-01T24:00:00.000000Z', 'parsing time "2026-01-01T24:00:00.000000Z": hour out of range'],
  ];
  for (const [value, message] of cases) {
    it(`rejects ${value}`, () => assert.equal(decodeError({ renewTime: value }), message));
  }
  it('a number is a type error', () => {
    assert.equal(decodeError({ renewTime: 5 }), 'json: cannot unmarshal number into Go struct field Lease.spec.renewTime of type string');
  });
});
