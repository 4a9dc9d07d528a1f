import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock, DomainError } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { occurrenceOfJob, SEND_REMINDER } from '@nudge/reminders';
import {
  cancelJob,
  getJob,
  InvalidQueueQueryError,
  type Job,
  type JobStatus,
  listJobs,
  pauseKind,
  pausedKinds,
  queueStats,
  resumeKind,
  retryDeadJobs,
  retryJob,
  throughputByMinute,
} from '@nudge/queue';
import { NUDGE_JOB_KINDS } from './job-kinds.js';

const SECRET_KEY = /token|secret|password|authorization|credential|private/i;

/** Payloads are shown to operators with anything that looks like a secret masked. */
export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, SECRET_KEY.test(key) && inner !== null ? '[masked]' : maskSecrets(inner)]),
    );
  }
  return value;
}

function shown<T extends Job>(job: T): T {
  return { ...job, payload: maskSecrets(job.payload) };
}

/**
 * The operators' view of the queue: libs/queue's ops functions on the
 * shared pool, with their answers turned into domain errors.
 */
@Injectable()
export class QueueOpsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async stats() {
    const now = this.clock.now();
    const byKind = await queueStats(this.pool, now);
    const from = new Date(Math.floor(now.getTime() / 60_000) * 60_000 - 59 * 60_000);
    const rows = await throughputByMinute(this.pool, from, now);
    return {
      generatedAt: now.toISOString(),
      kinds: Object.entries(byKind).map(([kind, stats]) => ({ kind, ...stats })),
      lastHourByMinute: rows.map((r) => ({ minute: r.minute.toISOString(), succeeded: r.succeeded, failed: r.failed })),
    };
  }

  async list(query: { status?: JobStatus; kind?: string; limit: number; cursor?: string }) {
    try {
      const page = await listJobs(this.pool, query);
      return { items: page.items.map(shown), nextCursor: page.nextCursor };
    } catch (error) {
      if (error instanceof InvalidQueueQueryError) throw DomainError.invalid([{ path: 'cursor', message: error.message }]);
      throw error;
    }
  }

  async get(id: string) {
    const job = await getJob(this.pool, id);
    if (!job) throw DomainError.notFound('The job');
    if (job.kind !== SEND_REMINDER) return shown(job);
    const occurrence = await occurrenceOfJob(this.pool, job.id);
    return {
      ...shown(job),
      occurrence: occurrence && {
        reminderId: occurrence.reminderId,
        localDate: occurrence.localDate,
        purpose: occurrence.purpose,
        status: occurrence.status,
        reason: occurrence.reason,
        dueAt: occurrence.dueAt.toISOString(),
        earliestAt: occurrence.earliestAt.toISOString(),
        sentAt: occurrence.sentAt?.toISOString() ?? null,
        actedAt: occurrence.actedAt?.toISOString() ?? null,
      },
    };
  }

  async retry(id: string) {
    const result = await retryJob(this.pool, id, this.clock.now());
    if (result === 'not_found') throw DomainError.notFound('The job');
    if (result === 'conflict') throw DomainError.conflict('Only a dead or cancelled job can be retried.');
    return this.get(id);
  }

  async retryDead(kind: string) {
    return { retried: await retryDeadJobs(this.pool, kind, this.clock.now()) };
  }

  async pause(kind: string) {
    await this.assertKnownKind(kind);
    await pauseKind(this.pool, kind, this.clock.now());
    return { kind, paused: true };
  }

  async resume(kind: string) {
    await this.assertKnownKind(kind);
    await resumeKind(this.pool, kind);
    return { kind, paused: false };
  }

  /** One of Nudge's kinds, or one paused already (so that any pause can be undone); else 404 naming the kinds. */
  private async assertKnownKind(kind: string): Promise<void> {
    if (NUDGE_JOB_KINDS.has(kind)) return;
    if ((await pausedKinds(this.pool)).some((paused) => paused.kind === kind)) return;
    throw new DomainError('not_found', `No job kind is named "${kind}"; Nudge's kinds: ${[...NUDGE_JOB_KINDS].sort().join(', ')}.`);
  }

  async cancel(id: string) {
    const result = await cancelJob(this.pool, id, this.clock.now());
    if (result === 'not_found') throw DomainError.notFound('The job');
    if (result === 'conflict') throw DomainError.conflict('Only a queued job can be cancelled.');
    return this.get(id);
  }
}
