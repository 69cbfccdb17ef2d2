import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseYaml } from './yaml.js';

describe('parseYaml: duplicate keys as kube decodes them (sigs.k8s.io/yaml over yaml.v2)', () => {
  it('a duplicate key keeps its last value, in block and flow maps, at any depth', () => {
    assert.deepEqual(parseYaml('a: 1\nb: 2\na: 3\n'), { a: 3, b: 2 });
    assert.deepEqual(parseYaml('spec: {x: 1, y: 2, x: [3]}\n'), { spec: { x: [3], y: 2 } });
    assert.deepEqual(parseYaml('l:\n- n: 1\n  n: 2\n'), { l: [{ n: 2 }] });
  });

  it("reports each duplicate with the line of its value, in yaml.v2's strict wording", () => {
    const doc = ['kind: Thing', 'metadata:', '  name: a', '  name: b', 'spec:', '  enabled: true', '  x: 1', '  enabled: false', '  list:', '  - k: 1', '    k: 2', '  nested:', '    v: 1', '  nested:', '    v: 2', ''].join('\n');
    const duplicateKeys: string[] = [];
    const value = parseYaml(doc, { duplicateKeys });
    assert.deepEqual(duplicateKeys, [
      'line 4: key "name" already set in map',
      'line 8: key "enabled" already set in map',
      'line 11: key "k" already set in map',
      'line 15: key "nested" already set in map',
    ]);
    assert.deepEqual(value, { kind: 'Thing', metadata: { name: 'b' }, spec: { enabled: false, x: 1, list: [{ k: 2 }], nested: { v: 2 } } });
  });

  it('keys are typed, as in yaml.v2: 1 and "1" are different keys; true is printed bare', () => {
    const duplicateKeys: string[] = [];
    parseYaml('1: a\n"1": b\ntrue: c\ntrue: d\n', { duplicateKeys });
    assert.deepEqual(duplicateKeys, ['line 4: key true already set in map']);
  });

  // ~1 s here; the library's own check took ~90 s (quadratic). An explicit bound, as node:test's
  // timeout cannot stop synchronous code.
  it('a flow map of 100,000 keys (1.2 MB) parses in linear time; its one duplicate is found', () => {
    const n = 100_000;
    const keys = Array.from({ length: n }, (_, i) => `k${i}: ${i}`);
    const duplicateKeys: string[] = [];
    const t0 = performance.now();
    const value = parseYaml(`spec: {${keys.join(', ')}, k7: last}\n`, { duplicateKeys }) as { spec: Record<string, unknown> };
    const took = performance.now() - t0;
    assert.ok(took < 10_000, `took ${Math.round(took)} ms: not linear`);
    assert.equal(Object.keys(value.spec).length, n);
    assert.equal(value.spec['k7'], 'last');
    assert.equal(value.spec[`k${n - 1}`], n - 1);
    assert.deepEqual(duplicateKeys, ['line 1: key "k7" already set in map']);
  });
});
