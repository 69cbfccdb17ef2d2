export * from './interfaces.js';
export * from './namespace-lifecycle.js';
export * from './namespace-exists.js';
export * from './always.js';
export * from './plugins.js';
export * from './webhook/index.js';
export * from './storage.js';
export * from './certificates.js';
