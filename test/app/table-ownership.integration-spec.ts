import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_DELIVERIES } from '@nudge/push';
import { JOB_STATES, QUEUED_JOBS, UNFINISHED_JOBS } from '@nudge/queue';
import { DEVICES, USER_SETTINGS } from '@nudge/users';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

// Each table has one owning lib (or app folder), and only code under that
// folder writes SQL naming the table; another lib calls the owner's exported
// function (the queue's pendingJobs, the users lib's devicesForDelivery),
// never `FROM jobs` itself. The scan reads every string and template literal
// of the non-test sources under libs/*/src and apps/*/src, so comments and
// identifiers are never mistaken for SQL, and every TypeORM call given an
// entity class (`tx.getRepository(UserEntity)`), the ORM's way to the table.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const OWNERS: Record<string, string> = {
  users: 'libs/users',
  devices: 'libs/users',
  user_preferences: 'libs/users',
  reminders: 'libs/reminders',
  reminder_occurrences: 'libs/reminders',
  reminder_jobs: 'libs/reminders',
  push_deliveries: 'libs/push',
  simulated_pushes: 'libs/push',
  push_pace: 'libs/push',
  apps: 'libs/push',
  app_provider_failures: 'libs/push',
  events: 'libs/events',
  webhooks: 'libs/events',
  jobs: 'libs/queue',
  job_runs: 'libs/queue',
  job_kind_pauses: 'libs/queue',
  job_dead_counts: 'libs/queue',
  job_dead_changes: 'libs/queue',
  job_success_counts: 'libs/queue',
  // The API's idempotency interceptor alone reads and writes it.
  idempotency_keys: 'apps/api/src/http',
  // TypeORM's own bookkeeping, read by the migration runner.
  migrations: 'libs/database',
};

// References still to move behind their owner, as `file:line table`. The goal
// is an empty list; a fixed one must leave it (the test fails on a stale entry).
const KNOWN_VIOLATIONS: string[] = [];

// A keyword that names a table next: FROM, JOIN, INTO, UPDATE, DELETE FROM,
// TRUNCATE, REFERENCES, and TABLE (CREATE / ALTER / LOCK TABLE). FROM and
// TRUNCATE may list several, comma-separated, each with an optional alias.
const KEYWORD =
  /\b(from|join|into|update|truncate|references|table)\s+((?:only\s+|if\s+(?:not\s+)?exists\s+)*)((?:(?:public\.)?"?[a-z_][a-z0-9_]*"?(?:\s+(?:as\s+)?(?!where\b|set\b|on\b|join\b|left\b|inner\b|cross\b|using\b|order\b|group\b|limit\b|for\b|returning\b|values\b|select\b|union\b|having\b|window\b)[a-z_][a-z0-9_]*)?\s*,\s*)*(?:public\.)?"?[a-z_][a-z0-9_]*"?)/gi;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const SCANNED = ['libs', 'apps'].flatMap((top) =>
  readdirSync(join(ROOT, top))
    .map((name) => join(ROOT, top, name, 'src'))
    .filter((src) => statSync(src, { throwIfNoEntry: false })?.isDirectory())
    .flatMap(sources),
);

/** The text of every string and template literal, with its position in the file. */
function literals(file: ts.SourceFile): { text: string; pos: number }[] {
  const found: { text: string; pos: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      found.push({ text: node.text, pos: node.getStart(file) });
    }
    node.forEachChild(visit);
  };
  visit(file);
  return found;
}

const PARSED = SCANNED.map((path) => ({
  file: relative(ROOT, path).split('\\').join('/'),
  source: ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true),
}));

/** TypeORM entity classes (`@Entity('users') class UserEntity`) and the tables they map. */
function entityTables(): Map<string, string> {
  const result = new Map<string, string>();
  for (const { source } of PARSED) {
    source.forEachChild((node) => {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      for (const decorator of ts.getDecorators(node) ?? []) {
        const call = decorator.expression;
        if (ts.isCallExpression(call) && call.expression.getText(source) === 'Entity') {
          const [table] = call.arguments;
          if (table && ts.isStringLiteral(table)) result.set(node.name.text, table.text);
        }
      }
    });
  }
  return result;
}

// An EntityManager's or DataSource's calls that read or write an entity's table.
const ENTITY_ACCESS =
  /^(getRepository|find|findBy|findOne|findOneBy|findOneOrFail|findOneByOrFail|findAndCount|count|countBy|exists|existsBy|save|insert|update|upsert|delete|remove|softDelete|increment|decrement|createQueryBuilder)$/;

/** Every `file:line table` where a source reaches a table through its entity class: `tx.getRepository(UserEntity)`. */
function entityReferences(): Reference[] {
  const entities = entityTables();
  const result: Reference[] = [];
  for (const { file, source } of PARSED) {
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
        const [first] = node.arguments;
        const table = first && ts.isIdentifier(first) ? entities.get(first.text) : undefined;
        if (table && ENTITY_ACCESS.test(name)) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          result.push({ where: `${file}:${line} ${table}`, table, owner: OWNERS[table], file });
        }
      }
      node.forEachChild(visit);
    };
    visit(source);
  }
  return result;
}

interface Reference {
  where: string;
  table: string;
  owner: string | undefined;
  file: string;
}

/** Every `file:line table` where a source names a table in SQL. */
function references(): Reference[] {
  const result: Reference[] = [];
  for (const { file, source } of PARSED) {
    for (const literal of literals(source)) {
      for (const match of literal.text.matchAll(KEYWORD)) {
        const names = match[3]!.split(',').map((item) =>
          item
            .trim()
            .split(/\s+/)[0]!
            .replace(/^public\./i, '')
            .replace(/"/g, '')
            .toLowerCase(),
        );
        for (const table of names) {
          if (!(table in OWNERS)) continue;
          // The line of the keyword: the literal's start plus the newlines before the match.
          const line =
            source.getLineAndCharacterOfPosition(literal.pos).line + 1 + (literal.text.slice(0, match.index).match(/\n/g)?.length ?? 0);
          result.push({ where: `${file}:${line} ${table}`, table, owner: OWNERS[table], file });
        }
      }
    }
  }
  return [...result, ...entityReferences()];
}

describe('table ownership', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('gives every table of the migrated database an owning folder', async () => {
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    const tables = rows.map((row) => row.name);
    expect(tables.length).toBeGreaterThan(10);
    expect(tables.filter((table) => !(table in OWNERS))).toEqual([]);
    expect(Object.keys(OWNERS).filter((table) => !tables.includes(table))).toEqual([]);
  });

  it('finds SQL naming tables in the sources it scans', () => {
    // Guards the scanner: if it read nothing, the next test would pass vacuously.
    const all = references();
    expect(all.some((ref) => ref.file === 'libs/queue/src/sql.ts' && ref.table === 'jobs')).toBe(true);
    expect(all.some((ref) => ref.file.startsWith('libs/users/') && ref.table === 'devices')).toBe(true);
    // And entity access: the users lib's own `getRepository(UserEntity)`.
    expect(entityReferences().some((ref) => ref.file === 'libs/users/src/users.service.ts' && ref.table === 'users')).toBe(true);
  });

  it("plans a join of an owner's published relation as the direct join it stands for (the subquery is pulled up)", async () => {
    // [relation, its join, the direct join it replaces]: the same plan, node for node.
    const cases: [string, string, string][] = [
      [
        'DEVICES',
        `unnest($1::uuid[]) k(id) JOIN ${DEVICES} devices ON devices.id = k.id`,
        `unnest($1::uuid[]) k(id) JOIN devices ON devices.id = k.id`,
      ],
      [
        'USER_SETTINGS',
        `unnest($1::text[]) k(id) JOIN ${USER_SETTINGS} users ON users.id = k.id`,
        `unnest($1::text[]) k(id) JOIN users ON users.id = k.id`,
      ],
      [
        'JOB_STATES',
        `unnest($1::bigint[]) k(id) JOIN ${JOB_STATES} jobs ON jobs.id = k.id`,
        `unnest($1::bigint[]) k(id) JOIN jobs ON jobs.id = k.id`,
      ],
      [
        'QUEUED_JOBS',
        `unnest($1::bigint[]) k(id) JOIN ${QUEUED_JOBS} jobs ON jobs.id = k.id`,
        `unnest($1::bigint[]) k(id) JOIN jobs ON jobs.id = k.id AND jobs.status = 'queued'`,
      ],
      [
        'UNFINISHED_JOBS',
        `unnest($1::bigint[]) k(id) JOIN ${UNFINISHED_JOBS} jobs ON jobs.id = k.id`,
        `unnest($1::bigint[]) k(id) JOIN jobs ON jobs.id = k.id AND jobs.status IN ('queued', 'running')`,
      ],
      [
        'DEVICE_DELIVERIES',
        `unnest($1::bigint[]) k(id) JOIN ${DEVICE_DELIVERIES} pd ON pd.job_id = k.id`,
        `unnest($1::bigint[]) k(id) JOIN push_deliveries pd ON pd.job_id = k.id LEFT JOIN devices d ON d.id = pd.device_id`,
      ],
    ];
    const plan = async (from: string) =>
      (await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) SELECT k.id FROM ${from}`, [[]])).rows
        .map((row) => row['QUERY PLAN'])
        .join('\n');
    for (const [name, joined, direct] of cases) {
      expect(await plan(joined), name).toBe(await plan(direct));
    }
  });

  it("ships the queue's schema in libs/queue: no project migration creates, alters or indexes its tables", () => {
    const queueTables = Object.keys(OWNERS).filter((table) => OWNERS[table] === 'libs/queue');
    const schemaStatement = new RegExp(`\\b(table|index\\s+\\w+\\s+on)\\s+(${queueTables.join('|')})\\b`, 'i');
    const migrations = readdirSync(join(ROOT, 'migrations')).filter((name) => name.endsWith('.ts'));
    const outside = migrations.flatMap((name) => {
      const path = join(ROOT, 'migrations', name);
      const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
      return literals(source)
        .filter((literal) => schemaStatement.test(literal.text))
        .map((literal) => `migrations/${name}:${source.getLineAndCharacterOfPosition(literal.pos).line + 1}`);
    });
    expect(outside).toEqual([]);
    // The steps are where the queue keeps them.
    const schema = readFileSync(join(ROOT, 'libs/queue/src/schema.ts'), 'utf8');
    expect(schema).toMatch(/CREATE TABLE jobs \(/);
  });

  it('has no lib or app reaching, by SQL or by entity, a table it does not own', () => {
    const outside = references()
      .filter((ref) => !ref.file.startsWith(`${ref.owner}/`))
      .map((ref) => ref.where);
    const unexpected = outside.filter((where) => !KNOWN_VIOLATIONS.includes(where));
    const stale = KNOWN_VIOLATIONS.filter((where) => !outside.includes(where));
    expect({ unexpected, stale }).toEqual({ unexpected: [], stale: [] });
  });
});
