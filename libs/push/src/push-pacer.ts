import type { QueryExecutor } from '@nudge/queue';
import { DEFAULT_PACE_SETTINGS, delayMs, type PaceSettings, resumeAfterMs } from './pace.js';
import { ensurePace, takeFromPace, throttlePace } from './pace.repository.js';
import type { PushMetrics } from './metrics.js';
import type { PushProviderName } from './push-provider.js';

/** The configured maxima, sends a second by provider; unset: unpaced until the provider answers 429. */
export type PaceLimits = Partial<Record<Exclude<PushProviderName, 'simulated'>, number | undefined>>;

export interface PushPacerOptions {
  limits: PaceLimits;
  settings?: Partial<PaceSettings>;
  metrics?: PushMetrics;
  /** The instant the pace statements act at; default null: the database's clock (see pace.repository.ts). */
  now?: () => Date | null;
}

/** A provider's answer to a group's take: the first `granted` sends go, each after its delay; the rest come back after `resumeAfterMs`. */
export interface Admission {
  granted: number;
  /** Per granted send, in order: how long after the admission it may go. */
  delaysMs: number[];
  /** For the sends not granted: how long until the bucket should have them. */
  resumeAfterMs: number;
}

export interface PaceKey {
  provider: PushProviderName;
  appId: string;
}

/**
 * The pace of each provider and app, shared through `push_pace` by every
 * worker process: PushDelivery asks it before each provider call group and
 * tells it of the group's 429s. The simulated provider is never paced.
 */
export class PushPacer {
  private readonly settings: PaceSettings;
  private readonly ensured = new Set<string>();
  private readonly now: () => Date | null;

  constructor(
    private readonly db: QueryExecutor,
    private readonly options: PushPacerOptions,
  ) {
    this.settings = { ...DEFAULT_PACE_SETTINGS, ...options.settings };
    this.now = options.now ?? (() => null);
  }

  paces(provider: PushProviderName): boolean {
    return provider !== 'simulated';
  }

  /** One statement (two the first time this process meets the key): up to `wanted` sends of this provider and app. */
  async admit(key: PaceKey, wanted: number): Promise<Admission> {
    if (!this.paces(key.provider) || wanted === 0) return { granted: wanted, delaysMs: Array<number>(wanted).fill(0), resumeAfterMs: 0 };
    await this.ensure(key);
    let grant = await takeFromPace(this.db, key, wanted, this.now(), this.settings);
    if (!grant) {
      // An operator deleted the row to reset the bucket: it starts again, full.
      await this.ensure(key, true);
      grant = await takeFromPace(this.db, key, wanted, this.now(), this.settings);
      if (!grant) throw new Error(`push_pace has no row for ${key.provider}/${key.appId}`);
    }
    this.options.metrics?.recordPace(key.provider, key.appId, grant.rate);
    return {
      granted: grant.granted,
      delaysMs: Array.from({ length: grant.granted }, (_, i) => delayMs(grant, i)),
      resumeAfterMs: Math.max(this.settings.maxWaitSeconds * 1000, grant.resumeLeadMs),
    };
  }

  /** `count` sends of this group were answered 429: the shared rate halves; how long until they may go again. */
  async throttled(key: PaceKey, count: number, retryAfterSeconds: number | undefined): Promise<number> {
    const fallback = Math.max(this.settings.maxWaitSeconds, retryAfterSeconds ?? 0) * 1000;
    if (!this.paces(key.provider)) return fallback;
    await this.ensure(key);
    const after = await throttlePace(this.db, key, count, retryAfterSeconds ?? null, this.now(), this.settings);
    if (!after) return fallback;
    this.options.metrics?.recordPace(key.provider, key.appId, after.rate);
    return resumeAfterMs(after, count, this.settings);
  }

  private async ensure(key: PaceKey, again = false): Promise<void> {
    const id = `${key.provider}\u0000${key.appId}`;
    if (this.ensured.has(id) && !again) return;
    const limit = this.options.limits[key.provider as keyof PaceLimits];
    await ensurePace(this.db, key, limit ?? null, this.settings);
    this.ensured.add(id);
  }
}
