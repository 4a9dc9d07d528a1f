import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { deliveryHealth } from '@nudge/push';
import { dueByMinute } from '@nudge/queue';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Delivery health (the ledger's last hour by provider) and what is coming
 * (queued jobs due per minute over the next day), for the dashboard.
 */
@Injectable()
export class DeliveryOpsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async health() {
    const now = this.clock.now();
    // The current minute and the 59 before it.
    const to = new Date(Math.floor(now.getTime() / MINUTE) * MINUTE + MINUTE);
    const from = new Date(to.getTime() - 60 * MINUTE);
    const { byMinute, answers } = await deliveryHealth(this.pool, from, to);
    const totals = new Map<string, { provider: string; sent: number; failed: number; invalidToken: number }>();
    for (const m of byMinute) {
      const total = totals.get(m.provider) ?? { provider: m.provider, sent: 0, failed: 0, invalidToken: 0 };
      total.sent += m.sent;
      total.failed += m.failed;
      total.invalidToken += m.invalidToken;
      totals.set(m.provider, total);
    }
    return {
      generatedAt: now.toISOString(),
      from: from.toISOString(),
      to: to.toISOString(),
      providers: [...totals.values()].map((t) => {
        const all = t.sent + t.failed + t.invalidToken;
        return { ...t, failureRatio: all === 0 ? 0 : Math.round((t.failed / all) * 10_000) / 10_000 };
      }),
      lastHourByMinute: byMinute.map((m) => ({ ...m, minute: m.minute.toISOString() })),
      topAnswers: answers,
    };
  }

  async upcoming() {
    const now = this.clock.now();
    const to = new Date(now.getTime() + DAY);
    const rows = await dueByMinute(this.pool, now, to);
    const totals = new Map<string, number>();
    for (const r of rows) totals.set(r.kind, (totals.get(r.kind) ?? 0) + r.due);
    const peaks = [...rows].sort((a, b) => b.due - a.due || a.minute.getTime() - b.minute.getTime()).slice(0, 5);
    const view = (r: (typeof rows)[number]) => ({ minute: r.minute.toISOString(), kind: r.kind, due: r.due });
    return {
      generatedAt: now.toISOString(),
      from: now.toISOString(),
      to: to.toISOString(),
      kinds: [...totals].map(([kind, due]) => ({ kind, due })),
      peaks: peaks.map(view),
      byMinute: rows.map(view),
    };
  }
}
