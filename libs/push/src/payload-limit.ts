import { DomainError } from '@nudge/config';
import { checkPayloadSize, type PushContent } from './payload.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * Refuses content whose push would exceed 4 KiB on either platform, as a 400
 * naming the field that takes the most room (the one worth shortening), so
 * an oversized reminder or notification is refused when it is saved rather
 * than dying at send time. Every push field counts (docs/push-fields.md). The action category counts towards the size but
 * is never the field named: it is ours, not the caller's.
 */
export function assertPayloadFits(content: PushContent): void {
  const check = checkPayloadSize(content);
  if (check.ok) return;
  const sizes: [string, number][] = [
    ['title', bytes(content.title)],
    ['body', bytes(content.body ?? '')],
    ['data', content.data ? bytes(JSON.stringify(content.data)) : 0],
    ['imageUrl', bytes(content.imageUrl ?? '')],
    ['threadId', bytes(content.threadId ?? '')],
    ['androidChannelId', bytes(content.androidChannelId ?? '')],
    ['sound', bytes(content.sound ?? '')],
  ];
  const [path] = sizes.reduce((largest, entry) => (entry[1] > largest[1] ? entry : largest));
  throw DomainError.invalid([{ path, message: check.message }], 'The push would be too large.');
}
