import { describe, expect, it } from 'vitest';
import { Worker } from './worker.js';

// One handler per kind, and the boot check that every kind an app enqueues
// has one. No database: the pool is never used before start().
const worker = () => new Worker({ connectionString: 'postgres://nobody@127.0.0.1:1/none', housekeeping: false });

describe('job kinds and their handlers', () => {
  it('refuses a second handler for a kind, single or batch', () => {
    const w = worker().register('greet', async () => undefined);
    expect(() => w.register('greet', async () => undefined)).toThrow('job kind greet already has a handler');
    expect(() => w.registerBatch('greet', async () => undefined)).toThrow('already has a handler');
    w.registerBatch('herd', async () => undefined);
    expect(() => w.register('herd', async () => undefined)).toThrow('job kind herd already has a handler');
  });

  it('the boot check names every enqueued kind without a handler', () => {
    const w = worker()
      .register('greet', async () => undefined)
      .registerBatch('herd', async () => undefined);
    expect(() => w.assertHandles(['greet', 'herd'])).not.toThrow();
    expect(() => w.assertHandles(['greet', 'lost', 'herd', 'gone', 'lost'])).toThrow(
      'no handler registered for job kind(s) this app enqueues: lost, gone',
    );
  });
});
