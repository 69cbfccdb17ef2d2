/**
 * node.k8s.io RuntimeClasses as kube-apiserver 1.24 has them (pkg/apis/node/validation,
 * pkg/registry/node/runtimeclass, printRuntimeClass): cluster-scoped, served as v1 and the
 * deprecated v1beta1, which has the same fields (kube converts both through the internal type
 * field by field), stored as v1.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceDefinition, ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { isDNS1123Label, validateLabels } from '../../validation.js';
import { validateResourceRequirements } from '../core/validation/resources.js';
import { validateTolerations } from '../core/validation/tolerations.js';
import { defineResource } from '../define.js';

export const NODE_GROUP = 'node.k8s.io';

/** kube's validateTolerations of a RuntimeClass: core's rules (under kube's doubled path) and no duplicate. */
function validateSchedulingTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs = validateTolerations(tolerations, `${path}.tolerations`);
  if (!Array.isArray(tolerations)) return errs;
  const seen: unknown[] = [];
  tolerations.forEach((t: unknown, i) => {
    const o = isPlainObject(t) ? t : {};
    const listKey = { key: o['key'] ?? '', operator: o['operator'] ?? '', value: o['value'] ?? '', effect: o['effect'] ?? '' };
    if (seen.some((s) => isDeepStrictEqual(s, listKey))) errs.push(fieldErr.duplicate(`${path}[${i}]`, t));
    else seen.push(listKey);
  });
  return errs;
}

/** kube's ValidateRuntimeClass (object metadata is the store's). */
export function validateRuntimeClass(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const handler = typeof obj['handler'] === 'string' ? obj['handler'] : '';
  for (const msg of isDNS1123Label(handler)) errs.push(fieldErr.invalid('handler', handler, msg));
  const overhead = obj['overhead'];
  if (isPlainObject(overhead)) errs.push(...validateResourceRequirements({ limits: overhead['podFixed'] }, 'overhead'));
  const scheduling = obj['scheduling'];
  if (isPlainObject(scheduling)) {
    if (scheduling['nodeSelector'] != null) errs.push(...validateLabels(scheduling['nodeSelector'], 'scheduling.nodeSelector'));
    errs.push(...validateSchedulingTolerations(scheduling['tolerations'], 'scheduling.tolerations'));
  }
  return errs;
}

/** kube's runtimeclass strategy: ValidateRuntimeClass on update too, and the handler is fixed. */
const runtimeClassStrategy: ResourceStrategy = {
  validate: validateRuntimeClass,
  validateUpdate(obj, old) {
    return obj['handler'] === old['handler'] ? [] : [fieldErr.invalid('handler', obj['handler'] ?? '', 'field is immutable')];
  },
};

/** kube's printRuntimeClass: NAME, HANDLER, AGE. */
const runtimeClassTable: TableDefinition = {
  columns: [nameColumn, col('Handler', 'string', 'The container runtime configuration that runs the pods of this class.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', typeof obj['handler'] === 'string' ? obj['handler'] : '', age(obj, now)],
};

function runtimeClassesVersion(version: 'v1' | 'v1beta1', storage?: ResourceDefinition): ResourceDefinition {
  const apiVersionOf = (v: string) => (obj: StoredObject): StoredObject => ({ ...obj, apiVersion: `${NODE_GROUP}/${v}`, kind: 'RuntimeClass' });
  return defineResource({
    group: NODE_GROUP,
    version,
    kind: 'RuntimeClass',
    plural: 'runtimeclasses',
    namespaced: false,
    description: 'A RuntimeClass names a container runtime configuration (handler) pods may run with.',
    strategy: runtimeClassStrategy,
    table: runtimeClassTable,
    ...(storage ? { conversion: { storage, toStorage: apiVersionOf('v1'), fromStorage: apiVersionOf(version) } } : {}),
  });
}

/** node.k8s.io/v1 runtimeclasses (the storage version). */
export const runtimeclassesV1 = runtimeClassesVersion('v1');
/** node.k8s.io/v1beta1 runtimeclasses (deprecated in 1.22, removed in 1.25). */
export const runtimeclassesV1beta1 = runtimeClassesVersion('v1beta1', runtimeclassesV1);
