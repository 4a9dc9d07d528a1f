import { queryRows, type QueryExecutor } from '@nudge/queue';
import { DEVICES } from '@nudge/users';

// Reads of the delivery ledger (push_deliveries) for operators: a user's
// deliveries and the providers' health. The ledger's writes are in
// push-delivery.ts.

/** One ledger row as an operator sees it (no token: the device is named by id). */
export interface DeliveryRecord {
  jobId: string;
  deviceId: string | null;
  platform: string | null;
  provider: string | null;
  status: 'sending' | 'sent' | 'failed' | 'invalid_token' | 'skipped';
  /** The provider's answer (failed, invalid_token) or why nothing was sent (skipped). */
  reason: string | null;
  providerMessageId: string | null;
  attempts: number;
  createdAt: Date;
  updatedAt: Date;
}

// The ledger as a reminder's deliveries show it, one row per device a job
// reached or skipped, for the reminders lib's statement to join (a plain
// subquery, pulled up into the caller's join like a direct one).
export const DEVICE_DELIVERIES = `(
  SELECT pd.job_id, pd.platform, pd.provider, pd.status, pd.error, pd.skip_reason, pd.created_at, pd.updated_at, d.installation_id
    FROM push_deliveries pd LEFT JOIN ${DEVICES} d ON d.id = pd.device_id)`;

/** Those of these jobs that reached at least one device (a `sent` row), in one statement. */
export async function jobsThatReachedADevice(db: QueryExecutor, jobIds: readonly string[]): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const rows = await queryRows<{ jobId: string }>(
    db,
    `SELECT DISTINCT job_id::text AS "jobId" FROM push_deliveries WHERE job_id = ANY($1::bigint[]) AND status = 'sent'`,
    [jobIds],
  );
  return new Set(rows.map((r) => r.jobId));
}

/** Every ledger row of these jobs, by job and then device order of creation. */
export async function deliveriesOfJobs(db: QueryExecutor, jobIds: readonly string[]): Promise<DeliveryRecord[]> {
  if (jobIds.length === 0) return [];
  return queryRows<DeliveryRecord>(
    db,
    `SELECT job_id::text AS "jobId", device_id::text AS "deviceId", platform, provider, status,
            COALESCE(skip_reason, error) AS reason, provider_message_id AS "providerMessageId", attempts,
            created_at AS "createdAt", updated_at AS "updatedAt"
       FROM push_deliveries WHERE job_id = ANY($1::bigint[])
      ORDER BY job_id, created_at, id`,
    [jobIds],
  );
}

/** A job that wrote ledger rows for a user, at the time of its first row. */
export interface UserDeliveryJob {
  jobId: string;
  at: Date;
}

/**
 * The jobs that delivered (or skipped) something for a user, newest first by
 * (first row's time, job id), strictly before `before` when given: a page of
 * a keyset walk backwards. From push_deliveries_user_idx; a user has few rows.
 */
export async function userDeliveryJobs(
  db: QueryExecutor,
  userId: string,
  page: { before?: { at: Date; jobId: string }; limit: number },
): Promise<UserDeliveryJob[]> {
  return queryRows<UserDeliveryJob>(
    db,
    `SELECT job_id::text AS "jobId", date_trunc('milliseconds', min(created_at)) AS at
       FROM push_deliveries WHERE user_id = $1
      GROUP BY job_id
     HAVING $2::timestamptz IS NULL OR (date_trunc('milliseconds', min(created_at)), job_id) < ($2::timestamptz, $3::bigint)
      ORDER BY 2 DESC, 1 DESC
      LIMIT $4`,
    [userId, page.before?.at ?? null, page.before?.jobId ?? null, page.limit],
  );
}

export interface ProviderMinute {
  /** Start of the minute. */
  minute: Date;
  provider: string;
  sent: number;
  failed: number;
  invalidToken: number;
}

export interface ProviderAnswer {
  provider: string;
  status: 'failed' | 'invalid_token';
  /** The provider's answer as the ledger keeps it, e.g. `Unregistered` or `transient: 500 InternalServerError`. */
  answer: string;
  count: number;
}

/**
 * The ledger's sends in [from, to) by the minute they were first attempted
 * (push_deliveries_created_idx) and provider, with their final outcome so far;
 * and the failure answers seen most. Skipped rows are not sends and are left out.
 */
export async function deliveryHealth(
  db: QueryExecutor,
  from: Date,
  to: Date,
  topAnswers = 10,
): Promise<{ byMinute: ProviderMinute[]; answers: ProviderAnswer[] }> {
  const byMinute = await queryRows<ProviderMinute>(
    db,
    `SELECT date_trunc('minute', created_at) AS minute, provider,
            count(*) FILTER (WHERE status = 'sent')::integer AS sent,
            count(*) FILTER (WHERE status = 'failed')::integer AS failed,
            count(*) FILTER (WHERE status = 'invalid_token')::integer AS "invalidToken"
       FROM push_deliveries
      WHERE created_at >= $1 AND created_at < $2 AND provider IS NOT NULL
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [from, to],
  );
  const answers = await queryRows<ProviderAnswer>(
    db,
    `SELECT provider, status, COALESCE(error, '(no answer recorded)') AS answer, count(*)::integer AS count
       FROM push_deliveries
      WHERE created_at >= $1 AND created_at < $2 AND provider IS NOT NULL AND status IN ('failed', 'invalid_token')
      GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3
      LIMIT $3`,
    [from, to, topAnswers],
  );
  return { byMinute, answers };
}
