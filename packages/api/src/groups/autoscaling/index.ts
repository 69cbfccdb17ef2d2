/**
 * autoscaling: v2 (preferred, storage), v1, v2beta1 (deprecated 1.22, removed 1.25) and v2beta2
 * (deprecated 1.23, removed 1.26), as kube 1.24's discovery lists them.
 */
import { defineGroup } from '../define.js';
import { hpaV1, hpaV2, hpaV2beta1, hpaV2beta2 } from './horizontalpodautoscalers.js';

export const autoscalingGroup = defineGroup({
  group: 'autoscaling',
  versions: [
    { version: 'v2' },
    { version: 'v1' },
    { version: 'v2beta1', deprecated: { in: '1.22', removedIn: '1.25' } },
    { version: 'v2beta2', deprecated: { in: '1.23', removedIn: '1.26' } },
  ],
  resources: [hpaV2, hpaV1, hpaV2beta1, hpaV2beta2],
});

export { hpaV1, hpaV2, hpaV2beta1, hpaV2beta2 };
export { formatHpaMetrics } from './horizontalpodautoscalers.js';
export * from './conversion.js';
