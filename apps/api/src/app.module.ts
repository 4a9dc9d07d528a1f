import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import type { Logger } from 'pino';
import { type Clock, type Config, ConfigModule } from '@nudge/config';
import { DatabaseModule } from '@nudge/database';
import { AuthGuard } from './auth/auth.guard.js';
import { HealthController } from './health/health.controller.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';

export interface ApiModuleOptions {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  clock?: Clock;
  /** Extra modules to run in the same process, e.g. the worker when ROLE=all. */
  imports?: DynamicModule[];
}

@Module({})
export class ApiModule {
  static forRoot(options: ApiModuleOptions): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot({ config: options.config, logger: options.logger, clock: options.clock }),
        DatabaseModule.forRoot({ url: options.databaseUrl }),
        ...(options.imports ?? []),
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }
}
