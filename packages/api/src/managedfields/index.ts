/** Server-side apply and managedFields tracking (kube-apiserver 1.24 / structured-merge-diff v4). */
export {
  FieldSet,
  FieldsV1Error,
  type KeyField,
  type Path,
  type PathElement,
  fieldPE,
  indexPE,
  keyPE,
  pathOf,
  pathString,
  valuePE,
} from './fieldset.js';
export { TypedError, TypedSchema, compareObjects, fieldSetOf, mergeObjects, removeItems, toFieldSet } from './typed.js';
export { ConflictsError, Updater, conflictError, printManager, type Conflict, type ManagerSets, type VersionedSet } from './apply.js';
export {
  DEFAULT_MAX_UPDATE_MANAGERS,
  FIELD_MANAGER_MAX_LENGTH,
  FieldManager,
  STRIP_SET,
  decodeManagedFields,
  defaultManagerFromUserAgent,
  encodeManagedFields,
  managerIdentifier,
  managerOrUserAgent,
  validateManager,
  type ApplyOptions,
  type FieldManagerConfig,
  type KubeJSON,
  type Managed,
  type UpdateOptions,
} from './managed-fields.js';
