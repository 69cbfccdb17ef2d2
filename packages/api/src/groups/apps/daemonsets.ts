/**
 * apps/v1 DaemonSets as kube-apiserver 1.24 serves them (pkg/registry/apps/daemonset): short name
 * `ds`, category `all`, `status`. Defaults: RollingUpdate maxUnavailable 1, maxSurge 0,
 * revisionHistoryLimit 10. The template generation (kube's internal `spec.templateGeneration`,
 * which apps/v1 carries as the `deprecated.daemonset.template.generation` annotation) starts at 1
 * and moves with the template; the selector is immutable in apps/v1. DaemonSetUpdateSurge is on in
 * 1.24.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { badRequest } from '../../errors.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, formatLabels, nameColumn, type TableDefinition } from '../../tables.js';
import { validatePodTemplateSpec } from '../core/validation/pod-template.js';
import { validateReadOnlyPersistentDisks } from '../core/validation/replication-controller.js';
import { defineResource } from '../define.js';
import { collisionCountDecrement } from './deployments.js';
import {
  type JsonObject, type PodValidationOptions, asObject, defaultNil, formatLabelSelector, goIntOrString, goLabelSelector, goUpdateStrategy, int, intOrPercentValue, isNotMoreThan100Percent, semanticEqual, setDefaultsTemplate, specOf, statusStrategy,
  templateLabelsValue, templateOptions, validateImmutableSelector, validateLabelSelector, validateNonnegativeField, validatePositiveIntOrPercent, workloadPrepare,
} from './shared.js';
import { validateAlwaysRestart, validateSelectorMatches } from './template.js';

/** apps/v1's annotation for the internal spec.templateGeneration (kube's appsv1.DeprecatedTemplateGeneration). */
const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(v, 10, 64), which kube's apps/v1 conversion runs on the annotation; 400 with its error. */
function parseTemplateGeneration(v: string): bigint {
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  // More digits than int64 has is out of range, found without converting them (a body may hold
  // megabytes of digits: BigInt of those would hold the event loop).
  let first = v[0] === '+' || v[0] === '-' ? 1 : 0;
  while (first < v.length - 1 && v[first] === '0') first++;
  const n = v.length - first > 19 ? INT64_MAX + 1n : BigInt(v[0] === '-' ? `-${v.slice(first)}` : v.slice(first));
  if (n < INT64_MIN || n > INT64_MAX) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return n;
}

/**
 * The template generation of a DaemonSet: its annotation (0 without one, as kube's conversion
 * reads it); objects stored by earlier plinth releases kept it in `spec.templateGeneration`.
 */
function templateGenerationOf(obj: JsonObject): bigint {
  const v = asObject(asObject(obj['metadata'])?.['annotations'])?.[TEMPLATE_GENERATION];
  if (typeof v === 'string') return parseTemplateGeneration(v);
  const legacy = fieldAt(obj, 'spec', 'templateGeneration');
  return typeof legacy === 'number' ? BigInt(Math.trunc(legacy)) : 0n;
}

/** Writes the template generation as apps/v1 does (kube's conversion always adds the annotation). */
function setTemplateGeneration(obj: JsonObject, tg: bigint): void {
  const meta = (asObject(obj['metadata']) ?? (obj['metadata'] = {})) as JsonObject;
  const annotations = (asObject(meta['annotations']) ?? (meta['annotations'] = {})) as JsonObject;
  annotations[TEMPLATE_GENERATION] = tg.toString();
  const spec = asObject(obj['spec']);
  if (spec) delete spec['templateGeneration'];
}

function setDefaultsDaemonSet(obj: JsonObject): void {
  // Decoding converts apps/v1 to kube's internal type and back: the annotation becomes the
  // template generation (a bad one fails the decode) and is written again from it.
  setTemplateGeneration(obj, templateGenerationOf(obj));
  const spec = specOf(obj);
  if (!asObject(spec['updateStrategy'])) spec['updateStrategy'] = {};
  const us = spec['updateStrategy'] as JsonObject;
  if (!us['type']) us['type'] = 'RollingUpdate';
  if (us['type'] === 'RollingUpdate') {
    if (!asObject(us['rollingUpdate'])) us['rollingUpdate'] = {};
    const ru = us['rollingUpdate'] as JsonObject;
    defaultNil(ru, 'maxUnavailable', 1);
    defaultNil(ru, 'maxSurge', 0);
  }
  defaultNil(spec, 'revisionHistoryLimit', 10);
  setDefaultsTemplate(spec['template']);
}

function validateUpdateStrategy(strategy: unknown, path: string): FieldError[] {
  const s = asObject(strategy) ?? {};
  if (s['type'] === 'OnDelete') return [];
  if (s['type'] !== 'RollingUpdate') return [fieldErr.notSupported(path, goUpdateStrategy('DaemonSetUpdateStrategy', s), ['RollingUpdate', 'OnDelete'])];
  const ru = asObject(s['rollingUpdate']);
  if (!ru) return [fieldErr.required(`${path}.rollingUpdate`)];
  const p = `${path}.rollingUpdate`;
  const errs = [
    ...validatePositiveIntOrPercent(ru['maxUnavailable'], `${p}.maxUnavailable`),
    ...validatePositiveIntOrPercent(ru['maxSurge'], `${p}.maxSurge`),
    ...isNotMoreThan100Percent(ru['maxUnavailable'], `${p}.maxUnavailable`),
    ...isNotMoreThan100Percent(ru['maxSurge'], `${p}.maxSurge`),
  ];
  const hasUnavailable = intOrPercentValue(ru['maxUnavailable']) !== 0;
  const hasSurge = intOrPercentValue(ru['maxSurge']) !== 0;
  if (hasUnavailable && hasSurge) errs.push(fieldErr.invalid(`${p}.maxSurge`, goIntOrString(ru['maxSurge']), 'may not be set when maxUnavailable is non-zero'));
  if (!hasUnavailable && !hasSurge) errs.push(fieldErr.required(`${p}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  return errs;
}

/** kube's ValidateDaemonSetSpec. */
function validateDaemonSetSpec(specValue: unknown, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const sel = spec['selector'];
  const errs = [...validateLabelSelector(sel, 'spec.selector')];
  // kube: a nil selector selects nothing, so any template fails the match.
  if (sel == null) errs.push(fieldErr.invalid('spec.template.metadata.labels', templateLabelsValue(spec['template']), '`selector` does not match template `labels`'));
  else errs.push(...validateSelectorMatches(sel, spec['template'], 'spec.template'));
  const s = asObject(sel);
  if (s && Object.keys(asObject(s['matchLabels']) ?? {}).length + (Array.isArray(s['matchExpressions']) ? s['matchExpressions'].length : 0) === 0) {
    errs.push(fieldErr.invalid('spec.selector', goLabelSelector(sel), 'empty selector is invalid for daemonset'));
  }
  errs.push(...validatePodTemplateSpec(spec['template'], 'spec.template', opts));
  errs.push(...validateReadOnlyPersistentDisks(fieldAt(spec, 'template', 'spec', 'volumes'), 'spec.template.spec.volumes'));
  errs.push(...validateAlwaysRestart(spec['template'], 'spec.template', 'DaemonSet'));
  errs.push(...validateNonnegativeField(spec['minReadySeconds'] ?? 0, 'spec.minReadySeconds'));
  errs.push(...validateUpdateStrategy(spec['updateStrategy'], 'spec.updateStrategy'));
  if (spec['revisionHistoryLimit'] != null) errs.push(...validateNonnegativeField(spec['revisionHistoryLimit'], 'spec.revisionHistoryLimit'));
  return errs;
}

function validateDaemonSetStatusUpdate(obj: JsonObject, old: JsonObject): FieldError[] {
  const st = asObject(obj['status']) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable']) errs.push(...validateNonnegativeField(st[k] ?? 0, `status.${k}`));
  if (st['collisionCount'] != null) errs.push(...validateNonnegativeField(st['collisionCount'], 'status.collisionCount'));
  errs.push(...collisionCountDecrement(obj, old));
  return errs;
}

const prepare = workloadPrepare('io.k8s.api.apps.v1.DaemonSetStatus');

const dsStrategy: ResourceStrategy = {
  defaults: setDefaultsDaemonSet,
  prepareForCreate(obj) {
    prepare.prepareForCreate!(obj);
    const tg = templateGenerationOf(obj);
    setTemplateGeneration(obj, tg < 1n ? 1n : tg);
  },
  prepareForUpdate(obj, old) {
    prepare.prepareForUpdate!(obj, old);
    // Not the client's to set: the old one, plus one when the template changes.
    const templateChanged = !semanticEqual(fieldAt(obj, 'spec', 'template'), fieldAt(old, 'spec', 'template'));
    const oldTG = templateGenerationOf(old);
    setTemplateGeneration(obj, templateChanged ? oldTG + 1n : oldTG);
    const gen = old.metadata.generation ?? 0;
    const { templateGeneration: _legacy, ...oldSpec } = asObject(old['spec']) ?? {};
    obj.metadata.generation = templateChanged || !semanticEqual(obj['spec'], oldSpec) ? gen + 1 : gen;
  },
  validate: (obj) => validateDaemonSetSpec(obj['spec'], templateOptions(obj)),
  // kube: ValidateDaemonSet, then ValidateDaemonSetUpdate (template generation rules and the spec again), then the immutable selector.
  validateUpdate: (obj, old) => [...validateDaemonSetSpec(obj['spec'], templateOptions(obj, old)), ...validateImmutableSelector(obj, old)],
};

const statusOnly = statusStrategy(validateDaemonSetStatusUpdate);
/** The status strategy, the template generation kept (it is the old spec's in kube). */
const dsStatusStrategy: ResourceStrategy = {
  ...statusOnly,
  prepareForUpdate(obj, old) {
    statusOnly.prepareForUpdate!(obj, old);
    setTemplateGeneration(obj, templateGenerationOf(old));
  },
};

const dsTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Desired', 'integer', 'The number of nodes that should run the pod.'),
    col('Current', 'integer', 'The number of nodes running the pod.'),
    col('Ready', 'integer', 'The number of nodes where the pod is ready.'),
    col('Up-to-date', 'integer', 'The number of nodes running the current template.'),
    col('Available', 'integer', 'The number of nodes where the pod is available.'),
    col('Node Selector', 'string', "The template's node selector."),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the template.', { priority: 1 }),
    col('Selector', 'string', 'The label selector of the pods.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const [names, images] = containerCells(fieldAt(obj, 'spec', 'template', 'spec', 'containers'));
    const st = (k: string): number => int(fieldAt(obj, 'status', k));
    return [
      obj.metadata.name ?? '',
      st('desiredNumberScheduled'),
      st('currentNumberScheduled'),
      st('numberReady'),
      st('updatedNumberScheduled'),
      st('numberAvailable'),
      formatLabels(fieldAt(obj, 'spec', 'template', 'spec', 'nodeSelector')),
      age(obj, now),
      names,
      images,
      formatLabelSelector(fieldAt(obj, 'spec', 'selector')),
    ];
  },
};

export const daemonsets = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  shortNames: ['ds'],
  categories: ['all'],
  namespaced: true,
  description: 'A DaemonSet runs one copy of a pod on every eligible node.',
  strategy: dsStrategy,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: dsStatusStrategy }],
  table: dsTable,
});
