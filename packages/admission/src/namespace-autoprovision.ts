/**
 * kube's NamespaceAutoProvision plugin (plugin/pkg/admission/namespace/autoprovision, 1.24), off
 * by default: creating an object in a namespace that does not exist creates the namespace first
 * (mutating, CREATE only; dry runs and namespaces themselves are left alone). It runs before
 * NamespaceLifecycle, which then finds the namespace.
 */
import { isAlreadyExists, isStatusError } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { admissionForbidden } from './forbidden.js';
import type { NamespaceLookup } from './namespace-lifecycle.js';

/** Creates the namespace `name` as kube's loopback client would. */
export type NamespaceCreator = (name: string) => Promise<void>;

export function createNamespaceAutoProvision(opts: { getNamespace: NamespaceLookup; createNamespace: NamespaceCreator }): AdmissionPlugin {
  return {
    name: 'NamespaceAutoProvision',
    handles: (op) => op === 'CREATE',
    async admit(attrs) {
      if (attrs.dryRun || attrs.namespace === '' || (attrs.kind.group === '' && attrs.kind.kind === 'Namespace')) return;
      if (await opts.getNamespace(attrs.namespace)) return;
      try {
        await opts.createNamespace(attrs.namespace);
      } catch (e) {
        if (isAlreadyExists(e)) return;
        throw admissionForbidden(attrs, isStatusError(e) || e instanceof Error ? e.message : String(e));
      }
    },
  };
}
