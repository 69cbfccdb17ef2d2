import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseYaml } from './yaml.js';

describe('YAML numbers as kube reads them (go-yaml v2, then JSON)', () => {
  it('integers: int64 exactly (BigInt above 2^53), beyond int64 a float64', () => {
    assert.deepEqual(parseYaml('a: 9007199254740993\nb: -9223372036854775808\nc: 9223372036854775808\nd: 12\ne: +7\n'), {
      a: 9007199254740993n,
      b: -9223372036854775808n,
      c: 9223372036854775808,
      d: 12,
      e: 7,
    });
  });
  it('a float beyond float64 stays the string it is; finite floats are numbers', () => {
    assert.deepEqual(parseYaml('a: 1e999\nb: -1.5e400\nc: 1.5e300\nd: 2.5\n'), { a: '1e999', b: '-1.5e400', c: 1.5e300, d: 2.5 });
  });
  it('.inf and .nan are refused as JSON cannot hold them', () => {
    assert.throws(() => parseYaml('a: .inf'), /json: unsupported value: \+Inf/);
    assert.throws(() => parseYaml('a: [-.Inf]'), /json: unsupported value: -Inf/);
    assert.throws(() => parseYaml('a: .nan'), /json: unsupported value: NaN/);
  });
});
