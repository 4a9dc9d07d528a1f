import { describe, expect, it } from 'vitest';
import { buildApnsPayload, buildFcmMessage, checkPayloadSize, MAX_PAYLOAD_BYTES } from './payload.js';

describe('buildApnsPayload', () => {
  it('puts the alert in aps and the app data beside it', () => {
    expect(buildApnsPayload({ title: 'Stretch', body: 'Two minutes', data: { reminderId: 'r1', n: 2 } })).toEqual({
      aps: { alert: { title: 'Stretch', body: 'Two minutes' }, sound: 'default' },
      reminderId: 'r1',
      n: 2,
    });
  });

  it('never lets data replace aps, and marks time-sensitive pushes', () => {
    const payload = buildApnsPayload({ title: 'T', data: { aps: { alert: 'hijack' } }, timeSensitive: true });
    expect(payload.aps).toEqual({ alert: { title: 'T' }, sound: 'default', 'interruption-level': 'time-sensitive' });
  });
});

describe('buildFcmMessage', () => {
  const now = new Date('2026-03-01T12:00:00Z');

  it('sets collapse key, tag, ttl from expiresAt, priority and string data', () => {
    const message = buildFcmMessage(
      {
        token: 'tok',
        platform: 'android',
        title: 'Stretch',
        body: 'Now',
        data: { reminderId: 'r1', count: 3, nested: { a: 1 } },
        collapseId: 'nudge:42',
        expiresAt: new Date('2026-03-01T13:00:00Z'),
        priority: 'normal',
      },
      now,
    );
    expect(message).toEqual({
      token: 'tok',
      notification: { title: 'Stretch', body: 'Now' },
      android: { collapseKey: 'nudge:42', priority: 'normal', notification: { tag: 'nudge:42' }, ttl: 3_600_000 },
      data: { reminderId: 'r1', count: '3', nested: '{"a":1}' },
    });
  });

  it('uses ttl 0 for an instant already past and high priority by default', () => {
    const message = buildFcmMessage(
      { token: 't', platform: 'android', title: 'x', collapseId: 'c', expiresAt: new Date('2026-03-01T11:00:00Z') },
      now,
    );
    expect(message.android).toMatchObject({ ttl: 0, priority: 'high' });
    expect(message.data).toBeUndefined();
  });
});

describe('checkPayloadSize', () => {
  it('accepts an ordinary reminder and reports its sizes', () => {
    const check = checkPayloadSize({ title: 'Drink water', body: 'A glass now', data: { id: 'abc' } });
    expect(check.ok).toBe(true);
    expect(check.bytes.ios).toBeGreaterThan(20);
    expect(check.bytes.android).toBeGreaterThan(20);
  });

  it('rejects a payload over 4 KiB with a message saying by how much', () => {
    const check = checkPayloadSize({ title: 'x', body: 'é'.repeat(2100) });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.limit).toBe(MAX_PAYLOAD_BYTES);
    expect(check.platform).toBe('ios');
    expect(check.message).toMatch(/^the push would be \d+ bytes for APNs, \d+ over the 4096-byte limit/);
  });

  it('counts bytes, not characters, right at the limit', () => {
    const base = checkPayloadSize({ title: 'x', body: '' }, ['ios']).bytes.ios;
    const fits = checkPayloadSize({ title: 'x', body: 'a'.repeat(MAX_PAYLOAD_BYTES - base) }, ['ios']);
    expect(fits).toMatchObject({ ok: true, bytes: { ios: MAX_PAYLOAD_BYTES } });
    expect(checkPayloadSize({ title: 'x', body: 'a'.repeat(MAX_PAYLOAD_BYTES - base + 1) }, ['ios']).ok).toBe(false);
  });

  it('checks only the platforms asked for', () => {
    // Non-string data costs FCM extra quoting; here only Android is over.
    const data = { list: Array.from({ length: 700 }, () => 'ab') };
    expect(checkPayloadSize({ title: 't', data }, ['ios']).ok).toBe(true);
    expect(checkPayloadSize({ title: 't', data }, ['android'])).toMatchObject({ ok: false, platform: 'android' });
  });
});
