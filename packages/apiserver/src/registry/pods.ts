/**
 * What serves pods besides their store: the Binding and Eviction storages (pod-storages.ts), the
 * connecters (pod-connect.ts), and the server-wide settings they read from the flags
 * (--allow-privileged, kube's capabilities, and the --kubelet-* connection).
 */
import { setCapabilities } from '@plinth/api';
import type { ServerOptions } from '../flags.js';
import { KUBELET_PORT, type KubeletClientConfig } from './kubelet-client.js';

export { createPodStorages } from './pod-storages.js';
export { createPodConnecters } from './pod-connect.js';

/** Sets the process's capabilities from --allow-privileged (kube's capabilities.Setup), which pod validation reads. */
export function setupCapabilities(flags: ServerOptions): void {
  setCapabilities({ allowPrivileged: flags.allowPrivileged });
}

/** The kubelet client configuration of the --kubelet-* flags. */
export function kubeletClientConfigOf(flags: ServerOptions): KubeletClientConfig {
  return {
    timeoutMs: flags.kubeletTimeout,
    preferredAddressTypes: flags.kubeletPreferredAddressTypes,
    clientCertificate: flags.kubeletClientCertificate,
    clientKey: flags.kubeletClientKey,
    certificateAuthority: flags.kubeletCertificateAuthority,
    defaultPort: KUBELET_PORT,
  };
}
