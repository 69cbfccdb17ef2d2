/**
 * core/v1 Events, the storage version of every Event (events.k8s.io/v1 and v1beta1 convert to
 * it): kube's one event store (pkg/registry/core/event): no defaults, create on PUT, short name
 * `ev`, the printer, and the field selectors (ToSelectableFields, AddFieldLabelConversionsForEvent).
 */
import type { StoredObject } from '../../types.js';
import { nameIsPathSegment } from '../../validation.js';
import { defineResource } from '../define.js';
import { coreEventShape } from '../events/conversion.js';
import { CORE_TIMES, eventStrategy, eventTableOf } from '../events/strategy.js';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const child = (v: unknown, key: string): unknown => (v !== null && typeof v === 'object' && Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : undefined);
const identity = (obj: StoredObject): StoredObject => obj;

const INVOLVED_OBJECT_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];

export const events = defineResource({
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  shortNames: ['ev'],
  namespaced: true,
  description: 'An Event reports something that happened to an object in the cluster.',
  // kube's event strategy validates no name; the generic path-segment rule applies.
  nameValidator: nameIsPathSegment,
  allowCreateOnUpdate: true,
  strategy: eventStrategy('v1', identity, CORE_TIMES, coreEventShape),
  table: eventTableOf(identity),
  fieldSelector: {
    labels: [...INVOLVED_OBJECT_FIELDS.map((f) => `involvedObject.${f}`), 'reason', 'reportingComponent', 'source', 'type', 'metadata.namespace', 'metadata.name'],
    fields: (obj, out) => {
      const involved = obj['involvedObject'];
      for (const f of INVOLVED_OBJECT_FIELDS) out[`involvedObject.${f}`] = str(child(involved, f));
      out['reason'] = str(obj['reason']);
      // The core/v1 JSON name of the internal ReportingController.
      out['reportingComponent'] = str(obj['reportingComponent']);
      out['source'] = str(child(obj['source'], 'component')) || str(obj['reportingComponent']);
      out['type'] = str(obj['type']);
    },
  },
});
