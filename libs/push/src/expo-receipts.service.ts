import type pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '@nudge/config';
import { type ClaimedJob, type JobContext, queryRows } from '@nudge/queue';
import { withTransaction } from '@nudge/database';
import { type NewEvent, recordEvents } from '@nudge/events';
import { deliveryEvent } from './delivery-events.js';
import { deactivateRejectedDevices, type RejectedToken } from './device-deactivation.js';
import { classifyExpoError, EXPO_MAX_RECEIPTS_PER_REQUEST, ExpoPushProvider, type ExpoReceipt } from './expo.provider.js';
import type { PushProviders } from './provider-registry.js';

export const EXPO_RECEIPTS = 'expo_receipts';
/** How often the job runs, and how old a send must be before its receipt is asked for (Expo: "about 15 minutes"). */
export const EXPO_RECEIPTS_EVERY_SECONDS = 15 * 60;
/** Expo keeps receipts about a day; a send older than that without one is given up. */
const RECEIPT_LIFETIME_MS = 24 * 3600_000;
/** Batches per run; the rest waits for the next run. */
const MAX_BATCHES = 50;

export interface ExpoReceiptsResult {
  ok: number;
  invalidTokens: number;
  failed: number;
  expired: number;
}

interface PendingRow {
  id: string;
  job_id: string;
  device_id: string;
  user_id: string;
  installation_id: string | null;
  platform: string;
  ticket: string;
  updated_at: Date;
}

/**
 * Expo's second answer. A send to Expo returns a ticket at once; what became
 * of the push at APNs or FCM is a receipt fetched later by the ticket's id.
 * This job (every 15 minutes) asks for the receipts of the sends at least 15
 * minutes old that it has not seen: `DeviceNotRegistered` turns the ledger row
 * into `invalid_token` and deactivates the device, as a 410 from APNs does;
 * another error turns it into `failed` with the receipt's reason. The push was
 * sent, and is not sent again: a receipt comes too late to retry it well.
 */
export class ExpoReceiptsService {
  constructor(
    private readonly pool: pg.Pool,
    private readonly providers: PushProviders,
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, 'info'>,
  ) {}

  readonly handle = async (job: ClaimedJob, ctx: JobContext): Promise<void> => {
    const result = await this.check(ctx.signal);
    if (result.ok + result.invalidTokens + result.failed + result.expired > 0) {
      this.logger.info({ jobId: job.id, kind: job.kind, ...result }, 'expo receipts read');
    }
  };

  async check(signal?: AbortSignal): Promise<ExpoReceiptsResult> {
    const result: ExpoReceiptsResult = { ok: 0, invalidTokens: 0, failed: 0, expired: 0 };
    const expo = this.providers.expo;
    // Simulated Expo pushes have no receipts.
    if (!(expo instanceof ExpoPushProvider)) return result;
    const now = this.clock.now();
    const readyBefore = new Date(now.getTime() - EXPO_RECEIPTS_EVERY_SECONDS * 1000);
    let after: { at: Date; id: string } = { at: new Date(0), id: '0' };
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const rows = await queryRows<PendingRow>(
        this.pool,
        `SELECT pd.id::text, pd.job_id::text, pd.device_id::text, pd.user_id, d.installation_id, pd.platform,
                pd.provider_message_id AS ticket, pd.updated_at
           FROM push_deliveries pd LEFT JOIN devices d ON d.id = pd.device_id
          WHERE pd.provider = 'expo' AND pd.status = 'sent' AND pd.receipt_checked_at IS NULL AND pd.updated_at <= $1
            AND (pd.updated_at, pd.id) > ($2, $3::bigint)
          ORDER BY pd.updated_at, pd.id LIMIT $4`,
        [readyBefore, after.at, after.id, EXPO_MAX_RECEIPTS_PER_REQUEST],
      );
      if (rows.length === 0) break;
      after = { at: rows.at(-1)!.updated_at, id: rows.at(-1)!.id };
      const receipts = await expo.receipts(
        rows.map((r) => r.ticket),
        signal,
      );
      await this.record(rows, receipts, now, result);
      if (rows.length < EXPO_MAX_RECEIPTS_PER_REQUEST) break;
    }
    return result;
  }

  private async record(rows: PendingRow[], receipts: Record<string, ExpoReceipt>, now: Date, result: ExpoReceiptsResult): Promise<void> {
    const settled: { id: string; status: string; error: string | null }[] = [];
    const rejected: RejectedToken[] = [];
    const events: NewEvent[] = [];
    for (const row of rows) {
      const receipt = receipts[row.ticket];
      if (!receipt) {
        // Not ready yet; after a day Expo has forgotten it: nothing more to learn.
        if (now.getTime() - row.updated_at.getTime() >= RECEIPT_LIFETIME_MS) {
          settled.push({ id: row.id, status: 'sent', error: null });
          result.expired++;
        }
        continue;
      }
      if (receipt.status === 'ok') {
        settled.push({ id: row.id, status: 'sent', error: null });
        result.ok++;
        continue;
      }
      const outcome = classifyExpoError(receipt.details?.error, receipt.message);
      const reason = 'reason' in outcome ? outcome.reason : String(receipt.message);
      const to = {
        jobId: row.job_id,
        userId: row.user_id,
        deviceId: row.device_id,
        installationId: row.installation_id,
        platform: row.platform,
        provider: 'expo',
      };
      if (outcome.kind === 'invalid_token') {
        settled.push({ id: row.id, status: 'invalid_token', error: reason });
        rejected.push({ deviceId: row.device_id, reason });
        events.push(deliveryEvent(to, 'invalid_token', reason));
        result.invalidTokens++;
      } else {
        settled.push({ id: row.id, status: 'failed', error: `receipt: ${reason}` });
        events.push(deliveryEvent(to, 'failed', `receipt: ${reason}`));
        result.failed++;
      }
    }
    if (settled.length === 0) return;
    // The ledger, the devices and the events announcing both: one transaction.
    await withTransaction(this.pool, async (tx) => {
      await tx.query(
        `UPDATE push_deliveries pd SET status = s.status, error = coalesce(s.error, pd.error), receipt_checked_at = $4, updated_at = $4
           FROM unnest($1::bigint[], $2::text[], $3::text[]) AS s(id, status, error)
          WHERE pd.id = s.id`,
        [settled.map((s) => s.id), settled.map((s) => s.status), settled.map((s) => s.error), now],
      );
      const deactivated = await deactivateRejectedDevices(tx, rejected, now);
      await recordEvents(tx, [...events, ...deactivated.events], now);
    });
  }
}
