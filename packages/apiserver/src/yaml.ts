/**
 * YAML request bodies, parsed without ever letting the YAML library recurse over input deeper
 * than the nesting limit. The library's composer is recursive: a 10,000-deep document overflowed
 * the stack, and the second such request aborted the process (V8 failed to compile a regular
 * expression with the stack exhausted). Its lexer and CST parser are iterative, so the document
 * is tokenised first, its depth measured on the CST without recursion, and only then composed.
 *
 * Duplicate keys are not the library's business: its check compares each key with every earlier
 * key of the map (a 40,000-key flow map held the event loop for over a minute). kube's decoder
 * (sigs.k8s.io/yaml over yaml.v2) keeps the last value of a duplicate key and reports duplicates
 * only when a strict decode asks; {@link parseYaml} does the same, with one Set per map.
 */
import { Composer, Parser, isMap, isPair, isScalar, isSeq, type CST, type Node, type Pair } from 'yaml';
import { MAX_NESTING_DEPTH, NestingTooDeepError, exceedsNestingDepth } from '@plinth/api';
import { withKubeNumbers } from './yaml-numbers.js';

/** Aliases allowed in one document: each may expand a shared subtree (kube's decoder caps them too). */
const MAX_ALIASES = 100;

export class YamlError extends Error {}

/** Whether a CST nests collections deeper than the limit; counts aliases on the way. Iterative. */
function measure(tokens: readonly CST.Token[]): { tooDeep: boolean; aliases: number } {
  const stack: Array<[CST.Token | null | undefined, number]> = tokens.map((t) => [t, 0]);
  let aliases = 0;
  while (stack.length > 0) {
    const [t, depth] = stack.pop()!;
    if (!t) continue;
    switch (t.type) {
      case 'document':
        stack.push([t.value, depth]);
        break;
      case 'alias':
        aliases++;
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        if (depth + 1 > MAX_NESTING_DEPTH) return { tooDeep: true, aliases };
        for (const item of t.items) {
          if ('key' in item) stack.push([item.key, depth + 1]);
          stack.push([item.value, depth + 1]);
        }
        break;
      default:
        break;
    }
  }
  return { tooDeep: false, aliases };
}

/** What {@link parseYaml} may also report besides the value. */
export interface YamlParseOptions {
  /**
   * Receives one message per duplicate map key, in yaml.v2's strict wording
   * (`line 5: key "name" already set in map`); the value keeps the last one either way.
   */
  duplicateKeys?: string[];
}

/** Go's `%#v` of a decoded YAML map key, as yaml.v2's "already set in map" prints it. */
function goKey(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return '<nil>';
  return String(v);
}

/**
 * Every duplicate scalar key of every map under `root`, in the order yaml.v2 reports them: one pass with a Set
 * per map (iterative; the depth was bounded before composing). yaml.v2 names the line of the
 * duplicate's value node; lines are counted only once a duplicate is found.
 */
function findDuplicateKeys(root: unknown, text: string, out: string[]): void {
  let lineStarts: number[] | undefined;
  const lineOf = (offset: number): number => {
    if (!lineStarts) {
      lineStarts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
    }
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  // yaml.v2's order: a pair's value is decoded (its own duplicates reported) before the pair's key
  // is set in its map. Depth-first, iterative: children are pushed in reverse, each pair's check
  // above its value.
  const stack: Array<unknown | KeyCheck> = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node instanceof KeyCheck) {
      const key: unknown = node.pair.key;
      if (!isScalar(key)) continue;
      // yaml.v2 keys are typed: `1` and `"1"` are different keys.
      const id = `${typeof key.value}:${String(key.value)}`;
      if (!node.seen.has(id)) {
        node.seen.add(id);
        continue;
      }
      const at = (node.pair.value as Node | null)?.range?.[0] ?? key.range?.[0] ?? 0;
      out.push(`line ${lineOf(at)}: key ${goKey(key.value)} already set in map`);
    } else if (isMap(node)) {
      const seen = new Set<string>();
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(new KeyCheck(node.items[i]!, seen), node.items[i]!.value);
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    } else if (isPair(node)) {
      stack.push(node.value);
    }
    // Scalars have nothing inside; an alias repeats a node visited where its anchor is.
  }
}

/** The duplicate check of one map pair, against the keys its map has set so far. */
class KeyCheck {
  constructor(
    readonly pair: Pair,
    readonly seen: Set<string>,
  ) {}
}

/**
 * Parses one YAML document into plain values. Throws NestingTooDeepError past the nesting limit
 * (also when aliases build a deeper value), YamlError for malformed YAML. A duplicate key keeps
 * its last value, as kube's non-strict decode does; `opts.duplicateKeys` collects them.
 */
export function parseYaml(text: string, opts: YamlParseOptions = {}): unknown {
  const tokens = [...new Parser().parse(text)];
  const { tooDeep, aliases } = measure(tokens);
  if (tooDeep) throw new NestingTooDeepError('the YAML document');
  if (aliases > MAX_ALIASES) throw new YamlError(`the YAML document has more than ${MAX_ALIASES} aliases`);
  // Numbers as kube reads YAML (yaml-numbers.ts): exact int64, no Infinity. Duplicate keys are
  // checked after composing, in linear time.
  const docs = [...new Composer({ customTags: withKubeNumbers, uniqueKeys: false }).compose(tokens, true, text.length)];
  if (docs.length > 1) throw new YamlError('the request body holds more than one YAML document');
  const doc = docs[0];
  if (!doc) return null;
  const err = doc.errors[0];
  if (err) throw new YamlError(err.message);
  if (opts.duplicateKeys) findDuplicateKeys(doc.contents, text, opts.duplicateKeys);
  const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIASES });
  if (exceedsNestingDepth(value)) throw new NestingTooDeepError('the YAML document');
  return value;
}
