import { constants } from 'node:fs';
import { aptInstall, hasAccess } from './apt.js';

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

const executable = (path: string) => hasAccess(path, constants.X_OK);

export function findChromium(options: LookupOptions = {}): ChromiumLookup {
  const env = options.env ?? process.env;
  const candidates = options.candidates ?? ['/usr/bin/chromium'];

  if (env.CHROMIUM_PATH) {
    return executable(env.CHROMIUM_PATH)
      ? { path: env.CHROMIUM_PATH, installed: false }
      : { path: null, reason: `CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file` };
  }
  const found = candidates.find(executable);
  if (found) return { path: found, installed: false };

  const howTo = "install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH to run them";
  const failed = aptInstall('chromium', `Chromium at ${candidates.join(', ')}`, {
    isRoot: options.isRoot,
    aptGet: options.aptGet,
    log: options.log,
  });
  if (failed !== null) return { path: null, reason: `${failed}: ${howTo}` };
  const installed = candidates.find(executable);
  return installed
    ? { path: installed, installed: true }
    : { path: null, reason: `apt-get installed chromium, yet none is at ${candidates.join(', ')}` };
}
