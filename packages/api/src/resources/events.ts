/**
 * Events in three versions over one storage, as kube-apiserver 1.24 serves them: core/v1 Event
 * (the storage version, etcd key segment `events`), events.k8s.io/v1 Event and the deprecated
 * events.k8s.io/v1beta1 Event (deprecated in 1.22, removed in 1.25, no replacement declared).
 * All three share kube's one event store (pkg/registry/core/event): no defaults, create on PUT,
 * short name `ev`, the same Table; validation depends on the request's version.
 */
import { deprecationWarning, type ResourceDefinition, type ResourceStrategy } from '../catalog.js';
import { type Schema, s } from '../schema.js';
import { eventTable, eventTableOf } from '../tables.js';
import type { StoredObject } from '../types.js';
import { isPlainObject } from '../types.js';
import { nameIsDNSSubdomain, nameIsPathSegment } from '../validation.js';
import {
  EVENTS_GROUP,
  asCoreEvent,
  canonicalMicroTime,
  canonicalTime,
  coreEventShape,
  coreToEvent,
  eventToCore,
} from './events-conversion.js';
import { type EventRequestVersion, legacyValidateEvent, validateEventCreate, validateEventUpdateStrict } from './events-validation.js';

export { EVENTS_GROUP, asCoreEvent, coreToEvent, eventToCore } from './events-conversion.js';
export { legacyValidateEvent, validateEventCreate, validateEventUpdateStrict, type EventRequestVersion } from './events-validation.js';

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (the decoder insists, as Go's). */
const microTime = (description: string): Schema => ({ type: 'string', format: 'date-time', description, 'x-go-type': 'v1.MicroTime' });
const objectReference = (description: string): Schema => ({ $ref: 'ObjectReference', 'x-go-type': 'v1.ObjectReference', description });
/** `related` is a *ObjectReference. */
const optionalObjectReference = (description: string): Schema => ({ ...objectReference(description), 'x-go-pointer': true });
const eventSource = (description: string): Schema => ({ $ref: 'EventSource', 'x-go-type': 'v1.EventSource', description });

export const eventDefinitions: Record<string, Schema> = {
  EventSource: s.obj(
    {
      component: s.str('Component from which the event is generated.'),
      host: s.str('Node name on which the event is generated.'),
    },
    { description: 'EventSource contains information for an event.', 'x-go-type': 'v1.EventSource' },
  ),
};

function eventSeries(goType: string, countDoc: string, lastDoc: string): Schema {
  return s.obj(
    { count: s.int(countDoc), lastObservedTime: microTime(lastDoc) },
    {
      description: 'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
      'x-go-type': goType,
      // *EventSeries: absent unless set (a create by apply must not start from `series: {}`).
      'x-go-pointer': true,
    },
  );
}

const coreEventSchema: Schema = s.obj(
  {
    involvedObject: objectReference('The object that this event is about.'),
    reason: s.str("This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    message: s.str('A human-readable description of the status of this operation.'),
    source: eventSource('The component reporting this event. Should be a short machine understandable string.'),
    firstTimestamp: s.time('The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
    lastTimestamp: s.time('The time at which the most recent occurrence of this event was recorded.'),
    count: s.int('The number of times this event has occurred.'),
    type: s.str('Type of this event (Normal, Warning), new types could be added in the future'),
    eventTime: microTime('Time when this Event was first observed.'),
    series: eventSeries('v1.EventSeries', 'Number of occurrences in this series up to the last heartbeat time', 'Time of the last occurrence observed'),
    action: s.str('What action was taken/failed regarding to the Regarding object.'),
    related: optionalObjectReference('Optional secondary object for more complex actions.'),
    reportingComponent: s.str('Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
    reportingInstance: s.str('ID of the controller instance, e.g. `kubelet-xyzf`.'),
  },
  {
    description:
      'Event is a report of an event somewhere in the cluster.  Events have a limited retention time and triggers and messages may evolve with time.  Event consumers should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason.  Events should be treated as informative, best-effort, supplemental data.',
    required: ['metadata', 'involvedObject'],
    'x-go-type': 'v1.Event',
  },
);

function eventsGroupSchema(version: 'v1' | 'v1beta1'): Schema {
  return s.obj(
    {
      eventTime: microTime('eventTime is the time when this Event was first observed. It is required.'),
      series: eventSeries(
        `${version}.EventSeries`,
        'count is the number of occurrences in this series up to the last heartbeat time.',
        'lastObservedTime is the time when last Event from the series was seen before last heartbeat.',
      ),
      reportingController: s.str('reportingController is the name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`. This field cannot be empty for new Events.'),
      reportingInstance: s.str('reportingInstance is the ID of the controller instance, e.g. `kubelet-xyzf`. This field cannot be empty for new Events and it can have at most 128 characters.'),
      action: s.str('action is what action was taken/failed regarding to the regarding object. It is machine-readable. This field cannot be empty for new Events and it can have at most 128 characters.'),
      reason: s.str('reason is why the action was taken. It is human-readable. This field cannot be empty for new Events and it can have at most 128 characters.'),
      regarding: objectReference('regarding contains the object this Event is about.'),
      related: optionalObjectReference('related is the optional secondary object for more complex actions.'),
      note: s.str('note is a human-readable description of the status of this operation. Maximal length of the note is 1kB, but libraries should be prepared to handle values up to 64kB.'),
      type: s.str('type is the type of this event (Normal, Warning), new types could be added in the future. It is machine-readable. This field cannot be empty for new Events.'),
      deprecatedSource: eventSource('deprecatedSource is the deprecated field assuring backward compatibility with core.v1 Event type.'),
      deprecatedFirstTimestamp: s.time('deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
      deprecatedLastTimestamp: s.time('deprecatedLastTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
      deprecatedCount: s.int('deprecatedCount is the deprecated field assuring backward compatibility with core.v1 Event type.'),
    },
    {
      description:
        'Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system. Events have a limited retention time and triggers and messages may evolve with time.  Event consumers should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason.  Events should be treated as informative, best-effort, supplemental data.',
      required: ['eventTime'],
      'x-go-type': `${version}.Event`,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

type TimeKind = 'time' | 'micro';

/** The time fields of each version, rewritten as Go marshals them (UTC; seconds or microseconds). */
const CORE_TIMES: Array<[string, TimeKind]> = [['firstTimestamp', 'time'], ['lastTimestamp', 'time'], ['eventTime', 'micro']];
const GROUP_TIMES: Array<[string, TimeKind]> = [['deprecatedFirstTimestamp', 'time'], ['deprecatedLastTimestamp', 'time'], ['eventTime', 'micro']];

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
function eventStrategy(version: EventRequestVersion, toCore: (obj: StoredObject) => StoredObject, times: Array<[string, TimeKind]>, shape?: (obj: StoredObject) => void): ResourceStrategy {
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

const identity = (obj: StoredObject): StoredObject => obj;

const EVENT_VERBS: ResourceDefinition['verbs'] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** core/v1 events: the storage version of all three. */
export const events: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  categories: [],
  namespaced: true,
  verbs: EVENT_VERBS,
  storage: 'etcd',
  subresources: [],
  // kube's event strategy validates no name; the generic path-segment rule applies.
  nameValidator: nameIsPathSegment,
  allowCreateOnUpdate: true,
  returnDeletedObject: false,
  schema: coreEventSchema,
  strategy: eventStrategy('v1', identity, CORE_TIMES, coreEventShape),
  table: eventTable,
};

function eventsGroupDef(version: 'v1' | 'v1beta1'): ResourceDefinition {
  return {
    ...events,
    group: EVENTS_GROUP,
    version,
    // kube serves events.k8s.io with the core event REST, short names included.
    shortNames: ['ev'],
    // ValidateEventCreate checks names as DNS subdomains for events.k8s.io/v1 only.
    nameValidator: version === 'v1' ? nameIsDNSSubdomain : nameIsPathSegment,
    schema: eventsGroupSchema(version),
    strategy: eventStrategy(`${EVENTS_GROUP}/${version}`, eventToCore, GROUP_TIMES),
    // kube prints the internal Event: the same columns and cells in every version.
    table: eventTableOf(asCoreEvent),
    conversion: {
      storage: events,
      toStorage: eventToCore,
      fromStorage: (obj) => coreToEvent(obj, version),
    },
  };
}

/** events.k8s.io/v1 events (the group's preferred version). */
export const eventsV1: ResourceDefinition = eventsGroupDef('v1');

/** events.k8s.io/v1beta1 events: deprecated in 1.22, removed in 1.25; kube names no replacement. */
export const eventsV1beta1: ResourceDefinition = (() => {
  const def = eventsGroupDef('v1beta1');
  return { ...def, deprecation: deprecationWarning(def, '1.22', '1.25') };
})();
