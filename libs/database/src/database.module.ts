import { type DynamicModule, Global, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { dataSourceOptions } from './data-source.js';

export const PG_POOL = Symbol('PG_POOL');

/**
 * The TypeORM connection for the domain modules (entities register themselves
 * with TypeOrmModule.forFeature), and its `pg` pool as PG_POOL for the hot
 * paths that talk SQL directly: one pool per process for both, so a TypeORM
 * transaction and a raw statement wait for the same connections. TypeORM ends
 * the pool when Nest shuts down (after the worker has stopped, in
 * beforeApplicationShutdown). The queue's worker keeps a pool of its own.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(options: { url: string; poolSize?: number }): DynamicModule {
    const base = dataSourceOptions(options.url);
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...base,
          extra: { ...base.extra, max: options.poolSize ?? base.extra.max },
          autoLoadEntities: true,
          // Migrations are run before Nest boots, under an advisory lock.
          migrationsRun: false,
        }),
      ],
      providers: [
        {
          provide: PG_POOL,
          inject: [getDataSourceToken()],
          useFactory: (dataSource: DataSource): pg.Pool => (dataSource.driver as PostgresDriver).master as pg.Pool,
        },
      ],
      exports: [PG_POOL],
    };
  }
}
