import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { PinoNestLogger } from '@nudge/config';
import { ApiModule, type ApiModuleOptions } from './app.module.js';
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
  app.useBodyParser('json', { limit: MAX_BODY_BYTES });
  app.useGlobalPipes(validationPipe());
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  return app;
}
