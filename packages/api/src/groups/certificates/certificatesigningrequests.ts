/**
 * certificates.k8s.io/v1 CertificateSigningRequests as kube-apiserver 1.24 has them
 * (pkg/registry/certificates/certificates): cluster-scoped, short name `csr`, with `status` and
 * `approval` sub-resources.
 *
 * - Create: the requester's username, uid, groups and extra are set from the request's user (the
 *   apiserver's write guard calls `setRequester`, kube's PrepareForCreate reads the context) and
 *   the status is cleared — no pre-approved requests.
 * - An update of the resource keeps the old spec and status (only metadata changes).
 * - `/approval` changes only the conditions (Approved/Denied); `/status` keeps the spec and the
 *   Approved/Denied conditions, and may set `status.certificate` once.
 * - Conditions get lastUpdateTime/lastTransitionTime when they come without (populateConditionTimestamps).
 * - Field selectors: metadata.name and spec.signerName. Table: kube's printCertificateSigningRequest.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, col, fieldAt, humanDuration, nameColumn, ageColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, type UserInfo, isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { bytesText, conditionsOf, validateCertificateSigningRequestCreate, validateCertificateSigningRequestUpdate } from './validation.js';

export const CERTIFICATES_GROUP = 'certificates.k8s.io';

type Json = Record<string, unknown>;

const nowTime = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

/** kube's PrepareForCreate user part: the spec's requester fields from the request's user. */
export function setRequester(obj: StoredObject, user: UserInfo): void {
  const spec: Json = isPlainObject(obj['spec']) ? obj['spec'] : (obj['spec'] = {});
  delete spec['username'];
  delete spec['uid'];
  delete spec['groups'];
  delete spec['extra'];
  if (user.name) spec['username'] = user.name;
  if (user.uid) spec['uid'] = user.uid;
  if (user.groups.length > 0) spec['groups'] = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) spec['extra'] = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
}

/** kube's populateConditionTimestamps: missing times become now, or the old same-status condition's transition time. */
function populateConditionTimestamps(obj: StoredObject, old: StoredObject): void {
  const now = nowTime();
  const oldConditions = conditionsOf(old);
  for (const c of conditionsOf(obj)) {
    if (!c.raw['lastUpdateTime']) c.raw['lastUpdateTime'] = now;
    if (!c.raw['lastTransitionTime']) {
      const same = oldConditions.find((o) => o.type === c.type && o.status === c.status && o.raw['lastTransitionTime']);
      c.raw['lastTransitionTime'] = same ? same.raw['lastTransitionTime'] : now;
    }
  }
}

function statusOf(obj: StoredObject): Json {
  return isPlainObject(obj['status']) ? obj['status'] : (obj['status'] = {});
}

/** kube's preserveConditionInstances: the new object keeps the old conditions of `type` when as many. */
function preserveConditionInstances(obj: StoredObject, old: StoredObject, type: string): void {
  const list = statusOf(obj)['conditions'];
  if (!Array.isArray(list)) return;
  const oldOnes = conditionsOf(old).filter((c) => c.type === type);
  const idx = list.map((c, i) => (isPlainObject(c) && c['type'] === type ? i : -1)).filter((i) => i >= 0);
  if (idx.length !== oldOnes.length) return;
  idx.forEach((at, n) => (list[at] = structuredClone(oldOnes[n]!.raw)));
}

const csrStrategy: ResourceStrategy = {
  prepareForCreate(obj) {
    obj['status'] = {};
  },
  prepareForUpdate(obj, old) {
    obj['spec'] = structuredClone(old['spec']);
    obj['status'] = structuredClone(old['status'] ?? {});
  },
  validate: validateCertificateSigningRequestCreate,
  validateOnUpdate: false,
  validateUpdate: (obj, old) => validateCertificateSigningRequestUpdate(obj, old, 'update'),
};

const csrStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    obj['spec'] = structuredClone(old['spec']);
    preserveConditionInstances(obj, old, 'Approved');
    preserveConditionInstances(obj, old, 'Denied');
    populateConditionTimestamps(obj, old);
  },
  validate: () => [],
  validateOnUpdate: false,
  validateUpdate: (obj, old) => validateCertificateSigningRequestUpdate(obj, old, 'status'),
};

const csrApprovalStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    populateConditionTimestamps(obj, old);
    const conditions = statusOf(obj)['conditions'];
    obj['spec'] = structuredClone(old['spec']);
    const status: Json = structuredClone(isPlainObject(old['status']) ? old['status'] : {});
    if (conditions !== undefined) status['conditions'] = conditions;
    else delete status['conditions'];
    obj['status'] = status;
  },
  validate: () => [],
  validateOnUpdate: false,
  validateUpdate: (obj, old) => validateCertificateSigningRequestUpdate(obj, old, 'approval'),
};

/** kube's extractCSRStatus: Denied or Approved or Pending, then Failed and Issued. */
export function csrCondition(obj: StoredObject): string {
  const types = new Set(conditionsOf(obj).map((c) => c.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (bytesText(fieldAt(obj, 'status', 'certificate')).length > 0) s += ',Issued';
  return s;
}

const csrTable: TableDefinition = {
  columns: [
    nameColumn,
    ageColumn,
    col('SignerName', 'string', 'The signer the request is for.'),
    col('Requestor', 'string', 'The user who created the request.'),
    col('RequestedDuration', 'string', 'The validity the request asks for.'),
    col('Condition', 'string', 'Whether the request is approved, denied, failed or issued.'),
  ],
  cells: (obj, now) => {
    const exp = fieldAt(obj, 'spec', 'expirationSeconds');
    const signer = fieldAt(obj, 'spec', 'signerName');
    return [
      obj.metadata.name ?? '',
      age(obj, now),
      typeof signer === 'string' && signer ? signer : '<none>',
      String(fieldAt(obj, 'spec', 'username') ?? ''),
      typeof exp === 'number' ? humanDuration(exp * 1000) : '<none>',
      csrCondition(obj),
    ];
  },
};

export const certificatesigningrequests = defineResource({
  group: CERTIFICATES_GROUP,
  version: 'v1',
  kind: 'CertificateSigningRequest',
  plural: 'certificatesigningrequests',
  shortNames: ['csr'],
  namespaced: false,
  description: 'A CertificateSigningRequest asks a signer for a certificate; it is approved, then signed.',
  // kube's ValidateCertificateRequestName accepts any name the metadata rules allow.
  nameValidator: () => [],
  subresources: [
    { name: 'approval', verbs: ['get', 'patch', 'update'], strategy: csrApprovalStrategy },
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: csrStatusStrategy },
  ],
  strategy: csrStrategy,
  table: csrTable,
  // kube: SelectableFields and the v1 field label conversion.
  fieldSelector: {
    labels: ['metadata.name', 'spec.signerName'],
    fields: (obj, out) => {
      const spec = obj['spec'];
      out['spec.signerName'] = isPlainObject(spec) && typeof spec['signerName'] === 'string' ? spec['signerName'] : '';
    },
  },
});
