/**
 * CertificateSigningRequests record who asked: kube's csrStrategy.PrepareForCreate sets
 * spec.username/uid/groups/extra from the request's user, whatever the body says. plinth's
 * strategies do not see the user, so this write guard (which runs before the strategy, with the
 * request's scope) does it on create; updates keep the old spec (the strategy).
 */
import { CERTIFICATES_GROUP, setRequester, type ResourceDefinition } from '@plinth/api';
import type { WriteGuard } from './store.js';

/** Whether `def` is certificates.k8s.io certificatesigningrequests. */
export function isCertificateSigningRequests(def: ResourceDefinition): boolean {
  return def.group === CERTIFICATES_GROUP && def.plural === 'certificatesigningrequests';
}

/** The write guard that sets a new request's requester. */
export const csrRequesterGuard: WriteGuard = async ({ operation, scope, object }) => {
  if (operation === 'CREATE') setRequester(object, scope.user);
};
