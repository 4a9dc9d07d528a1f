import { DomainError } from '@nudge/config';
import { queryRows, type QueryExecutor } from '@nudge/queue';

// The statements on `idempotency_keys`, the table of the API's Idempotency-Key
// replays: only IdempotencyInterceptor writes it, always in the transaction of
// the request it guards.

/** The request that first used a key (its hash), and what it was answered. */
export interface IdempotencyRecord {
  requestHash: string;
  statusCode: number;
  response: unknown;
}

/**
 * Takes the key for this request, or returns the record of the request that
 * took it. The INSERT waits on another transaction's uncommitted claim of the
 * same key (the primary key): that request's outcome decides — committed, its
 * record comes back; rolled back, the key is this request's. The row is
 * written with a placeholder answer that `storeAnswer` replaces before commit,
 * so no committed row ever lacks its answer.
 */
export async function claimKey(
  tx: QueryExecutor,
  claim: { principal: string; key: string; requestHash: string; now: Date },
): Promise<IdempotencyRecord | null> {
  const inserted = await queryRows(
    tx,
    `INSERT INTO idempotency_keys (user_id, key, request_hash, status_code, response, created_at)
     VALUES ($1, $2, $3, 0, 'null', $4) ON CONFLICT DO NOTHING RETURNING 1`,
    [claim.principal, claim.key, claim.requestHash, claim.now],
  );
  if (inserted.length > 0) return null;
  const [record] = await queryRows<IdempotencyRecord>(
    tx,
    `SELECT request_hash AS "requestHash", status_code AS "statusCode", response
       FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
    [claim.principal, claim.key],
  );
  // Keys are never deleted, so the row that conflicted is there; should that change, the client retries.
  if (!record) throw DomainError.conflict('This Idempotency-Key is being released; retry the request.');
  return record;
}

/** The answer to replay, written in the transaction that claimed the key. */
export async function storeAnswer(
  tx: QueryExecutor,
  answer: { principal: string; key: string; statusCode: number; response: unknown },
): Promise<void> {
  await tx.query(`UPDATE idempotency_keys SET status_code = $3, response = $4 WHERE user_id = $1 AND key = $2`, [
    answer.principal,
    answer.key,
    answer.statusCode,
    JSON.stringify(answer.response ?? null),
  ]);
}

/** Removes a principal's keys, and with them the answers that hold its data. */
export async function forgetKeys(tx: QueryExecutor, principal: string): Promise<void> {
  await tx.query(`DELETE FROM idempotency_keys WHERE user_id = $1`, [principal]);
}
