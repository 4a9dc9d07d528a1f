import type { AndroidNotification, TokenMessage } from 'firebase-admin/messaging';
import { PUSH_PLATFORMS, type PushMessage, type PushPlatform } from './push-provider.js';
import { type InterruptionLevel, interruptionLevelOf, type PushOptions } from './push-options.js';

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

/** What a push shows and carries, independent of device and delivery; the push fields as docs/push-fields.md maps them. */
export interface PushContent extends PushOptions {
  title: string;
  body?: string;
  data?: Record<string, unknown>;
  timeSensitive?: boolean;
  /** The app's notification category, whose action buttons (Done, Snooze…) the push shows. */
  actionCategory?: string;
}

export interface ApnsPayload {
  aps: {
    alert?: { title: string; body?: string };
    sound?: string;
    badge?: number;
    'thread-id'?: string;
    'interruption-level'?: InterruptionLevel;
    'mutable-content'?: 1;
    'content-available'?: 1;
    category?: string;
  };
  [key: string]: unknown;
}

/**
 * The APNs JSON body. The app's data goes beside `aps`, as Apple expects
 * custom keys; a data key named `aps` is dropped rather than allowed to
 * replace the alert. A silent push is `content-available` alone: Apple
 * refuses a background push with an alert, sound or badge.
 */
export function buildApnsPayload(content: PushContent): ApnsPayload {
  const custom: Record<string, unknown> = { ...content.data };
  delete custom.aps;
  if (content.silent) return { ...custom, aps: { 'content-available': 1 } };
  const alert: NonNullable<ApnsPayload['aps']['alert']> = { title: content.title };
  if (content.body !== undefined && content.body !== null) alert.body = content.body;
  const aps: ApnsPayload['aps'] = { alert };
  // Omitted: the default sound; null: none.
  if (content.sound !== null) aps.sound = content.sound ?? 'default';
  if (content.badge !== undefined) aps.badge = content.badge;
  if (content.threadId) aps['thread-id'] = content.threadId;
  // time-sensitive shows through Focus modes; the app needs the Time Sensitive entitlement, else iOS treats it as `active`.
  const level = interruptionLevelOf(content);
  if (level) aps['interruption-level'] = level;
  // iOS picks the buttons of the category the app registered under this name.
  if (content.actionCategory) aps.category = content.actionCategory;
  if (content.imageUrl) {
    // The app's Notification Service Extension downloads `imageUrl` and attaches it.
    aps['mutable-content'] = 1;
    custom.imageUrl = content.imageUrl;
  }
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

/**
 * The firebase-admin message for one Android device (FCM HTTP v1). A silent
 * push is data-only (no `notification`: the app's messaging service gets it)
 * at normal priority.
 */
export function buildFcmMessage(message: PushMessage, now: Date): TokenMessage {
  const android: NonNullable<TokenMessage['android']> = {
    // collapse_key replaces a stored, undelivered push.
    collapseKey: message.collapseId,
    priority: message.silent ? 'normal' : (message.priority ?? 'high'),
  };
  if (message.expiresAt) android.ttl = Math.max(0, message.expiresAt.getTime() - now.getTime());
  const result: TokenMessage = { token: message.token, android };
  if (!message.silent) {
    const notification: NonNullable<TokenMessage['notification']> = { title: message.title };
    if (message.body !== undefined && message.body !== null) notification.body = message.body;
    if (message.imageUrl) notification.imageUrl = message.imageUrl;
    result.notification = notification;
    android.notification = androidNotification(message);
  }
  const data = fcmData(dataWithCategory(message));
  if (data) result.data = data;
  return result;
}

/** android.notification: what the tray shows beyond the title and body. */
function androidNotification(message: PushMessage): AndroidNotification {
  // The tag replaces a shown push with the same one: the thread's latest, else this push's own earlier send.
  const out: AndroidNotification = { tag: message.threadId || message.collapseId };
  // The intent action a tap opens; the buttons an Android app adds itself, from data.category.
  if (message.actionCategory) out.clickAction = message.actionCategory;
  // Android 8+ plays the channel's sound; this is for older versions and for the `default` channel.
  if (message.sound) out.sound = message.sound;
  if (message.androidChannelId) out.channelId = message.androidChannelId;
  if (message.imageUrl) out.imageUrl = message.imageUrl;
  if (message.badge !== undefined) out.notificationCount = message.badge;
  return out;
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
  /** For `navigator.setAppBadge(badge)` (not the Notification's `badge` icon). */
  badge?: number;
  /** The Notification's `image`. */
  image?: string;
  /** A background push: the service worker decides whether to show anything. */
  silent?: true;
}

export function buildWebPushPayload(content: PushContent, collapseId: string): WebPushPayload {
  // A thread's tag: a newer push of the thread replaces the shown one, as on Android.
  const payload: WebPushPayload = { title: content.title, tag: content.threadId || collapseId };
  if (content.body !== undefined && content.body !== null) payload.body = content.body;
  if (content.data && Object.keys(content.data).length > 0) payload.data = content.data;
  if (content.actionCategory) payload.category = content.actionCategory;
  if (content.timeSensitive) payload.timeSensitive = true;
  if (content.badge !== undefined) payload.badge = content.badge;
  if (content.imageUrl) payload.image = content.imageUrl;
  if (content.silent) payload.silent = true;
  return payload;
}

/** The tag is not known when a reminder is saved; its collapse id is at most this long (`collapseIdFor`). */
const TAG_RESERVE = 'x'.repeat(64);
/** Room for the device's token in an Expo message when its size is checked without one. */
const EXPO_TOKEN_RESERVE = `ExponentPushToken[${'x'.repeat(64)}]`;

/** One message of Expo's push API (`POST /--/api/v2/push/send`). */
export interface ExpoMessage {
  to: string;
  title?: string;
  body?: string;
  data?: Record<string, unknown>;
  /** `default` or a sound the app bundles; absent: none. */
  sound?: string;
  badge?: number;
  priority: 'high' | 'normal';
  /** Seconds Expo and the platform keep trying; 0: now or never. */
  ttl?: number;
  /** iOS: replaces an older push with the same id. */
  collapseId: string;
  /** The action category the app registered (`setNotificationCategoryAsync`). */
  categoryId?: string;
  /** Android: the notification channel. */
  channelId?: string;
  /** iOS: needs the app's Notification Service Extension; Android shows it. */
  richContent?: { image: string };
  interruptionLevel?: InterruptionLevel;
  /** iOS: a background push (content-available); with no title or body, nothing is shown. */
  _contentAvailable?: true;
}

export function buildExpoMessage(
  message: PushContent & { token: string; collapseId: string; expiresAt?: Date; priority?: 'high' | 'normal' },
  now: Date,
): ExpoMessage {
  const out: ExpoMessage = {
    to: message.token,
    priority: message.silent ? 'normal' : (message.priority ?? 'high'),
    collapseId: message.collapseId,
  };
  if (message.silent) {
    out._contentAvailable = true;
  } else {
    out.title = message.title;
    if (message.body !== undefined && message.body !== null) out.body = message.body;
    if (message.sound !== null) out.sound = message.sound ?? 'default';
    if (message.badge !== undefined) out.badge = message.badge;
    if (message.actionCategory) out.categoryId = message.actionCategory;
    if (message.androidChannelId) out.channelId = message.androidChannelId;
    if (message.imageUrl) out.richContent = { image: message.imageUrl };
    const level = interruptionLevelOf(message);
    if (level) out.interruptionLevel = level;
  }
  if (message.data && Object.keys(message.data).length > 0) out.data = message.data;
  if (message.expiresAt) out.ttl = Math.max(0, Math.floor((message.expiresAt.getTime() - now.getTime()) / 1000));
  return out;
}

function fcmPayloadBytes(content: PushContent): number {
  const notification: Record<string, string | number> = {};
  if (!content.silent) {
    notification.title = content.title;
    if (content.body) notification.body = content.body;
    if (content.actionCategory) notification.click_action = content.actionCategory;
    // android.notification's fields, counted as if beside the title (the image is in both).
    if (content.imageUrl) notification.image = content.imageUrl;
    if (content.sound) notification.sound = content.sound;
    if (content.androidChannelId) notification.channel_id = content.androidChannelId;
    if (content.threadId) notification.tag = content.threadId;
    if (content.badge !== undefined) notification.notification_count = content.badge;
  }
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
