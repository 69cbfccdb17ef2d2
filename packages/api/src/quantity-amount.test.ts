// Vectors from kube's amount_test.go, scale_int_test.go and math_test.go (apimachinery 1.24).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  INT64_MAX,
  INT64_MIN,
  type Amount,
  addAmounts,
  amountSign,
  canonicalDecimal,
  cmpAmounts,
  decAmount,
  goPow10,
  intAmount,
  scaledValue,
} from './quantity-amount.js';

const i = (value: bigint | number, scale = 0): Amount => intAmount(BigInt(value), scale);
const d = (value: bigint | number, scale = 0): Amount => decAmount(BigInt(value), scale);

describe('int64 amounts', () => {
  it('add as kube does, falling back to decimals on overflow (TestInt64AmountAdd)', () => {
    const cases: Array<[Amount, Amount, Amount, boolean]> = [
      [i(100, 1), i(10, 2), i(200, 1), true],
      [i(100, 1), i(1, 2), i(110, 1), true],
      [i(100, 1), i(1, 100), i(1, 100), false],
      [i(-5, 2), i(50, 1), i(0, 1), true],
      [i(-5, 2), i(5, 2), i(0, 2), true],
      [i(INT64_MAX, -1), i(1, -1), i(0, -1), false],
      [i(INT64_MAX, -1), i(0, -1), i(INT64_MAX, -1), true],
      [i(INT64_MAX / 10n, 1), i(10, 0), i(INT64_MAX, -1), false],
    ];
    for (const [a, b, c, fits] of cases) {
      for (const [x, y] of [
        [a, b],
        [b, a],
      ] as const) {
        const r = addAmounts(x, y);
        assert.equal(r.big, !fits, `${x.unscaled}e${x.scale} + ${y.unscaled}e${y.scale}`);
        if (fits) assert.deepEqual(r, c);
        const exact = x.unscaled * 10n ** BigInt(x.scale - Math.min(x.scale, y.scale)) + y.unscaled * 10n ** BigInt(y.scale - Math.min(x.scale, y.scale));
        assert.equal(cmpAmounts(r, d(exact, Math.min(x.scale, y.scale))), 0);
      }
    }
  });

  it('write canonical digits (TestInt64AsCanonicalString)', () => {
    const cases: Array<[Amount, string, number]> = [
      [i(100, 0), '100', 0],
      [i(100, 1), '1', 3],
      [i(100, -1), '10', 0],
      [i(10800, -10), '1080', -9],
    ];
    for (const [a, mantissa, exponent] of cases) assert.deepEqual(canonicalDecimal(a), { mantissa, exponent });
  });

  it('have a sign (TestAmountSign)', () => {
    const cases: Array<[Amount, number]> = [
      [i(-50, 1), -1],
      [i(0, 1), 0],
      [i(300, 1), 1],
      [i(-50, -8), -1],
      [i(50, -8), 1],
      [i(0, -8), 0],
      [i(-50), -1],
      [i(50), 1],
      [i(0), 0],
    ];
    for (const [a, s] of cases) assert.equal(amountSign(a), s);
  });

  it('scale to an int64 rounding up, 0 on overflow (TestInt64AmountAsScaledInt64)', () => {
    const cases: Array<[Amount, number, bigint]> = [
      [i(100, 0), 5, 1n],
      [i(100, 1), 1, 100n],
      [i(100, 5), 2, 100000n],
      [i(876, 30), 4, 0n],
      [i(93, -1), 0, 10n],
      [i(100, -1), 0, 10n],
      [i(-1932, 2), 4, -20n],
      [i(-1900, 2), 4, -19n],
    ];
    for (const [a, scale, want] of cases) assert.equal(scaledValue(a, scale), want, `${a.unscaled}e${a.scale} @${scale}`);
  });
});

describe('decimal amounts', () => {
  // kube's scaledValue(unscaled, scale, newScale) takes inf.Dec scales (10^-scale): negate both.
  it('scale to an int64 as kube does (TestScaledValueInternal)', () => {
    const cases: Array<[bigint, number, number, bigint]> = [
      [1000n, 0, 0, 1000n],
      [1000n, 0, -3, 1n],
      [1000n, 3, 0, 1n],
      [0n, 3, 0, 0n],
      [999n, 3, 0, 1n],
      [500n, 3, 0, 1n],
      [499n, 3, 0, 1n],
      [1n, 3, 0, 1n],
      [INT64_MAX - 1n, 1, 0, (INT64_MAX - 1n) / 10n + 1n],
      [10n ** 100n, 100, 0, 1n],
      [0n, 0, 3, 0n],
      [1n, 0, 3, 1000n],
      [1n, -3, 0, 1000n],
      [1000n, -3, 2, 100000000n],
      [INT64_MAX / 1000n, 0, 3, (INT64_MAX / 1000n) * 1000n],
    ];
    for (const [u, scale, newScale, want] of cases) assert.equal(scaledValue(d(u, -scale), -newScale), want, `${u} ${scale} ${newScale}`);
  });

  it('keep kube’s int64 results out of range and for negative fractions', () => {
    // int64 form: a value past int64 reads as 0; decimal form: Go's wrapping arithmetic.
    assert.equal(scaledValue(i(1, 30), 0), 0n);
    assert.equal(scaledValue(d(3, 30), 0), INT64_MIN);
    assert.equal(scaledValue(d(2, 30), 0), 0n);
    // -9.01: the int64 form rounds away from zero, the decimal form truncates then adds one.
    assert.equal(scaledValue(i(-901, -2), 0), -10n);
    assert.equal(scaledValue(d(-901, -2), 0), -8n);
    assert.equal(scaledValue(d(-1, -9), 0), 1n);
  });

  it('compare exactly, also far apart', () => {
    assert.equal(cmpAmounts(d(1, 2_000_000_000), d(1, 0)), 1);
    assert.equal(cmpAmounts(d(-1, 2_000_000_000), d(1, 0)), -1);
    assert.equal(cmpAmounts(d(-1, 2_000_000_000), d(-1, 1_999_999_999)), -1);
    assert.equal(cmpAmounts(d(10, 5), d(1, 6)), 0);
    assert.equal(cmpAmounts(d(11, 5), d(1, 6)), 1);
    assert.equal(cmpAmounts(i(0, 5), d(0, -6)), 0);
  });
});

describe('goPow10', () => {
  it('is Go’s math.Pow10', () => {
    assert.equal(goPow10(0), 1);
    assert.equal(goPow10(-1), 0.1);
    assert.equal(goPow10(308), 1e308);
    assert.equal(goPow10(309), Infinity);
    assert.equal(goPow10(-323), 1e-323);
    assert.equal(goPow10(-324), 0);
  });
});
