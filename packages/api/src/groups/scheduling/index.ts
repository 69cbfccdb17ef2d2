/** scheduling.k8s.io: v1's PriorityClasses (v1beta1 and v1alpha1 are off in kube 1.24). */
import { defineGroup } from '../define.js';
import { priorityclasses } from './priorityclasses.js';

export const schedulingGroup = defineGroup({
  group: 'scheduling.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [priorityclasses],
});

export {
  HIGHEST_USER_DEFINABLE_PRIORITY,
  SCHEDULING_GROUP,
  SYSTEM_CRITICAL_PRIORITY,
  SYSTEM_PRIORITY_CLASSES,
  isSystemPriorityClass,
  priorityclasses,
  validatePreemptionPolicy,
  validatePriorityClass,
  validatePriorityClassUpdate,
} from './priorityclasses.js';
