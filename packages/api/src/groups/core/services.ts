/** Services, Endpoints and Bindings of core/v1: types, defaults, strategy field rules and validation. */
export * from './service-types.js';
export * from './service-strategy.js';
export * from './defaults/service.js';
export * from './validation/net.js';
export * from './validation/service.js';
export * from './validation/endpoints.js';
export * from './validation/binding.js';
