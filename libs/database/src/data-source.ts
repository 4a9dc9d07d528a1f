import { DataSource, type DataSourceOptions, type EntitySchema, type MixedList } from 'typeorm';
import { migrations } from '../../../migrations/index.js';

// The one description of Nudge's database for TypeORM: Nest builds its
// connection from it, and the migration CLI uses it as it is. Schema changes
// happen only through migrations, never `synchronize`.
export function dataSourceOptions(
  url: string,
  entities: MixedList<Function | string | EntitySchema> = [],
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: { max: 10, application_name: 'nudge' },
  };
}

export function createDataSource(url: string, entities?: MixedList<Function | string | EntitySchema>): DataSource {
  return new DataSource(dataSourceOptions(url, entities));
}
