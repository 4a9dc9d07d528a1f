export * from './clock.js';
export * from './config.module.js';
export * from './config.schema.js';
export * from './load-config.js';
export * from './logger.js';
