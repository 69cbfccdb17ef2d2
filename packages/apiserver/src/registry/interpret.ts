/**
 * The one place where errors become API errors (kube's `interpretStorageError` and
 * `ErrorToAPIStatus` in one): storage errors, invalid resourceVersions, over-deep input and
 * anything unexpected. The registry calls it with the resource and name (so NotFound and Conflict
 * name the object); the HTTP layer calls it for whatever reached it untranslated.
 */
import { etcdErrorMessage, isStorageError, InvalidResourceVersionError } from '@plinth/storage';
import {
  alreadyExists,
  badRequest,
  conflict,
  groupResourceOf,
  groupResourceString,
  internalError,
  isNestingTooDeep,
  isStatusError,
  notFound,
  requestEntityTooLarge,
  resourceExpired,
  StatusError,
  tooLargeResourceVersion,
  type GroupResource,
  type ResourceDefinition,
} from '@plinth/api';

export function toStatusError(e: unknown, def?: ResourceDefinition, name = ''): StatusError {
  if (isStatusError(e)) return e;
  if (e instanceof InvalidResourceVersionError) return badRequest(`invalid resource version: ${e.resourceVersion}`);
  if (isNestingTooDeep(e)) return badRequest(e.message);
  if (!isStorageError(e)) {
    // kube's ErrorToAPIStatus of an untyped error: 500, no reason, the error's own text (kubectl
    // shows `Error from server: etcdserver: request timed out`).
    const etcd = etcdErrorMessage(e);
    if (etcd !== undefined) return new StatusError({ code: 500, reason: '', message: etcd });
    return internalError(e);
  }
  const gr: GroupResource = def ? groupResourceOf(def) : { group: '', resource: '' };
  switch (e.code) {
    case 'NotFound':
      return notFound(gr, name);
    case 'KeyExists':
      return alreadyExists(gr, name);
    case 'Conflict':
      return conflict(gr, name, e.message);
    case 'ResourceVersionTooLarge':
      return tooLargeResourceVersion(e.requested, e.revision);
    case 'Compacted':
      return resourceExpired(e.message, e.continueToken);
    case 'InvalidContinue':
      return badRequest(`invalid continue token: ${e.message}`);
    case 'RequestTooLarge': {
      // kube lets etcd refuse it and answers 500; the client's mistake is a 413 that says the limit.
      const what = def ? `${groupResourceString(gr)} "${name}"` : 'the object';
      const limit = e.limit ? `the limit is ${e.limit} bytes` : 'more than etcd accepts in one request';
      return requestEntityTooLarge(`${what} is ${e.requested} bytes when stored; ${limit}`);
    }
    default:
      return internalError(e);
  }
}
