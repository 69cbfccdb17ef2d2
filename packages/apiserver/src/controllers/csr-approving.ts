/**
 * kube-controller-manager's `csrapproving` (pkg/controller/certificates/approver, 1.24): a pending
 * kubelet client request (signer kube-apiserver-client-kubelet, kube's kubelet client rules) is
 * approved when its requester may `create` `certificatesigningrequests/selfnodeclient` (renewing
 * its own node's certificate: the requester is the subject's CN) or
 * `certificatesigningrequests/nodeclient` (a new node, e.g. with a bootstrap token) — a
 * SubjectAccessReview of the requester recorded in the request, asked of the authorizer.
 */
import { csrBytesText, isPlainObject, parseCertificateRequest, type StoredObject, type UserInfo } from '@plinth/api';
import type { Authorizer } from '@plinth/auth';
import type { ResourceStore } from '../registry/store.js';
import type { Logger } from '../log.js';
import { startCSRController } from './csr-controller.js';
import { KUBE_APISERVER_CLIENT_KUBELET_SIGNER, kubeletClientProblem } from './csr-rules.js';

const CONTROLLER_USER: UserInfo = { name: 'system:serviceaccount:kube-system:certificate-controller', groups: ['system:masters'] };

/** kube's recognizers, in its order: the permission asked and the approval's message. */
const RECOGNIZERS = [
  { subresource: 'selfnodeclient', self: true, message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
  { subresource: 'nodeclient', self: false, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
] as const;

export interface CSRApprovingDeps {
  csrs: ResourceStore;
  authorizer: () => Authorizer;
  log: Logger;
}

type Json = Record<string, unknown>;
const specOf = (csr: StoredObject): Json => (isPlainObject(csr['spec']) ? csr['spec'] : {});
const stringsOf = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function hasApprovalDecision(csr: StoredObject): boolean {
  const conditions = isPlainObject(csr['status']) ? csr['status']['conditions'] : undefined;
  return Array.isArray(conditions) && conditions.some((c) => isPlainObject(c) && (c['type'] === 'Approved' || c['type'] === 'Denied'));
}

/** The requester recorded in the request, as a SubjectAccessReview's spec names it. */
function requesterOf(csr: StoredObject): UserInfo {
  const spec = specOf(csr);
  const extra = isPlainObject(spec['extra']) ? Object.fromEntries(Object.entries(spec['extra']).map(([k, v]) => [k, stringsOf(v)])) : {};
  return { name: String(spec['username'] ?? ''), ...(spec['uid'] ? { uid: String(spec['uid']) } : {}), groups: stringsOf(spec['groups']), extra };
}

/** Starts the controller; returns a stop function. */
export function startCSRApproving(deps: CSRApprovingDeps): () => void {
  const scope = { user: CONTROLLER_USER, namespace: '' };
  const approval = deps.csrs.def.subresources.find((s) => s.name === 'approval')!.strategy!;
  return startCSRController({
    name: 'csrapproving',
    csrs: deps.csrs,
    scope,
    log: deps.log,
    // kube's default controller rate limiter tops out at 1000 s.
    maxBackoffMs: 1_000_000,
    handle: async (csr) => {
      if (hasApprovalDecision(csr)) return;
      const spec = specOf(csr);
      const parsed = parseCertificateRequest(csrBytesText(spec['request']));
      if (spec['signerName'] !== KUBE_APISERVER_CLIENT_KUBELET_SIGNER || kubeletClientProblem(parsed, stringsOf(spec['usages'])) !== '') return;
      const user = requesterOf(csr);
      const tried: string[] = [];
      for (const r of RECOGNIZERS) {
        if (r.self && user.name !== parsed.commonName) continue;
        tried.push(r.subresource);
        const decision = await deps.authorizer().authorize({
          user,
          verb: 'create',
          isResourceRequest: true,
          path: '',
          apiGroup: 'certificates.k8s.io',
          apiVersion: '*',
          namespace: '',
          resource: 'certificatesigningrequests',
          subresource: r.subresource,
          name: '',
        });
        if (decision.decision !== 'allow') continue;
        const name = csr.metadata.name!;
        await deps.csrs.modify(
          scope,
          name,
          (next) => {
            // Decided meanwhile (a user's approval or denial): leave it.
            if (hasApprovalDecision(next)) return;
            const status: Json = isPlainObject(next['status']) ? next['status'] : (next['status'] = {});
            const conditions = Array.isArray(status['conditions']) ? status['conditions'] : (status['conditions'] = []);
            conditions.push({ type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message });
          },
          {},
          approval,
        );
        deps.log.v(2, 'csrapproving: approved', { csr: name, as: r.subresource });
        return;
      }
      // kube's IgnorableError: retried (with backoff) until the requester is allowed or someone decides.
      if (tried.length > 0) throw new Error(`recognized csr "${csr.metadata.name}" as [${tried.join(' ')}] but subject access review was not approved`);
    },
  });
}
