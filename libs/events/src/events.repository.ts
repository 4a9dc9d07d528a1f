import { queryRows, type QueryExecutor } from '@nudge/queue';
import type { EventRecord } from './event-types.js';

// The statements on `events` and `webhooks` (beside the outbox's insert in
// outbox.ts). The events lib owns both tables.

export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Where a feed reader stands: the last event it was given, in the feed's order (transaction, then sequence). */
export interface FeedPosition {
  txId: string;
  seq: string;
}

const WEBHOOK_COLUMNS = `id, url, events, secret, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** Creates or replaces a webhook; `secret` null keeps the stored one. Says whether it was created. */
export async function upsertWebhook(
  db: QueryExecutor,
  hook: { id: string; url: string; events: string[]; secret: string | null },
  now: Date,
  generatedSecret: string,
): Promise<WebhookRow & { created: boolean }> {
  const [row] = await queryRows<WebhookRow & { created: boolean }>(
    db,
    `INSERT INTO webhooks (id, url, events, secret, created_at, updated_at)
     VALUES ($1, $2, $3::text[], COALESCE($4, $5), $6, $6)
     ON CONFLICT (id) DO UPDATE
        SET url = EXCLUDED.url, events = EXCLUDED.events, secret = COALESCE($4, webhooks.secret), updated_at = EXCLUDED.updated_at
     RETURNING ${WEBHOOK_COLUMNS}, (xmax = 0) AS created`,
    [hook.id, hook.url, hook.events, hook.secret, generatedSecret, now],
  );
  return row!;
}

export async function findWebhook(db: QueryExecutor, id: string): Promise<WebhookRow | null> {
  const [row] = await queryRows<WebhookRow>(db, `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1`, [id]);
  return row ?? null;
}

export async function listWebhooks(db: QueryExecutor): Promise<WebhookRow[]> {
  return queryRows<WebhookRow>(db, `SELECT ${WEBHOOK_COLUMNS} FROM webhooks ORDER BY id`);
}

/** True when it existed. Its queued deliveries find it gone and end (see WebhookDeliveryHandler). */
export async function deleteWebhook(db: QueryExecutor, id: string): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(db, `DELETE FROM webhooks WHERE id = $1 RETURNING id`, [id]);
  return rows.length > 0;
}

/** One event and the webhook it goes to, for a delivery; null when either is gone. */
export async function deliveryOf(
  db: QueryExecutor,
  webhookId: string,
  eventId: string,
): Promise<{ event: EventRecord; url: string; secret: string } | null> {
  const [row] = await queryRows<EventRecord & { url: string; secret: string }>(
    db,
    `SELECT e.id::text AS id, e.type, e.created_at AS "createdAt", e.user_id AS "userId", e.data, h.url, h.secret
       FROM events e JOIN webhooks h ON h.id = $1
      WHERE e.id = $2::uuid`,
    [webhookId, eventId],
  );
  if (!row) return null;
  const { url, secret, ...event } = row;
  return { event, url, secret };
}

/**
 * Events after `after`, in (transaction, sequence) order, of transactions
 * older than every transaction still running: a transaction that commits
 * later cannot add an event before a position already served.
 */
export async function eventsAfter(db: QueryExecutor, after: FeedPosition, limit: number): Promise<(EventRecord & FeedPosition)[]> {
  return queryRows<EventRecord & FeedPosition>(
    db,
    `SELECT e.id::text AS id, e.type, e.created_at AS "createdAt", e.user_id AS "userId", e.data,
            e.tx_id::text AS "txId", e.seq::text AS seq
       FROM events e
      WHERE (e.tx_id, e.seq) > ($1::xid8, $2::bigint) AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY e.tx_id, e.seq
      LIMIT $3`,
    [after.txId, after.seq, limit],
  );
}

/** Deletes events created before `before`, `batch` per statement; returns how many went. */
export async function pruneEvents(db: QueryExecutor, before: Date, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      `WITH doomed AS (SELECT seq FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2),
            gone AS (DELETE FROM events e USING doomed WHERE e.seq = doomed.seq RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before, batch],
    );
    const n = row?.n ?? 0;
    total += n;
    if (n < batch) return total;
  }
}
