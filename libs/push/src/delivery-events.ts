import type { NewEvent } from '@nudge/events';

/** One device's send, as a delivery event names it. */
export interface DeliveredTo {
  jobId: string;
  userId: string;
  deviceId: string;
  installationId: string | null;
  platform: string;
  provider: string;
}

/**
 * delivery.sent (`detail`: the provider's message id), delivery.invalid_token
 * (`detail`: the provider's reason) or delivery.failed (`detail`: the error;
 * `retryable` when the job will try the device again). The send path and the
 * Expo receipts both announce with it, so the data has one shape.
 */
export function deliveryEvent(
  to: DeliveredTo,
  status: 'sent' | 'invalid_token' | 'failed',
  detail: string | null,
  retryable = false,
): NewEvent {
  const { userId } = to;
  if (status === 'sent') return { type: 'delivery.sent', userId, data: { ...to, providerMessageId: detail } };
  if (status === 'invalid_token') return { type: 'delivery.invalid_token', userId, data: { ...to, reason: detail } };
  return { type: 'delivery.failed', userId, data: { ...to, error: detail, retryable } };
}
