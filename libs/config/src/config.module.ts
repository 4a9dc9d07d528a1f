import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { Clock, SystemClock } from './clock.js';
import type { Config } from './config.schema.js';

export const CONFIG = Symbol('CONFIG');
export const LOGGER = Symbol('LOGGER');

/**
 * Provides the validated configuration, the root logger and the clock to every
 * module. Tests pass their own clock (a FixedClock) and configuration.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(options: { config: Config; logger: Logger; clock?: Clock }): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: CONFIG, useValue: options.config },
        { provide: LOGGER, useValue: options.logger },
        { provide: Clock, useValue: options.clock ?? new SystemClock() },
      ],
      exports: [CONFIG, LOGGER, Clock],
    };
  }
}
