// LISTEN for enqueue notifications on a connection of its own, reconnecting
// after a loss (the worker polls meanwhile). Each notification calls `onWake`,
// and so does every (re)connect: jobs enqueued while nobody listened.
import pg from 'pg';
import { WAKE_CHANNEL } from './sql.js';
import type { QueueLogger } from './types.js';

export class WakeListener {
  private client: pg.Client | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly onWake: () => void,
    private readonly logger: QueueLogger,
    private readonly workerId: string,
  ) {}

  async connect(): Promise<void> {
    const client = new pg.Client({ ...this.config, application_name: 'queue-listener' });
    const retry = () => {
      if (this.client === client) this.client = null;
      client.removeAllListeners();
      client.on('error', () => undefined);
      client.end().catch(() => undefined);
      if (this.closed || this.retryTimer) return;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        void this.connect();
      }, 2000);
      this.retryTimer.unref?.();
    };
    client.on('notification', () => this.onWake());
    client.on('error', (err) => {
      this.logger.warn({ err, workerId: this.workerId }, 'queue listener lost its connection; polling until it is back');
      retry();
    });
    client.on('end', retry);
    try {
      await client.connect();
      await client.query(`LISTEN ${WAKE_CHANNEL}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      // Anything enqueued while we were not listening.
      this.onWake();
    } catch (err) {
      this.logger.warn({ err, workerId: this.workerId }, 'queue listener could not connect; polling meanwhile');
      retry();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (!client) return;
    client.removeAllListeners();
    client.on('error', () => undefined);
    await client.end().catch(() => undefined);
  }
}
