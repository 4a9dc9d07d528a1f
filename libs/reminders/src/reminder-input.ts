import { DomainError } from '@nudge/config';
import {
  assertPayloadFits,
  defaultText,
  type LocalizedFields,
  localizedFields,
  type LocalizedText,
  type PushOptions,
  type PushOptionsInput,
} from '@nudge/push';
import { localIsoAt, nextOccurrence, validateSchedule } from '@nudge/scheduling';
import type { ReminderEntity } from './reminder.entity.js';
import { REMINDER_ACTION_CATEGORY, scheduleOf, type UserFacts } from './reminder-plan.js';
import { textOf } from './reminder.view.js';

// A reminder as a client writes it, and the checks and shaping of that input
// before RemindersService stores it: each a 400 before anything is written.

export interface ReminderInput extends PushOptionsInput {
  /** A string, or a map by BCP 47 tag. */
  title: LocalizedText;
  body?: LocalizedText | null;
  /** The language of a localized title or body shown when none fits; default: the first key of title. */
  defaultLocale?: string;
  localTime: string;
  /** Omitted or null: follow the user's zone. */
  timeZone?: string | null;
  /** Omitted or null: a one-off reminder, one occurrence at startDate + localTime. */
  recurrence?: string | null;
  startDate?: string;
  enabled?: boolean;
  timeSensitive?: boolean;
  /** Omitted or null: no category (the user's settings alone). */
  category?: string | null;
  data?: Record<string, unknown> | null;
}

/**
 * A 400 now rather than a dead job later: the push of an occurrence must fit
 * in 4 KiB. Measured as SendReminderHandler builds it, with the keys it adds
 * to `data` (placeholders of the real lengths).
 */
export function checkPushSize(
  reminder: Pick<LocalizedFields, 'title' | 'body'> & Pick<ReminderInput, 'data' | 'timeSensitive'> & { pushOptions: PushOptions },
): void {
  assertPayloadFits({
    ...reminder.pushOptions,
    timeSensitive: reminder.timeSensitive,
    title: reminder.title,
    body: reminder.body,
    data: { ...(reminder.data ?? {}), reminderId: '00000000-0000-0000-0000-000000000000', occurrence: '2000-01-01' },
    actionCategory: REMINDER_ACTION_CATEGORY,
  });
}

export const TEXT_LIMITS = { title: { minLength: 1, maxLength: 200 }, body: { minLength: 0, maxLength: 1000 } };

/** The columns of a title and body: the default language's text in `title`/`body`, the maps beside them. */
export function storedText(text: LocalizedFields): Pick<ReminderEntity, 'title' | 'body' | 'titleI18n' | 'bodyI18n' | 'defaultLocale'> {
  return {
    title: defaultText(text.title, text.defaultLocale),
    body: text.body === null ? null : defaultText(text.body, text.defaultLocale),
    titleI18n: typeof text.title === 'string' ? null : text.title,
    bodyI18n: text.body === null || typeof text.body === 'string' ? null : text.body,
    defaultLocale: text.defaultLocale,
  };
}

/**
 * A PATCH of title, body or defaultLocale, checked as a whole: the stored
 * default language carries over unless the patch names another, so a map that
 * lacks it is a 400 asking for defaultLocale; with no map left it is dropped.
 */
export function patchedText(reminder: ReminderEntity, patch: Partial<ReminderInput>): LocalizedFields {
  const current = textOf(reminder);
  const title = patch.title !== undefined ? patch.title : current.title;
  const body = patch.body !== undefined ? patch.body : current.body;
  const localized = typeof title === 'object' || (body !== null && typeof body === 'object');
  const defaultLocale = patch.defaultLocale ?? (localized ? (current.defaultLocale ?? undefined) : undefined);
  return localizedFields({ title, body, defaultLocale }, TEXT_LIMITS);
}

/**
 * A 400 for a schedule that is invalid or can never fire again (UNTIL before
 * startDate, COUNT used up, a one-off in the past): nothing is written.
 */
export function checkSchedule(
  reminder: { localTime: string; timeZone: string | null; recurrence: string | null; startDate: string },
  user: UserFacts,
  now: Date,
  given: { recurrenceGiven: boolean; startDateGiven: boolean },
): void {
  const schedule = scheduleOf(reminder, user);
  const result = validateSchedule(schedule);
  if (!result.ok) {
    throw DomainError.invalid(result.errors.map((message) => ({ path: message.split(':')[0]!, message })));
  }
  if (nextOccurrence(schedule, now) === null) {
    const path = given.recurrenceGiven ? 'recurrence' : given.startDateGiven ? 'startDate' : 'localTime';
    const what = given.recurrenceGiven ? 'the rule has no occurrence after now' : 'its one occurrence is in the past';
    throw DomainError.invalid([{ path, message: `${path}: this reminder would never fire: ${what}` }]);
  }
}

/** Today's date in the zone, YYYY-MM-DD: the default start of a rule. */
export function todayIn(zone: string, now: Date): string {
  return localIsoAt(zone, now).slice(0, 10);
}
