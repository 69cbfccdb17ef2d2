/** apiextensions.k8s.io: v1's CustomResourceDefinitions. */
import { defineGroup } from '../define.js';
import { customresourcedefinitions } from './customresourcedefinitions.js';

export const apiextensionsGroup = defineGroup({
  group: 'apiextensions.k8s.io',
  versions: [{ version: 'v1' }],
  resources: [customresourcedefinitions],
});

export {
  APIEXTENSIONS_GROUP,
  CUSTOM_RESOURCE_CLEANUP_FINALIZER,
  customresourcedefinitions,
  customResourceDefinitionStrategy,
  customResourceDefinitionStatusStrategy,
  defaultCRD,
} from './customresourcedefinitions.js';
