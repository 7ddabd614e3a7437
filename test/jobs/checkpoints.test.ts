/**
 * Checkpoints of a job without Redis (src/jobs/computeJob.ts, src/jobs/checkpoints.ts,
 * src/jobs/store/checkpointCodec.ts): saving them does not change the outcome; an attempt given any
 * of them (through the binary codec, as a retry reads it back) ends with the uninterrupted outcome,
 * bit for bit, taking the analysis and the finished runs as they are and resuming the run under way
 * where it was; a snapshot that does not fit is discarded and its run starts over; every checkpoint
 * fits in the bytes the job is counted for; the codec keeps every number and array exactly and
 * refuses what it did not write; the writer writes the latest of the checkpoints saved meanwhile.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CheckpointWriter, type JobCheckpointing } from '../../src/jobs/checkpoints.js';
import { computeJob, type ComputeInput, type ComputeOutcome } from '../../src/jobs/computeJob.js';
import { checkpointBytesOfJob } from '../../src/jobs/apiKeys/jobBytes.js';
import { CheckpointUnreadableError, decodeCheckpoint, encodeCheckpoint, type JobCheckpoint } from '../../src/jobs/store/checkpointCodec.js';
import type { JobSpec } from '../../src/jobs/types.js';
import type { WorkProgress } from '../../src/solvers/cooperative.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { algorithms } from '../../src/solvers/algorithms/registry.js';
import { spectralDataOf } from '../../src/solvers/analysis/analyze.js';
import { partitionFromAssignment } from '../../src/solvers/problem.js';
import { isBlockRunSnapshot, type BlockRunSnapshot, type RunSnapshot } from '../../src/solvers/runner/snapshot.js';
import { csrFromDense } from '../../src/solvers/sparse/csr.js';

const n = 60;
const m = 4;
const assignment = Int32Array.from({ length: n }, (_, k) => k % m);
const A = generateMatrix({ generator: 'gaussian', n, mean: 1, seed: 8 });
const denseInput: ComputeInput = {
  type: 'solve',
  matrix: { storage: 'dense', A },
  rhs: null,
  partition: partitionFromAssignment(assignment, m),
  algorithms: ['dgd', 'dhbm', 'apc'],
  options: { tolerance: 1e-300, maxIterations: 6000, parameters: { dgd: { alpha: 1e-5 } }, stopOnStagnation: false },
};
const csrInput: ComputeInput = { ...denseInput, matrix: { storage: 'csr', A: csrFromDense(A) }, algorithms: ['mlm', 'dnag', 'cimmino'] };
/** Three right-hand sides, column after column (a block run per algorithm). */
const K = 3;
const severalRhs = Float64Array.from({ length: K * n }, (_, k) => Math.sin(k + 1) + (k % n === 0 ? 10 : 0));
const severalDense: ComputeInput = { ...denseInput, rhs: severalRhs, algorithms: ['dhbm', 'apc'] };
const severalCsr: ComputeInput = { ...csrInput, rhs: severalRhs, algorithms: ['dnag', 'mlm'] };
const TRACE_CAP = 64;

interface Attempt {
  outcome: ComputeOutcome;
  saved: Buffer[];
  progress: WorkProgress[];
  discarded: string[];
}

/** One attempt of the job: every checkpoint it saves (encoded), its progress, from `resumeFrom` when given. */
async function attempt(input: ComputeInput, resumeFrom: JobCheckpoint | null, intervalMs = 1): Promise<Attempt> {
  const saved: Buffer[] = [];
  const progress: WorkProgress[] = [];
  const discarded: string[] = [];
  const checkpoints: JobCheckpointing = {
    resumeFrom,
    intervalMs,
    save: (checkpoint) => saved.push(encodeCheckpoint(checkpoint)),
    discarded: (reason) => discarded.push(reason),
  };
  const outcome = await computeJob(input, {
    signal: new AbortController().signal,
    onProgress: (p) => progress.push({ ...p }),
    traceCap: TRACE_CAP,
    sliceMs: 0,
    checkpoints,
  });
  return { outcome, saved, progress, discarded };
}

const bits = (array: Float64Array | Int32Array): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);

/** The same outcome but for the runs' wall times. */
function expectSameOutcome(actual: ComputeOutcome, expected: ComputeOutcome): void {
  expect(actual.status).toBe(expected.status);
  expect(actual.result!.analysis!).toEqual(expected.result!.analysis!);
  const withoutTime = (outcome: ComputeOutcome) =>
    Object.fromEntries(
      Object.entries(outcome.result!.runs).map(([id, run]) => [
        id,
        { ...run, wallTimeMs: 0, ...(run.columns ? { columns: run.columns.map((column) => ({ ...column, wallTimeMs: 0 })) } : {}) },
      ]),
    );
  expect(withoutTime(actual)).toEqual(withoutTime(expected));
  expect(actual.runs.map((run) => run.algorithm)).toEqual(expected.runs.map((run) => run.algorithm));
  actual.runs.forEach((run, k) => {
    const other = expected.runs[k];
    expect(bits(run.solution).equals(bits(other.solution)), `${run.algorithm} solution`).toBe(true);
    for (const key of ['iteration', 'relativeResidual', 'relativeError', 'consensusDistance'] as const) {
      const [a, b] = [run.trace[key], other.trace[key]];
      expect(a === null || b === null ? a === b : bits(a).equals(bits(b)), `${run.algorithm} trace ${key}`).toBe(true);
    }
    expect(run.trace.totalIterations).toBe(other.trace.totalIterations);
    expect(run.otherColumns?.length).toBe(other.otherColumns?.length);
    run.otherColumns?.forEach((column, j) => {
      const otherColumn = other.otherColumns![j];
      expect(bits(column.solution).equals(bits(otherColumn.solution)), `${run.algorithm} column ${j + 1} solution`).toBe(true);
      expect(bits(column.trace.relativeResidual).equals(bits(otherColumn.trace.relativeResidual)), `${run.algorithm} column ${j + 1}`).toBe(
        true,
      );
    });
  });
}

function jobSpecOf(input: ComputeInput): JobSpec {
  return {
    type: input.type,
    n,
    matrix: input.matrix.storage === 'csr' ? { kind: 'csr', A: input.matrix.A, format: 'coo' } : { kind: 'dense', A, format: 'dense' },
    storage: input.matrix.storage,
    rhs: input.rhs,
    ...(input.rhs === null ? {} : { rhsColumns: input.rhs.length / n }),
    m,
    assignment,
    algorithms: input.algorithms,
    options: input.options,
    notify: null,
    partition: { kind: 'assignment', m, sizes: Array.from({ length: m }, (_, machine) => assignment.filter((k) => k === machine).length) },
    labels: {},
  };
}

describe('a job resumed from any of its checkpoints ends with the uninterrupted outcome', () => {
  for (const [label, input] of [
    ['dense: DGD, D-HBM, APC', denseInput],
    ['CSR: MLM, D-NAG, Cimmino', csrInput],
    [`dense, ${K} right-hand sides: D-HBM, APC`, severalDense],
    [`CSR, ${K} right-hand sides: D-NAG, MLM`, severalCsr],
  ] as const) {
    it(label, async () => {
      const uninterrupted = await attempt(input, null, 0);
      expect(uninterrupted.saved).toEqual([]); // interval 0: none
      const checkpointed = await attempt(input, null);
      expectSameOutcome(checkpointed.outcome, uninterrupted.outcome);
      expect(checkpointed.saved.length).toBeGreaterThan(10);

      const checkpoints = checkpointed.saved.map((bytes) => decodeCheckpoint(bytes));
      // Every stage: right after the analysis, during each run, and between runs when one was saved there (timing).
      const duringRun = (k: number) => checkpoints.findIndex((c) => c.runs.length === k && c.current !== null && c.current.iteration > 10);
      const picks = [0, ...input.algorithms.map((_, k) => duringRun(k))];
      expect(
        picks.every((k) => k >= 0),
        JSON.stringify(picks),
      ).toBe(true);
      const betweenRuns = checkpoints.findIndex((c) => c.runs.length > 0 && c.current === null);
      if (betweenRuns >= 0) picks.push(betweenRuns);
      picks.push(checkpoints.length - 1);
      // A solve computes its spectral data, runs, then the rest of the analysis: the checkpoints during the runs hold the former.
      for (const checkpoint of checkpoints) {
        expect(checkpoint).toMatchObject({ analysis: null, spectral: spectralDataOf(uninterrupted.outcome.result!.analysis!) });
      }

      // Several right-hand sides: the run under way is a block run's snapshot, with every column.
      for (const { current } of checkpoints) {
        if (current === null) continue;
        expect(isBlockRunSnapshot(current)).toBe(input.rhs !== null);
        if (isBlockRunSnapshot(current)) expect(current.columns).toHaveLength(K);
      }
      // The runs that ended hold every column's outputs.
      for (const { runs } of checkpoints)
        for (const run of runs) expect(run.otherColumns?.length ?? 0).toBe(input.rhs === null ? 0 : K - 1);

      const bound = checkpointBytesOfJob(jobSpecOf(input), TRACE_CAP);
      for (const bytes of checkpointed.saved) expect(bytes.length).toBeLessThanOrEqual(bound);

      for (const k of picks) {
        const checkpoint = decodeCheckpoint(checkpointed.saved[k]);
        const resumed = await attempt(input, checkpoint);
        expectSameOutcome(resumed.outcome, uninterrupted.outcome);
        expect(resumed.discarded).toEqual([]);
        // The finished runs are not run again; the run under way goes on from its iteration.
        const solving = resumed.progress.filter((p) => p.phase === 'solve');
        const done = new Set<string>(checkpoint.runs.map((run) => run.algorithm));
        expect(solving.filter((p) => done.has(p.algorithm!))).toEqual([]);
        if (checkpoint.current) {
          const { algorithm, iteration } = checkpoint.current;
          // A snapshot taken after the run's last iteration (timing) leaves it nothing to iterate: it ends at once.
          if (iteration < uninterrupted.outcome.result!.runs[algorithm]!.iterations) {
            expect(solving[0]).toMatchObject({ algorithm, iteration: iteration + 1 });
          } else expect(solving.filter((p) => p.algorithm === algorithm)).toEqual([]);
        }
      }
    });
  }

  it("takes the analysis of the checkpoint as it is (an earlier version's, saved before the runs)", async () => {
    const input = { ...denseInput, algorithms: ['dhbm' as const] };
    const { outcome } = await attempt(input, null, 0);
    const analysis = outcome.result!.analysis!;
    const marked = { analysis: { ...analysis, recommendation: { ...analysis.recommendation, marker: 1 } }, runs: [], current: null };
    const resumed = await attempt(input, decodeCheckpoint(encodeCheckpoint(marked)));
    expect(resumed.outcome.result!.analysis!.recommendation).toMatchObject({ marker: 1 });
    expect(resumed.progress.filter((p) => p.phase === 'conditioning')).toEqual([]);
  });

  it('takes the spectral data of the checkpoint as it is, and computes the whole analysis after the runs', async () => {
    const input = { ...denseInput, algorithms: ['dhbm' as const] };
    const { outcome } = await attempt(input, null, 0);
    const spectral = spectralDataOf(outcome.result!.analysis!);
    // Another L: D-HBM's optimal parameters move with it, the analysis does not.
    const checkpoint = { analysis: null, spectral: { ...spectral, L: 2 * spectral.L }, runs: [], current: null };
    const resumed = await attempt(input, decodeCheckpoint(encodeCheckpoint(checkpoint)));
    const phases = resumed.progress.map((p) => p.phase);
    expect(phases.indexOf('conditioning')).toBeGreaterThan(phases.lastIndexOf('solve'));
    expect(resumed.outcome.result!.analysis!).toEqual(outcome.result!.analysis!);
    expect(resumed.outcome.result!.runs.dhbm!.parameters).toEqual(algorithms.dhbm.optimal(checkpoint.spectral).parameters);
  });

  it("starts a run over when its snapshot does not fit (another version's state), with the same outcome", async () => {
    const input = { ...denseInput, algorithms: ['dhbm' as const] };
    const uninterrupted = await attempt(input, null, 0);
    const { saved } = await attempt(input, null);
    const checkpoint = decodeCheckpoint(saved[saved.length - 2]);
    const current = checkpoint.current as RunSnapshot;
    const resumed = await attempt(input, { ...checkpoint, current: { ...current, method: current.method.slice(0, 1) } });
    expect(resumed.discarded).toHaveLength(1);
    expect(resumed.discarded[0]).toMatch(/does not fit/);
    expectSameOutcome(resumed.outcome, uninterrupted.outcome);
    expect(resumed.progress.find((p) => p.phase === 'solve')?.iteration).toBe(1);
  });
});

it('starts a block run over when its snapshot does not fit, with the same outcome', async () => {
  const input = { ...severalDense, algorithms: ['apc' as const] };
  const uninterrupted = await attempt(input, null, 0);
  const { saved } = await attempt(input, null);
  const checkpoint = decodeCheckpoint(saved[saved.length - 2]);
  const current = checkpoint.current as BlockRunSnapshot;
  expect(isBlockRunSnapshot(current)).toBe(true);
  const block = { ...current.block, blocks: current.block.blocks.slice(1) };
  const resumed = await attempt(input, { ...checkpoint, current: { ...current, block } });
  expect(resumed.discarded).toHaveLength(1);
  expect(resumed.discarded[0]).toMatch(/does not fit/);
  expectSameOutcome(resumed.outcome, uninterrupted.outcome);
  expect(resumed.progress.find((p) => p.phase === 'solve')?.iteration).toBe(1);
});

describe('the checkpoint codec', () => {
  const checkpoint: JobCheckpoint = {
    analysis: null,
    runs: [
      {
        algorithm: 'dgd',
        summary: {
          status: 'diverged',
          iterations: 3,
          relativeResidual: Number.NaN,
          relativeError: Number.POSITIVE_INFINITY,
          empiricalRate: -0,
          theoreticalRate: 1.5,
          parameters: { alpha: 0.1 + 0.2 },
          wallTimeMs: 1,
          stopReason: 'x',
          tracePoints: 3,
        },
        solution: Float64Array.of(Number.NaN, -0, Number.NEGATIVE_INFINITY, 5e-324, 1 / 3),
        trace: {
          iteration: Int32Array.of(0, 1, 3),
          relativeResidual: Float64Array.of(1, 2, Number.NaN),
          relativeError: null,
          consensusDistance: null,
          totalIterations: 3,
          cap: 16,
          downsampled: false,
        },
      },
    ],
    current: null,
  };

  it('gives back every number and array to the bit, from unaligned bytes too, as array bytes rather than JSON', () => {
    const bytes = encodeCheckpoint(checkpoint);
    const unaligned = Buffer.alloc(bytes.length + 1).fill(7);
    bytes.copy(unaligned, 1);
    const decoded = decodeCheckpoint(unaligned.subarray(1));
    const [run] = decoded.runs;
    expect(Object.is(run.summary.relativeResidual, Number.NaN)).toBe(true);
    expect(run.summary.relativeError).toBe(Number.POSITIVE_INFINITY);
    expect(Object.is(run.summary.empiricalRate, -0)).toBe(true);
    expect(run.summary.parameters.alpha).toBe(0.1 + 0.2);
    expect(bits(run.solution).equals(bits(checkpoint.runs[0].solution))).toBe(true);
    expect(run.trace.iteration).toBeInstanceOf(Int32Array);
    expect(bits(run.trace.iteration).equals(bits(checkpoint.runs[0].trace.iteration))).toBe(true);
    expect(bits(run.trace.relativeResidual).equals(bits(checkpoint.runs[0].trace.relativeResidual))).toBe(true);

    const large = { ...checkpoint, runs: [{ ...checkpoint.runs[0], solution: new Float64Array(100_000).map((_, k) => Math.sqrt(k)) }] };
    expect(encodeCheckpoint(large).length).toBeLessThan(100_000 * 8 + 2048);
  });

  it('refuses bytes it did not write, naming why', () => {
    const bytes = encodeCheckpoint(checkpoint);
    const refusal = (b: Buffer): string => {
      try {
        decodeCheckpoint(b);
      } catch (error) {
        expect(error).toBeInstanceOf(CheckpointUnreadableError);
        return (error as Error).message;
      }
      return 'decoded';
    };
    expect(refusal(Buffer.from('not a checkpoint'))).toMatch(/no checkpoint header/);
    expect(refusal(bytes.subarray(0, 20))).toMatch(/truncated header/);
    expect(refusal(bytes.subarray(0, bytes.length - 8))).toMatch(/outside the stored bytes/);
    const otherFormat = Buffer.from(bytes);
    const headerEnd = 8 + otherFormat.readUInt32LE(4);
    otherFormat.write('{"format":9', 8, 'utf8');
    expect(headerEnd).toBeGreaterThan(20);
    expect(refusal(otherFormat)).toMatch(/unexpected shape/);
  });
});

describe('CheckpointWriter', () => {
  it('writes one checkpoint at a time, the latest of those saved meanwhile, and goes on after a failed write', async () => {
    const written: number[] = [];
    let release: () => void = () => undefined;
    let fail = true;
    const writer = new CheckpointWriter(
      async (bytes) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        if (fail) {
          fail = false;
          throw new Error('redis down');
        }
        written.push(decodeCheckpoint(bytes).runs.length);
      },
      pino({ level: 'silent' }),
    );
    const withRuns = (k: number): JobCheckpoint => ({
      analysis: null,
      runs: Array.from({ length: k }, () => checkpoint1()),
      current: null,
    });
    writer.save(withRuns(1)); // written first, fails
    writer.save(withRuns(2)); // replaced by the next before its turn
    writer.save(withRuns(3));
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    await writer.flush();
    expect(written).toEqual([3]);
  });
});

function checkpoint1(): JobCheckpoint['runs'][number] {
  return {
    algorithm: 'dgd',
    summary: {
      status: 'converged',
      iterations: 1,
      relativeResidual: 0,
      relativeError: null,
      empiricalRate: null,
      theoreticalRate: 0.5,
      parameters: {},
      wallTimeMs: 0,
      stopReason: '',
      tracePoints: 1,
    },
    solution: new Float64Array(2),
    trace: {
      iteration: new Int32Array(1),
      relativeResidual: new Float64Array(1),
      relativeError: null,
      consensusDistance: null,
      totalIterations: 1,
      cap: 2,
      downsampled: false,
    },
  };
}
