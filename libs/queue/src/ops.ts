import type pg from 'pg';
import { queryRows, type QueryExecutor, withClient } from './executor.js';
import { parseJobId, toDate, toJob, toJobRun, type JobRow, type JobRunRow } from './rows.js';
import * as SQL from './ops-sql.js';
import { JOB_STATUSES, type Job, type JobRun, type JobStatus } from './types.js';

export interface KindQueueStats {
  /** Queued and due (run_at <= now). */
  ready: number;
  /** Queued for later. */
  scheduled: number;
  running: number;
  /** Running past its lease: its worker is gone or stalled; the reaper will return it. */
  stuck: number;
  dead: number;
  /** Age of the oldest ready job (now - run_at), 0 when none is ready. */
  oldestReadyAgeSeconds: number;
  succeededLastHour: number;
  /** Failed attempts (retried, dead, lease expired) that finished in the last hour. */
  failedLastHour: number;
  /** Paused by an operator (pauseKind): no worker claims it until resumeKind. */
  paused: boolean;
}

function emptyStats(): KindQueueStats {
  return {
    ready: 0,
    scheduled: 0,
    running: 0,
    stuck: 0,
    dead: 0,
    oldestReadyAgeSeconds: 0,
    succeededLastHour: 0,
    failedLastHour: 0,
    paused: false,
  };
}

export interface GaugeRow {
  kind: string;
  ready: number;
  oldest_ready: Date | string | null;
  running: number;
  stuck: number;
  dead: number;
  paused: boolean;
  /** When the longest-running started job of the kind started. */
  oldest_running: Date | string | null;
}

interface PoolLike {
  connect(): Promise<{ query(text: string, params?: unknown[]): Promise<unknown>; release(): void }>;
  totalCount: number;
}

function isPool(executor: QueryExecutor): executor is QueryExecutor & PoolLike {
  return typeof (executor as Partial<PoolLike>).connect === 'function' && 'totalCount' in executor;
}

/**
 * The scrape-time numbers (ready, oldest ready, running, stuck, dead) per
 * kind, one statement. The planner cannot know that queued rows are the
 * future ones and finished rows the past ones (it multiplies the two
 * selectivities), so it overestimates "queued and due" and may choose to scan
 * the whole table. Given a pg Pool, the statement runs with sequential scans
 * disabled, which leaves it the partial indexes.
 */
export async function queueGauges(executor: QueryExecutor, now: Date): Promise<GaugeRow[]> {
  if (!isPool(executor)) return queryRows<GaugeRow>(executor, SQL.GAUGES, [now]);
  return withClient(executor as unknown as pg.Pool, async (client) => {
    try {
      await client.query('BEGIN READ ONLY; SET LOCAL enable_seqscan = off');
      const rows = await queryRows<GaugeRow>(client, SQL.GAUGES, [now]);
      await client.query('COMMIT');
      return rows;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** Per kind, for the ops page. Kinds with nothing to report (and not paused) are absent. */
export async function queueStats(executor: QueryExecutor, now: Date): Promise<Record<string, KindQueueStats>> {
  const hourAgo = new Date(now.getTime() - 3_600_000);
  // Sequential: the executor may be a single connection.
  const gauges = await queueGauges(executor, now);
  const scheduled = await queryRows<{ kind: string; scheduled: number }>(executor, SQL.SCHEDULED_BY_KIND, [now]);
  const succeeded = await queryRows<{ kind: string; succeeded: number }>(executor, SQL.SUCCEEDED_SINCE, [hourAgo]);
  const failed = await queryRows<{ kind: string; failed: number }>(executor, SQL.FAILED_SINCE, [hourAgo]);

  const stats: Record<string, KindQueueStats> = {};
  const of = (kind: string) => (stats[kind] ??= emptyStats());
  for (const g of gauges) {
    const s = of(g.kind);
    s.ready += Number(g.ready);
    s.running += Number(g.running);
    s.stuck += Number(g.stuck);
    s.dead += Number(g.dead);
    if (g.paused) s.paused = true;
    if (g.oldest_ready !== null) {
      s.oldestReadyAgeSeconds = Math.max(0, (now.getTime() - toDate(g.oldest_ready).getTime()) / 1000);
    }
  }
  for (const r of scheduled) of(r.kind).scheduled = Number(r.scheduled);
  for (const r of succeeded) of(r.kind).succeededLastHour = Number(r.succeeded);
  for (const r of failed) of(r.kind).failedLastHour = Number(r.failed);
  return Object.fromEntries(Object.entries(stats).sort(([a], [b]) => a.localeCompare(b)));
}

/** A bad `cursor` or `status` in listJobs: the caller's input, a 400. */
export class InvalidQueueQueryError extends Error {
  override name = 'InvalidQueueQueryError';
}

export interface ListJobsQuery {
  status?: JobStatus;
  kind?: string;
  /** 1 to 500. */
  limit: number;
  /** Opaque, from a previous page's nextCursor. */
  cursor?: string | null;
}

export interface JobPage {
  items: Job[];
  nextCursor: string | null;
}

function encodeCursor(id: string): string {
  return Buffer.from(`j:${id}`).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.startsWith('j:') ? parseJobId(text.slice(2)) : null;
  if (!id) throw new InvalidQueueQueryError('cursor is not one this API returned');
  return id;
}

/** Jobs newest first (by id), optionally of one status and/or kind. */
export async function listJobs(executor: QueryExecutor, query: ListJobsQuery): Promise<JobPage> {
  if (query.status !== undefined && !JOB_STATUSES.includes(query.status)) {
    throw new InvalidQueueQueryError(`status must be one of ${JOB_STATUSES.join(', ')}`);
  }
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > 500) {
    throw new InvalidQueueQueryError('limit must be an integer from 1 to 500');
  }
  const after = query.cursor ? decodeCursor(query.cursor) : null;
  const rows = await queryRows<JobRow>(executor, SQL.LIST_JOBS, [query.status ?? null, query.kind ?? null, after, query.limit + 1]);
  const page = rows.slice(0, query.limit).map((row) => toJob(row));
  const last = page[page.length - 1];
  return { items: page, nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : null };
}

export interface JobWithHistory extends Job {
  /**
   * Every attempt, oldest first: the attempts that did not succeed come from
   * job_runs; a successful attempt is read off the job row (it is not written
   * twice).
   */
  history: JobRun[];
}

export async function getJob(executor: QueryExecutor, id: string | number | bigint): Promise<JobWithHistory | null> {
  const jobId = parseJobId(id);
  if (!jobId) return null;
  const rows = await queryRows<JobRow>(executor, SQL.GET_JOB, [jobId]);
  if (!rows[0]) return null;
  const job = toJob(rows[0]);
  const runs = await queryRows<JobRunRow>(executor, SQL.JOB_RUNS, [jobId]);
  return { ...job, history: withSuccess(job, runs.map(toJobRun)) };
}

/** Several jobs by id (ids that are not job ids, or jobs pruned since, are absent), keyed by id. */
export async function getJobs(executor: QueryExecutor, ids: readonly (string | number | bigint)[]): Promise<Map<string, Job>> {
  const valid = ids.map((id) => parseJobId(id)).filter((id): id is string => id !== null);
  if (valid.length === 0) return new Map();
  const rows = await queryRows<JobRow>(executor, SQL.GET_JOBS, [valid]);
  return new Map(rows.map((row) => toJob(row)).map((job) => [job.id, job]));
}

export interface DueMinute {
  /** Start of the minute. */
  minute: Date;
  kind: string;
  /** Queued jobs whose run_at falls in that minute. */
  due: number;
}

/** Queued jobs coming due in [from, to), per minute and kind, oldest first; minutes with none are absent. */
export async function dueByMinute(executor: QueryExecutor, from: Date, to: Date): Promise<DueMinute[]> {
  const rows = await queryRows<{ minute: Date | string; kind: string; due: number }>(executor, SQL.DUE_BY_MINUTE, [from, to]);
  return rows.map((r) => ({ minute: toDate(r.minute), kind: r.kind, due: r.due }));
}

export interface ThroughputMinute {
  /** Start of the minute. */
  minute: Date;
  /** Jobs that succeeded in that minute. */
  succeeded: number;
  /** Runs that failed, went dead or lost their lease in that minute. */
  failed: number;
}

/** Finished jobs and failed runs in [from, to], per minute, oldest first; minutes with none are absent. */
export async function throughputByMinute(executor: QueryExecutor, from: Date, to: Date): Promise<ThroughputMinute[]> {
  const rows = await queryRows<{ minute: Date | string; succeeded: number; failed: number }>(executor, SQL.THROUGHPUT_BY_MINUTE, [
    from,
    to,
  ]);
  return rows.map((r) => ({ minute: toDate(r.minute), succeeded: r.succeeded, failed: r.failed }));
}

/** Histories of several jobs in one query (e.g. a reminder's deliveries), keyed by job id. */
export async function getJobHistories(executor: QueryExecutor, jobs: readonly Job[]): Promise<Map<string, JobRun[]>> {
  const result = new Map<string, JobRun[]>(jobs.map((job) => [job.id, []]));
  if (jobs.length === 0) return result;
  const runs = await queryRows<JobRunRow>(executor, SQL.JOB_RUNS_MANY, [jobs.map((job) => job.id)]);
  for (const run of runs) result.get(String(run.job_id))?.push(toJobRun(run));
  for (const job of jobs) result.set(job.id, withSuccess(job, result.get(job.id) ?? []));
  return result;
}

function withSuccess(job: Job, runs: JobRun[]): JobRun[] {
  if (job.status !== 'succeeded' || !job.finishedAt) return runs;
  return [
    ...runs,
    {
      attempt: job.attempts,
      worker: job.lockedBy,
      startedAt: job.lockedAt,
      finishedAt: job.finishedAt,
      outcome: 'succeeded',
      error: null,
      nextRunAt: null,
    },
  ];
}

export type RetryJobResult = 'retried' | 'not_found' | 'conflict';
export type CancelJobResult = 'cancelled' | 'not_found' | 'conflict';

/** A dead or cancelled job back to queued, attempts reset, ready at `now`. Any other status: 'conflict'. */
export async function retryJob(executor: QueryExecutor, id: string | number | bigint, now: Date): Promise<RetryJobResult> {
  const jobId = parseJobId(id);
  if (!jobId) return 'not_found';
  const [row] = await queryRows<{ changed: number; status: JobStatus | null }>(executor, SQL.RETRY_JOB, [jobId, now]);
  if (row && Number(row.changed) > 0) return 'retried';
  return row?.status ? 'conflict' : 'not_found';
}

/**
 * A queued job (due or scheduled) to cancelled. A running job is NOT
 * cancelled ('conflict'): its handler may already be talking to a provider,
 * and a cancel that cannot stop it would only hide what happened. Finished
 * jobs: 'conflict'.
 */
export async function cancelJob(executor: QueryExecutor, id: string | number | bigint, now: Date): Promise<CancelJobResult> {
  const jobId = parseJobId(id);
  if (!jobId) return 'not_found';
  const [row] = await queryRows<{ changed: number; status: JobStatus | null }>(executor, SQL.CANCEL_JOB, [jobId, now]);
  if (row && Number(row.changed) > 0) return 'cancelled';
  return row?.status ? 'conflict' : 'not_found';
}

/** Cancels the queued job holding exactly this idempotency key, if any. Returns the cancelled ids. */
export async function cancelPendingByKey(executor: QueryExecutor, key: string, now: Date): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(executor, SQL.CANCEL_QUEUED_BY_KEY, [key, now]);
  return rows.map((r) => String(r.id));
}

/** Cancels every queued job whose key starts with `prefix` (e.g. `reminder:<id>:`). */
export async function cancelPendingByKeyPrefix(executor: QueryExecutor, prefix: string, now: Date): Promise<string[]> {
  if (prefix.length === 0) throw new RangeError('cancelPendingByKeyPrefix: an empty prefix would cancel every keyed job');
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await queryRows<{ id: string }>(executor, SQL.CANCEL_QUEUED_BY_KEY_PREFIX, [pattern, now]);
  return rows.map((r) => String(r.id));
}

/** Cancels those of `ids` that are still queued. Returns the cancelled ids. */
export async function cancelJobs(executor: QueryExecutor, ids: readonly (string | number | bigint)[], now: Date): Promise<string[]> {
  const valid = ids.map(parseJobId).filter((id): id is string => id !== null);
  if (valid.length === 0) return [];
  const rows = await queryRows<{ id: string }>(executor, SQL.CANCEL_QUEUED_BY_IDS, [valid, now]);
  return rows.map((r) => String(r.id));
}

/** Bulk retry: every dead job of `kind` back to queued (attempts reset), ready at `now`. Returns how many. */
export async function retryDeadJobs(executor: QueryExecutor, kind: string, now: Date): Promise<number> {
  const [row] = await queryRows<{ retried: number }>(executor, SQL.RETRY_DEAD_OF_KIND, [kind, now]);
  return Number(row?.retried ?? 0);
}

export interface PausedKind {
  kind: string;
  pausedAt: Date;
}

/**
 * Stops every worker from claiming jobs of `kind`, from its next claim on
 * (jobs already claimed run to their end), until resumeKind. Stored in the
 * database: it holds across restarts. False if it was paused already.
 */
export async function pauseKind(executor: QueryExecutor, kind: string, now: Date): Promise<boolean> {
  checkPausableKind(kind);
  const rows = await queryRows<{ kind: string }>(executor, SQL.PAUSE_KIND, [kind, now]);
  return rows.length > 0;
}

/** Lets workers claim `kind` again (and wakes them). False if it was not paused. */
export async function resumeKind(executor: QueryExecutor, kind: string): Promise<boolean> {
  checkPausableKind(kind);
  const [row] = await queryRows<{ resumed: number }>(executor, SQL.RESUME_KIND, [kind]);
  return Number(row?.resumed ?? 0) > 0;
}

export async function pausedKinds(executor: QueryExecutor): Promise<PausedKind[]> {
  const rows = await queryRows<{ kind: string; paused_at: Date | string }>(executor, SQL.PAUSED_KINDS, []);
  return rows.map((r) => ({ kind: r.kind, pausedAt: toDate(r.paused_at) }));
}

function checkPausableKind(kind: string): void {
  if (typeof kind !== 'string' || kind.length === 0 || kind.length > 200) {
    throw new InvalidQueueQueryError('kind must be a string of 1 to 200 characters');
  }
}
