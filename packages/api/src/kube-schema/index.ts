/** The pinned schema source and what plinth derives from it at start-up. */
export type * from './format.js';
export { KUBE_SCHEMA_VERSION, META_V1_PREFIX, OBJECT_META, definitionFacts, definitionNameOfKind, kubeSchema } from './source.js';
export { builtinDefinitions, goZeroStruct, kindSchema, requireKindDefinition } from './definitions.js';
