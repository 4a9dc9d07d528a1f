import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { userInfo } from 'node:os';

// The browser tests drive Debian's Chromium, never a browser that Playwright
// (or anything else) downloads. `npm test` finds it itself: CHROMIUM_PATH when
// set, /usr/bin/chromium when present, otherwise, as root on a machine with
// apt-get, Debian's `chromium` package is installed once; failing all of that,
// the browser tests are skipped with a message that says how to run them.

export type ChromiumLookup = { path: string; installed: boolean } | { path: null; reason: string };

export interface LookupOptions {
  env?: Record<string, string | undefined>;
  candidates?: string[];
  isRoot?: boolean;
  aptGet?: string;
  log?: (line: string) => void;
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export function findChromium(options: LookupOptions = {}): ChromiumLookup {
  const env = options.env ?? process.env;
  const candidates = options.candidates ?? ['/usr/bin/chromium'];
  const isRoot = options.isRoot ?? userInfo().uid === 0;
  const aptGet = options.aptGet ?? 'apt-get';
  const log = options.log ?? ((line: string) => console.log(line));

  if (env.CHROMIUM_PATH) {
    return executable(env.CHROMIUM_PATH)
      ? { path: env.CHROMIUM_PATH, installed: false }
      : { path: null, reason: `CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file` };
  }
  const found = candidates.find(executable);
  if (found) return { path: found, installed: false };

  const howTo = "install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH to run them";
  if (spawnSync(aptGet, ['--version'], { stdio: 'ignore' }).status !== 0) {
    return { path: null, reason: `no Chromium at ${candidates.join(', ')} and no apt-get: ${howTo}` };
  }
  if (!isRoot) return { path: null, reason: `no Chromium at ${candidates.join(', ')}, and installing it needs root: ${howTo}` };

  log("Browser tests: installing Debian's chromium with apt-get (once per machine)…");
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const steps = [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'chromium'],
  ];
  for (const args of steps) {
    const run = spawnSync(aptGet, args, { env: aptEnv, encoding: 'utf8', timeout: 15 * 60_000 });
    if (run.status !== 0) {
      const detail = (run.error?.message ?? run.stderr ?? '').trim().split('\n').pop() || `exit ${run.status}`;
      return { path: null, reason: `apt-get ${args[0]} failed (${detail}): ${howTo}` };
    }
  }
  const installed = candidates.find(executable);
  return installed
    ? { path: installed, installed: true }
    : { path: null, reason: `apt-get installed chromium, yet none is at ${candidates.join(', ')}` };
}
