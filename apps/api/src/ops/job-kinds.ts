import { EVENT_JOB_KINDS } from '@nudge/events';
import { PUSH_JOB_KINDS } from '@nudge/push';
import { PRUNE_KIND, REAP_KIND } from '@nudge/queue';
import { REMINDER_JOB_KINDS } from '@nudge/reminders';

/**
 * Every kind Nudge's workers handle: the libs' kinds and the queue's own
 * housekeeping. An operator can pause these; a name outside them (a typo at
 * 3 AM) is a 404 rather than a pause of nothing that reads as done.
 * test/api/ops.e2e-spec.ts checks it against the worker's handlers.
 */
export const NUDGE_JOB_KINDS: ReadonlySet<string> = new Set([
  ...PUSH_JOB_KINDS,
  ...REMINDER_JOB_KINDS,
  ...EVENT_JOB_KINDS,
  REAP_KIND,
  PRUNE_KIND,
]);
