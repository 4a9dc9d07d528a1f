import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '@opentelemetry/api';
import type { Clock } from '@nudge/config';
import { inTransaction } from '@nudge/database';
import { type NewEvent, recordEvents } from '@nudge/events';
import { type QueryExecutor, rowsOf, SnoozeJob, tracingEnabled, TransientJobError } from '@nudge/queue';
import { DEVICES, USER_SETTINGS } from '@nudge/users';
import { AppProviders } from './app-providers.js';
import { clearProviderFailures, markProvidersFailing } from './apps.repository.js';
import { collapseIdFor } from './collapse-id.js';
import { deliveryEvent } from './delivery-events.js';
import { deactivateRejectedDevices } from './device-deactivation.js';
import { type LocalizedText, pickText } from './localized-text.js';
import type { PushMetrics } from './metrics.js';
import type { PushPacer } from './push-pacer.js';
import type { PushOptions } from './push-options.js';
import type { PushMessage, PushOutcome, PushPlatform, PushProvider, SendOptions } from './push-provider.js';
import type { PushProviders } from './provider-registry.js';
import { endPushSpan, startPushSpan } from './push-spans.js';

// The delivery ledger (`push_deliveries`, one row per job and device) and the
// send loop around it, for one job or a batch of jobs at once. A row is
// written as `sending` before the provider is called and gets its outcome
// after, so a crash in between leaves a row that the retry sends again — with
// the same collapse id, so the phone shows the push once even if the first
// send did arrive.

export interface DeliveryRequest {
  jobId: string;
  userId: string;
  /** A string, or a map by BCP 47 tag: each device gets its locale's, else its user's, else the default. */
  title: LocalizedText;
  body?: LocalizedText | null;
  /** The language of a localized title or body shown when neither locale fits. */
  defaultLocale?: string | null;
  data?: Record<string, unknown> | null;
  /**
   * What the push collapses on, when not on its job alone: every job with the
   * same key shares one collapse id, so on the phone (and in FCM's store of at
   * most four collapse keys per offline device) a newer push replaces an
   * older one. Namespaced (`reminder:<id>`, `notification:<key>`) so that it
   * never meets a job id. Unset or empty: the job id.
   */
  collapseKey?: string;
  /** When the push stops being useful (a reminder: when its successor is due). */
  expiresAt?: Date;
  timeSensitive?: boolean;
  /** The app's notification category, for its action buttons (a reminder: `NUDGE_REMINDER`). */
  actionCategory?: string;
  /** sound, badge, threadId, imageUrl, androidChannelId, interruptionLevel, silent (docs/push-fields.md). */
  pushOptions?: PushOptions;
  /** The job's trace context (jobTraceContext), for the `push <provider>` spans; default: the active one. */
  traceContext?: Context;
  /** An event notification (send_notification): a skip is announced as `notification.skipped`. */
  notification?: boolean;
}

export type SkipReason = 'quiet_hours' | 'disabled' | 'category_disabled' | 'rate_limited' | 'stale' | 'no_device';

export interface DeliverySummary {
  sent: number;
  invalidTokens: number;
  permanentFailures: number;
  /** Devices whose send may succeed later: the job should be retried. */
  retryable: { deviceId: string; reason: string }[];
  /** The longest Retry-After any provider asked for, in seconds. */
  retryAfterSeconds?: number;
  /**
   * Devices held back by the pace (docs/pacing.md): not granted a send now,
   * or answered 429. Not failures: the job goes again at `resumeAt` without
   * using an attempt, and the ledger sends them then.
   */
  deferred: number;
  /** When the deferred devices may go (the latest of them), by the injected clock. */
  resumeAt?: Date;
  noDevice: boolean;
  /**
   * Devices not sent because their app's credentials were rejected by their
   * provider (marked failing): the job should wait until `waitUntil`, when the
   * provider is tried again, without using an attempt. Set only when some wait.
   */
  waiting?: { deviceId: string; reason: string }[];
  waitUntil?: Date;
}

interface LedgerDevice {
  job_id: string;
  id: string;
  installation_id: string;
  platform: PushPlatform;
  push_token: string;
  locale: string | null;
  user_locale: string | null;
  ledger_status: string | null;
  ledger_error: string | null;
  /** The device's app (its credentials and pace); 'default' for a device without one (the environment's credentials). */
  app_id: string;
  /** apps.version; null for the default app. */
  app_version: number | null;
  /** The app's providers marked failing (app_provider_failures), as JSON. */
  failures: { provider: string; reason: string; since: string; checkedAt: string; appVersion: number }[] | null;
}

export interface SkipRecord {
  jobId: string;
  userId: string;
  reason: SkipReason;
  /** An event notification's skip: announced as `notification.skipped`. */
  notification?: boolean;
}

// A permanent failure is kept as `failed` with this prefix, and not retried.
const PERMANENT = 'permanent: ';
// A 429 leaves the row `sending` (sent again by the job's next run, not a failure) with this prefix on its error.
const THROTTLED = 'throttled: ';

/**
 * How long the sends of an (app, provider) that rejected the credentials wait
 * before the provider is tried again: as long as it has been failing, from a
 * minute up to 15 minutes (a job snoozes at most 100 times in a row: that is
 * more than a day). A PUT of new credentials is a new version, tried at once.
 */
const MIN_FAILING_WAIT_MS = 60_000;
const MAX_FAILING_WAIT_MS = 15 * 60_000;

export function failingWaitMs(since: Date, checkedAt: Date): number {
  return Math.min(MAX_FAILING_WAIT_MS, Math.max(MIN_FAILING_WAIT_MS, checkedAt.getTime() - since.getTime()));
}

/**
 * Web Push answers 403 also for one subscription made with another VAPID key:
 * not proof that the app's credentials are wrong, so it is retried as before
 * rather than holding the app's every web push.
 */
const MARKS_FAILING = (provider: string) => provider !== 'webpush';

// One send this call makes: the request, the device and the summary it counts in.
interface Send {
  request: DeliveryRequest;
  device: LedgerDevice;
  summary: DeliverySummary;
  provider: PushProvider;
  collapseId: string;
  /** When the pace lets it go (performance.now() time); unset: at once. */
  dueAt?: number;
  outcome?: PushOutcome;
  /** The mark this (app, provider) had when read, if any. */
  failing?: { reason: string; since: Date; checkedAt: Date };
}

export class PushDelivery {
  private readonly apps: AppProviders;

  /** `providers`: each app's (AppProviders), or one set for every device (the default app's alone). */
  constructor(
    private readonly db: QueryExecutor,
    providers: PushProviders | AppProviders,
    private readonly clock: Clock,
    private readonly metrics?: PushMetrics,
    /** Without one, nothing is paced. */
    private readonly pacer?: PushPacer,
  ) {
    this.apps = providers instanceof AppProviders ? providers : new AppProviders(providers);
  }

  /** deliverMany for one job. */
  async deliver(request: DeliveryRequest, options: SendOptions = {}): Promise<DeliverySummary> {
    return (await this.deliverMany([request], options))[0]!;
  }

  /**
   * Sends every request (one per job; a job at most once) to every active
   * device of its user that the job has not already reached: `sent` and
   * `invalid_token` rows are final, as are permanent failures; `sending` (a
   * crash mid-send) and transient failures go again. A fixed number of
   * statements whatever the number of jobs: one read, one insert of the
   * `sending` rows, the providers' calls, one update of the outcomes (and one
   * to deactivate rejected tokens). Summaries are in the order of `requests`.
   * `options.signal` (the job's) goes to the providers: an aborted call
   * rejects, and its `sending` rows are sent again by the retry; the calls
   * that answered before it are recorded first, so the retry skips them.
   *
   * Paced (docs/pacing.md): before the `sending` rows are written, one
   * statement per provider and app takes the group's sends from the shared
   * bucket. Granted sends wait their turn here (at most a couple of seconds,
   * honouring the signal); the rest are not written and count as `deferred`,
   * as do sends the provider answers 429 (their rows stay `sending`): the
   * caller puts the job back until `resumeAt` without using an attempt.
   */
  async deliverMany(requests: readonly DeliveryRequest[], options: SendOptions = {}): Promise<DeliverySummary[]> {
    if (requests.length === 0) return [];
    const devices = rowsOf<LedgerDevice>(
      await this.db.query(
        `SELECT r.job_id::text AS job_id, d.id, d.installation_id, d.platform, d.push_token, d.locale, u.locale AS user_locale,
                pd.status AS ledger_status, pd.error AS ledger_error, COALESCE(d.app_id, 'default') AS app_id, a.version AS app_version,
                (SELECT json_agg(json_build_object('provider', f.provider, 'reason', f.reason, 'since', f.since,
                                                   'checkedAt', f.checked_at, 'appVersion', f.app_version))
                   FROM app_provider_failures f WHERE f.app_id = COALESCE(d.app_id, 'default')) AS failures
           FROM unnest($1::bigint[], $2::text[]) AS r(job_id, user_id)
           JOIN ${DEVICES} d ON d.user_id = r.user_id
           LEFT JOIN apps a ON a.id = d.app_id
           LEFT JOIN ${USER_SETTINGS} u ON u.id = r.user_id
           LEFT JOIN push_deliveries pd ON pd.job_id = r.job_id AND pd.device_id = d.id
          WHERE d.active OR pd.status IS NOT NULL
          ORDER BY r.job_id, d.created_at, d.id`,
        [requests.map((r) => r.jobId), requests.map((r) => r.userId)],
      ),
    );
    const byJob = groupBy(devices, (device) => device.job_id);

    // Each app's providers, built (or rebuilt after a PUT) on first use.
    const appProviders = new Map<string, PushProviders>();
    for (const device of devices) {
      const key = appKey(device);
      if (!appProviders.has(key)) appProviders.set(key, await this.apps.forApp(device.app_id, device.app_version));
    }
    const now = this.clock.now();

    const summaries: DeliverySummary[] = [];
    const sends: Send[] = [];
    const noDevice: SkipRecord[] = [];
    for (const request of requests) {
      const summary: DeliverySummary = {
        sent: 0,
        invalidTokens: 0,
        permanentFailures: 0,
        retryable: [],
        deferred: 0,
        noDevice: false,
      };
      summaries.push(summary);
      const own = byJob.get(String(request.jobId)) ?? [];
      if (own.length === 0) {
        summary.noDevice = true;
        noDevice.push({ jobId: request.jobId, userId: request.userId, reason: 'no_device', notification: request.notification });
        continue;
      }
      const collapseId = collapseIdFor(request.collapseKey || request.jobId);
      for (const device of own) {
        if (device.ledger_status === 'sent') summary.sent++;
        else if (device.ledger_status === 'invalid_token') summary.invalidTokens++;
        else if (device.ledger_status === 'skipped') continue;
        else if (device.ledger_status === 'failed' && device.ledger_error?.startsWith(PERMANENT)) summary.permanentFailures++;
        else {
          const provider = appProviders.get(appKey(device))!.forPlatform(device.platform);
          const failing = failingMark(device, provider.name);
          const waitUntil = failing && new Date(failing.checkedAt.getTime() + failingWaitMs(failing.since, failing.checkedAt));
          // Rejected credentials: wait for a re-check or new credentials, without calling the provider.
          if (waitUntil && waitUntil > now) wait(summary, device, provider.name, failing.reason, waitUntil);
          else sends.push({ request, device, summary, provider, collapseId, failing });
        }
      }
    }
    await this.recordSkippedMany(noDevice);
    if (sends.length === 0) return summaries;

    const admitted = await this.admit(sends);
    if (admitted.length === 0) return summaries;
    await this.markSending(admitted);
    await this.sendAll(admitted, options);
    await this.throttle(admitted);
    await this.recordOutcomes(admitted);
    const after = this.clock.now();
    for (const send of admitted) {
      const outcome = send.outcome!;
      if (outcome.kind === 'configuration_error' && MARKS_FAILING(send.provider.name)) {
        const since = send.failing?.since ?? after;
        wait(send.summary, send.device, send.provider.name, outcome.reason, new Date(after.getTime() + failingWaitMs(since, after)));
      } else count(send.summary, send.device, outcome);
    }
    return summaries;
  }

  // One take per (provider, app) group: the sends it grants, each with its
  // delay; the others deferred (their summaries told when to come back).
  private async admit(sends: Send[]): Promise<Send[]> {
    if (!this.pacer) return sends;
    const pacer = this.pacer;
    const admitted: Send[] = [];
    await Promise.all(
      [...groupBy(sends, paceKeyOf).values()].map(async (group) => {
        const admission = await pacer.admit(paceKey(group[0]!), group.length);
        const admittedAt = performance.now();
        group.forEach((send, i) => {
          if (i < admission.granted) {
            send.dueAt = admittedAt + admission.delaysMs[i]!;
            admitted.push(send);
          } else this.defer(send.summary, admission.resumeAfterMs);
        });
      }),
    );
    return admitted;
  }

  // The 429s of each (provider, app) group slow its shared pace once, and tell their jobs when to come back.
  private async throttle(sends: Send[]): Promise<void> {
    const throttled = sends.filter((s) => s.outcome!.kind === 'throttled');
    if (throttled.length === 0) return;
    await Promise.all(
      [...groupBy(throttled, paceKeyOf).values()].map(async (group) => {
        const retryAfters = group.map((s) => (s.outcome as { retryAfterSeconds?: number }).retryAfterSeconds ?? 0);
        const retryAfter = Math.max(...retryAfters) || undefined;
        const key = paceKey(group[0]!);
        const resumeAfterMs = this.pacer ? await this.pacer.throttled(key, group.length, retryAfter) : Math.max(1, retryAfter ?? 0) * 1000;
        for (const send of group) this.defer(send.summary, resumeAfterMs);
      }),
    );
  }

  private defer(summary: DeliverySummary, afterMs: number): void {
    summary.deferred++;
    const at = new Date(this.clock.now().getTime() + Math.ceil(afterMs));
    if (!summary.resumeAt || at > summary.resumeAt) summary.resumeAt = at;
  }

  /**
   * Claims a place for one event push under its user's hourly cap, inside the
   * caller's transaction: true when it may go out, and then its devices' rows
   * are written `sending` (marked with the job's kind) before the transaction
   * commits. The count and the claim run under a transaction-scoped advisory
   * lock on the user, so two workers never both see `cap - 1` and both send:
   * the second waits for the first's commit and counts its rows. What counts:
   * the other jobs of this kind with a row `sending` or `sent` for the user
   * created after `since` (a failed send frees its place). A job that already
   * holds rows (a retry) is not a new push and always may go on. `cap` 0: no
   * cap, only the claim (one statement: `tx` may then be the pool).
   */
  async claimWithinCap(
    tx: QueryExecutor,
    claim: { jobId: string; userId: string; kind: string; cap: number; since: Date },
  ): Promise<boolean> {
    if (claim.cap > 0) {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('nudge:push-cap:' || $1, 0))`, [claim.userId]);
      const [count] = rowsOf<{ others: number; own: number }>(
        await tx.query(
          `SELECT count(DISTINCT job_id) FILTER (WHERE job_id <> $3)::int AS others, count(*) FILTER (WHERE job_id = $3)::int AS own
             FROM push_deliveries
            WHERE user_id = $1 AND kind = $2 AND created_at > $4 AND status IN ('sending', 'sent')`,
          [claim.userId, claim.kind, claim.jobId, claim.since],
        ),
      );
      if (count!.own === 0 && count!.others >= claim.cap) return false;
    }
    // attempts 0: the send that follows (markSending) makes it 1.
    await tx.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, status, attempts, kind, created_at, updated_at)
       SELECT $1, d.id, d.user_id, d.platform, 'sending', 0, $3, $4, $4 FROM ${DEVICES} d WHERE d.user_id = $2 AND d.active
       ON CONFLICT (job_id, device_id) DO NOTHING`,
      [claim.jobId, claim.userId, claim.kind, this.clock.now()],
    );
    return true;
  }

  /**
   * recordSkippedMany for one job: an event notification's (send_notification), so announced as
   * `notification.skipped` unless `notification` is false. (A reminder's skip is announced by its
   * occurrence, occurrence.skipped.)
   */
  async recordSkipped(jobId: string, userId: string, reason: SkipReason, notification = true): Promise<void> {
    await this.recordSkippedMany([{ jobId, userId, reason, notification }]);
  }

  /**
   * Records that these jobs deliberately sent nothing: one `skipped` row per
   * active device of the user, or a single row without a device when the user
   * has none. Rows that exist already are left as they are. One statement,
   * and with the `notification.skipped` events of notifications, in one
   * transaction with them.
   */
  async recordSkippedMany(records: readonly SkipRecord[]): Promise<void> {
    if (records.length === 0) return;
    const now = this.clock.now();
    const events: NewEvent[] = records
      .filter((r) => r.notification)
      .map((r) => ({ type: 'notification.skipped', userId: r.userId, data: { jobId: r.jobId, userId: r.userId, reason: r.reason } }));
    if (events.length === 0) return this.writeSkipped(this.db, records, now);
    await inTransaction(this.db, async (tx) => {
      await this.writeSkipped(tx, records, now);
      await recordEvents(tx, events, now);
    });
  }

  private async writeSkipped(db: QueryExecutor, records: readonly SkipRecord[], now: Date): Promise<void> {
    await db.query(
      `WITH input AS (
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) AS i(job_id, user_id, reason)
       ), per_device AS (
         INSERT INTO push_deliveries (job_id, device_id, user_id, platform, status, skip_reason, created_at, updated_at)
         SELECT i.job_id, d.id, d.user_id, d.platform, 'skipped', i.reason, $4, $4
           FROM input i JOIN ${DEVICES} d ON d.user_id = i.user_id AND d.active
         ON CONFLICT (job_id, device_id) DO NOTHING
       )
       INSERT INTO push_deliveries (job_id, device_id, user_id, status, skip_reason, created_at, updated_at)
       SELECT i.job_id, NULL, i.user_id, 'skipped', i.reason, $4, $4 FROM input i
        WHERE NOT EXISTS (SELECT 1 FROM ${DEVICES} d WHERE d.user_id = i.user_id AND d.active)
       ON CONFLICT DO NOTHING`,
      [records.map((r) => r.jobId), records.map((r) => r.userId), records.map((r) => r.reason), now],
    );
  }

  // Before any provider is called, so that a crash in between leaves a row the retry sends again.
  private async markSending(sends: Send[]): Promise<void> {
    await this.db.query(
      `INSERT INTO push_deliveries (job_id, device_id, user_id, platform, provider, status, attempts, collapse_id, created_at, updated_at)
       SELECT s.job_id, s.device_id, s.user_id, s.platform, s.provider, 'sending', 1, s.collapse_id, $7, $7
         FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[])
           AS s(job_id, device_id, user_id, platform, provider, collapse_id)
       ON CONFLICT (job_id, device_id) DO UPDATE
         SET status = 'sending', attempts = push_deliveries.attempts + 1, provider = EXCLUDED.provider,
             collapse_id = EXCLUDED.collapse_id, updated_at = EXCLUDED.updated_at`,
      [
        sends.map((s) => s.request.jobId),
        sends.map((s) => s.device.id),
        sends.map((s) => s.request.userId),
        sends.map((s) => s.device.platform),
        sends.map((s) => s.provider.name),
        sends.map((s) => s.collapseId),
        this.clock.now(),
      ],
    );
  }

  // Each provider (of each app) gets its messages in one call (the simulated one records them in one
  // statement); paced sends in one call per tick of PACE_TICK_MS, when their tokens are due. When a call
  // rejects (the job's signal aborted it: its timeout, shutdown, a lost lease), the calls that answered are
  // recorded before the error goes on: their devices have the push, and the retry must not send it again.
  private async sendAll(sends: Send[], options: SendOptions): Promise<void> {
    const calls = groupBy(sends, (s) => `${paceKeyOf(s)}\u0000${Math.ceil((s.dueAt ?? 0) / PACE_TICK_MS)}`);
    const settled = await Promise.allSettled(
      [...calls.values()].map(async (group) => {
        const provider = group[0]!.provider;
        await waitUntil(Math.max(...group.map((s) => s.dueAt ?? 0)), options.signal);
        const messages = group.map(({ request, device, collapseId }): PushMessage => ({
          token: device.push_token,
          platform: device.platform,
          ...textFor(request, device),
          data: request.data ?? undefined,
          collapseId,
          expiresAt: request.expiresAt,
          timeSensitive: request.timeSensitive,
          actionCategory: request.actionCategory,
          ...request.pushOptions,
          appId: device.app_id,
        }));
        options.beforeSend?.();
        const spans = tracingEnabled() ? group.map((send) => startPushSpan(provider.name, send)) : undefined;
        let outcomes: PushOutcome[];
        try {
          outcomes = provider.sendMany
            ? await provider.sendMany(messages, options)
            : await Promise.all(messages.map((message) => provider.send(message, options)));
        } catch (error) {
          spans?.forEach((span) => endPushSpan(span, undefined, error));
          throw error;
        }
        // Counted as the provider answers, so a batch aborted afterwards still counts what it sent.
        group.forEach((send, i) => {
          send.outcome = outcomes[i];
          endPushSpan(spans?.[i], outcomes[i]);
          this.metrics?.record(provider.name, outcomes[i]!.kind);
        });
      }),
    );
    const failed = settled.find((result) => result.status === 'rejected');
    if (!failed) return;
    const answered = sends.filter((send) => send.outcome !== undefined);
    if (answered.length > 0) await this.recordOutcomes(answered);
    throw failed.reason;
  }

  // The outcomes, the devices they deactivate and the events announcing both: one transaction.
  private async recordOutcomes(sends: Send[]): Promise<void> {
    const now = this.clock.now();
    const rows = sends.map(({ outcome }) =>
      outcome!.kind === 'sent'
        ? ['sent', null, outcome!.providerMessageId ?? null]
        : outcome!.kind === 'invalid_token'
          ? ['invalid_token', outcome!.reason, null]
          : outcome!.kind === 'permanent'
            ? ['failed', PERMANENT + outcome!.reason, null]
            : outcome!.kind === 'throttled'
              ? ['sending', THROTTLED + outcome!.reason, null]
              : ['failed', `${outcome!.kind}: ${outcome!.reason}`, null],
    );
    await inTransaction(this.db, async (tx) => {
      await tx.query(
        `UPDATE push_deliveries pd SET status = o.status, error = o.error, provider_message_id = o.message_id, updated_at = $6
           FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[]) AS o(job_id, device_id, status, error, message_id)
          WHERE pd.job_id = o.job_id AND pd.device_id = o.device_id`,
        [
          sends.map((s) => s.request.jobId),
          sends.map((s) => s.device.id),
          rows.map((r) => r[0]),
          rows.map((r) => r[1]),
          rows.map((r) => r[2]),
          now,
        ],
      );
      // A throttled send is neither sent nor failed: no event until it is.
      const events: NewEvent[] = sends.flatMap((send, i) =>
        rows[i]![0] === 'sending' ? [] : [sendEvent(send, rows[i]![0] as 'sent' | 'invalid_token' | 'failed', rows[i]![1] ?? rows[i]![2])],
      );
      const rejected = sends.filter((s) => s.outcome!.kind === 'invalid_token');
      const deactivated = await deactivateRejectedDevices(
        tx,
        rejected.map((s) => {
          const outcome = s.outcome as { reason: string; invalidSince?: Date };
          return { deviceId: s.device.id, reason: outcome.reason, since: outcome.invalidSince };
        }),
        now,
      );
      await recordEvents(tx, [...events, ...deactivated.events], now);
      // Rejected credentials mark (app, provider) failing; a send that went through clears its mark.
      await markProvidersFailing(
        tx,
        sends
          .filter((s) => s.outcome!.kind === 'configuration_error' && MARKS_FAILING(s.provider.name))
          .map((s) => ({
            appId: s.device.app_id,
            provider: s.provider.name,
            reason: (s.outcome as { reason: string }).reason,
            appVersion: s.device.app_version ?? 0,
          })),
        now,
      );
      await clearProviderFailures(
        tx,
        sends.filter((s) => s.failing && s.outcome!.kind === 'sent').map((s) => ({ appId: s.device.app_id, provider: s.provider.name })),
      );
    });
  }
}

const appKey = (device: LedgerDevice) => `${device.app_id}\u0000${device.app_version ?? 0}`;

/** The device's (app, provider) mark, when it is one for the app's current credentials. */
function failingMark(device: LedgerDevice, provider: string): { reason: string; since: Date; checkedAt: Date } | undefined {
  const mark = device.failures?.find((f) => f.provider === provider && f.appVersion === (device.app_version ?? 0));
  return mark && { reason: mark.reason, since: new Date(mark.since), checkedAt: new Date(mark.checkedAt) };
}

/** The snooze reason of a job whose devices wait (`apns failing for app shop: 403 InvalidProviderToken…`), bounded. */
function waitReason(summary: DeliverySummary): string {
  const reasons = [...new Set((summary.waiting ?? []).map((w) => w.reason))].join('; ');
  return `${summary.waiting?.length ?? 0} device(s) waiting for their app's credentials: ${reasons}`.slice(0, 500);
}

function wait(summary: DeliverySummary, device: LedgerDevice, provider: string, reason: string, until: Date): void {
  (summary.waiting ??= []).push({ deviceId: device.id, reason: `${provider} failing for app ${device.app_id}: ${reason}` });
  if (!summary.waitUntil || until < summary.waitUntil) summary.waitUntil = until;
}

/** The title and body this device shows: its locale's, else its user's, else the default language's. */
function textFor(request: DeliveryRequest, device: LedgerDevice): Pick<PushMessage, 'title' | 'body'> {
  const preferred = [device.locale, device.user_locale];
  return {
    title: pickText(request.title, preferred, request.defaultLocale),
    body: request.body === null || request.body === undefined ? undefined : pickText(request.body, preferred, request.defaultLocale),
  };
}

// The send as its delivery event names it; `retryable` when the job will try the device again.
function sendEvent(send: Send, status: 'sent' | 'invalid_token' | 'failed', detail: string | null): NewEvent {
  const to = {
    jobId: send.request.jobId,
    userId: send.request.userId,
    deviceId: send.device.id,
    installationId: send.device.installation_id,
    platform: send.device.platform,
    provider: send.provider.name,
  };
  const kind = send.outcome!.kind;
  return deliveryEvent(to, status, detail, kind === 'transient' || kind === 'configuration_error');
}

/** Adds one send's outcome to its job's summary. */
function count(summary: DeliverySummary, device: LedgerDevice, outcome: PushOutcome): void {
  switch (outcome.kind) {
    case 'sent':
      summary.sent++;
      break;
    case 'invalid_token':
      summary.invalidTokens++;
      break;
    case 'permanent':
      summary.permanentFailures++;
      break;
    case 'throttled':
      // Counted as deferred by PushDelivery.throttle, which knows when it may go again.
      break;
    case 'transient':
    case 'configuration_error':
      summary.retryable.push({ deviceId: device.id, reason: outcome.reason });
      if (outcome.kind === 'transient' && outcome.retryAfterSeconds !== undefined) {
        summary.retryAfterSeconds = Math.max(summary.retryAfterSeconds ?? 0, outcome.retryAfterSeconds);
      }
      break;
  }
}

/** A send's pace: the bucket of its provider and its device's app. */
const paceKey = (send: Send) => ({ provider: send.provider.name, appId: send.device.app_id });
const paceKeyOf = (send: Send) => `${send.provider.name}\u0000${send.device.app_id}`;

/** Sends of one pace tick go in one provider call. */
const PACE_TICK_MS = 10;

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** Resolves at `at` (performance.now() time); rejects with the signal's reason if it aborts first. */
async function waitUntil(at: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = at - performance.now();
  if (signal?.aborted) throw signal.reason;
  if (ms <= 0) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    throw signal?.aborted ? signal.reason : error;
  }
}

/**
 * What a job's delivery means for the job: devices that may succeed later
 * retry it (an attempt used, backoff or the provider's Retry-After); devices
 * held back only by the pace, or waiting for their app's credentials, put it
 * back until they may go (no attempt used); undefined: done.
 */
export function deliveryOutcomeError(summary: DeliverySummary): TransientJobError | SnoozeJob | undefined {
  if (summary.retryable.length > 0) {
    return new TransientJobError(
      `${summary.retryable.length} device(s) not reached: ${summary.retryable.map((r) => r.reason).join('; ')}`,
      { retryAfterSeconds: summary.retryAfterSeconds },
    );
  }
  // Held back by the pace, or waiting for their app's credentials: back at the first of those instants, no attempt used.
  const waits: [Date, string][] = [];
  if (summary.deferred > 0) waits.push([summary.resumeAt!, `push pacing: ${summary.deferred} device(s) wait for the pace`]);
  if (summary.waitUntil) waits.push([summary.waitUntil, waitReason(summary)]);
  if (waits.length === 0) return undefined;
  const until = new Date(Math.min(...waits.map(([at]) => at.getTime())));
  return new SnoozeJob(until, waits.map(([, reason]) => reason).join('; '));
}
