import { EXPO_RECEIPTS } from './expo-receipts.service.js';
import { SEND_NOTIFICATION, type SendNotificationPayload } from './notifications.service.js';
import { TOKEN_CLEANUP, type TokenCleanupPayload } from './token-cleanup.service.js';

// The push lib's job kinds and their payloads (see JobPayloads in libs/queue).
declare module '@nudge/queue' {
  interface JobPayloads {
    send_notification: SendNotificationPayload;
    token_cleanup: TokenCleanupPayload;
    expo_receipts: undefined;
  }
}

/** The kinds this lib enqueues: the worker checks at boot that each has a handler. */
export const PUSH_JOB_KINDS = [SEND_NOTIFICATION, TOKEN_CLEANUP, EXPO_RECEIPTS] as const;
