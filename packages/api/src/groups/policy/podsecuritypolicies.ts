/**
 * policy/v1beta1 PodSecurityPolicies (deprecated 1.21, removed 1.25; kube names no replacement):
 * cluster-scoped, short name `psp`. Validation: the strategies' rules of kube's
 * ValidatePodSecurityPolicySpec (runAsUser, seLinux, supplementalGroups, fsGroup) and their ID
 * ranges. The PodSecurityPolicy admission plugin stays off, as in kube's defaults.
 */
import { deprecationWarning, type ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const RULES: ReadonlyArray<[field: string, rules: string[]]> = [
  ['runAsUser', ['MustRunAs', 'MustRunAsNonRoot', 'RunAsAny']],
  ['seLinux', ['MustRunAs', 'RunAsAny']],
  ['supplementalGroups', ['MayRunAs', 'MustRunAs', 'RunAsAny']],
  ['fsGroup', ['MayRunAs', 'MustRunAs', 'RunAsAny']],
];

function validateRanges(ranges: unknown, path: string): FieldError[] {
  if (!Array.isArray(ranges)) return [];
  return ranges.flatMap((r, i) => {
    const o = isObj(r) ? r : {};
    const min = typeof o['min'] === 'number' ? o['min'] : 0;
    const max = typeof o['max'] === 'number' ? o['max'] : 0;
    const p = `${path}[${i}]`;
    const errs: FieldError[] = [];
    if (min > max) errs.push(fieldErr.invalid(`${p}.min`, min, `min cannot be greater than max (${max})`));
    if (min < 0) errs.push(fieldErr.invalid(`${p}.min`, min, 'min cannot be negative'));
    if (max < 0) errs.push(fieldErr.invalid(`${p}.max`, max, 'max cannot be negative'));
    return errs;
  });
}

function validatePsp(o: StoredObject): FieldError[] {
  const spec = isObj(o['spec']) ? o['spec'] : {};
  const errs: FieldError[] = [];
  for (const [field, rules] of RULES) {
    const s = isObj(spec[field]) ? spec[field] : {};
    const rule = typeof s['rule'] === 'string' ? s['rule'] : '';
    if (!rules.includes(rule)) errs.push(fieldErr.notSupported(`spec.${field}.rule`, rule, rules));
    if (field !== 'seLinux') errs.push(...validateRanges(s['ranges'], `spec.${field}.ranges`));
  }
  return errs;
}

const pspStrategy: ResourceStrategy = { validate: validatePsp };

export const podsecuritypolicies = defineResource({
  group: 'policy',
  version: 'v1beta1',
  kind: 'PodSecurityPolicy',
  plural: 'podsecuritypolicies',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  shortNames: ['psp'],
  namespaced: false,
  description: 'A PodSecurityPolicy is a cluster-wide set of rules for the pods admitted.',
  strategy: pspStrategy,
  deprecation: deprecationWarning({ group: 'policy', version: 'v1beta1', kind: 'PodSecurityPolicy' }, '1.21', '1.25'),
});
