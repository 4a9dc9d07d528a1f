import type { Logger } from 'pino';
import { ConfigError, loadConfig } from './load-config.js';
import type { Config } from './config.schema.js';

/** Loads the configuration or stops the process with a message naming each bad variable. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

/**
 * Runs `shutdown` once on SIGINT or SIGTERM, then exits. A second signal while
 * shutting down exits at once, for the impatient Ctrl-C.
 */
export function onShutdownSignal(logger: Logger, shutdown: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    shutdown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
