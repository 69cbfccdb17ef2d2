/**
 * YAML request bodies, parsed without ever letting the YAML library recurse over input deeper
 * than the nesting limit. The library's composer is recursive: a 10,000-deep document overflowed
 * the stack, and the second such request aborted the process (V8 failed to compile a regular
 * expression with the stack exhausted). Its lexer and CST parser are iterative, so the document
 * is tokenised first, its depth measured on the CST without recursion, and only then composed.
 */
import { Composer, Parser, type CST } from 'yaml';
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

/**
 * Parses one YAML document into plain values. Throws NestingTooDeepError past the nesting limit
 * (also when aliases build a deeper value), YamlError for malformed YAML.
 */
export function parseYaml(text: string): unknown {
  const tokens = [...new Parser().parse(text)];
  const { tooDeep, aliases } = measure(tokens);
  if (tooDeep) throw new NestingTooDeepError('the YAML document');
  if (aliases > MAX_ALIASES) throw new YamlError(`the YAML document has more than ${MAX_ALIASES} aliases`);
  // Numbers as kube reads YAML (yaml-numbers.ts): exact int64, no Infinity.
  const docs = [...new Composer({ customTags: withKubeNumbers }).compose(tokens, true, text.length)];
  if (docs.length > 1) throw new YamlError('the request body holds more than one YAML document');
  const doc = docs[0];
  if (!doc) return null;
  const err = doc.errors[0];
  if (err) throw new YamlError(err.message);
  const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIASES });
  if (exceedsNestingDepth(value)) throw new NestingTooDeepError('the YAML document');
  return value;
}
