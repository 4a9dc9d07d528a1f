import { writeFileSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runSimulation, type SimResult } from './driver.js';
import { seedFrom } from './prng.js';

// The calendar simulation (issue #12, part 6): a population of users in
// many zones goes through weeks of calendar — DST changes in both
// hemispheres, quiet hours, travel and alias spellings, edits, disable and
// enable, deletes, done / snooze / skip, worker outages from minutes to days,
// provider 429 and 500 answers, jitter off then on — against the real API,
// worker and PostgreSQL on a clock the test moves. An oracle written apart
// from the production code (oracle.ts) states what each user should see.
//
//   SIM_USERS=2000 SIM_DAYS=120 npx vitest run --project integration test/simulation
//   SIM_SEED=<seed> replays a run; SIM_SEED=random explores a new one (unset: a fixed seed, so that CI is
//   deterministic). SIM_JITTER (seconds, default 120) is the spread of the second half; SIM_REPORT=<file> writes the figures as JSON;
//   SIM_TIMELINES=<dir> writes the timeline of every user with a violation;
//   SIM_IGNORE=<kind,…> leaves those violation kinds out of the verdict.

const USERS = Number(process.env.SIM_USERS ?? 300);
const DAYS = Number(process.env.SIM_DAYS ?? 60);
// The default seed found the last bug (a snooze of a disabled reminder accepted, then lapsing unseen).
// Explored with 0 violations after the fixes they led to: 300 × 60 at 2989772833, 3061228239, 20270301,
// 1743436629, 3999196745; 2000 × 120 at 20261203 (319,554 occurrences checked).
const DEFAULT_SEED = 2989772833;
const SEED = seedFrom(process.env.SIM_SEED, DEFAULT_SEED);
const JITTER = Number(process.env.SIM_JITTER ?? 120);
// SIM_SHARDS: shards run side by side, each an application and database of its own (even ones without
// jitter first, odd ones with). Only worth it on a machine with idle cores: steps are per shard.
const SHARDS = Math.max(1, Math.min(Number(process.env.SIM_SHARDS ?? 1), USERS));
// Scaled runs take long: about 1 s of wall time per 10 user-days on a small box; the limit is for a hang, with
// room for a loaded machine (the default size took over 540 s at load 10).
const TIMEOUT_MS = Math.max(900_000, USERS * DAYS * 60);

describe(`calendar simulation (SIM_SEED=${SEED})`, () => {
  const dbs: TestDatabase[] = [];
  let result: SimResult;

  beforeAll(async () => {
    for (let i = 0; i < SHARDS; i++) {
      const db = await createTestDatabase();
      dbs.push(db);
      // The simulation's own databases: commits need not wait for the disk
      // (durability is not under test here; the queue's own tests cover crashes).
      await db.pool.query(`ALTER DATABASE ${db.name} SET synchronous_commit = off`);
    }
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it(
    `${USERS} users × ${DAYS} days: every occurrence delivered once, on time, or skipped for an allowed reason`,
    async () => {
      result = await runSimulation(dbs, {
        seed: SEED,
        users: USERS,
        days: DAYS,
        jitterSeconds: JITTER,
        slackMs: 5 * 60_000,
        sweepEveryMs: 7 * 24 * 3600_000,
        syncEveryMs: 6 * 3600_000,
        concurrency: 24,
        log: (line) => console.log(line),
      });
      const { figures } = result;
      // SIM_IGNORE=kind,kind leaves violation kinds out of the verdict (they still count in the figures).
      const ignored = new Set((process.env.SIM_IGNORE ?? '').split(',').filter(Boolean));
      const violations = result.violations.filter((v) => !ignored.has(v.kind));
      console.log(`simulation figures (SIM_SEED=${SEED}):\n${JSON.stringify(figures, null, 2)}`);
      if (process.env.SIM_REPORT) {
        mkdirSync(new URL('.', `file://${process.env.SIM_REPORT}`).pathname, { recursive: true });
        writeFileSync(process.env.SIM_REPORT, JSON.stringify({ figures, violations: violations.slice(0, 500) }, null, 2));
      }
      if (violations.length > 0) {
        const users = [...new Set(violations.map((v) => v.userId))];
        const lines = [
          `${violations.length} violations in ${users.length} users — replay with SIM_SEED=${SEED} SIM_USERS=${USERS} SIM_DAYS=${DAYS}`,
        ];
        for (const v of violations.slice(0, 40)) {
          lines.push(`  ${v.kind} ${v.userId}${v.date ? ` ${v.date}` : ''} at ${new Date(v.at).toISOString()}: ${v.message}`);
        }
        const byKind = new Map<string, string>();
        for (const v of violations) if (!byKind.has(v.kind)) byKind.set(v.kind, v.userId);
        for (const userId of [...new Set(byKind.values())].slice(0, 4)) lines.push('', await result.timeline(userId));
        console.error(lines.join('\n'));
        if (process.env.SIM_TIMELINES) {
          mkdirSync(process.env.SIM_TIMELINES, { recursive: true });
          for (const userId of users) writeFileSync(`${process.env.SIM_TIMELINES}/${userId}.txt`, await result.timeline(userId));
        }
      }
      expect(violations.map((v) => `${v.kind} ${v.userId} ${v.date ?? ''}: ${v.message}`)).toEqual([]);
      expect(figures.occurrencesChecked).toBeGreaterThan(USERS * 5);
    },
    TIMEOUT_MS,
  );
});
