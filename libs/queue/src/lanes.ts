// Per-kind options and the slots ("lanes") a worker runs jobs in.
//
// A worker's kinds share one lane unless a kind asks for slots of its own
// (`concurrency`): then it gets a lane with its own slots, its own claim
// (the claim statement takes the lane's kinds) and its own buffer, so a herd
// of one kind never fills the slots or the buffer that another kind needs.
// The queue's housekeeping (reaper, pruner) has lanes of its own for the
// same reason: a worker whose job slots are all held by hung handlers still
// reaps and prunes.
//
// A lane's slots are `concurrency` minus its stuck handlers (those that
// outlived their timeout and grace: see timeouts.ts). A lane whose slots are
// all stuck claims nothing and gives its buffered jobs back, so no job waits
// behind a handler that never returns.
import type { ActiveJob } from './active-job.js';

export interface KindOptions {
  /**
   * A handler running longer than this (milliseconds) has its signal aborted
   * with a JobTimeoutError and its attempt fails transiently (backoff, an
   * attempt used). One that ignores the signal is given up after the
   * worker's `timeoutGraceMs`: its lease is no longer renewed, so the reaper
   * (of any worker) returns the job once it lapses. Default: none.
   */
  timeoutMs?: number;
  /** Slots of its own: this kind is claimed and run apart from the others, in at most this many handlers at once. Default: the shared slots. */
  concurrency?: number;
  /** Jobs per claim for its own slots (with `concurrency`). Default: the lesser of its concurrency and the worker's batchSize. */
  batchSize?: number;
}

/** Checks a kind's options; throws a RangeError naming the bad one. */
export function checkKindOptions(kind: string, options: KindOptions): KindOptions {
  const { timeoutMs, concurrency, batchSize } = options;
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new RangeError(`${kind}: timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  for (const [name, value] of [
    ['concurrency', concurrency],
    ['batchSize', batchSize],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1)) {
      throw new RangeError(`${kind}: ${name} must be a positive integer, got ${value}`);
    }
  }
  if (batchSize !== undefined && concurrency === undefined) throw new RangeError(`${kind}: batchSize needs concurrency (slots of its own)`);
  return options;
}

/** Slots, a buffer and a claim of their own, for the kinds in `kinds`. */
export class Lane {
  /** Handlers in progress, stuck ones included. */
  running = 0;
  /** Handlers past their timeout and grace whose jobs were given up: each holds its slot until it returns. */
  stuck = 0;
  /** Jobs held in this lane (buffered, running or being completed; not the given-up ones). */
  held = 0;
  /** Claimed jobs waiting for a slot, oldest first, from `head` on. */
  buffer: ActiveJob[] = [];
  head = 0;
  /** The last claim skipped this lane for want of room: freeing a slot should wake the claim loop. */
  waitingForRoom = false;
  /** The kinds it claims (set by the worker as handlers are registered). */
  kinds: string[] = [];
  /** Its last claim got all it asked for: there may be more. */
  backlog = false;
  /** When (performance.now()) it last claimed. */
  claimedAt = -Infinity;

  constructor(
    /** The kind it is for; null for the shared lane. */
    readonly name: string | null,
    readonly concurrency: number,
    readonly batchSize: number,
  ) {}

  /** Slots free now. */
  get free(): number {
    return this.concurrency - this.running;
  }

  /** Jobs the next claim may take: the working slots plus one batch of buffer, less what is held; 0 when every slot is stuck. */
  get room(): number {
    const working = this.concurrency - this.stuck;
    return working <= 0 ? 0 : working + this.batchSize - this.held;
  }

  /** Whether a claim is worth making: half a batch of room, or nothing held. */
  get wantsClaim(): boolean {
    return this.kinds.length > 0 && this.room > 0 && (this.room >= Math.max(1, Math.floor(this.batchSize / 2)) || this.held === 0);
  }

  get buffered(): number {
    return this.buffer.length - this.head;
  }

  /** Takes the unstarted jobs out of the buffer. */
  drain(): ActiveJob[] {
    const unstarted = this.buffer.slice(this.head).filter((a) => a.state === 'buffered');
    this.buffer = [];
    this.head = 0;
    return unstarted;
  }

  /** Drops the started part of the buffer now and then. */
  compact(): void {
    if (this.head === this.buffer.length) {
      this.buffer = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
  }

  /** Up to `upTo` buffered jobs of `kind`, from the head of the buffer on. */
  bufferedOfKind(kind: string, upTo: number): ActiveJob[] {
    const found: ActiveJob[] = [];
    for (let i = this.head; i < this.buffer.length && found.length < upTo; i++) {
      const active = this.buffer[i]!;
      if (active.state === 'buffered' && active.job.kind === kind) found.push(active);
    }
    return found;
  }
}
