import { DomainError, type FieldError } from '@nudge/config';
import { type LocalizedText, variantsOf } from './localized-text.js';
import { checkPayloadSize, type PushContent } from './payload.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
// What a text takes in a payload's JSON, escapes included.
const jsonBytes = (text: string) => bytes(JSON.stringify(text));

/** Push content whose title and body may be localized (a map by BCP 47 tag). */
export type LocalizedPushContent = Omit<PushContent, 'title' | 'body'> & { title: LocalizedText; body?: LocalizedText | null };

/**
 * Refuses content whose push would exceed 4 KiB on any platform, as a 400
 * naming the field that takes the most room (the one worth shortening), so
 * an oversized reminder or notification is refused when it is saved rather
 * than dying at send time. Every push field counts (docs/push-fields.md). The action category counts towards the size but
 * is never the field named: it is ours, not the caller's.
 *
 * Localized text: every title variant and every body variant is checked, each
 * with the longest variant of the other field (the worst push it can be part
 * of, as a device may get any title with any body when the languages of the
 * two maps differ), and each offending variant is named (`title.de`).
 */
export function assertPayloadFits(content: LocalizedPushContent): void {
  const titles = variantsOf('title', content.title);
  const bodies = variantsOf('body', content.body);
  const longest = <T extends { text: string }>(list: T[]) =>
    list.reduce<T | undefined>((max, v) => (max === undefined || jsonBytes(v.text) > jsonBytes(max.text) ? v : max), undefined);
  const longestTitle = longest(titles)!;
  const longestBody = longest(bodies);
  const pairs = [
    ...titles.map((title) => ({ title, body: longestBody })),
    ...bodies.filter((body) => body !== longestBody).map((body) => ({ title: longestTitle, body })),
  ];
  const errors: FieldError[] = [];
  for (const { title, body } of pairs) {
    const check = checkPayloadSize({ ...content, title: title.text, body: body?.text });
    if (check.ok) continue;
    const sizes: [string, number][] = [
      [title.path, bytes(title.text)],
      [body?.path ?? 'body', bytes(body?.text ?? '')],
      ['data', content.data ? bytes(JSON.stringify(content.data)) : 0],
      ['imageUrl', bytes(content.imageUrl ?? '')],
      ['threadId', bytes(content.threadId ?? '')],
      ['androidChannelId', bytes(content.androidChannelId ?? '')],
      ['sound', bytes(content.sound ?? '')],
    ];
    const [path] = sizes.reduce((largest, entry) => (entry[1] > largest[1] ? entry : largest));
    if (!errors.some((e) => e.path === path)) errors.push({ path, message: `${path}: ${check.message}` });
  }
  if (errors.length > 0) throw DomainError.invalid(errors, 'The push would be too large.');
}
