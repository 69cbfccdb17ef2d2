/**
 * apiextensions.k8s.io's library: CustomResourceDefinition validation and the compiled schemas of
 * custom resources. The customresourcedefinitions resource is groups/apiextensions/.
 */
export { type CompiledVersionSchema, compileVersionSchema } from './compile.js';
export { compareKubeAwareVersions } from './version.js';
export { KUBE_API_APPROVED_ANNOTATION, validateCRD, validateCRDSpec, validateCRDStatus, validateCRDUpdate, validateStoredVersions } from './crd-validation.js';
