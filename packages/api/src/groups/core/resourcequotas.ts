/**
 * core/v1 ResourceQuotas as kube-apiserver 1.24 has them (pkg/registry/core/resourcequota):
 * namespaced, short name `quota`, every verb, and a `status` sub-resource. Enforcement (kube's
 * ResourceQuota admission plugin) and usage (its quota controller) are not here.
 *
 * - Defaults: kube's SetObjectDefaults_ResourceQuota (spec.hard, status.hard and status.used
 *   rounded up to milli units, in canonical form).
 * - Create clears the status; updates of the resource keep the old status; `/status` keeps the
 *   old spec.
 * - Validation: ValidateResourceQuota on create; on update ValidateResourceQuotaUpdate alone (the
 *   spec again, scopes immutable); `/status`: ValidateResourceQuotaStatusUpdate.
 * - Table: kube's printResourceQuota (REQUEST and LIMIT cells from the status).
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { objectMember } from './defaults/json.js';
import { setDefaultsResourceList } from './defaults/resource-list.js';
import { keepMember } from './helpers/keep-member.js';
import { quantityCell } from './helpers/storage-print.js';
import { validateResourceQuota, validateResourceQuotaStatusUpdate, validateResourceQuotaUpdate } from './validation/resourcequota.js';

const resourceQuotaStrategy: ResourceStrategy = {
  defaults(obj) {
    setDefaultsResourceList(objectMember(obj, 'spec')?.['hard']);
    const status = objectMember(obj, 'status');
    setDefaultsResourceList(status?.['hard']);
    setDefaultsResourceList(status?.['used']);
  },
  prepareForCreate(obj) {
    // kube's empty ResourceQuotaStatus is written as `status: {}`.
    obj['status'] = {};
  },
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'status');
  },
  validate: validateResourceQuota,
  validateOnUpdate: false,
  validateUpdate: validateResourceQuotaUpdate,
};

const resourceQuotaStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    keepMember(obj, old, 'spec');
  },
  validate: () => [],
  validateUpdate: validateResourceQuotaStatusUpdate,
};

/**
 * kube's printResourceQuota: every resource of `status.hard` by name as `<name>: <used>/<hard>`,
 * the `limits.*` ones in LIMIT, the others in REQUEST.
 */
function quotaCells(status: unknown): [request: string, limit: string] {
  const hard = fieldAt(status, 'hard');
  const used = fieldAt(status, 'used');
  const names = hard && typeof hard === 'object' ? Object.keys(hard).sort() : [];
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of names) {
    const pieces = name.split('.');
    (pieces.length > 1 && pieces[0] === 'limits' ? limit : request).push(`${name}: ${quantityCell(used, name)}/${quantityCell(hard, name)}`);
  }
  return [request.join(', '), limit.join(', ')];
}

const resourceQuotaTable: TableDefinition = {
  columns: [
    nameColumn,
    ageColumn,
    col('Request', 'string', 'The used and hard amounts of the quota\'s resources other than limits.'),
    col('Limit', 'string', 'The used and hard amounts of the quota\'s limits.* resources.'),
  ],
  cells: (obj, now) => [obj.metadata.name ?? '', age(obj, now), ...quotaCells(obj['status'])],
};

export const resourcequotas = defineResource({
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  plural: 'resourcequotas',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  shortNames: ['quota'],
  namespaced: true,
  description: 'A ResourceQuota caps the total resources and object counts of a namespace.',
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: resourceQuotaStatusStrategy }],
  strategy: resourceQuotaStrategy,
  table: resourceQuotaTable,
});
