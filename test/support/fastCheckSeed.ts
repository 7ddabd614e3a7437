import fc from 'fast-check';

// CI runs every property on one recorded seed so that a clean clone gives the same cases each time;
// FC_SEED replays a reported counterexample, and locally (no CI) each run draws new cases to keep exploring.
const fromEnv = process.env.FC_SEED;
const seed = fromEnv !== undefined ? Number(fromEnv) : process.env.CI ? 20261125 : undefined;
if (seed !== undefined) {
  if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer, got ${fromEnv}`);
  fc.configureGlobal({ seed });
}
