import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock, DomainError } from '@nudge/config';
import { queryRows } from '@nudge/queue';
import { type CategoryPreference, categoryOrFail, PREFERENCE_COLUMNS } from './category-preferences.js';
import { UserEvents } from './user-events.js';
import { type QuietHoursInput, UsersService } from './users.service.js';

export interface PreferenceInput {
  enabled: boolean;
  /** Omitted or null: the user's quiet hours apply to the category. */
  quietHours?: QuietHoursInput | null;
  /** Default true. */
  allowTimeSensitive?: boolean;
}

/**
 * A user's per-category choices. A change of a category's quiet hours or of
 * its time-sensitive rule re-plans the user's reminders in the same
 * transaction (as new quiet hours of the user do); turning a category off or
 * on needs no re-plan: it is read when each occurrence runs, so the chain of
 * occurrences goes on and later ones arrive once it is on again.
 */
@Injectable()
export class PreferencesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly events: UserEvents,
    private readonly clock: Clock,
  ) {}

  async list(userId: string): Promise<CategoryPreference[]> {
    return queryRows<CategoryPreference>(
      this.dataSource.manager,
      `SELECT ${PREFERENCE_COLUMNS} FROM user_preferences p WHERE p.user_id = $1 ORDER BY p.category`,
      [userId],
    );
  }

  /** Creates or replaces the category's preference; fields left out take their defaults. */
  async put(userId: string, rawCategory: string, input: PreferenceInput): Promise<{ preference: CategoryPreference; created: boolean }> {
    const category = categoryOrFail(rawCategory);
    return this.dataSource.transaction(async (tx) => {
      if (!(await this.users.lock(tx, userId))) {
        throw DomainError.conflict('The user has no profile yet: create it with PUT /v1/me first.');
      }
      const [before] = await queryRows<CategoryPreference>(
        tx,
        `SELECT ${PREFERENCE_COLUMNS} FROM user_preferences p WHERE p.user_id = $1 AND p.category = $2`,
        [userId, category],
      );
      const [preference] = await queryRows<CategoryPreference>(
        tx,
        `INSERT INTO user_preferences AS p (user_id, category, enabled, quiet_hours_start, quiet_hours_end, allow_time_sensitive, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (user_id, category) DO UPDATE SET
           enabled = EXCLUDED.enabled, quiet_hours_start = EXCLUDED.quiet_hours_start,
           quiet_hours_end = EXCLUDED.quiet_hours_end, allow_time_sensitive = EXCLUDED.allow_time_sensitive,
           updated_at = EXCLUDED.updated_at
         RETURNING ${PREFERENCE_COLUMNS}`,
        [
          userId,
          category,
          input.enabled,
          input.quietHours?.start ?? null,
          input.quietHours?.end ?? null,
          input.allowTimeSensitive ?? true,
          this.clock.now(),
        ],
      );
      if (timingChanged(before, preference!)) await this.events.emitQuietHoursChanged(tx, userId, false);
      return { preference: preference!, created: !before };
    });
  }

  /** Back to the defaults: the user's settings alone govern the category. */
  async delete(userId: string, rawCategory: string): Promise<void> {
    const category = categoryOrFail(rawCategory);
    await this.dataSource.transaction(async (tx) => {
      await this.users.lock(tx, userId);
      const [before] = await queryRows<CategoryPreference>(
        tx,
        `DELETE FROM user_preferences p WHERE p.user_id = $1 AND p.category = $2 RETURNING ${PREFERENCE_COLUMNS}`,
        [userId, category],
      );
      if (!before) throw DomainError.notFound('The preference');
      if (timingChanged(before, undefined)) await this.events.emitQuietHoursChanged(tx, userId, false);
    });
  }
}

// Whether the instants the category's pushes may go out at changed: then pending occurrences re-plan.
function timingChanged(before: CategoryPreference | undefined, after: CategoryPreference | undefined): boolean {
  const timing = (p: CategoryPreference | undefined) => [
    p?.quietHoursStart ?? null,
    p?.quietHoursEnd ?? null,
    p?.allowTimeSensitive ?? true,
  ];
  return JSON.stringify(timing(before)) !== JSON.stringify(timing(after));
}
