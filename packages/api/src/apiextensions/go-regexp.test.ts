import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoRegExpSyntaxError, compileGoRegExp } from './go-regexp.js';

const refusal = (pattern: string): string => {
  try {
    compileGoRegExp(pattern);
  } catch (e) {
    assert.ok(e instanceof GoRegExpSyntaxError, String(e));
    return e.message;
  }
  return 'accepted';
};

describe("compileGoRegExp: Go's regexp syntax and errors (kube 1.24: Go 1.18-1.20)", () => {
  it('Go syntax JavaScript reads differently or refuses', () => {
    assert.equal(compileGoRegExp('(?i)^abc$').test('AbC'), true);
    assert.equal(compileGoRegExp('^a\\z').test('a'), true);
    assert.equal(compileGoRegExp('^a\\z').test('a\n'), false);
    assert.equal(compileGoRegExp('^a$').test('a\n'), false, 'Go: $ is the end of the text, without (?m)');
    assert.equal(compileGoRegExp('^(?P<major>\\d+)\\.(?P<minor>\\d+)$').test('1.24'), true);
    assert.equal(compileGoRegExp('^(?P<x>a)|(?P<x>b)$').test('b'), true, 'Go accepts a capture name twice');
    assert.equal(compileGoRegExp('^[[:alpha:]]+\\pN$').test('abc1'), true);
    assert.equal(compileGoRegExp('^\\Q(a)\\E$').test('(a)'), true);
    assert.equal(compileGoRegExp('^.$').test('😀'), true, 'one code point');
    // MatchString: a match anywhere, as kube-openapi's pattern check.
    assert.equal(compileGoRegExp('b+').test('abbbc'), true);
  });

  it('patterns Go refuses, with Go\'s error text', () => {
    const cases: Array<[string, string]> = [
      ['(abc', 'error parsing regexp: missing closing ): `(abc`'],
      ['a)', 'error parsing regexp: unexpected ): `a)`'],
      ['[a', 'error parsing regexp: missing closing ]: `[a`'],
      ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
      ['x{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
      ['\\8', 'error parsing regexp: invalid escape sequence: `\\8`'],
      ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
      ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
      ['*', 'error parsing regexp: missing argument to repetition operator: `*`'],
      // Go before 1.22 has no (?<name>…), nor lookbehind.
      ['^(?<n>x)$', 'error parsing regexp: invalid or unsupported Perl syntax: `(?<`'],
      ['(?<=a)b', 'error parsing regexp: invalid or unsupported Perl syntax: `(?<`'],
      ['(?P<a-b>x)', 'error parsing regexp: invalid named capture: `(?P<a-b>`'],
      ['(?P<ab', 'error parsing regexp: invalid named capture: `(?P<ab`'],
      // The first error from the left wins; whole-expression errors quote the client's pattern.
      ['a**(?<n>x)', 'error parsing regexp: invalid nested repetition operator: `**`'],
      ['(?P<n>a', 'error parsing regexp: missing closing ): `(?P<n>a`'],
      ['(?~a)(?<n>x)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?~`'],
      // Inside a class or an escape, `(?<` is text.
      ['[(?<]', 'accepted'],
      ['\\(?<', 'accepted'],
    ];
    for (const [pattern, want] of cases) assert.equal(refusal(pattern), want, pattern);
  });

  it('matching is linear in the text: the patterns that backtrack for ever in JavaScript', () => {
    const t0 = performance.now();
    const long = `${'a'.repeat(200_000)}!`;
    assert.equal(compileGoRegExp('^([a-z0-9]+-?)+[a-z0-9]$').test(long), false);
    assert.equal(compileGoRegExp('^(a|a)*$').test(long), false);
    assert.equal(compileGoRegExp('^(a+)+$').test(long), false);
    assert.equal(compileGoRegExp('(x+x+)+y').test('x'.repeat(100_000)), false);
    assert.equal(compileGoRegExp('^([a-z0-9]+-?)+[a-z0-9]$').test('a'.repeat(200_000)), true);
    // An explicit bound (~50 ms here): node:test's timeout cannot stop synchronous code.
    assert.ok(performance.now() - t0 < 5000);
  });
});
