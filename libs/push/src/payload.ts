import type { AndroidNotification, TokenMessage } from 'firebase-admin/messaging';
import { PUSH_PLATFORMS, type PushMessage, type PushPlatform } from './push-provider.js';

/** Both APNs and FCM refuse a notification payload over 4 KiB. */
export const MAX_PAYLOAD_BYTES = 4096;

/**
 * Web Push: one aes128gcm record of 4096 bytes (RFC 8188, the size push
 * services must accept) minus its header (86), tag (16) and delimiter (1).
 */
export const MAX_WEB_PUSH_PAYLOAD_BYTES = 3993;

/** Each platform's limit on the payload as `payloadBytes` measures it. */
export const PAYLOAD_LIMITS: Record<PushPlatform, number> = {
  ios: MAX_PAYLOAD_BYTES,
  android: MAX_PAYLOAD_BYTES,
  web: MAX_WEB_PUSH_PAYLOAD_BYTES,
  // Expo: the message as sent, at most 4 KiB.
  expo: MAX_PAYLOAD_BYTES,
};

const PROVIDER_LABELS: Record<PushPlatform, string> = { ios: 'APNs', android: 'FCM', web: 'Web Push', expo: 'Expo' };

/** What a push shows and carries, independent of device and delivery. */
export interface PushContent {
  title: string;
  body?: string;
  data?: Record<string, unknown>;
  timeSensitive?: boolean;
  /** The app's notification category, whose action buttons (Done, Snooze…) the push shows. */
  actionCategory?: string;
}

export interface ApnsPayload {
  aps: {
    alert: { title: string; body?: string };
    sound: 'default';
    'interruption-level'?: 'time-sensitive';
    category?: string;
  };
  [key: string]: unknown;
}

/**
 * The APNs JSON body. The app's data goes beside `aps`, as Apple expects
 * custom keys; a data key named `aps` is dropped rather than allowed to
 * replace the alert.
 */
export function buildApnsPayload(content: PushContent): ApnsPayload {
  const custom = { ...content.data };
  delete custom.aps;
  const alert: ApnsPayload['aps']['alert'] = { title: content.title };
  if (content.body !== undefined && content.body !== null) alert.body = content.body;
  const aps: ApnsPayload['aps'] = { alert, sound: 'default' };
  // Shown through Focus modes; the app needs the Time Sensitive entitlement, else iOS treats it as `active`.
  if (content.timeSensitive) aps['interruption-level'] = 'time-sensitive';
  // iOS picks the buttons of the category the app registered under this name.
  if (content.actionCategory) aps.category = content.actionCategory;
  return { ...custom, aps };
}

/**
 * The app's data as Android receives it: with `category` set to the action
 * category, if any, since an Android app builds its buttons itself and reads
 * the category from the data. It replaces a data key of that name, as the
 * buttons must not depend on what a caller put in `data`.
 */
export function dataWithCategory(content: Pick<PushContent, 'data' | 'actionCategory'>): Record<string, unknown> | undefined {
  if (!content.actionCategory) return content.data;
  return { ...content.data, category: content.actionCategory };
}

/** FCM data values must be strings: strings pass through, everything else is JSON. */
export function fcmData(data: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!data || Object.keys(data).length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    out[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return out;
}

/** The firebase-admin message for one Android device (FCM HTTP v1). */
export function buildFcmMessage(message: PushMessage, now: Date): TokenMessage {
  const notification: { title: string; body?: string } = { title: message.title };
  if (message.body !== undefined && message.body !== null) notification.body = message.body;
  // collapse_key replaces a stored, undelivered push; the tag replaces a shown one.
  const androidNotification: AndroidNotification = { tag: message.collapseId };
  // The intent action a tap opens; the buttons an Android app adds itself, from data.category.
  if (message.actionCategory) androidNotification.clickAction = message.actionCategory;
  const android: NonNullable<TokenMessage['android']> = {
    collapseKey: message.collapseId,
    priority: message.priority ?? 'high',
    notification: androidNotification,
  };
  if (message.expiresAt) android.ttl = Math.max(0, message.expiresAt.getTime() - now.getTime());
  const result: TokenMessage = { token: message.token, notification, android };
  const data = fcmData(dataWithCategory(message));
  if (data) result.data = data;
  return result;
}

/**
 * What a browser's service worker receives as `event.data.json()`. The
 * service worker shows it (`registration.showNotification(title, {body, tag,
 * data})`): Web Push has no notification of its own, so the shape is ours and
 * the docs give the few lines that display it.
 */
export interface WebPushPayload {
  title: string;
  body?: string;
  /** Replaces a shown notification with the same tag, like APNs' collapse id. */
  tag: string;
  data?: Record<string, unknown>;
  /** The action category, for the service worker to pick its `actions` (buttons). */
  category?: string;
  /** `requireInteraction` is the nearest a browser has to time-sensitive. */
  timeSensitive?: boolean;
}

export function buildWebPushPayload(content: PushContent, collapseId: string): WebPushPayload {
  const payload: WebPushPayload = { title: content.title, tag: collapseId };
  if (content.body !== undefined && content.body !== null) payload.body = content.body;
  if (content.data && Object.keys(content.data).length > 0) payload.data = content.data;
  if (content.actionCategory) payload.category = content.actionCategory;
  if (content.timeSensitive) payload.timeSensitive = true;
  return payload;
}

/** The tag is not known when a reminder is saved; its collapse id is at most this long (`collapseIdFor`). */
const TAG_RESERVE = 'x'.repeat(64);
/** Room for the device's token in an Expo message when its size is checked without one. */
const EXPO_TOKEN_RESERVE = `ExponentPushToken[${'x'.repeat(64)}]`;

/** One message of Expo's push API (`POST /--/api/v2/push/send`). */
export interface ExpoMessage {
  to: string;
  title: string;
  body?: string;
  data?: Record<string, unknown>;
  sound: 'default';
  priority: 'high' | 'normal';
  /** Seconds Expo and the platform keep trying; 0: now or never. */
  ttl?: number;
  /** iOS: replaces an older push with the same id. */
  collapseId: string;
  /** The action category the app registered (`setNotificationCategoryAsync`). */
  categoryId?: string;
  interruptionLevel?: 'time-sensitive';
}

export function buildExpoMessage(
  message: PushContent & { token: string; collapseId: string; expiresAt?: Date; priority?: 'high' | 'normal' },
  now: Date,
): ExpoMessage {
  const out: ExpoMessage = {
    to: message.token,
    title: message.title,
    sound: 'default',
    priority: message.priority ?? 'high',
    collapseId: message.collapseId,
  };
  if (message.body !== undefined && message.body !== null) out.body = message.body;
  if (message.data && Object.keys(message.data).length > 0) out.data = message.data;
  if (message.actionCategory) out.categoryId = message.actionCategory;
  if (message.timeSensitive) out.interruptionLevel = 'time-sensitive';
  if (message.expiresAt) out.ttl = Math.max(0, Math.floor((message.expiresAt.getTime() - now.getTime()) / 1000));
  return out;
}

function fcmPayloadBytes(content: PushContent): number {
  const notification: Record<string, string> = { title: content.title };
  if (content.body) notification.body = content.body;
  if (content.actionCategory) notification.click_action = content.actionCategory;
  return Buffer.byteLength(JSON.stringify({ notification, data: fcmData(dataWithCategory(content)) ?? {} }), 'utf8');
}

export function payloadBytes(content: PushContent, platform: PushPlatform): number {
  switch (platform) {
    case 'ios':
      return Buffer.byteLength(JSON.stringify(buildApnsPayload(content)), 'utf8');
    case 'android':
      return fcmPayloadBytes(content);
    case 'web':
      return Buffer.byteLength(JSON.stringify(buildWebPushPayload(content, TAG_RESERVE)), 'utf8');
    case 'expo': {
      const sample = buildExpoMessage(
        { ...content, token: EXPO_TOKEN_RESERVE, collapseId: TAG_RESERVE, expiresAt: new Date(0) },
        new Date(0),
      );
      return Buffer.byteLength(JSON.stringify(sample), 'utf8');
    }
  }
}

export type PayloadSizeCheck =
  | { ok: true; bytes: Record<PushPlatform, number> }
  | { ok: false; bytes: Record<PushPlatform, number>; platform: PushPlatform; limit: number; message: string };

/**
 * Whether a push with this content fits on every platform, measured the way
 * each provider sees it (APNs: the whole JSON body; FCM: notification and
 * data; Web Push: the JSON the service worker gets, before encryption). The API checks this when a reminder is saved, so an oversized
 * reminder is a 400 then rather than a dead job at send time.
 */
export function checkPayloadSize(content: PushContent, platforms: readonly PushPlatform[] = PUSH_PLATFORMS): PayloadSizeCheck {
  const bytes = Object.fromEntries(PUSH_PLATFORMS.map((p) => [p, payloadBytes(content, p)])) as Record<PushPlatform, number>;
  for (const platform of platforms) {
    const limit = PAYLOAD_LIMITS[platform];
    if (bytes[platform] > limit) {
      return {
        ok: false,
        bytes,
        platform,
        limit,
        message:
          `the push would be ${bytes[platform]} bytes for ${PROVIDER_LABELS[platform]}, ` +
          `${bytes[platform] - limit} over the ${limit}-byte limit; shorten the title, body or data`,
      };
    }
  }
  return { ok: true, bytes };
}

/**
 * The body each platform's service gets for this message: APNs' JSON
 * payload, the FCM v1 message, the Web Push JSON before encryption, or the
 * Expo message. The providers send it; the simulated provider records it.
 */
export function platformPayload(message: PushMessage, now: Date): object {
  switch (message.platform) {
    case 'ios':
      return buildApnsPayload(message);
    case 'android':
      return buildFcmMessage(message, now);
    case 'web':
      return buildWebPushPayload(message, message.collapseId);
    case 'expo':
      return buildExpoMessage(message, now);
  }
}
