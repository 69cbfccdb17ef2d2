/**
 * What each kubernetes.io signer accepts (kube 1.24's pkg/apis/certificates helpers and the
 * signer's per-signer checks): the kubelet client and serving rules, the kube-apiserver-client
 * usages. Each returns '' when the request fits, else kube's error text (what the signer puts in
 * the `Failed` condition's message).
 */
import type { ParsedCSR } from '@plinth/api';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

const NODE_PREFIX = 'system:node:';

/** Go's `%v` of a sorted string set. */
const goList = (items: readonly string[]): string => `[${[...items].sort().join(' ')}]`;

function sameSet(usages: readonly string[], wanted: readonly string[]): boolean {
  const set = new Set(usages);
  return set.size === wanted.length && wanted.every((u) => set.has(u));
}

const onlySystemNodes = (csr: ParsedCSR): boolean => csr.organizations.length === 1 && csr.organizations[0] === 'system:nodes';

const CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const CLIENT_USAGES_NO_RSA = ['digital signature', 'client auth'];
const SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

/** kube's ValidateKubeletClientCSR. */
export function kubeletClientProblem(csr: ParsedCSR, usages: readonly string[]): string {
  if (!onlySystemNodes(csr)) return 'subject organization is not system:nodes';
  if (csr.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (csr.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!csr.commonName.startsWith(NODE_PREFIX)) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, CLIENT_USAGES) && !sameSet(usages, CLIENT_USAGES_NO_RSA)) return `usages did not match ${goList(CLIENT_USAGES)}`;
  return '';
}

/** kube's ValidateKubeletServingCSR. */
export function kubeletServingProblem(csr: ParsedCSR, usages: readonly string[]): string {
  if (!onlySystemNodes(csr)) return 'subject organization is not system:nodes';
  if (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, SERVING_USAGES) && !sameSet(usages, SERVING_USAGES_NO_RSA)) return `usages did not match ${goList(SERVING_USAGES)}`;
  if (!csr.commonName.startsWith(NODE_PREFIX)) return 'subject common name does not begin with system:node:';
  return '';
}

/** kube's validAPIServerClientUsages (the kube-apiserver-client signer). */
export function apiserverClientProblem(_csr: ParsedCSR, usages: readonly string[]): string {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? '' : 'missing required usage for client certificate: client auth';
}

/** The check of each signer kube's csrsigning knows (legacy-unknown accepts everything). */
export const SIGNER_RULES: Readonly<Record<string, (csr: ParsedCSR, usages: readonly string[]) => string>> = {
  [KUBELET_SERVING_SIGNER]: kubeletServingProblem,
  [KUBE_APISERVER_CLIENT_KUBELET_SIGNER]: kubeletClientProblem,
  [KUBE_APISERVER_CLIENT_SIGNER]: apiserverClientProblem,
  [LEGACY_UNKNOWN_SIGNER]: () => '',
};
