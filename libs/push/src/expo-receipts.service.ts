import type pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '@nudge/config';
import { type ClaimedJob, type JobContext, queryRows } from '@nudge/queue';
import { withTransaction } from '@nudge/database';
import { type NewEvent, recordEvents } from '@nudge/events';
import { DEVICES } from '@nudge/users';
import { deliveryEvent } from './delivery-events.js';
import { deactivateRejectedDevices, type RejectedToken } from './device-deactivation.js';
import { classifyExpoError, EXPO_MAX_RECEIPTS_PER_REQUEST, ExpoPushProvider, type ExpoReceipt } from './expo.provider.js';
import { AppProviders } from './app-providers.js';
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
  app_id: string;
  app_version: number | null;
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
  private readonly apps: AppProviders;

  /** `providers`: each app's (a ticket is read back with the access token of the app that sent it), or the default app's alone. */
  constructor(
    private readonly pool: pg.Pool,
    providers: PushProviders | AppProviders,
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, 'info'>,
  ) {
    this.apps = providers instanceof AppProviders ? providers : new AppProviders(providers);
  }

  readonly handle = async (job: ClaimedJob, ctx: JobContext): Promise<void> => {
    const result = await this.check(ctx.signal);
    if (result.ok + result.invalidTokens + result.failed + result.expired > 0) {
      this.logger.info({ jobId: job.id, kind: job.kind, ...result }, 'expo receipts read');
    }
  };

  async check(signal?: AbortSignal): Promise<ExpoReceiptsResult> {
    const result: ExpoReceiptsResult = { ok: 0, invalidTokens: 0, failed: 0, expired: 0 };
    const now = this.clock.now();
    const readyBefore = new Date(now.getTime() - EXPO_RECEIPTS_EVERY_SECONDS * 1000);
    let after: { at: Date; id: string } = { at: new Date(0), id: '0' };
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const rows = await queryRows<PendingRow>(
        this.pool,
        `SELECT pd.id::text, pd.job_id::text, pd.device_id::text, pd.user_id, d.installation_id, pd.platform,
                pd.provider_message_id AS ticket, pd.updated_at, COALESCE(d.app_id, 'default') AS app_id, a.version AS app_version
           FROM push_deliveries pd LEFT JOIN ${DEVICES} d ON d.id = pd.device_id LEFT JOIN apps a ON a.id = d.app_id
          WHERE pd.provider = 'expo' AND pd.status = 'sent' AND pd.receipt_checked_at IS NULL AND pd.updated_at <= $1
            AND (pd.updated_at, pd.id) > ($2, $3::bigint)
          ORDER BY pd.updated_at, pd.id LIMIT $4`,
        [readyBefore, after.at, after.id, EXPO_MAX_RECEIPTS_PER_REQUEST],
      );
      if (rows.length === 0) break;
      after = { at: rows.at(-1)!.updated_at, id: rows.at(-1)!.id };
      await this.record(rows, await this.receipts(rows, signal), now, result);
      if (rows.length < EXPO_MAX_RECEIPTS_PER_REQUEST) break;
    }
    return result;
  }

  // Each app's tickets with its own Expo client (its access token). An app no
  // longer on Expo has no client to ask: its rows expire after a day.
  private async receipts(rows: PendingRow[], signal: AbortSignal | undefined): Promise<Record<string, ExpoReceipt>> {
    const byApp = new Map<string, PendingRow[]>();
    for (const row of rows) {
      const key = `${row.app_id}\u0000${row.app_version ?? 0}`;
      byApp.set(key, [...(byApp.get(key) ?? []), row]);
    }
    const receipts: Record<string, ExpoReceipt> = {};
    for (const group of byApp.values()) {
      const expo = (await this.apps.forApp(group[0]!.app_id, group[0]!.app_version)).expo;
      // Simulated Expo pushes have no receipts.
      if (!(expo instanceof ExpoPushProvider)) continue;
      Object.assign(
        receipts,
        await expo.receipts(
          group.map((r) => r.ticket),
          signal,
        ),
      );
    }
    return receipts;
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
