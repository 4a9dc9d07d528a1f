import { WEBHOOK_DELIVERY, type WebhookDeliveryPayload } from './outbox.js';
import { EVENTS_PRUNE } from './webhooks.service.js';

// The events lib's job kinds and their payloads (see JobPayloads in libs/queue).
declare module '@nudge/queue' {
  interface JobPayloads {
    webhook_delivery: WebhookDeliveryPayload;
    events_prune: undefined;
  }
}

/** The kinds this lib enqueues: the worker checks at boot that each has a handler. */
export const EVENT_JOB_KINDS = [WEBHOOK_DELIVERY, EVENTS_PRUNE] as const;
