import { type InterruptionLevel, type LocalizedFields, type LocalizedText, pushOptionsView } from '@nudge/push';
import { localIsoAt } from '@nudge/scheduling';
import type { OccurrenceRow } from './occurrences.repository.js';
import type { OccurrenceStatus } from './reminder-plan.js';
import type { ReminderEntity } from './reminder.entity.js';

export interface NextOccurrenceView {
  /** UTC, ISO-8601. */
  at: string;
  /** The same instant in the reminder's zone, ISO-8601 with its offset. */
  local: string;
}

/** One occurrence as the API shows it: its nominal instant and what happened to it. */
export interface OccurrenceView {
  localDate: string;
  at: string;
  local: string;
  status: OccurrenceStatus;
  reason?: string;
  sentAt?: string;
  actedAt?: string;
  snoozedUntil?: string;
}

/** A reminder as the API shows it (and as Idempotency-Key replays store it). */
export interface ReminderView {
  id: string;
  /** As the caller gave it: a string, or a map by BCP 47 tag. */
  title: LocalizedText;
  body: LocalizedText | null;
  /** The default language of a localized title or body; null: plain strings. */
  defaultLocale: string | null;
  localTime: string;
  timeZone: string;
  followsUserTimeZone: boolean;
  recurrence: string | null;
  startDate: string;
  enabled: boolean;
  timeSensitive: boolean;
  category: string | null;
  data: Record<string, unknown> | null;
  sound: string | null;
  badge: number | null;
  threadId: string | null;
  imageUrl: string | null;
  androidChannelId: string | null;
  interruptionLevel: InterruptionLevel;
  silent: boolean;
  nextOccurrence: NextOccurrenceView | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** A reminder's title and body as the caller gave them: strings or maps by BCP 47 tag. */
export function textOf(reminder: Pick<ReminderEntity, 'title' | 'body' | 'titleI18n' | 'bodyI18n' | 'defaultLocale'>): LocalizedFields {
  return { title: reminder.titleI18n ?? reminder.title, body: reminder.bodyI18n ?? reminder.body, defaultLocale: reminder.defaultLocale };
}

export function toReminderView(reminder: ReminderEntity, userTimeZone: string, next: { at: Date } | null): ReminderView {
  const zone = reminder.timeZone ?? userTimeZone;
  return {
    id: reminder.id,
    ...textOf(reminder),
    localTime: reminder.localTime,
    timeZone: zone,
    followsUserTimeZone: reminder.timeZone === null,
    recurrence: reminder.recurrence,
    startDate: reminder.startDate,
    enabled: reminder.enabled,
    timeSensitive: reminder.timeSensitive,
    category: reminder.category,
    data: reminder.data,
    ...pushOptionsView(reminder.pushOptions, reminder.timeSensitive),
    nextOccurrence: next ? { at: next.at.toISOString(), local: localIsoAt(zone, next.at) } : null,
    version: reminder.version,
    createdAt: reminder.createdAt.toISOString(),
    updatedAt: reminder.updatedAt.toISOString(),
  };
}

/**
 * An occurrence row (or a nominal occurrence without one: scheduled), its
 * local time in the zone the row was planned in — a date of the history keeps
 * the local time it ran at after travel — else in `zone`, the schedule's.
 */
export function toOccurrenceView(
  zone: string,
  occurrence: { localDate: string; at: Date },
  row: Pick<OccurrenceRow, 'status' | 'reason' | 'sentAt' | 'actedAt' | 'snoozedUntil' | 'timeZone'> | null,
): OccurrenceView {
  const view: OccurrenceView = {
    localDate: occurrence.localDate,
    at: occurrence.at.toISOString(),
    local: localIsoAt(row?.timeZone ?? zone, occurrence.at),
    status: row?.status ?? 'scheduled',
  };
  if (row?.reason) view.reason = row.reason;
  if (row?.sentAt) view.sentAt = row.sentAt.toISOString();
  if (row?.actedAt) view.actedAt = row.actedAt.toISOString();
  if (row?.snoozedUntil && row.status === 'snoozed') view.snoozedUntil = row.snoozedUntil.toISOString();
  return view;
}
