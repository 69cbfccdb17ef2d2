/**
 * autoscaling HorizontalPodAutoscalers as kube-apiserver 1.24 serves them
 * (pkg/registry/autoscaling/horizontalpodautoscaler): namespaced, short name `hpa`, category
 * `all`, every verb and `status`, in v2 (storage), v1, v2beta1 and v2beta2 (conversion.ts).
 * Defaults are each version's SetDefaults_*; validation and the printer run on the v2 form
 * (kube's internal type). Create clears status; an update keeps the old status, `/status` the old
 * spec (with the round-trip annotations that carry them in v1 and v2beta1). kube's HPA strategy
 * does not track metadata.generation.
 */
import { deprecationWarning, type Deprecation, type ResourceDefinition, type ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import {
  AUTOSCALING,
  BEHAVIOR_ANNOTATION,
  CONDITIONS_ANNOTATION,
  CURRENT_METRICS_ANNOTATION,
  DEFAULT_CPU_UTILIZATION,
  METRICS_ANNOTATION,
  hpaToV2,
  hpaV1ToV2,
  hpaV2ToV1,
  hpaV2ToV2beta1,
  hpaV2ToV2beta2,
  hpaV2beta1ToV2,
  hpaV2beta2ToV2,
} from './conversion.js';
import { minReplicasBoundOnUpdate, validateHpaSpec, validateHpaStatus } from './validation.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
type Version = 'v1' | 'v2' | 'v2beta1' | 'v2beta2';

const specOf = (o: StoredObject): Obj => (isObj(o['spec']) ? o['spec'] : (o['spec'] = {}));

/** v2's defaultHPAScaleUpRules / defaultHPAScaleDownRules (pkg/apis/autoscaling/v2/defaults.go). */
const scaleUpDefaults = (): Obj => ({ stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] });
const scaleDownDefaults = (): Obj => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** kube's copyHPAScalingRules over the defaults: what the rules set wins. */
function withRuleDefaults(rules: unknown, defaults: Obj): Obj {
  if (!isObj(rules)) return defaults;
  const out = { ...defaults };
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies']) if (rules[k] !== undefined && rules[k] !== null) out[k] = rules[k];
  return out;
}

/** SetDefaults_HorizontalPodAutoscaler of each version. */
function setDefaults(version: Version, o: StoredObject): void {
  const spec = specOf(o);
  if (spec['minReplicas'] === undefined || spec['minReplicas'] === null) spec['minReplicas'] = 1;
  if (version === 'v1') return;
  const metrics = Array.isArray(spec['metrics']) ? spec['metrics'] : [];
  if (metrics.length === 0) {
    spec['metrics'] = [
      version === 'v2beta1'
        ? { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: DEFAULT_CPU_UTILIZATION } }
        : { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } },
    ];
  }
  // SetDefaults_HorizontalPodAutoscalerBehavior (v2 and v2beta2): a given behavior gets every rule.
  if (version !== 'v2beta1' && isObj(spec['behavior'])) {
    const b = spec['behavior'];
    b['scaleUp'] = withRuleDefaults(b['scaleUp'], scaleUpDefaults());
    b['scaleDown'] = withRuleDefaults(b['scaleDown'], scaleDownDefaults());
  }
}

/** The annotations that carry status (v1, v2beta1) or spec (v1) fields in the older versions. */
const STATUS_ANNOTATIONS = [CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION];
const SPEC_ANNOTATIONS = [METRICS_ANNOTATION, BEHAVIOR_ANNOTATION];

/** Takes `keys` of old's annotations into obj (set or removed as in old). */
function keepAnnotations(obj: StoredObject, old: StoredObject, keys: readonly string[]): void {
  const next = { ...(obj.metadata.annotations ?? {}) };
  const prev = old.metadata.annotations ?? {};
  for (const k of keys) {
    if (k in prev) next[k] = prev[k]!;
    else delete next[k];
  }
  if (Object.keys(next).length > 0) obj.metadata.annotations = next;
  else delete obj.metadata.annotations;
}

/**
 * ContainerResource metric sources are dropped while HPAContainerMetrics is off (1.24's default),
 * unless the old object already used them (kube's dropDisabledFields).
 */
function dropContainerResources(obj: StoredObject, old: StoredObject | undefined): void {
  const uses = (o: StoredObject | undefined): boolean => {
    const m = o && fieldAt(o, 'spec', 'metrics');
    return Array.isArray(m) && m.some((x) => isObj(x) && x['containerResource'] != null);
  };
  if (uses(old)) return;
  const metrics = fieldAt(obj, 'spec', 'metrics');
  if (Array.isArray(metrics)) for (const m of metrics) if (isObj(m)) delete m['containerResource'];
}

function hpaStrategy(version: Version): ResourceStrategy {
  const oldShape = version === 'v1' || version === 'v2beta1';
  return {
    defaults: (o) => setDefaults(version, o),
    prepareForCreate: (o) => {
      o['status'] = version === 'v1' ? { currentReplicas: 0, desiredReplicas: 0 } : { currentMetrics: null, desiredReplicas: 0 };
      if (oldShape) keepAnnotations(o, { metadata: {} } as StoredObject, STATUS_ANNOTATIONS);
      dropContainerResources(o, undefined);
    },
    prepareForUpdate: (o, old) => {
      o['status'] = old['status'];
      if (oldShape) keepAnnotations(o, old, STATUS_ANNOTATIONS);
      dropContainerResources(o, old);
    },
    validate: (o) => validateHpaSpec(hpaToV2(o), 1),
    validateUpdate: (o, old) => validateHpaSpec(hpaToV2(o), minReplicasBoundOnUpdate(hpaToV2(old))),
    validateOnUpdate: false,
  };
}

function hpaStatusStrategy(version: Version): ResourceStrategy {
  return {
    prepareForUpdate: (o, old) => {
      o['spec'] = old['spec'];
      if (version === 'v1') keepAnnotations(o, old, SPEC_ANNOTATIONS);
      if (version === 'v2beta1') keepAnnotations(o, old, [BEHAVIOR_ANNOTATION]);
    },
    validate: () => [],
    validateUpdate: (o) => validateHpaStatus(o),
    validateOnUpdate: false,
  };
}

/** A Quantity as Go's String() prints it (decoding has canonicalised it). */
const q = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '0' : String(v));

/** kube's formatHPAMetrics: at most two targets, then "+ N more...". */
export function formatHpaMetrics(specs: unknown, statuses: unknown): string {
  const list = Array.isArray(specs) ? specs.filter(isObj) : [];
  if (list.length === 0) return '<none>';
  const st = Array.isArray(statuses) ? statuses : [];
  const status = (i: number, key: string): Obj | undefined => {
    const s = st[i];
    return isObj(s) && isObj(s[key]) ? s[key] : undefined;
  };
  const current = (s: Obj | undefined): Obj => (s && isObj(s['current']) ? s['current'] : {});
  const out = list.map((spec, i) => {
    const type = spec['type'];
    const src = (k: string): Obj => (isObj(spec[k]) ? spec[k] : {});
    const target = (k: string): Obj => (isObj(src(k)['target']) ? (src(k)['target'] as Obj) : {});
    switch (type) {
      case 'External':
      case 'Object': {
        const key = type === 'External' ? 'external' : 'object';
        const t = target(key);
        const s = status(i, key);
        if (t['averageValue'] != null) {
          const c = s && current(s)['averageValue'] != null ? q(current(s)['averageValue']) : '<unknown>';
          return `${c}/${q(t['averageValue'])} (avg)`;
        }
        return `${s ? q(current(s)['value']) : '<unknown>'}/${q(t['value'])}`;
      }
      case 'Pods': {
        const s = status(i, 'pods');
        return `${s ? q(current(s)['averageValue']) : '<unknown>'}/${q(target('pods')['averageValue'])}`;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = type === 'Resource' ? 'resource' : 'containerResource';
        const t = target(key);
        const s = status(i, key);
        if (t['averageValue'] != null) return `${s ? q(current(s)['averageValue']) : '<unknown>'}/${q(t['averageValue'])}`;
        const u = s ? current(s)['averageUtilization'] : undefined;
        const c = typeof u === 'number' ? `${u}%` : '<unknown>';
        const tu = t['averageUtilization'];
        return `${c}/${typeof tu === 'number' ? `${tu}%` : '<auto>'}`;
      }
      default:
        return '<unknown type>';
    }
  });
  return out.length > 2 ? `${out.slice(0, 2).join(', ')} + ${out.length - 2} more...` : out.join(', ');
}

/** kube's printHorizontalPodAutoscaler, on the v2 form of any version. */
const hpaTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Reference', 'string', 'The scaled resource.'),
    col('Targets', 'string', 'The metrics targets and their current values.'),
    col('MinPods', 'string', 'The lower limit of replicas.'),
    col('MaxPods', 'string', 'The upper limit of replicas.'),
    col('Replicas', 'string', 'The current number of replicas.'),
    ageColumn,
  ],
  cells: (o, now) => {
    const v2 = hpaToV2(o);
    const min = fieldAt(v2, 'spec', 'minReplicas');
    const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
    return [
      o.metadata.name ?? '',
      `${String(fieldAt(v2, 'spec', 'scaleTargetRef', 'kind') ?? '')}/${String(fieldAt(v2, 'spec', 'scaleTargetRef', 'name') ?? '')}`,
      formatHpaMetrics(fieldAt(v2, 'spec', 'metrics'), fieldAt(v2, 'status', 'currentMetrics')),
      typeof min === 'number' ? String(min) : '<unset>',
      n(fieldAt(v2, 'spec', 'maxReplicas')),
      n(fieldAt(v2, 'status', 'currentReplicas')),
      age(o, now),
    ];
  },
};

const HPA_V2 = { group: AUTOSCALING, version: 'v2', kind: 'HorizontalPodAutoscaler' };
/** The betas name autoscaling/v2 as their replacement (kube's APILifecycleReplacement). */
const DEPRECATED: Partial<Record<Version, Deprecation>> = {
  v2beta1: deprecationWarning({ ...HPA_V2, version: 'v2beta1' }, '1.22', '1.25', HPA_V2),
  v2beta2: deprecationWarning({ ...HPA_V2, version: 'v2beta2' }, '1.23', '1.26', HPA_V2),
};

function hpaVersion(version: Version, storage?: ResourceDefinition, to?: (o: StoredObject) => StoredObject, from?: (o: StoredObject) => StoredObject): ResourceDefinition {
  return defineResource({
    group: AUTOSCALING,
    version,
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    shortNames: ['hpa'],
    categories: ['all'],
    namespaced: true,
    description: 'A HorizontalPodAutoscaler sets the replicas of a scalable resource from observed metrics.',
    strategy: hpaStrategy(version),
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: hpaStatusStrategy(version) }],
    table: hpaTable,
    ...(storage && to && from ? { conversion: { storage, toStorage: to, fromStorage: from } } : {}),
    ...(DEPRECATED[version] ? { deprecation: DEPRECATED[version] } : {}),
  });
}

/** autoscaling/v2: the storage version (the group's preferred version in kube 1.24). */
export const hpaV2 = hpaVersion('v2');
export const hpaV1 = hpaVersion('v1', hpaV2, hpaV1ToV2, hpaV2ToV1);
export const hpaV2beta1 = hpaVersion('v2beta1', hpaV2, hpaV2beta1ToV2, hpaV2ToV2beta1);
export const hpaV2beta2 = hpaVersion('v2beta2', hpaV2, hpaV2beta2ToV2, hpaV2ToV2beta2);
