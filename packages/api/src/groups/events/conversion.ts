/**
 * kube's conversions between core/v1 Event (the storage version) and events.k8s.io/v1 and
 * v1beta1 Event (pkg/apis/events/{v1,v1beta1}/conversion.go, through the internal core Event):
 *
 *   events.k8s.io          core/v1
 *   regarding          ↔   involvedObject
 *   note               ↔   message
 *   reportingController↔   reportingComponent (the internal ReportingController)
 *   deprecatedSource   ↔   source
 *   deprecatedFirstTimestamp ↔ firstTimestamp
 *   deprecatedLastTimestamp  ↔ lastTimestamp
 *   deprecatedCount    ↔   count
 *   eventTime, series, reportingInstance, action, reason, related, type: same names
 *
 * Every field has a counterpart, so both directions are lossless. Conversions return new objects
 * (metadata copied) and never change their input: stored objects are shared with the watch cache.
 */
import type { StoredObject } from '../../types.js';
import { isPlainObject } from '../../types.js';

export const EVENTS_GROUP = 'events.k8s.io';

type Json = Record<string, unknown>;

function copyRecord(v: unknown): Json | undefined {
  return isPlainObject(v) ? { ...v } : undefined;
}

/** A struct the Go type always has (`ObjectReference`, `EventSource`): `{}` when absent. */
function struct(v: unknown): Json {
  return copyRecord(v) ?? {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Sets `out[key]` when `v` is neither absent nor Go's zero value of its type (omitempty). */
function put(out: Json, key: string, v: unknown): void {
  if (v === undefined || v === null || v === '' || v === 0) return;
  out[key] = v;
}

function series(v: unknown): Json | undefined {
  return copyRecord(v);
}

/**
 * The core/v1 JSON shape of an Event as kube writes it: `involvedObject` and `source` always
 * (structs), `reportingComponent` and `reportingInstance` always (no omitempty in their tags).
 */
export function coreEventShape(obj: StoredObject): void {
  obj['involvedObject'] = struct(obj['involvedObject']);
  obj['source'] = struct(obj['source']);
  obj['reportingComponent'] = str(obj['reportingComponent']);
  obj['reportingInstance'] = str(obj['reportingInstance']);
}

/** events.k8s.io Event (v1 or v1beta1, apiVersion set) → core/v1 Event. */
export function eventToCore(ev: StoredObject): StoredObject {
  const out: Json = { apiVersion: 'v1', kind: 'Event', metadata: structuredClone(ev.metadata) };
  out['involvedObject'] = struct(ev['regarding']);
  put(out, 'reason', ev['reason']);
  put(out, 'message', ev['note']);
  out['source'] = struct(ev['deprecatedSource']);
  put(out, 'firstTimestamp', ev['deprecatedFirstTimestamp']);
  put(out, 'lastTimestamp', ev['deprecatedLastTimestamp']);
  put(out, 'count', ev['deprecatedCount']);
  put(out, 'type', ev['type']);
  put(out, 'eventTime', ev['eventTime']);
  put(out, 'series', series(ev['series']));
  put(out, 'action', ev['action']);
  put(out, 'related', copyRecord(ev['related']));
  out['reportingComponent'] = str(ev['reportingController']);
  out['reportingInstance'] = str(ev['reportingInstance']);
  return out as StoredObject;
}

/** core/v1 Event → events.k8s.io Event of `version` ('v1' or 'v1beta1'). */
export function coreToEvent(core: StoredObject, version: 'v1' | 'v1beta1'): StoredObject {
  const out: Json = { apiVersion: `${EVENTS_GROUP}/${version}`, kind: 'Event', metadata: structuredClone(core.metadata) };
  put(out, 'eventTime', core['eventTime']);
  put(out, 'series', series(core['series']));
  put(out, 'reportingController', core['reportingComponent']);
  put(out, 'reportingInstance', core['reportingInstance']);
  put(out, 'action', core['action']);
  put(out, 'reason', core['reason']);
  out['regarding'] = struct(core['involvedObject']);
  put(out, 'related', copyRecord(core['related']));
  put(out, 'note', core['message']);
  put(out, 'type', core['type']);
  out['deprecatedSource'] = struct(core['source']);
  put(out, 'deprecatedFirstTimestamp', core['firstTimestamp']);
  put(out, 'deprecatedLastTimestamp', core['lastTimestamp']);
  put(out, 'deprecatedCount', core['count']);
  return out as StoredObject;
}

// ---------------------------------------------------------------------------------------------
// Times as Go marshals them
// ---------------------------------------------------------------------------------------------

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/i;

/** Seconds since the epoch and the fraction's digits of an RFC 3339 text; undefined if it is not one. */
function parseTimestamp(text: string): { seconds: number; fraction: string } | undefined {
  const m = TIMESTAMP.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]!.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  return { seconds: Math.floor(ms / 1000), fraction: m[2] ?? '' };
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

/** metav1.Time as kube writes it: UTC, whole seconds (`2006-01-02T15:04:05Z`). */
export function canonicalTime(text: string): string {
  const t = parseTimestamp(text);
  return t ? `${isoSeconds(t.seconds)}Z` : text;
}

/** metav1.MicroTime as kube writes it: UTC, six fractional digits. */
export function canonicalMicroTime(text: string): string {
  const t = parseTimestamp(text);
  return t ? `${isoSeconds(t.seconds)}.${(t.fraction + '000000').slice(0, 6)}Z` : text;
}

/** `s` without its trailing `ch`s: a loop, where `/${ch}+$/` backtracks quadratically on client text. */
function trimTrailing(s: string, ch: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === ch) end--;
  return s.slice(0, end);
}

/** Go's `time.Time.String()` of an RFC 3339 text (`2006-01-02 15:04:05.999999999 +0000 UTC`). */
export function goTimeString(text: unknown): string {
  const t = typeof text === 'string' ? parseTimestamp(text) : undefined;
  if (!t) return '0001-01-01 00:00:00 +0000 UTC';
  const frac = trimTrailing(t.fraction, '0');
  return `${isoSeconds(t.seconds).replace('T', ' ')}${frac ? `.${frac}` : ''} +0000 UTC`;
}

/** Milliseconds since the epoch of an RFC 3339 text, or undefined when absent. */
export function timeMillis(text: unknown): number | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  const t = parseTimestamp(text);
  if (!t) return undefined;
  return t.seconds * 1000 + Number(`0.${t.fraction || '0'}`) * 1000;
}
