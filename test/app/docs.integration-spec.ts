import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configurationTable, VARIABLES, withConfigurationTable } from '@nudge/config';
import { createTestDatabase } from '../support/database.js';

// The README and docs/ are checked like code: the configuration page against
// the config schema (a variable written in the schema alone would otherwise
// drift from its docs), every relative link against the files it names, and
// every ```sql statement against a migrated database.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = join(ROOT, 'docs');
const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The text outside fenced code blocks, so that code is never read as links or headings. */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's anchors for a page's headings (`## Node.js 24 LTS` → `nodejs-24-lts`; repeats get -1, -2, …). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Targets of inline links and images, and of reference definitions. Code spans are dropped first. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '');
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

describe('docs/configuration.md', () => {
  const rows = [...read('docs/configuration.md').matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|([^|]*)\|/gm)].map((m) => ({
    name: m[1]!,
    defaultCell: m[2]!.trim(),
  }));

  it('lists exactly the variables of the config schema, in its order', () => {
    expect(rows.map((r) => r.name)).toEqual(VARIABLES.map((v) => v.name));
  });

  it('is the table rendered from the schema: defaults, ranges, allowed words, rules and meanings (npx tsx libs/config/src/cli/configuration-docs.ts)', () => {
    const page = read('docs/configuration.md');
    expect(page).toContain(configurationTable());
    expect(page).toBe(withConfigurationTable(page));
  });

  it("shows each integer's range and each choice's words from the schema, and no meaning restates a range of its own", () => {
    const accepts = (name: string) => read('docs/configuration.md').match(new RegExp(`^\\| \`${name}\` \\|[^|]*\\| ([^|]*) \\|`, 'm'))?.[1];
    expect(accepts('JOB_RETENTION_DAYS')).toBe('1–3650');
    expect(accepts('EVENTS_RETENTION_HOURS')).toBe('25–87600');
    expect(accepts('ROLE')).toBe('`all`, `api`, `worker`');
    expect(accepts('LOG_LEVEL')).toBe('`trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`');
    expect(accepts('APNS_KEY_FILE')).toMatch(/needs `APNS_KEY_ID`, `APNS_TEAM_ID`, `APNS_TOPIC`/);
    for (const variable of VARIABLES) {
      if (variable.kind.min !== undefined) expect(accepts(variable.name), variable.name).toBe(`${variable.kind.min}–${variable.kind.max}`);
      // A range in the prose would be a second copy that can drift from the declared one.
      expect(variable.description, variable.name).not.toMatch(/\d\s*[–-]\s*\d/);
    }
  });

  it("shows each variable's default as the schema has it, and none where it has none", () => {
    for (const variable of VARIABLES) {
      const row = rows.find((r) => r.name === variable.name);
      if (!row) continue; // reported by the test above
      if (variable.default === undefined) expect(row.defaultCell, variable.name).toMatch(/^—/);
      else expect(row.defaultCell, variable.name).toBe(`\`${variable.default}\``);
    }
  });
});

describe('links in README.md, CHANGELOG.md and docs/', () => {
  it('finds the pages and their links (the checks below are not vacuous)', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/configuration.md', 'docs/reminders.md']));
    expect(linkTargets(read('README.md')).length).toBeGreaterThan(5);
  });

  it('points every relative link at a file that exists, and every anchor at a heading', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const target of linkTargets(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
        const [pathPart, fragment] = target.split('#', 2) as [string, string | undefined];
        const path = decodeURIComponent(pathPart.split('?')[0]!);
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no ${relative(ROOT, file)})`);
          continue;
        }
        if (fragment && file.endsWith('.md') && statSync(file).isFile() && !anchors(readFileSync(file, 'utf8')).has(fragment)) {
          broken.push(`${page}: ${target} (no heading #${fragment} in ${relative(ROOT, file)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('links every docs/ page from the README', () => {
    const linked = new Set(linkTargets(read('README.md')).map((t) => t.split('#')[0]));
    const unlinked = PAGES.filter((p) => p.startsWith('docs/') && !linked.has(p));
    expect(unlinked).toEqual([]);
  });
});

describe('the SQL in README.md and docs/', () => {
  // An operator at 3 AM copies these into psql: each must run against today's schema.
  const statements = PAGES.flatMap((page) =>
    [...read(page).matchAll(/^```sql\n([\s\S]*?)^```/gm)].flatMap((block) =>
      block[1]!
        .split('\n')
        .filter((line) => !/^\s*--/.test(line))
        .join('\n')
        .split(/;\s*(?:\n|$)/)
        .map((sql) => sql.trim())
        .filter(Boolean)
        .map((sql) => ({ page, sql })),
    ),
  );

  it('finds the statements (the check below is not vacuous)', () => {
    expect(statements.length).toBeGreaterThan(15);
    expect(new Set(statements.map((s) => s.page))).toContain('docs/operations.md');
  });

  it('runs every statement on a migrated database', async () => {
    const db = await createTestDatabase();
    try {
      const failures: string[] = [];
      for (const { page, sql } of statements) {
        // The docs' placeholder for "a reminder's id".
        const runnable = sql.replaceAll("'…'", "'00000000-0000-0000-0000-000000000000'");
        await db.pool.query(runnable).catch((error: Error) => failures.push(`${page}: ${sql.slice(0, 120)} → ${error.message}`));
      }
      expect(failures).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});
