/** certificates.k8s.io: v1 certificatesigningrequests (v1beta1 was removed in 1.22). */
import { defineGroup } from '../define.js';
import { certificatesigningrequests } from './certificatesigningrequests.js';

export const certificatesGroup = defineGroup({
  group: 'certificates.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [certificatesigningrequests],
});

export { CERTIFICATES_GROUP, certificatesigningrequests, csrCondition, setRequester } from './certificatesigningrequests.js';
export { parseCertificateRequest, type ParsedCSR } from './csr-parse.js';
export { bytesText as csrBytesText } from './validation.js';
