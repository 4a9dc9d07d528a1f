// The worker process: the queue's handlers, and no HTTP server but an
// optional /metrics listener (WORKER_METRICS_PORT).
import 'reflect-metadata';
import { closeSync, openSync, utimesSync } from 'node:fs';
import { createServer } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ConfigModule, createLogger, loadConfigOrExit, onShutdownSignal, PinoNestLogger, startTracing } from '@nudge/config';
import { DatabaseModule, prepareDatabaseOrExit } from '@nudge/database';
import { WorkerModule } from './worker.module.js';

const config = loadConfigOrExit({ ...process.env, ROLE: 'worker' });
const logger = createLogger({ level: config.logLevel, nodeEnv: config.nodeEnv });
const tracing = startTracing(config, { serviceName: 'nudge-worker', logger });
const database = await prepareDatabaseOrExit(config, logger);
// The queue gauges are read from the database and show on any API's /metrics;
// the counters (completed, failed, retried, durations) are this process's own.
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
// Prometheus scrapes each worker's counters here; nothing else is served.
const metricsServer = config.workerMetricsPort
  ? createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404).end();
        return;
      }
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    }).listen(config.workerMetricsPort)
  : undefined;
onShutdownSignal(logger, async () => {
  clearInterval(heartbeat);
  metricsServer?.close();
  await app.close();
  await tracing?.shutdown();
  await database.stop();
});
logger.info({ concurrency: config.workerConcurrency }, 'Nudge worker started');
