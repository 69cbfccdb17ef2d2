/**
 * Table columns per kind, as kube-apiserver 1.24's printers (pkg/printers/internalversion) define
 * them; kubectl's `get` prints these cells as they come.
 */
import type { StoredObject } from './types.js';

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableDefinition {
  columns: TableColumn[];
  /** The row's cells, in column order. `now` is the time ages are measured against. */
  cells(obj: StoredObject, now: number): unknown[];
}

const NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const CREATED_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const col = (name: string, type: string, description: string, extra: Partial<TableColumn> = {}): TableColumn => ({ name, type, format: '', description, priority: 0, ...extra });
const nameCol = col('Name', 'string', NAME_DOC, { format: 'name' });
const ageCol = col('Age', 'string', CREATED_DOC);

/** kube's duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** kube's translateTimestampSince. */
export function age(obj: StoredObject, now: number): string {
  const ts = obj.metadata.creationTimestamp;
  if (!ts) return '<unknown>';
  return humanDuration(now - Date.parse(ts));
}

const len = (v: unknown): number => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0);
const field = (obj: StoredObject, ...path: string[]): unknown => path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);

/** The default table of a kind without its own printer: Name, Created At. */
export const defaultTable: TableDefinition = {
  columns: [nameCol, col('Created At', 'date', CREATED_DOC)],
  cells: (obj) => [obj.metadata.name ?? '', obj.metadata.creationTimestamp ?? null],
};

export const serviceAccountTable: TableDefinition = {
  columns: [nameCol, col('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret'), ageCol],
  cells: (obj, now) => [obj.metadata.name ?? '', len(obj['secrets']), age(obj, now)],
};

export const namespaceTable: TableDefinition = {
  columns: [nameCol, col('Status', 'string', 'The status of the namespace'), ageCol],
  cells: (obj, now) => [obj.metadata.name ?? '', String(field(obj, 'status', 'phase') ?? ''), age(obj, now)],
};

export const secretTable: TableDefinition = {
  columns: [
    nameCol,
    col('Type', 'string', 'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types'),
    col('Data', 'string', "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
    ageCol,
  ],
  cells: (obj, now) => [obj.metadata.name ?? '', String(obj['type'] ?? ''), len(obj['data']), age(obj, now)],
};

/** Roles and cluster roles: Name, Created At (RFC 3339, UTC). */
export const roleTable: TableDefinition = defaultTable;

function bindingTable(kind: string): TableDefinition {
  return {
    columns: [
      nameCol,
      col('Role', 'string', 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.'),
      ageCol,
      col('Users', 'string', `Users in the ${kind}`, { priority: 1 }),
      col('Groups', 'string', `Groups in the ${kind}`, { priority: 1 }),
      col('ServiceAccounts', 'string', `ServiceAccounts in the ${kind}`, { priority: 1 }),
    ],
    cells: (obj, now) => {
      const subjects = (Array.isArray(obj['subjects']) ? obj['subjects'] : []) as Array<{ kind?: string; name?: string; namespace?: string }>;
      const of = (k: string): string => subjects.filter((s) => s.kind === k).map((s) => (k === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name ?? ''}` : s.name ?? '')).join(', ');
      return [obj.metadata.name ?? '', `${String(field(obj, 'roleRef', 'kind') ?? '')}/${String(field(obj, 'roleRef', 'name') ?? '')}`, age(obj, now), of('User'), of('Group'), of('ServiceAccount')];
    },
  };
}

export const roleBindingTable = bindingTable('roleBinding');
export const clusterRoleBindingTable = bindingTable('clusterRoleBinding');

/** kube's printers for Mutating/ValidatingWebhookConfiguration: NAME, WEBHOOKS, AGE. */
export const webhookConfigurationTable: TableDefinition = {
  columns: [nameCol, col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageCol],
  cells: (obj, now) => [obj.metadata.name ?? '', len(obj['webhooks']), age(obj, now)],
};

/** kube's printConfigMap: NAME, DATA (entries of data and binaryData together), AGE. */
export const configMapTable: TableDefinition = {
  columns: [
    nameCol,
    col('Data', 'string', "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."),
    ageCol,
  ],
  cells: (obj, now) => [obj.metadata.name ?? '', len(obj['data']) + len(obj['binaryData']), age(obj, now)],
};

/** kube's printLease: NAME, HOLDER (empty when none), AGE. */
export const leaseTable: TableDefinition = {
  columns: [nameCol, col('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.'), ageCol],
  cells: (obj, now) => [obj.metadata.name ?? '', String(field(obj, 'spec', 'holderIdentity') ?? ''), age(obj, now)],
};
