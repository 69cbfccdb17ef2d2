/**
 * core/v1 ServiceAccounts as kube-apiserver 1.24 has them (pkg/registry/core/serviceaccount: the
 * strategy, and the token sub-resource whose kind is authentication.k8s.io/v1 TokenRequest).
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, countOf, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { tokenRequestKind } from '../authentication/tokenrequests.js';

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined;
}

/** kube's `cleanSecretReferences`: secret references keep only their name. */
function cleanSecretReferences(obj: StoredObject): void {
  const secrets = obj['secrets'];
  if (!Array.isArray(secrets)) return;
  obj['secrets'] = secrets.map((r) => {
    const name = asRecord(r)?.['name'];
    return typeof name === 'string' && name !== '' ? { name } : {};
  });
}

export const serviceAccountStrategy: ResourceStrategy = {
  prepareForCreate: cleanSecretReferences,
  prepareForUpdate: (obj) => cleanSecretReferences(obj),
  validate: () => [],
};

/** kube's printServiceAccount: NAME, SECRETS (how many), AGE. */
const serviceAccountTable: TableDefinition = {
  columns: [nameColumn, col('Secrets', 'string', 'The number of secrets the service account lists.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', countOf(obj['secrets']), age(obj, now)],
};

export const serviceaccounts = defineResource({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  shortNames: ['sa'],
  namespaced: true,
  description: 'A ServiceAccount is an identity for processes that run in pods.',
  // kube's TokenREST (pkg/registry/core/serviceaccount/storage/token.go).
  subresources: [{ name: 'token', verbs: ['create'], kind: tokenRequestKind }],
  strategy: serviceAccountStrategy,
  table: serviceAccountTable,
});
