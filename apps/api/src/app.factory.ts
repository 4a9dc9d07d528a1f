import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Registry } from 'prom-client';
import { PinoNestLogger } from '@nudge/config';
import { ApiModule, type ApiModuleOptions } from './app.module.js';
import { httpMetrics } from './http/http-metrics.middleware.js';
import { setupOpenApi } from './http/openapi.js';
import { requestContext } from './http/request-id.middleware.js';
import { validationPipe } from './http/validation.js';

export const MAX_BODY_BYTES = 64 * 1024;

/** Builds the HTTP application exactly as production runs it; tests use it too. */
export async function createApiApp(options: ApiModuleOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(options), {
    bodyParser: false,
    logger: new PinoNestLogger(options.logger),
  });
  // Before the body parser, so that a request it rejects still gets an id and a log line.
  app.use(requestContext(options.logger));
  app.use(httpMetrics(app.get(Registry)));
  app.useBodyParser('json', { limit: MAX_BODY_BYTES });
  app.useGlobalPipes(validationPipe());
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  setupOpenApi(app);
  return app;
}
