// The queue's OpenTelemetry spans (docs/tracing.md): `enqueue <kind>` where a
// job is added, `job <kind>` where a worker runs it, and the W3C trace context
// that crosses the table between them (jobs.trace_parent / jobs.trace_link).
// Only @opentelemetry/api: with no tracer provider registered every check
// below is a property read or two, no span is built and nothing is written
// to the job row (its trace columns stay NULL).
import {
  type Context,
  context,
  createContextKey,
  isSpanContextValid,
  type Link,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { SnoozeJob } from './errors.js';
import type { ClaimedJob, QueueClock } from './types.js';

export const tracer = trace.getTracer('nudge');

// What the API's global provider delegates to while nobody registered one.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether a tracer provider is registered (spans are recorded). */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return (provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider) !== NOOP_PROVIDER;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span context as a W3C `traceparent` header value. */
export function formatTraceparent(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A W3C `traceparent` value as a remote span context; undefined when absent or malformed. */
export function parseTraceparent(value: string | null | undefined): SpanContext | undefined {
  const match = value ? TRACEPARENT.exec(value.trim().toLowerCase()) : null;
  if (!match) return undefined;
  const span: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true };
  return isSpanContextValid(span) ? span : undefined;
}

// Set in the context a job's handler runs in: a job enqueued there links to
// this job instead of joining its trace (see StoredTrace).
const IN_JOB = createContextKey('nudge.queue.in-job');

/** The trace columns of a job row: at most one of them is set. */
export interface StoredTrace {
  /** The job's span is a child of this one: it was enqueued by a request (the trace a user started). */
  traceParent: string | null;
  /** The job's span starts a trace of its own, linked to this one: it was enqueued by another job (a reminder's next occurrence). */
  traceLink: string | null;
}

const UNTRACED: StoredTrace = { traceParent: null, traceLink: null };

/**
 * An `enqueue <kind>` span for jobs added within `ctx`, when a request or a
 * job is traced there; undefined otherwise. Call only while tracingEnabled().
 * A trace that the sampler dropped still gets a (non-recording) span, so the
 * job stores the trace with its not-sampled flag and its own span follows
 * that decision instead of starting a sampled trace of its own.
 */
export function startEnqueueSpan(kind: string, ctx: Context): Span | undefined {
  const around = trace.getSpan(ctx)?.spanContext();
  if (!around || !isSpanContextValid(around)) return undefined;
  return tracer.startSpan(`enqueue ${kind}`, { kind: SpanKind.PRODUCER, attributes: { 'nudge.job.kind': kind } }, ctx);
}

/** What to store with a job enqueued under `span` (an enqueue span) within `ctx`. */
export function storedTrace(span: Span | undefined, ctx: Context): StoredTrace {
  if (!span) return UNTRACED;
  const value = formatTraceparent(span.spanContext());
  return ctx.getValue(IN_JOB) === true ? { traceParent: null, traceLink: value } : { traceParent: value, traceLink: null };
}

/** Ends an enqueue span with the job ids it added (one id as nudge.job.id). */
export function endEnqueueSpan(span: Span | undefined, jobIds: readonly string[], error?: unknown): void {
  if (!span) return;
  if (jobIds.length === 1) span.setAttribute('nudge.job.id', jobIds[0]!);
  else span.setAttribute('nudge.job.count', jobIds.length);
  if (error !== undefined) failSpan(span, error);
  span.end();
}

/** Marks a span failed with `error`. */
export function failSpan(span: Span, error: unknown): void {
  const err = error instanceof Error ? error : new Error(String(error));
  span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
}

// The context each running job's handler works in, for batch handlers that
// must pass it on by hand (their jobs share one call, hence no active context).
const jobContexts = new WeakMap<ClaimedJob, Context>();

/**
 * The trace context of a running job (its `job <kind>` span): pass it where
 * work for this job leaves the handler's own async context (a batch's
 * deliveries, the next occurrence's enqueue). The active context when the job
 * is not traced.
 */
export function jobTraceContext(job: ClaimedJob): Context {
  return jobContexts.get(job) ?? context.active();
}

/** A `job <kind>` span and the context its handler runs in. */
export interface JobSpan {
  span: Span;
  context: Context;
}

/**
 * Starts the span of one attempt of `job`, claimed with `stored`, now on
 * `clock` (the worker's): a child of the request that enqueued it, or a new
 * trace linked to the job that planned it. Undefined when tracing is off (the
 * clock is not even read).
 */
export function startJobSpan(job: ClaimedJob, stored: StoredTrace | null, clock: QueueClock): JobSpan | undefined {
  if (!tracingEnabled()) return undefined;
  const nowMs = clock.now().getTime();
  const parent = parseTraceparent(stored?.traceParent);
  const linked = parseTraceparent(stored?.traceLink);
  const links: Link[] = linked ? [{ context: linked }] : [];
  const base = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  const span = tracer.startSpan(
    `job ${job.kind}`,
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'nudge.job.id': job.id,
        'nudge.job.kind': job.kind,
        'nudge.job.attempt': job.attempts,
        // How late the job started: the answer to "why did my 08:00 reminder arrive at 08:07?".
        'nudge.queue.wait_ms': Math.max(0, nowMs - job.runAt.getTime()),
      },
    },
    base,
  );
  const ctx = trace.setSpan(base.setValue(IN_JOB, true), span);
  jobContexts.set(job, ctx);
  return { span, context: ctx };
}

/** Ends a job's span: an error (not a snooze, which is an outcome the handler chose) marks it failed. */
export function endJobSpan(traced: JobSpan | undefined, error: unknown): void {
  if (!traced) return;
  if (error instanceof SnoozeJob) traced.span.setAttribute('nudge.job.snoozed', true);
  else if (error !== null && error !== undefined) failSpan(traced.span, error);
  traced.span.end();
}
