import type { ReminderEntity } from './reminder.entity.js';

export interface OccurrenceView {
  /** UTC, ISO-8601. */
  at: string;
  /** The same instant in the reminder's zone, ISO-8601 with its offset. */
  local: string;
}

/** A reminder as the API shows it (and as Idempotency-Key replays store it). */
export interface ReminderView {
  id: string;
  title: string;
  body: string | null;
  localTime: string;
  timeZone: string;
  followsUserTimeZone: boolean;
  recurrence: string;
  startDate: string;
  enabled: boolean;
  data: Record<string, unknown> | null;
  nextOccurrence: OccurrenceView | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export function toReminderView(reminder: ReminderEntity, userTimeZone: string, next: OccurrenceView | null): ReminderView {
  return {
    id: reminder.id,
    title: reminder.title,
    body: reminder.body,
    localTime: reminder.localTime,
    timeZone: reminder.timeZone ?? userTimeZone,
    followsUserTimeZone: reminder.timeZone === null,
    recurrence: reminder.recurrence,
    startDate: reminder.startDate,
    enabled: reminder.enabled,
    data: reminder.data,
    nextOccurrence: next,
    version: reminder.version,
    createdAt: reminder.createdAt.toISOString(),
    updatedAt: reminder.updatedAt.toISOString(),
  };
}
