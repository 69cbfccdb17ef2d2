/** The patch algorithms kube-apiserver applies to PATCH requests, as pure functions on JSON values. */
export { PatchError, MAX_JSON_PATCH_OPERATIONS, goFormat } from './errors.js';
export { applyMergePatch } from './merge-patch.js';
export { applyJsonPatch } from './json-patch.js';
export { applyStrategicMergePatch } from './strategic-merge-patch.js';
