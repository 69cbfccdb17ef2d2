/**
 * kube 1.24's Event validation (pkg/apis/core/validation/events.go), run on the core/v1 form of
 * the object whatever the request's version — kube validates the internal Event, so field paths
 * are the core names (`involvedObject.namespace`, `reportingController`, `source`, `count`) for
 * events.k8s.io requests too. The request's version picks the rules: core/v1 and
 * events.k8s.io/v1beta1 get only the legacy checks; events.k8s.io/v1 gets the strict ones.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { isPlainObject } from '../../types.js';
import { isDNS1123Subdomain, isQualifiedName } from '../../validation.js';
import { goTimeString } from './conversion.js';

export const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
export const ACTION_LENGTH_LIMIT = 128;
export const REASON_LENGTH_LIMIT = 128;
export const NOTE_LENGTH_LIMIT = 1024;

/** The request versions kube's event validation tells apart. */
export type EventRequestVersion = 'v1' | 'events.k8s.io/v1beta1' | 'events.k8s.io/v1';

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const rec = (v: unknown): Json => (isPlainObject(v) ? v : {});
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const isZeroTime = (v: unknown): boolean => typeof v !== 'string' || v === '';

/** kube's legacyValidateEvent: the checks every Event passes, in any version. */
export function legacyValidateEvent(ev: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const ns = ev.metadata.namespace ?? '';
  const involvedNs = str(rec(ev['involvedObject'])['namespace']);
  const nsMismatch = (): FieldError => fieldErr.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace');
  if (isZeroTime(ev['eventTime'])) {
    // An "old" Event: its namespace and the involved object's must agree.
    if (involvedNs === '') {
      if (ns !== '' && ns !== 'default') errs.push(nsMismatch());
    } else if (ns !== involvedNs) {
      errs.push(nsMismatch());
    }
  } else {
    if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') errs.push(nsMismatch());
    const controller = str(ev['reportingComponent']);
    if (controller === '') errs.push(fieldErr.required('reportingController'));
    for (const m of isQualifiedName(controller)) errs.push(fieldErr.invalid('reportingController', controller, m));
    const instance = str(ev['reportingInstance']);
    if (instance === '') errs.push(fieldErr.required('reportingInstance'));
    if (bytes(instance) > REPORTING_INSTANCE_LENGTH_LIMIT) {
      errs.push(fieldErr.invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LENGTH_LIMIT} characters`));
    }
    const action = str(ev['action']);
    if (action === '') errs.push(fieldErr.required('action'));
    if (bytes(action) > ACTION_LENGTH_LIMIT) errs.push(fieldErr.invalid('action', '', `can have at most ${ACTION_LENGTH_LIMIT} characters`));
    const reason = str(ev['reason']);
    if (reason === '') errs.push(fieldErr.required('reason'));
    if (bytes(reason) > REASON_LENGTH_LIMIT) errs.push(fieldErr.invalid('reason', '', `can have at most ${REASON_LENGTH_LIMIT} characters`));
    if (bytes(str(ev['message'])) > NOTE_LENGTH_LIMIT) {
      errs.push(fieldErr.invalid('message', '', `can have at most ${NOTE_LENGTH_LIMIT} characters`));
    }
  }
  for (const m of isDNS1123Subdomain(ns)) errs.push(fieldErr.invalid('namespace', ns, m));
  return errs;
}

/** kube's validateV1EventSeries. */
function validateV1EventSeries(ev: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(ev['series'])) return errs;
  const s = ev['series'];
  const count = typeof s['count'] === 'number' ? s['count'] : 0;
  if (count < 2) errs.push(fieldErr.invalid('series.count', '', 'should be at least 2'));
  if (isZeroTime(s['lastObservedTime'])) errs.push(fieldErr.required('series.lastObservedTime'));
  return errs;
}

/**
 * kube's ValidateEventCreate on the core/v1 form of the object (metadata is checked by the store
 * with the version's name rule: DNS subdomain for events.k8s.io/v1).
 */
export function validateEventCreate(ev: StoredObject, requestVersion: EventRequestVersion): FieldError[] {
  const errs = legacyValidateEvent(ev);
  if (requestVersion !== 'events.k8s.io/v1') return errs; // no more, for backwards compatibility
  errs.push(...validateV1EventSeries(ev));
  if (isZeroTime(ev['eventTime'])) errs.push(fieldErr.required('eventTime'));
  const type = str(ev['type']);
  if (type !== 'Normal' && type !== 'Warning') errs.push(fieldErr.invalid('type', '', `has invalid value: ${type}`));
  if (!isZeroTime(ev['firstTimestamp'])) errs.push(fieldErr.invalid('firstTimestamp', '', 'needs to be unset'));
  if (!isZeroTime(ev['lastTimestamp'])) errs.push(fieldErr.invalid('lastTimestamp', '', 'needs to be unset'));
  if (typeof ev['count'] === 'number' && ev['count'] !== 0) errs.push(fieldErr.invalid('count', '', 'needs to be unset'));
  const source = rec(ev['source']);
  if (str(source['component']) !== '' || str(source['host']) !== '') errs.push(fieldErr.invalid('source', '', 'needs to be unset'));
  return errs;
}

// Go's `%#v` / String() of the values ValidateImmutableField prints.
const OBJECT_REFERENCE_FIELDS: Array<[string, string]> = [
  ['Kind', 'kind'],
  ['Namespace', 'namespace'],
  ['Name', 'name'],
  ['UID', 'uid'],
  ['APIVersion', 'apiVersion'],
  ['ResourceVersion', 'resourceVersion'],
  ['FieldPath', 'fieldPath'],
];

function goStruct(type: string, fields: Array<[string, string]>, v: unknown): { key: string; shown: GoLiteral } {
  const r = rec(v);
  const parts = fields.map(([goName, json]) => `${goName}:${JSON.stringify(str(r[json]))}`);
  const text = `${type}{${parts.join(', ')}}`;
  return { key: text, shown: new GoLiteral(text) };
}

interface Comparable {
  key: string;
  shown: unknown;
}

const goRef = (v: unknown): Comparable => goStruct('core.ObjectReference', OBJECT_REFERENCE_FIELDS, v);
const goRefPtr = (v: unknown): Comparable => (isPlainObject(v) ? goRef(v) : { key: 'null', shown: new GoLiteral('null') });
const goSource = (v: unknown): Comparable => goStruct('core.EventSource', [['Component', 'component'], ['Host', 'host']], v);
const goString = (v: unknown): Comparable => ({ key: JSON.stringify(str(v)), shown: str(v) });
const goInt = (v: unknown): Comparable => {
  const n = typeof v === 'number' ? v : 0;
  return { key: String(n), shown: n };
};
const goTime = (v: unknown): Comparable => {
  const text = goTimeString(isZeroTime(v) ? undefined : v);
  return { key: text, shown: new GoLiteral(text) };
};

/** The fields ValidateEventUpdate holds immutable for events.k8s.io/v1, in kube's order (reason twice). */
const IMMUTABLE: Array<[path: string, json: string, as: (v: unknown) => Comparable]> = [
  ['involvedObject', 'involvedObject', goRef],
  ['reason', 'reason', goString],
  ['message', 'message', goString],
  ['source', 'source', goSource],
  ['firstTimestamp', 'firstTimestamp', goTime],
  ['lastTimestamp', 'lastTimestamp', goTime],
  ['count', 'count', goInt],
  ['reason', 'reason', goString],
  ['type', 'type', goString],
  ['eventTime', 'eventTime', goTime],
  ['action', 'action', goString],
  ['related', 'related', goRefPtr],
  ['reportingController', 'reportingComponent', goString],
  ['reportingInstance', 'reportingInstance', goString],
];

function sameSeries(a: unknown, b: unknown): boolean {
  if (!isPlainObject(a) || !isPlainObject(b)) return isPlainObject(a) === isPlainObject(b);
  return goInt(a['count']).key === goInt(b['count']).key && goTime(a['lastObservedTime']).key === goTime(b['lastObservedTime']).key;
}

/**
 * The part of kube's ValidateEventUpdate beyond legacyValidateEvent (which the strategy's
 * `validateUpdate` runs first): for events.k8s.io/v1, a changed series is validated and the
 * event's fields are immutable. Metadata update rules are the store's.
 */
export function validateEventUpdateStrict(ev: StoredObject, old: StoredObject, requestVersion: EventRequestVersion): FieldError[] {
  if (requestVersion !== 'events.k8s.io/v1') return [];
  const errs: FieldError[] = [];
  if (!sameSeries(ev['series'], old['series'])) errs.push(...validateV1EventSeries(ev));
  for (const [path, json, as] of IMMUTABLE) {
    const next = as(ev[json]);
    if (next.key !== as(old[json]).key) errs.push(fieldErr.invalid(path, next.shown, 'field is immutable'));
  }
  return errs;
}
