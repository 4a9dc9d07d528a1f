import { describe, expect, it } from 'vitest';
import { DomainError } from '@nudge/config';
import { assertPayloadFits } from './payload-limit.js';
import { buildApnsPayload, buildExpoMessage, buildFcmMessage, buildWebPushPayload, checkPayloadSize } from './payload.js';
import { mergePushOptions, pushOptionsView, resolveInterruptionLevel, type PushOptions } from './push-options.js';
import type { PushMessage } from './push-provider.js';

// Each push field on each platform (docs/push-fields.md has the same table).
const now = new Date('2026-03-01T12:00:00Z');
const IMAGE = 'https://cdn.example.com/plant.png';
const all: PushOptions = {
  sound: 'chime.caf',
  badge: 3,
  threadId: 'plants',
  imageUrl: IMAGE,
  androidChannelId: 'reminders',
  interruptionLevel: 'passive',
};
const message = (options: PushOptions & { timeSensitive?: boolean } = {}): PushMessage => ({
  token: 'tok',
  platform: 'android',
  title: 'Water',
  body: 'Ferns first',
  data: { url: 'app://plants' },
  collapseId: 'c1',
  ...options,
});
const expo = (options: PushOptions & { timeSensitive?: boolean } = {}) =>
  buildExpoMessage({ ...message(options), token: 'ExponentPushToken[x]' }, now);

describe('APNs payload', () => {
  it('carries sound, badge, thread-id, interruption-level, and mutable-content with the image URL for the extension', () => {
    expect(buildApnsPayload(message(all))).toEqual({
      aps: {
        alert: { title: 'Water', body: 'Ferns first' },
        sound: 'chime.caf',
        badge: 3,
        'thread-id': 'plants',
        'interruption-level': 'passive',
        'mutable-content': 1,
      },
      url: 'app://plants',
      imageUrl: IMAGE,
    });
  });

  it('plays the default sound unless told otherwise, and none for sound null; badge 0 is sent (it clears the count)', () => {
    expect(buildApnsPayload(message()).aps.sound).toBe('default');
    expect(buildApnsPayload(message({ sound: null })).aps).not.toHaveProperty('sound');
    expect(buildApnsPayload(message({ badge: 0 })).aps.badge).toBe(0);
  });

  it('timeSensitive is interruption-level time-sensitive, over a stored passive level', () => {
    expect(buildApnsPayload(message({ interruptionLevel: 'passive', timeSensitive: true })).aps['interruption-level']).toBe(
      'time-sensitive',
    );
    expect(buildApnsPayload(message({ interruptionLevel: 'active' })).aps['interruption-level']).toBe('active');
  });

  it('a silent push is content-available alone, with the data, and no alert, sound or badge', () => {
    expect(buildApnsPayload({ ...message(all), silent: true, actionCategory: 'NUDGE_REMINDER' })).toEqual({
      aps: { 'content-available': 1 },
      url: 'app://plants',
    });
  });
});

describe('FCM message', () => {
  it('puts sound, channel, thread tag, image and badge count in android.notification and the image in notification', () => {
    const fcm = buildFcmMessage(message(all), now);
    expect(fcm.notification).toEqual({ title: 'Water', body: 'Ferns first', imageUrl: IMAGE });
    expect(fcm.android).toEqual({
      collapseKey: 'c1',
      priority: 'high',
      notification: { tag: 'plants', sound: 'chime.caf', channelId: 'reminders', imageUrl: IMAGE, notificationCount: 3 },
    });
  });

  it('without a thread the tag is the collapse id; sound null or omitted leaves the sound to the channel', () => {
    expect(buildFcmMessage(message({ sound: null }), now).android?.notification).toEqual({ tag: 'c1' });
    expect(buildFcmMessage(message(), now).android?.notification).toEqual({ tag: 'c1' });
  });

  it('a silent push is data-only at normal priority, keeping collapse key and ttl', () => {
    const fcm = buildFcmMessage({ ...message(all), silent: true, expiresAt: new Date('2026-03-01T12:01:00Z') }, now);
    expect(fcm).toEqual({
      token: 'tok',
      android: { collapseKey: 'c1', priority: 'normal', ttl: 60_000 },
      data: { url: 'app://plants' },
    });
  });
});

describe('Web Push payload', () => {
  it('carries badge, image and the thread as tag; time-sensitive as before', () => {
    expect(buildWebPushPayload(message({ ...all, timeSensitive: true }), 'c1')).toEqual({
      title: 'Water',
      body: 'Ferns first',
      tag: 'plants',
      data: { url: 'app://plants' },
      badge: 3,
      image: IMAGE,
      timeSensitive: true,
    });
    expect(buildWebPushPayload(message(), 'c1').tag).toBe('c1');
  });

  it('marks a silent push for the service worker to decide', () => {
    expect(buildWebPushPayload(message({ silent: true }), 'c1')).toMatchObject({ silent: true, title: 'Water' });
    expect(buildWebPushPayload(message(), 'c1')).not.toHaveProperty('silent');
  });
});

describe('Expo message', () => {
  it('carries sound, badge, channelId, richContent.image and interruptionLevel', () => {
    expect(expo(all)).toEqual({
      to: 'ExponentPushToken[x]',
      title: 'Water',
      body: 'Ferns first',
      data: { url: 'app://plants' },
      sound: 'chime.caf',
      badge: 3,
      channelId: 'reminders',
      richContent: { image: IMAGE },
      interruptionLevel: 'passive',
      priority: 'high',
      collapseId: 'c1',
    });
  });

  it('default sound unless null; time-sensitive from timeSensitive', () => {
    expect(expo().sound).toBe('default');
    expect(expo({ sound: null })).not.toHaveProperty('sound');
    expect(expo({ timeSensitive: true }).interruptionLevel).toBe('time-sensitive');
  });

  it('a silent push has no title, body, sound or badge: _contentAvailable and the data, at normal priority', () => {
    expect(expo({ ...all, silent: true })).toEqual({
      to: 'ExponentPushToken[x]',
      data: { url: 'app://plants' },
      priority: 'normal',
      collapseId: 'c1',
      _contentAvailable: true,
    });
  });
});

describe('the size check counts the push fields', () => {
  const longImage = `https://cdn.example.com/${'i'.repeat(1000)}.png`;
  const base = { title: 'T', data: { blob: 'd'.repeat(2000) } };

  it('every platform grows with the image URL', () => {
    const without = checkPayloadSize(base).bytes;
    const withImage = checkPayloadSize({ ...base, imageUrl: longImage }).bytes;
    for (const platform of ['ios', 'android', 'web', 'expo'] as const) {
      expect(withImage[platform], platform).toBeGreaterThan(without[platform] + 1000);
    }
  });

  it('names the push field that takes the most room', () => {
    const content = { title: 'T', body: 'b'.repeat(1000), data: { blob: 'd'.repeat(1500) }, imageUrl: longImage.repeat(2) };
    expect(() => assertPayloadFits(content)).toThrow(DomainError);
    try {
      assertPayloadFits(content);
    } catch (error) {
      expect((error as DomainError).errors).toEqual([{ path: 'imageUrl', message: expect.stringMatching(/over the \d+-byte limit/) }]);
    }
  });

  it('a silent push does not count the alert on APNs', () => {
    const loud = checkPayloadSize({ title: 'x'.repeat(500) }).bytes.ios;
    const silent = checkPayloadSize({ title: 'x'.repeat(500), silent: true }).bytes.ios;
    expect(loud - silent).toBeGreaterThan(500);
  });
});

describe('interruption level and timeSensitive', () => {
  it("'time-sensitive' is timeSensitive true and leaves no stored level", () => {
    expect(resolveInterruptionLevel(undefined, 'time-sensitive')).toEqual({ timeSensitive: true, interruptionLevel: null });
    expect(resolveInterruptionLevel(true, undefined)).toEqual({ timeSensitive: true, interruptionLevel: undefined });
  });

  it('passive or active ends time-sensitivity; a contradiction is a 400 naming interruptionLevel', () => {
    expect(resolveInterruptionLevel(undefined, 'passive')).toEqual({ timeSensitive: false, interruptionLevel: 'passive' });
    for (const [ts, level] of [
      [true, 'passive'],
      [false, 'time-sensitive'],
    ] as const) {
      try {
        resolveInterruptionLevel(ts, level);
        expect.unreachable();
      } catch (error) {
        expect((error as DomainError).errors?.[0]?.path).toBe('interruptionLevel');
      }
    }
  });
});

describe('stored push fields', () => {
  it('a field left out keeps its value, null clears it, sound null is kept as "none", silent false is the default', () => {
    const stored: PushOptions = { sound: 'a.caf', badge: 2, silent: true };
    expect(mergePushOptions(stored, { badge: null, threadId: 't', sound: null, silent: false })).toEqual({ sound: null, threadId: 't' });
    expect(mergePushOptions(stored, {})).toEqual(stored);
  });

  it('the view shows every field with the platform defaults', () => {
    expect(pushOptionsView({}, false)).toEqual({
      sound: 'default',
      badge: null,
      threadId: null,
      imageUrl: null,
      androidChannelId: null,
      interruptionLevel: 'active',
      silent: false,
    });
    expect(pushOptionsView({ sound: null, interruptionLevel: 'passive' }, true)).toMatchObject({
      sound: null,
      interruptionLevel: 'time-sensitive',
    });
  });
});
