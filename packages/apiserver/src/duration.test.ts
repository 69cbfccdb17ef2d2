import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGoDuration, parseGoDurationNanos } from './duration.js';

test("Go's time.ParseDuration: values", () => {
  const cases: Array<[string, bigint]> = [
    ['0', 0n],
    ['-0', 0n],
    ['5s', 5_000_000_000n],
    ['+5s', 5_000_000_000n],
    ['-5s', -5_000_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['1h30m', 5_400_000_000_000n],
    ['.5s', 500_000_000n],
    ['5.s', 5_000_000_000n],
    ['1us', 1_000n],
    ['1µs', 1_000n],
    ['1μs', 1_000n],
    ['300ms', 300_000_000n],
    ['2h45m0.5s', 9_900_500_000_000n],
    ['1m0s', 60_000_000_000n],
    ['9223372036854775807ns', 9_223_372_036_854_775_807n],
    ['-9223372036854775808ns', -9_223_372_036_854_775_808n],
  ];
  for (const [text, ns] of cases) assert.equal(parseGoDurationNanos(text), ns, text);
  assert.equal(parseGoDuration('1m0s'), 60_000);
  assert.equal(parseGoDuration('250us'), 0.25);
});

test("Go's time.ParseDuration: Go's errors", () => {
  const cases: Array<[string, string]> = [
    ['', 'time: invalid duration ""'],
    ['abc', 'time: invalid duration "abc"'],
    ['-', 'time: invalid duration "-"'],
    ['.s', 'time: invalid duration ".s"'],
    ['5', 'time: missing unit in duration "5"'],
    ['1.5.5s', 'time: missing unit in duration "1.5.5s"'],
    ['5d', 'time: unknown unit "d" in duration "5d"'],
    ['5é', 'time: unknown unit "\\xc3\\xa9" in duration "5\\xc3\\xa9"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
  ];
  for (const [text, message] of cases) assert.throws(() => parseGoDurationNanos(text), { message }, text);
});
