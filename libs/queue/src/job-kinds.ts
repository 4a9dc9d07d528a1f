// Job kinds and their payloads, typed. Each lib that enqueues a kind adds it
// here by declaration merging, next to the kind's constant:
//
//   declare module '@nudge/queue' {
//     interface JobPayloads { send_notification: SendNotificationPayload }
//   }
//
// enqueue, enqueueMany, register and registerBatch then check the payload of
// a known kind against its type; a kind not listed (a test's, the bench's)
// takes any payload. The worker's boot check (Worker.assertHandles) makes
// sure every kind an app enqueues has a handler: a job of a kind nobody
// handles would wait for ever.

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface JobPayloads {}

/** A known kind's payload type; for any other kind, whatever the caller says (as before kinds were typed). */
export type PayloadOf<K extends string> = K extends keyof JobPayloads ? JobPayloads[K] : any;

/** Every kind some lib declared in JobPayloads. */
export type KnownJobKind = keyof JobPayloads & string;
