/**
 * authentication.k8s.io/v1: the review resources TokenReview (kube 1.24) and SelfSubjectReview
 * (kube 1.28+), which are created and answered but never stored, and TokenRequest, the kind of
 * the serviceaccounts/token sub-resource — schemas as kube's k8s.io/api/authentication/v1 types,
 * defaults (pkg/apis/authentication/v1/defaults.go) and validation
 * (pkg/apis/authentication/validation).
 */
import type { KindDefinition, ResourceDefinition, ResourceStrategy } from '../catalog.js';
import { type FieldError, fieldErr } from '../field-errors.js';
import { type Schema, s } from '../schema.js';
import { isPlainObject, type StoredObject } from '../types.js';
import { nameIsDNSSubdomain } from '../validation.js';

export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** SetDefaults_TokenRequestSpec: an hour. */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
/** ValidateTokenRequest's bounds: at least 10 minutes, at most 2^32 seconds. */
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;
export const MAX_TOKEN_EXPIRATION_SECONDS = 2 ** 32;

/** A `$ref` that also names its Go type, so decode errors read `v1.UserInfo` as kube's do. */
function ref(name: string, goType: string, description?: string): Schema {
  return { $ref: name, 'x-go-type': goType, ...(description ? { description } : {}) };
}

export const authenticationDefinitions: Record<string, Schema> = {
  UserInfo: s.obj(
    {
      username: s.str('The name that uniquely identifies this user among all active users.'),
      uid: s.str('A unique value that identifies this user across time. If this user is deleted and another user by the same name is added, they will have different UIDs.'),
      groups: s.arr(s.str(), { description: 'The names of groups this user is a part of.' }),
      extra: s.map(s.arr(s.str()), { description: 'Any additional information provided by the authenticator.' }),
    },
    { description: 'UserInfo holds the information about the user needed to implement the user.Info interface.', 'x-go-type': 'v1.UserInfo' },
  ),
};

// ---------------------------------------------------------------------------------------------
// TokenReview
// ---------------------------------------------------------------------------------------------

const tokenReviewSchema: Schema = s.obj(
  {
    spec: s.obj(
      {
        token: s.str('Token is the opaque bearer token.'),
        audiences: s.arr(s.str(), {
          description:
            'Audiences is a list of the identifiers that the resource server presented with the token identifies as. Audience-aware token authenticators will verify that the token was intended for at least one of the audiences in this list. If no audiences are provided, the audience will default to the audience of the Kubernetes apiserver.',
        }),
      },
      { description: 'Spec holds information about the request being evaluated', 'x-go-type': 'v1.TokenReviewSpec' },
    ),
    status: s.obj(
      {
        authenticated: s.bool('Authenticated indicates that the token was associated with a known user.'),
        user: ref('UserInfo', 'v1.UserInfo', 'User is the UserInfo associated with the provided token.'),
        audiences: s.arr(s.str(), {
          description:
            'Audiences are audience identifiers chosen by the authenticator that are compatible with both the TokenReview and token. An identifier is any identifier in the intersection of the TokenReviewSpec audiences and the token\'s audiences. A client of the TokenReview API that sets the spec.audiences field should validate that a compatible audience identifier is returned in the status.audiences field to ensure that the TokenReview server is audience aware. If a TokenReview returns an empty status.audience field where status.authenticated is "true", the token is valid against the audience of the Kubernetes API server.',
        }),
        error: s.str("Error indicates that the token couldn't be checked"),
      },
      { description: 'Status is filled in by the server and indicates whether the request can be authenticated.', 'x-go-type': 'v1.TokenReviewStatus' },
    ),
  },
  {
    description: 'TokenReview attempts to authenticate a token to a known user. Note: TokenReview requests may be cached by the webhook token authenticator plugin in the kube-apiserver.',
    required: ['spec'],
    'x-go-type': 'v1.TokenReview',
  },
);

/**
 * Review kinds validate in their REST (the storages call the validators; TokenReview's empty token
 * is a 400 there), as in kube: the strategy has nothing to do.
 */
const reviewStrategy: ResourceStrategy = { validate: () => [] };

/** A create-only, never-stored review resource (TokenReview, SubjectAccessReview, ...). */
export function reviewResource(group: string, kind: string, plural: string, namespaced: boolean, schema: Schema): ResourceDefinition {
  return {
    group,
    version: 'v1',
    kind,
    listKind: '',
    plural,
    singular: kind.toLowerCase(),
    shortNames: [],
    categories: [],
    namespaced,
    verbs: ['create'],
    storage: 'none',
    subresources: [],
    nameValidator: nameIsDNSSubdomain,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    schema,
    strategy: reviewStrategy,
  };
}

/** kube's tokenreviews (pkg/registry/authentication/tokenreview). */
export const tokenreviews = reviewResource(AUTHENTICATION_GROUP, 'TokenReview', 'tokenreviews', false, tokenReviewSchema);

// ---------------------------------------------------------------------------------------------
// SelfSubjectReview (authentication.k8s.io/v1 since kube 1.28)
// ---------------------------------------------------------------------------------------------

const selfSubjectReviewSchema: Schema = s.obj(
  {
    status: s.obj(
      { userInfo: ref('UserInfo', 'v1.UserInfo', 'User attributes of the user making this request.') },
      { description: 'Status is filled in by the server with the user attributes.', 'x-go-type': 'v1.SelfSubjectReviewStatus' },
    ),
  },
  {
    description:
      'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request. When using impersonation, users will receive the user info of the user being impersonated.  If impersonation or request header authentication is used, any extra keys will have their case ignored and returned as lowercase.',
    'x-go-type': 'v1.SelfSubjectReview',
  },
);

/** kube 1.28's selfsubjectreviews (pkg/registry/authentication/selfsubjectreview). */
export const selfsubjectreviews = reviewResource(AUTHENTICATION_GROUP, 'SelfSubjectReview', 'selfsubjectreviews', false, selfSubjectReviewSchema);

// ---------------------------------------------------------------------------------------------
// TokenRequest (the body of serviceaccounts/<name>/token)
// ---------------------------------------------------------------------------------------------

const tokenRequestSchema: Schema = s.obj(
  {
    spec: s.obj(
      {
        audiences: s.arr(s.str(), {
          description:
            'Audiences are the intendend audiences of the token. A recipient of a token must identify themself with an identifier in the list of audiences of the token, and otherwise should reject the token. A token issued for multiple audiences may be used to authenticate against any of the audiences listed but implies a high degree of trust between the target audiences.',
        }),
        expirationSeconds: s.int(
          "ExpirationSeconds is the requested duration of validity of the request. The token issuer may return a token with a different validity duration so a client needs to check the 'expiration' field in a response.",
          'int64',
        ),
        boundObjectRef: s.obj(
          {
            kind: s.str("Kind of the referent. Valid kinds are 'Pod' and 'Secret'."),
            apiVersion: s.str('API version of the referent.'),
            name: s.str('Name of the referent.'),
            uid: s.str('UID of the referent.'),
          },
          {
            description:
              "BoundObjectRef is a reference to an object that the token will be bound to. The token will only be valid for as long as the bound object exists. NOTE: The API server's TokenReview endpoint will validate the BoundObjectRef, but other audiences may not. Keep ExpirationSeconds small if you want prompt revocation.",
            'x-go-type': 'v1.BoundObjectReference',
          },
        ),
      },
      { description: 'Spec holds information about the request being evaluated', required: ['audiences'], 'x-go-type': 'v1.TokenRequestSpec' },
    ),
    status: s.obj(
      {
        token: s.str('Token is the opaque bearer token.'),
        expirationTimestamp: s.time('ExpirationTimestamp is the time of expiration of the returned token.'),
      },
      {
        description: 'Status is filled in by the server and indicates whether the token can be authenticated.',
        required: ['token', 'expirationTimestamp'],
        'x-go-type': 'v1.TokenRequestStatus',
      },
    ),
  },
  { description: 'TokenRequest requests a token for a given service account.', required: ['spec'], 'x-go-type': 'v1.TokenRequest' },
);

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
export const tokenRequestKind: KindDefinition = {
  group: AUTHENTICATION_GROUP,
  version: 'v1',
  kind: 'TokenRequest',
  schema: tokenRequestSchema,
  strategy: tokenRequestStrategy,
};
