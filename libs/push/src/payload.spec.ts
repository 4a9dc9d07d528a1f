import { describe, expect, it } from 'vitest';
import { assertPayloadFits } from './payload-limit.js';
import { collapseIdFor } from './collapse-id.js';
import { buildApnsPayload, buildFcmMessage, buildWebPushPayload, checkPayloadSize, MAX_PAYLOAD_BYTES, PAYLOAD_LIMITS } from './payload.js';

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

  it('puts the action category in aps.category, and nothing when there is none', () => {
    const payload = buildApnsPayload({ title: 'T', data: { reminderId: 'r1' }, actionCategory: 'NUDGE_REMINDER' });
    expect(payload).toEqual({ aps: { alert: { title: 'T' }, sound: 'default', category: 'NUDGE_REMINDER' }, reminderId: 'r1' });
    expect(buildApnsPayload({ title: 'T' }).aps).not.toHaveProperty('category');
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

  it('sends the action category as click action and data.category, over a data key of that name', () => {
    const message = buildFcmMessage(
      { token: 't', platform: 'android', title: 'x', collapseId: 'c', data: { category: 'mine', n: 1 }, actionCategory: 'NUDGE_REMINDER' },
      now,
    );
    expect(message.android!.notification).toEqual({ tag: 'c', clickAction: 'NUDGE_REMINDER' });
    expect(message.data).toEqual({ category: 'NUDGE_REMINDER', n: '1' });
    const bare = buildFcmMessage({ token: 't', platform: 'android', title: 'x', collapseId: 'c', actionCategory: 'NUDGE_REMINDER' }, now);
    expect(bare.data).toEqual({ category: 'NUDGE_REMINDER' });
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

  it('counts the action category on every platform, so a push at the limit without it is over with it', () => {
    const category = 'NUDGE_REMINDER';
    for (const platform of ['ios', 'android', 'web', 'expo'] as const) {
      const base = checkPayloadSize({ title: 'x', body: 'a' }, [platform]).bytes[platform];
      const body = 'a'.repeat(PAYLOAD_LIMITS[platform] - base + 1);
      expect(checkPayloadSize({ title: 'x', body }, [platform]).ok).toBe(true);
      expect(checkPayloadSize({ title: 'x', body, actionCategory: category }, [platform])).toMatchObject({ ok: false, platform });
    }
    // The API's check is the strictest platform's: the longest body that fits everywhere, and one byte more.
    const room = Math.min(
      ...(['ios', 'android', 'web', 'expo'] as const).map(
        (p) => PAYLOAD_LIMITS[p] - checkPayloadSize({ title: 'x', body: '' }, [p]).bytes[p],
      ),
    );
    const longest = 'a'.repeat(room);
    expect(() => assertPayloadFits({ title: 'x', body: longest })).not.toThrow();
    expect(() => assertPayloadFits({ title: 'x', body: longest, actionCategory: category })).toThrow(/too large/);
    expect(() => assertPayloadFits({ title: 'x', body: `${longest}a` })).toThrow(/too large/);
  });

  it('measures the web payload as the service worker gets it, with room for the collapse tag', () => {
    const content = { title: 'Stretch', body: 'Now', data: { reminderId: 'r1' }, actionCategory: 'NUDGE_REMINDER' };
    const sent = buildWebPushPayload(content, collapseIdFor('reminder:4f1c2d3e-0000-4000-8000-000000000001'));
    expect(checkPayloadSize(content).bytes.web).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(sent)));
    expect(sent).toEqual({
      title: 'Stretch',
      body: 'Now',
      tag: expect.any(String),
      data: { reminderId: 'r1' },
      category: 'NUDGE_REMINDER',
    });
  });

  it('measures the FCM size from the message as sent, category included', () => {
    const content = { title: 'Stretch', body: 'Now', data: { reminderId: 'r1' }, actionCategory: 'NUDGE_REMINDER' };
    const sent = buildFcmMessage({ ...content, token: 't', platform: 'android', collapseId: 'c' }, new Date());
    const measured = Buffer.byteLength(
      JSON.stringify({ notification: { ...sent.notification, click_action: sent.android!.notification!.clickAction }, data: sent.data }),
    );
    expect(checkPayloadSize(content).bytes.android).toBe(measured);
  });
});
