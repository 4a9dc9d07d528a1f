import { type Context, context, type Span } from '@opentelemetry/api';
import { queryRows, type QueryExecutor } from './executor.js';
import { toJob, type JobRow } from './rows.js';
import type { PayloadOf } from './job-kinds.js';
import { ENQUEUE, ENQUEUE_MANY, JOBS_BY_KEYS } from './sql.js';
import { endEnqueueSpan, startEnqueueSpan, type StoredTrace, storedTrace, tracingEnabled } from './tracing.js';
import type { EnqueueResult, EnqueueSpec, Job } from './types.js';

export const DEFAULT_MAX_ATTEMPTS = 10;

export interface EnqueueOptions {
  /** created_at, and run_at when the spec has none. Default: the system clock. */
  now?: Date;
}

interface NormalisedSpec {
  kind: string;
  payload: string;
  idempotencyKey: string | null;
  runAt: Date;
  maxAttempts: number;
  priority: number;
}

function normalise(spec: EnqueueSpec, now: Date): NormalisedSpec {
  if (typeof spec.kind !== 'string' || spec.kind.length === 0) throw new TypeError('job kind must be a non-empty string');
  const maxAttempts = spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1000) {
    throw new RangeError(`maxAttempts must be an integer from 1 to 1000, got ${maxAttempts}`);
  }
  const priority = spec.priority ?? 0;
  if (!Number.isInteger(priority) || Math.abs(priority) > 1_000_000) {
    throw new RangeError(`priority must be an integer within ±1000000, got ${priority}`);
  }
  const runAt = spec.runAt ?? now;
  if (!(runAt instanceof Date) || Number.isNaN(runAt.getTime())) throw new TypeError('runAt must be a valid Date');
  const key = spec.idempotencyKey ?? null;
  if (key !== null && (typeof key !== 'string' || key.length === 0 || key.length > 512)) {
    throw new RangeError('idempotencyKey must be a string of 1 to 512 characters');
  }
  // Always serialised here: pg would turn a JS array into a Postgres array.
  const payload = JSON.stringify(spec.payload === undefined ? {} : spec.payload);
  return { kind: spec.kind, payload, idempotencyKey: key, runAt, maxAttempts, priority };
}

type CreatedRow = JobRow & { created: boolean };
/** What ENQUEUE_MANY returns of a row it inserted. */
type InsertedRow = Pick<JobRow, 'id' | 'idempotency_key'> & { created: boolean };

/**
 * Adds a job, in the executor's transaction when it is one. A spec whose
 * idempotency key is already held by a job (whatever its status, until that
 * row is pruned) adds nothing and returns that job with created = false.
 * Wakes listening workers with one NOTIFY, delivered at commit.
 */
export async function enqueue<K extends string, P extends PayloadOf<K> = PayloadOf<K>>(
  executor: QueryExecutor,
  spec: EnqueueSpec<P> & { kind: K },
  options: EnqueueOptions = {},
): Promise<EnqueueResult<P>> {
  const now = options.now ?? new Date();
  const s = normalise(spec, now);
  const ctx = tracingEnabled() ? (spec.traceContext ?? context.active()) : undefined;
  const span = ctx && startEnqueueSpan(s.kind, ctx);
  const stored = ctx ? storedTrace(span, ctx) : undefined;
  try {
    const result = await insertOne<P>(executor, s, now, stored);
    endEnqueueSpan(span, [result.job.id]);
    return result;
  } catch (error) {
    endEnqueueSpan(span, [], error);
    throw error;
  }
}

async function insertOne<P>(
  executor: QueryExecutor,
  s: NormalisedSpec,
  now: Date,
  stored: StoredTrace | undefined,
): Promise<EnqueueResult<P>> {
  const rows = await queryRows<CreatedRow>(executor, ENQUEUE, [
    s.kind,
    s.payload,
    s.idempotencyKey,
    s.runAt,
    s.maxAttempts,
    s.priority,
    now,
    stored?.traceParent ?? null,
    stored?.traceLink ?? null,
  ]);
  const row = rows.find((r) => r.created) ?? rows[0];
  if (row) return { job: toJob<P>(row), created: row.created === true };
  // A concurrent transaction committed the key after our snapshot was taken.
  const existing = await queryRows<JobRow>(executor, JOBS_BY_KEYS, [[s.idempotencyKey]]);
  if (!existing[0]) throw new Error(`enqueue: key ${s.idempotencyKey} conflicted but its job is gone; retry`);
  return { job: toJob<P>(existing[0]), created: false };
}

/** One enqueue span per distinct trace context of a call's specs, and what each spec stores. */
interface EnqueueTraces {
  stored: StoredTrace[];
  spans: { span: Span; specs: number[] }[];
}

function traceSpecs(specs: readonly EnqueueSpec[]): EnqueueTraces | undefined {
  if (!tracingEnabled()) return undefined;
  const active = context.active();
  const byContext = new Map<Context, { span: Span | undefined; stored: StoredTrace; specs: number[] }>();
  const stored = specs.map((spec, i) => {
    const ctx = spec.traceContext ?? active;
    let entry = byContext.get(ctx);
    if (!entry) {
      const span = startEnqueueSpan(spec.kind, ctx);
      entry = { span, stored: storedTrace(span, ctx), specs: [] };
      byContext.set(ctx, entry);
    }
    entry.specs.push(i);
    return entry.stored;
  });
  const spans = [...byContext.values()].filter((e) => e.span !== undefined) as { span: Span; specs: number[] }[];
  return spans.length > 0 ? { stored, spans } : undefined;
}

/**
 * Adds many jobs in ONE statement (and one NOTIFY). Results are in the order
 * of `specs`; a key repeated within `specs` creates one job, reported as
 * created for its first occurrence only.
 */
export async function enqueueMany<K extends string, P extends PayloadOf<K> = PayloadOf<K>>(
  executor: QueryExecutor,
  specs: readonly (EnqueueSpec<P> & { kind: K })[],
  options: EnqueueOptions = {},
): Promise<EnqueueResult<P>[]> {
  if (specs.length === 0) return [];
  const now = options.now ?? new Date();
  const normalised = specs.map((spec) => normalise(spec, now));
  const traces = traceSpecs(specs);
  try {
    const results = await insertMany<P>(executor, normalised, now, traces?.stored);
    for (const { span, specs: of } of traces?.spans ?? []) endEnqueueSpan(span, [...new Set(of.map((i) => results[i]!.job.id))]);
    return results;
  } catch (error) {
    for (const { span } of traces?.spans ?? []) endEnqueueSpan(span, [], error);
    throw error;
  }
}

async function insertMany<P>(
  executor: QueryExecutor,
  normalised: NormalisedSpec[],
  now: Date,
  stored: StoredTrace[] | undefined,
): Promise<EnqueueResult<P>[]> {
  // Built by hand: the payloads are already JSON text, so they are spliced in
  // rather than parsed and stringified again. Trace columns only when traced
  // (a key missing from the JSON reads as NULL).
  const parts = normalised.map(
    (s, ord) =>
      `{"ord":${ord},"kind":${JSON.stringify(s.kind)},"payload":${s.payload},` +
      `"idempotency_key":${JSON.stringify(s.idempotencyKey)},"run_at":"${s.runAt.toISOString()}",` +
      `"max_attempts":${s.maxAttempts},"priority":${s.priority}${stored ? traceFields(stored[ord]!) : ''}}`,
  );
  const rows = await queryRows<InsertedRow>(executor, ENQUEUE_MANY, [`[${parts.join(',')}]`, now]);

  const byKey = new Map<string, InsertedRow | CreatedRow>();
  const unkeyed: InsertedRow[] = [];
  for (const row of rows) {
    if (row.idempotency_key === null) unkeyed.push(row);
    else if (row.created || !byKey.has(row.idempotency_key)) byKey.set(row.idempotency_key, row);
  }
  // Ids come from the sequence in insertion order, which follows `ord`.
  // (Compared as decimal strings: shorter is smaller, then text order; no BigInt per comparison.)
  unkeyed.sort((a, b) => {
    const x = String(a.id);
    const y = String(b.id);
    return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
  });

  // Keys that conflicted: the jobs holding them, read only when there are some.
  const missing = normalised.filter((s) => s.idempotencyKey !== null && !byKey.has(s.idempotencyKey));
  if (missing.length > 0) {
    const late = await queryRows<JobRow>(executor, JOBS_BY_KEYS, [missing.map((s) => s.idempotencyKey)]);
    for (const row of late) byKey.set(row.idempotency_key!, { ...row, created: false });
  }

  // A key repeated within `specs`: its first spec is the one inserted.
  const firstWithKey = new Map<string, NormalisedSpec>();
  for (const s of normalised) if (s.idempotencyKey !== null && !firstWithKey.has(s.idempotencyKey)) firstWithKey.set(s.idempotencyKey, s);

  const reported = new Set<string>();
  let next = 0;
  return normalised.map((s) => {
    if (s.idempotencyKey === null) {
      const row = unkeyed[next++];
      if (!row) throw new Error('enqueueMany: fewer rows inserted than specs without a key');
      return { job: insertedJob<P>(row.id, s, now), created: true };
    }
    const row = byKey.get(s.idempotencyKey);
    if (!row) throw new Error(`enqueueMany: key ${s.idempotencyKey} conflicted but its job is gone; retry`);
    const created = row.created && !reported.has(s.idempotencyKey);
    reported.add(s.idempotencyKey);
    return {
      job: row.created ? insertedJob<P>(row.id, firstWithKey.get(s.idempotencyKey)!, now) : toJob<P>(row as CreatedRow),
      created,
    };
  });
}

function traceFields(stored: StoredTrace): string {
  return `,"trace_parent":${JSON.stringify(stored.traceParent)},"trace_link":${JSON.stringify(stored.traceLink)}`;
}

/** A job this call inserted, as its row now reads: ENQUEUE_MANY returns only the id of such a row. */
function insertedJob<P>(id: string | number, s: NormalisedSpec, now: Date): Job<P> {
  return {
    id: String(id),
    kind: s.kind,
    // As stored: what JSON and jsonb keep of the payload (Dates become strings, undefined drops out).
    payload: JSON.parse(s.payload) as P,
    idempotencyKey: s.idempotencyKey,
    priority: s.priority,
    runAt: new Date(s.runAt.getTime()),
    attempts: 0,
    maxAttempts: s.maxAttempts,
    status: 'queued',
    lastError: null,
    lockedAt: null,
    lockedUntil: null,
    lockedBy: null,
    finishedAt: null,
    createdAt: new Date(now.getTime()),
    updatedAt: new Date(now.getTime()),
  };
}
