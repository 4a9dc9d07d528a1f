import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { logContext } from '@nudge/config';

const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane), sends
 * it back, puts it on every log line written while the request runs, and logs
 * one line per request with its status and duration. Query strings are not
 * logged: they may carry cursors and ids, never needed to debug a status.
 */
export function requestContext(logger: Logger) {
  return (request: Request, response: Response, next: NextFunction) => {
    const header = request.headers['x-request-id'];
    const requestId = typeof header === 'string' && INCOMING_ID.test(header) ? header : randomUUID();
    response.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    response.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          requestId,
          method: request.method,
          path: request.originalUrl.split('?')[0],
          status: response.statusCode,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    });
    logContext.run({ requestId }, next);
  };
}
