export * from './interfaces.js';
export * from './namespace-lifecycle.js';
