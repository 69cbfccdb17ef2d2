import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isNestingTooDeep } from '@plinth/api';
import { OFF_LOOP_MIN_BYTES, parseYamlOffLoop } from './yaml-off-loop.js';
import { YamlError, parseYaml } from './yaml.js';

describe('parseYamlOffLoop: large YAML bodies parsed on a worker thread', () => {
  const big = (keys: number, extra = ''): string => `spec: {${Array.from({ length: keys }, (_, i) => `k${i}: ${i}`).join(', ')}${extra}}\n`;

  it('the same value and duplicate keys as parseYaml, while the event loop stays free', async () => {
    const text = big(200_000, ', k3: last');
    assert.ok(text.length > OFF_LOOP_MIN_BYTES);
    // Timers keep firing while the worker parses (~2 s of CPU): the loop is never held for long.
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 10);
    const duplicateKeys: string[] = [];
    let value: unknown;
    try {
      value = await parseYamlOffLoop(text, { duplicateKeys });
    } finally {
      clearInterval(ticker);
    }
    // Receiving the value costs the loop ~10× less than parsing it would (a generous bound).
    assert.ok(longestGap < 1500, `the event loop was held ${Math.round(longestGap)} ms`);
    const expectedDuplicates: string[] = [];
    assert.deepEqual(value, parseYaml(text, { duplicateKeys: expectedDuplicates }));
    assert.deepEqual(duplicateKeys, expectedDuplicates);
    assert.deepEqual(duplicateKeys, ['line 1: key "k3" already set in map']);
  });

  it('the same errors: malformed YAML, too deep, more than one document', async () => {
    const pad = `# ${'x'.repeat(OFF_LOOP_MIN_BYTES)}\n`;
    await assert.rejects(parseYamlOffLoop(`${pad}a: [1, 2\n`), (e: unknown) => e instanceof YamlError);
    await assert.rejects(parseYamlOffLoop(`${pad}a: ${'['.repeat(200)}${']'.repeat(200)}\n`), (e: unknown) => isNestingTooDeep(e));
    await assert.rejects(parseYamlOffLoop(`${pad}a: 1\n---\nb: 2\n`), /more than one YAML document/);
  });

  it('small bodies are parsed in place', async () => {
    assert.deepEqual(await parseYamlOffLoop('a: 1\na: 2\n'), { a: 2 });
  });
});
