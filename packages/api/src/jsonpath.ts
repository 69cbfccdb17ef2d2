/**
 * The JSONPath subset custom resources use in `additionalPrinterColumns` (kube's client-go
 * jsonpath as the CRD table convertor runs it): `.a.b`, `.a[0]`, `.a[*]`, `['key.with.dots']` and
 * `[?(@.type=="Ready")]` filters. Compiled once per CRD change, evaluated per row.
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: Step[]; op: '==' | '!='; value: unknown };

export class JSONPathError extends Error {}

/** A compiled path: `find` returns every value it reaches (none when a field is missing). */
export interface JSONPath {
  find(root: unknown): unknown[];
}

function parseSteps(src: string, at: { i: number }, stopAt: string): Step[] {
  const steps: Step[] = [];
  while (at.i < src.length && !stopAt.includes(src[at.i]!)) {
    const c = src[at.i]!;
    if (c === '.') {
      at.i++;
      let name = '';
      while (at.i < src.length && /[^.[\]\s=!)]/.test(src[at.i]!)) name += src[at.i++];
      if (name === '*') steps.push({ kind: 'all' });
      else if (name) steps.push({ kind: 'field', name });
      else throw new JSONPathError(`unexpected end of path at ${at.i}`);
    } else if (c === '[') {
      at.i++;
      const rest = src.slice(at.i);
      let m: RegExpExecArray | null;
      if ((m = /^\s*(-?\d+)\s*\]/.exec(rest))) {
        steps.push({ kind: 'index', index: Number(m[1]) });
        at.i += m[0].length;
      } else if ((m = /^\s*\*\s*\]/.exec(rest))) {
        steps.push({ kind: 'all' });
        at.i += m[0].length;
      } else if ((m = /^\s*'([^']*)'\s*\]/.exec(rest)) || (m = /^\s*"([^"]*)"\s*\]/.exec(rest))) {
        steps.push({ kind: 'field', name: m[1]! });
        at.i += m[0].length;
      } else if ((m = /^\?\(\s*@/.exec(rest))) {
        at.i += m[0].length;
        const path = parseSteps(src, at, '=!)');
        const op = /^\s*(==|!=)\s*/.exec(src.slice(at.i));
        if (!op) throw new JSONPathError(`unsupported filter in ${src}`);
        at.i += op[0].length;
        const lit = /^("(?:[^"\\]|\\.)*"|'[^']*'|-?\d+(?:\.\d+)?|true|false)\s*\)\s*\]/.exec(src.slice(at.i));
        if (!lit) throw new JSONPathError(`unsupported filter value in ${src}`);
        at.i += lit[0].length;
        const raw = lit[1]!;
        const value = raw.startsWith("'") ? raw.slice(1, -1) : JSON.parse(raw);
        steps.push({ kind: 'filter', path, op: op[1] as '==' | '!=', value });
      } else {
        throw new JSONPathError(`unsupported subscript in ${src}`);
      }
    } else {
      throw new JSONPathError(`unexpected ${JSON.stringify(c)} in ${src}`);
    }
  }
  return steps;
}

function walk(values: unknown[], steps: Step[]): unknown[] {
  let cur = values;
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (step.kind === 'field') {
        if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, step.name)) next.push((v as Record<string, unknown>)[step.name]);
      } else if (step.kind === 'index') {
        if (Array.isArray(v)) {
          const i = step.index < 0 ? v.length + step.index : step.index;
          if (i >= 0 && i < v.length) next.push(v[i]);
        }
      } else if (step.kind === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (v && typeof v === 'object') next.push(...Object.values(v));
      } else {
        const items = Array.isArray(v) ? v : [];
        for (const item of items) {
          const found = walk([item], step.path);
          const eq = found.length > 0 && found[0] === step.value;
          if (step.op === '==' ? eq : found.length > 0 && !eq) next.push(item);
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** Compiles a path such as `.spec.replicas` or `{.spec.replicas}`; throws JSONPathError. */
export function compileJSONPath(path: string): JSONPath {
  let src = path.trim();
  if (src.startsWith('{') && src.endsWith('}')) src = src.slice(1, -1).trim();
  if (src.startsWith('$')) src = src.slice(1);
  const at = { i: 0 };
  const steps = parseSteps(src, at, '');
  return { find: (root) => walk([root], steps) };
}
