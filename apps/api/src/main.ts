// The API process. With ROLE=all (what `npm start` runs) the worker runs in
// the same process; with ROLE=api it serves HTTP only.
import 'reflect-metadata';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createLogger, loadConfigOrExit, onShutdownSignal, startTracing } from '@nudge/config';
import { prepareDatabaseOrExit } from '@nudge/database';
import { WorkerModule } from '../../worker/src/worker.module.js';
import { createApiApp } from './app.factory.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, nodeEnv: config.nodeEnv });
if (config.role === 'worker') {
  logger.error('ROLE=worker: start apps/worker (npm run start:worker) instead of the API');
  process.exit(78);
}
if (config.usingDevelopmentSecret) logger.warn('AUTH_JWT_SECRET is not set: using the development secret (never in production)');

const tracing = startTracing(config, { serviceName: config.role === 'all' ? 'nudge' : 'nudge-api', logger });
const database = await prepareDatabaseOrExit(config, logger);
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const app = await createApiApp({
  config,
  logger,
  registry,
  databaseUrl: database.url,
  imports: config.role === 'all' ? [WorkerModule.forRoot({ config, logger, registry, databaseUrl: database.url })] : [],
});
onShutdownSignal(logger, async () => {
  await app.close();
  await tracing?.shutdown();
  await database.stop();
});
await app.listen(config.port, '0.0.0.0');

const url = `http://localhost:${config.port}`;
logger.info({ url, role: config.role, embeddedDatabase: database.embedded }, `Nudge is listening on ${url}`);
if (process.stdout.isTTY || database.embedded) {
  console.log(
    `\n  Nudge API: ${url}   (docs: ${url}/docs, dashboard: ${url}/ops)\n` +
      `  A token:   npm run token -- alice            (ops: npm run token -- admin --scope ops)\n`,
  );
}
