/**
 * events.k8s.io Events (v1, and the deprecated v1beta1), served over the core/v1 Event storage:
 * kube serves them with the core event REST (short name `ev`, create on PUT, the internal Event's
 * printer); validation depends on the request's version, field labels on v1's own names.
 */
import type { ResourceDefinition } from '../../catalog.js';
import { nameIsDNSSubdomain, nameIsPathSegment } from '../../validation.js';
import { defineResource } from '../define.js';
import { events } from '../core/events.js';
import { EVENTS_GROUP, coreToEvent, eventToCore } from './conversion.js';
import { GROUP_TIMES, eventStrategy, eventTableOf } from './strategy.js';

/**
 * events.k8s.io/v1's field labels (pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent),
 * mapped onto core/v1's selectable fields. v1beta1 registers none in kube 1.24: the default.
 */
const V1_FIELD_LABELS: Readonly<Record<string, string>> = {
  'reason': 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  'reportingController': 'reportingComponent',
  'source': 'source',
  'type': 'type',
  'metadata.namespace': 'metadata.namespace',
  'metadata.name': 'metadata.name',
};

function eventsVersion(version: 'v1' | 'v1beta1'): ResourceDefinition {
  return defineResource({
    group: EVENTS_GROUP,
    version,
    kind: 'Event',
    plural: 'events',
    shortNames: ['ev'],
    namespaced: true,
    description: 'An Event reports something that happened to an object in the cluster.',
    // ValidateEventCreate checks names as DNS subdomains for events.k8s.io/v1 only.
    nameValidator: version === 'v1' ? nameIsDNSSubdomain : nameIsPathSegment,
    allowCreateOnUpdate: true,
    strategy: eventStrategy(`${EVENTS_GROUP}/${version}`, eventToCore, GROUP_TIMES),
    // kube prints the internal Event: the same columns and cells in every version (regarding is
    // the OBJECT, note the MESSAGE). The objects printed are this version's, with or without
    // apiVersion (a list's items have none).
    table: eventTableOf(eventToCore),
    ...(version === 'v1' ? { fieldSelector: { labels: V1_FIELD_LABELS } } : {}),
    conversion: { storage: events, toStorage: eventToCore, fromStorage: (obj) => coreToEvent(obj, version) },
  });
}

/** events.k8s.io/v1 events (the group's preferred version). */
export const eventsV1 = eventsVersion('v1');
/** events.k8s.io/v1beta1 events (deprecated: see index.ts). */
export const eventsV1beta1 = eventsVersion('v1beta1');
