/**
 * Table columns per kind, as kube-apiserver 1.24's printers (pkg/printers/internalversion) define
 * them; kubectl's `get` prints these cells as they come.
 */
import type { StoredObject } from './types.js';
import { compileJSONPath, JSONPathError, type JSONPath } from './jsonpath.js';
import { stringifyJson } from './number-codec.js';
import { timeMillis } from './resources/events-conversion.js';

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

/** One `additionalPrinterColumns` entry of a CustomResourceDefinition version. */
export interface PrinterColumn {
  name: string;
  /** integer, number, string, boolean or date. */
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** kube's ConvertToHumanReadableDateType: the age of an RFC 3339 time, `<invalid>` if unparsable. */
function dateCell(value: unknown, now: number): unknown {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(t)) return '<invalid>';
  return humanDuration(now - t);
}

/** kube's cellForJSONValue: a typed cell, or null when the value is not of the column's type. */
function typedCell(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      // An int64 as it is (a BigInt above 2^53, written exactly), a float64 truncated.
      return typeof value === 'bigint' ? value : typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return dateCell(value, now);
    default:
      return null;
  }
}

/** What client-go's jsonpath prints for a value in a string column. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return stringifyJson(value);
  return String(value);
}

/**
 * The Table of a custom resource version (kube's CRD tableconvertor): Name, then each printer
 * column, whose cell is the first value its JSONPath reaches (null when none). Without columns,
 * kube serves one: Age from `.metadata.creationTimestamp`. A column whose path does not compile
 * makes kube fall back to the default table.
 */
export function customResourceTable(columns: readonly PrinterColumn[]): TableDefinition {
  const cols = columns.length > 0 ? columns : [{ name: 'Age', type: 'date', description: CREATED_DOC, jsonPath: '.metadata.creationTimestamp' }];
  let paths: JSONPath[];
  try {
    paths = cols.map((c) => compileJSONPath(c.jsonPath));
  } catch (e) {
    if (e instanceof JSONPathError) return defaultTable;
    throw e;
  }
  return {
    columns: [
      nameCol,
      ...cols.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
      })),
    ],
    cells: (obj, now) => [
      obj.metadata.name ?? '',
      ...cols.map((c, i) => {
        const found = paths[i]!.find(obj);
        if (found.length === 0 || found[0] === undefined) return null;
        return c.type === 'string' ? textOf(found[0]) : typedCell(c.type, found[0], now);
      }),
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

const EVENT_DOC = {
  lastTimestamp: 'The time at which the most recent occurrence of this event was recorded.',
  type: 'Type of this event (Normal, Warning), new types could be added in the future',
  reason: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  involvedObject: 'The object that this event is about.',
  fieldPath:
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
  source: 'The component reporting this event. Should be a short machine understandable string.',
  message: 'A human-readable description of the status of this operation.',
  firstTimestamp: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
  count: 'The number of times this event has occurred.',
};

/** kube's translateTimestampSince / translateMicroTimestampSince: `<unknown>` for a zero time. */
function since(ts: unknown, now: number): string {
  // Sub-millisecond digits count: Go truncates the elapsed time, 54m59.999999s is "54m".
  const t = timeMillis(ts);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * kube's printEvent (wide, as the server prints) on a core/v1 Event: LAST SEEN falls back to the
 * first time, which falls back to eventTime; a series overrides last seen and count; a singleton
 * without count counts 1; SOURCE falls back to reportingComponent/reportingInstance.
 * `toCore` gives the core/v1 form of an object of another version (kube prints the internal Event).
 */
export function eventTableOf(toCore: (obj: StoredObject) => StoredObject): TableDefinition {
  return {
    columns: [
      col('Last Seen', 'string', EVENT_DOC.lastTimestamp),
      col('Type', 'string', EVENT_DOC.type),
      col('Reason', 'string', EVENT_DOC.reason),
      col('Object', 'string', EVENT_DOC.involvedObject),
      col('Subobject', 'string', EVENT_DOC.fieldPath, { priority: 1 }),
      col('Source', 'string', EVENT_DOC.source, { priority: 1 }),
      col('Message', 'string', EVENT_DOC.message),
      col('First Seen', 'string', EVENT_DOC.firstTimestamp, { priority: 1 }),
      col('Count', 'string', EVENT_DOC.count, { priority: 1 }),
      col('Name', 'string', NAME_DOC, { priority: 1, format: 'name' }),
    ],
    cells: (obj, now) => {
      const ev = toCore(obj);
      let first = since(ev['firstTimestamp'], now);
      if (!text(ev['firstTimestamp'])) first = since(ev['eventTime'], now);
      let last = since(ev['lastTimestamp'], now);
      if (!text(ev['lastTimestamp'])) last = first;
      let count = typeof ev['count'] === 'number' ? ev['count'] : 0;
      const series = field(ev, 'series');
      if (series && typeof series === 'object') {
        last = since(field(ev, 'series', 'lastObservedTime'), now);
        const c = field(ev, 'series', 'count');
        count = typeof c === 'number' ? c : 0;
      } else if (count === 0) {
        count = 1; // singleton events have no count in the new API
      }
      const kind = text(field(ev, 'involvedObject', 'kind')).toLowerCase();
      const name = text(field(ev, 'involvedObject', 'name'));
      const component = text(field(ev, 'source', 'component')) || text(ev['reportingComponent']);
      const instance = text(field(ev, 'source', 'host')) || text(ev['reportingInstance']);
      return [
        last,
        text(ev['type']),
        text(ev['reason']),
        name ? `${kind}/${name}` : kind,
        text(field(ev, 'involvedObject', 'fieldPath')),
        instance ? `${component}, ${instance}` : component,
        text(ev['message']).trim(),
        first,
        count,
        ev.metadata.name ?? '',
      ];
    },
  };
}

/** The core/v1 Event table (objects already in core/v1 form). */
export const eventTable: TableDefinition = eventTableOf((obj) => obj);

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
