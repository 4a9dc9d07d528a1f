import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { Clock, LOGGER, registeredMetric } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import { queryRows, UNFINISHED_JOBS } from '@nudge/queue';
import { USER_SETTINGS } from '@nudge/users';
import { OccurrenceScheduler } from './occurrence-scheduler.js';
import type { ReminderFacts, UserFacts } from './reminder-plan.js';

export const REMINDER_SWEEP = 'reminder_sweep';
const BATCH = 500;

type Row = ReminderFacts & UserFacts & { enabled: boolean; reminderTimeZone: string | null };

/**
 * The safety net under the chain of occurrences: finds enabled reminders
 * whose current version has no queued or running job (a handler that died
 * for good, a bug, a restore from backup) and enqueues their next
 * occurrence. Walks reminders in id order, in batches, one short transaction
 * each, so it never holds many locks.
 */
@Injectable()
export class ReminderSweep {
  private readonly repaired: Counter;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly scheduler: OccurrenceScheduler,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    this.repaired = registeredMetric(
      registry,
      'nudge_reminder_sweep_repaired_total',
      () =>
        new Counter({
          name: 'nudge_reminder_sweep_repaired_total',
          help: 'Enabled reminders the sweep found without a pending job and re-enqueued',
          registers: [registry],
        }),
    );
  }

  readonly handle = async (): Promise<void> => {
    const repaired = await this.sweep();
    if (repaired > 0) this.logger.warn({ repaired }, 'reminder sweep re-enqueued reminders that had no pending job');
  };

  /** Returns how many reminders got a job back. */
  async sweep(): Promise<number> {
    let after = '00000000-0000-0000-0000-000000000000';
    let repaired = 0;
    for (;;) {
      const rows = await queryRows<Row>(
        this.pool,
        `SELECT r.id, r.user_id AS "userId", r.version, r.enabled, r.local_time AS "localTime", r.time_zone AS "reminderTimeZone",
                r.recurrence, r.start_date AS "startDate", r.time_sensitive AS "timeSensitive", r.category, u.time_zone AS "timeZone",
                u.quiet_hours_start AS "quietHoursStart", u.quiet_hours_end AS "quietHoursEnd"
           FROM reminders r JOIN ${USER_SETTINGS} u ON u.id = r.user_id
          WHERE r.enabled AND r.id > $1
            AND NOT EXISTS (
              SELECT 1 FROM reminder_occurrences o JOIN ${UNFINISHED_JOBS} j ON j.id = o.job_id
               WHERE o.reminder_id = r.id AND o.status = 'scheduled')
          ORDER BY r.id
          LIMIT $2`,
        [after, BATCH],
      );
      for (const row of rows) {
        const fixed = await withTransaction(this.pool, async (tx) => {
          // Re-check under the row lock: the chain may have moved on meanwhile.
          const locked = await tx.query(`SELECT version FROM reminders WHERE id = $1 AND enabled FOR UPDATE`, [row.id]);
          if (locked.rows[0]?.version !== row.version) return false;
          const now = this.clock.now();
          // A new version: the old occurrence's key may belong to a cancelled or dead job.
          const reminder = { ...row, timeZone: row.reminderTimeZone, version: row.version + 1 };
          const user = { timeZone: row.timeZone, quietHoursStart: row.quietHoursStart, quietHoursEnd: row.quietHoursEnd };
          const next = await this.scheduler.replan(tx, reminder, user, now);
          // A rule that has run out is not broken: nothing to repair, and no new version.
          if (next === null) return false;
          await tx.query(`UPDATE reminders SET version = $2, updated_at = $3 WHERE id = $1`, [row.id, reminder.version, now]);
          return true;
        });
        if (fixed) repaired++;
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1]!.id;
    }
    this.repaired.inc(repaired);
    return repaired;
  }
}
