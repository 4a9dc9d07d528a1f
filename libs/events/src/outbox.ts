import { enqueueMany, queryRows, type QueryExecutor } from '@nudge/queue';
import type { NewEvent } from './event-types.js';

// The outbox: every state change that is announced writes its event rows here,
// through the caller's transaction, and in the same transaction one
// webhook_delivery job per subscribed webhook. A change that rolls back takes
// its events and their deliveries with it; one that commits cannot lose them.

export const WEBHOOK_DELIVERY = 'webhook_delivery';
/** Enough attempts at the queue's backoff (base 30 s, cap 6 h) to outlast the 24 h window, which ends a delivery first. */
export const WEBHOOK_DELIVERY_ATTEMPTS = 30;

export interface WebhookDeliveryPayload {
  webhookId: string;
  eventId: string;
}

/**
 * Writes `events` with created_at `now` and enqueues their deliveries: at
 * most two statements, whatever the number of events (the second only when a
 * webhook is subscribed). `db` must be the transaction of the change.
 */
export async function recordEvents(db: QueryExecutor, events: readonly NewEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  const deliveries = await queryRows<{ eventId: string; webhookId: string }>(
    db,
    `WITH input AS (
       SELECT e.value->>'type' AS type, e.value->>'userId' AS user_id, e.value->'data' AS data, e.ord
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(value, ord)
     ), written AS (
       INSERT INTO events (type, user_id, data, created_at)
       SELECT type, user_id, data, $2 FROM input ORDER BY ord
       RETURNING id, seq, type
     )
     SELECT w.id::text AS "eventId", h.id AS "webhookId"
       FROM written w JOIN webhooks h ON w.type = ANY(h.events) OR '*' = ANY(h.events)
      ORDER BY w.seq, h.id`,
    [JSON.stringify(events), now],
  );
  if (deliveries.length === 0) return;
  await enqueueMany(
    db,
    deliveries.map((d) => ({
      kind: WEBHOOK_DELIVERY,
      payload: d satisfies WebhookDeliveryPayload,
      idempotencyKey: `webhook:${d.webhookId}:${d.eventId}`,
      maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS,
    })),
    { now },
  );
}
