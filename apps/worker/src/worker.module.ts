import { type DynamicModule, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock, Config } from '@nudge/config';
import {
  EVENT_JOB_KINDS,
  EVENTS_PRUNE,
  EventsModule,
  WEBHOOK_CONCURRENCY,
  WEBHOOK_DELIVERY,
  WEBHOOK_TIMEOUT_MS,
  WebhookDeliveryHandler,
  WebhooksService,
} from '@nudge/events';
import {
  DEFAULT_INACTIVE_DAYS,
  EXPO_RECEIPTS,
  EXPO_RECEIPTS_EVERY_SECONDS,
  PUSH_JOB_KINDS,
  ExpoReceiptsService,
  PushJobsModule,
  PushModule,
  type PushProviderOverrides,
  SEND_NOTIFICATION,
  SendNotificationHandler,
  TOKEN_CLEANUP,
  TokenCleanupService,
} from '@nudge/push';
import { type KnownJobKind, QueueModule, Worker } from '@nudge/queue';
import {
  REMINDER_JOB_KINDS,
  REMINDER_SWEEP,
  RemindersModule,
  ReminderSweep,
  SEND_REMINDER,
  SEND_REMINDER_BATCH,
  SendReminderHandler,
} from '@nudge/reminders';
import { UsersModule } from '@nudge/users';

export interface WorkerModuleOptions {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  registry: Registry;
  clock?: Clock;
  /** Tests set knobs such as the poll interval; production uses the defaults. */
  queue?: Partial<Parameters<typeof QueueModule.forRoot>[0]>;
  /** Other endpoints or credentials for the push clients (tests: the local APNs and FCM fakes). */
  push?: PushProviderOverrides;
}

/** Every job kind this worker runs, and what runs it. */
@Injectable()
class JobHandlers implements OnModuleInit {
  constructor(
    private readonly worker: Worker,
    private readonly sendReminder: SendReminderHandler,
    private readonly sweep: ReminderSweep,
    private readonly sendNotification: SendNotificationHandler,
    private readonly tokenCleanup: TokenCleanupService,
    private readonly webhookDelivery: WebhookDeliveryHandler,
    private readonly webhooks: WebhooksService,
    private readonly expoReceipts: ExpoReceiptsService,
  ) {}

  onModuleInit(): void {
    // Reminders come in herds (everyone's 08:00): one handler call per batch of them.
    this.worker.registerBatch(SEND_REMINDER, this.sendReminder.handle, { maxBatch: SEND_REMINDER_BATCH });
    this.worker.register(REMINDER_SWEEP, this.sweep.handle);
    this.worker.register(SEND_NOTIFICATION, this.sendNotification.handle).register(TOKEN_CLEANUP, this.tokenCleanup.handle);
    this.worker.register(WEBHOOK_DELIVERY, this.webhookDelivery.handle).register(EVENTS_PRUNE, this.webhooks.prune);
    this.worker.register(EXPO_RECEIPTS, this.expoReceipts.handle);
    // The boot check: a kind the app enqueues but nobody handles would wait for ever.
    this.worker.assertHandles(ENQUEUED_KINDS);
  }
}

/** Every kind the libs enqueue; the compiler checks below that it lists each kind declared in JobPayloads. */
const ENQUEUED_KINDS = [...PUSH_JOB_KINDS, ...REMINDER_JOB_KINDS, ...EVENT_JOB_KINDS];
type Unlisted = Exclude<KnownJobKind, (typeof ENQUEUED_KINDS)[number]>;
// A compile error here names a kind declared in JobPayloads that no lib lists in its *_JOB_KINDS.
const everyKindListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyKindListed;

/** Wires the job handlers to the queue. Used by apps/worker, and by the API when ROLE=all. */
@Module({})
export class WorkerModule {
  static forRoot(options: WorkerModuleOptions): DynamicModule {
    const { config } = options;
    return {
      module: WorkerModule,
      imports: [
        QueueModule.forRoot({
          connectionString: options.databaseUrl,
          concurrency: config.workerConcurrency,
          leaseSeconds: config.jobLeaseSeconds,
          // Per kind: a timeout, so a hung provider call cannot hold a job (or a slot's buffer) for ever; and
          // send_notification's own slots, so a reminder herd never delays an event push by more than a batch.
          kinds: {
            [SEND_REMINDER]: { timeoutMs: config.jobTimeouts.sendReminderSeconds * 1000 },
            [SEND_NOTIFICATION]: {
              timeoutMs: config.jobTimeouts.sendNotificationSeconds * 1000,
              ...(config.notificationConcurrency > 0 ? { concurrency: config.notificationConcurrency } : {}),
            },
            // Slots of its own, so receivers that are slow or down never take the slots of pushes; the
            // handler's own timeout ends a slow receiver first, this one is the backstop.
            [WEBHOOK_DELIVERY]: { timeoutMs: WEBHOOK_TIMEOUT_MS + 5_000, concurrency: WEBHOOK_CONCURRENCY },
          },
          timeoutGraceMs: config.jobTimeouts.graceSeconds * 1000,
          housekeeping: { retentionDays: config.jobRetentionDays, deadRetentionDays: config.jobDeadRetentionDays },
          recurring: [
            { kind: REMINDER_SWEEP, everySeconds: 600 },
            { kind: TOKEN_CLEANUP, everySeconds: 86_400, payload: { inactiveDays: DEFAULT_INACTIVE_DAYS } },
            { kind: EVENTS_PRUNE, everySeconds: 3_600 },
            { kind: EXPO_RECEIPTS, everySeconds: EXPO_RECEIPTS_EVERY_SECONDS },
          ],
          clock: options.clock,
          logger: options.logger,
          registry: options.registry,
          ...options.queue,
        }),
        PushModule.forRoot(options.push),
        PushJobsModule,
        UsersModule,
        RemindersModule,
        EventsModule,
      ],
      providers: [SendReminderHandler, ReminderSweep, SendNotificationHandler, JobHandlers],
    };
  }
}
