/** The storage.k8s.io group name (shared by its modules and the admission plugins). */
export const STORAGE_GROUP = 'storage.k8s.io';
