/**
 * The request's objects in the version a webhook is called with (kube's generic.VersionedAttributes,
 * NewVersionedAttributes and ConvertVersionedAttributes): a webhook matched through an equivalent
 * resource (matchPolicy Equivalent) gets the object and old object converted to that resource's
 * kind; a mutating webhook's result is converted back into the request's version.
 */
import { apiVersionOf, convertObject, internalError, type ResourceDefinition, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, GroupVersionKind } from '../interfaces.js';
import type { WebhookInvocation } from './matching.js';

export interface VersionedAttributes {
  /** The kind `object` and `oldObject` are in (the invocation's). */
  kind: GroupVersionKind;
  object: StoredObject | undefined;
  oldObject: StoredObject | undefined;
  /** Whether the objects are conversions of the request's (else they are the request's own). */
  converted: boolean;
}

const sameKind = (a: GroupVersionKind, b: GroupVersionKind): boolean => a.group === b.group && a.version === b.version && a.kind === b.kind;

/**
 * Whether the invocation reads the request's objects through another version: an equivalent
 * resource whose kind differs (a sub-resource with a kind of its own, such as autoscaling/v1
 * Scale, is the same in every version).
 */
export function needsConversion(attrs: AdmissionAttributes, inv: WebhookInvocation): boolean {
  return inv.resource !== attrs.resource && !sameKind(inv.kind, attrs.kind);
}

/**
 * The request's objects as `inv` gets them; converted only when its version differs (a custom
 * resource with a conversion webhook through the webhook: kube's request scope converter).
 */
export async function versionedAttributes(attrs: AdmissionAttributes, inv: WebhookInvocation): Promise<VersionedAttributes> {
  if (!needsConversion(attrs, inv)) return { kind: inv.kind, object: attrs.object, oldObject: attrs.oldObject, converted: false };
  const to = (o: StoredObject | undefined): Promise<StoredObject | undefined> => (o ? convert(o, attrs.resource, inv.resource) : Promise.resolve(undefined));
  const [object, oldObject] = await Promise.all([to(attrs.object), to(attrs.oldObject)]);
  return { kind: inv.kind, object, oldObject, converted: true };
}

/** An object of the invocation's version back in the request's (kube converts into attr.GetObject()). */
export function toRequestVersion(attrs: AdmissionAttributes, from: ResourceDefinition, obj: StoredObject): Promise<StoredObject> {
  return convert(obj, from, attrs.resource);
}

/** A conversion that fails is kube's InternalError. */
async function convert(obj: StoredObject, from: ResourceDefinition, to: ResourceDefinition): Promise<StoredObject> {
  try {
    const viaWebhook = from.convertAsync ?? to.convertAsync;
    if (viaWebhook && from !== to) {
      const typed: StoredObject = { ...obj, apiVersion: apiVersionOf(from), kind: from.kind };
      return (await viaWebhook.call(from.convertAsync ? from : to, [typed], apiVersionOf(to)))[0]!;
    }
    return convertObject(obj, from, to);
  } catch (e) {
    throw internalError(e);
  }
}
