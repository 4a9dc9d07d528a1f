import type { PushOptions } from './push-options.js';

// The port every push adapter implements. Workers hand it one message for one
// device and get back a classification, never an exception for something the
// provider answered: the caller decides what a classification means for the
// job (retry, deactivate the device, dead-letter) and the adapters stay dumb.

export const PUSH_PLATFORMS = ['ios', 'android', 'web', 'expo'] as const;
export type PushPlatform = (typeof PUSH_PLATFORMS)[number];
export const PUSH_PROVIDER_NAMES = ['apns', 'fcm', 'webpush', 'expo', 'simulated'] as const;
export type PushProviderName = (typeof PUSH_PROVIDER_NAMES)[number];

export interface PushMessage extends PushOptions {
  /** The device's push token as the provider issued it (`web`: the subscription JSON). */
  token: string;
  platform: PushPlatform;
  title: string;
  body?: string;
  /** Custom keys for the app; FCM receives every value as a string. */
  data?: Record<string, unknown>;
  /**
   * From the request's collapse key, else its job (see `collapseIdFor`): a
   * repeated send shows once, and a newer push of the same thing replaces an
   * older one. APNs: `apns-collapse-id`; FCM: android collapse_key and tag.
   */
  collapseId: string;
  /** After this instant the provider may drop the push instead of storing it. */
  expiresAt?: Date;
  /** Default `high`: a reminder is something the user asked to see. */
  priority?: 'high' | 'normal';
  timeSensitive?: boolean;
  /** The app's notification category (its buttons). APNs: `aps.category`; FCM: click_action and `data.category`. */
  actionCategory?: string;
  /** The device's app (its credentials and its pace; the simulated provider records it); unset: 'default', the env-configured credentials. */
  appId?: string;
}

export type PushOutcome =
  | { kind: 'sent'; providerMessageId?: string }
  /** The token will never work again: deactivate the device. */
  | { kind: 'invalid_token'; reason: string; invalidSince?: Date }
  /** Try again later, after `retryAfterSeconds` when the provider said so. */
  | { kind: 'transient'; reason: string; retryAfterSeconds?: number }
  /**
   * The provider's rate limit (429): not a failure of this message. The
   * shared pace slows down and the send goes again later, without using an
   * attempt (docs/pacing.md).
   */
  | { kind: 'throttled'; reason: string; retryAfterSeconds?: number }
  /** This message will never be accepted; retrying is pointless. */
  | { kind: 'permanent'; reason: string }
  /** Our credentials or settings are wrong: no send will work until an operator fixes them. */
  | { kind: 'configuration_error'; reason: string };

export type PushOutcomeKind = PushOutcome['kind'];

/** An answer that may go again later: a transient failure or the provider's rate limit. */
export type LaterOutcome = Extract<PushOutcome, { kind: 'transient' | 'throttled' }>;

export interface SendOptions {
  /** The job's signal (its timeout, a lost lease, shutdown): an adapter that can abort its call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Called synchronously right before each provider call; a throw stops that
   * call unsent. The job's lease check (JobContext.assertLease): a worker
   * frozen past its lease must not send what another worker now sends.
   */
  beforeSend?: () => void;
}

export interface PushProvider {
  readonly name: PushProviderName;
  /** Resolves with the provider's answer classified; rejects only on a bug or a broken dependency of ours, or when aborted. */
  send(message: PushMessage, options?: SendOptions): Promise<PushOutcome>;
  /** Optional: many messages at once, outcomes in their order (else the caller sends them one by one, concurrently). */
  sendMany?(messages: readonly PushMessage[], options?: SendOptions): Promise<PushOutcome[]>;
  /** Closes connections; idempotent. */
  close(): Promise<void>;
}
