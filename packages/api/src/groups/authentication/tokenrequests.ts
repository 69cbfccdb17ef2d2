/**
 * authentication.k8s.io/v1 TokenRequest, the kind of the serviceaccounts/token sub-resource:
 * defaults (pkg/apis/authentication/v1/defaults.go) and validation
 * (pkg/apis/authentication/validation ValidateTokenRequest).
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { isPlainObject, type StoredObject } from '../../types.js';
import { defineKind } from '../define.js';

export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** SetDefaults_TokenRequestSpec: an hour. */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
/** ValidateTokenRequest's bounds: at least 10 minutes, at most 2^32 seconds. */
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;
export const MAX_TOKEN_EXPIRATION_SECONDS = 2 ** 32;

function specOf(obj: StoredObject): Record<string, unknown> {
  const spec = obj['spec'];
  if (isPlainObject(spec)) return spec;
  const fresh: Record<string, unknown> = {};
  obj['spec'] = fresh;
  return fresh;
}

/** kube's ValidateTokenRequest. */
export function validateTokenRequest(obj: StoredObject): FieldError[] {
  const seconds = specOf(obj)['expirationSeconds'];
  // int64: a BigInt above 2^53 compares with the bounds exactly.
  const n = typeof seconds === 'number' || typeof seconds === 'bigint' ? seconds : 0;
  const errs: FieldError[] = [];
  if (n < MIN_TOKEN_EXPIRATION_SECONDS) errs.push(fieldErr.invalid('spec.expirationSeconds', n, 'may not specify a duration less than 10 minutes'));
  if (n > MAX_TOKEN_EXPIRATION_SECONDS) errs.push(fieldErr.invalid('spec.expirationSeconds', n, 'may not specify a duration larger than 2^32 seconds'));
  return errs;
}

export const tokenRequestStrategy: ResourceStrategy = {
  defaults(obj) {
    const spec = specOf(obj);
    if (spec['expirationSeconds'] === undefined) spec['expirationSeconds'] = DEFAULT_TOKEN_EXPIRATION_SECONDS;
  },
  validate: validateTokenRequest,
};

/** The kind of serviceaccounts/token (kube's TokenREST answers GroupVersionKind with it). */
export const tokenRequestKind = defineKind({
  group: AUTHENTICATION_GROUP,
  version: 'v1',
  kind: 'TokenRequest',
  description: 'A TokenRequest asks for a token of a service account.',
  strategy: tokenRequestStrategy,
});
