import { DomainError } from '@nudge/config';

// The fields an app sets on a push beside its text (docs/push-fields.md): one
// shape from the API through the reminder row or the job's payload to every
// platform's builder in payload.ts.

export const INTERRUPTION_LEVELS = ['passive', 'active', 'time-sensitive'] as const;
export type InterruptionLevel = (typeof INTERRUPTION_LEVELS)[number];

/** A sound the app bundles (its file name), or `default`: 1–64 of `[A-Za-z0-9._-]`. */
export const SOUND_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_BADGE = 99_999;
export const MAX_THREAD_ID_LENGTH = 64;
export const MAX_IMAGE_URL_LENGTH = 1024;
export const MAX_ANDROID_CHANNEL_ID_LENGTH = 64;
/** Four weeks: the longest FCM and the push services keep a push (APNs and Expo keep it about as long). */
export const MAX_TTL_SECONDS = 2_419_200;

export interface PushOptions {
  /** Omitted: the platform's default sound; null: none; else a sound the app bundles. */
  sound?: string | null;
  /** The app icon's count; 0 clears it. */
  badge?: number;
  /** Groups pushes: APNs thread-id; Android and Web: the tag (a newer push with it replaces the shown one). */
  threadId?: string;
  /** An https image: APNs mutable-content for the app's Notification Service Extension; FCM, Web and Expo show it. */
  imageUrl?: string;
  androidChannelId?: string;
  /** `passive` or `active`; `time-sensitive` travels as `timeSensitive: true` (see resolveInterruptionLevel). */
  interruptionLevel?: Exclude<InterruptionLevel, 'time-sensitive'>;
  /** A background / data-only push: nothing shown, the app wakes with the data. */
  silent?: boolean;
}

export const PUSH_OPTION_KEYS = [
  'sound',
  'badge',
  'threadId',
  'imageUrl',
  'androidChannelId',
  'interruptionLevel',
  'silent',
] as const satisfies readonly (keyof PushOptions)[];

/** The push fields as a caller sends them: `interruptionLevel` may still say `time-sensitive`, and null clears a field. */
export type PushOptionsInput = { [K in Exclude<keyof PushOptions, 'interruptionLevel'>]?: PushOptions[K] | null } & {
  interruptionLevel?: InterruptionLevel | null;
};

/**
 * `timeSensitive: true` and `interruptionLevel: 'time-sensitive'` are one
 * thing: it pierces quiet hours and iOS Focus. The level is stored as
 * `timeSensitive` (which the category preferences may turn off at send time),
 * so only `passive` or `active` remains as `interruptionLevel`. A request
 * that asks for both time-sensitive and another level is a 400.
 */
export function resolveInterruptionLevel(
  timeSensitive: boolean | undefined,
  level: InterruptionLevel | null | undefined,
): { timeSensitive: boolean | undefined; interruptionLevel: PushOptions['interruptionLevel'] | null | undefined } {
  if (level === 'time-sensitive') {
    if (timeSensitive === false) {
      throw DomainError.invalid([
        { path: 'interruptionLevel', message: "interruptionLevel 'time-sensitive' contradicts timeSensitive false" },
      ]);
    }
    return { timeSensitive: true, interruptionLevel: null };
  }
  if (level && timeSensitive === true) {
    throw DomainError.invalid([
      { path: 'interruptionLevel', message: `interruptionLevel '${level}' contradicts timeSensitive true (which is 'time-sensitive')` },
    ]);
  }
  // A passive or active level given alone ends time-sensitivity; timeSensitive given alone keeps the level.
  return { timeSensitive: level ? false : timeSensitive, interruptionLevel: level };
}

/**
 * The push fields to store: `stored` with `input` applied (a field left out
 * keeps its value, null clears it; `sound: null` is kept, as it means "no
 * sound"), only the fields that are set.
 */
export function mergePushOptions(stored: PushOptions, input: PushOptionsInput, interruptionLevel = input.interruptionLevel): PushOptions {
  const merged: Record<string, unknown> = { ...stored };
  const given: Record<string, unknown> = { ...input, interruptionLevel };
  for (const key of PUSH_OPTION_KEYS) {
    const value = given[key];
    if (value === undefined) continue;
    if (value === null && key !== 'sound') delete merged[key];
    else if (key === 'silent' && value === false) delete merged[key];
    else merged[key] = value;
  }
  return merged as PushOptions;
}

/** The interruption level a push carries: time-sensitive (after the category preference) wins over the stored level. */
export function interruptionLevelOf(options: PushOptions & { timeSensitive?: boolean }): InterruptionLevel | undefined {
  return options.timeSensitive ? 'time-sensitive' : options.interruptionLevel;
}

/** The push fields of a stored reminder or job payload, for the API's view (every field, null when unset). */
export function pushOptionsView(options: PushOptions | null | undefined, timeSensitive: boolean) {
  const o = options ?? {};
  return {
    sound: o.sound === undefined ? 'default' : o.sound,
    badge: o.badge ?? null,
    threadId: o.threadId ?? null,
    imageUrl: o.imageUrl ?? null,
    androidChannelId: o.androidChannelId ?? null,
    interruptionLevel: interruptionLevelOf({ ...o, timeSensitive }) ?? 'active',
    silent: o.silent ?? false,
  };
}
