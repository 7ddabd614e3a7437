/**
 * The shard module of the engine's failure tests (./engine.test.ts): the workers import it in place of
 * the real one, so a test can break the workers alone (the calling thread builds the plan's own shard).
 * spec.broken 'build': a worker cannot build its shard; 'run': every chunk a worker takes throws a TypeError.
 */
import type { Shard } from '../../../src/solvers/parallel/engine.js';

export function createShard(spec: { broken: 'build' | 'run' }): Shard {
  if (spec.broken === 'build') throw new Error('this worker cannot build its shard');
  return {
    run() {
      throw new TypeError('a chunk failed on a worker');
    },
  };
}
