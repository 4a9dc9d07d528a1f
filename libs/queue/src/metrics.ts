import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueryExecutor } from './executor.js';
import { queueGauges } from './ops.js';
import { toDate } from './rows.js';
import { silentLogger, systemClock, type QueueClock, type QueueLogger } from './types.js';

export interface QueueMetricsOptions {
  registry: Registry;
  /** Enables the scrape-time gauges (ready, oldest ready age, running, stuck, dead), read with one grouped query. */
  executor?: QueryExecutor;
  clock?: QueueClock;
  logger?: QueueLogger;
  /** One query serves every gauge of a scrape, and scrapes closer than this share it. Default 1000. */
  cacheMs?: number;
  /**
   * The kinds whose gauges are reported even when they have no job (as 0), so
   * that a dashboard shows 0 rather than "no data", which reads as a broken
   * scrape. Kinds with jobs are reported whether listed or not.
   */
  kinds?: () => Iterable<string>;
}

type Child = { observe(value: number): void };

/**
 * The queue's Prometheus metrics. Create one per registry and hand it to
 * every Worker of the process. Counters are per process; the gauges read the
 * database, so any process's /metrics shows the whole queue.
 */
export class QueueMetrics {
  readonly completed: Counter<'kind'>;
  readonly failed: Counter<'kind' | 'error_class'>;
  readonly retried: Counter<'kind' | 'error_class'>;
  readonly deadTotal: Counter<'kind' | 'error_class'>;
  readonly snoozed: Counter<'kind'>;
  readonly reaped: Counter<'kind' | 'outcome'>;
  readonly leasesLost: Counter<'kind'>;
  readonly timedOut: Counter<'kind'>;
  /** This process's handlers still running past their kind's timeout (given-up ones included). */
  readonly pastTimeout: Gauge<'kind'>;
  readonly duration: Histogram<'kind' | 'outcome'>;
  readonly ready: Gauge<'kind'>;
  readonly oldestReadyAge: Gauge<'kind'>;
  readonly running: Gauge<'kind'>;
  readonly oldestRunningAge: Gauge<'kind'>;
  readonly stuck: Gauge<'kind'>;
  readonly dead: Gauge<'kind'>;
  readonly paused: Gauge<'kind'>;

  private readonly durationChildren = new Map<string, Child>();
  private executor: QueryExecutor | undefined;
  private kinds: (() => Iterable<string>) | undefined;
  private snapshot: Promise<void> | null = null;
  private snapshotAt = 0;

  constructor(private readonly options: QueueMetricsOptions) {
    this.executor = options.executor;
    this.kinds = options.kinds;
    const registers = [options.registry];
    this.completed = new Counter({
      name: 'queue_jobs_completed_total',
      help: 'Jobs that succeeded',
      labelNames: ['kind'],
      registers,
    });
    this.failed = new Counter({
      name: 'queue_jobs_failed_total',
      help: 'Attempts that failed (retried or dead)',
      labelNames: ['kind', 'error_class'],
      registers,
    });
    this.retried = new Counter({
      name: 'queue_jobs_retried_total',
      help: 'Failed attempts scheduled for a retry',
      labelNames: ['kind', 'error_class'],
      registers,
    });
    this.deadTotal = new Counter({
      name: 'queue_jobs_dead_total',
      help: 'Jobs that went dead',
      labelNames: ['kind', 'error_class'],
      registers,
    });
    this.snoozed = new Counter({
      name: 'queue_jobs_snoozed_total',
      help: 'Jobs put back for later without using an attempt',
      labelNames: ['kind'],
      registers,
    });
    this.reaped = new Counter({
      name: 'queue_jobs_reaped_total',
      help: 'Running jobs whose lease expired, by what became of them',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.leasesLost = new Counter({
      name: 'queue_leases_lost_total',
      help: 'Jobs this process held whose lease another took over',
      labelNames: ['kind'],
      registers,
    });
    this.timedOut = new Counter({
      name: 'queue_jobs_timed_out_total',
      help: "Attempts whose handler ran past its kind's timeout (signal aborted, attempt failed)",
      labelNames: ['kind'],
      registers,
    });
    this.pastTimeout = new Gauge({
      name: 'queue_jobs_past_timeout',
      help: "Handlers of this process still running past their kind's timeout (a hung handler holds its slot until it returns)",
      labelNames: ['kind'],
      registers,
    });
    this.duration = new Histogram({
      name: 'queue_job_duration_seconds',
      help: 'Handler run time',
      labelNames: ['kind', 'outcome'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 1, 2.5, 10, 30, 120],
      registers,
    });
    const collect = () => this.refresh();
    this.ready = new Gauge({ name: 'queue_jobs_ready', help: 'Queued jobs that are due', labelNames: ['kind'], registers, collect });
    this.oldestReadyAge = new Gauge({
      name: 'queue_oldest_ready_age_seconds',
      help: 'How long the oldest due job has waited',
      labelNames: ['kind'],
      registers,
      collect,
    });
    this.running = new Gauge({ name: 'queue_jobs_running', help: 'Jobs held by a worker', labelNames: ['kind'], registers, collect });
    this.oldestRunningAge = new Gauge({
      name: 'queue_oldest_running_age_seconds',
      help: 'How long the longest-running started job has run (a timed kind is bounded by timeout + grace + lease)',
      labelNames: ['kind'],
      registers,
      collect,
    });
    this.stuck = new Gauge({
      name: 'queue_jobs_stuck',
      help: 'Running jobs past their lease (the reaper will return them)',
      labelNames: ['kind'],
      registers,
      collect,
    });
    this.dead = new Gauge({ name: 'queue_jobs_dead', help: 'Dead jobs kept for inspection', labelNames: ['kind'], registers, collect });
    this.paused = new Gauge({
      name: 'queue_kind_paused',
      help: '1 for a kind an operator paused (no worker claims it)',
      labelNames: ['kind'],
      registers,
      collect,
    });
  }

  /** Where the scrape-time gauges read from, if not given at construction (e.g. a worker's pool). */
  useExecutor(executor: QueryExecutor): void {
    this.executor ??= executor;
  }

  /** The kinds always reported (see QueueMetricsOptions.kinds), if not given at construction (e.g. a worker's). */
  reportKinds(kinds: () => Iterable<string>): void {
    this.kinds ??= kinds;
  }

  /** A cached child: observing through it skips the label lookup on the hot path. */
  observeDuration(kind: string, outcome: string, seconds: number): void {
    const key = `${kind}\u0000${outcome}`;
    let child = this.durationChildren.get(key);
    if (!child) {
      child = this.duration.labels(kind, outcome);
      this.durationChildren.set(key, child);
    }
    child.observe(seconds);
  }

  private refresh(): Promise<void> {
    const executor = this.executor;
    if (!executor) return Promise.resolve();
    const cacheMs = this.options.cacheMs ?? 1000;
    if (this.snapshot && Date.now() - this.snapshotAt < cacheMs) return this.snapshot;
    this.snapshotAt = Date.now();
    const now = (this.options.clock ?? systemClock).now();
    this.snapshot = queueGauges(executor, now).then(
      (rows) => {
        const gauges = [this.ready, this.oldestReadyAge, this.running, this.oldestRunningAge, this.stuck, this.dead, this.paused];
        for (const gauge of gauges) gauge.reset();
        for (const kind of this.kinds?.() ?? []) for (const gauge of gauges) gauge.set({ kind }, 0);
        for (const row of rows) {
          if (Number(row.ready) > 0) {
            this.ready.inc({ kind: row.kind }, Number(row.ready));
            const age = row.oldest_ready === null ? 0 : (now.getTime() - toDate(row.oldest_ready).getTime()) / 1000;
            this.oldestReadyAge.set({ kind: row.kind }, Math.max(0, age));
          }
          if (Number(row.running) > 0) this.running.inc({ kind: row.kind }, Number(row.running));
          if (row.oldest_running !== null) {
            this.oldestRunningAge.set({ kind: row.kind }, Math.max(0, (now.getTime() - toDate(row.oldest_running).getTime()) / 1000));
          }
          if (Number(row.stuck) > 0) this.stuck.inc({ kind: row.kind }, Number(row.stuck));
          if (Number(row.dead) > 0) this.dead.inc({ kind: row.kind }, Number(row.dead));
          if (row.paused) this.paused.set({ kind: row.kind }, 1);
        }
      },
      (error: unknown) => {
        (this.options.logger ?? silentLogger).warn({ err: error }, 'queue gauges: query failed');
      },
    );
    return this.snapshot;
  }
}
