/**
 * What the three Event versions share (kube serves them all with its one event store,
 * pkg/registry/core/event): the strategy for a request version, Go's time formats, and the printer.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { col, humanDuration, fieldAt, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { canonicalMicroTime, canonicalTime, timeMillis } from './conversion.js';
import { type EventRequestVersion, legacyValidateEvent, validateEventCreate, validateEventUpdateStrict } from './validation.js';

type TimeKind = 'time' | 'micro';

/** The time fields of each version, rewritten as Go marshals them (UTC; seconds or microseconds). */
export const CORE_TIMES: Array<[string, TimeKind]> = [['firstTimestamp', 'time'], ['lastTimestamp', 'time'], ['eventTime', 'micro']];
export const GROUP_TIMES: Array<[string, TimeKind]> = [['deprecatedFirstTimestamp', 'time'], ['deprecatedLastTimestamp', 'time'], ['eventTime', 'micro']];

function canonicalizeTimes(obj: StoredObject, fields: Array<[string, TimeKind]>): void {
  for (const [f, kind] of fields) {
    const v = obj[f];
    if (typeof v === 'string') obj[f] = kind === 'micro' ? canonicalMicroTime(v) : canonicalTime(v);
  }
  const series = obj['series'];
  if (isPlainObject(series) && typeof series['lastObservedTime'] === 'string') {
    series['lastObservedTime'] = canonicalMicroTime(series['lastObservedTime']);
  }
}

/**
 * kube's event strategy for one request version. Validation runs on the core/v1 form of the
 * object; an update runs only kube's ValidateEventUpdate (the legacy checks, plus the
 * events.k8s.io/v1 rules), never the create validation.
 */
export function eventStrategy(version: EventRequestVersion, toCore: (obj: StoredObject) => StoredObject, times: Array<[string, TimeKind]>, shape?: (obj: StoredObject) => void): ResourceStrategy {
  return {
    defaults(obj) {
      canonicalizeTimes(obj, times);
      shape?.(obj);
    },
    validate(obj) {
      return validateEventCreate(toCore(obj), version);
    },
    validateOnUpdate: false,
    validateUpdate(obj, old) {
      const core = toCore(obj);
      return [...legacyValidateEvent(core), ...validateEventUpdateStrict(core, toCore(old), version)];
    },
    // kube's eventStrategy: events never get garbage-collection finalizers.
    defaultGarbageCollectionPolicy: () => 'Unsupported',
  };
}

/** kube's translateTimestampSince / translateMicroTimestampSince: `<unknown>` for a zero time. */
function since(ts: unknown, now: number): string {
  // Sub-millisecond digits count: Go truncates the elapsed time, 54m59.999999s is "54m".
  const t = timeMillis(ts);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * kube's printEvent (wide, as the server prints) on a core/v1 Event: LAST SEEN falls back to the
 * first time, which falls back to eventTime; a series overrides last seen and count; a singleton
 * without count counts 1; SOURCE falls back to reportingComponent/reportingInstance.
 * `toCore` gives the core/v1 form of an object of another version (kube prints the internal Event).
 */
export function eventTableOf(toCore: (obj: StoredObject) => StoredObject): TableDefinition {
  return {
    columns: [
      col('Last Seen', 'string', 'The time since the event was last seen.'),
      col('Type', 'string', 'The type of the event (Normal, Warning).'),
      col('Reason', 'string', 'Why the event happened, in one word.'),
      col('Object', 'string', 'The object the event is about.'),
      col('Subobject', 'string', 'The part of the object the event is about.', { priority: 1 }),
      col('Source', 'string', 'The component that reported the event.', { priority: 1 }),
      col('Message', 'string', 'What happened.'),
      col('First Seen', 'string', 'The time since the event was first seen.', { priority: 1 }),
      col('Count', 'string', 'How many times the event happened.', { priority: 1 }),
      col('Name', 'string', 'The name of the object.', { priority: 1, format: 'name' }),
    ],
    cells: (obj, now) => {
      const ev = toCore(obj);
      let first = since(ev['firstTimestamp'], now);
      if (!text(ev['firstTimestamp'])) first = since(ev['eventTime'], now);
      let last = since(ev['lastTimestamp'], now);
      if (!text(ev['lastTimestamp'])) last = first;
      let count = typeof ev['count'] === 'number' ? ev['count'] : 0;
      const series = fieldAt(ev, 'series');
      if (series && typeof series === 'object') {
        last = since(fieldAt(ev, 'series', 'lastObservedTime'), now);
        const c = fieldAt(ev, 'series', 'count');
        count = typeof c === 'number' ? c : 0;
      } else if (count === 0) {
        count = 1; // singleton events have no count in the new API
      }
      const kind = text(fieldAt(ev, 'involvedObject', 'kind')).toLowerCase();
      const name = text(fieldAt(ev, 'involvedObject', 'name'));
      const component = text(fieldAt(ev, 'source', 'component')) || text(ev['reportingComponent']);
      const instance = text(fieldAt(ev, 'source', 'host')) || text(ev['reportingInstance']);
      return [
        last,
        text(ev['type']),
        text(ev['reason']),
        name ? `${kind}/${name}` : kind,
        text(fieldAt(ev, 'involvedObject', 'fieldPath')),
        instance ? `${component}, ${instance}` : component,
        text(ev['message']).trim(),
        first,
        count,
        ev.metadata.name ?? '',
      ];
    },
  };
}
