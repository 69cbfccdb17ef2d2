/** apiextensions.k8s.io: CustomResourceDefinitions and the compiled schemas of custom resources. */
export { type CompiledVersionSchema, compileVersionSchema } from './compile.js';
export { compareKubeAwareVersions } from './version.js';
