// Label selectors with kube's semantics (k8s.io/apimachinery/pkg/labels):
// the labels.Parse grammar, its lexer, error texts, matching rules, and
// metav1.LabelSelectorAsSelector. Selectors are parsed once into immutable
// requirement lists; matching allocates nothing for the common operators.
import { SelectorParseError, goQuote, invalidValue } from './errors.js';
import { type Item, scan } from './label-lexer.js';
import { isQualifiedName, isValidLabelValue } from '../validation.js';

export { SelectorParseError } from './errors.js';

/** kube's selection.Operator strings. */
export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted, de-duplicated; empty for exists / does-not-exist. */
  readonly values: readonly string[];
}

export type Labels = Readonly<Record<string, string>> | null | undefined;

export interface LabelSelector {
  matches(labels: Labels): boolean;
  /** True when the selector does not restrict anything (matches everything). */
  empty(): boolean;
  toString(): string;
  /** Requirements sorted by key; empty for both everything and nothing. */
  readonly requirements: readonly LabelRequirement[];
  /** Value when the selector pins `label` to one value (=, ==, or in with one value). */
  requiresExactMatch(label: string): string | undefined;
}

const int64Re = /^[+-]?[0-9]+$/;
const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** Go strconv.ParseInt(s, 10, 64); undefined on failure. */
function parseInt64(s: string): bigint | undefined {
  if (!int64Re.test(s)) return undefined;
  const v = BigInt(s);
  return v < int64Min || v > int64Max ? undefined : v;
}

class Requirement implements LabelRequirement {
  private readonly set: ReadonlySet<string> | undefined;
  private readonly num: bigint | undefined;
  constructor(
    readonly key: string,
    readonly operator: LabelOperator,
    readonly values: readonly string[],
  ) {
    this.set = values.length > 4 ? new Set(values) : undefined;
    this.num = operator === 'gt' || operator === 'lt' ? parseInt64(values[0] ?? '') : undefined;
  }

  private hasValue(v: string): boolean {
    if (this.set !== undefined) return this.set.has(v);
    const vs = this.values;
    for (let i = 0; i < vs.length; i++) if (vs[i] === v) return true;
    return false;
  }

  matches(labels: Labels): boolean {
    const v = labels != null && Object.hasOwn(labels, this.key) ? labels[this.key] : undefined;
    switch (this.operator) {
      case 'in':
      case '=':
      case '==':
        return v !== undefined && this.hasValue(v);
      case 'notin':
      case '!=':
        return v === undefined || !this.hasValue(v);
      case 'exists':
        return v !== undefined;
      case '!':
        return v === undefined;
      case 'gt':
      case 'lt': {
        if (v === undefined || this.num === undefined) return false;
        const n = parseInt64(v);
        if (n === undefined) return false;
        return this.operator === 'gt' ? n > this.num : n < this.num;
      }
    }
  }

  toString(): string {
    const op = this.operator;
    if (op === 'exists') return this.key;
    if (op === '!') return '!' + this.key;
    const vals = this.values.join(',');
    switch (op) {
      case 'in': return `${this.key} in (${vals})`;
      case 'notin': return `${this.key} notin (${vals})`;
      case 'gt': return `${this.key}>${vals}`;
      case 'lt': return `${this.key}<${vals}`;
      default: return this.key + op + vals;
    }
  }
}

class InternalSelector implements LabelSelector {
  constructor(readonly requirements: readonly Requirement[]) {}
  matches(labels: Labels): boolean {
    const rs = this.requirements;
    for (let i = 0; i < rs.length; i++) if (!rs[i]!.matches(labels)) return false;
    return true;
  }
  empty(): boolean {
    return this.requirements.length === 0;
  }
  toString(): string {
    return this.requirements.map((r) => r.toString()).join(',');
  }
  requiresExactMatch(label: string): string | undefined {
    for (const r of this.requirements) {
      if (r.key !== label) continue;
      if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
      return undefined;
    }
    return undefined;
  }
}

const nothing: LabelSelector = Object.freeze({
  requirements: Object.freeze([]) as readonly LabelRequirement[],
  matches: () => false,
  empty: () => false,
  toString: () => '',
  requiresExactMatch: () => undefined,
});
const everything: LabelSelector = new InternalSelector([]);

/** labels.Everything(): matches every object. */
export function everythingLabelSelector(): LabelSelector {
  return everything;
}
/** labels.Nothing(): matches no object. */
export function nothingLabelSelector(): LabelSelector {
  return nothing;
}

function byKey(a: Requirement, b: Requirement): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function sortedUnique(vals: Iterable<string>): string[] {
  return [...new Set(vals)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * labels.NewRequirement: validates and builds one requirement, throwing the
 * first error as kube 1.24 does. `checkKey` is false when the parser already
 * validated the key (it reports it under the "<nil>" path instead of "key").
 */
function newRequirement(key: string, op: LabelOperator, vals: readonly string[] | null, checkKey: boolean): Requirement {
  if (checkKey) {
    const errs = isQualifiedName(key);
    if (errs.length > 0) throw new SelectorParseError(invalidValue('key', key, errs.join('; ')));
  }
  const values = vals ?? [];
  const badCount = (detail: string): never => {
    throw new SelectorParseError(`values: Invalid value: ${JSON.stringify(vals)}: ${detail}`);
  };
  switch (op) {
    case 'in':
    case 'notin':
      if (values.length === 0) badCount("for 'in', 'notin' operators, values set can't be empty");
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) badCount('exact-match compatibility requires one single value');
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) badCount('values set must be empty for exists and does not exist');
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) badCount("for 'Gt', 'Lt' operators, exactly one value is required");
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          throw new SelectorParseError(invalidValue(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
  }
  values.forEach((v, i) => {
    const errs = isValidLabelValue(v);
    if (errs.length > 0) throw new SelectorParseError(invalidValue(`values[${i}][${key}]`, v, errs.join('; ')));
  });
  return new Requirement(key, op, sortedUnique(values));
}

// ---- parser (labels.Parser) -----------------------------------------------

const binaryOperators = 'in, notin, =, ==, !=, gt, lt';

class Parser {
  private position = 0;
  constructor(private readonly items: Item[]) {}

  /** In the Values context the keywords in/notin are plain identifiers. */
  private lookahead(values: boolean): Item {
    const it = this.items[this.position]!;
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }
  private consume(values: boolean): Item {
    const it = this.lookahead(values);
    this.position++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === 'eos') return reqs;
      if (tok !== 'id' && tok !== '!') throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      let r: Requirement;
      try {
        r = this.parseRequirement();
      } catch (e) {
        if (e instanceof SelectorParseError) throw new SelectorParseError(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      reqs.push(r);
      const next = this.consume(true);
      if (next.tok === 'eos') return reqs;
      if (next.tok !== ',') throw new SelectorParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead(true);
      if (after.tok !== 'id' && after.tok !== '!') {
        throw new SelectorParseError(`found '${after.lit}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): Requirement {
    let { tok, lit } = this.consume(true);
    let op: LabelOperator | undefined;
    if (tok === '!') {
      op = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== 'id') throw new SelectorParseError(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    if (keyErrs.length > 0) throw new SelectorParseError(invalidValue('<nil>', lit, keyErrs.join('; ')));
    const key = lit;
    const la = this.lookahead(true).tok;
    if ((la === 'eos' || la === ',') && op !== '!') op = 'exists';
    if (op === 'exists' || op === '!') return newRequirement(key, op, [], false);

    const opItem = this.consume(false);
    switch (opItem.tok) {
      case 'in': op = 'in'; break;
      case '=': op = '='; break;
      case '==': op = '=='; break;
      case '>': op = 'gt'; break;
      case '<': op = 'lt'; break;
      case 'notin': op = 'notin'; break;
      case '!=': op = '!='; break;
      default: throw new SelectorParseError(`found '${opItem.lit}', expected: ${binaryOperators}`);
    }
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, sortedUnique(values), false);
  }

  private parseValues(): string[] {
    const open = this.consume(true);
    if (open.tok !== '(') throw new SelectorParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    if (tok === ')') {
      this.consume(true);
      return [''];
    }
    if (tok !== 'id' && tok !== ',') throw new SelectorParseError(`found '${lit}', expected: ',', ')' or identifier`);
    const s = this.parseIdentifiersList();
    if (this.consume(true).tok !== ')') throw new SelectorParseError(`found '${lit}', expected: ')'`);
    return s;
  }

  private parseIdentifiersList(): string[] {
    const s: string[] = [];
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === 'id') {
        s.push(lit);
        const next = this.lookahead(true);
        if (next.tok === ',') continue;
        if (next.tok === ')') return s;
        throw new SelectorParseError(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === ',') {
        if (s.length === 0) s.push(''); // "(,"
        const next = this.lookahead(true).tok;
        if (next === ')') {
          s.push(''); // ",)"
          return s;
        }
        if (next === ',') {
          this.consume(true);
          s.push(''); // ",,"
        }
      } else {
        throw new SelectorParseError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): string[] {
    const la = this.lookahead(true).tok;
    if (la === 'eos' || la === ',') return [''];
    const { tok, lit } = this.consume(true);
    if (tok === 'id') return [lit];
    throw new SelectorParseError(`found '${lit}', expected: identifier`);
  }
}

/**
 * labels.Parse. Throws SelectorParseError with kube's message. The empty (or
 * all-whitespace) string yields a selector that matches everything.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const reqs = new Parser(scan(text)).parse();
  if (reqs.length === 0) return everything;
  reqs.sort(byKey); // Array.prototype.sort is stable
  return new InternalSelector(reqs);
}

export interface LabelSelectorRequirementObject {
  key: string;
  operator: string;
  values?: readonly string[] | null;
}
export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>> | null;
  matchExpressions?: readonly LabelSelectorRequirementObject[] | null;
}

const metav1Operators: ReadonlyMap<string, LabelOperator> = new Map<string, LabelOperator>([
  ['In', 'in'], ['NotIn', 'notin'], ['Exists', 'exists'], ['DoesNotExist', '!'],
]);

/**
 * metav1.LabelSelectorAsSelector: null/undefined selects nothing, an empty
 * selector selects everything. Throws SelectorParseError for invalid keys,
 * values or operators.
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel == null) return nothing;
  const ml = sel.matchLabels ?? {};
  const me = sel.matchExpressions ?? [];
  const mlKeys = Object.keys(ml);
  if (mlKeys.length + me.length === 0) return everything;
  const reqs: Requirement[] = [];
  for (const k of mlKeys) reqs.push(newRequirement(k, '=', [ml[k]!], true));
  for (const expr of me) {
    const op = metav1Operators.get(expr.operator);
    if (op === undefined) throw new SelectorParseError(`${goQuote(expr.operator)} is not a valid pod selector operator`);
    const vals = expr.values == null || expr.values.length === 0 ? null : [...expr.values];
    reqs.push(newRequirement(expr.key, op, vals, true));
  }
  reqs.sort(byKey);
  return new InternalSelector(reqs);
}
