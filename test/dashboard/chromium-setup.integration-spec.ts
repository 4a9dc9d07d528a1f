import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findChromium } from '../support/chromium.js';

// How `npm test` gets the browser for the dashboard tests on a fresh machine,
// with a stand-in apt-get so that nothing is installed for real.
describe('finding Chromium for the browser tests', () => {
  const folder = mkdtempSync(join(tmpdir(), 'nudge-chromium-lookup-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const browser = join(folder, 'chromium');
  const calls = join(folder, 'apt-calls');
  const script = (name: string, body: string) => {
    const path = join(folder, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  // Records its arguments; `install` puts an executable where Debian's package would.
  const aptGet = script(
    'apt-get',
    `echo "$*" >> ${calls}\ncase "$1" in install) printf '#!/bin/sh\\n' > ${browser}; chmod +x ${browser};; esac`,
  );
  const failingAptGet = script(
    'apt-get-offline',
    'case "$1" in --version) exit 0;; esac\necho "E: Unable to fetch some archives" >&2\nexit 100',
  );
  const quiet = { log: () => undefined, env: {} };

  it("installs Debian's chromium with apt-get (update first) when root and none is there", () => {
    const lookup = findChromium({ ...quiet, candidates: [browser], isRoot: true, aptGet });
    expect(lookup).toEqual({ path: browser, installed: true });
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
      '--version',
      'update -qq',
      'install -y -qq --no-install-recommends chromium',
    ]);
  });

  it('uses the browser that is there, installing nothing', () => {
    rmSync(calls, { force: true });
    expect(findChromium({ ...quiet, candidates: [browser], isRoot: true, aptGet })).toEqual({ path: browser, installed: false });
    expect(existsSync(calls)).toBe(false);
    expect(findChromium({ ...quiet, env: { CHROMIUM_PATH: browser }, candidates: [], isRoot: false, aptGet })).toEqual({
      path: browser,
      installed: false,
    });
  });

  it('skips with the reason and the way to run them when it cannot install', () => {
    const missing = [join(folder, 'no-chromium')];
    const asUser = findChromium({ ...quiet, candidates: missing, isRoot: false, aptGet });
    expect(asUser).toMatchObject({
      path: null,
      reason: expect.stringMatching(/needs root: install Debian's chromium .* or set CHROMIUM_PATH/),
    });
    const noApt = findChromium({ ...quiet, candidates: missing, isRoot: true, aptGet: join(folder, 'no-apt-get') });
    expect(noApt).toMatchObject({ path: null, reason: expect.stringMatching(/no apt-get/) });
    const offline = findChromium({ ...quiet, candidates: missing, isRoot: true, aptGet: failingAptGet });
    expect(offline).toMatchObject({
      path: null,
      reason: expect.stringMatching(/apt-get update failed \(E: Unable to fetch some archives\)/),
    });
    const badPath = findChromium({ ...quiet, env: { CHROMIUM_PATH: '/nowhere/chromium' }, candidates: [browser], isRoot: true, aptGet });
    expect(badPath).toMatchObject({ path: null, reason: expect.stringMatching(/CHROMIUM_PATH=\/nowhere\/chromium is not an executable/) });
  });
});
