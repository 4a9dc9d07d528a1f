import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, QueueModule, Worker } from '../../libs/queue/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { statusCounts, waitFor } from './helpers.js';

const seen: string[] = [];

@Injectable()
class GreetingHandler implements OnModuleInit {
  constructor(@Inject(Worker) private readonly worker: Worker) {}
  onModuleInit() {
    this.worker.register('greet', async (job) => void seen.push((job.payload as { name: string }).name));
  }
}

@Module({ providers: [GreetingHandler] })
class GreetingModule {}

describe('QueueModule', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('starts the worker after handlers registered, exposes metrics, and stops it on close', async () => {
    const registry = new Registry();
    const moduleRef = await Test.createTestingModule({
      imports: [QueueModule.forRoot({ connectionString: db.url, registry, pollIntervalMs: 50, housekeeping: false }), GreetingModule],
    }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    await enqueue(db.pool, { kind: 'greet', payload: { name: 'ada' } });
    await waitFor(() => seen.includes('ada'), 10_000);
    await waitFor(async () => (await statusCounts(db.pool)).succeeded === 1, 5_000);
    expect(await registry.metrics()).toContain('queue_jobs_completed_total{kind="greet"} 1');
    expect(await registry.metrics()).toMatch(/queue_jobs_ready/);
    await app.close();
    await enqueue(db.pool, { kind: 'greet', payload: { name: 'after close' } });
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual(['ada']);
  });
});
