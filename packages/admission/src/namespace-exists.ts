/**
 * kube's NamespaceExists plugin (plugin/pkg/admission/namespace/exists): every write of namespaced
 * content names an existing namespace (NotFound otherwise). Validating only; off by default.
 */
import { notFound } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import type { NamespaceLookup } from './namespace-lifecycle.js';

export function createNamespaceExists(lookup: NamespaceLookup): AdmissionPlugin {
  return {
    name: 'NamespaceExists',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE',
    async validate(attrs) {
      if (!attrs.namespace || (attrs.kind.group === '' && attrs.kind.kind === 'Namespace')) return;
      if (!(await lookup(attrs.namespace))) throw notFound({ group: '', resource: 'namespaces' }, attrs.namespace);
    },
  };
}
