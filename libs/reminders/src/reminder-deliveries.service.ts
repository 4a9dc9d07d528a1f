import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { DEVICE_DELIVERIES } from '@nudge/push';
import { JOB_STATES, queryRows } from '@nudge/queue';
import { loadOwnReminder } from './own-reminder.js';

export interface DeliveryView {
  jobId: string;
  localDate: string;
  dueAt: string;
  version: number;
  /** `regular`: the occurrence's delivery; `snooze`: a re-delivery the user asked for. */
  purpose: 'regular' | 'snooze';
  status: string | null;
  attempts: number | null;
  lastError: string | null;
  devices: { installationId: string | null; platform: string; provider: string; status: string; error: string | null; updatedAt: string }[];
}

/**
 * A reminder's execution history for its owner (GET /v1/reminders/{id}/deliveries):
 * a read model over the reminder's jobs, the queue and the delivery ledger.
 */
@Injectable()
export class ReminderDeliveriesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Each occurrence that ran (or is pending), newest first, with per-device outcomes. */
  async list(userId: string, id: string, limit = 50): Promise<DeliveryView[]> {
    await loadOwnReminder(this.dataSource.manager, userId, id);
    const rows = await queryRows<any>(
      this.dataSource.manager,
      `SELECT o.job_id, o.local_date, o.due_at, o.version, o.purpose, j.status, j.attempts, j.last_error,
              COALESCE(json_agg(json_build_object(
                'installationId', pd.installation_id, 'platform', pd.platform, 'provider', pd.provider,
                'status', pd.status, 'error', COALESCE(pd.error, pd.skip_reason), 'updatedAt', pd.updated_at)
                ORDER BY pd.created_at) FILTER (WHERE pd.job_id IS NOT NULL), '[]') AS devices
         FROM reminder_jobs o
         LEFT JOIN ${JOB_STATES} j ON j.id = o.job_id
         LEFT JOIN ${DEVICE_DELIVERIES} pd ON pd.job_id = o.job_id
        WHERE o.reminder_id = $1
        GROUP BY o.job_id, o.local_date, o.due_at, o.version, o.purpose, j.status, j.attempts, j.last_error
        ORDER BY o.due_at DESC, o.job_id DESC
        LIMIT $2`,
      [id, limit],
    );
    return rows.map((r) => ({
      jobId: String(r.job_id),
      localDate: r.local_date,
      dueAt: new Date(r.due_at).toISOString(),
      version: r.version,
      purpose: r.purpose,
      status: r.status ?? null,
      attempts: r.attempts ?? null,
      lastError: r.last_error ?? null,
      // json_build_object renders a timestamptz in the session's zone (`…+00:00`); every other instant is toISOString's.
      devices: r.devices.map((d: { updatedAt: string }) => ({ ...d, updatedAt: new Date(d.updatedAt).toISOString() })),
    }));
  }
}
