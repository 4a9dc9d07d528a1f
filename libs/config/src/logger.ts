import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import { PrettyLogStream, prettyByDefault } from './pretty-log.js';

/** Per-request (or per-job) fields that every log line written inside it carries. */
export const logContext = new AsyncLocalStorage<Record<string, unknown>>();

// Paths pino blanks out wherever they appear. Push tokens, bearer tokens and
// secrets never reach a log line, whatever object they arrive in.
const REDACT_PATHS = [
  'pushToken',
  '*.pushToken',
  '*.*.pushToken',
  'push_token',
  '*.push_token',
  '*.*.push_token',
  'token',
  '*.token',
  '*.*.token',
  'authorization',
  '*.authorization',
  '*.*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'authJwtSecret',
  '*.authJwtSecret',
  'databaseUrl',
  '*.databaseUrl',
  'privateKey',
  '*.privateKey',
  '*.private_key',
  'apiKey',
  '*.apiKey',
];

/**
 * Fields of a database error that hold the statement's values: `parameters`
 * (every bound value), `detail` ("Key (platform, push_token)=(android, …)
 * already exists."), `where`, and the driver's copy of all of them. A logged
 * error keeps its message, code, constraint, table and statement text.
 */
const ERROR_FIELDS_WITH_VALUES = ['parameters', 'detail', 'where', 'driverError'];

/** pino's error serializer, without the values a database error carries. */
function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  const fields = { ...(serialized as Record<string, unknown>) };
  for (const field of ERROR_FIELDS_WITH_VALUES) delete fields[field];
  return fields;
}

/**
 * The process's logger: JSON lines, or, when `pretty` (by default: stdout is
 * a terminal and NODE_ENV is not production), lines for a person to read.
 */
export function createLogger(
  options: { level?: string; destination?: NodeJS.WritableStream; nodeEnv?: string; pretty?: boolean } = {},
): Logger {
  const pretty =
    options.pretty ?? (options.destination === undefined && prettyByDefault(process.stdout, options.nodeEnv ?? process.env.NODE_ENV));
  const destination = pretty ? new PrettyLogStream(options.destination ?? process.stdout, !process.env.NO_COLOR) : options.destination;
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      mixin: () => logContext.getStore() ?? {},
    },
    destination as pino.DestinationStream | undefined,
  );
}

/** Lets Nest's own messages go through pino as JSON too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
