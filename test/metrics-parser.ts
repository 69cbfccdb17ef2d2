/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: every line must be a
 * HELP, TYPE, comment or sample line; HELP and TYPE at most once per family and before its
 * samples; every sample belongs to a declared family (histograms: _bucket, _sum, _count);
 * label values use only the format's escapes; no sample is repeated; histogram buckets are
 * cumulative, ascending, end with le="+Inf", and +Inf equals _count.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string | undefined;
  type: MetricType;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {}

function fail(lineNo: number, msg: string, line: string): never {
  throw new ExpositionError(`line ${lineNo}: ${msg}: ${JSON.stringify(line)}`);
}

function unescapeHelp(s: string, lineNo: number, line: string): string {
  return s.replace(/\\(.?)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    return fail(lineNo, `bad escape \\${c} in HELP`, line);
  });
}

function parseValue(s: string, lineNo: number, line: string): number {
  if (s === '+Inf' || s === 'Inf') return Number.POSITIVE_INFINITY;
  if (s === '-Inf') return Number.NEGATIVE_INFINITY;
  if (s === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) fail(lineNo, `bad value ${s}`, line);
  return Number(s);
}

/** Parses `{a="x",b="y"}` starting at `i` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, i: number, lineNo: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  i++;
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const eq = line.indexOf('=', i);
    if (eq < 0) fail(lineNo, 'label without =', line);
    const name = line.slice(i, eq);
    if (!LABEL_NAME.test(name)) fail(lineNo, `bad label name ${name}`, line);
    if (name in labels) fail(lineNo, `label ${name} repeated`, line);
    if (line[eq + 1] !== '"') fail(lineNo, 'label value not quoted', line);
    let j = eq + 2;
    let value = '';
    for (;;) {
      const c = line[j];
      if (c === undefined) fail(lineNo, 'unterminated label value', line);
      if (c === '"') break;
      if (c === '\\') {
        const n = line[j + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else fail(lineNo, `bad escape \\${n ?? ''} in label value`, line);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') fail(lineNo, 'expected , or } after a label', line);
  }
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  const direct = families.get(sampleName);
  if (direct) return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const f = families.get(sampleName.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines[lines.length - 1] !== '') throw new ExpositionError('the exposition does not end with a newline');
  lines.pop();
  lines.forEach((line, idx) => {
    const lineNo = idx + 1;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) fail(lineNo, `bad metric name ${name}`, line);
      if (kind === 'HELP') {
        if (helps.has(name)) fail(lineNo, 'HELP repeated', line);
        if (families.get(name)?.samples.length) fail(lineNo, 'HELP after samples', line);
        helps.set(name, unescapeHelp(rest, lineNo, line));
        const f = families.get(name);
        if (f) f.help = helps.get(name);
        return;
      }
      if (!TYPES.has(rest as MetricType)) fail(lineNo, `unknown type ${rest}`, line);
      if (families.has(name)) fail(lineNo, 'TYPE repeated', line);
      families.set(name, { name, help: helps.get(name), type: rest as MetricType, samples: [] });
      return;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) fail(lineNo, 'not a sample', line);
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) fail(lineNo, `bad metric name ${name}`, line);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (line[i] === '{') ({ labels, end: i } = parseLabels(line, i, lineNo));
    if (line[i] !== ' ') fail(lineNo, 'expected a space before the value', line);
    const parts = line.slice(i + 1).split(' ');
    if (parts.length < 1 || parts.length > 2 || parts[0] === '') fail(lineNo, 'bad value/timestamp', line);
    const value = parseValue(parts[0]!, lineNo, line);
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1]!)) fail(lineNo, 'bad timestamp', line);
    const family = familyOf(families, name);
    if (!family) fail(lineNo, `sample of no declared family`, line);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) fail(lineNo, 'sample repeated', line);
    seen.add(key);
    if (family.type === 'histogram' && name.endsWith('_bucket') && labels['le'] === undefined) fail(lineNo, 'bucket without le', line);
    family.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function seriesKey(labels: Record<string, string>, without: string): string {
  return JSON.stringify(Object.entries(labels).filter(([k]) => k !== without).sort());
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  const get = (labels: Record<string, string>, without = '') => {
    const k = seriesKey(labels, without);
    let s = series.get(k);
    if (!s) series.set(k, (s = { buckets: [] }));
    return s;
  };
  for (const s of f.samples) {
    if (s.name === `${f.name}_bucket`) get(s.labels, 'le').buckets.push([parseValue(s.labels['le']!, 0, s.labels['le']!), s.value]);
    else if (s.name === `${f.name}_sum`) get(s.labels).sum = s.value;
    else if (s.name === `${f.name}_count`) get(s.labels).count = s.value;
    else throw new ExpositionError(`${f.name}: unexpected sample ${s.name}`);
  }
  for (const [k, s] of series) {
    if (s.sum === undefined || s.count === undefined) throw new ExpositionError(`${f.name}${k}: _sum or _count missing`);
    const b = s.buckets;
    if (b.length === 0 || b[b.length - 1]![0] !== Number.POSITIVE_INFINITY) throw new ExpositionError(`${f.name}${k}: no le="+Inf" bucket last`);
    for (let i = 1; i < b.length; i++) {
      if (!(b[i]![0] > b[i - 1]![0])) throw new ExpositionError(`${f.name}${k}: buckets not ascending`);
      if (b[i]![1] < b[i - 1]![1]) throw new ExpositionError(`${f.name}${k}: buckets not cumulative`);
    }
    if (b[b.length - 1]![1] !== s.count) throw new ExpositionError(`${f.name}${k}: +Inf bucket ${b[b.length - 1]![1]} != _count ${s.count}`);
  }
}

/** The value of the sample `name` whose labels include `match`; undefined when none (throws when several). */
export function valueOf(families: Map<string, Family>, name: string, match: Record<string, string>): number | undefined {
  const found = samplesOf(families, name, match);
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(match)}: ${found.length} samples match`);
  return found[0]?.value;
}

/** Every sample `name` whose labels include `match`. */
export function samplesOf(families: Map<string, Family>, name: string, match: Record<string, string> = {}): Sample[] {
  const f = familyOf(families, name);
  if (!f) return [];
  return f.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** The upper bounds of a histogram's buckets (one series), without +Inf. */
export function bucketsOf(families: Map<string, Family>, name: string): number[] {
  const f = families.get(name);
  const first = f?.samples.find((s) => s.name === `${name}_bucket`);
  if (!f || !first) return [];
  const key = seriesKey(first.labels, 'le');
  return f.samples
    .filter((s) => s.name === `${name}_bucket` && seriesKey(s.labels, 'le') === key)
    .map((s) => (s.labels['le'] === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels['le'])))
    .filter((v) => v !== Number.POSITIVE_INFINITY);
}
