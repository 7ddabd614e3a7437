/**
 * The engine's own contracts: the thread setting and when it applies, the chunks of the rows,
 * worker start-up failures (the run falls back to one thread and says why) and failures during a
 * phase (thrown on the calling thread, threads still released).
 */
import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { InvalidParameterError } from '../../../src/solvers/errors.js';
import { nativeBlas, nativeUnavailableReason } from '../../../src/solvers/linalg/backend.js';
import { currentCalibration } from '../../../src/solvers/analysis/calibration.js';
import { GRADIENT_PASS, GRADIENT_TERMS } from '../../../src/solvers/machines/gradientPass.js';
import { createLocalShard, type FleetSpec } from '../../../src/solvers/machines/machineShard.js';
import type { DenseMachineStorage } from '../../../src/solvers/machines/storage.js';
import {
  activeSolverWorkers,
  lastPhaseSyncSeconds,
  lastThreadStartFailure,
  runningSolverWorkers,
  startShardEngine,
  type ShardPlan,
} from '../../../src/solvers/parallel/engine.js';
import { MIN_CHUNK_WORK, TARGET_ROW_CHUNKS, rowChunks } from '../../../src/solvers/parallel/split.js';
import {
  DEFAULT_PARALLEL_MIN_WORK,
  parallelMinWork,
  setParallelMinWork,
  setSolverThreads,
  solverThreads,
  threadsForRun,
} from '../../../src/solvers/parallel/threads.js';
import { withBackend } from '../../support/backends.js';
import { allWorkersExited, forceThreads } from './support.js';

describe('thread setting', () => {
  it("defaults to 'auto' = os.availableParallelism(), accepts integers 1..64, rejects the rest", () => {
    expect(solverThreads()).toBe(Math.min(64, availableParallelism()));
    expect(setSolverThreads(3)).toBe(3);
    expect(solverThreads()).toBe(3);
    for (const bad of [0, -1, 1.5, 65, Number.NaN]) expect(() => setSolverThreads(bad)).toThrow(InvalidParameterError);
    expect(solverThreads()).toBe(3);
    expect(setSolverThreads('auto')).toBe(Math.min(64, availableParallelism()));
  });

  it('threads only from the work threshold on, and never more than the pieces', () => {
    withBackend('typescript', () => {
      expect(parallelMinWork()).toBe(DEFAULT_PARALLEL_MIN_WORK);
      setSolverThreads(4);
      try {
        expect(threadsForRun(DEFAULT_PARALLEL_MIN_WORK - 1, 10)).toBe(1);
        expect(threadsForRun(DEFAULT_PARALLEL_MIN_WORK, 10)).toBe(4);
        expect(threadsForRun(DEFAULT_PARALLEL_MIN_WORK, 3)).toBe(3);
        expect(threadsForRun(10 * DEFAULT_PARALLEL_MIN_WORK, 1)).toBe(1);
        const previous = setParallelMinWork(10);
        expect(previous).toBe(DEFAULT_PARALLEL_MIN_WORK);
        expect(threadsForRun(10, 10)).toBe(4);
        setParallelMinWork(previous);
        expect(() => setParallelMinWork(-1)).toThrow(InvalidParameterError);
        setSolverThreads(1);
        expect(threadsForRun(1e9, 10)).toBe(1);
      } finally {
        setSolverThreads('auto');
      }
    });
  });

  const noNative = nativeBlas() === null;
  it.skipIf(noNative)(
    `the native backend threads like the TypeScript one (its row kernels are single-threaded)${noNative ? ` [SKIPPED: ${nativeUnavailableReason()}]` : ''}`,
    () => {
      withBackend('native', () => {
        setSolverThreads(4);
        try {
          expect(threadsForRun(1e9, 10)).toBe(4);
          expect(threadsForRun(DEFAULT_PARALLEL_MIN_WORK - 1, 10)).toBe(1);
        } finally {
          setSolverThreads('auto');
        }
      });
    },
  );
});

describe('cutting the rows into chunks', () => {
  const total = (w: ArrayLike<number>, from = 0, to = w.length): number => {
    let s = 0;
    for (let k = from; k < to; k++) s += w[k];
    return s;
  };

  it('every row once, in order, chunks within one machine, of about total / 16 entries, and never by thread count', () => {
    const rng = (seed: number) => () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const next = rng(5);
    const rowWork = [
      Float64Array.from({ length: 200 }, () => 2000),
      Float64Array.from({ length: 37 }, () => Math.floor(next() * 900)),
      Float64Array.from([5]),
      new Float64Array(3), // rows with no nonzero extent still belong to a chunk
      Float64Array.from({ length: 400 }, () => 2000),
    ];
    const chunks = rowChunks(rowWork);
    const visited: string[] = [];
    for (const { machine, from, to } of chunks) {
      expect(to).toBeGreaterThan(from);
      for (let k = from; k < to; k++) visited.push(`${machine}:${k}`);
    }
    const expected: string[] = [];
    rowWork.forEach((w, i) => w.forEach((_, k) => expected.push(`${i}:${k}`)));
    expect(visited).toEqual(expected);
    const all = rowWork.reduce((s, w) => s + total(w), 0);
    const target = Math.max(all / TARGET_ROW_CHUNKS, MIN_CHUNK_WORK);
    for (const { machine, from, to } of chunks) expect(total(rowWork[machine], from, to)).toBeLessThanOrEqual(1.5 * target + 2000);
    expect(chunks.length).toBeGreaterThanOrEqual(TARGET_ROW_CHUNKS - rowWork.length);
    expect(chunks.length).toBeLessThanOrEqual(TARGET_ROW_CHUNKS + rowWork.length);
  });

  it('one chunk per machine when asked (native backend: no threads, fewer dgemv calls)', () => {
    const big = Float64Array.from({ length: 500 }, () => 2000);
    expect(rowChunks([big, big], 1)).toEqual([
      { machine: 0, from: 0, to: 500 },
      { machine: 1, from: 0, to: 500 },
    ]);
  });

  it('small systems: one chunk per machine', () => {
    expect(rowChunks([Float64Array.from([3, 3]), Float64Array.from([4])])).toEqual([
      { machine: 0, from: 0, to: 2 },
      { machine: 1, from: 0, to: 1 },
    ]);
  });
});

/**
 * A gradient-pass plan over `chunks` copies of a dense 4 x 3 block. `broken` breaks the workers alone: they
 * build their shard from ./brokenShard.ts, which cannot build one ('build') or throws in every chunk ('run').
 */
function gradientPlan(broken: 'build' | 'run' | null, chunks = 1): ShardPlan<FleetSpec> {
  const rows = [
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 10],
    [1, 0, 1],
  ];
  const machines: DenseMachineStorage[] = [];
  for (let s = 0; s < chunks; s++) {
    const machine = {
      storage: 'dense',
      p: 4,
      c: 3,
      full: true,
      cols: Int32Array.from([0, 1, 2]),
      rows: {
        a: Float64Array.from(rows.flat()),
        aStart: new Int32Array(4),
        aEnd: new Int32Array(4).fill(3),
        b: Float64Array.from([1, 1, 1, 1]),
      },
      basis: null,
    } as Partial<DenseMachineStorage>;
    machines.push(machine as DenseMachineStorage);
  }
  const spec = {
    outputOffset: Int32Array.from({ length: chunks + 1 }, (_, s) => 3 * s),
    scalarsPerChunk: 1,
    pass: GRADIENT_PASS.name,
    module: GRADIENT_PASS.module,
    params: {},
    n: 3,
    step: null,
    machines,
    ...(broken === null ? {} : { broken }),
  } as Partial<FleetSpec>;
  const shardModule = broken === null ? '../../../src/solvers/machines/machineShard.ts' : './brokenShard.ts';
  return {
    shardModule: new URL(shardModule, import.meta.url).href,
    backend: 'typescript',
    arena: false,
    n: 3,
    chunks,
    outputLength: 3 * chunks,
    scalarsPerChunk: 1,
    chunkWork: new Float64Array(chunks).fill(12),
    spec: spec as FleetSpec,
    createShard: createLocalShard,
  };
}

describe("a phase's synchronisation", () => {
  forceThreads(2, 'typescript', false);

  it('is measured over a threaded run and kept when the run ends, for the time-to-solution model', async () => {
    // Tiny chunks: a phase is mostly hand-over and barrier.
    const engine = startShardEngine(gradientPlan(null, 8));
    expect(engine.threads).toBe(2);
    const before = lastPhaseSyncSeconds();
    try {
      engine.input.set([1, 1, 1]);
      // Three phases are left out, then 20 are needed: 22 leave the measurement as it was.
      for (let phase = 0; phase < 22; phase++) engine.run(GRADIENT_TERMS);
      engine.dispose();
      expect(lastPhaseSyncSeconds()).toBe(before);
    } finally {
      engine.dispose();
    }
    const again = startShardEngine(gradientPlan(null, 8));
    let wallMs: number;
    try {
      again.input.set([1, 1, 1]);
      for (let phase = 0; phase < 3; phase++) again.run(GRADIENT_TERMS);
      const t0 = performance.now();
      for (let phase = 0; phase < 200; phase++) again.run(GRADIENT_TERMS);
      wallMs = (performance.now() - t0) / 200;
    } finally {
      again.dispose();
    }
    const sync = lastPhaseSyncSeconds();
    expect(sync).not.toBeNull();
    expect(sync).not.toBe(before);
    // Some of a phase's mean wall time, never more (milliseconds per phase against the recorded seconds):
    // with chunks of 12 entries the hand-out itself is much of the threads' busy time.
    expect(sync ?? 0).toBeGreaterThan(0);
    expect((sync ?? 0) * 1000).toBeLessThanOrEqual(wallMs);
    // The calibration prices a threaded phase at it.
    expect(currentCalibration().phaseSyncSeconds).toBe(sync);
    await allWorkersExited(runningSolverWorkers);
  });
});

describe('the data a threaded run reads', () => {
  forceThreads(2, 'typescript', false);

  it("is one shared copy, read by the calling thread too (any thread takes any chunk: two copies would double a phase's working set)", async () => {
    const plan = gradientPlan(null, 8);
    let localSpec: FleetSpec | null = null;
    const engine = startShardEngine({
      ...plan,
      createShard: (spec, n, context) => {
        localSpec = spec;
        return plan.createShard(spec, n, context);
      },
    });
    try {
      expect(engine.threads).toBe(2);
      const given = plan.spec.machines[0];
      const local = (localSpec as FleetSpec | null)?.machines[0];
      const givenA = given.storage === 'dense' ? given.rows?.a : undefined;
      const localA = local?.storage === 'dense' ? local.rows?.a : undefined;
      expect(localA).toBeDefined();
      expect(localA).not.toBe(givenA);
      expect(localA?.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(localA ?? [])).toEqual(Array.from(givenA ?? [0]));
      engine.input.set([1, 1, 1]);
      engine.run(GRADIENT_TERMS);
      const term = [5 * 1 + 14 * 4 + 24 * 7 + 1 * 1, 5 * 2 + 14 * 5 + 24 * 8 + 1 * 0, 5 * 3 + 14 * 6 + 24 * 10 + 1 * 1];
      expect(Array.from(engine.output.subarray(0, 3))).toEqual(term);
    } finally {
      engine.dispose();
    }
    await allWorkersExited(runningSolverWorkers);
  });
});

describe('start-up', () => {
  forceThreads(2, 'typescript', false);

  it('the workers start before the calling thread lays out the data, and load their code meanwhile; their setup follows', async () => {
    const plan = gradientPlan(null, 8);
    const before = activeSolverWorkers();
    let startedWhenLocal = -1;
    const engine = startShardEngine({
      ...plan,
      createShard: (spec, n, context) => {
        startedWhenLocal = activeSolverWorkers() - before;
        return plan.createShard(spec, n, context);
      },
    });
    try {
      expect(engine.threads).toBe(2);
      expect(startedWhenLocal).toBe(1);
      // The worker got its setup by message and runs its share: every chunk's term is there.
      engine.input.set([1, 1, 1]);
      engine.run(GRADIENT_TERMS);
      const term = [5 * 1 + 14 * 4 + 24 * 7 + 1 * 1, 5 * 2 + 14 * 5 + 24 * 8 + 1 * 0, 5 * 3 + 14 * 6 + 24 * 10 + 1 * 1];
      for (let chunk = 0; chunk < 8; chunk++) expect(Array.from(engine.output.subarray(3 * chunk, 3 * chunk + 3))).toEqual(term);
    } finally {
      engine.dispose();
    }
    await allWorkersExited(runningSolverWorkers);
  });
});

describe('one chunk on the calling thread', () => {
  forceThreads(2, 'typescript', false);

  it('runChunkHere runs that chunk alone, with the threads idle, and not after dispose', async () => {
    const engine = startShardEngine(gradientPlan(null, 8));
    expect(engine.threads).toBe(2);
    try {
      engine.input.set([1, 1, 1]);
      engine.run(GRADIENT_TERMS);
      const everyChunk = Float64Array.from(engine.output);
      expect(everyChunk.subarray(9, 12).some((v) => v !== 0)).toBe(true);
      engine.output.fill(0);
      engine.runChunkHere(GRADIENT_TERMS, 3);
      // Chunk 3's region (3 entries from 9) is its term again; no other chunk ran.
      expect(Array.from(engine.output.subarray(9, 12))).toEqual(Array.from(everyChunk.subarray(9, 12)));
      expect(Array.from(engine.output.subarray(0, 9)).every((v) => v === 0)).toBe(true);
      expect(Array.from(engine.output.subarray(12)).every((v) => v === 0)).toBe(true);
    } finally {
      engine.dispose();
    }
    expect(() => engine.runChunkHere(GRADIENT_TERMS, 0)).toThrow(/has ended/);
    await allWorkersExited(runningSolverWorkers);
  });
});

describe('worker failures', () => {
  // The workers build their shards from ./brokenShard.ts (see gradientPlan); the calling thread builds the real one.
  forceThreads(2, 'typescript', false);

  it('a worker that cannot build its shard: the run falls back to one thread and keeps the reason', async () => {
    const engine = startShardEngine(gradientPlan('build', 2));
    try {
      expect(engine.threads).toBe(1);
      expect(lastThreadStartFailure()).toMatch(/failed to start/);
      expect(activeSolverWorkers()).toBe(0);
      engine.input.set([1, 1, 1]);
      engine.run(GRADIENT_TERMS);
      // r = A 1 - b = (5, 14, 24, 1), A^T r, for each of the two chunks
      const term = [5 * 1 + 14 * 4 + 24 * 7 + 1 * 1, 5 * 2 + 14 * 5 + 24 * 8 + 1 * 0, 5 * 3 + 14 * 6 + 24 * 10 + 1 * 1];
      expect(Array.from(engine.output)).toEqual([...term, ...term]);
      expect(engine.scalarSum(0)).toBe(2 * (5 * 5 + 14 * 14 + 24 * 24 + 1));
    } finally {
      engine.dispose();
    }
    await allWorkersExited(runningSolverWorkers);
  });

  it('a worker that fails during a phase: the calling thread throws its error, and dispose still releases it', async () => {
    // A worker's first chunk throws a TypeError.
    const engine = startShardEngine(gradientPlan('run', 64));
    expect(engine.threads).toBe(2);
    expect(activeSolverWorkers()).toBe(1);
    try {
      // Which thread takes which chunk is up to the scheduler: the worker takes one within a few phases.
      let failure: unknown = null;
      for (let phase = 0; phase < 200 && failure === null; phase++) {
        try {
          engine.run(GRADIENT_TERMS);
        } catch (error) {
          failure = error;
        }
      }
      expect(String(failure)).toMatch(/solver worker thread failed: TypeError/);
    } finally {
      engine.dispose();
    }
    expect(activeSolverWorkers()).toBe(0);
    await allWorkersExited(runningSolverWorkers);
  });
});
