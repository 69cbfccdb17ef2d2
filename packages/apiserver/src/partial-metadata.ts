/**
 * Metadata-only answers (meta.k8s.io PartialObjectMetadata and PartialObjectMetadataList, v1 and
 * v1beta1), as kube 1.24's response transform makes them (apiserver
 * pkg/endpoints/handlers/response.go `asPartialObjectMetadata`, `asPartialObjectMetadataList`):
 * any resource's object reduced to its apiVersion/kind and whole `metadata` — what client-go's
 * metadata client and metadata informers ask for. A get asked for a list, or a list asked for
 * one object, is kube's 406.
 */
import { StatusError, type ObjectList, type ResourceDefinition, type StoredObject } from '@plinth/api';
import type { PartialMetadataRequest } from './negotiation.js';

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: string;
  metadata: StoredObject['metadata'];
}

/** kube's meta.AsPartialObjectMetadata with the requested group/version (the metadata is shared, not copied). */
export function asPartialObjectMetadata(obj: StoredObject, version: string): PartialObjectMetadata {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

/** kube's asPartialObjectMetadataList: the list's metadata, each item as PartialObjectMetadata (with its kind). */
export function asPartialObjectMetadataList(list: ObjectList<StoredObject>, version: string): Record<string, unknown> {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: list.metadata,
    items: list.items.map((o) => asPartialObjectMetadata(o, version)),
  };
}

/**
 * The Go type kube's message names (`%T` of what its registry returned): the internal type of a
 * built-in kind (package `core` for the core group and events.k8s.io, else the group's first
 * label), `unstructured.Unstructured` for a custom resource.
 */
function goTypeOf(def: ResourceDefinition, list: boolean): string {
  if (def.unstructured) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const group = def.conversion?.storage.group ?? def.group;
  const pkg = group === '' ? 'core' : group === 'internal.apiserver.k8s.io' ? 'apiserverinternal' : group.split('.')[0]!;
  return `*${pkg}.${list ? def.listKind : def.kind}`;
}

/** kube's errNotAcceptable: 406 NotAcceptable with its own message. */
function refused(message: string): StatusError {
  return new StatusError({ code: 406, reason: 'NotAcceptable', message });
}

/** A get's answer as asked; 406 when the client asked for a list. */
export function partialOfObject(def: ResourceDefinition, obj: StoredObject, want: PartialMetadataRequest): PartialObjectMetadata {
  if (want.list) throw refused(`you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeOf(def, false)})`);
  return asPartialObjectMetadata(obj, want.version);
}

/** A list's answer as asked; 406 when the client asked for one object. */
export function partialOfList(def: ResourceDefinition, list: ObjectList<StoredObject>, want: PartialMetadataRequest): Record<string, unknown> {
  if (!want.list) throw refused(`you requested PartialObjectMetadata, but the requested object is a list (${goTypeOf(def, true)})`);
  return asPartialObjectMetadataList(list, want.version);
}
