import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Clock, LOGGER } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { type ClaimedJob, type JobContext, PermanentJobError, TransientJobError } from '@nudge/queue';
import { deliveryOf } from './events.repository.js';
import type { WebhookDeliveryPayload } from './outbox.js';
import { signatureHeader } from './signature.js';

/** A delivery keeps being retried (with the queue's backoff) until this long after its event; then it is dead. */
export const WEBHOOK_WINDOW_MS = 24 * 3_600_000;
/** Deliveries one worker process runs at once, in slots of their own (a receiver that is down cannot hold up pushes). */
export const WEBHOOK_CONCURRENCY = 10;
/** How long a receiver has to answer one POST. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Runs one `webhook_delivery` job: POSTs the event to the webhook, signed.
 * A 2xx ends it; any other answer, a network error or a timeout is retried
 * with backoff until 24 h after the event, then the job is dead (retryable
 * from /v1/ops/jobs). A webhook deleted, or an event pruned, meanwhile: the
 * job ends with nothing sent.
 */
@Injectable()
export class WebhookDeliveryHandler {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Pick<Logger, 'info'>,
  ) {}

  readonly handle = async (job: ClaimedJob<WebhookDeliveryPayload>, ctx?: Pick<JobContext, 'signal'>): Promise<void> => {
    const { webhookId, eventId } = job.payload;
    const delivery = await deliveryOf(this.pool, webhookId, eventId);
    if (!delivery) {
      this.logger.info(
        { jobId: job.id, kind: job.kind, attempt: job.attempts, webhookId, eventId },
        'webhook or event gone: nothing to deliver',
      );
      return;
    }
    const { event, url, secret } = delivery;
    const body = JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });
    const now = this.clock.now();
    const timeout = AbortSignal.timeout(WEBHOOK_TIMEOUT_MS);
    let failure: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Nudge-Webhooks/1',
          'nudge-event-id': event.id,
          'nudge-event-type': event.type,
          'nudge-signature': signatureHeader(secret, body, now),
        },
        // A redirect is the receiver's answer, not a new address to send the signed body to.
        redirect: 'manual',
        signal: ctx?.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout,
      });
      // The body is not read: a receiver that streams for ever cannot hold the slot.
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return;
      failure = `receiver answered ${response.status}`;
    } catch (error) {
      failure = timeout.aborted ? `no answer within ${WEBHOOK_TIMEOUT_MS} ms` : `request failed: ${(error as Error).message}`;
    }
    if (now.getTime() - event.createdAt.getTime() >= WEBHOOK_WINDOW_MS) {
      throw new PermanentJobError(`${failure}; gave up 24 h after the event`);
    }
    throw new TransientJobError(failure);
  };
}
