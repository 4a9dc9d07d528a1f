import { queryRows, type QueryExecutor } from '@nudge/queue';
import type { StoredAppCredentials } from './app-credentials.js';

// The statements on `apps` and `app_provider_failures`, the push lib's tables
// (docs/apps.md). An app's credential columns are jsonb: public parts in the
// clear, each secret sealed (app-credentials.ts).

export interface AppRow extends StoredAppCredentials {
  id: string;
  name: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A provider that rejected an app's credentials ('default': the environment's). */
export interface ProviderFailure {
  appId: string;
  provider: string;
  reason: string;
  since: Date;
  checkedAt: Date;
  /** The app's version when it was marked (0 for the default app): a PUT makes a new version, and clears the mark. */
  appVersion: number;
}

const APP_COLUMNS = `id, name, version, apns, fcm, expo, web_push AS "webPush", created_at AS "createdAt", updated_at AS "updatedAt"`;
const FAILURE_COLUMNS = `app_id AS "appId", provider, reason, since, checked_at AS "checkedAt", app_version AS "appVersion"`;

/**
 * Creates app `id` or replaces it: its name, and the sections given (a
 * section in `sections` set to null is removed, one absent is kept). Every
 * call is a new version, which the workers' provider cache keys on: the next
 * send builds the providers afresh. The app's failure marks go with the old
 * credentials. One transaction: the caller's executor must be a client in one.
 */
export async function putApp(
  tx: QueryExecutor,
  input: { id: string; name: string; sections: Partial<StoredAppCredentials> },
  now: Date,
): Promise<{ app: AppRow; created: boolean }> {
  const { sections } = input;
  const given = (key: keyof StoredAppCredentials) => key in sections;
  const json = (key: keyof StoredAppCredentials) => (sections[key] ? JSON.stringify(sections[key]) : null);
  const [row] = await queryRows<AppRow & { created: boolean }>(
    tx,
    `INSERT INTO apps (id, name, version, apns, fcm, expo, web_push, created_at, updated_at)
     VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (id) DO UPDATE SET
       name = EXCLUDED.name,
       version = apps.version + 1,
       apns = CASE WHEN $8 THEN EXCLUDED.apns ELSE apps.apns END,
       fcm = CASE WHEN $9 THEN EXCLUDED.fcm ELSE apps.fcm END,
       expo = CASE WHEN $10 THEN EXCLUDED.expo ELSE apps.expo END,
       web_push = CASE WHEN $11 THEN EXCLUDED.web_push ELSE apps.web_push END,
       updated_at = EXCLUDED.updated_at
     RETURNING ${APP_COLUMNS}, (xmax = 0) AS created`,
    [
      input.id,
      input.name,
      json('apns'),
      json('fcm'),
      json('expo'),
      json('webPush'),
      now,
      given('apns'),
      given('fcm'),
      given('expo'),
      given('webPush'),
    ],
  );
  await tx.query(`DELETE FROM app_provider_failures WHERE app_id = $1`, [input.id]);
  const { created, ...app } = row!;
  return { app, created };
}

export async function findApp(db: QueryExecutor, id: string): Promise<AppRow | undefined> {
  const [row] = await queryRows<AppRow>(db, `SELECT ${APP_COLUMNS} FROM apps WHERE id = $1`, [id]);
  return row;
}

export async function listApps(db: QueryExecutor): Promise<AppRow[]> {
  return queryRows<AppRow>(db, `SELECT ${APP_COLUMNS} FROM apps ORDER BY id`);
}

export async function listProviderFailures(db: QueryExecutor, appId?: string): Promise<ProviderFailure[]> {
  return appId === undefined
    ? queryRows<ProviderFailure>(db, `SELECT ${FAILURE_COLUMNS} FROM app_provider_failures ORDER BY app_id, provider`)
    : queryRows<ProviderFailure>(db, `SELECT ${FAILURE_COLUMNS} FROM app_provider_failures WHERE app_id = $1 ORDER BY provider`, [appId]);
}

/**
 * Marks each (app, provider) failing, or notes a re-check that failed again:
 * `since` stays while the app's version does, `checked_at` moves to now.
 */
export async function markProvidersFailing(
  db: QueryExecutor,
  marks: readonly { appId: string; provider: string; reason: string; appVersion: number }[],
  now: Date,
): Promise<void> {
  if (marks.length === 0) return;
  await db.query(
    `INSERT INTO app_provider_failures (app_id, provider, reason, since, checked_at, app_version)
     SELECT DISTINCT ON (m.app_id, m.provider) m.app_id, m.provider, m.reason, $5, $5, m.app_version
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS m(app_id, provider, reason, app_version)
     ON CONFLICT (app_id, provider) DO UPDATE SET
       reason = EXCLUDED.reason,
       since = CASE WHEN app_provider_failures.app_version = EXCLUDED.app_version THEN app_provider_failures.since ELSE EXCLUDED.since END,
       checked_at = EXCLUDED.checked_at,
       app_version = EXCLUDED.app_version`,
    [marks.map((m) => m.appId), marks.map((m) => m.provider), marks.map((m) => m.reason), marks.map((m) => m.appVersion), now],
  );
}

/** A send went through: the provider works for the app again. */
export async function clearProviderFailures(db: QueryExecutor, pairs: readonly { appId: string; provider: string }[]): Promise<void> {
  if (pairs.length === 0) return;
  await db.query(
    `DELETE FROM app_provider_failures f USING unnest($1::text[], $2::text[]) AS p(app_id, provider)
      WHERE f.app_id = p.app_id AND f.provider = p.provider`,
    [pairs.map((p) => p.appId), pairs.map((p) => p.provider)],
  );
}
