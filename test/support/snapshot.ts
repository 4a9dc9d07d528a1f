import type pg from 'pg';

/**
 * Row count and an md5 of every row, per table of the schema (migrations
 * bookkeeping aside): two snapshots are equal exactly when no row was added,
 * removed or changed. For tests that claim a request wrote nothing.
 */
export async function databaseSnapshot(pool: pg.Pool): Promise<Record<string, string>> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'migrations'
      ORDER BY table_name`,
  );
  const parts = tables.map(
    ({ name }) =>
      `SELECT '${name}' AS name, count(*)::text || ':' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS sum FROM "${name}" t`,
  );
  const { rows } = await pool.query<{ name: string; sum: string }>(parts.join(' UNION ALL '));
  return Object.fromEntries(rows.map((r) => [r.name, r.sum]));
}
