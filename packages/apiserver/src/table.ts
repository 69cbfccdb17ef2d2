/**
 * meta.k8s.io Table responses: the kind's columns from the catalog (kube's printers), or the
 * default Name / Created At table; rows carry the object as PartialObjectMetadata, the whole
 * object, or nothing (includeObject).
 */
import { badRequest, defaultTable, type ObjectList, type ResourceDefinition, type StoredObject } from '@plinth/api';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? '';
  if (v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: unsupported value "${v}", supported: None, Metadata, Object`);
}

/** What a table is made from: the kind's printer (`table`), or the default one. */
type Printed = Pick<ResourceDefinition, 'table'>;

function row(def: Printed, obj: StoredObject, include: IncludeObject, version: string, now: number): Record<string, unknown> {
  const r: Record<string, unknown> = { cells: (def.table ?? defaultTable).cells(obj, now) };
  if (include === 'Object') r['object'] = obj;
  else if (include === 'Metadata') r['object'] = { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
  return r;
}

function table(def: Printed, metadata: ObjectList['metadata'], rows: Array<Record<string, unknown>>, version: string): Record<string, unknown> {
  return { kind: 'Table', apiVersion: `meta.k8s.io/${version}`, metadata, columnDefinitions: (def.table ?? defaultTable).columns, rows };
}

export function tableOfObject(def: Printed, obj: StoredObject, include: IncludeObject, version: string): Record<string, unknown> {
  return table(def, { resourceVersion: obj.metadata.resourceVersion ?? '' }, [row(def, obj, include, version, Date.now())], version);
}

export function tableOfList(def: Printed, list: ObjectList<StoredObject>, include: IncludeObject, version: string): Record<string, unknown> {
  const now = Date.now();
  return table(def, list.metadata, list.items.map((o) => row(def, o, include, version, now)), version);
}
