import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  SelectorParseError,
  everythingLabelSelector,
  labelSelectorFromObject,
  nothingLabelSelector,
  parseLabelSelector,
} from './labels.js';

function parseErr(text: string): string {
  try {
    parseLabelSelector(text);
  } catch (e) {
    assert.ok(e instanceof SelectorParseError, `expected SelectorParseError for ${JSON.stringify(text)}`);
    return e.message;
  }
  assert.fail(`expected ${JSON.stringify(text)} to fail`);
}

const qnameRegex =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('parseLabelSelector: grammar (kube TestSelectorParse)', () => {
  const good: [string, string][] = [
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['', ''],
    ['   ', ''],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=', 'x='],
    ['x= ', 'x='],
    ['x=,z= ', 'x=,z='],
    ['x= ,z= ', 'x=,z='],
    ['!x', '!x'],
    ['x>1', 'x>1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x==a', 'x==a'],
    ['z=c,x=a', 'x=a,z=c'],
    ['x in (b,a,b)', 'x in (a,b)'],
    ['x notin (a)', 'x notin (a)'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['x in (,a)', 'x in (,a)'],
    ['x in (a,)', 'x in (,a)'],
    [' \tx\n in\r( a , b ) , y ', 'x in (a,b),y'],
    ['example.com/app=web', 'example.com/app=web'],
    ['in in (in, notin)', 'in in (in,notin)'],
    ['notin=in', 'notin=in'],
    ['x=a,!y', 'x=a,!y'],
    ['!y,x=a', 'x=a,!y'],
  ];
  for (const [input, out] of good) {
    it(`parses ${JSON.stringify(input)}`, () => {
      assert.equal(parseLabelSelector(input).toString(), out);
    });
  }

  const bad = ['x=a||y=b', 'x==a==b', '!x=a', 'x<a', 'x=a,', ',x=a', 'x in a', 'x in (a', 'x in (a b)', 'a b', '=a', '~', 'x=(', '!'];
  for (const input of bad) {
    it(`rejects ${JSON.stringify(input)}`, () => {
      assert.throws(() => parseLabelSelector(input), SelectorParseError);
    });
  }
});

describe('parseLabelSelector: kube error texts', () => {
  it('operator expected', () => {
    assert.equal(parseErr('a b'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  });
  it('trailing comma', () => {
    assert.equal(parseErr('x=a,'), "found '', expected: identifier after ','");
  });
  it('leading comma', () => {
    assert.equal(parseErr(',x'), "found ',', expected: !, identifier, or 'end of string'");
  });
  it('junk after a requirement', () => {
    assert.equal(parseErr('!x=a'), "found '=', expected: ',' or 'end of string'");
    assert.equal(parseErr('x==a==b'), "found '==', expected: ',' or 'end of string'");
  });
  it('value expected', () => {
    assert.equal(parseErr('x=('), "unable to parse requirement: found '(', expected: identifier");
  });
  it('set syntax', () => {
    assert.equal(parseErr('x in a'), "unable to parse requirement: found 'a' expected: '('");
    assert.equal(parseErr('x in (a b)'), "unable to parse requirement: found 'b', expected: ',' or ')'");
    assert.equal(parseErr('x in (='), "unable to parse requirement: found '=', expected: ',', ')' or identifier");
    assert.equal(parseErr('x in (a,='), "unable to parse requirement: found '=', expected: ',', or identifier");
  });
  it('missing key after !', () => {
    assert.equal(parseErr('!'), "unable to parse requirement: found '', expected: identifier");
  });
  it('invalid key', () => {
    assert.equal(parseErr('-a'), `unable to parse requirement: <nil>: Invalid value: "-a": name part ${qnameRegex}`);
    assert.equal(
      parseErr('a/b/c'),
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${qnameRegex} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
    assert.match(parseErr('/a'), /^unable to parse requirement: <nil>: Invalid value: "\/a": prefix part must be non-empty$/);
    assert.match(parseErr('Foo_/a'), /prefix part a lowercase RFC 1123 subdomain must consist of/);
    assert.match(parseErr('a'.repeat(64)), /name part must be no more than 63 characters$/);
  });
  it('invalid value', () => {
    assert.equal(
      parseErr('k=-v'),
      "unable to parse requirement: values[0][k]: Invalid value: \"-v\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
    assert.match(parseErr('k in (ok,-bad)'), /^unable to parse requirement: values\[0\]\[k\]: Invalid value: "-bad"/);
    assert.match(parseErr(`k=${'v'.repeat(64)}`), /must be no more than 63 characters$/);
  });
  it('gt/lt need integers', () => {
    assert.equal(
      parseErr('x<a'),
      "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
    );
  });
});

describe('LabelSelector.matches (kube semantics)', () => {
  const l = { app: 'web', tier: 'front', n: '10' };
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['', l, true],
    ['', undefined, true],
    ['app=web', l, true],
    ['app==web', l, true],
    ['app=db', l, false],
    ['app!=db', l, true],
    ['app!=web', l, false],
    ['missing!=x', l, true],
    ['missing=', l, false],
    ['app in (db,web)', l, true],
    ['app in (db)', l, false],
    ['missing in (a)', l, false],
    ['app notin (db)', l, true],
    ['app notin (web)', l, false],
    ['missing notin (a)', l, true],
    ['missing notin (a)', undefined, true],
    ['app', l, true],
    ['missing', l, false],
    ['!missing', l, true],
    ['!app', l, false],
    ['!app', undefined, true],
    ['app', undefined, false],
    ['app=web,tier=front', l, true],
    ['app=web,tier=back', l, false],
    ['n>9', l, true],
    ['n>10', l, false],
    ['n<11', l, true],
    ['app>1', l, false],
    ['missing<1', l, false],
    ['constructor', {}, false],
    ['!toString', {}, true],
    ['x in (a,b,c,d,e,f)', { x: 'f' }, true],
    ['x in (a,b,c,d,e,f)', { x: 'g' }, false],
  ];
  for (const [sel, labels, want] of cases) {
    it(`${JSON.stringify(sel)} on ${JSON.stringify(labels)} -> ${want}`, () => {
      assert.equal(parseLabelSelector(sel).matches(labels), want);
    });
  }

  it('empty() and requiresExactMatch', () => {
    assert.equal(parseLabelSelector('').empty(), true);
    assert.equal(parseLabelSelector('a').empty(), false);
    const s = parseLabelSelector('a=1,b in (2),c in (3,4),d!=5');
    assert.equal(s.requiresExactMatch('a'), '1');
    assert.equal(s.requiresExactMatch('b'), '2');
    assert.equal(s.requiresExactMatch('c'), undefined);
    assert.equal(s.requiresExactMatch('d'), undefined);
    assert.equal(s.requiresExactMatch('e'), undefined);
  });

  it('exposes sorted requirements', () => {
    assert.deepEqual(
      parseLabelSelector('z notin (b,a),a').requirements.map((r) => [r.key, r.operator, [...r.values]]),
      [['a', 'exists', []], ['z', 'notin', ['a', 'b']]],
    );
  });

  it('everything / nothing', () => {
    assert.equal(everythingLabelSelector().matches({ a: 'b' }), true);
    assert.equal(everythingLabelSelector().empty(), true);
    assert.equal(nothingLabelSelector().matches({ a: 'b' }), false);
    assert.equal(nothingLabelSelector().empty(), false);
    assert.equal(nothingLabelSelector().toString(), '');
  });
});

describe('labelSelectorFromObject (metav1.LabelSelectorAsSelector)', () => {
  it('null/undefined selects nothing; empty selects everything', () => {
    assert.equal(labelSelectorFromObject(null).matches({}), false);
    assert.equal(labelSelectorFromObject(undefined).matches({ a: 'b' }), false);
    assert.equal(labelSelectorFromObject({}).matches({ a: 'b' }), true);
    assert.equal(labelSelectorFromObject({}).empty(), true);
    assert.equal(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).matches(undefined), true);
  });

  it('converts matchLabels and matchExpressions', () => {
    const s = labelSelectorFromObject({
      matchLabels: { 'rbac.example.com/aggregate-to-view': 'true' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'dev'] },
        { key: 'tier', operator: 'NotIn', values: ['db'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist', values: [] },
      ],
    });
    assert.equal(s.toString(), 'env in (dev,prod),!legacy,owner,rbac.example.com/aggregate-to-view=true,tier notin (db)');
    assert.equal(s.matches({ 'rbac.example.com/aggregate-to-view': 'true', env: 'dev', owner: 'me' }), true);
    assert.equal(s.matches({ 'rbac.example.com/aggregate-to-view': 'true', env: 'dev', owner: 'me', tier: 'db' }), false);
    assert.equal(s.matches({ 'rbac.example.com/aggregate-to-view': 'true', env: 'dev', owner: 'me', legacy: '' }), false);
    assert.equal(s.matches({ 'rbac.example.com/aggregate-to-view': 'false', env: 'dev', owner: 'me' }), false);
  });

  it('rejects invalid input with kube messages', () => {
    assert.throws(
      () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }),
      { name: 'SelectorParseError', message: '"Gt" is not a valid pod selector operator' },
    );
    assert.throws(
      () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      { message: "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty" },
    );
    assert.throws(
      () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
      { message: 'values: Invalid value: ["x"]: values set must be empty for exists and does not exist' },
    );
    assert.throws(() => labelSelectorFromObject({ matchLabels: { 'bad key': 'v' } }), {
      message: `key: Invalid value: "bad key": name part ${qnameRegex}`,
    });
    assert.throws(() => labelSelectorFromObject({ matchLabels: { k: 'bad value' } }), /^SelectorParseError: values\[0\]\[k\]: Invalid value: "bad value"/);
  });
});
