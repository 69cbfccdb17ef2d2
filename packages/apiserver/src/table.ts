/**
 * meta.k8s.io Table responses. For now every type gets kube's default table (Name, Created At);
 * rows carry the object as PartialObjectMetadata, the whole object, or nothing (includeObject).
 */
import { badRequest, type StoredObject, type ObjectList } from '@plinth/api';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? '';
  if (v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: unsupported value "${v}", supported: None, Metadata, Object`);
}

const DEFAULT_COLUMNS = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names',
    priority: 0,
  },
  {
    name: 'Created At',
    type: 'date',
    format: '',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    priority: 0,
  },
];

function rowObject(obj: StoredObject, include: IncludeObject, tableVersion: string): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${tableVersion}`, metadata: obj.metadata };
}

function row(obj: StoredObject, include: IncludeObject, version: string): Record<string, unknown> {
  const r: Record<string, unknown> = { cells: [obj.metadata.name ?? '', obj.metadata.creationTimestamp ?? null] };
  const o = rowObject(obj, include, version);
  if (o !== undefined) r['object'] = o;
  return r;
}

export function tableOfObject(obj: StoredObject, include: IncludeObject, version: string): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: { resourceVersion: obj.metadata.resourceVersion ?? '' },
    columnDefinitions: DEFAULT_COLUMNS,
    rows: [row(obj, include, version)],
  };
}

export function tableOfList(list: ObjectList, include: IncludeObject, version: string): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: list.metadata,
    columnDefinitions: DEFAULT_COLUMNS,
    rows: list.items.map((o) => row(o as StoredObject, include, version)),
  };
}
