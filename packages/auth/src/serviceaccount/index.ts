export * from './keys.js';
export * from './claims.js';
export * from './openid.js';
export * from './issuer.js';
export * from './authenticator.js';
