/**
 * HorizontalPodAutoscaler conversions between autoscaling/v1, v2beta1, v2beta2 and the storage
 * version autoscaling/v2 (kube 1.24's internal type has v2's shape; its storage version is the
 * group's first priority, v2). Ported from pkg/apis/autoscaling/{v1,v2beta1,v2beta2}/conversion.go:
 * what v1 or v2beta1 cannot express travels in kube's round-trip annotations
 * (`autoscaling.alpha.kubernetes.io/{metrics,current-metrics,conditions,behavior}`), in those
 * versions' own metric shapes; the behavior annotation is kube's marshalling of its internal Go
 * type (no JSON tags: `ScaleUp`, `StabilizationWindowSeconds`, read back ignoring case, as Go's
 * encoding/json does). Conversions return new objects and never change their input.
 */
import type { StoredObject } from '../../types.js';

export const AUTOSCALING = 'autoscaling';
export const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
/** autoscaling.DefaultCPUUtilization. */
export const DEFAULT_CPU_UTILIZATION = 80;
const ROUND_TRIP = [METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const has = (o: Obj, k: string): boolean => o[k] !== undefined && o[k] !== null;
/** Copies `o[from]` to `out[to]` when set. */
function copy(out: Obj, to: string, o: Obj, from: string): void {
  if (has(o, from)) out[to] = o[from];
}
/** A Go non-pointer Quantity: its zero value marshals as "0". */
const qty = (o: Obj, k: string): unknown => (has(o, k) ? o[k] : '0');

/** kube's DropRoundTripHorizontalPodAutoscalerAnnotations on a copy of the metadata. */
function withoutRoundTrip(meta: StoredObject['metadata']): StoredObject['metadata'] {
  const ann = meta.annotations;
  if (!ann || !ROUND_TRIP.some((k) => k in ann)) return { ...meta };
  const next = { ...ann };
  for (const k of ROUND_TRIP) delete next[k];
  const out = { ...meta, annotations: next };
  if (Object.keys(next).length === 0) delete (out as Obj)['annotations'];
  return out;
}

function annotate(meta: StoredObject['metadata'], key: string, value: unknown): void {
  meta.annotations = { ...(meta.annotations ?? {}), [key]: JSON.stringify(value) };
}

function parsedAnnotation(o: StoredObject, key: string): unknown {
  const raw = o.metadata.annotations?.[key];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

const ref = (r: unknown): Obj => {
  const o = obj(r);
  const out: Obj = { kind: o['kind'] ?? '', name: o['name'] ?? '' };
  copy(out, 'apiVersion', o, 'apiVersion');
  return out;
};

function identifier(src: Obj, nameKey: string, selectorKey: string): Obj {
  const id: Obj = { name: src[nameKey] ?? '' };
  copy(id, 'selector', src, selectorKey);
  return id;
}

/** A v2 metric source's `metric` as the old shape's name and selector. */
function oldIdentity(out: Obj, src: Obj, selectorKey: string): void {
  const m = obj(src['metric']);
  out['metricName'] = m['name'] ?? '';
  copy(out, selectorKey, m, 'selector');
}

/** v2 MetricSpec → the v1 annotation's / v2beta1's MetricSpec. */
export function metricSpecToOld(m: unknown): Obj {
  const i = obj(m);
  const out: Obj = { type: i['type'] ?? '' };
  if (isObj(i['object'])) {
    const s = i['object'];
    const t = obj(s['target']);
    const v: Obj = { target: ref(s['describedObject']) };
    oldIdentity(v, s, 'selector');
    v['targetValue'] = qty(t, 'value');
    copy(v, 'averageValue', t, 'averageValue');
    out['object'] = v;
  }
  if (isObj(i['pods'])) {
    const s = i['pods'];
    const v: Obj = {};
    oldIdentity(v, s, 'selector');
    v['targetAverageValue'] = qty(obj(s['target']), 'averageValue');
    out['pods'] = v;
  }
  for (const key of ['resource', 'containerResource']) {
    if (!isObj(i[key])) continue;
    const s = i[key] as Obj;
    const t = obj(s['target']);
    const v: Obj = { name: s['name'] ?? '' };
    copy(v, 'targetAverageUtilization', t, 'averageUtilization');
    copy(v, 'targetAverageValue', t, 'averageValue');
    if (key === 'containerResource') v['container'] = s['container'] ?? '';
    out[key] = v;
  }
  if (isObj(i['external'])) {
    const s = i['external'];
    const t = obj(s['target']);
    const v: Obj = {};
    oldIdentity(v, s, 'metricSelector');
    copy(v, 'targetValue', t, 'value');
    copy(v, 'targetAverageValue', t, 'averageValue');
    out['external'] = v;
  }
  return out;
}

/** The v1 annotation's / v2beta1's MetricSpec → v2. */
export function metricSpecFromOld(m: unknown): Obj {
  const i = obj(m);
  const out: Obj = { type: i['type'] ?? '' };
  if (isObj(i['object'])) {
    const s = i['object'];
    const target: Obj = { type: has(s, 'averageValue') ? 'AverageValue' : 'Value', value: qty(s, 'targetValue') };
    copy(target, 'averageValue', s, 'averageValue');
    out['object'] = { describedObject: ref(s['target']), metric: identifier(s, 'metricName', 'selector'), target };
  }
  if (isObj(i['pods'])) {
    const s = i['pods'];
    out['pods'] = { metric: identifier(s, 'metricName', 'selector'), target: { type: 'AverageValue', averageValue: qty(s, 'targetAverageValue') } };
  }
  for (const key of ['resource', 'containerResource']) {
    if (!isObj(i[key])) continue;
    const s = i[key] as Obj;
    const target: Obj = { type: has(s, 'targetAverageUtilization') ? 'Utilization' : 'AverageValue' };
    copy(target, 'averageUtilization', s, 'targetAverageUtilization');
    copy(target, 'averageValue', s, 'targetAverageValue');
    const v: Obj = { name: s['name'] ?? '' };
    if (key === 'containerResource') v['container'] = s['container'] ?? '';
    v['target'] = target;
    out[key] = v;
  }
  if (isObj(i['external'])) {
    const s = i['external'];
    const target: Obj = { type: has(s, 'targetValue') ? 'Value' : 'AverageValue' };
    copy(target, 'value', s, 'targetValue');
    copy(target, 'averageValue', s, 'targetAverageValue');
    out['external'] = { metric: identifier(s, 'metricName', 'metricSelector'), target };
  }
  return out;
}

/** v2 MetricStatus → the old shape. */
export function metricStatusToOld(m: unknown): Obj {
  const i = obj(m);
  const out: Obj = { type: i['type'] ?? '' };
  if (isObj(i['object'])) {
    const s = i['object'];
    const c = obj(s['current']);
    const v: Obj = { target: ref(s['describedObject']) };
    oldIdentity(v, s, 'selector');
    v['currentValue'] = qty(c, 'value');
    copy(v, 'averageValue', c, 'averageValue');
    out['object'] = v;
  }
  if (isObj(i['pods'])) {
    const s = i['pods'];
    const v: Obj = {};
    oldIdentity(v, s, 'selector');
    v['currentAverageValue'] = qty(obj(s['current']), 'averageValue');
    out['pods'] = v;
  }
  for (const key of ['resource', 'containerResource']) {
    if (!isObj(i[key])) continue;
    const s = i[key] as Obj;
    const c = obj(s['current']);
    const v: Obj = { name: s['name'] ?? '' };
    copy(v, 'currentAverageUtilization', c, 'averageUtilization');
    v['currentAverageValue'] = qty(c, 'averageValue');
    if (key === 'containerResource') v['container'] = s['container'] ?? '';
    out[key] = v;
  }
  if (isObj(i['external'])) {
    const s = i['external'];
    const c = obj(s['current']);
    const v: Obj = {};
    oldIdentity(v, s, 'metricSelector');
    v['currentValue'] = qty(c, 'value');
    copy(v, 'currentAverageValue', c, 'averageValue');
    out['external'] = v;
  }
  return out;
}

/** The old shape's MetricStatus → v2. */
export function metricStatusFromOld(m: unknown): Obj {
  const i = obj(m);
  const out: Obj = { type: i['type'] ?? '' };
  if (isObj(i['object'])) {
    const s = i['object'];
    const current: Obj = { value: qty(s, 'currentValue') };
    copy(current, 'averageValue', s, 'averageValue');
    out['object'] = { metric: identifier(s, 'metricName', 'selector'), current, describedObject: ref(s['target']) };
  }
  if (isObj(i['pods'])) {
    const s = i['pods'];
    out['pods'] = { metric: identifier(s, 'metricName', 'selector'), current: { averageValue: qty(s, 'currentAverageValue') } };
  }
  for (const key of ['resource', 'containerResource']) {
    if (!isObj(i[key])) continue;
    const s = i[key] as Obj;
    const current: Obj = { averageValue: qty(s, 'currentAverageValue') };
    copy(current, 'averageUtilization', s, 'currentAverageUtilization');
    const v: Obj = { name: s['name'] ?? '' };
    if (key === 'containerResource') v['container'] = s['container'] ?? '';
    v['current'] = current;
    out[key] = v;
  }
  if (isObj(i['external'])) {
    const s = i['external'];
    const current: Obj = { value: qty(s, 'currentValue') };
    copy(current, 'averageValue', s, 'currentAverageValue');
    out['external'] = { metric: identifier(s, 'metricName', 'metricSelector'), current };
  }
  return out;
}

/** The behavior as json.Marshal writes kube's internal Go type: Go field names, nil as null. */
export function behaviorToGoJson(b: unknown): Obj {
  const rules = (r: unknown): unknown => {
    if (!isObj(r)) return null;
    return {
      StabilizationWindowSeconds: r['stabilizationWindowSeconds'] ?? null,
      SelectPolicy: r['selectPolicy'] ?? null,
      Policies: Array.isArray(r['policies']) ? r['policies'].map((p) => ({ Type: obj(p)['type'] ?? '', Value: obj(p)['value'] ?? 0, PeriodSeconds: obj(p)['periodSeconds'] ?? 0 })) : null,
    };
  };
  const o = obj(b);
  return { ScaleUp: rules(o['scaleUp']), ScaleDown: rules(o['scaleDown']) };
}

/** encoding/json's key match: exact, else ignoring case. */
function goField(o: Obj, name: string): unknown {
  if (name in o) return o[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** The behavior annotation back to v2's shape; undefined when it does not decode or is the zero behavior (kube keeps only well-formed data). */
export function behaviorFromGoJson(raw: unknown): Obj | undefined {
  if (!isObj(raw)) return undefined;
  const rules = (r: unknown): Obj | undefined => {
    if (!isObj(r)) return undefined;
    const out: Obj = {};
    const w = goField(r, 'StabilizationWindowSeconds');
    if (typeof w === 'number') out['stabilizationWindowSeconds'] = w;
    const s = goField(r, 'SelectPolicy');
    if (typeof s === 'string') out['selectPolicy'] = s;
    const p = goField(r, 'Policies');
    if (Array.isArray(p)) out['policies'] = p.map((x) => ({ type: goField(obj(x), 'Type') ?? '', value: goField(obj(x), 'Value') ?? 0, periodSeconds: goField(obj(x), 'PeriodSeconds') ?? 0 }));
    return out;
  };
  const out: Obj = {};
  const up = rules(goField(raw, 'ScaleUp'));
  const down = rules(goField(raw, 'ScaleDown'));
  if (up) out['scaleUp'] = up;
  if (down) out['scaleDown'] = down;
  return up || down ? out : undefined;
}

const isCpu = (m: Obj, part: 'target' | 'current'): boolean => m['type'] === 'Resource' && isObj(m['resource']) && m['resource']['name'] === 'cpu' && has(obj(m['resource'][part]), 'averageUtilization');

function base(o: StoredObject, apiVersion: string): StoredObject {
  return { ...o, apiVersion, kind: 'HorizontalPodAutoscaler', metadata: withoutRoundTrip(o.metadata) } as StoredObject;
}

/** autoscaling/v2 (storage) → autoscaling/v1 (Convert_autoscaling_HorizontalPodAutoscaler_To_v1_...). */
export function hpaV2ToV1(o: StoredObject): StoredObject {
  const out = base(o, 'autoscaling/v1');
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const metrics = arr(spec['metrics']).map(obj);
  const s: Obj = { scaleTargetRef: ref(spec['scaleTargetRef']) };
  copy(s, 'minReplicas', spec, 'minReplicas');
  s['maxReplicas'] = spec['maxReplicas'] ?? 0;
  // The first CPU resource metric gives the percentage, if it has a utilization target.
  const cpu = metrics.find((m) => m['type'] === 'Resource' && isObj(m['resource']) && m['resource']['name'] === 'cpu');
  if (cpu && isCpu(cpu, 'target')) s['targetCPUUtilizationPercentage'] = obj(obj(cpu['resource'])['target'])['averageUtilization'];
  out['spec'] = s;
  const st: Obj = {};
  copy(st, 'observedGeneration', status, 'observedGeneration');
  copy(st, 'lastScaleTime', status, 'lastScaleTime');
  st['currentReplicas'] = status['currentReplicas'] ?? 0;
  st['desiredReplicas'] = status['desiredReplicas'] ?? 0;
  const current = arr(status['currentMetrics']).map(obj);
  for (const m of current) if (isCpu(m, 'current')) st['currentCPUUtilizationPercentage'] = obj(obj(m['resource'])['current'])['averageUtilization'];
  out['status'] = st;
  const others = metrics.filter((m) => !isCpu(m, 'target'));
  if (others.length > 0) annotate(out.metadata, METRICS_ANNOTATION, others.map(metricSpecToOld));
  // Saved even when a CPU status maps to the percentage: the raw values go with it.
  if (current.length > 0) annotate(out.metadata, CURRENT_METRICS_ANNOTATION, current.map(metricStatusToOld));
  if (isObj(spec['behavior'])) annotate(out.metadata, BEHAVIOR_ANNOTATION, behaviorToGoJson(spec['behavior']));
  const conditions = arr(status['conditions']);
  if (conditions.length > 0) annotate(out.metadata, CONDITIONS_ANNOTATION, conditions);
  return out;
}

const cpuMetric = (pct: unknown): Obj => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: pct } } });

/** autoscaling/v1 → autoscaling/v2 (Convert_v1_HorizontalPodAutoscaler_To_autoscaling_...). */
export function hpaV1ToV2(o: StoredObject): StoredObject {
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const s: Obj = { scaleTargetRef: ref(spec['scaleTargetRef']) };
  copy(s, 'minReplicas', spec, 'minReplicas');
  s['maxReplicas'] = spec['maxReplicas'] ?? 0;
  let metrics: Obj[] = has(spec, 'targetCPUUtilizationPercentage') ? [cpuMetric(spec['targetCPUUtilizationPercentage'])] : [];
  const others = parsedAnnotation(o, METRICS_ANNOTATION);
  // The annotation's metrics come first; the percentage's metric (if any) after them.
  if (Array.isArray(others)) metrics = [...others.map(metricSpecFromOld), ...metrics];
  const behavior = behaviorFromGoJson(parsedAnnotation(o, BEHAVIOR_ANNOTATION));
  // v1 formerly had an implicit CPU target applied by the controller: kube makes it explicit here.
  if (metrics.length === 0) metrics = [cpuMetric(DEFAULT_CPU_UTILIZATION)];
  s['metrics'] = metrics;
  if (behavior) s['behavior'] = behavior;
  const st: Obj = {};
  copy(st, 'observedGeneration', status, 'observedGeneration');
  copy(st, 'lastScaleTime', status, 'lastScaleTime');
  st['currentReplicas'] = status['currentReplicas'] ?? 0;
  st['desiredReplicas'] = status['desiredReplicas'] ?? 0;
  if (has(status, 'currentCPUUtilizationPercentage')) {
    st['currentMetrics'] = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status['currentCPUUtilizationPercentage'] } } }];
  }
  const current = parsedAnnotation(o, CURRENT_METRICS_ANNOTATION);
  if (Array.isArray(current)) st['currentMetrics'] = current.map(metricStatusFromOld);
  const conditions = parsedAnnotation(o, CONDITIONS_ANNOTATION);
  if (Array.isArray(conditions)) st['conditions'] = conditions;
  const out = base(o, 'autoscaling/v2');
  out['spec'] = s;
  out['status'] = st;
  return out;
}

/** autoscaling/v2 → autoscaling/v2beta1: metrics in the old shape, behavior in its annotation. */
export function hpaV2ToV2beta1(o: StoredObject): StoredObject {
  const out = base(o, 'autoscaling/v2beta1');
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const s: Obj = { ...spec };
  delete s['behavior'];
  if (Array.isArray(spec['metrics'])) s['metrics'] = spec['metrics'].map(metricSpecToOld);
  out['spec'] = s;
  const st: Obj = { ...status };
  if (Array.isArray(status['currentMetrics'])) st['currentMetrics'] = status['currentMetrics'].map(metricStatusToOld);
  out['status'] = st;
  if (isObj(spec['behavior'])) annotate(out.metadata, BEHAVIOR_ANNOTATION, behaviorToGoJson(spec['behavior']));
  return out;
}

/** autoscaling/v2beta1 → autoscaling/v2. */
export function hpaV2beta1ToV2(o: StoredObject): StoredObject {
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const s: Obj = { ...spec };
  if (Array.isArray(spec['metrics'])) s['metrics'] = spec['metrics'].map(metricSpecFromOld);
  const behavior = behaviorFromGoJson(parsedAnnotation(o, BEHAVIOR_ANNOTATION));
  if (behavior) s['behavior'] = behavior;
  const st: Obj = { ...status };
  if (Array.isArray(status['currentMetrics'])) st['currentMetrics'] = status['currentMetrics'].map(metricStatusFromOld);
  const out = base(o, 'autoscaling/v2');
  out['spec'] = s;
  out['status'] = st;
  return out;
}

/** v2beta2 and v2 have one shape: only the round-trip annotations of other versions are dropped. */
export const hpaV2ToV2beta2 = (o: StoredObject): StoredObject => base(o, 'autoscaling/v2beta2');
export const hpaV2beta2ToV2 = (o: StoredObject): StoredObject => base(o, 'autoscaling/v2');

/** Any served version → v2 (for validation and printing, which kube runs on its internal type). */
export function hpaToV2(o: StoredObject): StoredObject {
  switch (o.apiVersion) {
    case 'autoscaling/v1':
      return hpaV1ToV2(o);
    case 'autoscaling/v2beta1':
      return hpaV2beta1ToV2(o);
    default:
      return o;
  }
}
