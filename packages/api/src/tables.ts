/**
 * The Table form kubectl's `get` prints (kube-apiserver 1.24's printers,
 * pkg/printers/internalversion): the pieces resource modules build their columns from, the default
 * table, and custom resources' tables. Each built-in kind's columns live in its resource module.
 * Column descriptions are plinth's own short text.
 */
import type { StoredObject } from './types.js';
import { compileJSONPath, JSONPathError, type JSONPath } from './jsonpath.js';
import { stringifyJson } from './number-codec.js';

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableDefinition {
  columns: TableColumn[];
  /** The row's cells, in column order. `now` is the time ages are measured against. */
  cells(obj: StoredObject, now: number): unknown[];
}

/** A column (kube's TableColumnDefinition); `description` is plinth's own short text. */
export const col = (name: string, type: string, description: string, extra: Partial<TableColumn> = {}): TableColumn => ({ name, type, format: '', description, priority: 0, ...extra });
/** The Name column every kube printer starts with. */
export const nameColumn = col('Name', 'string', 'The name of the object.', { format: 'name' });
/** The Age column (the time since metadata.creationTimestamp). */
export const ageColumn = col('Age', 'string', 'The time since the object was created.');
const CREATED_DOC = 'When the object was created.';

/** kube's duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** kube's translateTimestampSince. */
export function age(obj: StoredObject, now: number): string {
  const ts = obj.metadata.creationTimestamp;
  if (!ts) return '<unknown>';
  return humanDuration(now - Date.parse(ts));
}

/** The number of items of a list or entries of a map (0 for anything else): kube's len(). */
export const countOf = (v: unknown): number => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0);
/** The value at a path of own members, or undefined. */
export const fieldAt = (obj: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((o, k) => (o && typeof o === 'object' && Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined), obj);

/** The default table of a kind without its own printer: Name, Created At. */
export const defaultTable: TableDefinition = {
  columns: [nameColumn, col('Created At', 'date', CREATED_DOC)],
  cells: (obj) => [obj.metadata.name ?? '', obj.metadata.creationTimestamp ?? null],
};

/**
 * The table of an autoscaling/v1 Scale (kube 1.24's printScale, served for GET of a `scale`
 * subresource): Name (no `name` format, as kube's), Desired, Available, Age.
 */
export const scaleTable: TableDefinition = {
  columns: [
    col('Name', 'string', 'The name of the object.'),
    col('Desired', 'integer', 'The desired number of instances of the scaled object.'),
    col('Available', 'integer', 'The observed number of instances of the scaled object.'),
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name ?? '', Number(fieldAt(obj, 'spec', 'replicas') ?? 0), Number(fieldAt(obj, 'status', 'replicas') ?? 0), age(obj, now)],
};

/** One `additionalPrinterColumns` entry of a CustomResourceDefinition version. */
export interface PrinterColumn {
  name: string;
  /** integer, number, string, boolean or date. */
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** kube's ConvertToHumanReadableDateType: the age of an RFC 3339 time, `<invalid>` if unparsable. */
function dateCell(value: unknown, now: number): unknown {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(t)) return '<invalid>';
  return humanDuration(now - t);
}

/** kube's cellForJSONValue: a typed cell, or null when the value is not of the column's type. */
function typedCell(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      // An int64 as it is (a BigInt above 2^53, written exactly), a float64 truncated.
      return typeof value === 'bigint' ? value : typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return dateCell(value, now);
    default:
      return null;
  }
}

/** What client-go's jsonpath prints for a value in a string column. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return stringifyJson(value);
  return String(value);
}

/**
 * The Table of a custom resource version (kube's CRD tableconvertor): Name, then each printer
 * column, whose cell is the first value its JSONPath reaches (null when none). Without columns,
 * kube serves one: Age from `.metadata.creationTimestamp`. A column whose path does not compile
 * makes kube fall back to the default table.
 */
export function customResourceTable(columns: readonly PrinterColumn[]): TableDefinition {
  const cols = columns.length > 0 ? columns : [{ name: 'Age', type: 'date', description: CREATED_DOC, jsonPath: '.metadata.creationTimestamp' }];
  let paths: JSONPath[];
  try {
    paths = cols.map((c) => compileJSONPath(c.jsonPath));
  } catch (e) {
    if (e instanceof JSONPathError) return defaultTable;
    throw e;
  }
  return {
    columns: [
      nameColumn,
      ...cols.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
      })),
    ],
    cells: (obj, now) => [
      obj.metadata.name ?? '',
      ...cols.map((c, i) => {
        const found = paths[i]!.find(obj);
        if (found.length === 0 || found[0] === undefined) return null;
        return c.type === 'string' ? textOf(found[0]) : typedCell(c.type, found[0], now);
      }),
    ],
  };
}

/** kube's labels.FormatLabels: `k=v` pairs sorted by key, comma-separated; `<none>` when empty. */
export function formatLabels(labels: unknown): string {
  if (!labels || typeof labels !== 'object') return '<none>';
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${String((labels as Record<string, unknown>)[k] ?? '')}`).join(',');
}

/** kube's layoutContainerCells: the containers' names and their images, each comma-separated. */
export function containerCells(containers: unknown): [names: string, images: string] {
  const list = Array.isArray(containers) ? containers : [];
  const text = (c: unknown, key: string): string => String(fieldAt(c, key) ?? '');
  return [list.map((c) => text(c, 'name')).join(','), list.map((c) => text(c, 'image')).join(',')];
}
