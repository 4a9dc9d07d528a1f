import { SEND_REMINDER, type SendReminderPayload } from './reminder-plan.js';
import { REMINDER_SWEEP } from './reminder-sweep.js';

// The reminders lib's job kinds and their payloads (see JobPayloads in libs/queue).
declare module '@nudge/queue' {
  interface JobPayloads {
    send_reminder: SendReminderPayload;
    reminder_sweep: undefined;
  }
}

/** The kinds this lib enqueues: the worker checks at boot that each has a handler. */
export const REMINDER_JOB_KINDS = [SEND_REMINDER, REMINDER_SWEEP] as const;
