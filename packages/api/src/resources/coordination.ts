/**
 * coordination.k8s.io/v1 Leases as kube-apiserver 1.24 has them (pkg/apis/coordination/validation,
 * pkg/registry/coordination/lease): the lock client-go's leader election and node heartbeats use.
 */
import type { ResourceDefinition, ResourceStrategy } from '../catalog.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import { type Schema, s } from '../schema.js';
import { leaseTable } from '../tables.js';
import { type StoredObject, isPlainObject } from '../types.js';
import { nameIsDNSSubdomain } from '../validation.js';

export const COORDINATION_GROUP = 'coordination.k8s.io';

const leaseSpecSchema: Schema = s.obj(
  {
    holderIdentity: { ...s.str('holderIdentity contains the identity of the holder of a current lease.'), 'x-go-pointer': true },
    leaseDurationSeconds: s.int(
      'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measure against time of last observed RenewTime.',
    ),
    acquireTime: s.microTime('acquireTime is a time when the current lease was acquired.'),
    renewTime: s.microTime('renewTime is a time when the current holder of a lease has last updated the lease.'),
    leaseTransitions: s.int('leaseTransitions is the number of transitions of a lease between holders.'),
  },
  { description: 'LeaseSpec is a specification of a Lease.', 'x-go-type': 'v1.LeaseSpec' },
);

const leaseSchema: Schema = s.obj(
  {
    spec: {
      ...leaseSpecSchema,
      description: 'Specification of the Lease. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
    },
  },
  { description: 'Lease defines a lease concept.', 'x-go-type': 'v1.Lease' },
);

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

export const leases: ResourceDefinition = {
  group: COORDINATION_GROUP,
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'etcd',
  subresources: [],
  nameValidator: nameIsDNSSubdomain,
  // kube: "AllowCreateOnUpdate is true for Lease; this means you may create one with a PUT request."
  allowCreateOnUpdate: true,
  returnDeletedObject: false,
  schema: leaseSchema,
  strategy: leaseStrategy,
  table: leaseTable,
};
