/**
 * apps/v1 Deployments as kube-apiserver 1.24 serves them (pkg/registry/apps/deployment): short
 * name `deploy`, category `all`, `status` and `scale`. Defaults (SetDefaults_Deployment): one
 * replica, RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600.
 * The generation moves on a change of the spec or of the annotations (kube's rollback and pause
 * annotations); the selector is immutable in apps/v1. GC default: delete dependents.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { scaleSubresource } from '../scale.js';
import {
  type JsonObject, type PodValidationOptions, asObject, defaultNil, goIntOrString, goUpdateStrategy, int, intOrPercentValue, isNotMoreThan100Percent, num, selectorString, semanticEqual, setDefaultsTemplate, specOf, statusStrategy,
  templateOptions, validateImmutableSelector, validateNonnegativeField, validatePositiveIntOrPercent, validateWorkloadSelector, workloadPrepare,
} from './shared.js';
import { validatePodTemplateSpecForReplicaSet } from './template.js';

/** SetDefaults_Deployment and the template's defaults. */
export function setDefaultsDeployment(obj: JsonObject): void {
  const spec = specOf(obj);
  defaultNil(spec, 'replicas', 1);
  if (!asObject(spec['strategy'])) spec['strategy'] = {};
  const strategy = spec['strategy'] as JsonObject;
  if (!strategy['type']) strategy['type'] = 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') {
    if (!asObject(strategy['rollingUpdate'])) strategy['rollingUpdate'] = {};
    const ru = strategy['rollingUpdate'] as JsonObject;
    defaultNil(ru, 'maxUnavailable', '25%');
    defaultNil(ru, 'maxSurge', '25%');
  }
  defaultNil(spec, 'revisionHistoryLimit', 10);
  defaultNil(spec, 'progressDeadlineSeconds', 600);
  setDefaultsTemplate(spec['template']);
}

function validateDeploymentStrategy(strategy: unknown, path: string): FieldError[] {
  const s = asObject(strategy) ?? {};
  const ru = s['rollingUpdate'];
  switch (s['type']) {
    case 'Recreate':
      return ru === undefined || ru === null ? [] : [fieldErr.forbidden(`${path}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")];
    case 'RollingUpdate': {
      const r = asObject(ru);
      if (!r) return [fieldErr.required(`${path}.rollingUpdate`, 'this should be defaulted and never be nil')];
      const p = `${path}.rollingUpdate`;
      const errs = [...validatePositiveIntOrPercent(r['maxUnavailable'], `${p}.maxUnavailable`), ...validatePositiveIntOrPercent(r['maxSurge'], `${p}.maxSurge`)];
      if (intOrPercentValue(r['maxUnavailable']) === 0 && intOrPercentValue(r['maxSurge']) === 0) errs.push(fieldErr.invalid(`${p}.maxUnavailable`, goIntOrString(r['maxUnavailable']), 'may not be 0 when `maxSurge` is 0'));
      errs.push(...isNotMoreThan100Percent(r['maxUnavailable'], `${p}.maxUnavailable`));
      return errs;
    }
    default:
      return [fieldErr.notSupported(path, goUpdateStrategy('DeploymentStrategy', s), ['Recreate', 'RollingUpdate'])];
  }
}

/** kube's ValidateDeploymentSpec. */
export function validateDeploymentSpec(specValue: unknown, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const errs = [...validateNonnegativeField(spec['replicas'] ?? 0, 'spec.replicas'), ...validateWorkloadSelector(spec['selector'], 'spec.selector', 'deployment')];
  errs.push(...validatePodTemplateSpecForReplicaSet(spec['template'], spec['selector'], num(spec['replicas']), 'spec.template', opts));
  errs.push(...validateDeploymentStrategy(spec['strategy'], 'spec.strategy'));
  errs.push(...validateNonnegativeField(spec['minReadySeconds'] ?? 0, 'spec.minReadySeconds'));
  if (spec['revisionHistoryLimit'] != null) errs.push(...validateNonnegativeField(spec['revisionHistoryLimit'], 'spec.revisionHistoryLimit'));
  const rollback = asObject(spec['rollbackTo']);
  if (rollback) errs.push(...validateNonnegativeField(rollback['revision'] ?? 0, 'spec.rollback.version'));
  if (spec['progressDeadlineSeconds'] != null) {
    const pds = num(spec['progressDeadlineSeconds']);
    errs.push(...validateNonnegativeField(pds, 'spec.progressDeadlineSeconds'));
    if (pds <= num(spec['minReadySeconds'])) errs.push(fieldErr.invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
  return errs;
}

/** kube's ValidateDeploymentStatus and the collisionCount rule of ValidateDeploymentStatusUpdate. */
export function validateDeploymentStatusUpdate(obj: JsonObject, old: JsonObject): FieldError[] {
  const st = asObject(obj['status']) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']) errs.push(...validateNonnegativeField(st[k] ?? 0, `status.${k}`));
  if (st['collisionCount'] != null) errs.push(...validateNonnegativeField(st['collisionCount'], 'status.collisionCount'));
  const n = (k: string): number => num(st[k]);
  const msg = 'cannot be greater than status.replicas';
  for (const k of ['updatedReplicas', 'readyReplicas', 'availableReplicas']) if (n(k) > n('replicas')) errs.push(fieldErr.invalid(`status.${k}`, n(k), msg));
  if (n('availableReplicas') > n('readyReplicas')) errs.push(fieldErr.invalid('status.availableReplicas', n('availableReplicas'), 'cannot be greater than readyReplicas'));
  errs.push(...collisionCountDecrement(obj, old));
  return errs;
}

/** apivalidation.IsDecremented of status.collisionCount. */
export function collisionCountDecrement(obj: JsonObject, old: JsonObject): FieldError[] {
  const oldCount = fieldAt(old, 'status', 'collisionCount');
  if (typeof oldCount !== 'number') return [];
  const count = fieldAt(obj, 'status', 'collisionCount');
  if (typeof count === 'number' && count >= oldCount) return [];
  return [fieldErr.invalid('status.collisionCount', typeof count === 'number' ? count : 0, 'cannot be decremented')];
}

const prepare = workloadPrepare('io.k8s.api.apps.v1.DeploymentStatus');

const deploymentStrategy: ResourceStrategy = {
  defaults: setDefaultsDeployment,
  prepareForCreate: prepare.prepareForCreate!,
  prepareForUpdate(obj, old) {
    // The shared step bumps the generation on a spec change (one comparison of the spec); kube
    // 1.24 also counts a change of the annotations as a new generation.
    prepare.prepareForUpdate!(obj, old);
    const gen = old.metadata.generation ?? 0;
    if (obj.metadata.generation === gen && !semanticEqual(obj.metadata.annotations ?? {}, old.metadata.annotations ?? {})) obj.metadata.generation = gen + 1;
  },
  validate: (obj) => validateDeploymentSpec(obj['spec'], templateOptions(obj)),
  // ValidateDeploymentUpdate validates the spec once, then the apps/v1 selector is immutable.
  validateUpdate: (obj, old) => [...validateDeploymentSpec(obj['spec'], templateOptions(obj, old)), ...validateImmutableSelector(obj, old)],
  validateOnUpdate: false,
};

const deploymentTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Ready', 'string', 'The ready replicas out of the wanted ones.'),
    col('Up-to-date', 'string', 'The replicas running the current template.'),
    col('Available', 'string', 'The replicas available to serve.'),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the template.', { priority: 1 }),
    col('Selector', 'string', 'The label selector of the pods.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const [names, images] = containerCells(fieldAt(obj, 'spec', 'template', 'spec', 'containers'));
    const sel = selectorString(fieldAt(obj, 'spec', 'selector'));
    return [
      obj.metadata.name ?? '',
      `${int(fieldAt(obj, 'status', 'readyReplicas'))}/${int(fieldAt(obj, 'spec', 'replicas'))}`,
      int(fieldAt(obj, 'status', 'updatedReplicas')),
      int(fieldAt(obj, 'status', 'availableReplicas')),
      age(obj, now),
      names,
      images,
      sel ?? '<invalid>',
    ];
  },
};

export const deployments = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  shortNames: ['deploy'],
  categories: ['all'],
  namespaced: true,
  description: 'A Deployment keeps a number of pods of one template running and rolls out changes to it.',
  strategy: deploymentStrategy,
  subresources: [
    scaleSubresource({ plural: 'deployments', selector: (obj) => selectorString(fieldAt(obj, 'spec', 'selector')) }),
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: statusStrategy(validateDeploymentStatusUpdate, true) },
  ],
  table: deploymentTable,
});
