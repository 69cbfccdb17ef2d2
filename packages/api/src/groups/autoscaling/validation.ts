/**
 * HorizontalPodAutoscaler validation as kube 1.24's pkg/apis/autoscaling/validation: it runs on the
 * internal (v2-shaped) object, so every version's causes name v2's field paths, as kube's do.
 * Feature gates at their 1.24 defaults: HPAScaleToZero and HPAContainerMetrics off.
 */
import { type FieldError, fieldErr } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { nameIsPathSegment } from '../../validation.js';
import { asQuantity } from '../core/validation/resources.js';
import { validateNonnegativeField } from '../core/validation/basic.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

const MAX_PERIOD_SECONDS = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
const SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];

/** kube's ValidateCrossVersionObjectReference. */
export function validateCrossVersionObjectReference(ref: unknown, path: string): FieldError[] {
  const r = obj(ref);
  const errs: FieldError[] = [];
  for (const key of ['kind', 'name']) {
    const v = str(r[key]);
    if (v === '') errs.push(fieldErr.required(`${path}.${key}`, ''));
    else for (const msg of nameIsPathSegment(v, false)) errs.push(fieldErr.invalid(`${path}.${key}`, v, msg));
  }
  return errs;
}

function validateMetricIdentifier(id: unknown, path: string): FieldError[] {
  const name = str(obj(id)['name']);
  if (name === '') return [fieldErr.required(`${path}.name`, 'must specify a metric name')];
  return nameIsPathSegment(name, false).map((m) => fieldErr.invalid(`${path}.name`, name, m));
}

const positive = (v: unknown): boolean => {
  const q = asQuantity(v);
  return !q || q.sign() === 1;
};

function validateMetricTarget(t: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(t['type']);
  if (type === '') errs.push(fieldErr.required(`${path}.type`, 'must specify a metric target type'));
  if (!['Utilization', 'Value', 'AverageValue'].includes(type)) errs.push(fieldErr.invalid(`${path}.type`, type, 'must be either Utilization, Value, or AverageValue'));
  if (t['value'] != null && !positive(t['value'])) errs.push(fieldErr.invalid(`${path}.value`, t['value'], 'must be positive'));
  if (t['averageValue'] != null && !positive(t['averageValue'])) errs.push(fieldErr.invalid(`${path}.averageValue`, t['averageValue'], 'must be positive'));
  const u = num(t['averageUtilization']);
  if (u !== undefined && u < 1) errs.push(fieldErr.invalid(`${path}.averageUtilization`, u, 'must be greater than 0'));
  return errs;
}

function validateSource(kind: string, src: Obj, path: string): FieldError[] {
  const t = obj(src['target']);
  const tp = `${path}.target`;
  const errs: FieldError[] = [];
  switch (kind) {
    case 'object':
      errs.push(...validateCrossVersionObjectReference(src['describedObject'], `${path}.describedObject`), ...validateMetricIdentifier(src['metric'], `${path}.metric`), ...validateMetricTarget(t, tp));
      if (t['value'] == null && t['averageValue'] == null) errs.push(fieldErr.required(`${tp}.averageValue`, 'must set either a target value or averageValue'));
      break;
    case 'external':
      errs.push(...validateMetricIdentifier(src['metric'], `${path}.metric`), ...validateMetricTarget(t, tp));
      if (t['value'] == null && t['averageValue'] == null) errs.push(fieldErr.required(`${tp}.averageValue`, 'must set either a target value for metric or a per-pod target'));
      if (t['value'] != null && t['averageValue'] != null) errs.push(fieldErr.forbidden(`${tp}.value`, 'may not set both a target value for metric and a per-pod target'));
      break;
    case 'pods':
      errs.push(...validateMetricIdentifier(src['metric'], `${path}.metric`), ...validateMetricTarget(t, tp));
      if (t['averageValue'] == null) errs.push(fieldErr.required(`${tp}.averageValue`, 'must specify a positive target averageValue'));
      break;
    default:
      if (str(src['name']) === '') errs.push(fieldErr.required(`${path}.name`, 'must specify a resource name'));
      errs.push(...validateMetricTarget(t, tp));
      if (t['averageUtilization'] == null && t['averageValue'] == null) errs.push(fieldErr.required(`${tp}.averageUtilization`, 'must set either a target raw value or a target utilization'));
      if (t['averageUtilization'] != null && t['averageValue'] != null) errs.push(fieldErr.forbidden(`${tp}.averageValue`, 'may not set both a target raw value and a target utilization'));
  }
  return errs;
}

const FIELD_OF: Readonly<Record<string, string>> = { Object: 'object', Pods: 'pods', Resource: 'resource', External: 'external', ContainerResource: 'containerResource' };

function validateMetricSpec(m: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(m['type']);
  if (type === '') errs.push(fieldErr.required(`${path}.type`, 'must specify a metric source type'));
  if (!SOURCE_TYPES.includes(type)) errs.push(fieldErr.notSupported(`${path}.type`, type, SOURCE_TYPES));
  const present: string[] = [];
  for (const key of ['object', 'external', 'pods', 'resource', 'containerResource']) {
    if (!isObj(m[key])) continue;
    present.push(key);
    if (present.length === 1) errs.push(...validateSource(key, m[key], `${path}.${key}`));
  }
  const expected = FIELD_OF[type];
  if (expected === undefined) errs.push(fieldErr.notSupported(`${path}.type`, type, SOURCE_TYPES));
  else if (!present.includes(expected)) {
    const gated = expected === 'containerResource' ? ' (only allowed when HPAContainerMetrics feature is enabled)' : '';
    errs.push(fieldErr.required(`${path}.${expected}`, `must populate information for the given metric source${gated}`));
  }
  if (present.length !== 1) for (const key of present.filter((k) => k !== expected).sort()) errs.push(fieldErr.forbidden(`${path}.${key}`, 'must populate the given metric source only'));
  return errs;
}

function validateScalingRules(rules: unknown, path: string): FieldError[] {
  if (!isObj(rules)) return [];
  const errs: FieldError[] = [];
  const w = num(rules['stabilizationWindowSeconds']);
  if (w !== undefined && w < 0) errs.push(fieldErr.invalid(`${path}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'));
  if (w !== undefined && w > MAX_STABILIZATION_WINDOW_SECONDS) errs.push(fieldErr.invalid(`${path}.stabilizationWindowSeconds`, w, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  const sp = rules['selectPolicy'];
  if (typeof sp === 'string' && !['Disabled', 'Max', 'Min'].includes(sp)) errs.push(fieldErr.notSupported(`${path}.selectPolicy`, sp, ['Disabled', 'Max', 'Min']));
  const policies = Array.isArray(rules['policies']) ? rules['policies'] : [];
  if (policies.length === 0) errs.push(fieldErr.required(`${path}.policies`, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const pp = `${path}.policies[${i}]`;
    const o = obj(p);
    const type = str(o['type']);
    if (type !== 'Pods' && type !== 'Percent') errs.push(fieldErr.notSupported(`${pp}.type`, type, ['Percent', 'Pods']));
    const value = num(o['value']) ?? 0;
    if (value <= 0) errs.push(fieldErr.invalid(`${pp}.value`, value, 'must be greater than zero'));
    const period = num(o['periodSeconds']) ?? 0;
    if (period <= 0) errs.push(fieldErr.invalid(`${pp}.periodSeconds`, period, 'must be greater than zero'));
    if (period > MAX_PERIOD_SECONDS) errs.push(fieldErr.invalid(`${pp}.periodSeconds`, period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  return errs;
}

/** kube's validateHorizontalPodAutoscalerSpec on a v2 object. */
export function validateHpaSpec(hpa: StoredObject, minReplicasLowerBound: number): FieldError[] {
  const spec = obj(hpa['spec']);
  const errs: FieldError[] = [];
  const min = num(spec['minReplicas']);
  const max = num(spec['maxReplicas']) ?? 0;
  if (min !== undefined && min < minReplicasLowerBound) errs.push(fieldErr.invalid('spec.minReplicas', min, `must be greater than or equal to ${minReplicasLowerBound}`));
  if (max < 1) errs.push(fieldErr.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min) errs.push(fieldErr.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateCrossVersionObjectReference(spec['scaleTargetRef'], 'spec.scaleTargetRef'));
  const metrics = Array.isArray(spec['metrics']) ? spec['metrics'].map(obj) : [];
  metrics.forEach((m, i) => errs.push(...validateMetricSpec(m, `spec.metrics[${i}]`)));
  if (min === 0 && !metrics.some((m) => m['type'] === 'Object' || m['type'] === 'External')) {
    errs.push(fieldErr.forbidden('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  if (isObj(spec['behavior'])) {
    errs.push(...validateScalingRules(spec['behavior']['scaleUp'], 'spec.behavior.scaleUp'), ...validateScalingRules(spec['behavior']['scaleDown'], 'spec.behavior.scaleDown'));
  }
  return errs;
}

/** The lower bound of minReplicas on update: 0 when the old object already had 0 (HPAScaleToZero off). */
export const minReplicasBoundOnUpdate = (old: StoredObject): number => (num(obj(old['spec'])['minReplicas']) === 0 ? 0 : 1);

/** kube's ValidateHorizontalPodAutoscalerStatusUpdate (beyond object metadata). */
export function validateHpaStatus(hpa: StoredObject): FieldError[] {
  const status = obj(hpa['status']);
  return [...validateNonnegativeField(status['currentReplicas'], 'status.currentReplicas'), ...validateNonnegativeField(status['desiredReplicas'], 'status.desiredReplicas')];
}
