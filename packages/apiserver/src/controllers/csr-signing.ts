/**
 * kube-controller-manager's `csrsigning` (pkg/controller/certificates/signer, 1.24): for each
 * kubernetes.io signer given a CA (--cluster-signing-*-cert-file/-key-file), an approved request
 * that has not failed and has no certificate yet is checked against the signer's rules — a
 * request that breaks them gets the `Failed` condition (reason SignerValidationFailure, kube's
 * message) — and signed: `status.certificate` written through the `status` sub-resource, valid
 * for `spec.expirationSeconds` when given (at least 10 minutes) capped by --cluster-signing-duration.
 */
import { csrBytesText, isPlainObject, parseCertificateRequest, type StoredObject, type UserInfo } from '@plinth/api';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import type { CertificateAuthority } from './certificate-authority.js';
import { startCSRController } from './csr-controller.js';
import { SIGNER_RULES } from './csr-rules.js';

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:certificate-controller', groups: ['system:masters'] };

/** kube's lower bound of a requested duration: twice the 5-minute backdate. */
const MIN_DURATION_MS = 10 * 60_000;

export interface CSRSigningDeps {
  csrs: ResourceStore;
  /** The CA of each signer name that signs (kube's signer names; others are left alone). */
  signers: ReadonlyMap<string, CertificateAuthority>;
  /** --cluster-signing-duration (ms): the longest validity given. */
  durationMs: number;
  log: Logger;
}

type Json = Record<string, unknown>;
const specOf = (csr: StoredObject): Json => (isPlainObject(csr['spec']) ? csr['spec'] : {});
const conditionsOf = (csr: StoredObject): Json[] => {
  const c = isPlainObject(csr['status']) ? csr['status']['conditions'] : undefined;
  return Array.isArray(c) ? c.filter(isPlainObject) : [];
};
const hasTrue = (csr: StoredObject, type: string): boolean => conditionsOf(csr).some((c) => c['type'] === type && c['status'] === 'True');

/** kube's IsCertificateRequestApproved: Approved and not Denied. */
const isApproved = (csr: StoredObject): boolean => conditionsOf(csr).some((c) => c['type'] === 'Approved') && !conditionsOf(csr).some((c) => c['type'] === 'Denied');

/** kube's signer.duration: the requested duration within [10m, the signing duration]. */
export function certificateDuration(expirationSeconds: unknown, maxMs: number): number {
  if (typeof expirationSeconds !== 'number') return maxMs;
  const requested = expirationSeconds * 1000;
  return requested > maxMs ? maxMs : requested < MIN_DURATION_MS ? MIN_DURATION_MS : requested;
}

/** Starts the controller; returns a stop function. */
export function startCSRSigning(deps: CSRSigningDeps): () => void {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  const status = deps.csrs.def.subresources.find((s) => s.name === 'status')!.strategy!;
  return startCSRController({
    name: 'csrsigning',
    csrs: deps.csrs,
    scope,
    log: deps.log,
    handle: async (csr) => {
      if (!isApproved(csr) || hasTrue(csr, 'Failed')) return;
      const spec = specOf(csr);
      const signerName = String(spec['signerName'] ?? '');
      const ca = deps.signers.get(signerName);
      const rules = SIGNER_RULES[signerName];
      if (!ca || !rules) return;
      const name = csr.metadata.name!;
      let parsed;
      try {
        parsed = parseCertificateRequest(csrBytesText(spec['request']));
      } catch (e) {
        throw new Error(`unable to parse csr "${name}": ${(e as Error).message}`);
      }
      const usages = Array.isArray(spec['usages']) ? spec['usages'].map(String) : [];
      const problem = rules(parsed, usages);
      let certificate = '';
      if (!problem) {
        try {
          certificate = ca.sign(parsed, { usages, ttlMs: certificateDuration(spec['expirationSeconds'], deps.durationMs) });
        } catch (e) {
          throw new Error(`error auto signing csr: ${(e as Error).message}`);
        }
      }
      await deps.csrs.modify(
        scope,
        name,
        (next) => {
          // Changed meanwhile (signed by another signer, failed, denied): leave it.
          const st: Json = isPlainObject(next['status']) ? next['status'] : (next['status'] = {});
          if (csrBytesText(st['certificate']).length > 0 || hasTrue(next, 'Failed') || !isApproved(next)) return;
          if (problem) {
            const conditions = Array.isArray(st['conditions']) ? st['conditions'] : (st['conditions'] = []);
            conditions.push({ type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem, lastUpdateTime: `${new Date().toISOString().slice(0, 19)}Z` });
          } else {
            st['certificate'] = Buffer.from(certificate).toString('base64');
          }
        },
        {},
        status,
      );
      deps.log.v(2, problem ? 'csrsigning: request fails the signer\'s rules' : 'csrsigning: signed', { csr: name, signer: signerName, ...(problem ? { problem } : {}) });
    },
  });
}
