import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  JsonNumberRangeError,
  SCAN_EXACT,
  SCAN_TOO_DEEP,
  conformNumber,
  findNumberOverflow,
  hasExactNumbers,
  isNumberOverflow,
  numberOverflowIn,
  parseJson,
  parseStoredJson,
  scanJsonText,
  stringifyJson,
} from './number-codec.js';

describe('scanJsonText', () => {
  const cases: Array<[string, number]> = [
    ['{"a":9007199254740991}', 0],
    ['{"a":9007199254740992}', SCAN_EXACT],
    ['{"a":-9007199254740993}', SCAN_EXACT],
    ['[1, 2, 12345678901234567890]', SCAN_EXACT],
    ['{"a":1234567890123456.5}', 0],
    ['{"a":0.12345678901234567890}', 0],
    ['{"a":1e308,"b":-2.5E-400}', 0],
    ['{"a":1e309}', SCAN_EXACT],
    ['{"a":-1.5e999}', SCAN_EXACT],
    [`{"a":${'9'.repeat(400)}.5}`, SCAN_EXACT],
    ['{"a":"9007199254740993","b":"1e999"}', 0],
    ['{"a\\"":"x\\\\","b":"\\"9007199254740993"}', 0],
    ['{"a\\"":"x\\\\","b":9007199254740993}', SCAN_EXACT],
    ['[[[1]]]', 0],
  ];
  for (const [text, flags] of cases) {
    it(`${text.slice(0, 50)} → ${flags}`, () => assert.equal(scanJsonText(text), flags));
  }
  it('measures nesting outside strings only', () => {
    assert.equal(scanJsonText('[[[1]]]', 2), SCAN_TOO_DEEP);
    assert.equal(scanJsonText('["[[[[", {"a":"{{{{"}]', 2), 0);
  });
});

describe('parseJson: kube numbers (int64 when an integer literal fits, else float64)', () => {
  it('keeps integers above 2^53 exactly as BigInts, within int64', () => {
    assert.deepEqual(parseJson('{"a":9007199254740993,"b":[9223372036854775807,-9223372036854775808],"c":9007199254740991}'), {
      a: 9007199254740993n,
      b: [9223372036854775807n, -9223372036854775808n],
      c: 9007199254740991,
    });
  });
  it('reads what is not an int64 as a float64 (numbers JSON.parse gives)', () => {
    const v = parseJson('[9223372036854775808, -9223372036854775809, 1.0, -0, 1e3, 12345678901234567890.5, 1e-400]') as unknown[];
    assert.deepEqual(v, [9223372036854775808, -9223372036854775809, 1, -0, 1000, 12345678901234567890.5, 0]);
    assert.ok(v.every((x) => typeof x === 'number'));
  });
  it('refuses a number beyond float64 with kube\'s message', () => {
    for (const lit of ['1e999', '-1e999', '1e400', '9'.repeat(400)]) {
      assert.throws(
        () => parseJson(`{"spec":{"x":[1,${lit}]},"big":9007199254740993}`),
        (e: unknown) => e instanceof JsonNumberRangeError && e.message === `json: cannot unmarshal number ${lit} into Go value of type float64`,
      );
    }
  });
  it('leaves syntax errors to JSON.parse', () => {
    assert.throws(() => parseJson('{"a":9007199254740993,}'), SyntaxError);
    assert.throws(() => parseJson('{"a":1e999'), SyntaxError);
  });
  it('builds what JSON.parse builds otherwise: escapes, duplicates, __proto__ as a member', () => {
    const text = '{ "s" : "a\\"b\\\\c\\u00e9\\n" , "d":1, "d":2, "__proto__": {"x": 9007199254740993}, "e": [ true, false, null, {}, [] ] }';
    const v = parseJson(text) as Record<string, unknown>;
    assert.equal(v['s'], 'a"b\\cé\n');
    assert.equal(v['d'], 2);
    assert.deepEqual(Object.keys(v), ['s', 'd', '__proto__', 'e']);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(v['__proto__'], { x: 9007199254740993n });
    assert.deepEqual(v['e'], [true, false, null, {}, []]);
  });
  it('equals JSON.parse on generated documents (seeded), but for the one exact number', () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const strings = ['', 'a', 'é', '"', '\\', '\n', '\u2028', '😀', 'x"y\\z', '9007199254740993', '{[', ':,'];
    const gen = (depth: number): unknown => {
      switch (rand(depth > 4 ? 4 : 7)) {
        case 0:
          return strings[rand(strings.length)];
        case 1:
          return rand(2) === 0 ? rand(1e9) - 5e8 : (rand(1e6) - 5e5) / 1000;
        case 2:
          return [true, false, null][rand(3)];
        case 3:
          return rand(2) ** 53 * rand(1000);
        case 4:
        case 5:
          return Array.from({ length: rand(4) }, () => gen(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: rand(4) }, () => [strings[rand(strings.length)]! + String(rand(3)), gen(depth + 1)]));
      }
    };
    for (let i = 0; i < 300; i++) {
      const doc = { v: gen(0) };
      const text = JSON.stringify(doc, null, rand(2) === 0 ? undefined : 2).replace(/}$/, ',"big":-9007199254740993}');
      assert.deepEqual(parseJson(text), { ...doc, big: -9007199254740993n }, text);
    }
  });
  it('mark mode keeps numbers beyond float64 in place and knows the first (document order)', () => {
    const v = parseJson('{"a":{"b":[1,2e999]},"c":-1e999}', { marks: true }) as { a: { b: unknown[] }; c: unknown };
    assert.ok(isNumberOverflow(v.a.b[1]) && isNumberOverflow(v.c));
    assert.equal(numberOverflowIn(v), '2e999');
    assert.equal(findNumberOverflow(v.c), '-1e999');
    assert.equal(numberOverflowIn(parseJson('{"a":1}', { marks: true })), undefined);
    assert.equal(findNumberOverflow({ a: [1, { b: 2n }] }), undefined);
  });
});

describe('parseStoredJson (compact JSON this server wrote)', () => {
  it('reads exact numbers, and strings of digits as strings', () => {
    assert.deepEqual(parseStoredJson('{"a":"90071992547409931234","b":[9007199254740993]}'), { a: '90071992547409931234', b: [9007199254740993n] });
    assert.deepEqual(parseStoredJson('{"a":1e+21,"b":-1.5}'), { a: 1e21, b: -1.5 });
  });
});

describe('stringifyJson', () => {
  it('writes BigInts as bare integers; JSON.stringify\'s output otherwise', () => {
    const v = { a: 9007199254740993n, b: [-9223372036854775808n, 1.5, 'x'], c: { d: null } };
    assert.equal(stringifyJson(v), '{"a":9007199254740993,"b":[-9223372036854775808,1.5,"x"],"c":{"d":null}}');
    assert.equal(stringifyJson(v, 2), JSON.stringify({ a: 1, b: [2, 1.5, 'x'], c: { d: null } }, null, 2).replace('1,', '9007199254740993,').replace('2,', '-9223372036854775808,'));
    assert.equal(stringifyJson({ a: 1 }), '{"a":1}');
    assert.deepEqual(parseJson(stringifyJson(v)), v);
  });
  it('still throws what JSON.stringify throws for other values', () => {
    const loop: Record<string, unknown> = {};
    loop['self'] = loop;
    assert.throws(() => stringifyJson(loop), /circular/);
  });
});

describe('conformNumber (a typed Go field, as strconv reads it)', () => {
  const cases: Array<[number | bigint, 'int32' | 'int64' | 'float64', number | bigint | undefined]> = [
    [2147483647, 'int32', 2147483647],
    [-2147483648, 'int32', -2147483648],
    [2147483648, 'int32', undefined],
    [1.5, 'int32', undefined],
    [9007199254740993n, 'int32', undefined],
    [9007199254740993n, 'int64', 9007199254740993n],
    [9007199254740991, 'int64', 9007199254740991],
    [1e18, 'int64', undefined],
    [1.5, 'int64', undefined],
    [9007199254740993n, 'float64', 9007199254740992],
    [1.5, 'float64', 1.5],
  ];
  for (const [v, kind, want] of cases) {
    it(`${String(v)} into ${kind}`, () => assert.equal(conformNumber(v, kind), want));
  }
  it('a number beyond float64 fits no field', () => {
    const v = (parseJson('[1e999]', { marks: true }) as unknown[])[0] as symbol;
    assert.equal(conformNumber(v, 'float64'), undefined);
  });
});

describe('hasExactNumbers', () => {
  it('finds BigInts and integers beyond 2^53 held as float64s', () => {
    assert.equal(hasExactNumbers({ a: [1, 2.5, 'x', { b: 9007199254740991 }] }), false);
    assert.equal(hasExactNumbers({ a: [{ b: 9007199254740993n }] }), true);
    assert.equal(hasExactNumbers({ a: 1e18 }), true);
  });
  it('skips the member named, and walks values nested past the limit', () => {
    assert.equal(hasExactNumbers({ metadata: { generation: 9007199254740993n }, spec: {} }, 'metadata'), false);
    let deep: unknown = [9007199254740993n];
    for (let i = 0; i < 150; i++) deep = { a: deep };
    assert.equal(hasExactNumbers(deep), true);
  });
});
