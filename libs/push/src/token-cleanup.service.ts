import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { Clock, LOGGER, registeredMetric } from '@nudge/config';
import { PG_POOL, withTransaction } from '@nudge/database';
import { recordEvents } from '@nudge/events';
import { type ClaimedJob, enqueue, type QueryExecutor } from '@nudge/queue';
import { deleteUnusedDevices } from '@nudge/users';

export const TOKEN_CLEANUP = 'token_cleanup';
export const DEFAULT_INACTIVE_DAYS = 60;
const BATCH = 1000;

export interface TokenCleanupPayload {
  inactiveDays?: number;
}

export interface TokenCleanupResult {
  /** Devices a provider had rejected (deactivated). */
  deactivated: number;
  /** Active devices not seen for `inactiveDays`. */
  stale: number;
}

/**
 * Token hygiene: deletes the devices whose token a provider rejected
 * (PushDelivery deactivates them) and those not seen for `inactiveDays`.
 * Runs as the `token_cleanup` job — daily, and on demand from the ops API —
 * in batches of 1000, each statement its own short transaction.
 */
@Injectable()
export class TokenCleanupService {
  private readonly removed: Counter<'reason'>;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    this.removed = registeredMetric(
      registry,
      'nudge_tokens_removed_total',
      () =>
        new Counter({
          name: 'nudge_tokens_removed_total',
          help: 'Devices deleted by token cleanup, by reason (deactivated: rejected by the provider; stale: not seen for inactiveDays)',
          labelNames: ['reason'],
          registers: [registry],
        }),
    );
  }

  /** Queues a cleanup now, in the caller's transaction if given; returns its job id. */
  async request(inactiveDays = DEFAULT_INACTIVE_DAYS, tx?: QueryExecutor): Promise<{ jobId: string }> {
    const { job } = await enqueue(
      tx ?? this.pool,
      { kind: TOKEN_CLEANUP, payload: { inactiveDays } satisfies TokenCleanupPayload, maxAttempts: 3 },
      { now: this.clock.now() },
    );
    return { jobId: job.id };
  }

  readonly handle = async (job: ClaimedJob<TokenCleanupPayload>): Promise<void> => {
    const inactiveDays = job.payload.inactiveDays ?? DEFAULT_INACTIVE_DAYS;
    const result = await this.cleanUp(inactiveDays);
    this.logger.info(
      { jobId: job.id, kind: job.kind, attempt: job.attempts, inactiveDays, removed: result.deactivated + result.stale, ...result },
      'token cleanup removed devices',
    );
  };

  async cleanUp(inactiveDays: number): Promise<TokenCleanupResult> {
    const now = this.clock.now();
    const unseenSince = new Date(now.getTime() - inactiveDays * 86_400_000);
    const result: TokenCleanupResult = { deactivated: 0, stale: 0 };
    for (;;) {
      // A stale device leaves with a `device.deactivated` event, in the same transaction; one a provider
      // rejected was announced when it was deactivated.
      const gone = await withTransaction(this.pool, async (tx) => {
        const rows = await deleteUnusedDevices(tx, unseenSince, BATCH);
        await recordEvents(
          tx,
          rows
            .filter((d) => d.active)
            .map((d) => ({
              type: 'device.deactivated' as const,
              userId: d.userId,
              data: {
                userId: d.userId,
                deviceId: d.id,
                installationId: d.installationId,
                platform: d.platform,
                reason: 'stale',
                removed: true,
              },
            })),
          now,
        );
        return rows;
      });
      const stale = gone.filter((d) => d.active).length;
      const deactivated = gone.length - stale;
      result.deactivated += deactivated;
      result.stale += stale;
      if (deactivated > 0) this.removed.inc({ reason: 'deactivated' }, deactivated);
      if (stale > 0) this.removed.inc({ reason: 'stale' }, stale);
      if (deactivated + stale < BATCH) return result;
    }
  }
}
