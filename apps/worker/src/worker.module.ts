import { type DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Clock, Config } from '@nudge/config';

export interface WorkerModuleOptions {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  clock?: Clock;
}

/** Wires the job handlers to the queue. Used by apps/worker, and by the API when ROLE=all. */
@Module({})
export class WorkerModule {
  static forRoot(_options: WorkerModuleOptions): DynamicModule {
    return { module: WorkerModule };
  }
}
