/** apiextensions.k8s.io: CustomResourceDefinitions and the compiled schemas of custom resources. */
export { type CompiledVersionSchema, compileVersionSchema } from './compile.js';
export { compareKubeAwareVersions } from './version.js';
export {
  APIEXTENSIONS_GROUP,
  customresourcedefinitions,
  customResourceDefinitionStrategy,
  customResourceDefinitionStatusStrategy,
  defaultCRD,
} from './crd.js';
export { apiextensionsDefinitions, customResourceDefinitionSchema } from './crd-schema.js';
export { KUBE_API_APPROVED_ANNOTATION, validateCRD, validateCRDSpec, validateCRDStatus, validateCRDUpdate, validateStoredVersions } from './crd-validation.js';
