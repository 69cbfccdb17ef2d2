/**
 * Which kubernetes.io signers sign, from kube-controller-manager's flags: a signer's own
 * --cluster-signing-<signer>-cert-file/-key-file, else the --cluster-signing-cert-file/-key-file
 * pair (kube's getXxxSignerFiles); none given: no signer runs. The CAs are read once at start-up,
 * and a file that cannot be used fails start-up naming its flag.
 */
import type { ServerOptions } from '../flags.js';
import { loadCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { KUBELET_SERVING_SIGNER, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, LEGACY_UNKNOWN_SIGNER } from './csr-rules.js';

/** The CA of each signer that signs (empty: the signing controller is off). */
export function loadSigners(o: ServerOptions): Map<string, CertificateAuthority> {
  const specific: Array<[string, string, string, string]> = [
    [KUBELET_SERVING_SIGNER, 'cluster-signing-kubelet-serving', o.clusterSigningKubeletServingCertFile, o.clusterSigningKubeletServingKeyFile],
    [KUBE_APISERVER_CLIENT_KUBELET_SIGNER, 'cluster-signing-kubelet-client', o.clusterSigningKubeletClientCertFile, o.clusterSigningKubeletClientKeyFile],
    [KUBE_APISERVER_CLIENT_SIGNER, 'cluster-signing-kube-apiserver-client', o.clusterSigningKubeApiserverClientCertFile, o.clusterSigningKubeApiserverClientKeyFile],
    [LEGACY_UNKNOWN_SIGNER, 'cluster-signing-legacy-unknown', o.clusterSigningLegacyUnknownCertFile, o.clusterSigningLegacyUnknownKeyFile],
  ];
  const out = new Map<string, CertificateAuthority>();
  // One CA read once when the default pair serves every signer.
  let shared: CertificateAuthority | undefined;
  for (const [signer, flag, cert, key] of specific) {
    try {
      if (cert) out.set(signer, loadCertificateAuthority(cert, key));
      else if (o.clusterSigningCertFile) out.set(signer, (shared ??= loadCertificateAuthority(o.clusterSigningCertFile, o.clusterSigningKeyFile)));
    } catch (e) {
      throw new Error(`--${cert ? flag : 'cluster-signing'}-{cert,key}-file: ${(e as Error).message}`);
    }
  }
  return out;
}
