/**
 * kube's NamespaceLifecycle plugin (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle):
 * no content in a missing namespace, no new content in a terminating one, and the immortal
 * namespaces (default, kube-system, kube-public) cannot be deleted. Validating only.
 */
import { forbidden, groupResourceOf, notFound, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

/**
 * Reads a namespace, or undefined when it does not exist: from the watch cache (then a quorum
 * read when the cache does not have it), or a quorum read straight away with `live`.
 */
export type NamespaceLookup = (name: string, opts?: { live?: boolean }) => Promise<StoredObject | undefined>;

/** kube's forceLiveLookupTTL: how long after deleting a namespace this server reads it live. */
const FORCE_LIVE_LOOKUP_MS = 30_000;

const isNamespaceKind = (a: AdmissionAttributes): boolean => a.kind.group === '' && a.kind.kind === 'Namespace';

// Answering NotFound here would let anyone probe which namespaces exist (kube's accessReviewResources).
const isAccessReview = (a: AdmissionAttributes): boolean => a.resource.group === 'authorization.k8s.io' && a.resource.plural === 'localsubjectaccessreviews';

export function createNamespaceLifecycle(lookup: NamespaceLookup, now: () => number = Date.now): AdmissionPlugin {
  /**
   * Namespaces this server was asked to delete lately, until when: their cached state may not
   * show the deletion yet, so content for them is checked against etcd (kube's
   * forceLiveLookupCache) — a client that deletes a namespace and then writes into it through
   * the same replica is refused, as with kube.
   */
  const forceLive = new Map<string, number>();
  const mustReadLive = (name: string): boolean => {
    const until = forceLive.get(name);
    if (until === undefined) return false;
    if (until > now()) return true;
    forceLive.delete(name);
    return false;
  };
  return {
    name: 'NamespaceLifecycle',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE',
    async validate(attrs) {
      if (attrs.operation === 'DELETE' && isNamespaceKind(attrs) && IMMORTAL_NAMESPACES.has(attrs.name)) {
        throw forbidden(groupResourceOf(attrs.resource), attrs.name, 'this namespace may not be deleted');
      }
      if (attrs.operation === 'DELETE' && isNamespaceKind(attrs)) {
        if (forceLive.size > 10_000) for (const [name, until] of forceLive) if (until <= now()) forceLive.delete(name);
        forceLive.set(attrs.name, now() + FORCE_LIVE_LOOKUP_MS);
        return;
      }
      if (!attrs.namespace || isNamespaceKind(attrs) || attrs.operation === 'DELETE' || isAccessReview(attrs)) return;
      const ns = await lookup(attrs.namespace, mustReadLive(attrs.namespace) ? { live: true } : undefined);
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, attrs.namespace);
      if (attrs.operation !== 'CREATE') return;
      const phase = (ns['status'] as { phase?: string } | undefined)?.phase;
      if (ns.metadata.deletionTimestamp || phase === 'Terminating') {
        const why = `unable to create new content in namespace ${attrs.namespace} because it is being terminated`;
        throw forbidden(groupResourceOf(attrs.resource), attrs.name, why, [{ reason: 'NamespaceTerminating', message: why, field: 'metadata.namespace' }]);
      }
    },
  };
}
