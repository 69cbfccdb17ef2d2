/**
 * scheduling.k8s.io/v1 PriorityClasses as kube-apiserver 1.24 has them
 * (pkg/apis/scheduling/validation, pkg/registry/scheduling/priorityclass, printPriorityClass):
 * cluster-scoped, short name `pc`; the two system classes are created at start-up and may not be
 * deleted (the apiserver's hook); one globalDefault is the Priority admission plugin's rule.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';

export const SCHEDULING_GROUP = 'scheduling.k8s.io';

/** kube's HighestUserDefinablePriority. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** kube's SystemCriticalPriority (2 × HighestUserDefinablePriority). */
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';

/** kube's SystemPriorityClasses (pkg/apis/scheduling/v1/helpers.go), as the bootstrap creates them. */
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<{ name: string; value: number; description: string }> = [
  { name: 'system-node-critical', value: SYSTEM_CRITICAL_PRIORITY + 1000, description: 'System critical pods that stay on their node.' },
  { name: 'system-cluster-critical', value: SYSTEM_CRITICAL_PRIORITY, description: 'System critical pods that must run, on any node.' },
];

/** Whether `name` is one of the system classes (kube's REST.Delete refuses to delete them). */
export const isSystemPriorityClass = (name: string): boolean => SYSTEM_PRIORITY_CLASSES.some((c) => c.name === name);

/** kube's IsKnownSystemPriorityClass: undefined when it is one, else kube's reason. */
function systemClassMismatch(name: string, value: number, globalDefault: boolean): string | undefined {
  const spc = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (!spc) return `${name} is not a known system priority class`;
  if (spc.value !== value) return `value of ${name} PriorityClass must be ${spc.value}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

/** kube's ValidatePreemptionPolicy (core validation): the pod and the class share it. */
export function validatePreemptionPolicy(policy: unknown, path: string): FieldError[] {
  if (policy === 'PreemptLowerPriority' || policy === 'Never') return [];
  if (policy === '') return [fieldErr.required(path)];
  return [fieldErr.notSupported(path, policy, ['PreemptLowerPriority', 'Never'])];
}

/** kube's ValidatePriorityClass (object metadata is the store's). */
export function validatePriorityClass(obj: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = obj.metadata.name ?? '';
  const value = typeof obj['value'] === 'number' ? obj['value'] : 0;
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const why = systemClassMismatch(name, value, obj['globalDefault'] === true);
    if (why) errs.push(fieldErr.forbidden('metadata.name', `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${why}`));
  } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(fieldErr.forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (obj['preemptionPolicy'] !== undefined && obj['preemptionPolicy'] !== null) errs.push(...validatePreemptionPolicy(obj['preemptionPolicy'], 'preemptionPolicy'));
  return errs;
}

/** kube's ValidatePriorityClassUpdate: value (kube's path is `Value`) and preemptionPolicy are fixed. */
export function validatePriorityClassUpdate(obj: StoredObject, old: StoredObject): FieldError[] {
  const errs: FieldError[] = [];
  if ((obj['value'] ?? 0) !== (old['value'] ?? 0)) errs.push(fieldErr.forbidden('Value', 'may not be changed in an update.'));
  const policy = obj['preemptionPolicy'] ?? null;
  if (!isDeepStrictEqual(policy, old['preemptionPolicy'] ?? null)) errs.push(fieldErr.invalid('preemptionPolicy', policy, 'field is immutable'));
  return errs;
}

/**
 * kube's priorityClassStrategy: generation 1 on create and never bumped (kube sets none on update);
 * preemptionPolicy defaults to PreemptLowerPriority (NonPreemptingPriority is GA in 1.24). Its
 * update validation is ValidatePriorityClassUpdate alone.
 */
const priorityClassStrategy: ResourceStrategy = {
  defaults(obj) {
    if (obj['preemptionPolicy'] === undefined || obj['preemptionPolicy'] === null) obj['preemptionPolicy'] = 'PreemptLowerPriority';
  },
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  validate: validatePriorityClass,
  validateUpdate: validatePriorityClassUpdate,
  validateOnUpdate: false,
};

/** kube's printPriorityClass: NAME, VALUE, GLOBAL-DEFAULT, AGE. */
const priorityClassTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Value', 'integer', 'The value of this priority class.'),
    col('Global-Default', 'boolean', 'Whether this is the priority of pods that name no class.'),
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name ?? '', typeof obj['value'] === 'number' ? obj['value'] : 0, obj['globalDefault'] === true, age(obj, now)],
};

export const priorityclasses = defineResource({
  group: SCHEDULING_GROUP,
  version: 'v1',
  kind: 'PriorityClass',
  plural: 'priorityclasses',
  shortNames: ['pc'],
  namespaced: false,
  description: 'A PriorityClass maps a class name to the integer priority of the pods that name it.',
  strategy: priorityClassStrategy,
  table: priorityClassTable,
});
