export * from './data-source.js';
export * from './database.module.js';
export * from './embedded-postgres.js';
export * from './migrate.js';
export * from './prepare-database.js';
export * from './resolve-database.js';
export * from './with-transaction.js';
