/**
 * kube 1.24's certificate admission plugins (plugin/pkg/admission/certificates), all validating:
 * - CertificateApproval (UPDATE of certificatesigningrequests/approval): the user needs `approve`
 *   on certificates.k8s.io `signers` named for the request's signer (or `<domain>/*`).
 * - CertificateSigning (UPDATE of /status that changes the certificate or the conditions): `sign`
 *   on the signer, likewise.
 * - CertificateSubjectRestriction (CREATE): no kubernetes.io/kube-apiserver-client request with
 *   organization system:masters.
 */
import { CERTIFICATES_GROUP, csrBytesText, forbidden, groupResourceOf, isPlainObject, parseCertificateRequest, type StoredObject, type UserInfo } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

/** Whether the user may `verb` the named signers (kube's authorizer.Attributes for `signers`). */
export type SignerAuthorizer = (a: { user: UserInfo; verb: string; name: string; apiGroup: string; apiVersion: string; resource: string }) => Promise<boolean>;

const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';

const isCsr = (a: AdmissionAttributes, subresource: string): boolean =>
  a.resource.group === CERTIFICATES_GROUP && a.resource.plural === 'certificatesigningrequests' && a.subresource === subresource;
const spec = (o: StoredObject | undefined): Record<string, unknown> => (o && isPlainObject(o['spec']) ? o['spec'] : {});
const status = (o: StoredObject | undefined): Record<string, unknown> => (o && isPlainObject(o['status']) ? o['status'] : {});
const signerOf = (o: StoredObject | undefined): string => String(spec(o)['signerName'] ?? '');

/** kube's IsAuthorizedForSignerName: the signer by name, then its domain's wildcard. */
async function mayUseSigner(authorize: SignerAuthorizer, user: UserInfo, verb: string, signer: string): Promise<boolean> {
  const ask = (name: string) => authorize({ user, verb, name, apiGroup: CERTIFICATES_GROUP, apiVersion: '*', resource: 'signers' }).catch(() => false);
  if (await ask(signer)) return true;
  return ask(`${signer.split('/')[0]}/*`);
}

const refuse = (a: AdmissionAttributes, why: string) => forbidden(groupResourceOf(a.resource), a.name, why);

export function createCertificateApproval(authorize: SignerAuthorizer): AdmissionPlugin {
  return {
    name: 'CertificateApproval',
    handles: (op) => op === 'UPDATE',
    async validate(a) {
      if (!isCsr(a, 'approval')) return;
      const signer = signerOf(a.oldObject);
      if (!(await mayUseSigner(authorize, a.user, 'approve', signer))) throw refuse(a, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
    },
  };
}

export function createCertificateSigning(authorize: SignerAuthorizer): AdmissionPlugin {
  return {
    name: 'CertificateSigning',
    handles: (op) => op === 'UPDATE',
    async validate(a) {
      if (!isCsr(a, 'status')) return;
      const before = status(a.oldObject);
      const after = status(a.object);
      if ((before['certificate'] ?? '') === (after['certificate'] ?? '') && JSON.stringify(before['conditions'] ?? []) === JSON.stringify(after['conditions'] ?? [])) return;
      const signer = signerOf(a.oldObject);
      if (!(await mayUseSigner(authorize, a.user, 'sign', signer))) throw refuse(a, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
    },
  };
}

export function createCertificateSubjectRestriction(): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    handles: (op) => op === 'CREATE',
    validate(a) {
      if (!isCsr(a, '') || signerOf(a.object) !== KUBE_APISERVER_CLIENT) return;
      let organizations: string[];
      try {
        organizations = parseCertificateRequest(csrBytesText(spec(a.object)['request'])).organizations;
      } catch (e) {
        throw refuse(a, `failed to parse CSR: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (organizations.includes('system:masters')) throw refuse(a, `use of ${KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
    },
  };
}
