// The worker process: no HTTP server, only the queue's handlers.
import 'reflect-metadata';
import { closeSync, openSync, utimesSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ConfigModule, createLogger, loadConfigOrExit, onShutdownSignal, PinoNestLogger } from '@nudge/config';
import { DatabaseModule, prepareDatabase } from '@nudge/database';
import { WorkerModule } from './worker.module.js';

const config = loadConfigOrExit({ ...process.env, ROLE: 'worker' });
const logger = createLogger({ level: config.logLevel });
const database = await prepareDatabase(config, logger);
// The worker serves no HTTP; its counters are per process and its queue gauges
// show on any API's /metrics. The registry still collects them, for a future push gateway.
const registry = new Registry();
collectDefaultMetrics({ register: registry });

const app = await NestFactory.createApplicationContext(
  {
    module: class WorkerRootModule {},
    imports: [
      ConfigModule.forRoot({ config, logger, registry }),
      DatabaseModule.forRoot({ url: database.url }),
      WorkerModule.forRoot({ config, logger, registry, databaseUrl: database.url }),
    ],
  },
  { logger: new PinoNestLogger(logger) },
);
await app.init();
// Container healthchecks read this file's age (docker-compose.yml).
const healthFile = config.workerHealthFile;
const heartbeat = healthFile
  ? setInterval(() => {
      const now = new Date();
      try {
        utimesSync(healthFile, now, now);
      } catch {
        closeSync(openSync(healthFile, 'a'));
      }
    }, 10_000)
  : undefined;
onShutdownSignal(logger, async () => {
  clearInterval(heartbeat);
  await app.close();
  await database.stop();
});
logger.info({ concurrency: config.workerConcurrency }, 'Nudge worker started');
