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
// comes next, when its job runs, what its earliest allowed delivery is, and
// whether it is stale. No I/O: the callers read the facts and write the plan.

export const SEND_REMINDER = 'send_reminder';
/** An occurrence delivered later than this after its earliest allowed instant is skipped as stale (SPEC §5). */
export const STALE_AFTER_MS = 6 * 60 * 60 * 1000;
/** A one-off reminder is a rule with one occurrence, on startDate. */
export const ONE_OFF_RULE = 'FREQ=DAILY;COUNT=1';
/** The action category of reminder pushes: the app registers Done / Snooze buttons under it. */
export const REMINDER_ACTION_CATEGORY = 'NUDGE_REMINDER';

export type OccurrenceStatus = 'scheduled' | 'sent' | 'done' | 'snoozed' | 'skipped';
export type OccurrenceSkipReason = 'stale' | 'rescheduled' | 'disabled' | 'category_disabled' | 'no_device' | 'failed' | 'user';

export interface ReminderFacts {
  id: string;
  userId: string;
  version: number;
  localTime: string;
  timeZone: string | null;
  /** Null: a one-off reminder. */
  recurrence: string | null;
  startDate: string;
  timeSensitive: boolean;
  /** Its user's preference for the category may replace the user's quiet hours (OccurrenceScheduler reads it). */
  category?: string | null;
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
  /** A re-delivery the user asked for, not the regular one. */
  snooze?: true;
}

/** An occurrence with the instants its delivery is planned around. */
export interface PlannedOccurrence {
  occurrence: Occurrence;
  /** Staleness counts from here: the nominal instant plus jitter, or the end of the quiet hours that deferred it. */
  earliestAt: Date;
  /** When its job runs. */
  runAt: Date;
  idempotencyKey: string;
  payload: SendReminderPayload;
}

export interface ChainPlan {
  /** Occurrences passed over, each with why (recorded so none disappears). */
  skipped: { occurrence: Occurrence; reason: 'stale' | 'rescheduled' }[];
  next: PlannedOccurrence | null;
  /** The zone the plan was computed in: its occurrences' rows keep it. */
  timeZone: string;
}

export function scheduleOf(
  reminder: Omit<ReminderFacts, 'id' | 'userId' | 'version' | 'timeSensitive' | 'category'>,
  user: Pick<UserFacts, 'timeZone'>,
): Schedule {
  return {
    localTime: reminder.localTime,
    timeZone: reminder.timeZone ?? user.timeZone,
    recurrence: reminder.recurrence ?? ONE_OFF_RULE,
    startDate: reminder.startDate,
  };
}

export function quietHoursOf(user: UserFacts): QuietHours | null {
  return user.quietHoursStart && user.quietHoursEnd ? { start: user.quietHoursStart, end: user.quietHoursEnd } : null;
}

export function occurrenceKey(reminderId: string, version: number, localDate: string): string {
  return `reminder:${reminderId}:v${version}:${localDate}`;
}

/**
 * The first instant at or after `instant` that is outside the user's quiet
 * hours (the instant itself when it is not in them, or when the reminder may
 * break through them).
 */
export function allowedFrom(reminder: Pick<ReminderFacts, 'timeSensitive'>, user: UserFacts, instant: Date): Date {
  const quiet = quietHoursOf(user);
  if (!quiet || reminder.timeSensitive || !isInQuietHours(quiet, user.timeZone, instant)) return instant;
  return quietHoursEnd(quiet, user.timeZone, instant);
}

/**
 * True when an occurrence may no longer be delivered at `now`: more than six
 * hours after its earliest allowed instant, or once the occurrence after it is
 * due (a late push would only compete with the next one).
 */
export function isStale(schedule: Schedule, occurrence: Pick<Occurrence, 'at'>, earliestAt: Date, now: Date): boolean {
  if (now.getTime() - earliestAt.getTime() > STALE_AFTER_MS) return true;
  const successor = nextOccurrence(schedule, occurrence.at);
  return successor !== null && successor.at.getTime() <= now.getTime();
}

export interface ChainInput {
  reminder: ReminderFacts;
  user: UserFacts;
  now: Date;
  jitterSeconds: number;
  /**
   * `chain`: continue after `afterDate`, which just ran: every later date is
   * owed, late ones are delivered at once or skipped as stale.
   * `replan`: the schedule changed (creation, edit, travel, enable, repair):
   * only dates still ahead are owed, plus the one that was pending, which is
   * delivered at once if its new instant passed less than six hours ago and
   * skipped as `rescheduled` otherwise.
   */
  mode: 'chain' | 'replan';
  /**
   * Plan only dates after this one (chain: the date that ran; replan: where the chain stands, the
   * last date settled before the pending one — after skipping the next two, not before them).
   */
  afterDate: string | null;
  /** replan: the date that was pending, if any. */
  pendingDate?: string | null;
  /** Dates that already have a final state (sent, done, skipped, snoozed): never planned again. */
  settled: ReadonlySet<string>;
}

// A safety bound on how many passed-over dates one plan records (a daily
// rule after a three-year outage); beyond it the chain jumps silently.
const MAX_RECORDED_SKIPS = 1000;

/** The next occurrence to enqueue for a reminder, and the ones passed over on the way. */
export function planChain(input: ChainInput): ChainPlan {
  const { reminder, user, now, mode, afterDate, pendingDate, settled } = input;
  const schedule = scheduleOf(reminder, user);
  const timeZone = schedule.timeZone;
  const skipped: ChainPlan['skipped'] = [];
  // Occurrences of date D fall within [D 00:00 - 14 h, D+1 00:00 + 12 h] in UTC.
  const startOf = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) - 15 * 3600_000);
  let cursor: Date;
  if (mode === 'chain') cursor = afterDate ? startOf(afterDate) : now;
  // A re-plan owes what is still ahead, and the pending date even if it already passed.
  else cursor = pendingDate && startOf(pendingDate) < now ? startOf(pendingDate) : now;
  if (afterDate && startOf(afterDate) > cursor && !(pendingDate && pendingDate <= afterDate)) cursor = startOf(afterDate);

  for (let occurrence = nextOccurrence(schedule, cursor); occurrence; occurrence = nextOccurrence(schedule, occurrence.at)) {
    const date = occurrence.localDate;
    // Nothing up to the last settled date, but the pending one (a date settled ahead of it is no reason to drop it).
    if ((afterDate && date <= afterDate && date !== pendingDate) || settled.has(date)) continue;
    const nominal = occurrence.at;
    const jittered = new Date(nominal.getTime() + jitterFor(reminder.id, date, input.jitterSeconds) * 1000);
    if (jittered > now)
      return { skipped, next: planned(reminder, occurrence, allowedFrom(reminder, user, jittered), jittered, user), timeZone };

    // Already due: owed only in chain mode, or as the pending date of a re-plan.
    if (mode === 'replan' && date !== pendingDate) continue;
    const earliestAt = allowedFrom(reminder, user, jittered);
    if (earliestAt <= now && isStale(schedule, occurrence, earliestAt, now)) {
      if (skipped.length < MAX_RECORDED_SKIPS) skipped.push({ occurrence, reason: mode === 'chain' ? 'stale' : 'rescheduled' });
      continue;
    }
    return { skipped, next: planned(reminder, occurrence, earliestAt, now, user), timeZone };
  }
  return { skipped, next: null, timeZone };
}

function planned(reminder: ReminderFacts, occurrence: Occurrence, earliestAt: Date, notBefore: Date, user: UserFacts): PlannedOccurrence {
  const runAt = allowedFrom(reminder, user, earliestAt > notBefore ? earliestAt : notBefore);
  return {
    occurrence,
    earliestAt: runAt > earliestAt ? runAt : earliestAt,
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
