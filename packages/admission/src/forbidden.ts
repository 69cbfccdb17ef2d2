/**
 * kube's admission.NewForbidden: `<resource> "<name>" is forbidden: <why>`, the name being the
 * request's, else the object's, else its generateName (names are not generated yet), else "Unknown".
 */
import { forbidden, groupResourceOf, type StatusError } from '@plinth/api';
import type { AdmissionAttributes } from './interfaces.js';

export function admissionForbidden(attrs: AdmissionAttributes, why: string): StatusError {
  const meta = attrs.object?.metadata;
  const name = attrs.name || meta?.name || meta?.generateName || 'Unknown';
  return forbidden(groupResourceOf(attrs.resource), name, why);
}

/** Whether the write is of the main resource `group`/`plural` (kube's GroupResource match, no sub-resource). */
export function isMainResource(attrs: AdmissionAttributes, group: string, plural: string): boolean {
  return attrs.subresource === '' && attrs.resource.group === group && attrs.resource.plural === plural;
}
