export * from './category-preferences.js';
export * from './device.entity.js';
export * from './devices.service.js';
export * from './preferences.service.js';
export * from './user.entity.js';
export * from './user-events.js';
export * from './users.module.js';
export * from './users.service.js';
