/**
 * policy: v1 (poddisruptionbudgets) and v1beta1 (poddisruptionbudgets, podsecuritypolicies;
 * deprecated 1.21, removed 1.25), as kube 1.24's discovery lists them.
 */
import { defineGroup } from '../define.js';
import { pdbV1, pdbV1beta1 } from './poddisruptionbudgets.js';
import { podsecuritypolicies } from './podsecuritypolicies.js';

export const policyGroup = defineGroup({
  group: 'policy',
  versions: [{ version: 'v1' }, { version: 'v1beta1', deprecated: { in: '1.21', removedIn: '1.25' } }],
  resources: [pdbV1, pdbV1beta1, podsecuritypolicies],
});

export { pdbV1, pdbV1beta1, podsecuritypolicies };
export { PDB_V1BETA1_LABEL, pdbV1ToV1beta1, pdbV1beta1ToV1 } from './poddisruptionbudgets.js';
