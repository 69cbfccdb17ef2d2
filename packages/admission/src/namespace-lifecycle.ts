/**
 * kube's NamespaceLifecycle plugin (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle):
 * no content in a missing namespace, no new content in a terminating one, and the immortal
 * namespaces (default, kube-system, kube-public) cannot be deleted. Validating only.
 */
import { forbidden, groupResourceOf, notFound, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

/** Reads a namespace (a quorum read), or undefined when it does not exist. */
export type NamespaceLookup = (name: string) => Promise<StoredObject | undefined>;

const isNamespaceKind = (a: AdmissionAttributes): boolean => a.kind.group === '' && a.kind.kind === 'Namespace';

// Answering NotFound here would let anyone probe which namespaces exist (kube's accessReviewResources).
const isAccessReview = (a: AdmissionAttributes): boolean => a.resource.group === 'authorization.k8s.io' && a.resource.plural === 'localsubjectaccessreviews';

export function createNamespaceLifecycle(lookup: NamespaceLookup): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE',
    async validate(attrs) {
      if (attrs.operation === 'DELETE' && isNamespaceKind(attrs) && IMMORTAL_NAMESPACES.has(attrs.name)) {
        throw forbidden(groupResourceOf(attrs.resource), attrs.name, 'this namespace may not be deleted');
      }
      if (!attrs.namespace || isNamespaceKind(attrs) || attrs.operation === 'DELETE' || isAccessReview(attrs)) return;
      const ns = await lookup(attrs.namespace);
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
