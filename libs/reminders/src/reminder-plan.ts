import {
  isInQuietHours,
  jitterFor,
  nextOccurrence,
  type Occurrence,
  type QuietHours,
  quietHoursEnd,
  type Schedule,
} from '@nudge/scheduling';

// Pure decisions about one reminder's chain of occurrences: which occurrence
// comes next, when its job runs, and whether a job that runs now is stale.

export const SEND_REMINDER = 'send_reminder';
/** An occurrence delivered later than this is skipped as stale (SPEC §5). */
export const STALE_AFTER_MS = 6 * 60 * 60 * 1000;

export interface ReminderFacts {
  id: string;
  version: number;
  localTime: string;
  timeZone: string | null;
  recurrence: string;
  startDate: string;
}

export interface UserFacts {
  timeZone: string;
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
}

export interface SendReminderPayload {
  reminderId: string;
  userId: string;
  version: number;
  localDate: string;
  /** The nominal UTC instant of the occurrence, before jitter and quiet hours. */
  at: string;
}

export interface PlannedJob {
  occurrence: Occurrence;
  runAt: Date;
  idempotencyKey: string;
  payload: SendReminderPayload;
}

export function scheduleOf(reminder: ReminderFacts, user: UserFacts): Schedule {
  return {
    localTime: reminder.localTime,
    timeZone: reminder.timeZone ?? user.timeZone,
    recurrence: reminder.recurrence,
    startDate: reminder.startDate,
  };
}

export function quietHoursOf(user: UserFacts): QuietHours | null {
  return user.quietHoursStart && user.quietHoursEnd ? { start: user.quietHoursStart, end: user.quietHoursEnd } : null;
}

export function occurrenceKey(reminderId: string, version: number, localDate: string): string {
  return `reminder:${reminderId}:v${version}:${localDate}`;
}

/** True when an occurrence due at `at` should no longer be delivered at `now`. */
export function isStale(schedule: Schedule, at: Date, now: Date): boolean {
  if (now.getTime() - at.getTime() > STALE_AFTER_MS) return true;
  const successor = nextOccurrence(schedule, at);
  return successor !== null && successor.at.getTime() <= now.getTime();
}

/**
 * The job for the first occurrence after `after` that is not already stale at
 * `now` (after an outage the chain jumps over what it missed instead of
 * walking through it), with its deterministic jitter and, when it would land
 * in the user's quiet hours, moved to their end.
 */
export function planNextJob(
  reminder: ReminderFacts & { userId: string },
  user: UserFacts,
  after: Date,
  now: Date,
  jitterSeconds: number,
): PlannedJob | null {
  const schedule = scheduleOf(reminder, user);
  let occurrence = nextOccurrence(schedule, after);
  while (occurrence && isStale(schedule, occurrence.at, now)) occurrence = nextOccurrence(schedule, occurrence.at);
  if (!occurrence) return null;

  let runAt = new Date(occurrence.at.getTime() + jitterFor(reminder.id, occurrence.localDate, jitterSeconds) * 1000);
  const quiet = quietHoursOf(user);
  if (quiet && isInQuietHours(quiet, user.timeZone, runAt)) runAt = quietHoursEnd(quiet, user.timeZone, runAt);
  return {
    occurrence,
    runAt,
    idempotencyKey: occurrenceKey(reminder.id, reminder.version, occurrence.localDate),
    payload: {
      reminderId: reminder.id,
      userId: reminder.userId,
      version: reminder.version,
      localDate: occurrence.localDate,
      at: occurrence.at.toISOString(),
    },
  };
}
