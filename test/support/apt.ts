import { spawnSync } from 'node:child_process';
import { accessSync } from 'node:fs';
import { userInfo } from 'node:os';

// Installs a Debian package for a test that needs a program the machine may
// lack (Chromium for the browser tests, libfaketime for the clock-skew test):
// as root on a machine with apt-get, `apt-get update` then `apt-get install`;
// otherwise the caller skips its tests with the reason returned here.

export interface AptOptions {
  isRoot?: boolean;
  aptGet?: string;
  log?: (line: string) => void;
}

/** Null once `pkg` is installed, else why not (the caller appends how to run its tests anyway). `what`: what is missing. */
export function aptInstall(pkg: string, what: string, options: AptOptions = {}): string | null {
  const isRoot = options.isRoot ?? userInfo().uid === 0;
  const aptGet = options.aptGet ?? 'apt-get';
  const log = options.log ?? ((line: string) => console.log(line));
  if (spawnSync(aptGet, ['--version'], { stdio: 'ignore' }).status !== 0) return `no ${what} and no apt-get`;
  if (!isRoot) return `no ${what}, and installing it needs root`;

  log(`Installing Debian's ${pkg} with apt-get (once per machine)…`);
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const steps = [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', pkg],
  ];
  for (const args of steps) {
    const run = spawnSync(aptGet, args, { env: aptEnv, encoding: 'utf8', timeout: 15 * 60_000 });
    if (run.status !== 0) {
      const detail = (run.error?.message ?? run.stderr ?? '').trim().split('\n').pop() || `exit ${run.status}`;
      return `apt-get ${args[0]} failed (${detail})`;
    }
  }
  return null;
}

/** Whether `path` is there with `mode` (fs.constants.X_OK, R_OK): is what a package provides installed. */
export function hasAccess(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}
