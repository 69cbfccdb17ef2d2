/** Schemas of the shared meta/v1 and core/v1 structures that resource schemas reference. */
import { type Schema, s } from './schema.js';

export const metaDefinitions: Record<string, Schema> = {
  ObjectMeta: s.obj(
    {
      name: s.str('Name must be unique within a namespace.'),
      generateName: s.str('An optional prefix used by the server to generate a unique name.'),
      namespace: s.str('The namespace of the object.'),
      selfLink: s.str('Deprecated: always empty.'),
      uid: s.str('A unique value set by the server on create.'),
      resourceVersion: s.str('An opaque value of the internal version of this object.'),
      generation: s.int('A sequence number representing a specific generation of the desired state.', 'int64'),
      creationTimestamp: s.time('When this object was created.'),
      deletionTimestamp: s.time('When this object will be deleted; set by the server on a graceful delete.'),
      deletionGracePeriodSeconds: s.int('Seconds allowed for graceful termination.', 'int64'),
      labels: s.map(s.str(), { description: 'Map of string keys and values to organize and categorize objects.' }),
      annotations: s.map(s.str(), { description: 'Unstructured key value map stored with a resource.' }),
      ownerReferences: s.arr(s.ref('OwnerReference'), {
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'uid',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['uid'],
      }),
      finalizers: s.arr(s.str(), { 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-list-type': 'set' }),
      managedFields: s.arr(s.ref('ManagedFieldsEntry'), { 'x-kubernetes-list-type': 'atomic' }),
    },
    { description: 'Standard object metadata.', 'x-go-type': 'v1.ObjectMeta' },
  ),
  OwnerReference: s.obj(
    {
      apiVersion: s.str('API version of the referent.'),
      kind: s.str('Kind of the referent.'),
      name: s.str('Name of the referent.'),
      uid: s.str('UID of the referent.'),
      controller: s.bool('If true, this reference points to the managing controller.'),
      blockOwnerDeletion: s.bool('If true, the owner cannot be deleted before this reference is removed.'),
    },
    { required: ['apiVersion', 'kind', 'name', 'uid'], 'x-kubernetes-map-type': 'atomic', 'x-go-type': 'v1.OwnerReference' },
  ),
  ManagedFieldsEntry: s.obj(
    {
      manager: s.str('The workflow managing these fields.'),
      operation: s.str("The type of operation: 'Apply' or 'Update'."),
      apiVersion: s.str('The version of the resource these fields were set with.'),
      time: s.time('When the fields were last changed.'),
      fieldsType: s.str("The format of the fields field; only 'FieldsV1'."),
      fieldsV1: s.any('The set of fields, in FieldsV1 format.'),
      subresource: s.str('The sub-resource used to update the object.'),
    },
    { 'x-go-type': 'v1.ManagedFieldsEntry' },
  ),
  ObjectReference: s.obj(
    {
      kind: s.str(),
      namespace: s.str(),
      name: s.str(),
      uid: s.str(),
      apiVersion: s.str(),
      resourceVersion: s.str(),
      fieldPath: s.str(),
    },
    { 'x-kubernetes-map-type': 'atomic', 'x-go-type': 'v1.ObjectReference' },
  ),
  LocalObjectReference: s.obj({ name: s.str('Name of the referent.') }, { 'x-kubernetes-map-type': 'atomic', 'x-go-type': 'v1.LocalObjectReference' }),
  LabelSelectorRequirement: s.obj(
    {
      key: s.str('The label key that the selector applies to.', { 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'key' }),
      operator: s.str("One of In, NotIn, Exists and DoesNotExist."),
      values: s.arr(s.str()),
    },
    { required: ['key', 'operator'], 'x-go-type': 'v1.LabelSelectorRequirement' },
  ),
  LabelSelector: s.obj(
    {
      matchLabels: s.map(s.str()),
      matchExpressions: s.arr(s.ref('LabelSelectorRequirement')),
    },
    { 'x-kubernetes-map-type': 'atomic', 'x-go-type': 'v1.LabelSelector' },
  ),
};
