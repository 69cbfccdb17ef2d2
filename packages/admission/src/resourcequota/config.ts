/**
 * The ResourceQuota plugin's configuration from `--admission-control-config-file` (kube's
 * apiserver.config.k8s.io/v1 ResourceQuotaConfiguration, or resourcequota.admission.k8s.io
 * v1beta1/v1alpha1 Configuration): `limitedResources`, resources that may only be consumed in a
 * namespace whose quotas cover them.
 */
import { isPlainObject } from '@plinth/api';
import type { ScopeRequirement } from './evaluators.js';

/** kube's LimitedResource. */
export interface LimitedResource {
  apiGroup: string;
  resource: string;
  /** A usage name containing one of these needs a covering quota. */
  matchContains: string[];
  /** An object in one of these scopes needs a quota with that scope. */
  matchScopes: ScopeRequirement[];
}

const KINDS: Record<string, string> = {
  'apiserver.config.k8s.io/v1': 'ResourceQuotaConfiguration',
  'resourcequota.admission.k8s.io/v1beta1': 'Configuration',
  'resourcequota.admission.k8s.io/v1alpha1': 'Configuration',
};

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The limited resources of the plugin's configuration (none without one). Throws an Error kube's start-up would. */
export function parseQuotaConfiguration(config: Record<string, unknown> | undefined): LimitedResource[] {
  if (!config) return [];
  const apiVersion = String(config['apiVersion'] ?? '');
  const kind = String(config['kind'] ?? '');
  if (KINDS[apiVersion] !== kind) throw new Error(`ResourceQuota configuration: no kind "${kind}" is registered for version "${apiVersion}"`);
  const items = config['limitedResources'];
  if (items !== undefined && items !== null && !Array.isArray(items)) throw new Error('ResourceQuota configuration: limitedResources must be a list');
  const out: LimitedResource[] = [];
  const errs: string[] = [];
  (Array.isArray(items) ? items : []).forEach((item, i) => {
    const r = isPlainObject(item) ? item : {};
    const resource = typeof r['resource'] === 'string' ? r['resource'] : '';
    if (!resource) errs.push(`limitedResources[${i}].resource: Required value`);
    const matchScopes = (Array.isArray(r['matchScopes']) ? r['matchScopes'] : []).filter(isPlainObject).map((s) => ({
      scopeName: String(s['scopeName'] ?? ''),
      operator: String(s['operator'] ?? ''),
      values: strings(s['values']),
    }));
    out.push({ apiGroup: typeof r['apiGroup'] === 'string' ? r['apiGroup'] : '', resource, matchContains: strings(r['matchContains']), matchScopes });
  });
  if (errs.length > 0) throw new Error(`ResourceQuota configuration is invalid: ${errs.join(', ')}`);
  return out;
}
