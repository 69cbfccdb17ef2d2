/**
 * Result rows (scenario, plinth, floor, raw etcd, ratio, target, met?), the aligned table and the
 * JSON file. A row's ratio is plinth ÷ raw unless it says otherwise: `vs: 'floor'` divides by the
 * floor server's figure (bench/floor/), `of: 'floor'` puts the floor's figure on top (the floor's
 * own rows against raw etcd). A ratio target applies to that ratio and its text names the base.
 * The floor runs with plinth's own etcd client (FastKV) unless the row names another one
 * (`floorName`, e.g. `floor (etcd3)`), which the ratio and target columns then show.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A goal on a row: on its ratio (see Row.vs, Row.of), or on plinth's figure alone. */
export type Target =
  | { kind: 'ratioAtLeast'; value: number }
  | { kind: 'ratioAtMost'; value: number }
  | { kind: 'plinthAtMost'; value: number; unit: string }
  | { kind: 'plinthAtLeast'; value: number; unit: string }
  | { kind: 'plinthEquals'; value: number; text: string }
  /** On the floor's own figure (a row about the floor, `of: 'floor'`). */
  | { kind: 'floorEquals'; value: number; text: string }
  | { kind: 'none' };

export interface Row {
  scenario: string;
  unit: string;
  plinth: number | null;
  raw: number | null;
  /** The node:https floor's figure in the same run (bench/floor/), when the row has one. */
  floor?: number | null;
  /** The ratio's denominator: raw etcd (default) or the floor. */
  vs?: 'raw' | 'floor';
  /** The ratio's numerator: plinth (default) or the floor (the floor against raw etcd). */
  of?: 'plinth' | 'floor';
  /** Which floor the `floor` figure is, when not the default one (`floor (etcd3)`). */
  floorName?: string;
  target: Target;
  /** Overrides the computed met? (e.g. a goal with several conditions). */
  met?: boolean;
  note?: string;
  /**
   * Why there is no figure (the server never got ready, a request failed): the table shows
   * FAILED in plinth's column and this reason among the notes, and the target is not met.
   */
  failure?: string;
}

export interface RowOut extends Row {
  ratio: number | null;
  targetText: string;
  metResult: boolean | null;
}

export function evaluate(row: Row): RowOut {
  const top = row.of === 'floor' ? (row.floor ?? null) : row.plinth;
  const base = row.vs === 'floor' ? (row.floor ?? null) : row.raw;
  const ratio = top !== null && base !== null && base !== 0 ? top / base : null;
  const baseName = row.vs === 'floor' ? (row.floorName ?? 'floor') : 'raw';
  let targetText = '';
  let met: boolean | null = null;
  const t = row.target;
  switch (t.kind) {
    case 'ratioAtLeast':
      targetText = `≥ ${t.value}× ${baseName}`;
      met = ratio === null ? false : ratio >= t.value;
      break;
    case 'ratioAtMost':
      targetText = `≤ ${t.value}× ${baseName}`;
      met = ratio === null ? false : ratio <= t.value;
      break;
    case 'plinthAtMost':
      targetText = `≤ ${t.value} ${t.unit}`;
      met = row.plinth === null ? false : row.plinth <= t.value;
      break;
    case 'plinthAtLeast':
      targetText = `≥ ${t.value.toLocaleString('en-US')} ${t.unit}`;
      met = row.plinth === null ? false : row.plinth >= t.value;
      break;
    case 'plinthEquals':
      targetText = t.text;
      met = row.plinth === t.value;
      break;
    case 'floorEquals':
      targetText = t.text;
      met = row.floor === t.value;
      break;
    case 'none':
      break;
  }
  if (row.met !== undefined) met = row.met;
  if (row.failure !== undefined) met = t.kind === 'none' ? null : false;
  return { ...row, ratio, targetText, metResult: met };
}

function fmt(v: number | null, unit: string): string {
  if (v === null) return '—';
  const digits = Math.abs(v) >= 100 || Number.isInteger(v) ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  const n = v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return unit ? `${n} ${unit}` : n;
}

export function formatTable(rows: RowOut[]): string {
  const header = ['scenario', 'plinth', 'floor', 'raw etcd', 'ratio', 'target', 'met?'];
  const cells = rows.map((r) => [
    r.scenario,
    r.failure !== undefined ? 'FAILED' : fmt(r.plinth, r.unit),
    fmt(r.floor ?? null, r.unit),
    fmt(r.raw, r.unit),
    r.ratio === null ? '—' : `${r.of === 'floor' ? `${r.floorName ?? 'floor'} ` : ''}${r.ratio.toFixed(2)}×${r.vs === 'floor' ? ` ${r.floorName ?? 'floor'}` : r.of === 'floor' ? ' raw' : ''}`,
    r.targetText || '—',
    r.metResult === null ? '' : r.metResult ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const right = [false, true, true, true, true, false, false];
  const line = (c: string[]): string =>
    c.map((s, i) => (right[i] ? s.padStart(widths[i]!) : s.padEnd(widths[i]!))).join('  ').trimEnd();
  const sep = widths.map((w) => '-'.repeat(w)).join('  ');
  const notes = rows
    .filter((r) => r.note || r.failure !== undefined)
    .map((r) => `  * ${r.scenario}: ${[r.failure !== undefined ? `FAILED: ${r.failure}` : '', r.note ?? ''].filter(Boolean).join('; ')}`);
  return [line(header), sep, ...cells.map(line), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

export function writeJson(path: string, data: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}
