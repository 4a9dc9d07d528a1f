import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// OccurrenceScheduler is the one owner of a reminder's jobs: the API's services,
// the worker's SendReminderHandler and the sweep all schedule through it. This
// keeps a second, diverging copy of that logic from growing back elsewhere.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const OWNER = 'libs/reminders/src/occurrence-scheduler.ts';

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = ['libs', 'apps']
  .flatMap(sources)
  .map((path) => ({ path: relative(ROOT, join(ROOT, path)), text: readFileSync(join(ROOT, path), 'utf8') }));

describe('OccurrenceScheduler owns the scheduling of occurrences', () => {
  it('is the only code that enqueues a send_reminder job', () => {
    const enqueuers = files
      .filter((f) => /kind:\s*SEND_REMINDER\b/.test(f.text) || /kind:\s*'send_reminder'/.test(f.text))
      .map((f) => f.path);
    expect(enqueuers).toEqual([OWNER]);
  });

  it('is the only code in the reminders lib that enqueues or cancels jobs', () => {
    const writers = files
      .filter((f) => f.path.startsWith('libs/reminders/') && /\b(enqueue|enqueueMany|cancelJobs)\(/.test(f.text))
      .map((f) => f.path);
    expect(writers).toEqual([OWNER]);
  });
});
