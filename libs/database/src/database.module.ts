import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import pg from 'pg';
import { dataSourceOptions } from './data-source.js';

export const PG_POOL = Symbol('PG_POOL');

/**
 * The TypeORM connection for the domain modules (entities register themselves
 * with TypeOrmModule.forFeature) and a small `pg` pool for hot paths that talk
 * SQL directly, such as the job queue.
 */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  static forRoot(options: { url: string; poolSize?: number }): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(options.url),
          autoLoadEntities: true,
          // Migrations are run before Nest boots, under an advisory lock.
          migrationsRun: false,
        }),
      ],
      providers: [
        {
          provide: PG_POOL,
          useFactory: () => {
            const pool = new pg.Pool({
              connectionString: options.url,
              max: options.poolSize ?? 10,
              application_name: 'nudge',
              connectionTimeoutMillis: 5_000,
            });
            // An idle client that loses its connection (database restart) must
            // not crash the process; the pool replaces it on next use.
            pool.on('error', () => undefined);
            return pool;
          },
        },
      ],
      exports: [PG_POOL],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
