/** Translates storage errors into API errors, once, at the registry boundary (kube's interpretStorageError). */
import { isStorageError, InvalidResourceVersionError } from '@plinth/storage';
import {
  alreadyExists,
  badRequest,
  conflict,
  groupResourceOf,
  internalError,
  isStatusError,
  notFound,
  resourceExpired,
  StatusError,
  tooLargeResourceVersion,
  type ResourceDefinition,
} from '@plinth/api';

export function interpretStorageError(e: unknown, def: ResourceDefinition, name: string): StatusError {
  if (isStatusError(e)) return e;
  const gr = groupResourceOf(def);
  if (e instanceof InvalidResourceVersionError) return badRequest(`invalid resource version: ${e.resourceVersion}`);
  if (isStorageError(e)) {
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
        return resourceExpired(e.message);
      case 'InvalidContinue':
        return badRequest(`invalid continue token: ${e.message}`);
      default:
        return internalError(e);
    }
  }
  return internalError(e);
}
