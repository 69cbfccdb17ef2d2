/**
 * The garbage collector's event recorder (client-go tools/record as kube's GC uses it, source
 * component `garbage-collector-controller`): a core/v1 Event named `<object>.<hex nanoseconds>`
 * in the object's namespace (`default` for a cluster-scoped one); the same event again (same
 * object, type, reason, message) bumps the first one's count and lastTimestamp, as client-go's
 * event logger does within its 10-minute window.
 */
import type { StoredObject } from '@plinth/api';
import type { ResourceStore } from '../../registry/store.js';
import type { Logger } from '../../log.js';
import type { Identity } from './graph.js';
import { GC_USER } from './client.js';

export const GC_EVENT_SOURCE = 'garbage-collector-controller';
const CORRELATION_MS = 10 * 60_000;

export interface EventRecorder {
  event(object: Identity, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** metav1.Time: RFC 3339 at second precision. */
const timeText = (ms: number): string => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;

export function createEventRecorder(deps: { events: ResourceStore; log: Logger }): EventRecorder {
  const seen = new Map<string, { name: string; namespace: string; count: number; at: number }>();
  let last = 0n;
  /** Unix nanoseconds, strictly increasing (names must differ). */
  const nanos = (): bigint => {
    let n = BigInt(Date.now()) * 1_000_000n;
    if (n <= last) n = last + 1n;
    last = n;
    return n;
  };
  const write = async (object: Identity, type: string, reason: string, message: string): Promise<void> => {
    const namespace = object.namespace || 'default';
    const scope = { user: GC_USER, namespace };
    const key = [object.uid, object.apiVersion, object.kind, object.namespace, object.name, type, reason, message].join('\u0000');
    const now = Date.now();
    const prior = seen.get(key);
    if (prior && now - prior.at < CORRELATION_MS) {
      prior.count++;
      prior.at = now;
      const count = prior.count;
      await deps.events.patch(scope, prior.name, {
        kind: 'patch',
        apply: (cur) => ({ ...cur, count, lastTimestamp: timeText(now) }),
      });
      return;
    }
    const name = `${object.name}.${nanos().toString(16)}`;
    const stamp = timeText(now);
    const event: StoredObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { kind: object.kind, namespace: object.namespace || undefined, name: object.name, uid: object.uid, apiVersion: object.apiVersion },
      reason,
      message,
      source: { component: GC_EVENT_SOURCE },
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
      type,
      reportingComponent: '',
      reportingInstance: '',
    };
    if (!object.namespace) delete (event['involvedObject'] as Record<string, unknown>)['namespace'];
    await deps.events.create(scope, event);
    seen.set(key, { name, namespace, count: 1, at: now });
    if (seen.size > 4096) seen.delete(seen.keys().next().value as string);
  };
  return {
    event(object, type, reason, message) {
      write(object, type, reason, message).catch((e: unknown) => deps.log.v(2, 'garbage collector: writing an event failed', { reason, object: object.name, error: String(e) }));
    },
  };
}
