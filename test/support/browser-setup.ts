import type { TestProject } from 'vitest/node';
import { findChromium } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Chromium the browser tests drive, or null when they are skipped. */
    chromiumPath: string | null;
    /** Why they are skipped. */
    chromiumSkipReason: string;
  }
}

// Runs once per `vitest run`, before the integration tests: find (or install) the browser.
export default function setup(project: TestProject) {
  const lookup = findChromium();
  if (lookup.path === null) console.warn(`\nBrowser tests (test/dashboard) are skipped: ${lookup.reason}.\n`);
  project.provide('chromiumPath', lookup.path);
  project.provide('chromiumSkipReason', lookup.path === null ? lookup.reason : '');
}
