/**
 * core/v1 ReplicationControllers as kube-apiserver 1.24 has them
 * (pkg/registry/core/replicationcontroller): namespaced, short name `rc`, category `all`, every
 * verb, with `status` and `scale`. Defaults: selector and labels from the template's labels, one
 * replica. Create clears status and starts at generation 1; an update keeps the old status and
 * bumps the generation on a spec change only; `/status` keeps the old spec. A delete that names no
 * policy orphans the pods on core/v1 (kube's back-compatible default). Printer
 * printReplicationController; field selectors metadata.name, metadata.namespace, status.replicas.
 * No controller runs here: nothing creates the pods.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, formatLabels, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { scaleSubresource } from '../scale.js';
import { setDefaultsReplicationController } from './defaults/pod.js';
import { prepareReplicationControllerForCreate, prepareReplicationControllerForUpdate, prepareReplicationControllerStatusUpdate } from './helpers/pod-strategy.js';
import { podTemplateValidationOptions } from './validation/pod-options.js';
import { validateReplicationController, validateReplicationControllerStatusUpdate, validateReplicationControllerUpdate } from './validation/replication-controller.js';
import { semanticEqual } from './validation/semantic.js';

const templateOf = (obj: StoredObject): unknown => fieldAt(obj, 'spec', 'template');

/** The annotations kube's api.NonConvertibleFields picks (fields an old version could not convert). */
const NON_CONVERTIBLE_PREFIX = 'non-convertible.kubernetes.io';

/** rcStrategy.ValidateUpdate's check of non-convertible fields recorded on the old object. */
function validateNonConvertible(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, value] of Object.entries(old.metadata.annotations ?? {})) {
    if (!key.startsWith(NON_CONVERTIBLE_PREFIX)) continue;
    const parts = key.split('/');
    if (parts.length !== 2) continue;
    const broken = parts[1]!;
    if (broken.includes('selector')) {
      const selector = fieldAt(obj, 'spec', 'selector');
      if (!semanticEqual(fieldAt(old, 'spec', 'selector'), selector)) errs.push(fieldErr.invalid('spec.selector', selector, 'cannot update non-convertible selector'));
    } else {
      errs.push({ type: 'FieldValueNotFound', field: broken, value, hasValue: true, detail: 'unknown non-convertible field' });
    }
  }
  return errs;
}

const rcStrategy: ResourceStrategy = {
  defaults: (obj) => setDefaultsReplicationController(obj),
  prepareForCreate: (obj) => prepareReplicationControllerForCreate(obj),
  prepareForUpdate: (obj, old) => prepareReplicationControllerForUpdate(obj, old),
  validate: (obj) => validateReplicationController(obj, podTemplateValidationOptions(templateOf(obj), undefined)),
  // kube validates the spec twice on update (ValidateReplicationController, then
  // ValidateReplicationControllerUpdate): `validate` runs first, this adds the second pass.
  validateUpdate: (obj, old) => [
    ...validateReplicationControllerUpdate(obj, old, podTemplateValidationOptions(templateOf(obj), templateOf(old))),
    ...validateNonConvertible(obj, old),
  ],
  defaultGarbageCollectionPolicy: ({ group, version }) => (group === '' && version === 'v1' ? 'OrphanDependents' : 'DeleteDependents'),
};

const rcStatusStrategy: ResourceStrategy = {
  prepareForUpdate: (obj, old) => prepareReplicationControllerStatusUpdate(obj, old),
  validate: () => [],
  validateUpdate: (obj, old) => validateReplicationControllerStatusUpdate(obj, old),
  validateOnUpdate: false,
};

const int = (v: unknown): number => (typeof v === 'number' ? v : 0);

const rcTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Desired', 'integer', 'The number of replicas wanted.'),
    col('Current', 'integer', 'The number of replicas observed.'),
    col('Ready', 'integer', 'The number of ready replicas observed.'),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the pod template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the pod template.', { priority: 1 }),
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
      formatLabels(fieldAt(obj, 'spec', 'selector')),
    ];
  },
};

/** kube's labels.SelectorFromSet(selector).String(): sorted `k=v` pairs, '' for none. */
function selectorString(obj: StoredObject): string {
  const s = formatLabels(fieldAt(obj, 'spec', 'selector'));
  return s === '<none>' ? '' : s;
}

export const replicationcontrollers = defineResource({
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  plural: 'replicationcontrollers',
  shortNames: ['rc'],
  categories: ['all'],
  namespaced: true,
  description: 'A ReplicationController asks for a number of copies of a pod template.',
  strategy: rcStrategy,
  subresources: [scaleSubresource({ plural: 'replicationcontrollers', selector: selectorString }), { name: 'status', verbs: ['get', 'patch', 'update'], strategy: rcStatusStrategy }],
  table: rcTable,
  fieldSelector: {
    labels: ['metadata.name', 'metadata.namespace', 'status.replicas'],
    fields: (obj, out) => {
      out['status.replicas'] = String(int(fieldAt(obj, 'status', 'replicas')));
    },
  },
});
