export * from './rules.js';
export * from './authorizer.js';
