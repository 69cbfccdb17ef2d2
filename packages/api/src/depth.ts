/**
 * One nesting limit for everything that walks an object: request bodies in every encoding (JSON,
 * YAML, Protobuf), patch documents and their results, and each recursive algorithm (patches,
 * server-side apply, field sets, schema decoding, conversion). Inputs are measured before anything
 * recurses over them, and every recursive step checks its depth too, so no input can exhaust the
 * stack (a RangeError mid-request, or worse: V8 aborts the process when a regular expression
 * is compiled with the stack nearly gone, as the YAML parser did).
 *
 * kube's JSON decoder stops at 10,000 levels; the served kinds nest about 10 deep, custom
 * resources rarely 40. 100 keeps every recursion here far from the end of Node's stack.
 */

export const MAX_NESTING_DEPTH = 100;

/** Thrown when a value nests deeper than MAX_NESTING_DEPTH; answered 400 BadRequest. */
export class NestingTooDeepError extends Error {
  constructor(what = 'the object') {
    super(`${what} nests deeper than the limit of ${MAX_NESTING_DEPTH} levels`);
    this.name = 'NestingTooDeepError';
  }
}

export function isNestingTooDeep(e: unknown): e is NestingTooDeepError {
  return e instanceof NestingTooDeepError;
}

/**
 * For recursive algorithms: call with the depth of the step about to run (the top level is 1);
 * throws NestingTooDeepError past the limit.
 */
export function checkDepth(depth: number, what?: string): void {
  if (depth > MAX_NESTING_DEPTH) throw new NestingTooDeepError(what);
}

/** Whether a parsed value nests deeper than `max` (objects and arrays count one level each). Iterative. */
export function exceedsNestingDepth(value: unknown, max = MAX_NESTING_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, depth + 1]);
  }
  return false;
}

/** Whether JSON text nests deeper than `max`, by a scan of its brackets (no parse, no allocation). */
export function jsonTextExceedsDepth(text: string, max = MAX_NESTING_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
