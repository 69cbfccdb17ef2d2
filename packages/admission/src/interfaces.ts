/**
 * Admission as kube runs it: mutating plugins after decode in the handler, validating plugins
 * inside the store's write, after strategy validation.
 */
import type { ResourceDefinition, StoredObject, UserInfo } from '@plinth/api';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: Operation;
  resource: ResourceDefinition;
  subresource: string;
  namespace: string;
  name: string;
  /** The new object (create/update); undefined for delete. */
  object: StoredObject | undefined;
  /** The current object (update/delete). */
  oldObject: StoredObject | undefined;
  user: UserInfo;
  dryRun: boolean;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Which operations this plugin cares about. */
  handles(op: Operation): boolean;
  /** May change `attrs.object`. Throws a StatusError to refuse. */
  admit?(attrs: AdmissionAttributes): void | Promise<void>;
  /** Must not change anything. Throws a StatusError to refuse. */
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
}

export interface AdmissionChain {
  admit(attrs: AdmissionAttributes): Promise<void>;
  validate(attrs: AdmissionAttributes): Promise<void>;
}

/** Runs plugins in order: every mutating `admit`, then (separately) every `validate`. */
export function createAdmissionChain(plugins: AdmissionPlugin[]): AdmissionChain {
  return {
    async admit(attrs) {
      for (const p of plugins) if (p.admit && p.handles(attrs.operation)) await p.admit(attrs);
    },
    async validate(attrs) {
      for (const p of plugins) if (p.validate && p.handles(attrs.operation)) await p.validate(attrs);
    },
  };
}
