export * from './interface.js';
export * from './errors.js';
export * from './keys.js';
export * from './continue.js';
export { EtcdStore, type EtcdStoreOptions, encodeObject, decodeObject, parseResourceVersion, InvalidResourceVersionError } from './etcd-store.js';
export { startEmbeddedEtcd, freePort, type EmbeddedEtcd, type EmbeddedEtcdOptions } from './embedded-etcd.js';
