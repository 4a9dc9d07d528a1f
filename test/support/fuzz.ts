// fast-check parameters shared by the property tests (bad input, apps, webhooks).
// Random seeds where a person runs the suite: they explore, and a failure prints
// its seed, which FUZZ_SEED replays. A fixed seed in CI, so the gate is
// deterministic. FUZZ_RUNS=2000 for a long exploration.
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : process.env.CI ? 20261202 : undefined;

export function fuzzRuns(n: number): { numRuns: number; endOnFailure: true; seed?: number } {
  return { numRuns: Number(process.env.FUZZ_RUNS ?? n), endOnFailure: true, ...(seed !== undefined ? { seed } : {}) };
}
