import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock, CONFIG, type Config, DomainError } from '@nudge/config';
import { PG_POOL } from '@nudge/database';
import { ALL_EVENTS, EVENT_TYPES, type EventRecord } from './event-types.js';
import { deleteWebhook, eventsAfter, findWebhook, listWebhooks, pruneEvents, upsertWebhook, type WebhookRow } from './events.repository.js';

export const EVENTS_PRUNE = 'events_prune';

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface EventPage {
  events: EventRecord[];
  /** Pass as `after` for the next page; the same cursor again when nothing new was ready. */
  nextCursor: string;
}

const MAX_XID8 = 2n ** 64n - 1n;
const MAX_BIGINT = 2n ** 63n - 1n;

/** The ops side of events out: webhooks (PUT, GET, DELETE) and the pull feed. */
@Injectable()
export class WebhooksService {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Creates or replaces webhook `id`. Without a secret, a new webhook gets a
   * generated one, returned this once; an existing webhook keeps its secret.
   */
  async put(
    id: string,
    input: { url: string; events: string[]; secret?: string },
  ): Promise<{ webhook: WebhookView; created: boolean; secret?: string }> {
    const events = [...new Set(input.events)];
    // `*` already means every type: stored alone.
    const stored = events.includes(ALL_EVENTS) ? [ALL_EVENTS] : EVENT_TYPES.filter((t) => events.includes(t));
    const generated = `whsec_${randomBytes(24).toString('base64url')}`;
    const row = await upsertWebhook(
      this.pool,
      { id, url: input.url, events: stored, secret: input.secret ?? null },
      this.clock.now(),
      generated,
    );
    const shown = row.created && input.secret === undefined ? { secret: row.secret } : {};
    return { webhook: viewOf(row), created: row.created, ...shown };
  }

  async get(id: string): Promise<WebhookView> {
    const row = await findWebhook(this.pool, id);
    if (!row) throw DomainError.notFound(`Webhook ${id}`);
    return viewOf(row);
  }

  async list(): Promise<WebhookView[]> {
    return (await listWebhooks(this.pool)).map(viewOf);
  }

  async delete(id: string): Promise<void> {
    if (!(await deleteWebhook(this.pool, id))) throw DomainError.notFound(`Webhook ${id}`);
  }

  /** The feed: up to `limit` events after the cursor (none: from the oldest kept). */
  async feed(after: string | undefined, limit: number): Promise<EventPage> {
    const position = parseCursor(after);
    const rows = await eventsAfter(this.pool, position, limit);
    const last = rows[rows.length - 1];
    return {
      events: rows.map(({ txId: _tx, seq: _seq, ...event }) => event),
      nextCursor: last ? `${last.txId}-${last.seq}` : `${position.txId}-${position.seq}`,
    };
  }

  /** Deletes events older than EVENTS_RETENTION_HOURS (the events_prune job, hourly). */
  readonly prune = async (): Promise<void> => {
    await pruneEvents(this.pool, new Date(this.clock.now().getTime() - this.config.eventsRetentionHours * 3_600_000));
  };
}

function viewOf(row: WebhookRow): WebhookView {
  return { id: row.id, url: row.url, events: row.events, createdAt: row.createdAt, updatedAt: row.updatedAt };
}

function parseCursor(cursor: string | undefined): { txId: string; seq: string } {
  if (cursor === undefined) return { txId: '0', seq: '0' };
  const match = /^(\d{1,20})-(\d{1,19})$/.exec(cursor);
  if (!match || BigInt(match[1]!) > MAX_XID8 || BigInt(match[2]!) > MAX_BIGINT) {
    throw DomainError.invalid([{ path: 'after', message: 'after must be a nextCursor this feed returned' }]);
  }
  return { txId: match[1]!, seq: match[2]! };
}
