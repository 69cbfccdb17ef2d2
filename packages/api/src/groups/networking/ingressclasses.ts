/**
 * networking.k8s.io/v1 IngressClasses as kube-apiserver 1.24 has them
 * (pkg/registry/networking/ingressclass, printIngressClass): cluster-scoped, the controller
 * required and immutable, parameters' scope defaulted to Cluster, generation on spec change.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceStrategy } from '../../catalog.js';
import { fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { NETWORKING_GROUP } from './ingresses.js';
import { validateIngressClass } from './validation.js';

const ingressClassStrategy: ResourceStrategy = {
  defaults(obj) {
    const params = fieldAt(obj, 'spec', 'parameters');
    if (isPlainObject(params) && params['scope'] == null) params['scope'] = 'Cluster';
  },
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    if (!isDeepStrictEqual(obj['spec'], old['spec'])) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
  },
  validate: validateIngressClass,
  // kube's ValidateIngressClassUpdate: the controller first, then the whole class again.
  validateUpdate(obj, old) {
    const controller = fieldAt(obj, 'spec', 'controller') ?? '';
    return controller === (fieldAt(old, 'spec', 'controller') ?? '') ? [] : [fieldErr.invalid('spec.controller', controller, 'field is immutable')];
  },
};

/** kube's printIngressClass: NAME, CONTROLLER, PARAMETERS (`Kind[.apiGroup]/name`), AGE. */
const ingressClassTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Controller', 'string', 'The controller that handles this class.'),
    col('Parameters', 'string', 'The resource holding more parameters.'),
    ageColumn,
  ],
  cells: (obj, now) => {
    const p = fieldAt(obj, 'spec', 'parameters');
    let parameters = '<none>';
    if (isPlainObject(p)) parameters = `${String(p['kind'] ?? '')}${typeof p['apiGroup'] === 'string' ? `.${p['apiGroup']}` : ''}/${String(p['name'] ?? '')}`;
    return [obj.metadata.name ?? '', String(fieldAt(obj, 'spec', 'controller') ?? ''), parameters, age(obj, now)];
  },
};

export const ingressclasses = defineResource({
  group: NETWORKING_GROUP,
  version: 'v1',
  kind: 'IngressClass',
  plural: 'ingressclasses',
  namespaced: false,
  description: 'An IngressClass names the controller that implements the Ingresses of that class.',
  strategy: ingressClassStrategy,
  table: ingressClassTable,
});
