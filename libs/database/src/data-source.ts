import { DataSource, type DataSourceOptions, type EntitySchema, type MixedList } from 'typeorm';
import { migrations } from '../../../migrations/index.js';

/** What TypeORM accepts as an entity: a class, a name or a schema. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for entity classes
type EntityTarget = Function | string | EntitySchema;

// The one description of Nudge's database for TypeORM: Nest builds its
// connection from it, and the migration CLI uses it as it is. Schema changes
// happen only through migrations, never `synchronize`.
export function dataSourceOptions(
  url: string,
  entities: MixedList<EntityTarget> = [],
): DataSourceOptions & { extra: { max: number; application_name: string; connectionTimeoutMillis: number } } {
  return {
    type: 'postgres',
    url,
    entities,
    migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    // The process's one pool (PG_POOL is this pool too: database.module.ts). A request
    // that cannot get a connection in 5 s fails (503) rather than queueing unboundedly.
    extra: { max: 20, application_name: 'nudge', connectionTimeoutMillis: 5_000 },
  };
}

export function createDataSource(url: string, entities?: MixedList<EntityTarget>): DataSource {
  return new DataSource(dataSourceOptions(url, entities));
}
