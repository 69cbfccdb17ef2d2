import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { conform, DecodeError, type Schema } from '../../schema.js';
import { builtinDefinitions } from '../../kube-schema/definitions.js';
import { convertFieldLabel, convertFieldSelector, objectFieldSet, parseFieldSelector, validateFieldSelector } from '../../selectors/fields.js';
import { SelectorParseError } from '../../selectors/errors.js';
import { events } from '../core/events.js';
import { coreToEvent, eventToCore } from './conversion.js';
import { eventsV1, eventsV1beta1 } from './index.js';
import { goTimeString } from './conversion.js';

type Json = Record<string, unknown>;

const coreFull: StoredObject = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'e', namespace: 'default', uid: 'uid-1', resourceVersion: '7', labels: { a: 'b' } },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'pod-uid', apiVersion: 'v1', resourceVersion: '3', fieldPath: 'spec.containers{c}' },
  reason: 'Started',
  message: 'Started container c',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2022-05-01T10:00:00Z',
  lastTimestamp: '2022-05-01T10:05:00Z',
  count: 3,
  type: 'Normal',
  eventTime: '2022-05-01T10:00:00.123456Z',
  series: { count: 2, lastObservedTime: '2022-05-01T10:05:00.000001Z' },
  action: 'Start',
  related: { kind: 'Node', name: 'node-1' },
  reportingComponent: 'kubelet',
  reportingInstance: 'node-1',
};

const v1Full: StoredObject = {
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name: 'e', namespace: 'default' },
  eventTime: '2022-05-01T10:00:00.123456Z',
  series: { count: 2, lastObservedTime: '2022-05-01T10:05:00.000001Z' },
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  action: 'Reconcile',
  reason: 'Synced',
  regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
  related: { kind: 'Node', name: 'n' },
  note: 'synced',
  type: 'Warning',
  deprecatedSource: { component: 'c', host: 'h' },
  deprecatedFirstTimestamp: '2022-05-01T10:00:00Z',
  deprecatedLastTimestamp: '2022-05-01T10:05:00Z',
  deprecatedCount: 4,
};

describe('Event conversion (pkg/apis/events/v1 and v1beta1 conversion.go)', () => {
  it('core/v1 → events.k8s.io/v1, field by field', () => {
    const v1 = coreToEvent(coreFull, 'v1');
    assert.deepEqual(v1, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: coreFull.metadata,
      eventTime: '2022-05-01T10:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2022-05-01T10:05:00.000001Z' },
      reportingController: 'kubelet',
      reportingInstance: 'node-1',
      action: 'Start',
      reason: 'Started',
      regarding: coreFull['involvedObject'],
      related: { kind: 'Node', name: 'node-1' },
      note: 'Started container c',
      type: 'Normal',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2022-05-01T10:00:00Z',
      deprecatedLastTimestamp: '2022-05-01T10:05:00Z',
      deprecatedCount: 3,
    });
  });

  it('events.k8s.io/v1 → core/v1, field by field', () => {
    assert.deepEqual(eventToCore(v1Full), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: v1Full.metadata,
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
      reason: 'Synced',
      message: 'synced',
      source: { component: 'c', host: 'h' },
      firstTimestamp: '2022-05-01T10:00:00Z',
      lastTimestamp: '2022-05-01T10:05:00Z',
      count: 4,
      type: 'Warning',
      eventTime: '2022-05-01T10:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2022-05-01T10:05:00.000001Z' },
      action: 'Reconcile',
      related: { kind: 'Node', name: 'n' },
      reportingComponent: 'example.com/ctl',
      reportingInstance: 'ctl-1',
    });
  });

  it('round trips without loss: v1→core→v1, v1beta1→core→v1beta1, core→v1→core', () => {
    assert.deepEqual(coreToEvent(eventToCore(v1Full), 'v1'), v1Full);
    const beta = { ...v1Full, apiVersion: 'events.k8s.io/v1beta1' } as StoredObject;
    assert.deepEqual(coreToEvent(eventToCore(beta), 'v1beta1'), beta);
    assert.deepEqual(eventToCore(coreToEvent(coreFull, 'v1')), coreFull);
    assert.deepEqual(eventToCore(coreToEvent(coreFull, 'v1beta1')), coreFull);
  });

  it('a legacy core event (no eventTime) shows its old fields as deprecated* in v1', () => {
    const legacy: StoredObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'p.1', namespace: 'ns' },
      involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p' },
      reason: 'Pulled',
      message: 'pulled',
      source: { component: 'kubelet', host: 'n1' },
      firstTimestamp: '2022-01-01T00:00:00Z',
      lastTimestamp: '2022-01-01T00:01:00Z',
      count: 2,
      type: 'Normal',
      reportingComponent: '',
      reportingInstance: '',
    };
    assert.deepEqual(coreToEvent(legacy, 'v1'), {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'p.1', namespace: 'ns' },
      reason: 'Pulled',
      regarding: { kind: 'Pod', namespace: 'ns', name: 'p' },
      note: 'pulled',
      type: 'Normal',
      deprecatedSource: { component: 'kubelet', host: 'n1' },
      deprecatedFirstTimestamp: '2022-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2022-01-01T00:01:00Z',
      deprecatedCount: 2,
    });
  });

  it('returns new objects and leaves its input alone', () => {
    const before = structuredClone(coreFull);
    const v1 = coreToEvent(coreFull, 'v1');
    (v1.metadata.labels as Json)['x'] = 'y';
    (v1['regarding'] as Json)['name'] = 'changed';
    (v1['series'] as Json)['count'] = 99;
    assert.deepEqual(coreFull, before);
    const v1Before = structuredClone(v1Full);
    const c = eventToCore(v1Full);
    (c['involvedObject'] as Json)['name'] = 'changed';
    c.metadata.name = 'other';
    assert.deepEqual(v1Full, v1Before);
  });

  it('the definitions convert through their storage, core/v1 events', () => {
    for (const def of [eventsV1, eventsV1beta1]) {
      assert.equal(def.conversion?.storage, events);
      assert.equal(def.conversion!.toStorage(coreToEvent(coreFull, def.version as 'v1')).apiVersion, 'v1');
      assert.equal(def.conversion!.fromStorage(coreFull).apiVersion, `events.k8s.io/${def.version}`);
    }
    assert.equal(events.storagePath ?? events.plural, 'events');
  });

  it('events.k8s.io/v1beta1 is deprecated without a replacement; v1 is not', () => {
    assert.equal(eventsV1beta1.deprecation?.warning, 'events.k8s.io/v1beta1 Event is deprecated in v1.22+, unavailable in v1.25+');
    assert.equal(eventsV1beta1.deprecation?.removedRelease, '1.25');
    assert.equal(eventsV1.deprecation, undefined);
    assert.deepEqual([events.shortNames, eventsV1.shortNames, eventsV1beta1.shortNames], [['ev'], ['ev'], ['ev']]);
    assert.deepEqual([events.allowCreateOnUpdate, eventsV1.allowCreateOnUpdate], [true, true]);
  });
});

// ---------------------------------------------------------------------------------------------

const schemaDefs = builtinDefinitions();

function createErrors(def: typeof events, body: Json): string[] {
  const obj = conform(body, def.schema, schemaDefs, 'Event') as StoredObject;
  obj.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  obj.metadata = { namespace: 'default', name: 'e', ...((body['metadata'] as Json) ?? {}) };
  def.strategy.defaults?.(obj);
  def.strategy.prepareForCreate?.(obj);
  return def.strategy.validate(obj).map(fieldErrorString);
}

function updateErrors(def: typeof events, next: Json, old: Json): string[] {
  const typed = (b: Json): StoredObject => {
    const o = conform(b, def.schema, schemaDefs, 'Event') as StoredObject;
    o.apiVersion = `${def.group}/${def.version}`;
    o.metadata = { namespace: 'default', name: 'e' };
    def.strategy.defaults?.(o);
    return o;
  };
  const n = typed(next);
  const o = typed(old);
  def.strategy.prepareForUpdate?.(n, o);
  // As the registry store: `validate` too unless the strategy opts out.
  const full = def.strategy.validateOnUpdate === false ? [] : def.strategy.validate(n);
  return [...full, ...(def.strategy.validateUpdate?.(n, o) ?? [])].map(fieldErrorString);
}

const newV1 = {
  eventTime: '2022-05-01T10:00:00.000000Z',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  action: 'Reconcile',
  reason: 'Synced',
  type: 'Normal',
  regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
};

describe('Event validation per request version (ValidateEventCreate / ValidateEventUpdate)', () => {
  it('accepts a legacy core/v1 event and a new events.k8s.io/v1 event', () => {
    assert.deepEqual(createErrors(events, { involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'X', type: 'Anything' }), []);
    assert.deepEqual(createErrors(eventsV1, newV1), []);
    assert.deepEqual(createErrors(eventsV1beta1, { ...newV1, type: 'Custom' }), []);
  });

  const cases: Array<[string, typeof events, Json, string[]]> = [
    ['legacy: involved object in another namespace', events, { involvedObject: { namespace: 'other' } }, ['involvedObject.namespace: Invalid value: "other": does not match event.namespace']],
    ['legacy: cluster-scoped object outside default', events, { metadata: { namespace: 'ns' }, involvedObject: {} }, ['involvedObject.namespace: Invalid value: "": does not match event.namespace']],
    ['legacy: with eventTime the reporting fields are required (core)', events, { eventTime: '2022-05-01T10:00:00.000000Z', involvedObject: { namespace: 'default' } }, [
      'reportingController: Required value',
      'reportingController: Invalid value: "": name part must be non-empty',
      "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
    ]],
    ['legacy: lengths', events, { eventTime: '2022-05-01T10:00:00.000000Z', involvedObject: { namespace: 'default' }, reportingComponent: 'c', reportingInstance: 'i'.repeat(129), action: 'a'.repeat(129), reason: 'r'.repeat(129), message: 'm'.repeat(1025) }, [
      'reportingInstance: Invalid value: "": can have at most 128 characters',
      'action: Invalid value: "": can have at most 128 characters',
      'reason: Invalid value: "": can have at most 128 characters',
      'message: Invalid value: "": can have at most 1024 characters',
    ]],
    ['v1beta1: only the legacy rules (no type check, deprecated fields allowed)', eventsV1beta1, { ...newV1, type: 'Odd', deprecatedCount: 3, deprecatedSource: { component: 'x' } }, []],
    ['v1: eventTime required', eventsV1, { ...newV1, eventTime: undefined }, ['eventTime: Required value']],
    ['v1: type Normal or Warning', eventsV1, { ...newV1, type: 'Info' }, ['type: Invalid value: "": has invalid value: Info']],
    ['v1: deprecated fields not permitted in new objects', eventsV1, { ...newV1, deprecatedSource: { host: 'h' }, deprecatedFirstTimestamp: '2022-01-01T00:00:00Z', deprecatedLastTimestamp: '2022-01-01T00:00:00Z', deprecatedCount: 2 }, [
      'firstTimestamp: Invalid value: "": needs to be unset',
      'lastTimestamp: Invalid value: "": needs to be unset',
      'count: Invalid value: "": needs to be unset',
      'source: Invalid value: "": needs to be unset',
    ]],
    ['v1: series', eventsV1, { ...newV1, series: { count: 1 } }, ['series.count: Invalid value: "": should be at least 2', 'series.lastObservedTime: Required value']],
    ['v1: required reporting fields, reported with the internal names', eventsV1, { eventTime: newV1.eventTime, type: 'Normal', regarding: { namespace: 'default' } }, [
      'reportingController: Required value',
      'reportingController: Invalid value: "": name part must be non-empty',
      "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
    ]],
    // kube checks only an empty regarding namespace once eventTime is set.
    ['v1: regarding in another namespace is accepted', eventsV1, { ...newV1, regarding: { namespace: 'x' } }, []],
    ['v1: no regarding namespace outside default/kube-system', eventsV1, { ...newV1, metadata: { namespace: 'apps' }, regarding: {} }, ['involvedObject.namespace: Invalid value: "": does not match event.namespace']],
  ];
  for (const [name, def, body, want] of cases) {
    it(name, () => assert.deepEqual(createErrors(def, body), want));
  }

  it('v1 update: legacy rules only, then immutability with kube\'s value formatting', () => {
    assert.deepEqual(updateErrors(eventsV1, { ...newV1, series: { count: 2, lastObservedTime: '2022-05-01T10:06:00.000000Z' } }, newV1), []);
    assert.deepEqual(
      updateErrors(eventsV1, { ...newV1, note: 'new', regarding: { kind: 'Pod', namespace: 'default', name: 'q' }, eventTime: '2022-05-01T10:00:01.500000Z', deprecatedCount: 2, related: { kind: 'Node' } }, newV1),
      [
        'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"q", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
        'message: Invalid value: "new": field is immutable',
        'count: Invalid value: 2: field is immutable',
        'eventTime: Invalid value: 2022-05-01 10:00:01.5 +0000 UTC: field is immutable',
        'related: Invalid value: core.ObjectReference{Kind:"Node", Namespace:"", Name:"", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
      ],
    );
    assert.deepEqual(updateErrors(eventsV1, { ...newV1, series: { count: 1, lastObservedTime: '2022-05-01T10:06:00.000000Z' } }, newV1), ['series.count: Invalid value: "": should be at least 2']);
    // v1beta1 and core updates have no immutability rules.
    assert.deepEqual(updateErrors(eventsV1beta1, { ...newV1, note: 'changed', reason: 'Other' }, newV1), []);
  });

  it('an update runs validateUpdate alone (kube\'s ValidateEventUpdate): legacy rules included, create rules never', () => {
    for (const def of [events, eventsV1, eventsV1beta1]) assert.equal(def.strategy.validateOnUpdate, false, `${def.group}/${def.version}`);
    // An old-style core Event (no eventTime) whose involved object is in another namespace.
    const old: StoredObject = { apiVersion: 'v1', kind: 'Event', metadata: { namespace: 'apps', name: 'e' }, involvedObject: { namespace: 'apps' }, reason: 'R' };
    const next: StoredObject = { ...old, involvedObject: { namespace: 'other' } };
    assert.deepEqual(events.strategy.validateUpdate!(next, old).map(fieldErrorString), ['involvedObject.namespace: Invalid value: "other": does not match event.namespace']);
    // Through events.k8s.io/v1 the same old Event (no eventTime, which a v1 create requires) updates fine.
    const v1Old = coreToEvent(old, 'v1');
    const v1Next = { ...v1Old, metadata: { ...v1Old.metadata, labels: { a: 'b' } } };
    assert.ok(eventsV1.strategy.validate(v1Next).length > 0, 'a create of it would fail');
    assert.deepEqual(eventsV1.strategy.validateUpdate!(v1Next, v1Old), []);
  });

  it('names: DNS subdomain for events.k8s.io/v1, path segments for core/v1 and v1beta1', () => {
    assert.deepEqual(eventsV1.nameValidator('Foo_bar', false).length > 0, true);
    assert.deepEqual(events.nameValidator('Foo_bar', false), []);
    assert.deepEqual(eventsV1beta1.nameValidator('Foo_bar', false), []);
  });
});

describe('Event times as Go writes them', () => {
  it('MicroTime must have six fractional digits (Go RFC3339Micro), as kube\'s decoder insists', () => {
    const decode = (t: string): unknown => conform({ eventTime: t }, eventsV1.schema, schemaDefs, 'Event');
    assert.throws(() => decode('2022-05-01T10:00:00Z'), (e: unknown) => e instanceof DecodeError && e.message === 'parsing time "2022-05-01T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"');
    assert.throws(() => decode('2022-05-01T10:00:00.123456789Z'), (e: unknown) => e instanceof DecodeError && e.message.endsWith('cannot parse "789Z" as "Z07:00"'));
    assert.deepEqual(decode('2022-05-01T12:00:00.123456+02:00'), { eventTime: '2022-05-01T10:00:00.123456Z' });
  });

  it('defaults rewrite times in UTC: Time to seconds, MicroTime to microseconds', () => {
    const obj = { metadata: {}, eventTime: '2022-05-01T12:00:00.123456+02:00', firstTimestamp: '2022-05-01T12:00:00.5+02:00', series: { count: 2, lastObservedTime: '2022-05-01T10:00:00.000001Z' } } as StoredObject;
    events.strategy.defaults!(obj);
    assert.deepEqual([obj['eventTime'], obj['firstTimestamp'], obj['reportingComponent'], obj['involvedObject'], obj['source']], ['2022-05-01T10:00:00.123456Z', '2022-05-01T10:00:00Z', '', {}, {}]);
  });
});

describe('Event field selectors (core/v1 ToSelectableFields; events.k8s.io/v1 label conversion)', () => {
  it('the stored event\'s field set', () => {
    assert.deepEqual(objectFieldSet(events, coreFull), {
      'metadata.name': 'e',
      'metadata.namespace': 'default',
      'involvedObject.kind': 'Pod',
      'involvedObject.namespace': 'default',
      'involvedObject.name': 'p',
      'involvedObject.uid': 'pod-uid',
      'involvedObject.apiVersion': 'v1',
      'involvedObject.resourceVersion': '3',
      'involvedObject.fieldPath': 'spec.containers{c}',
      reason: 'Started',
      reportingComponent: 'kubelet',
      source: 'kubelet',
      type: 'Normal',
    });
    // source falls back to reportingComponent (events written through events.k8s.io/v1).
    assert.equal(objectFieldSet(events, eventToCore(v1Full))['source'], 'c');
    assert.equal(objectFieldSet(events, eventToCore({ ...v1Full, deprecatedSource: {} } as StoredObject))['source'], 'example.com/ctl');
  });

  it('core/v1 accepts its labels and rejects others as kube does', () => {
    validateFieldSelector(events, parseFieldSelector('involvedObject.name=p,type=Warning,reportingComponent=x,source=s'));
    assert.throws(() => validateFieldSelector(events, parseFieldSelector('regarding.name=p')), (e: unknown) => e instanceof SelectorParseError && e.message === 'field label not supported: regarding.name');
  });

  it('events.k8s.io/v1 maps its names onto the stored labels', () => {
    const v1 = eventsV1;
    assert.deepEqual(convertFieldLabel(v1, 'regarding.name', 'p'), { label: 'involvedObject.name', value: 'p' });
    assert.deepEqual(convertFieldLabel(v1, 'reportingController', 'c'), { label: 'reportingComponent', value: 'c' });
    assert.throws(() => convertFieldLabel(v1, 'involvedObject.name', 'p'), (e: unknown) => e instanceof SelectorParseError && e.message === 'field label not supported: involvedObject.name');
    const sel = convertFieldSelector(v1, parseFieldSelector('regarding.name=p,type=Warning'));
    assert.equal(sel.matches(objectFieldSet(events, eventToCore(v1Full))), true);
    assert.equal(sel.matches(objectFieldSet(events, coreFull)), false);
    assert.deepEqual(sel.requirements.map((r) => r.field).sort(), ['involvedObject.name', 'type']);
  });

  it('events.k8s.io/v1beta1 has no conversion func: only metadata.name and metadata.namespace', () => {
    const beta = eventsV1beta1;
    assert.deepEqual(convertFieldLabel(beta, 'metadata.name', 'e'), { label: 'metadata.name', value: 'e' });
    assert.throws(
      () => convertFieldLabel(beta, 'regarding.name', 'p'),
      (e: unknown) => e instanceof SelectorParseError && e.message === '"regarding.name" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    // core/v1 through the same function: its own labels, unchanged.
    assert.deepEqual(convertFieldLabel(events, 'involvedObject.name', 'p'), { label: 'involvedObject.name', value: 'p' });
  });
});

describe('Event table (printEvent)', () => {
  const now = Date.parse('2022-05-01T11:00:00Z');
  it('columns as kube 1.24', () => {
    assert.deepEqual(
      events.table!.columns.map((c) => `${c.name}:${c.priority}`),
      ['Last Seen:0', 'Type:0', 'Reason:0', 'Object:0', 'Subobject:1', 'Source:1', 'Message:0', 'First Seen:1', 'Count:1', 'Name:1'],
    );
    assert.equal(eventsV1.table!.columns.length, 10);
  });

  it('cells of a legacy event, a series and a singleton new event', () => {
    assert.deepEqual(events.table!.cells({ ...coreFull, series: undefined } as StoredObject, now), ['55m', 'Normal', 'Started', 'pod/p', 'spec.containers{c}', 'kubelet, node-1', 'Started container c', '60m', 3, 'e']);
    assert.deepEqual(events.table!.cells(coreFull, now), ['54m', 'Normal', 'Started', 'pod/p', 'spec.containers{c}', 'kubelet, node-1', 'Started container c', '60m', 2, 'e']);
    const single = eventToCore({ ...v1Full, series: undefined, deprecatedSource: {}, deprecatedFirstTimestamp: undefined, deprecatedLastTimestamp: undefined, deprecatedCount: undefined, note: '  padded  ' } as StoredObject);
    assert.deepEqual(events.table!.cells(single, now), ['59m', 'Warning', 'Synced', 'pod/p', '', 'example.com/ctl, ctl-1', 'padded', '59m', 1, 'e']);
    // The events.k8s.io tables print the same cells from their own version.
    assert.deepEqual(eventsV1.table!.cells(coreToEvent(single, 'v1'), now), events.table!.cells(single, now));
    const bare = { metadata: { name: 'x' }, involvedObject: { kind: 'Node' } } as StoredObject;
    assert.deepEqual(events.table!.cells(bare, now), ['<unknown>', '', '', 'node', '', '', '', '<unknown>', 1, 'x']);
  });
});

test("goTimeString trims a fraction's zeros in linear time (a regex took minutes on a client's 200,000 digits)", () => {
  const t0 = performance.now();
  assert.equal(goTimeString(`2020-01-02T03:04:05.${'0'.repeat(200_000)}1Z`), `2020-01-02 03:04:05.${'0'.repeat(200_000)}1 +0000 UTC`);
  assert.equal(goTimeString('2020-01-02T03:04:05.120000Z'), '2020-01-02 03:04:05.12 +0000 UTC');
  // An explicit bound: node:test's timeout cannot stop synchronous code.
  assert.ok(performance.now() - t0 < 2000);
});
