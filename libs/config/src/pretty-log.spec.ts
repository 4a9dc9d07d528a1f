import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { prettyByDefault, PrettyLogStream } from './pretty-log.js';

function capture() {
  const lines: string[] = [];
  return { lines, out: { write: (text: string) => lines.push(...text.split('\n').filter(Boolean)) } };
}

describe('log lines for a terminal', () => {
  it('is pretty only on a terminal outside production', () => {
    expect(prettyByDefault({ isTTY: true }, 'development')).toBe(true);
    expect(prettyByDefault({ isTTY: true }, undefined)).toBe(true);
    expect(prettyByDefault({ isTTY: true }, 'production')).toBe(false);
    expect(prettyByDefault({ isTTY: false }, 'development')).toBe(false);
    expect(prettyByDefault({}, 'development')).toBe(false);
  });

  it('writes time, level, message and fields as text, keeps redaction, and shows an error stack', () => {
    const { lines, out } = capture();
    const logger = createLogger({ destination: new PrettyLogStream(out, false) as unknown as NodeJS.WritableStream, pretty: false });
    logger.info({ jobId: 'j-1', kind: 'send_reminder', attempt: 2, pushToken: 'secret-token', note: 'two words' }, 'job done');
    logger.error({ err: new Error('provider down') }, 'job failed');
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}job done {2}jobId=j-1 kind=send_reminder attempt=2 pushToken=\[redacted\] note="two words"$/,
    );
    expect(lines[0]).not.toContain('secret-token');
    expect(lines[0]).not.toContain('pid=');
    expect(lines[1]).toMatch(/ ERROR job failed$/);
    expect(lines[2]).toBe('    Error: provider down');
    expect(lines[3]).toMatch(/^ {4}at /);
  });

  it('colours the level when asked, and passes through what is not JSON', () => {
    const { lines, out } = capture();
    const stream = new PrettyLogStream(out);
    stream.write('{"level":40,"time":"2026-03-02T12:00:01.234Z","msg":"careful"}\nnot json\n');
    expect(lines[0]).toContain('\u001b[33mWARN \u001b[0m careful');
    expect(lines[0]).toContain('12:00:01.234');
    expect(lines[1]).toBe('not json');
  });

  it('keeps JSON when given a destination and not asked to be pretty', () => {
    const { lines, out } = capture();
    createLogger({ destination: out as unknown as NodeJS.WritableStream }).info({ a: 1 }, 'hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'hello', a: 1 });
  });
});
