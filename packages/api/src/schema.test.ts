import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DecodeError, conform, s, type Schema } from './schema.js';

const defs = new Map<string, Schema>([
  ['Port', s.obj({ name: s.str(), containerPort: s.int() })],
  ['Container', s.obj({ name: s.str(), ports: s.arr(s.ref('Port')), args: s.arr(s.str()) })],
]);
const root = s.obj({
  spec: s.obj({ containers: s.arr(s.ref('Container')), matrix: s.arr(s.arr(s.ref('Port'))), labels: s.map(s.str()) }),
});

describe('conform', () => {
  it('names the Go field path of a wrong type, without list indexes', () => {
    assert.throws(
      () => conform({ spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 'x' }] }] } }, root, defs, 'Pod'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal string into Go struct field Pod.spec.containers.ports.containerPort of type int32',
    );
    assert.throws(
      () => conform({ spec: { labels: { a: 1 } } }, root, defs, 'Pod'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal number into Go struct field Pod.spec.labels.a of type string',
    );
    assert.throws(
      () => conform({ spec: { containers: {} } }, root, defs, 'Pod'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal object into Go struct field Pod.spec.containers of type []Container',
    );
  });

  it('collects unknown fields by their JSON path, list indexes included', () => {
    const unknown: string[] = [];
    const out = conform(
      { spec: { containers: [{ name: 'a', foo: 1 }, { name: 'b', ports: [{ bar: 2, containerPort: 80 }] }], matrix: [[{}, { baz: 3 }]], extra: true }, top: 1 },
      root,
      defs,
      'Pod',
      1,
      unknown,
    );
    assert.deepEqual(unknown, ['spec.containers[0].foo', 'spec.containers[1].ports[0].bar', 'spec.matrix[0][1].baz', 'spec.extra', 'top']);
    assert.deepEqual(out, { spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 80 }] }], matrix: [[{}, {}]] } });
  });

  it('prefixes unknown paths with the path of the value it starts at', () => {
    const unknown: string[] = [];
    conform({ containers: [{ zzz: 1 }] }, s.obj({ containers: s.arr(s.ref('Container')) }), defs, 'Pod.spec', 2, unknown, 'spec');
    conform([{ qqq: 1 }], s.arr(s.ref('Container')), defs, 'Pod.spec.containers', 3, unknown, 'spec.containers');
    assert.deepEqual(unknown, ['spec.containers[0].zzz', 'spec.containers[0].qqq']);
  });

  it('keeps keys named like Object.prototype members as data', () => {
    const body = JSON.parse('{"spec":{"labels":{"__proto__":"x","constructor":"y"}}}') as unknown;
    const out = conform(body, root, defs, 'Pod') as { spec: { labels: Record<string, string> } };
    assert.deepEqual(Object.keys(out.spec.labels), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(out.spec.labels), Object.prototype);
  });
});
