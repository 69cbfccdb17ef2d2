/**
 * A diff of two decoded objects in the form of go-cmp's `cmp.Diff`, which kube prints in the
 * "pod updates may not change fields" and "ephemeral containers may not be changed" errors.
 * go-cmp's output is unstable by design (it varies its spacing between runs), so plinth keeps its
 * form, not its bytes: the Go type, the fields in Go's order (go-types.ts) with `-`/`+` lines where
 * values differ, two equal records of context around a change, `... // N identical fields` for
 * the rest, and values aligned within a run of one-line records.
 */
import { asObject, isSet, num } from './access.js';
import { type GoField, goElemType, goStructFields } from './go-types.js';
import { isZeroValue, semanticEqual } from './pod-equality.js';

const CONTEXT = 2;

interface Line {
  mark: ' ' | '-' | '+';
  depth: number;
  /** The record's key (`Name:` or `"k":`) when the record is one line; aligned with its neighbours. */
  key?: string;
  text: string;
}

/** Go field names of JSON members of types plinth does not describe: a capital first letter, Go's initialisms. */
const INITIALISMS: Record<string, string> = { ip: 'IP', uid: 'UID', apiVersion: 'APIVersion', httpGet: 'HTTPGet', tcpSocket: 'TCPSocket', grpc: 'GRPC', fsType: 'FSType' };
const goName = (k: string): string => INITIALISMS[k] ?? k.charAt(0).toUpperCase() + k.slice(1);

/** go-cmp's compact form of a value of a type plinth does not describe. */
function formatJSON(v: unknown): string {
  if (v === undefined || v === null) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map(formatJSON).join(', ')}}`;
  const o = asObject(v) ?? {};
  return `{${Object.entries(o)
    .filter(([, x]) => !isZeroValue(x))
    .map(([k, x]) => `${goName(k)}: ${formatJSON(x)}`)
    .join(', ')}}`;
}

function fieldValue(owner: unknown, f: GoField): unknown {
  return f.kind === 'embedded' ? (asObject(owner) ?? {}) : asObject(owner)?.[f.json];
}

/** go-cmp's compact form of a value of a known Go type; `withType` prints the type of a composite. */
function formatTyped(v: unknown, type: string, withType = false): string {
  if (type.startsWith('*')) return isSet(v) ? `&${formatTyped(v, type.slice(1))}` : 'nil';
  if (type.startsWith('[]')) {
    if (!Array.isArray(v)) return 'nil';
    return `${withType ? type : ''}{${v.map((x) => formatTyped(x, goElemType(type))).join(', ')}}`;
  }
  if (type.startsWith('map[') || type === 'core.ResourceList') {
    const o = asObject(v);
    if (!o) return 'nil';
    return `${withType ? type : ''}{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${formatJSON(o[k])}`)
      .join(', ')}}`;
  }
  const fields = goStructFields(type);
  if (fields) {
    const members = fields
      .filter((f) => !isZeroValue(fieldValue(v, f)) && !(f.kind === 'embedded' && formatTyped(fieldValue(v, f), f.type) === '{}'))
      .map((f) => `${f.name}: ${formatTyped(fieldValue(v, f), f.type)}`);
    return `${withType ? type : ''}{${members.join(', ')}}`;
  }
  if (type === 'bool') return v === true ? 'true' : 'false';
  if (type === 'int32' || type === 'int64') return typeof v === 'bigint' ? String(v) : String(num(v));
  if (type === 'string') return JSON.stringify(typeof v === 'string' ? v : '');
  return formatJSON(v);
}

const isComposite = (type: string): boolean => type.startsWith('[]') || type.startsWith('map[') || type === 'core.ResourceList' || goStructFields(type) !== undefined;

/** One record of a struct, slice or map: its key as printed, both values and their type. */
interface Rec {
  key: string;
  x: unknown;
  y: unknown;
  type: string;
  /** Whether the record exists only on one side (slice elements, map entries). */
  side?: '-' | '+';
}

/** go-cmp's diffing of a list of records, with elision of equal runs. */
function emitRecords(recs: Rec[], what: string, depth: number, lines: Line[]): void {
  const equal = recs.map((r) => r.side === undefined && semanticEqual(r.x, r.y));
  const oneLine = (r: Rec, v: unknown, mark: Line['mark']): void => {
    const typed = r.key !== '' && isComposite(r.type) && !r.type.startsWith('map') && r.type !== 'core.ResourceList' && v !== undefined && v !== null;
    lines.push({ mark, depth, key: r.key === '' ? undefined : `${r.key}:`, text: `${formatTyped(v, r.type, typed && mark !== ' ')},` });
  };
  let i = 0;
  while (i < recs.length) {
    if (equal[i]) {
      let end = i;
      while (end < recs.length && equal[end]) end++;
      const n = end - i;
      const lo = i === 0 ? 0 : Math.min(CONTEXT, n);
      let hi = end === recs.length ? 0 : Math.min(CONTEXT, n - lo);
      if (n - (lo + hi) === 1) hi++;
      for (let k = i; k < i + lo; k++) oneLine(recs[k]!, recs[k]!.x, ' ');
      if (n > lo + hi) lines.push({ mark: ' ', depth, text: `... // ${n - lo - hi} identical ${what}` });
      for (let k = end - hi; k < end; k++) oneLine(recs[k]!, recs[k]!.x, ' ');
      i = end;
      continue;
    }
    const r = recs[i++]!;
    if (r.side === '-') oneLine(r, r.x, '-');
    else if (r.side === '+') oneLine(r, r.y, '+');
    else if (!emitNested(r, depth, lines)) {
      oneLine(r, r.x, '-');
      oneLine(r, r.y, '+');
    }
  }
}

/** A changed composite whose both sides exist: its type, then its own records one level down. */
function emitNested(r: Rec, depth: number, lines: Line[]): boolean {
  const type = r.type.startsWith('*') ? r.type.slice(1) : r.type;
  const ptr = r.type.startsWith('*') ? '&' : '';
  const known = goStructFields(type);
  const x = r.x;
  const y = r.y;
  const key = r.key === '' ? '' : `${r.key}: `;
  const shownType = r.key === '' ? '' : type;
  if (type.startsWith('[]') && Array.isArray(x) && Array.isArray(y)) {
    lines.push({ mark: ' ', depth, text: `${key}${shownType}{` });
    emitRecords(sliceRecords(x, y, goElemType(type)), 'elements', depth + 1, lines);
  } else if ((type.startsWith('map[') || type === 'core.ResourceList') && asObject(x) && asObject(y)) {
    lines.push({ mark: ' ', depth, text: `${key}${shownType}{` });
    emitRecords(mapRecords(asObject(x)!, asObject(y)!), 'entries', depth + 1, lines);
  } else if (asObject(x) && asObject(y) && !Array.isArray(x) && !Array.isArray(y)) {
    lines.push({ mark: ' ', depth, text: `${key}${ptr}${known ? shownType : ''}{` });
    emitRecords(known ? structRecords(known, x, y) : jsonRecords(asObject(x)!, asObject(y)!), 'fields', depth + 1, lines);
  } else return false;
  lines.push({ mark: ' ', depth, text: '},' });
  return true;
}

function structRecords(fields: GoField[], x: unknown, y: unknown): Rec[] {
  return fields.map((f) => ({ key: f.name, x: fieldValue(x, f), y: fieldValue(y, f), type: f.type }));
}

/** The members of objects of types plinth does not describe, in JSON order. */
function jsonRecords(x: Record<string, unknown>, y: Record<string, unknown>): Rec[] {
  const keys = [...Object.keys(x), ...Object.keys(y).filter((k) => !Object.hasOwn(x, k))];
  return keys.map((k) => ({ key: goName(k), x: x[k], y: y[k], type: typeof (x[k] ?? y[k]) === 'string' ? 'string' : '?' }));
}

function mapRecords(x: Record<string, unknown>, y: Record<string, unknown>): Rec[] {
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
  return keys.map((k): Rec => {
    const side = !Object.hasOwn(y, k) ? '-' : !Object.hasOwn(x, k) ? '+' : undefined;
    return { key: JSON.stringify(k), x: x[k], y: y[k], type: '?', ...(side ? { side } : {}) };
  });
}

/** Slice elements: pairwise when the lengths agree, else aligned on their longest common run. */
function sliceRecords(x: unknown[], y: unknown[], elem: string): Rec[] {
  if (x.length === y.length) return x.map((v, i) => ({ key: '', x: v, y: y[i], type: elem }));
  const n = x.length;
  const m = y.length;
  const t: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) t[i]![j] = semanticEqual(x[i], y[j]) ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
  const recs: Rec[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && semanticEqual(x[i], y[j])) recs.push({ key: '', x: x[i++], y: y[j++], type: elem });
    else if (j >= m || (i < n && t[i + 1]![j]! >= t[i]![j + 1]!)) recs.push({ key: '', x: x[i++], y: undefined, type: elem, side: '-' });
    else recs.push({ key: '', x: undefined, y: y[j++], type: elem, side: '+' });
  }
  return recs;
}

/** go-cmp's alignment: values of consecutive one-line keyed records at one depth start in one column. */
function align(lines: Line[]): void {
  let i = 0;
  while (i < lines.length) {
    const l = lines[i]!;
    if (l.key === undefined) {
      i++;
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end]!.key !== undefined && lines[end]!.depth === l.depth) end++;
    const width = Math.max(...lines.slice(i, end).map((x) => x.key!.length));
    for (let k = i; k < end; k++) lines[k]!.key = lines[k]!.key!.padEnd(width + 1);
    i = end;
  }
}

/** go-cmp's `Diff(old, new)` of two values of the named Go struct type, as kube prints it. */
export function goDiff(oldValue: unknown, newValue: unknown, typeName: string): string {
  const lines: Line[] = [{ mark: ' ', depth: 0, text: `${typeName}{` }];
  const fields = goStructFields(typeName);
  const x = asObject(oldValue) ?? {};
  const y = asObject(newValue) ?? {};
  emitRecords(fields ? structRecords(fields, x, y) : jsonRecords(x, y), 'fields', 1, lines);
  lines.push({ mark: ' ', depth: 0, text: '}' });
  align(lines);
  return `${lines.map((l) => `${l.mark} ${'\t'.repeat(l.depth)}${l.key ?? ''}${l.text}`).join('\n')}\n`;
}
