import { collapseIdFor } from './collapse-id.js';
import type { PushOutcome, PushPlatform, SqlExecutor } from './push-provider.js';
import type { PushProviders } from './provider-registry.js';

// The delivery ledger (`push_deliveries`, one row per job and device) and the
// send loop around it. A row is written as `sending` before the provider is
// called and gets its outcome after, so a crash in between leaves a row that
// the retry sends again — with the same collapse id, so the phone shows the
// push once even if the first send did arrive.

export interface DeliveryRequest {
  jobId: string;
  userId: string;
  title: string;
  body?: string | null;
  data?: Record<string, unknown> | null;
  /** When the push stops being useful (a reminder: when its successor is due). */
  expiresAt?: Date;
  timeSensitive?: boolean;
}

export type SkipReason = 'quiet_hours' | 'disabled' | 'stale' | 'no_device';

export interface DeliverySummary {
  sent: number;
  invalidTokens: number;
  permanentFailures: number;
  /** Devices whose send may succeed later: the job should be retried. */
  retryable: { deviceId: string; reason: string }[];
  /** The longest Retry-After any provider asked for, in seconds. */
  retryAfterSeconds?: number;
  noDevice: boolean;
}

interface LedgerDevice {
  id: string;
  platform: PushPlatform;
  push_token: string;
  ledger_status: string | null;
  ledger_error: string | null;
}

export interface DeliveryClock {
  now(): Date;
}

// A permanent failure is kept as `failed` with this prefix, and not retried.
const PERMANENT = 'permanent: ';

const rowsOf = <T>(result: unknown): T[] =>
  Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] })?.rows ?? []);

export class PushDelivery {
  constructor(
    private readonly db: SqlExecutor,
    private readonly providers: PushProviders,
    private readonly clock: DeliveryClock,
  ) {}

  /**
   * Sends to every active device of the user that this job has not already
   * reached: `sent` and `invalid_token` rows are final, as are permanent
   * failures; `sending` (a crash mid-send) and transient failures go again.
   */
  async deliver(request: DeliveryRequest): Promise<DeliverySummary> {
    const devices = rowsOf<LedgerDevice>(
      await this.db.query(
        `SELECT d.id, d.platform, d.push_token, pd.status AS ledger_status, pd.error AS ledger_error
           FROM devices d
           LEFT JOIN push_deliveries pd ON pd.job_id = $1 AND pd.device_id = d.id
          WHERE d.user_id = $2 AND (d.active OR pd.status IS NOT NULL)
          ORDER BY d.created_at, d.id`,
        [request.jobId, request.userId],
      ),
    );
    const summary: DeliverySummary = { sent: 0, invalidTokens: 0, permanentFailures: 0, retryable: [], noDevice: false };
    if (devices.length === 0) {
      await this.recordSkipped(request.jobId, request.userId, 'no_device');
      return { ...summary, noDevice: true };
    }
    const collapseId = collapseIdFor(request.jobId);
    await Promise.all(
      devices.map(async (device) => {
        if (device.ledger_status === 'sent') return void summary.sent++;
        if (device.ledger_status === 'invalid_token') return void summary.invalidTokens++;
        if (device.ledger_status === 'skipped') return;
        if (device.ledger_status === 'failed' && device.ledger_error?.startsWith(PERMANENT)) return void summary.permanentFailures++;
        const outcome = await this.sendOne(request, device, collapseId);
        switch (outcome.kind) {
          case 'sent':
            summary.sent++;
            break;
          case 'invalid_token':
            summary.invalidTokens++;
            break;
          case 'permanent':
            summary.permanentFailures++;
            break;
          case 'transient':
          case 'configuration_error':
            summary.retryable.push({ deviceId: device.id, reason: outcome.reason });
            if (outcome.kind === 'transient' && outcome.retryAfterSeconds !== undefined) {
              summary.retryAfterSeconds = Math.max(summary.retryAfterSeconds ?? 0, outcome.retryAfterSeconds);
            }
            break;
        }
      }),
    );
    return summary;
  }

  /**
   * Records that this job deliberately sent nothing: one `skipped` row per
   * active device, or a single row without a device when there is none.
   */
  async recordSkipped(jobId: string, userId: string, reason: SkipReason): Promise<void> {
    const now = this.clock.now();
    const inserted = rowsOf(
      await this.db.query(
        `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, status, skip_reason, created_at, updated_at)
         SELECT $1, d.id, d.user_id, d.platform, 'skipped', $3, $4, $4 FROM devices d WHERE d.user_id = $2 AND d.active
         ON CONFLICT (job_id, device_id) DO NOTHING
         RETURNING 1`,
        [jobId, userId, reason, now],
      ),
    );
    if (inserted.length === 0) {
      await this.db.query(
        `INSERT INTO push_deliveries (job_id, device_id, user_id, status, skip_reason, created_at, updated_at)
         VALUES ($1, NULL, $2, 'skipped', $3, $4, $4) ON CONFLICT DO NOTHING`,
        [jobId, userId, reason, now],
      );
    }
  }

  private async sendOne(request: DeliveryRequest, device: LedgerDevice, collapseId: string): Promise<PushOutcome> {
    const provider = this.providers.forPlatform(device.platform);
    await this.db.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, attempts, collapse_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'sending', 1, $6, $7, $7)
       ON CONFLICT (job_id, device_id) DO UPDATE
         SET status = 'sending', attempts = push_deliveries.attempts + 1, provider = EXCLUDED.provider, updated_at = EXCLUDED.updated_at`,
      [request.jobId, device.id, request.userId, device.platform, provider.name, collapseId, this.clock.now()],
    );
    const outcome = await provider.send({
      token: device.push_token,
      platform: device.platform,
      title: request.title,
      body: request.body ?? undefined,
      data: request.data ?? undefined,
      collapseId,
      expiresAt: request.expiresAt,
      timeSensitive: request.timeSensitive,
    });
    const now = this.clock.now();
    const [status, error, messageId] =
      outcome.kind === 'sent'
        ? ['sent', null, outcome.providerMessageId ?? null]
        : outcome.kind === 'invalid_token'
          ? ['invalid_token', outcome.reason, null]
          : outcome.kind === 'permanent'
            ? ['failed', PERMANENT + outcome.reason, null]
            : ['failed', `${outcome.kind}: ${outcome.reason}`, null];
    await this.db.query(
      `UPDATE push_deliveries SET status = $3, error = $4, provider_message_id = $5, updated_at = $6 WHERE job_id = $1 AND device_id = $2`,
      [request.jobId, device.id, status, error, messageId, now],
    );
    if (outcome.kind === 'invalid_token') {
      // No further sends to a token the provider rejected; re-registering it (PUT device) reactivates it.
      await this.db.query(
        `UPDATE devices SET active = false, deactivated_reason = $2, deactivated_at = $3, updated_at = $4 WHERE id = $1 AND active`,
        [device.id, `invalid_token: ${outcome.reason}`, outcome.invalidSince ?? now, now],
      );
    }
    return outcome;
  }
}
