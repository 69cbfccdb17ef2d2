/**
 * Go's `regexp` for CRD `pattern`s, as kube-apiserver 1.24 compiles and matches them: RE2 syntax
 * (`(?i)`, `\z`, `(?P<name>…)`, `\pL`, `[[:alpha:]]`, …) and matching in time linear in the input,
 * through re2js (a JavaScript port of RE2/J, itself a port of Go's regexp). A JavaScript RegExp
 * backtracks: `^([a-z0-9]+-?)+[a-z0-9]$` against 30 characters took 11 s of the event loop.
 *
 * re2js follows today's Go; kube 1.24 was built with Go 1.18–1.20, whose parser differs in two
 * places handled here before re2js sees the pattern:
 * - `(?<name>…)` arrived in Go 1.22: before, `(?<` is "invalid or unsupported Perl syntax";
 * - Go accepts a capture name twice (`(?P<a>x)|(?P<a>y)`), which re2js refuses.
 * Errors read as Go's (`error parsing regexp: missing closing ): `(a``).
 */
import { RE2JS } from 're2js';

/** A pattern Go's regexp.Compile refuses; the message is Go's error text. */
export class GoRegExpSyntaxError extends Error {
  override readonly name = 'GoRegExpSyntaxError';
}

/** A compiled Go regexp: `test` is Go's `MatchString` (a match anywhere in the text). */
export interface GoRegExp {
  readonly source: string;
  test(text: string): boolean;
}

/** Where the pattern given to re2js must fail the way Go's parser fails there. */
interface Refusal {
  /** Go's error (without the `error parsing regexp: ` prefix). */
  error: string;
}

/** Marks a refusal: re2js reports `(?~` as an invalid Perl flag, at the same place Go stops. */
const REFUSED = '(?~';
const GO_PREFIX = 'error parsing regexp: ';

const isCaptureNameChar = (c: string): boolean => /^[0-9A-Za-z_]$/.test(c);

/**
 * The pattern rewritten for re2js (named groups as plain groups, Go 1.18's refusals marked) and
 * the refusals in order. One left-to-right scan that skips escapes, `\Q…\E` and character classes
 * the way Go's parser reads them.
 */
function rewrite(pattern: string): { rewritten: string; refusals: Refusal[] } {
  const refusals: Refusal[] = [];
  let out = '';
  let i = 0;
  const n = pattern.length;
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? n : end + 2;
        out += pattern.slice(i, stop);
        i = stop;
      } else {
        out += pattern.slice(i, i + 2);
        i += 2;
      }
      continue;
    }
    if (c === '[') {
      const stop = classEnd(pattern, i);
      out += pattern.slice(i, stop);
      i = stop;
      continue;
    }
    // `(?~` itself is refused by both; it must not pass for a later marker.
    if (c === '(' && (pattern.startsWith('(?<', i) || pattern.startsWith(REFUSED, i))) {
      refusals.push({ error: `invalid or unsupported Perl syntax: \`${pattern.slice(i, i + 3)}\`` });
      out += REFUSED;
      i += 3;
      continue;
    }
    // Go reads `(?P<` as a named capture only with something after it.
    if (c === '(' && pattern.startsWith('(?P<', i) && i + 4 < n) {
      const close = pattern.indexOf('>', i + 4);
      if (close < 0) {
        refusals.push({ error: `invalid named capture: \`${pattern.slice(i)}\`` });
        out += REFUSED;
        i += 4;
        continue;
      }
      const name = pattern.slice(i + 4, close);
      if (name === '' || ![...name].every(isCaptureNameChar)) {
        refusals.push({ error: `invalid named capture: \`${pattern.slice(i, close + 1)}\`` });
        out += REFUSED;
        i += 4;
        continue;
      }
      out += '(';
      i = close + 1;
      continue;
    }
    out += c;
    i++;
  }
  return { rewritten: out, refusals };
}

/** The index just past the character class opening at `start` (`n` when it never closes). */
function classEnd(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === '^') i++;
  // A `]` first in the class is a literal.
  if (p[i] === ']') i++;
  while (i < p.length && p[i] !== ']') {
    if (p[i] === '[' && p[i + 1] === ':') {
      const end = p.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else if (p[i] === '\\') {
      i += 2;
    } else {
      i++;
    }
  }
  return Math.min(p.length, i + 1);
}

/**
 * Compiles `pattern` as Go's `regexp.Compile` does (kube 1.24's CRD `pattern`); throws
 * {@link GoRegExpSyntaxError} with Go's message for a pattern Go refuses.
 */
export function compileGoRegExp(pattern: string): GoRegExp {
  const { rewritten, refusals } = rewrite(pattern);
  let re: RE2JS;
  try {
    re = RE2JS.compile(rewritten);
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith(GO_PREFIX)) throw e;
    // Go and re2js both stop at the first error from the left: a marker's is the first refusal.
    if (refusals.length > 0 && e.message.endsWith(`\`${REFUSED}\``)) throw new GoRegExpSyntaxError(`${GO_PREFIX}${refusals[0]!.error}`);
    // Errors that quote the whole expression quote the client's, not the rewritten one.
    throw new GoRegExpSyntaxError(rewritten === pattern ? e.message : e.message.replace(`\`${rewritten}\``, `\`${pattern}\``));
  }
  return { source: pattern, test: (text) => re.test(text) };
}
