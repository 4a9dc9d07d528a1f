import { DomainError } from '@nudge/config';
import { queryRows, type QueryExecutor } from '@nudge/queue';

// Notification categories ("medication", "tips") and what a user chose for
// each: on or off, quiet hours of the category's own, and whether
// time-sensitive pushes of the category may break through quiet hours.
// The facts are read here (this lib owns user_preferences); the decisions
// below are pure, so reminders and event pushes apply them the same way.

/** 1–64 letters, digits and `. _ : -`; compared in lower case (`Medication` is `medication`). */
export const CATEGORY_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
export const CATEGORY_RULE = 'a category is 1 to 64 letters, digits, ".", "_", ":" or "-"';

export interface CategoryPreference {
  category: string;
  enabled: boolean;
  /** Both set or both null; null: the user's quiet hours apply. */
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
  /** False: the quiet hours that apply hold back this category's time-sensitive pushes too. */
  allowTimeSensitive: boolean;
  updatedAt: Date;
}

/** The stored spelling of a category, or a 400 naming `path`. */
export function categoryOrFail(category: string, path = 'category'): string {
  if (!CATEGORY_PATTERN.test(category)) throw DomainError.invalid([{ path, message: `${CATEGORY_RULE}; got "${category}"` }]);
  return category.toLowerCase();
}

/** `categoryOrFail` for an optional field: undefined and null pass through. */
export function optionalCategory<T extends string | null | undefined>(category: T): T {
  return (typeof category === 'string' ? categoryOrFail(category) : category) as T;
}

export interface QuietHoursFacts {
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
}

/**
 * What governs one push of a category for a user: the category's quiet hours
 * replace the user's when it has its own, and a category that does not allow
 * time-sensitive pushes makes them ordinary ones (they wait out quiet hours,
 * and go out without the time-sensitive interruption level). No preference
 * (or no category): the user's settings alone. The user's own off switch is
 * checked by the caller first: it wins over everything here.
 */
export function underPreference<U extends QuietHoursFacts>(
  user: U,
  timeSensitive: boolean,
  preference: CategoryPreference | undefined,
): { user: U; timeSensitive: boolean; enabled: boolean } {
  if (!preference) return { user, timeSensitive, enabled: true };
  const own = preference.quietHoursStart !== null && preference.quietHoursEnd !== null;
  return {
    user: own ? { ...user, quietHoursStart: preference.quietHoursStart, quietHoursEnd: preference.quietHoursEnd } : user,
    timeSensitive: timeSensitive && preference.allowTimeSensitive,
    enabled: preference.enabled,
  };
}

const keyOf = (userId: string, category: string) => `${userId}\n${category}`;

/** The stored preferences for these (user, category) pairs, in one statement; look them up with `preferenceOf`. */
export async function loadCategoryPreferences(
  executor: QueryExecutor,
  pairs: readonly { userId: string; category?: string | null }[],
): Promise<Map<string, CategoryPreference>> {
  const wanted = pairs.filter((p): p is { userId: string; category: string } => typeof p.category === 'string');
  if (wanted.length === 0) return new Map();
  const rows = await queryRows<CategoryPreference & { userId: string }>(
    executor,
    `SELECT p.user_id AS "userId", ${PREFERENCE_COLUMNS}
       FROM unnest($1::text[], $2::text[]) AS k(user_id, category)
       JOIN user_preferences p ON p.user_id = k.user_id AND p.category = k.category`,
    [wanted.map((p) => p.userId), wanted.map((p) => p.category)],
  );
  return new Map(rows.map(({ userId, ...preference }) => [keyOf(userId, preference.category), preference]));
}

export function preferenceOf(
  preferences: Map<string, CategoryPreference>,
  userId: string,
  category: string | null | undefined,
): CategoryPreference | undefined {
  return category ? preferences.get(keyOf(userId, category)) : undefined;
}

export const PREFERENCE_COLUMNS = `p.category, p.enabled, p.quiet_hours_start AS "quietHoursStart", p.quiet_hours_end AS "quietHoursEnd",
       p.allow_time_sensitive AS "allowTimeSensitive", p.updated_at AS "updatedAt"`;
