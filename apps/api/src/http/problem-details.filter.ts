import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { DomainError, type DomainErrorCode, type FieldError, LOGGER } from '@nudge/config';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
  errorId?: string;
}

const STATUS_OF: Record<DomainErrorCode, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problem(status: number, detail: string, extra: Partial<ProblemDetails> = {}): ProblemDetails {
  const title = TITLES[status] ?? 'Error';
  const slug = title.toLowerCase().replace(/[^a-z]+/g, '-');
  return { type: `https://nudge.dev/problems/${slug}`, title, status, detail, ...extra };
}

/** Errors that Express's body parser raises before a route runs. */
function bodyParserProblem(error: unknown): ProblemDetails | undefined {
  const e = error as { type?: string; status?: number; expose?: boolean };
  if (typeof e?.type !== 'string' || typeof e.status !== 'number') return undefined;
  switch (e.type) {
    case 'entity.parse.failed':
      return problem(400, 'The request body is not valid JSON.', { errors: [{ path: '', message: 'malformed JSON' }] });
    case 'entity.too.large':
      return problem(413, 'The request body is larger than 64 KiB.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return problem(415, 'The request body must be UTF-8 JSON.');
    case 'content.type.unsupported':
      return problem(415, 'The request body must be JSON, sent with Content-Type: application/json.');
    default:
      return e.status >= 400 && e.status < 500 ? problem(e.status, 'The request body could not be read.') : undefined;
  }
}

/**
 * The one place errors become responses: RFC 9457 problem+json for every
 * error, never a stack trace. Anything unexpected is a 500 whose details go to
 * the log under an error id that the response shows.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const body = this.toProblem(exception, request);
    if (response.headersSent) return;
    if (body.status === 429) {
      const retryAfter = (exception as { retryAfterSeconds?: number }).retryAfterSeconds;
      response.setHeader('Retry-After', String(retryAfter ?? 60));
    }
    if (body.status === 503) response.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    response.status(body.status).type('application/problem+json').send(JSON.stringify(body));
  }

  private toProblem(exception: unknown, request: Request): ProblemDetails {
    const instance = request.originalUrl?.split('?')[0];
    if (exception instanceof DomainError) {
      return problem(STATUS_OF[exception.code], exception.message, { instance, errors: exception.errors });
    }
    if (exception instanceof ThrottlerException) {
      return problem(429, 'Too many requests; slow down and retry after the time in Retry-After.', { instance });
    }
    // Nest wraps the body parser's errors; the original says what went wrong.
    const parsed = bodyParserProblem(exception instanceof HttpException ? exception.cause : exception);
    if (parsed) return { ...parsed, instance };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        const detail = status === 404 ? `No route ${request.method} ${instance}.` : exception.message;
        return problem(status, detail, { instance });
      }
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ err: exception, method: request.method, path: instance }, 'database unavailable');
      return problem(503, 'The database is unavailable; retry shortly. Nothing was changed unless a later read shows it.', { instance });
    }
    const errorId = randomUUID();
    this.logger.error({ err: exception, errorId, method: request.method, path: instance }, 'unhandled error');
    return problem(500, 'Something went wrong on our side. Quote the error id when reporting it.', { instance, errorId });
  }
}

const DATABASE_RETRY_AFTER_SECONDS = 5;
// SQLSTATE classes 08 (connection exception) and 57P (operator intervention:
// shutdown, crash, not yet accepting), 53300 (too many connections), and the
// node errors of a refused or dropped socket.
const UNAVAILABLE_CODES = /^(08\w{3}|57P0[1-3]|53300|ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE)$/;
// TypeORM releases a transaction's query runner when its connection dies; the
// transaction's next query then fails with QueryRunnerAlreadyReleasedError, or
// (through the EntityManager) QueryRunnerProviderAlreadyReleasedError.
const UNAVAILABLE_MESSAGES =
  /Query runner already released|connection provided by a query runner was already released|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not established|the database system is (starting up|shutting down|in recovery mode)/i;

/**
 * A request that failed because PostgreSQL is down or restarting (seen
 * through TypeORM's driverError, pg's errors and AggregateError): a 503 the
 * client may retry, not a 500 bug report.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const e = error as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.test(e.code)) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
  const nested = [e.driverError, e.cause, ...(Array.isArray(e.errors) ? e.errors : [])];
  return nested.some((inner) => isDatabaseUnavailable(inner, depth + 1));
}
