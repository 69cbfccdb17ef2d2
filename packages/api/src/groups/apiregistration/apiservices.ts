/**
 * apiregistration.k8s.io/v1 APIServices as kube-aggregator 1.24 has them
 * (pkg/apis/apiregistration/validation, pkg/registry/apiservice): cluster-scoped, category
 * `api-extensions`, a `status` sub-resource; local ones (no `spec.service`) are Available at once.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Subdomain, nameIsPathSegment } from '../../validation.js';
import { isDNS1035Label } from '../admissionregistration/webhooks.js';
import { defineResource } from '../define.js';

export const APIREGISTRATION_GROUP = 'apiregistration.k8s.io';

/** kube-aggregator's label on the APIServices its autoregister controller manages. */
export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

type Raw = Record<string, unknown>;
const rec = (v: unknown): Raw | undefined => (isPlainObject(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** kube's NewLocalAvailableAPIServiceCondition. */
export function localAvailableCondition(now = new Date()): Raw {
  return { type: 'Available', status: 'True', lastTransitionTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'), reason: 'Local', message: 'Local APIServices are always available' };
}

/** kube's ValidateAPIService (metadata itself is the store's; the name must be `<version>.<group>`). */
export function validateAPIService(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = rec(obj['spec']) ?? {};
  const group = str(spec['group']);
  const version = str(spec['version']);
  const name = obj.metadata.name ?? '';
  const required = `${version}.${group}`;
  if (name && nameIsPathSegment(name, false).length === 0 && name !== required) {
    errs.push(fieldErr.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`));
  }
  if (!group && version !== 'v1') errs.push(fieldErr.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push(fieldErr.invalid('spec.group', group, m));
  for (const m of isDNS1035Label(version)) errs.push(fieldErr.invalid('spec.version', version, m));
  const gpm = num(spec['groupPriorityMinimum']);
  if (gpm <= 0 || gpm > 20000) errs.push(fieldErr.invalid('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
  const vp = num(spec['versionPriority']);
  if (vp <= 0 || vp > 1000) errs.push(fieldErr.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const caBundle = str(spec['caBundle']);
  const caBytes = caBundle ? Buffer.from(caBundle, 'base64').length : 0;
  const insecure = spec['insecureSkipTLSVerify'] === true;
  const service = rec(spec['service']);
  if (!service) {
    if (caBytes) errs.push(fieldErr.invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (insecure) errs.push(fieldErr.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  if (!str(service['namespace'])) errs.push(fieldErr.required('spec.service.namespace', ''));
  if (!str(service['name'])) errs.push(fieldErr.required('spec.service.name', ''));
  const port = num(service['port']);
  if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(fieldErr.invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (insecure && caBytes) errs.push(fieldErr.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return errs;
}

/** kube's ValidateAPIServiceStatus: condition statuses are True, False or Unknown. */
export function validateAPIServiceStatus(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = rec(obj['status'])?.['conditions'];
  (Array.isArray(conditions) ? conditions : []).forEach((c: unknown, i) => {
    const s = rec(c)?.['status'];
    if (s !== 'True' && s !== 'False' && s !== 'Unknown') errs.push(fieldErr.notSupported(`status.conditions[${i}].status`, s ?? '', ['True', 'False', 'Unknown']));
  });
  return errs;
}

/** kube's apiServerStrategy: status reset on create (local ones Available), kept on update. */
const apiServiceStrategy: ResourceStrategy = {
  defaults(obj) {
    // kube's SetDefaults_ServiceReference: port 443.
    const service = rec(rec(obj['spec'])?.['service']);
    if (service && (service['port'] === undefined || service['port'] === null)) service['port'] = 443;
  },
  prepareForCreate(obj) {
    const spec = rec(obj['spec']);
    obj['status'] = spec?.['service'] ? {} : { conditions: [localAvailableCondition()] };
  },
  prepareForUpdate(obj, old) {
    obj['status'] = old['status'];
  },
  validate: validateAPIService,
};

/** kube's apiServerStatusStrategy: spec, labels, annotations, finalizers and owners stay. */
const apiServiceStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    obj['spec'] = old['spec'];
    for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
      if (old.metadata[k] === undefined) delete obj.metadata[k];
      else (obj.metadata as Raw)[k] = old.metadata[k];
    }
  },
  validate: () => [],
  validateUpdate: validateAPIServiceStatus,
  validateOnUpdate: false,
};

/** kube-aggregator's `Available` column: True, or the status with its reason. */
export function availableCell(obj: StoredObject): string {
  const conditions = rec(obj['status'])?.['conditions'];
  const c = (Array.isArray(conditions) ? conditions : []).map(rec).find((x) => x?.['type'] === 'Available');
  if (!c) return 'Unknown';
  const status = str(c['status']);
  if (status === 'True') return status;
  return str(c['reason']) ? `${status} (${str(c['reason'])})` : status;
}

/** kube-aggregator's ConvertToTable: NAME, SERVICE, AVAILABLE, AGE. */
const apiServiceTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
    col('Available', 'string', 'Whether this service is available.'),
    ageColumn,
  ],
  cells: (obj, now) => {
    const service = rec(rec(obj['spec'])?.['service']);
    return [obj.metadata.name ?? '', service ? `${str(service['namespace'])}/${str(service['name'])}` : 'Local', availableCell(obj), age(obj, now)];
  },
};

export const apiservices = defineResource({
  group: APIREGISTRATION_GROUP,
  version: 'v1',
  kind: 'APIService',
  plural: 'apiservices',
  categories: ['api-extensions'],
  namespaced: false,
  description: 'An APIService names the server of one group/version: this one, or a Service proxied to.',
  nameValidator: nameIsPathSegment,
  strategy: apiServiceStrategy,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: apiServiceStatusStrategy }],
  table: apiServiceTable,
});
