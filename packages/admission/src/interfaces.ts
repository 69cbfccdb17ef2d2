/**
 * Admission as kube runs it (k8s.io/apiserver/pkg/admission): mutating plugins after decode in the
 * handler, validating plugins inside the store's write, after strategy validation.
 */
import type { ResourceDefinition, StoredObject, UserInfo } from '@plinth/api';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/**
 * kube's GetOperationOptions: the request's options as the handler decoded them, with their type
 * (meta.k8s.io/v1 CreateOptions for CREATE, UpdateOptions for UPDATE — also for a PATCH — and
 * DeleteOptions for DELETE). AdmissionReview sends them as `request.options`. Fields the client
 * did not set are absent, as in kube's JSON.
 */
export interface OperationOptions {
  apiVersion: 'meta.k8s.io/v1';
  kind: 'CreateOptions' | 'UpdateOptions' | 'DeleteOptions';
  /** `["All"]` for a dry run. */
  dryRun?: string[];
  /** Create/Update: the `fieldManager` parameter as given (not the User-Agent default). */
  fieldManager?: string;
  /** Delete only. */
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  orphanDependents?: boolean;
  propagationPolicy?: string;
}

/** The typed options object for `op` (kube's handlers set this TypeMeta before admission). */
export function operationOptions(
  op: Operation,
  fields: {
    dryRun?: boolean;
    fieldManager?: string | undefined;
    gracePeriodSeconds?: number | undefined;
    preconditions?: OperationOptions['preconditions'];
    orphanDependents?: boolean | undefined;
    propagationPolicy?: string | undefined;
  },
): OperationOptions {
  const kind = op === 'DELETE' ? 'DeleteOptions' : op === 'UPDATE' ? 'UpdateOptions' : 'CreateOptions';
  const out: OperationOptions = { apiVersion: 'meta.k8s.io/v1', kind };
  if (fields.dryRun) out.dryRun = ['All'];
  if (kind === 'DeleteOptions') {
    if (fields.gracePeriodSeconds !== undefined) out.gracePeriodSeconds = fields.gracePeriodSeconds;
    if (fields.preconditions) out.preconditions = fields.preconditions;
    if (fields.orphanDependents !== undefined) out.orphanDependents = fields.orphanDependents;
    if (fields.propagationPolicy) out.propagationPolicy = fields.propagationPolicy;
  } else if (fields.fieldManager) {
    out.fieldManager = fields.fieldManager;
  }
  return out;
}

/** kube's admission.Attributes: everything an AdmissionReview request needs. */
export interface AdmissionAttributes {
  operation: Operation;
  /** The resource of the path (its group, version and plural are kube's GetResource()). */
  resource: ResourceDefinition;
  /** The sub-resource of the path ('' for the main resource): status, finalize, token. */
  subresource: string;
  namespace: string;
  name: string;
  /** The kind of `object`/`oldObject`: the resource's own, or a sub-resource's (TokenRequest). */
  kind: GroupVersionKind;
  /** The new object (create/update); undefined for delete. */
  object: StoredObject | undefined;
  /** The current object (update/delete). */
  oldObject: StoredObject | undefined;
  options: OperationOptions;
  user: UserInfo;
  dryRun: boolean;
  /** Adds a warning to the response (kube's warning.AddWarning → `Warning: 299 - "..."`). */
  warn?(message: string): void;
  /** Adds an annotation to the request's audit event (kube's audit.AddAuditAnnotation). */
  annotate?(key: string, value: string): void;
}

/**
 * An admission plugin (kube's admission.Interface). What it implements says what it is, as kube's
 * MutationInterface/ValidationInterface: `admit` — mutating, `validate` — validating, both — both.
 */
export interface AdmissionPlugin {
  readonly name: string;
  /** Which operations this plugin cares about (kube's Handles). */
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

/** kube's chainAdmissionHandler: every mutating `admit` in order, then (separately) every `validate`. */
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
