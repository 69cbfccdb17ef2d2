export * from './authenticator.js';
export * from './token-file.js';
