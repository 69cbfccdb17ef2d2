/**
 * kube's WithImpersonation (staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go):
 * `Impersonate-User`, `Impersonate-Group` (repeatable), `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` headers make the request act as someone else, once the authenticated
 * user is allowed the `impersonate` verb on each of them. Runs after authentication and before
 * max-in-flight and authorization, which then see the impersonated user.
 */
import type { IncomingMessage } from 'node:http';
import { badRequest, forbidden, isDNS1123Label, isDNS1123Subdomain, type UserInfo } from '@plinth/api';
import {
  ALL_SERVICE_ACCOUNTS_GROUP,
  ANONYMOUS_USER,
  SERVICE_ACCOUNT_GROUP_PREFIX,
  UNAUTHENTICATED_GROUP,
  forbiddenMessage,
  serviceAccountUsername,
  splitServiceAccountUsername,
  type Attributes,
  type Authorizer,
  type Decision,
} from '@plinth/auth';
import { contextOf, type Handler } from '../context.js';

export const IMPERSONATE_USER_HEADER = 'impersonate-user';
export const IMPERSONATE_GROUP_HEADER = 'impersonate-group';
export const IMPERSONATE_UID_HEADER = 'impersonate-uid';
export const IMPERSONATE_EXTRA_PREFIX = 'impersonate-extra-';

const AUTHENTICATED_GROUP = 'system:authenticated';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** One thing asked to be impersonated (kube's ObjectReference of the request). */
export interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  namespace: string;
  name: string;
  /** authentication.k8s.io/v1 for UserExtra and UID, as kube sets it. */
  apiVersion: string;
  /** The extra key of a UserExtra (kube keeps it in FieldPath). */
  fieldPath: string;
}

/** Go's `%v` of a v1.ObjectReference, as kube's error message prints it. */
function goReference(r: ImpersonationRequest): string {
  return `{${r.kind} ${r.namespace} ${r.name}  ${r.apiVersion}  ${r.fieldPath}}`;
}

/** The raw headers of a name (case-insensitive), each occurrence a value, as Go's http.Header keeps them. */
function headerValues(rawHeaders: readonly string[], test: (lowerName: string) => boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (test(name)) out.push([name, rawHeaders[i + 1]!]);
  }
  return out;
}

/** kube's unescapeExtraKey: %-decoded, or the key as sent when it does not decode. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** kube's serviceaccount.SplitUsername: a well-formed service account name, or undefined. */
function splitServiceAccount(username: string): [string, string] | undefined {
  const parts = splitServiceAccountUsername(username);
  if (!parts) return undefined;
  const [namespace, name] = parts;
  return isDNS1123Label(namespace).length === 0 && isDNS1123Subdomain(name).length === 0 ? parts : undefined;
}

/**
 * kube's buildImpersonationRequests: what the headers ask to impersonate, in kube's order (user,
 * groups, extras, uid). Groups, extras or a uid without a user are a 400.
 */
export function parseImpersonationRequests(rawHeaders: readonly string[]): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const ref = (kind: ImpersonationRequest['kind'], name: string, more: Partial<ImpersonationRequest> = {}): ImpersonationRequest => ({ kind, namespace: '', name, apiVersion: '', fieldPath: '', ...more });
  // Go's Header.Get: the first value.
  const user = headerValues(rawHeaders, (n) => n === IMPERSONATE_USER_HEADER)[0]?.[1] ?? '';
  if (user) {
    const sa = splitServiceAccount(user);
    out.push(sa ? ref('ServiceAccount', sa[1], { namespace: sa[0] }) : ref('User', user));
  }
  const groups = headerValues(rawHeaders, (n) => n === IMPERSONATE_GROUP_HEADER);
  for (const [, g] of groups) out.push(ref('Group', g));
  const extras = headerValues(rawHeaders, (n) => n.startsWith(IMPERSONATE_EXTRA_PREFIX));
  for (const [name, value] of extras) {
    out.push(ref('UserExtra', value, { apiVersion: `${AUTHENTICATION_GROUP}/v1`, fieldPath: unescapeExtraKey(name.slice(IMPERSONATE_EXTRA_PREFIX.length)) }));
  }
  const uid = headerValues(rawHeaders, (n) => n === IMPERSONATE_UID_HEADER)[0]?.[1] ?? '';
  if (uid) out.push(ref('UID', uid, { apiVersion: `${AUTHENTICATION_GROUP}/v1` }));
  if ((groups.length > 0 || extras.length > 0 || uid) && !user) throw badRequest(`requested [${out.map(goReference).join(' ')}] without impersonating a user`);
  return out;
}

/** The authorizer's question for one impersonation request: may `requestor` impersonate it? */
export function impersonationAttributes(requestor: UserInfo, r: ImpersonationRequest): Attributes {
  const base = { user: requestor, verb: 'impersonate', isResourceRequest: true, path: '', namespace: r.namespace, name: r.name, subresource: '' };
  switch (r.kind) {
    case 'ServiceAccount':
      return { ...base, apiGroup: '', apiVersion: '', resource: 'serviceaccounts' };
    case 'User':
      return { ...base, apiGroup: '', apiVersion: '', resource: 'users' };
    case 'Group':
      return { ...base, apiGroup: '', apiVersion: '', resource: 'groups' };
    case 'UserExtra':
      return { ...base, apiGroup: AUTHENTICATION_GROUP, apiVersion: 'v1', resource: 'userextras', subresource: r.fieldPath };
    case 'UID':
      return { ...base, apiGroup: AUTHENTICATION_GROUP, apiVersion: 'v1', resource: 'uids' };
  }
}

/**
 * The user the requests make, as kube builds it: a service account's groups when no group is
 * named; `system:authenticated` added for anyone but `system:anonymous` unless either
 * authenticated group is named; `system:unauthenticated` added for `system:anonymous`.
 */
export function impersonatedUser(requests: readonly ImpersonationRequest[]): UserInfo {
  const groupsSpecified = requests.some((r) => r.kind === 'Group');
  let name = '';
  let uid = '';
  let groups: string[] = [];
  // Extra keys come from header names (`Impersonate-Extra-__proto__` included): gathered in a Map.
  const extra = new Map<string, string[]>();
  for (const r of requests) {
    switch (r.kind) {
      case 'ServiceAccount':
        name = serviceAccountUsername(r.namespace, r.name);
        if (!groupsSpecified) groups = [ALL_SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNT_GROUP_PREFIX}${r.namespace}`];
        break;
      case 'User':
        name = r.name;
        break;
      case 'Group':
        groups.push(r.name);
        break;
      case 'UserExtra':
        if (extra.has(r.fieldPath)) extra.get(r.fieldPath)!.push(r.name);
        else extra.set(r.fieldPath, [r.name]);
        break;
      case 'UID':
        uid = r.name;
        break;
    }
  }
  if (name !== ANONYMOUS_USER) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) {
    groups.push(UNAUTHENTICATED_GROUP);
  }
  const user: UserInfo = { name, groups };
  if (uid) user.uid = uid;
  if (extra.size > 0) user.extra = Object.fromEntries(extra);
  return user;
}

function stripHeaders(req: IncomingMessage): void {
  for (const h of Object.keys(req.headers)) {
    if (h === IMPERSONATE_USER_HEADER || h === IMPERSONATE_GROUP_HEADER || h === IMPERSONATE_UID_HEADER || h.startsWith(IMPERSONATE_EXTRA_PREFIX)) delete req.headers[h];
  }
}

/**
 * kube's WithImpersonation: without impersonation headers the request passes untouched; otherwise
 * each thing asked for is authorized for the authenticated user (403 at the first refusal), the
 * request continues as the impersonated user, and the impersonation headers are removed.
 */
export function withImpersonation(next: Handler, authorizer: Authorizer): Handler {
  return async (req, res) => {
    const requests = parseImpersonationRequests(req.rawHeaders);
    if (requests.length === 0) return next(req, res);
    const ctx = contextOf(req);
    const requestor = ctx.user!;
    for (const r of requests) {
      const attrs = impersonationAttributes(requestor, r);
      // kube: an authorizer error is refused like any decision but allow (403, never 500).
      let decision: Decision;
      try {
        decision = await authorizer.authorize(attrs);
      } catch {
        decision = { decision: 'no-opinion' };
      }
      if (decision.decision !== 'allow') {
        const msg = forbiddenMessage(attrs);
        throw forbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, decision.reason ? `${msg}: ${decision.reason}` : msg);
      }
    }
    ctx.user = impersonatedUser(requests);
    stripHeaders(req);
    await next(req, res);
  };
}
