import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Registry } from 'prom-client';
import { PinoNestLogger } from '@nudge/config';
import { ApiModule, type ApiModuleOptions } from './app.module.js';
import { guardJsonBody, guardUrl, requireJsonBody } from './http/body-guard.js';
import { httpMetrics } from './http/http-metrics.middleware.js';
import { problem } from './http/problem-details.filter.js';
import { setupOpenApi } from './http/openapi.js';
import { requestContext } from './http/request-id.middleware.js';
import { requestTracing } from './http/request-tracing.middleware.js';
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
  app.use(guardUrl());
  app.use(requireJsonBody());
  // application/json and its +json relatives (merge-patch+json, problem+json): a
  // body the parser skipped would reach a PATCH as "no change" and answer 200.
  app.useBodyParser('json', { limit: MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] });
  app.use(guardJsonBody());
  app.use(requestTracing());
  app.useGlobalPipes(validationPipe());
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  setupOpenApi(app);
  answerClientErrorsAsProblems(app);
  return app;
}

/**
 * Requests that Node's HTTP parser refuses before Express sees them (a URL or
 * headers over 16 KiB: 431; malformed HTTP: 400) get a problem+json answer
 * like every other error, instead of Node's bare status line.
 */
function answerClientErrorsAsProblems(app: NestExpressApplication): void {
  app.getHttpServer().on('clientError', (error: NodeJS.ErrnoException, socket: import('node:net').Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return void socket.destroy();
    const body =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? problem(431, 'The request line or headers are larger than the server accepts.')
        : problem(400, 'The request is not valid HTTP.');
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${body.status} ${body.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  });
}
