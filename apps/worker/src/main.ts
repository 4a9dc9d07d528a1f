// The worker process: no HTTP server, only the queue's handlers.
import 'reflect-metadata';
import { closeSync, openSync, utimesSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, createLogger, loadConfigOrExit, onShutdownSignal, PinoNestLogger } from '@nudge/config';
import { DatabaseModule, prepareDatabase } from '@nudge/database';
import { WorkerModule } from './worker.module.js';

const config = loadConfigOrExit({ ...process.env, ROLE: 'worker' });
const logger = createLogger({ level: config.logLevel });
const database = await prepareDatabase(config, logger);

const app = await NestFactory.createApplicationContext(
  {
    module: class WorkerRootModule {},
    imports: [
      ConfigModule.forRoot({ config, logger }),
      DatabaseModule.forRoot({ url: database.url }),
      WorkerModule.forRoot({ config, logger, databaseUrl: database.url }),
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
