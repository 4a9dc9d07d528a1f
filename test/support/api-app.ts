import { Writable } from 'node:stream';
import type { DynamicModule } from '@nestjs/common';
import { Registry } from 'prom-client';
import type pg from 'pg';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { type Clock, type Config, createLogger, FixedClock, loadConfig } from '@nudge/config';
import { createApiApp } from '../../apps/api/src/app.factory.js';
import { WorkerModule, type WorkerModuleOptions } from '../../apps/worker/src/worker.module.js';
import { signToken } from '../../apps/api/src/auth/jwt.js';
import { eventually } from './eventually.js';

export { eventually };

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-hs256!';

/** Collects log lines so tests can assert what was (and was not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void) {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestApi {
  app: NestExpressApplication;
  baseUrl: string;
  clock: FixedClock;
  config: Config;
  logs: LogCapture;
  token(userId: string, scopes?: string[]): Promise<string>;
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

/** The real API application on a random port, against the given database, with a pinned clock. */
export async function startTestApi(options: {
  databaseUrl: string;
  clock?: FixedClock;
  env?: Record<string, string>;
  imports?: DynamicModule[];
  /** Run the worker in the same process (ROLE=all), with these queue settings. */
  worker?: WorkerModuleOptions['queue'];
  /** With `worker`: overrides for the push clients, e.g. endpoints of the local APNs and FCM fakes. */
  push?: WorkerModuleOptions['push'];
}): Promise<TestApi> {
  const config = loadConfig({
    AUTH_JWT_SECRET: TEST_SECRET,
    DATABASE_URL: options.databaseUrl,
    ROLE: options.worker ? 'all' : 'api',
    // Tests send hundreds of requests a second from one IP; the rate-limit test turns the limits on.
    RATE_LIMIT_PER_MINUTE: '0',
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    ...options.env,
  });
  const logs = new LogCapture();
  const logger = createLogger({ level: 'info', destination: logs });
  const clock = options.clock ?? new FixedClock('2026-03-02T12:00:00Z');
  const registry = new Registry();
  const imports = [...(options.imports ?? [])];
  if (options.worker) {
    imports.push(
      WorkerModule.forRoot({
        config,
        logger,
        registry,
        clock,
        databaseUrl: options.databaseUrl,
        queue: options.worker,
        push: options.push,
      }),
    );
  }
  const app = await createApiApp({ config, logger, registry, clock: clock as Clock, databaseUrl: options.databaseUrl, imports });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    app,
    baseUrl,
    clock,
    config,
    logs,
    // No expiry: tests move the clock across months.
    token: (userId, scopes = []) => signToken(TEST_SECRET, { userId, scopes, now: new Date('2020-01-01T00:00:00Z') }),
    async request(method, path, { token, body, rawBody, headers = {} } = {}) {
      const response = await fetch(baseUrl + path, {
        method,
        headers: {
          ...(body !== undefined || rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        body: rawBody ?? (body !== undefined ? JSON.stringify(body) : undefined),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, headers: response.headers, body: parsed };
    },
    close: () => app.close(),
  };
}

/**
 * A job once its attempt has run: succeeded, dead, or queued again after at
 * least one attempt (a retry) — not while it waits for its first run or runs.
 */
export function settledJob(
  pool: pg.Pool,
  jobId: string,
): Promise<{ status: string; attempts: number; run_at: Date; last_error: string | null }> {
  return eventually(async () => {
    const { rows } = await pool.query(`SELECT status, attempts, run_at, last_error FROM jobs WHERE id = $1`, [jobId]);
    return rows[0] && rows[0].status !== 'running' && (rows[0].status !== 'queued' || rows[0].attempts > 0) ? rows[0] : undefined;
  }, `job ${jobId}`);
}
