/**
 * kube's NamespaceLifecycle plugin: no new content in a missing or terminating namespace, and the
 * immortal namespaces (default, kube-system, kube-public) cannot be deleted.
 */
import { forbidden, groupResourceOf, notFound, type StoredObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';

export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

/** Reads a namespace (a quorum read), or undefined when it does not exist. */
export type NamespaceLookup = (name: string) => Promise<StoredObject | undefined>;

export function createNamespaceLifecycle(lookup: NamespaceLookup): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    handles: (op) => op === 'CREATE' || op === 'DELETE',
    async validate(attrs) {
      const def = attrs.resource;
      if (attrs.operation === 'DELETE') {
        if (def.group === '' && def.plural === 'namespaces' && !attrs.subresource && IMMORTAL_NAMESPACES.has(attrs.name)) {
          throw forbidden(groupResourceOf(def), attrs.name, 'this namespace may not be deleted');
        }
        return;
      }
      if (!def.namespaced || !attrs.namespace) return;
      const ns = await lookup(attrs.namespace);
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, attrs.namespace);
      const phase = (ns['status'] as { phase?: string } | undefined)?.phase;
      if (ns.metadata.deletionTimestamp || phase === 'Terminating') {
        const why = `unable to create new content in namespace ${attrs.namespace} because it is being terminated`;
        throw forbidden(groupResourceOf(def), attrs.name, why, [{ reason: 'NamespaceTerminating', message: why, field: 'metadata.namespace' }]);
      }
    },
  };
}
