import { type QueryExecutor, rowsOf } from '@nudge/queue';
import { DEFAULT_PACE_SETTINGS, type PaceGrant, type PaceSettings, type PaceState } from './pace.js';

// The statements on `push_pace` (migrations/1764664700000-PushPacing.ts): the
// steps of pace.ts in SQL, one statement per provider call group, so that
// every worker process takes from one bucket. They act at the database's
// clock_timestamp() ($now NULL): the bucket measures real seconds of the
// provider, shared by hosts whose clocks may differ, and a test's pinned
// calendar clock must not stop it from refilling. Tests pass $now to check
// the SQL against pace.ts.

// The bucket locked and brought to its instant `t`: the statement's `now_at`,
// or the bucket's last refresh if that is later (a Retry-After not yet over,
// or a concurrent statement whose clock read later):
// `new_rate` recovered, `available` refilled. $3 now, $4 burst seconds,
// $5 recovery seconds. The same steps as refilled() in pace.ts.
const REFILLED = `
  cur AS (
    SELECT p.*, n.now_at, greatest(n.now_at, p.refreshed_at) AS t
      FROM push_pace p, (SELECT coalesce($3::timestamptz, clock_timestamp()) AS now_at) n
     WHERE p.provider = $1 AND p.app_id = $2
       FOR UPDATE OF p
  ), elapsed AS (
    SELECT cur.*, extract(epoch FROM t - refreshed_at)::float8 AS seconds, coalesce(max_rate, ceiling) AS target FROM cur
  ), recovered AS (
    SELECT elapsed.*,
           CASE WHEN rate IS NULL THEN max_rate
                WHEN target IS NULL THEN rate
                ELSE least(target, rate + target / $5::float8 * seconds) END AS climbed
      FROM elapsed
  ), bucket AS (
    SELECT recovered.*,
           CASE WHEN max_rate IS NULL AND climbed >= ceiling THEN NULL ELSE climbed END AS new_rate,
           CASE WHEN max_rate IS NULL AND climbed >= ceiling THEN NULL ELSE ceiling END AS new_ceiling
      FROM recovered
  ), refilled AS (
    SELECT bucket.*,
           CASE WHEN new_rate IS NULL THEN 0::float8
                ELSE least(greatest(1, new_rate * $4::float8), tokens + new_rate * seconds) END AS available
      FROM bucket
  )`;

export interface PaceRow {
  provider: string;
  appId: string;
  maxRate: number | null;
  rate: number | null;
  tokens: number;
  throttles: number;
}

/**
 * Creates the bucket at its maximum, or brings a bucket's maximum in line
 * with this process's configuration (the last process started wins; all
 * should agree). A bucket whose maximum is removed and that is not
 * recovering from a 429 becomes unpaced.
 */
export async function ensurePace(
  db: QueryExecutor,
  key: { provider: string; appId: string },
  maxRate: number | null,
  settings: PaceSettings = DEFAULT_PACE_SETTINGS,
): Promise<void> {
  await db.query(
    `INSERT INTO push_pace (provider, app_id, max_rate, rate, tokens)
     VALUES ($1, $2, $3, $3, CASE WHEN $3::float8 IS NULL THEN 0 ELSE greatest(1, $3::float8 * $4::float8) END)
     ON CONFLICT (provider, app_id) DO UPDATE
       SET max_rate = EXCLUDED.max_rate,
           rate = CASE WHEN EXCLUDED.max_rate IS NULL AND push_pace.ceiling IS NULL THEN NULL ELSE push_pace.rate END
     WHERE push_pace.max_rate IS DISTINCT FROM EXCLUDED.max_rate`,
    [key.provider, key.appId, maxRate, settings.burstSeconds],
  );
}

/** take() of pace.ts on the shared row: up to `wanted` sends; null when the row does not exist (ensurePace first). */
export async function takeFromPace(
  db: QueryExecutor,
  key: { provider: string; appId: string },
  wanted: number,
  now: Date | null,
  settings: PaceSettings = DEFAULT_PACE_SETTINGS,
): Promise<PaceGrant | null> {
  const [row] = rowsOf<{ granted: number; available: number; rate: number | null; at_ms: number; lead_ms: number; resume_lead_ms: number }>(
    await db.query(
      `WITH ${REFILLED}, granted AS (
         SELECT refilled.*,
                CASE WHEN new_rate IS NULL THEN $6::int
                     ELSE least($6::int, greatest(0, floor(available + new_rate * ($7::float8 - extract(epoch FROM t - now_at)::float8) + 1e-9)))::int
                END AS granted
           FROM refilled
       ), queued AS (
         -- The turn of the sends not granted: after the promised ones and the turns handed out before.
         SELECT granted.*,
                CASE WHEN new_rate IS NOT NULL AND $6::int > granted
                     THEN greatest(t + (granted - available) / new_rate * interval '1 second', coalesce(queue_until, '-infinity'))
                          + ($6::int - granted) / new_rate * interval '1 second' END AS resume_at
           FROM granted
       ), windowed AS (
         SELECT queued.*, t - window_started_at >= interval '1 second' AS new_window FROM queued
       )
       UPDATE push_pace p
          SET rate = w.new_rate, ceiling = w.new_ceiling, refreshed_at = w.t, queue_until = coalesce(w.resume_at, w.queue_until),
              tokens = CASE WHEN w.new_rate IS NULL THEN 0 ELSE w.available - w.granted END,
              window_started_at = CASE WHEN w.new_window THEN w.t ELSE w.window_started_at END,
              window_sent = CASE WHEN w.new_window THEN w.granted ELSE w.window_sent + w.granted END,
              observed_rate = CASE WHEN w.new_window THEN w.window_sent / extract(epoch FROM w.t - w.window_started_at)::float8
                                   ELSE w.observed_rate END
         FROM windowed w
        WHERE p.provider = w.provider AND p.app_id = w.app_id
       RETURNING w.granted, w.available, w.new_rate AS rate, (extract(epoch FROM w.t) * 1000)::float8 AS at_ms,
                 (extract(epoch FROM w.t - w.now_at) * 1000)::float8 AS lead_ms,
                 coalesce(extract(epoch FROM w.resume_at - w.now_at) * 1000, 0)::float8 AS resume_lead_ms`,
      [key.provider, key.appId, now, settings.burstSeconds, settings.recoverySeconds, wanted, settings.maxWaitSeconds],
    ),
  );
  if (!row) return null;
  return {
    granted: row.granted,
    available: row.available,
    rate: row.rate,
    at: row.at_ms,
    leadMs: row.lead_ms,
    resumeLeadMs: row.resume_lead_ms,
  };
}

/** throttle() of pace.ts on the shared row: `count` sends answered 429; the bucket after it (`leadMs`: its refresh from now). */
export async function throttlePace(
  db: QueryExecutor,
  key: { provider: string; appId: string },
  count: number,
  retryAfterSeconds: number | null,
  now: Date | null,
  settings: PaceSettings = DEFAULT_PACE_SETTINGS,
): Promise<{ rate: number; tokens: number; leadMs: number } | null> {
  const [row] = rowsOf<{ rate: number; tokens: number; leadMs: number }>(
    await db.query(
      `WITH ${REFILLED}, based AS (
         SELECT refilled.*,
                coalesce(new_rate, greatest(observed_rate,
                         window_sent / greatest(1, extract(epoch FROM t - window_started_at)::float8))) AS base,
                coalesce(t - throttled_at < $8::float8 * interval '1 second', false) AS recent
           FROM refilled
       ), halved AS (
         SELECT based.*,
                CASE WHEN recent AND new_rate IS NOT NULL THEN new_rate ELSE greatest($9::float8, base / 2) END AS next_rate
           FROM based
       )
       UPDATE push_pace p
          SET rate = h.next_rate, refreshed_at = greatest(h.t, h.now_at + coalesce($7::float8, 0) * interval '1 second'),
              ceiling = CASE WHEN h.max_rate IS NOT NULL THEN NULL
                             WHEN h.recent AND h.new_ceiling IS NOT NULL THEN h.new_ceiling
                             ELSE greatest($9::float8, h.base) END,
              tokens = least(h.available, 0),
              throttles = h.throttles + $6::int,
              throttled_at = CASE WHEN h.recent THEN h.throttled_at ELSE h.t END
         FROM halved h
        WHERE p.provider = h.provider AND p.app_id = h.app_id
       RETURNING p.rate, p.tokens, (extract(epoch FROM p.refreshed_at - h.now_at) * 1000)::float8 AS "leadMs"`,
      [
        key.provider,
        key.appId,
        now,
        settings.burstSeconds,
        settings.recoverySeconds,
        count,
        retryAfterSeconds,
        settings.throttleGapSeconds,
        settings.floorRate,
      ],
    ),
  );
  return row ?? null;
}

/** Every bucket, for /metrics and operators. */
export async function listPaces(db: QueryExecutor): Promise<PaceRow[]> {
  return rowsOf<PaceRow>(
    await db.query(
      `SELECT provider, app_id AS "appId", max_rate AS "maxRate", rate, tokens, throttles::int AS throttles
         FROM push_pace ORDER BY provider, app_id`,
    ),
  );
}

/** The whole row as pace.ts sees it (tests compare the SQL's steps with pace.ts). */
export async function readPace(db: QueryExecutor, key: { provider: string; appId: string }): Promise<PaceState | null> {
  const [row] = rowsOf<PaceState>(
    await db.query(
      `SELECT max_rate AS "maxRate", rate, ceiling, tokens,
              (extract(epoch FROM refreshed_at) * 1000)::float8 AS "refreshedAt",
              (extract(epoch FROM queue_until) * 1000)::float8 AS "queueUntil",
              (extract(epoch FROM window_started_at) * 1000)::float8 AS "windowStartedAt",
              window_sent AS "windowSent", observed_rate AS "observedRate", throttles::int AS throttles,
              (extract(epoch FROM throttled_at) * 1000)::float8 AS "throttledAt"
         FROM push_pace WHERE provider = $1 AND app_id = $2`,
      [key.provider, key.appId],
    ),
  );
  return row ?? null;
}
