/**
 * events.k8s.io: v1 (preferred) and v1beta1, deprecated in 1.22 and removed in 1.25 (kube names no
 * replacement). Both convert to core/v1 Events, their storage (conversion.ts).
 */
import { defineGroup } from '../define.js';
import { eventsV1, eventsV1beta1 } from './events.js';

export const eventsGroup = defineGroup({
  group: 'events.k8s.io',
  versions: [{ version: 'v1' }, { version: 'v1beta1', deprecated: { in: '1.22', removedIn: '1.25' } }],
  resources: [eventsV1, eventsV1beta1],
});

export { eventsV1, eventsV1beta1 };
export { EVENTS_GROUP, coreToEvent, eventToCore } from './conversion.js';
export { legacyValidateEvent, validateEventCreate, validateEventUpdateStrict, type EventRequestVersion } from './validation.js';
