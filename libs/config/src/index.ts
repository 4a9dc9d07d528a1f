export * from './clock.js';
export * from './config.module.js';
export * from './config.schema.js';
export * from './domain-error.js';
export * from './load-config.js';
export * from './logger.js';
export * from './process-lifecycle.js';
export * from './tracing.js';
