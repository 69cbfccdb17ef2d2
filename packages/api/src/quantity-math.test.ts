// kube's own vectors (apimachinery 1.24 pkg/api/resource/quantity_test.go) for comparison, arithmetic and int64 read-outs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { INT64_MAX, INT64_MIN, decAmount, intAmount } from './quantity-amount.js';
import {
  Quantity,
  type QuantityFormat,
  Scale,
  createMilliQuantity,
  createQuantity,
  createScaledQuantity,
  parseQuantity,
} from './quantity.js';

/** kube's decQuantity(i, exponent, format): i × 10^exponent held as an inf.Dec. */
const dec = (value: bigint | number, exponent: number, format: QuantityFormat = 'DecimalSI'): Quantity => new Quantity(decAmount(BigInt(value), exponent), format);
/** kube's intQuantity(i, exponent, format): an int64Amount. */
const int = (value: bigint | number, exponent: number, format: QuantityFormat = 'DecimalSI'): Quantity => new Quantity(intAmount(BigInt(value), exponent), format);

describe('comparison and arithmetic', () => {
  it('compares (TestQuantityCmp)', () => {
    const table: Array<[string, string, number]> = [
      ['0', '0', 0],
      ['100m', '50m', 1],
      ['50m', '100m', -1],
      ['10000T', '100Gi', 1],
      ['1', '1000m', 0],
      ['1Gi', '1073741824', 0],
    ];
    for (const [x, y, want] of table) {
      assert.equal(parseQuantity(x).cmp(parseQuantity(y)), want, `${x} vs ${y}`);
      assert.equal(parseQuantity(x).equal(parseQuantity(y)), want === 0);
    }
    assert.equal(dec(10, 0).cmp(dec(0, 0)), 1);
    assert.equal(dec(-10, 0).cmp(dec(0, 0)), -1);
  });

  it('compares int64 and decimal forms alike (TestQuantityCmpInt64AndDec)', () => {
    const table: Array<[bigint, number, bigint, number, number]> = [
      [901n, -2, 901n, -2, 0],
      [90n, -1, 901n, -2, -1],
      [901n, -2, 900n, -2, 1],
      [0n, 0, 0n, 0, 0],
      [0n, 1, 0n, -1, 0],
      [0n, -1, 0n, 1, 0],
      [800n, -3, 1n, 0, -1],
      [800n, -3, 79n, -2, 1],
      [INT64_MAX, 0, 1n, -1, 1],
      [INT64_MAX, 1, 1n, 0, 1],
      [INT64_MAX, 1, 1n, 1, 1],
      [INT64_MAX, 1, 0n, 1, 1],
      [INT64_MAX, -16, 1n, 3, -1],
      [INT64_MIN, 0, 0n, 0, -1],
      [INT64_MIN, -18, -1n, 0, -1],
      [INT64_MIN, -19, -1n, 0, 1],
      [10n ** 18n, -17, 1n, 1, 0],
      [10n ** 18n, -17, -10n, 0, 1],
      [-(10n ** 18n), -17, -10n, 0, 0],
      [10n ** 18n, -17, 1n, 0, 1],
      [10n ** 18n + 1n, -17, 1n, 1, 1],
      [10n ** 18n - 1n, -17, 1n, 1, -1],
    ];
    for (const [av, as, bv, bs, want] of table) {
      for (const [a, b] of [
        [int(av, as), int(bv, bs)],
        [dec(av, as), int(bv, bs)],
        [int(av, as), dec(bv, bs)],
        [dec(av, as), dec(bv, bs)],
      ] as const) {
        assert.equal(a.cmp(b), want, `${av}e${as} vs ${bv}e${bs}`);
        assert.equal(b.cmp(a), -want || 0);
      }
    }
  });

  it('rounds up to a scale (TestQuantityRoundUp)', () => {
    const table: Array<[string, number, Quantity, boolean]> = [
      ['9.01', -3, dec(901, -2), true],
      ['9.01', -2, dec(901, -2), true],
      ['9.01', -1, dec(91, -1), false],
      ['9.01', 0, dec(10, 0), false],
      ['9.01', 1, dec(10, 0), false],
      ['9.01', 2, dec(100, 0), false],
      ['-9.01', -3, dec(-901, -2), true],
      ['-9.01', -2, dec(-901, -2), true],
      ['-9.01', -1, dec(-91, -1), false],
      ['-9.01', 0, dec(-10, 0), false],
      ['-9.01', 1, dec(-10, 0), false],
      ['-9.01', 2, dec(-100, 0), false],
    ];
    for (const [input, scale, want, exact] of table) {
      for (const q of [parseQuantity(input), parseQuantity(input).add(dec(0, -1))]) {
        assert.equal(q.isExactAt(scale), exact, `${input} @${scale}`);
        assert.equal(q.roundUp(scale).cmp(want), 0, `${input} @${scale} → ${q.roundUp(scale).toString()}`);
      }
    }
  });

  it('negates (TestQuantityNeg, TestNeg)', () => {
    assert.equal(int(901, -2).neg().toString(), '-9010m');
    assert.equal(dec(901, -2).neg().toString(), '-9010m');
    assert.equal(int(10, 0, 'BinarySI').neg().cmp(int(-10, 0)), 0);
    assert.equal(dec(-10, 0, 'BinarySI').neg().cmp(int(10, 0)), 0);
    assert.equal(int(0, 0).neg().isZero(), true);
  });

  it('adds and subtracts (TestAdd, TestSub)', () => {
    const add: Array<[Quantity, Quantity, Quantity]> = [
      [dec(10, 0), dec(1, 1), dec(20, 0)],
      [dec(10, 0), dec(1, 0, 'BinarySI'), dec(11, 0)],
      [dec(10, 0, 'BinarySI'), dec(1, 0), dec(11, 0, 'BinarySI')],
      [int(0, 0), dec(50, 0), dec(50, 0)],
      [dec(50, 0), int(0, 0), dec(50, 0)],
      [int(0, 0), int(0, 0), dec(0, 0)],
    ];
    for (const [a, b, want] of add) {
      const r = a.add(b);
      assert.equal(r.cmp(want), 0);
      assert.equal(r.format, want.format);
    }
    const sub: Array<[Quantity, Quantity, Quantity]> = [
      [dec(10, 0), dec(1, 1), dec(0, 0)],
      [dec(10, 0), dec(1, 0, 'BinarySI'), dec(9, 0)],
      [dec(10, 0, 'BinarySI'), dec(1, 0), dec(9, 0, 'BinarySI')],
      [int(0, 0), dec(50, 0), dec(-50, 0)],
      [dec(50, 0), int(0, 0), dec(50, 0)],
      [int(0, 0), int(0, 0), dec(0, 0)],
    ];
    for (const [a, b, want] of sub) {
      const r = a.sub(b);
      assert.equal(r.cmp(want), 0);
      assert.equal(r.format, want.format);
    }
  });

  it('keeps the suffix when adding or subtracting zero (TestQuantityAddZeroPreservesSuffix)', () => {
    const zero = parseQuantity('0');
    for (const text of ['100m', '1Gi']) {
      const v = parseQuantity(text);
      assert.equal(v.add(zero).toString(), text);
      assert.equal(zero.add(v).toString(), text);
      assert.equal(v.sub(zero).toString(), text);
      assert.equal(zero.sub(v).toString(), v.neg().toString());
    }
  });

  it('cancels additions with subtractions across scales and overflow (TestAddSubRoundTrip*)', () => {
    let seed = 42n;
    const next = (): bigint => (seed = (seed * 6364136223846793005n + 1442695040888963407n) & INT64_MAX);
    for (let k = -10; k <= 10; k += 5) {
      let q = createQuantity(0, 'DecimalSI');
      const order: bigint[] = [];
      for (let n = 0; n < 40; n++) {
        const j = next();
        order.push(j);
        q = q.add(createScaledQuantity(j, k));
      }
      for (const j of order) q = q.sub(createScaledQuantity(j, k));
      assert.equal(q.isZero(), true);
    }
    let q = createQuantity(0, 'DecimalSI');
    const order: bigint[] = [];
    for (let n = 0; n < 40; n++) {
      const j = next();
      order.push(j);
      q = q.add(createScaledQuantity(j, Number(j % 20n) - 10));
    }
    for (const j of order) q = q.sub(createScaledQuantity(j, Number(j % 20n) - 10));
    assert.equal(q.isZero(), true);
  });
});

describe('int64 read-outs', () => {
  it('creates and reads back milli quantities (TestMilliNewSet)', () => {
    const table: Array<[number, QuantityFormat, string, boolean]> = [
      [1, 'DecimalSI', '1m', true],
      [1000, 'DecimalSI', '1', true],
      [1234000, 'DecimalSI', '1234', true],
      [1024, 'BinarySI', '1024m', false],
      [1000000, 'DecimalExponent', '1e3', true],
      [1024 * 1024, 'BinarySI', '1048576m', false],
    ];
    for (const [value, format, expect, exact] of table) {
      const q = createMilliQuantity(value, format);
      assert.equal(q.toString(), expect);
      if (exact) assert.equal(parseQuantity(q.toString()).milliValue(), BigInt(value));
    }
  });

  it('creates and reads back quantities (TestNewSet)', () => {
    const table: Array<[number, QuantityFormat, string]> = [
      [1, 'DecimalSI', '1'],
      [1000, 'DecimalSI', '1k'],
      [1234000, 'DecimalSI', '1234k'],
      [1024, 'BinarySI', '1Ki'],
      [1000000, 'DecimalExponent', '1e6'],
      [1024 * 1024, 'BinarySI', '1Mi'],
    ];
    for (const [value, format, expect] of table) {
      const q = createQuantity(value, format);
      assert.equal(q.toString(), expect);
      assert.equal(parseQuantity(q.toString()).value(), BigInt(value));
    }
  });

  it('creates and reads back scaled quantities (TestNewScaledSet, TestScaledValue)', () => {
    const table: Array<[number, number, string]> = [
      [1, Scale.Nano, '1n'],
      [1000, Scale.Nano, '1u'],
      [1, Scale.Micro, '1u'],
      [1000, Scale.Micro, '1m'],
      [1, Scale.Milli, '1m'],
      [1000, Scale.Milli, '1'],
      [1, 0, '1'],
      [0, Scale.Nano, '0'],
      [0, Scale.Micro, '0'],
      [0, Scale.Milli, '0'],
      [0, 0, '0'],
    ];
    for (const [value, scale, expect] of table) {
      const q = createScaledQuantity(value, scale);
      assert.equal(q.toString(), expect);
      assert.equal(parseQuantity(q.toString()).scaledValue(scale), BigInt(value));
    }
    const scaled: Array<[number, number, bigint]> = [
      [Scale.Nano, Scale.Nano, 1n],
      [Scale.Nano, Scale.Micro, 1n],
      [Scale.Nano, Scale.Milli, 1n],
      [Scale.Nano, 0, 1n],
      [Scale.Micro, Scale.Nano, 1000n],
      [Scale.Micro, Scale.Micro, 1n],
      [Scale.Micro, Scale.Milli, 1n],
      [Scale.Micro, 0, 1n],
      [Scale.Milli, Scale.Nano, 1000000n],
      [Scale.Milli, Scale.Micro, 1000n],
      [Scale.Milli, Scale.Milli, 1n],
      [Scale.Milli, 0, 1n],
      [0, Scale.Nano, 1000000000n],
      [0, Scale.Micro, 1000000n],
      [0, Scale.Milli, 1000n],
      [0, 0, 1n],
      [2, -2, 10000n],
    ];
    for (const [from, to, want] of scaled) assert.equal(createScaledQuantity(1, from).scaledValue(to), want);
  });

  it('rounds Value() up, and keeps kube’s results for negative fractions', () => {
    assert.equal(parseQuantity('1.1').value(), 2n);
    assert.equal(parseQuantity('100m').value(), 1n);
    assert.equal(parseQuantity('1Gi').value(), 1073741824n);
    assert.equal(parseQuantity('1.5').milliValue(), 1500n);
    assert.equal(parseQuantity('1n').milliValue(), 1n);
    // The int64 form rounds away from zero; a parsed decimal (more than 18 digits or below 1n)
    // truncates then adds one, as kube's scaledValue does.
    assert.equal(parseQuantity('-9.01').value(), -10n);
    assert.equal(parseQuantity('-0.0000000001').value(), 1n);
    assert.equal(parseQuantity('1e30').value(), 0n);
    assert.equal(parseQuantity('1Mi').value(), 1048576n);
  });

  it('approximates as a float64 exactly as kube does (TestQuantityAsApproximateFloat64)', () => {
    const M7 = 7 * 1024 * 1024;
    const table: Array<[Quantity, number]> = [];
    for (const f of ['DecimalSI', 'DecimalExponent', 'BinarySI'] as const) {
      table.push(
        [dec(0, 0, f), 0],
        [dec(1, 0, f), 1],
        [dec(1024, 0, f), 1024],
        [dec(8 * 1024, 0, f), 8 * 1024],
        [dec(M7, 0, f), M7],
        [dec(M7, 1, f), M7 * 10],
        [dec(M7, 4, f), M7 * 10000],
        [dec(M7, 8, f), M7 * 100000000],
        [dec(M7, -1, f), M7 * 0.1],
        [dec(M7, -8, f), M7 / 100000000],
      );
    }
    table.push(
      [dec(INT64_MAX, 0), 9223372036854775807],
      [dec(INT64_MAX, 0, 'BinarySI'), 9223372036854775807],
      [dec(12, 18), 1.2e19],
      [dec(12, 500), Infinity],
      [dec(-12, 500), -Infinity],
    );
    for (const [q, want] of table) assert.equal(q.asApproximateFloat64(), want, `${q.format} ${q.toString()}`);
    const strings: Array<[string, number]> = [
      ['2Ki', 2048],
      ['1.1Ki', 1126.4],
      ['1Mi', 1.048576e6],
      ['2Gi', 2.147483648e9],
    ];
    for (const [text, want] of strings) assert.equal(parseQuantity(text).asApproximateFloat64(), want, text);
  });
});
