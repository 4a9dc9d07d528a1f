import { TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, startJobSpan, tracingEnabled } from './tracing.js';

const value = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent', () => {
  it('reads a W3C traceparent as a remote span context and writes it back unchanged', () => {
    const span = parseTraceparent(value);
    expect(span).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(formatTraceparent(span!)).toBe(value);
    expect(formatTraceparent({ ...span!, traceFlags: TraceFlags.NONE })).toBe(value.replace(/01$/, '00'));
  });

  it('ignores what is absent, malformed or all zeros (a caller may send anything)', () => {
    for (const bad of [
      undefined,
      null,
      '',
      'garbage',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // unknown version
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      `${value}-extra`,
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
  });
});

describe('with no tracer provider registered', () => {
  it('starts no job span', () => {
    expect(tracingEnabled()).toBe(false);
    const job = {
      id: '1',
      kind: 'k',
      payload: {},
      attempts: 1,
      maxAttempts: 3,
      idempotencyKey: null,
      runAt: new Date(0),
      createdAt: new Date(0),
    };
    const clock = {
      now: () => {
        throw new Error('the clock is not read while tracing is off');
      },
    };
    expect(startJobSpan(job, { traceParent: value, traceLink: null }, clock)).toBeUndefined();
  });
});
