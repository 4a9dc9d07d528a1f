// Events out: the outbox, webhooks and their signed delivery, the pull feed.
export * from './event-types.js';
export * from './events.module.js';
export * from './outbox.js';
export * from './signature.js';
export * from './webhook-delivery.handler.js';
export * from './webhooks.service.js';
export * from './job-kinds.js';
