/**
 * coordination.k8s.io/v1 Leases as kube-apiserver 1.24 has them (pkg/apis/coordination/validation,
 * pkg/registry/coordination/lease, the printer): the lock client-go's leader election and node
 * heartbeats use.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';

export const COORDINATION_GROUP = 'coordination.k8s.io';

/** kube's `ValidateLeaseSpec` (its message for leaseTransitions has kube's own wording, typo included). */
export function validateLease(obj: StoredObject): FieldError[] {
  const spec = isPlainObject(obj['spec']) ? obj['spec'] : {};
  const errs: FieldError[] = [];
  const duration = spec['leaseDurationSeconds'];
  if (typeof duration === 'number' && duration <= 0) {
    errs.push(fieldErr.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  }
  const transitions = spec['leaseTransitions'];
  if (typeof transitions === 'number' && transitions < 0) {
    errs.push(fieldErr.invalid('spec.leaseTransitions', transitions, 'must to greater or equal than 0'));
  }
  return errs;
}

/** kube's leaseStrategy: no status to reset; ValidateLeaseUpdate is ValidateLeaseSpec again. */
export const leaseStrategy: ResourceStrategy = {
  validate: validateLease,
};

/** kube's printLease: NAME, HOLDER (empty when none), AGE. */
const leaseTable: TableDefinition = {
  columns: [nameColumn, col('Holder', 'string', 'Who holds the lease.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', String(fieldAt(obj, 'spec', 'holderIdentity') ?? ''), age(obj, now)],
};

export const leases = defineResource({
  group: COORDINATION_GROUP,
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
  description: 'A Lease is a lock with a holder and a duration, for leader election and heartbeats.',
  // kube: "AllowCreateOnUpdate is true for Lease; this means you may create one with a PUT request."
  allowCreateOnUpdate: true,
  strategy: leaseStrategy,
  table: leaseTable,
});
