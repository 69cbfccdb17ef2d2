// kube's own vectors (apimachinery 1.24 pkg/api/resource/quantity_test.go), run on plinth's port.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { INT64_MAX, decAmount } from './quantity-amount.js';
import {
  QUANTITY_REGEXP,
  Quantity,
  type QuantityFormat,
  Scale,
  canonicalQuantity,
  canonicalQuantityValue,
  canonicalResourceList,
  decodeQuantity,
  isQuantity,
  isQuantityParseError,
  parseQuantity,
} from './quantity.js';

/** kube's decQuantity(i, exponent, format): i × 10^exponent held as an inf.Dec. */
const dec = (value: bigint | number, exponent: number, format: QuantityFormat = 'DecimalSI'): Quantity => new Quantity(decAmount(BigInt(value), exponent), format);

const FORMAT_ERROR = `quantities must match the regular expression '${QUANTITY_REGEXP}'`;

describe('parseQuantity (TestQuantityParse)', () => {
  const table: Array<[string, Quantity]> = [
    ['0', dec(0, 0)],
    ['0n', dec(0, 0)],
    ['0u', dec(0, 0)],
    ['0m', dec(0, 0)],
    ['0Ki', dec(0, 0, 'BinarySI')],
    ['0k', dec(0, 0)],
    ['0Mi', dec(0, 0, 'BinarySI')],
    ['0M', dec(0, 0)],
    ['0Gi', dec(0, 0, 'BinarySI')],
    ['0G', dec(0, 0)],
    ['0Ti', dec(0, 0, 'BinarySI')],
    ['0T', dec(0, 0)],
    ['1', dec(1, 0)],
    ['1Ki', dec(1024, 0, 'BinarySI')],
    ['8Ki', dec(8 * 1024, 0, 'BinarySI')],
    ['7Mi', dec(7 * 1024 * 1024, 0, 'BinarySI')],
    ['6Gi', dec(6n * 1024n ** 3n, 0, 'BinarySI')],
    ['5Ti', dec(5n * 1024n ** 4n, 0, 'BinarySI')],
    ['4Pi', dec(4n * 1024n ** 5n, 0, 'BinarySI')],
    ['3Ei', dec(3n * 1024n ** 6n, 0, 'BinarySI')],
    ['10Ti', dec(10n * 1024n ** 4n, 0, 'BinarySI')],
    ['100Ti', dec(100n * 1024n ** 4n, 0, 'BinarySI')],
    ['5n', dec(5, -9)],
    ['4u', dec(4, -6)],
    ['3m', dec(3, -3)],
    ['9', dec(9, 0)],
    ['8k', dec(8, 3)],
    ['50k', dec(5, 4)],
    ['7M', dec(7, 6)],
    ['6G', dec(6, 9)],
    ['5T', dec(5, 12)],
    ['40T', dec(4, 13)],
    ['300T', dec(3, 14)],
    ['2P', dec(2, 15)],
    ['1E', dec(1, 18)],
    ['1E-3', dec(1, -3, 'DecimalExponent')],
    ['1e3', dec(1, 3, 'DecimalExponent')],
    ['1E6', dec(1, 6, 'DecimalExponent')],
    ['1e9', dec(1, 9, 'DecimalExponent')],
    ['1E12', dec(1, 12, 'DecimalExponent')],
    ['1e15', dec(1, 15, 'DecimalExponent')],
    ['1E18', dec(1, 18, 'DecimalExponent')],
    ['1e14', dec(1, 14, 'DecimalExponent')],
    ['1e13', dec(1, 13, 'DecimalExponent')],
    ['100.035k', dec(100035, 0)],
    ['0.001', dec(1, -3)],
    ['0.0005k', dec(5, -1)],
    ['0.005', dec(5, -3)],
    ['0.05', dec(5, -2)],
    ['0.5', dec(5, -1)],
    ['0.00050k', dec(5, -1)],
    ['0.00500', dec(5, -3)],
    ['0.05000', dec(5, -2)],
    ['0.50000', dec(5, -1)],
    ['0.5e0', dec(5, -1, 'DecimalExponent')],
    ['0.5e-1', dec(5, -2, 'DecimalExponent')],
    ['0.5e-2', dec(5, -3, 'DecimalExponent')],
    ['10.035M', dec(10035, 3)],
    ['1.2e3', dec(12, 2, 'DecimalExponent')],
    ['1.3E+6', dec(13, 5, 'DecimalExponent')],
    ['1.40e9', dec(14, 8, 'DecimalExponent')],
    ['1.53E12', dec(153, 10, 'DecimalExponent')],
    ['1.6e15', dec(16, 14, 'DecimalExponent')],
    ['1.7E18', dec(17, 17, 'DecimalExponent')],
    ['9.01', dec(901, -2)],
    ['8.1k', dec(81, 2)],
    ['7.123456M', dec(7123456, 0)],
    ['6.987654321G', dec(6987654321, 0)],
    ['5.444T', dec(5444, 9)],
    ['40.1T', dec(401, 11)],
    ['300.2T', dec(3002, 11)],
    ['2.5P', dec(25, 14)],
    ['1.01E', dec(101, 16)],
    ['3.001n', dec(4, -9)],
    ['1.1E-9', dec(2, -9, 'DecimalExponent')],
    ['0.0000000001', dec(1, -9)],
    ['0.0000000005', dec(1, -9)],
    ['0.00000000050', dec(1, -9)],
    ['0.5e-9', dec(1, -9, 'DecimalExponent')],
    ['0.9n', dec(1, -9)],
    ['0.00000012345', dec(124, -9)],
    ['0.00000012354', dec(124, -9)],
    ['9Ei', dec(INT64_MAX, 0, 'BinarySI')],
    ['9223372036854775807Ki', dec(INT64_MAX, 0, 'BinarySI')],
    ['12E', dec(12, 18)],
    ['100.035Ki', dec(10243584, -2, 'BinarySI')],
    ['0.5Mi', dec(0.5 * 1024 * 1024, 0, 'BinarySI')],
    ['0.05Gi', dec(536870912, -1, 'BinarySI')],
    ['0.025Ti', dec(274877906944, -1, 'BinarySI')],
    ['0.000000000001Ki', dec(2, -9)],
    ['.001', dec(1, -3)],
    ['.0001k', dec(100, -3)],
    ['1.', dec(1, 0)],
    ['1.G', dec(1, 9)],
  ];

  for (const [input, expect] of table) {
    it(`${input} = ${expect.toString()} (${expect.format}), also signed`, () => {
      const got = parseQuantity(input);
      assert.equal(got.cmp(expect), 0, `${input} → ${got.toString()}`);
      assert.equal(got.format, expect.format);
      const negative = parseQuantity(`-${input}`);
      assert.equal(negative.cmp(expect.neg()), 0, `-${input} → ${negative.toString()}`);
      assert.equal(negative.format, expect.format);
      const plus = parseQuantity(`+${input}`);
      assert.equal(plus.cmp(expect), 0);
      assert.equal(plus.format, expect.format);
      assert.equal(got.sign() >= 0, true);
    });
  }

  it('refuses what kube refuses, with kube’s messages', () => {
    const invalid: Array<[string, string]> = [
      ['', FORMAT_ERROR],
      ['1.1.M', FORMAT_ERROR],
      ['1+1.0M', FORMAT_ERROR],
      ['0.1mi', "unable to parse quantity's suffix"],
      ['0.1am', FORMAT_ERROR],
      ['aoeu', FORMAT_ERROR],
      ['.5i', "unable to parse quantity's suffix"],
      ['1i', "unable to parse quantity's suffix"],
      ['-3.01i', "unable to parse quantity's suffix"],
      ['-3.01e-', "unable to parse quantity's suffix"],
      [' 1', FORMAT_ERROR],
      ['1 ', FORMAT_ERROR],
      ['Non-Numeric', FORMAT_ERROR],
      ['1Mi3', "unable to parse quantity's suffix"],
      ['1e99999999999999999999', "unable to parse quantity's suffix"],
      ['1EE5', "unable to parse quantity's suffix"],
      ['.e-10', 'unable to parse numeric part of quantity'],
      ['1٣', FORMAT_ERROR],
    ];
    for (const [text, message] of invalid) {
      assert.throws(
        () => parseQuantity(text),
        (e: unknown) => isQuantityParseError(e) && e.message === message,
        JSON.stringify(text),
      );
      assert.equal(isQuantity(text), false);
    }
  });

  it('takes the troll inputs kube takes ("." "-" "+" are zero)', () => {
    for (const text of ['.', '-.', '-', '+', '00', '-0', '+0.', '.Ki']) assert.equal(canonicalQuantity(text), '0', text);
  });
});

describe('serialization (TestQuantityString, TestQuantityParseEmit)', () => {
  const table: Array<[Quantity, string, string]> = [
    [dec(1024 * 1024 * 1024, 0, 'BinarySI'), '1Gi', '1024Mi'],
    [dec(300 * 1024 * 1024, 0, 'BinarySI'), '300Mi', '307200Ki'],
    [dec(6 * 1024, 0, 'BinarySI'), '6Ki', ''],
    [dec(1001n * 1024n ** 3n, 0, 'BinarySI'), '1001Gi', '1025024Mi'],
    [dec(1024n ** 4n, 0, 'BinarySI'), '1Ti', '1024Gi'],
    [dec(5, 0, 'BinarySI'), '5', '5000m'],
    [dec(500, -3, 'BinarySI'), '500m', '0.5'],
    [dec(1, 9), '1G', '1000M'],
    [dec(1000, 6), '1G', '0.001T'],
    [dec(1000000, 3), '1G', ''],
    [dec(1000000000, 0), '1G', ''],
    [dec(1, -3), '1m', '1000u'],
    [dec(80, -3), '80m', ''],
    [dec(1080, -3), '1080m', '1.08'],
    [dec(108, -2), '1080m', '1080000000n'],
    [dec(10800, -4), '1080m', ''],
    [dec(300, 6), '300M', ''],
    [dec(1, 12), '1T', ''],
    [dec(1234567, 6), '1234567M', ''],
    [dec(1234567, -3, 'BinarySI'), '1234567m', ''],
    [dec(3, 3), '3k', ''],
    [dec(1025, 0, 'BinarySI'), '1025', ''],
    [dec(0, 0), '0', ''],
    [dec(0, 0, 'BinarySI'), '0', ''],
    [dec(1, 9, 'DecimalExponent'), '1e9', '.001e12'],
    [dec(1, -3, 'DecimalExponent'), '1e-3', '0.001e0'],
    [dec(1, -9, 'DecimalExponent'), '1e-9', '1000e-12'],
    [dec(80, -3, 'DecimalExponent'), '80e-3', ''],
    [dec(300, 6, 'DecimalExponent'), '300e6', ''],
    [dec(1, 12, 'DecimalExponent'), '1e12', ''],
    [dec(1, 3, 'DecimalExponent'), '1e3', ''],
    [dec(3, 3, 'DecimalExponent'), '3e3', ''],
    [dec(3, 3), '3k', ''],
    [dec(0, 0, 'DecimalExponent'), '0', '00'],
    [dec(1, -9), '1n', ''],
    [dec(80, -9), '80n', ''],
    [dec(1080, -9), '1080n', ''],
    [dec(108, -8), '1080n', ''],
    [dec(10800, -10), '1080n', ''],
    [dec(1, -6), '1u', ''],
    [dec(80, -6), '80u', ''],
    [dec(1080, -6), '1080u', ''],
  ];
  for (const [q, expect, alternate] of table) {
    it(`${expect}${alternate ? ` (also from ${alternate})` : ''}`, () => {
      assert.equal(q.toString(), expect);
      assert.equal(canonicalQuantity(expect), expect);
      if (alternate) assert.equal(canonicalQuantity(alternate), expect);
      if (!q.isZero()) assert.equal(q.neg().toString(), `-${expect}`);
      assert.equal(JSON.stringify({ q }), `{"q":"${expect}"}`);
    });
  }

  const emit: Array<[string, string]> = [
    ['1Ki', '1Ki'],
    ['1Mi', '1Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1000M', '1G'],
    ['.001Ki', '1024m'],
    ['.000001Ki', '1024u'],
    ['.000000001Ki', '1024n'],
    ['.000000000001Ki', '2n'],
  ];
  for (const [input, expect] of emit) {
    it(`${input} → ${expect}, and negated`, () => {
      assert.equal(canonicalQuantity(input), expect);
      assert.equal(canonicalQuantity(`-${input}`), `-${expect}`);
    });
  }

  it('writes the forms users meet', () => {
    const cases: Array<[string, string]> = [
      ['1000m', '1'],
      ['1024Mi', '1Gi'],
      ['0.5', '500m'],
      ['1.5Gi', '1536Mi'],
      ['1.5', '1500m'],
      ['100e-3', '100e-3'],
      ['1000e-3', '1'],
      ['1500e-3', '1500e-3'],
      ['10e3', '10e3'],
      ['1e4', '10e3'],
      ['0.1m', '100u'],
      ['1.1Gi', '1181116006400m'],
      ['2048Ki', '2Mi'],
      ['1023Ki', '1023Ki'],
      ['100Mi', '100Mi'],
      ['128974848', '128974848'],
      ['129e6', '129e6'],
      ['129M', '129M'],
      ['123Mi', '123Mi'],
      ['0.25', '250m'],
      ['250m', '250m'],
      ['2000m', '2'],
      ['1e-10', '1e-9'],
      ['-1e-10', '-1e-9'],
      ['1e2000000000', '100e1999999998'],
      ['1e2000000001', '1e2000000001'],
    ];
    for (const [input, expect] of cases) assert.equal(canonicalQuantity(input), expect, input);
  });

  it('keeps the text kube’s parser deems canonical, as kube does', () => {
    // ParseQuantity stores the input as the serialized form when its test passes (kubernetes#138165).
    for (const text of ['+1', '01', '1E3', '1e+3', '1e03', '1.001', '1.500', '+1Ki', '1025Ki', '-1.441k']) {
      assert.equal(canonicalQuantity(text), text);
    }
    // ... but not for these
    assert.equal(canonicalQuantity('1.50'), '1500m');
    assert.equal(canonicalQuantity('0.500'), '500m');
    assert.equal(canonicalQuantity('1000'), '1k');
    assert.equal(canonicalQuantity('1024Ki'), '1Mi');
  });

  it('writes the bare mantissa past the largest suffix, as kube does', () => {
    assert.equal(canonicalQuantity('1000E'), '1');
    assert.equal(canonicalQuantity('10000E'), '10');
    assert.equal(canonicalQuantity('12345E'), '12345E');
    const fourEi = parseQuantity('4Ei');
    assert.equal(fourEi.add(fourEi).add(fourEi).add(fourEi).toString(), '16Ei');
    assert.equal(fourEi.add(fourEi).add(fourEi).add(fourEi).add(fourEi).add(fourEi).add(fourEi).add(fourEi).toString(), '32Ei');
    // BinarySI is capped at 2^63-1 on parse.
    assert.equal(canonicalQuantity('8Ei'), '9223372036854775807');
  });
});

describe('goSyntax', () => {
  it('prints the Quantity as Go’s %#v does in field errors', () => {
    const go = (i: string, d = '(*inf.Dec)(nil)', s = '', f = 'DecimalSI'): string =>
      `resource.Quantity{i:resource.int64Amount{${i}}, d:resource.infDecAmount{Dec:${d}}, s:${JSON.stringify(s)}, Format:"${f}"}`;
    assert.equal(parseQuantity('1500m').goSyntax(), go('value:1500, scale:-3', undefined, '1500m'));
    assert.equal(parseQuantity('0').goSyntax(), go('value:0, scale:0', undefined, '0'));
    assert.equal(parseQuantity('400Mi').goSyntax(), go('value:419430400, scale:0', undefined, '', 'BinarySI'));
    assert.equal(parseQuantity('1000').goSyntax(), go('value:1000, scale:0'));
    assert.equal(parseQuantity('1.5Gi').goSyntax(), go('value:0, scale:0', '(*inf.Dec)(0xc000a1c000)', '', 'BinarySI'));
    // Rounded to milli as SetDefaults_ResourceList does: kept text survives only when nothing changed.
    assert.equal(parseQuantity('1.001').roundUp(Scale.Milli).goSyntax(), go('value:1001, scale:-3', undefined, '1.001'));
    assert.equal(parseQuantity('1.000001').roundUp(Scale.Milli).goSyntax(), go('value:1001, scale:-3'));
  });
});

describe('JSON decoding', () => {
  it('reads strings with surrounding whitespace and numbers, as UnmarshalJSON does (TestJSONWhitespace)', () => {
    const cases: Array<[unknown, string]> = [
      [' 1', '1'],
      ['1 ', '1'],
      [1, '1'],
      [10, '10'],
      [-1, '-1'],
      [0.5, '500m'],
      [1.5, '1500m'],
      [1e21, '1e+21'],
      [9223372036854775807n, '9223372036854775807'],
      [null, '0'],
    ];
    for (const [v, want] of cases) assert.equal(canonicalQuantityValue(v), want, String(v));
    assert.equal(decodeQuantity('\u00a01Gi\n').toString(), '1Gi');
  });

  it('refuses other JSON values with kube’s regexp error', () => {
    for (const v of [true, {}, [], '\ufeff1', 'abc']) {
      assert.throws(
        () => decodeQuantity(v),
        (e: unknown) => isQuantityParseError(e) && e.message === FORMAT_ERROR,
      );
    }
  });

  it('canonicalizes ResourceLists as kube stores them (rounded up to milli)', () => {
    assert.deepEqual(canonicalResourceList({ cpu: '1000m', memory: '1.5Gi', 'nvidia.com/gpu': 2, storage: '100n', x: '1.0001' }), {
      cpu: '1',
      memory: '1536Mi',
      'nvidia.com/gpu': '2',
      storage: '1m',
      x: '1001m',
    });
    // A value already at milli precision keeps its text (kube's RoundUp keeps it), others do not.
    assert.deepEqual(canonicalResourceList({ a: '1.001', b: '1.000001' }), { a: '1.001', b: '1001m' });
    const weird = JSON.parse('{"__proto__":"1000m"}') as unknown;
    const out = canonicalResourceList(weird) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, '1');
    assert.equal(canonicalResourceList('x'), 'x');
    assert.throws(() => canonicalResourceList({ cpu: 'lots' }), isQuantityParseError);
  });
});
