/**
 * apps/v1 StatefulSets as kube-apiserver 1.24 serves them (pkg/registry/apps/statefulset): short
 * name `sts`, category `all`, `status` and `scale`. Defaults: OrderedReady, RollingUpdate with
 * partition 0, one replica, revisionHistoryLimit 10. With 1.24's gates StatefulSetAutoDeletePVC
 * and MaxUnavailableStatefulSet off, `persistentVolumeClaimRetentionPolicy` and
 * `updateStrategy.rollingUpdate.maxUnavailable` are dropped unless the old object had them, and
 * not defaulted. Only replicas, template, updateStrategy, the retention policy and
 * minReadySeconds may change (ValidateStatefulSetUpdate).
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { scaleSubresource } from '../scale.js';
import { collisionCountDecrement } from './deployments.js';
import { type JsonObject, type PodValidationOptions, asObject, defaultNil, goRollingUpdateStatefulSet, goUpdateStrategy, int, num, selectorString, semanticEqual, setDefaultsTemplate, specOf, statusStrategy, templateOptions, validateNonnegativeField, validateWorkloadSelector, workloadPrepare } from './shared.js';
import { validateAlwaysRestart, validatePodTemplateSpecForStatefulSet } from './template.js';

function setDefaultsStatefulSet(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec['podManagementPolicy']) spec['podManagementPolicy'] = 'OrderedReady';
  if (!asObject(spec['updateStrategy'])) spec['updateStrategy'] = {};
  const us = spec['updateStrategy'] as JsonObject;
  if (!us['type']) {
    us['type'] = 'RollingUpdate';
    if (!asObject(us['rollingUpdate'])) us['rollingUpdate'] = {};
  }
  const ru = asObject(us['rollingUpdate']);
  if (us['type'] === 'RollingUpdate' && ru) defaultNil(ru, 'partition', 0);
  defaultNil(spec, 'replicas', 1);
  defaultNil(spec, 'revisionHistoryLimit', 10);
  setDefaultsTemplate(spec['template']);
}

/** dropStatefulSetDisabledFields with 1.24's gates. */
function dropDisabled(obj: JsonObject, old?: JsonObject): void {
  const spec = specOf(obj);
  if (fieldAt(old, 'spec', 'persistentVolumeClaimRetentionPolicy') == null) delete spec['persistentVolumeClaimRetentionPolicy'];
  const ru = asObject(fieldAt(obj, 'spec', 'updateStrategy', 'rollingUpdate'));
  if (ru && fieldAt(old, 'spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable') == null) delete ru['maxUnavailable'];
}

function validateRetentionPolicy(policy: unknown, path: string): FieldError[] {
  const p = asObject(policy);
  if (!p) return [];
  return ['whenDeleted', 'whenScaled'].flatMap((k) => (p[k] === 'Retain' || p[k] === 'Delete' ? [] : [fieldErr.notSupported(`${path}.${k}`, p[k] ?? '', ['Retain', 'Delete'])]));
}

/** kube's ValidateStatefulSetSpec. */
function validateStatefulSetSpec(specValue: unknown, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const errs: FieldError[] = [];
  const pmp = spec['podManagementPolicy'];
  if (!pmp) errs.push(fieldErr.required('spec.podManagementPolicy'));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel') errs.push(fieldErr.invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
  const us = asObject(spec['updateStrategy']) ?? {};
  const ru = asObject(us['rollingUpdate']);
  switch (us['type'] ?? '') {
    case '':
      errs.push(fieldErr.required('spec.updateStrategy'));
      break;
    case 'OnDelete':
      if (ru) errs.push(fieldErr.invalid('spec.updateStrategy.rollingUpdate', goRollingUpdateStatefulSet(ru), "only allowed for updateStrategy 'RollingUpdate'"));
      break;
    case 'RollingUpdate':
      if (ru) errs.push(...validateNonnegativeField(ru['partition'] ?? 0, 'spec.updateStrategy.rollingUpdate.partition'));
      break;
    default:
      errs.push(fieldErr.invalid('spec.updateStrategy', goUpdateStrategy('StatefulSetUpdateStrategy', us), "must be 'RollingUpdate' or 'OnDelete'"));
  }
  errs.push(...validateRetentionPolicy(spec['persistentVolumeClaimRetentionPolicy'], 'spec.persistentVolumeClaimRetentionPolicy'));
  errs.push(...validateNonnegativeField(spec['replicas'] ?? 0, 'spec.replicas'));
  errs.push(...validateNonnegativeField(spec['minReadySeconds'] ?? 0, 'spec.minReadySeconds'));
  errs.push(...validateWorkloadSelector(spec['selector'], 'spec.selector', 'statefulset'));
  errs.push(...validatePodTemplateSpecForStatefulSet(spec['template'], spec['selector'], 'spec.template', opts));
  errs.push(...validateAlwaysRestart(spec['template'], 'spec.template', 'StatefulSet'));
  return errs;
}

const MUTABLE = ['replicas', 'template', 'updateStrategy', 'minReadySeconds', 'persistentVolumeClaimRetentionPolicy'];

/** kube's ValidateStatefulSetUpdate minus ValidateObjectMetaUpdate. */
function validateStatefulSetUpdate(obj: JsonObject, old: JsonObject): FieldError[] {
  const strip = (s: unknown): JsonObject => Object.fromEntries(Object.entries(asObject(s) ?? {}).filter(([k]) => !MUTABLE.includes(k)));
  const errs: FieldError[] = [];
  if (!semanticEqual(strip(obj['spec']), strip(old['spec']))) {
    errs.push(fieldErr.forbidden('spec', "updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
  }
  errs.push(...validateNonnegativeField(fieldAt(obj, 'spec', 'replicas') ?? 0, 'spec.replicas'));
  errs.push(...validateNonnegativeField(fieldAt(obj, 'spec', 'minReadySeconds') ?? 0, 'spec.minReadySeconds'));
  errs.push(...validateRetentionPolicy(fieldAt(obj, 'spec', 'persistentVolumeClaimRetentionPolicy'), 'spec.persistentVolumeClaimRetentionPolicy'));
  return errs;
}

function validateStatefulSetStatusUpdate(obj: JsonObject, old: JsonObject): FieldError[] {
  const st = asObject(obj['status']) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) errs.push(...validateNonnegativeField(st[k] ?? 0, `status.${k}`));
  for (const k of ['observedGeneration', 'collisionCount']) if (st[k] != null) errs.push(...validateNonnegativeField(st[k], `status.${k}`));
  const n = (k: string): number => num(st[k]);
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) if (n(k) > n('replicas')) errs.push(fieldErr.invalid(`status.${k}`, n(k), 'cannot be greater than status.replicas'));
  if (n('availableReplicas') > n('readyReplicas')) errs.push(fieldErr.invalid('status.availableReplicas', n('availableReplicas'), 'cannot be greater than readyReplicas'));
  errs.push(...collisionCountDecrement(obj, old));
  return errs;
}

const prepare = workloadPrepare('io.k8s.api.apps.v1.StatefulSetStatus');

const stsStrategy: ResourceStrategy = {
  defaults: setDefaultsStatefulSet,
  prepareForCreate(obj) {
    prepare.prepareForCreate!(obj);
    dropDisabled(obj);
  },
  prepareForUpdate(obj, old) {
    dropDisabled(obj, old);
    prepare.prepareForUpdate!(obj, old);
  },
  validate: (obj) => validateStatefulSetSpec(obj['spec'], templateOptions(obj)),
  validateUpdate: (obj, old) => [...validateStatefulSetSpec(obj['spec'], templateOptions(obj, old)), ...validateStatefulSetUpdate(obj, old)],
  validateOnUpdate: false,
};

const stsTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Ready', 'string', 'The ready pods out of the wanted ones.'),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the template.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const [names, images] = containerCells(fieldAt(obj, 'spec', 'template', 'spec', 'containers'));
    return [obj.metadata.name ?? '', `${int(fieldAt(obj, 'status', 'readyReplicas'))}/${int(fieldAt(obj, 'spec', 'replicas'))}`, age(obj, now), names, images];
  },
};

export const statefulsets = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  shortNames: ['sts'],
  categories: ['all'],
  namespaced: true,
  description: 'A StatefulSet runs pods with stable names and storage, one ordinal each.',
  strategy: stsStrategy,
  subresources: [
    scaleSubresource({ plural: 'statefulsets', selector: (obj) => selectorString(fieldAt(obj, 'spec', 'selector')) }),
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: statusStrategy(validateStatefulSetStatusUpdate) },
  ],
  table: stsTable,
});

