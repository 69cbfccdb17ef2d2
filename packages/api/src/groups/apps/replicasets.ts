/**
 * apps/v1 ReplicaSets as kube-apiserver 1.24 serves them (pkg/registry/apps/replicaset): short
 * name `rs`, category `all`, `status` and `scale`; one replica by default; on update kube
 * validates the spec twice (ValidateReplicaSet, then ValidateReplicaSetUpdate) and keeps the
 * selector immutable in apps/v1. Field selector `status.replicas` as kube's ReplicaSetToSelectableFields.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { scaleSubresource } from '../scale.js';
import { type JsonObject, type PodValidationOptions, asObject, defaultNil, formatLabelSelector, int, num, selectorString, setDefaultsTemplate, specOf, statusStrategy, templateOptions, validateImmutableSelector, validateNonnegativeField, validateWorkloadSelector, workloadPrepare } from './shared.js';
import { validatePodTemplateSpecForReplicaSet } from './template.js';

/** kube's ValidateReplicaSetSpec. */
export function validateReplicaSetSpec(specValue: unknown, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  return [
    ...validateNonnegativeField(spec['replicas'] ?? 0, 'spec.replicas'),
    ...validateNonnegativeField(spec['minReadySeconds'] ?? 0, 'spec.minReadySeconds'),
    // kube's message says "deployment" for ReplicaSets too.
    ...validateWorkloadSelector(spec['selector'], 'spec.selector', 'deployment'),
    ...validatePodTemplateSpecForReplicaSet(spec['template'], spec['selector'], num(spec['replicas']), 'spec.template', opts),
  ];
}

/** kube's ValidateReplicaSetStatus. */
function validateReplicaSetStatusUpdate(obj: JsonObject): FieldError[] {
  const st = asObject(obj['status']) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']) errs.push(...validateNonnegativeField(st[k] ?? 0, `status.${k}`));
  const n = (k: string): number => num(st[k]);
  for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas']) if (n(k) > n('replicas')) errs.push(fieldErr.invalid(`status.${k}`, n(k), 'cannot be greater than status.replicas'));
  if (n('availableReplicas') > n('readyReplicas')) errs.push(fieldErr.invalid('status.availableReplicas', n('availableReplicas'), 'cannot be greater than readyReplicas'));
  return errs;
}

const rsStrategy: ResourceStrategy = {
  defaults(obj) {
    const spec = specOf(obj);
    defaultNil(spec, 'replicas', 1);
    setDefaultsTemplate(spec['template']);
  },
  ...workloadPrepare('io.k8s.api.apps.v1.ReplicaSetStatus'),
  validate: (obj) => validateReplicaSetSpec(obj['spec'], templateOptions(obj)),
  validateUpdate: (obj, old) => [...validateReplicaSetSpec(obj['spec'], templateOptions(obj, old)), ...validateImmutableSelector(obj, old)],
};

const rsTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Desired', 'integer', 'The number of replicas wanted.'),
    col('Current', 'integer', 'The number of replicas observed.'),
    col('Ready', 'integer', 'The number of ready replicas observed.'),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the template.', { priority: 1 }),
    col('Selector', 'string', 'The label selector of the pods.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const [names, images] = containerCells(fieldAt(obj, 'spec', 'template', 'spec', 'containers'));
    return [
      obj.metadata.name ?? '',
      int(fieldAt(obj, 'spec', 'replicas')),
      int(fieldAt(obj, 'status', 'replicas')),
      int(fieldAt(obj, 'status', 'readyReplicas')),
      age(obj, now),
      names,
      images,
      formatLabelSelector(fieldAt(obj, 'spec', 'selector')),
    ];
  },
};

export const replicasets = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  shortNames: ['rs'],
  categories: ['all'],
  namespaced: true,
  description: 'A ReplicaSet keeps a number of pods matching its selector running.',
  strategy: rsStrategy,
  subresources: [
    scaleSubresource({ plural: 'replicasets', selector: (obj) => selectorString(fieldAt(obj, 'spec', 'selector')) }),
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: statusStrategy(validateReplicaSetStatusUpdate) },
  ],
  table: rsTable,
  fieldSelector: {
    labels: ['metadata.name', 'metadata.namespace', 'status.replicas'],
    fields: (obj, out) => {
      out['status.replicas'] = String(int(fieldAt(obj, 'status', 'replicas')));
    },
  },
});
