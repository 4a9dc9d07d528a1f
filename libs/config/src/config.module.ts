import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Clock, SystemClock } from './clock.js';
import type { Config } from './config.schema.js';

export const CONFIG = Symbol('CONFIG');
export const LOGGER = Symbol('LOGGER');

/**
 * Provides the validated configuration, the root logger and the clock to every
 * module, and the Prometheus registry. Tests pass their own clock (a
 * FixedClock) and configuration.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(options: { config: Config; logger: Logger; clock?: Clock; registry?: Registry }): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: CONFIG, useValue: options.config },
        { provide: LOGGER, useValue: options.logger },
        { provide: Clock, useValue: options.clock ?? new SystemClock() },
        // The process's Prometheus registry: /metrics serves it, the queue and the domain modules fill it.
        { provide: Registry, useValue: options.registry ?? new Registry() },
      ],
      exports: [CONFIG, LOGGER, Clock, Registry],
    };
  }
}
