/**
 * kube's DenyServiceExternalIPs plugin (plugin/pkg/admission/network/denyserviceexternalips,
 * 1.24), off by default: a Service may not gain an `externalIPs` entry (CVE-2020-8554). A create
 * with any, or an update adding one the old Service did not have, is 403; keeping or removing
 * existing ones is allowed.
 */
import type { StoredObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { admissionForbidden, isMainResource } from './forbidden.js';

function externalIPsOf(svc: StoredObject | undefined): unknown[] {
  const spec = svc?.['spec'] as Record<string, unknown> | undefined;
  return Array.isArray(spec?.['externalIPs']) ? (spec['externalIPs'] as unknown[]) : [];
}

export function createDenyServiceExternalIPs(): AdmissionPlugin {
  return {
    name: 'DenyServiceExternalIPs',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    validate(attrs) {
      if (!isMainResource(attrs, '', 'services') || !attrs.object) return;
      const wanted = externalIPsOf(attrs.object);
      if (wanted.length === 0) return;
      const had = new Set(attrs.oldObject ? externalIPsOf(attrs.oldObject) : []);
      if (attrs.oldObject && wanted.every((ip) => had.has(ip))) return;
      throw admissionForbidden(attrs, 'Use of external IPs is denied by admission control');
    },
  };
}
