import {
  Inject,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type FactoryProvider,
  type OnApplicationBootstrap,
  type Provider,
} from '@nestjs/common';
import type { Registry } from 'prom-client';
import { QueueMetrics } from './metrics.js';
import { Worker, type WorkerOptions } from './worker.js';

export const QUEUE_OPTIONS = Symbol('QUEUE_OPTIONS');

export interface QueueModuleOptions extends WorkerOptions {
  /** Metrics are registered here when given. */
  registry?: Registry;
  /** Start claiming when the application boots (a worker process); false for an API-only process. Default true. */
  runWorker?: boolean;
  /** Passed to Worker.stop() on shutdown. Default 30000. */
  shutdownDeadlineMs?: number;
}

export interface QueueModuleAsyncOptions {
  imports?: DynamicModule['imports'];
  inject?: NonNullable<FactoryProvider['inject']>;
  useFactory: (...args: any[]) => QueueModuleOptions | Promise<QueueModuleOptions>;
}

// Starts the worker after every module's onModuleInit (where handlers are
// registered with worker.register(kind, handler)) and stops it when Nest
// shuts down (enableShutdownHooks turns SIGTERM into that).
class QueueLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(Worker) private readonly worker: Worker,
    @Inject(QUEUE_OPTIONS) private readonly options: QueueModuleOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.runWorker !== false) await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop({ deadlineMs: this.options.shutdownDeadlineMs ?? 30_000 });
  }
}

const providers: Provider[] = [
  {
    provide: QueueMetrics,
    inject: [QUEUE_OPTIONS],
    useFactory: (options: QueueModuleOptions) =>
      options.metrics ??
      (options.registry ? new QueueMetrics({ registry: options.registry, clock: options.clock, logger: options.logger }) : undefined),
  },
  {
    provide: Worker,
    inject: [QUEUE_OPTIONS, QueueMetrics],
    useFactory: (options: QueueModuleOptions, metrics: QueueMetrics | undefined) => {
      const worker = new Worker({ ...options, metrics });
      metrics?.useExecutor(worker.pool);
      metrics?.reportKinds(() => worker.handledKinds());
      return worker;
    },
  },
  QueueLifecycle,
];

/**
 * A thin Nest wrapper: provides the Worker (inject it and call register())
 * and QueueMetrics. Enqueue and the ops functions need no provider: call
 * them with your transaction (EntityManager, QueryRunner or pg client).
 */
@Module({})
export class QueueModule {
  static forRoot(options: QueueModuleOptions): DynamicModule {
    return {
      module: QueueModule,
      global: true,
      providers: [{ provide: QUEUE_OPTIONS, useValue: options }, ...providers],
      exports: [Worker, QueueMetrics, QUEUE_OPTIONS],
    };
  }

  static forRootAsync(options: QueueModuleAsyncOptions): DynamicModule {
    return {
      module: QueueModule,
      global: true,
      imports: options.imports ?? [],
      providers: [{ provide: QUEUE_OPTIONS, inject: options.inject ?? [], useFactory: options.useFactory }, ...providers],
      exports: [Worker, QueueMetrics, QUEUE_OPTIONS],
    };
  }
}
