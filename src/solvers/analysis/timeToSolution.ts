/**
 * Time to solution: the recommendation compares rates per iteration, as the paper
 * does; this model prices one iteration of each algorithm so that "fewer iterations" and "finishes
 * first" can both be answered.
 *
 * Per iteration, counted from what the passes of ../machines/machine.ts and csrMachine.ts read:
 *  - each machine's work. Dense (row kernels over each row's nonzero extent, e_A = sum of A_i's
 *    extents, e_Q = Q_i^T's, e_R = p_i (p_i + 1) / 2 R's triangle): gradient pass 4 e_A flops of the fused pass
 *    (dot + axpy); Cimmino 2 e_A + 2 e_Q flops of the product passes (A_i x, then Q_i w: each reads its entries
 *    for 2 flops, so it runs at a rate of its own) and e_R entries of the solve with R^T; APC / MLM 4 e_Q fused
 *    flops, e_R entries (R^T w) and the n-long update of x_i (24 n bytes). CSR (memory-bound,
 *    12 bytes a stored entry: value + column index): gradient one pass over A_i; a projection
 *    (APC, MLM, Cimmino) A_i v and A_i^T y (2 x 12 nnz(A_i) bytes), two triangular solves with the
 *    factor L_i of A_i A_i^T (2 x 12 nnz(L_i) bytes, and a cost per column of each sweep: 2 p_i columns), each
 *    refinement correction repeating the four;
 *  - the taskmaster's: adding the machines' terms on their supports (16 c_i bytes each) and the
 *    update of x (40 n bytes: x, its predecessor, the step); APC / MLM average the m copies x_i (8 m n);
 *    and the run's measure of its relative error when x* is known (x and x*: 16 n bytes);
 *  - the messages: x out to each machine and its term back (gradient methods and Cimmino: vectors of
 *    the column support c_i), or xbar out and x_i back (APC / MLM: vectors of n, as they are held here).
 * Here: the sum of the machines' work (one process) at the calibrated rates of the kernels that do it
 * (the dense row kernels; the CSR gradient kernel; the CSR projections' plain loops over A_i and the
 * backend's solves with L_i, which run at neither the gradient kernel's rate nor each other's), plus the taskmaster's and
 * a measured per-machine call overhead; messages cost nothing (shared memory) but are counted.
 * On a deployment: the slowest machine (max of flops / machineGflops and bytes / memoryBandwidth),
 * then the taskmaster, then each round's messages: 2 latencies + all the bytes through the
 * taskmaster's link at `bandwidthGBs`.
 */
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../algorithms/registry.js';
import type { DenseFactors, DistributedSystem } from '../distributed/distributedSystem.js';
import { isTall } from '../distributed/leastSquares.js';
import { gradientRowChunks, singleCsrChunk, threadedStep } from '../machines/gradientPass.js';
import { threadsForRun } from '../parallel/threads.js';
import { predictIterations } from './recommendation.js';
import type { AlgorithmTimes, Analysis, Calibration, Deployment, FinishesFirst, TimeToSolution } from './types.js';

/** A commodity cluster: a few cores of a current server per machine, DDR4, 10 GbE. */
export const DEFAULT_DEPLOYMENT: Deployment = { machineGflops: 50, memoryBandwidthGBs: 20, latencyMicroseconds: 50, bandwidthGBs: 1.25 };

/** What one machine holds, as far as cost goes. */
export interface MachineCost {
  p: number;
  /** Column support size c_i. */
  c: number;
  /** Dense: entries within the rows' nonzero extents of A_i; CSR: nnz(A_i). */
  entriesA: number;
  /** Dense: entries within Q_i^T's extents; CSR: 0. */
  entriesQ: number;
  /** CSR: nnz of the Cholesky factor of A_i A_i^T; dense: 0. */
  factorNnz: number;
  /** CSR: refinement corrections per solve with the factor. */
  refinement: number;
}

/** A chunk of the gradient pass (../machines/gradientPass.ts): rows of one machine, or every row at once. */
export interface GradientChunk {
  /** Entries its rows read (nonzero extents, or stored entries). */
  entries: number;
  /** Its term's support (gathered, and summed by the step); 0 when its output is the gradient itself (all rows on the global columns: the step reads it as g). */
  c: number;
}

export interface SystemCost {
  storage: 'dense' | 'csr';
  n: number;
  machines: MachineCost[];
  /** How the gradient methods' pass is cut; absent: one chunk per machine on its support. */
  gradientChunks?: GradientChunk[];
  /**
   * Whether a run measures its relative error every iteration (../runner/runAlgorithm.ts): x* is known
   * (given, or generated with b), or the system is tall (its run's target is computed). A read of x and x*.
   */
  errorMeasured: boolean;
}

export function systemCost(system: DistributedSystem | DenseFactors): SystemCost {
  const errorMeasured = system.xTrue !== null || isTall(system);
  if (system.storage === 'dense') {
    const machines = system.machines.map((d) => ({
      p: d.p,
      c: d.c,
      entriesA: extentSum(d.aStart, d.aEnd),
      entriesQ: extentSum(d.qStart, d.qEnd),
      factorNnz: 0,
      refinement: 0,
    }));
    return { storage: 'dense', n: system.n, machines, gradientChunks: gradientChunksOf(system), errorMeasured };
  }
  const machines = system.machines.map((d) => ({
    p: d.p,
    c: d.c,
    entriesA: d.a.rowPtr[d.p],
    entriesQ: 0,
    factorNnz: d.gram.symbolic.nnzL,
    refinement: d.gramRefinement,
  }));
  const nnz = machines.reduce((s, d) => s + d.entriesA, 0);
  const gradientChunks = singleCsrChunk(system) ? [{ entries: nnz, c: 0 }] : gradientChunksOf(system);
  return { storage: 'csr', n: system.n, machines, gradientChunks, errorMeasured };
}

/** The gradient pass' row chunks as gradientRowChunks cuts them, each on its machine's support. */
function gradientChunksOf(system: DistributedSystem | DenseFactors): GradientChunk[] {
  const { rowWork, ranges } = gradientRowChunks(system);
  return ranges.map(({ machine, from, to }) => {
    let entries = 0;
    for (let k = from; k < to; k++) entries += rowWork[machine][k];
    return { entries, c: system.machines[machine].c };
  });
}

function extentSum(start: Int32Array, end: Int32Array): number {
  let s = 0;
  for (let k = 0; k < start.length; k++) s += end[k] - start[k];
  return s;
}

/** One party's work in an iteration: dense flops, CSR bytes by the kernel that reads them, vector bytes. */
export interface Work {
  /** Dense: flops of the fused row pass (4 an entry). */
  flops: number;
  /** Dense: flops of the product passes apart (2 an entry: Cimmino's A_i x and Q_i w). */
  productFlops: number;
  /** Dense: entries of the passes over a machine's triangle R (a solve with R^T, or R^T w). */
  triangleEntries: number;
  /** Read by the CSR gradient kernel. */
  matrixBytes: number;
  /** Read by the CSR projections' loops A_i v and A_i^T y. */
  csrLoopBytes: number;
  /** Read by the solves with the Gram factors. */
  factorBytes: number;
  /** Columns the solves' sweeps go through (each has a cost of its own beyond its entries). */
  factorColumns: number;
  /** Entries of the CSR consensus taskmaster's measure-and-advance loop (Calibration.consensusEntrySeconds each). */
  consensusEntries: number;
  /** Streamed by the TypeScript vector loops (gathers, the taskmaster's sums and updates). */
  vectorBytes: number;
  /** Streamed by the gradient methods' step (their terms summed, x updated) as the backend runs it (Calibration.stepBytesPerSecond). */
  stepBytes: number;
  /** Entries the step reads (its terms' and x's): whether it runs on the threads (../machines/gradientPass.ts threadedStep). */
  stepEntries: number;
  /** Bytes of matrix data it holds (A_i, Q_i or the factor, once): the iteration's working set. */
  residentBytes: number;
  /** Entries its pass reads as the engine counts them (../machines/storage.ts entriesRead): whether a run takes threads. */
  entries: number;
}

export interface IterationCost {
  /** Whose iteration, on which storage and how many machines: its fixed costs (Calibration.overheads). */
  algorithm: AlgorithmId;
  storage: 'dense' | 'csr';
  machineCount: number;
  /** The engine's chunks: the machines (APC, MLM, Cimmino), or the gradient pass' row chunks. */
  machines: Work[];
  taskmaster: Work;
  bytesPerIteration: number;
  messagesPerIteration: number;
}

const BYTES = 8;
const CSR_ENTRY_BYTES = 12;

/** A party's iteration with no work: what a Work is spread from. */
export const NO_WORK: Readonly<Work> = {
  flops: 0,
  productFlops: 0,
  triangleEntries: 0,
  matrixBytes: 0,
  csrLoopBytes: 0,
  factorBytes: 0,
  factorColumns: 0,
  consensusEntries: 0,
  vectorBytes: 0,
  stepBytes: 0,
  stepEntries: 0,
  residentBytes: 0,
  entries: 0,
};

/** The counts of one iteration of `id` on `system` (see the header). */
export function iterationCost(id: AlgorithmId, system: SystemCost): IterationCost {
  const { n, machines, storage } = system;
  const m = machines.length;
  const projection = algorithms[id].family === 'projection';
  const consensus = id === 'apc' || id === 'mlm';
  const supports = machines.reduce((s, d) => s + d.c, 0);
  // Out and back to every machine: vectors of n (APC, MLM) or of each support.
  const bytesPerIteration = consensus ? 2 * BYTES * n * m : 2 * BYTES * supports;
  const messagesPerIteration = 2 * m;
  // Gathering x onto a partial support and scattering back: two vectors of c.
  const gather = (c: number): number => (c < n ? 2 * BYTES * c : 0);
  // The runner's |x - x*| every iteration (SystemCost.errorMeasured): at n = 40,000 ~30 us, a tenth of a CSR gradient iteration.
  const errorBytes = system.errorMeasured ? 2 * BYTES * n : 0;
  if (!projection) {
    const chunks = system.gradientChunks ?? machines.map((d) => ({ entries: d.entriesA, c: d.c }));
    const work = chunks.map((chunk): Work => {
      const entries = chunk.entries;
      if (storage === 'dense')
        return { ...NO_WORK, flops: 4 * entries, vectorBytes: gather(chunk.c), residentBytes: BYTES * entries, entries };
      const bytes = CSR_ENTRY_BYTES * entries;
      return { ...NO_WORK, matrixBytes: bytes, vectorBytes: gather(chunk.c), residentBytes: bytes, entries };
    });
    // The taskmaster's step (../machines/gradientPass.ts advance) adds the chunks' terms (read and added into g: 16 bytes
    // an entry) and updates x: DGD x -= alpha g (3 vectors of n), D-HBM and D-NAG with their momentum (5).
    const terms = chunks.reduce((s, chunk) => s + chunk.c, 0);
    const update = id === 'dgd' ? 3 : 5;
    const taskmaster: Work = {
      ...NO_WORK,
      stepBytes: 2 * BYTES * terms + update * BYTES * n,
      stepEntries: terms + n,
      vectorBytes: errorBytes,
    };
    return { algorithm: id, storage, machineCount: m, machines: work, taskmaster, bytesPerIteration, messagesPerIteration };
  }
  const work = machines.map((d): Work => {
    if (storage === 'dense') {
      // APC / MLM: one fused pass over Q_i, R^T w, and the update of x_i (3 vectors of n); Cimmino: A_i x, the solve
      // with R^T, then Q_i w.
      const triangleEntries = (d.p * (d.p + 1)) / 2;
      const entries = consensus ? d.entriesQ : d.entriesA + d.entriesQ;
      const work = consensus ? { flops: 4 * d.entriesQ } : { productFlops: 2 * d.entriesA + 2 * d.entriesQ };
      return {
        ...NO_WORK,
        ...work,
        triangleEntries,
        vectorBytes: gather(d.c) + (consensus ? 3 * BYTES * n : 0),
        residentBytes: BYTES * (entries + triangleEntries),
        entries,
      };
    }
    // CSR, APC / MLM as Cimmino passes (../machines/csrConsensusPass.ts): A_i v, two solves with L_i, A_i^T y;
    // a refinement correction A_i^T y, A_i u and two solves (../machines/csrMachine.ts refinedGramSolve).
    const passes = 1 + d.refinement;
    return {
      ...NO_WORK,
      csrLoopBytes: passes * 2 * CSR_ENTRY_BYTES * d.entriesA,
      factorBytes: passes * 2 * CSR_ENTRY_BYTES * d.factorNnz,
      factorColumns: passes * 2 * d.p,
      vectorBytes: gather(d.c),
      residentBytes: CSR_ENTRY_BYTES * (d.entriesA + d.factorNnz),
      entries: 2 * (1 + d.refinement) * (d.entriesA + d.factorNnz),
    };
  });
  // Dense APC / MLM average the m copies x_i; on CSR the x_i are y plus each machine's offset on its
  // support, which the taskmaster measures and advances (../machines/csrConsensusPass.ts: a compensated
  // sum over each support and over n, priced per entry), then sums (m y, each offset scattered: 24 bytes
  // a support entry) and averages into xbar (3 vectors of n).
  const csrConsensus = consensus && storage === 'csr';
  const taskmasterBytes = consensus
    ? storage === 'dense'
      ? BYTES * m * n + 5 * BYTES * n
      : 3 * BYTES * supports + 4 * BYTES * n
    : 2 * BYTES * supports + 5 * BYTES * n;
  return {
    algorithm: id,
    storage,
    machineCount: m,
    machines: work,
    taskmaster: { ...NO_WORK, vectorBytes: taskmasterBytes + errorBytes, consensusEntries: csrConsensus ? supports + n : 0 },
    bytesPerIteration,
    messagesPerIteration,
  };
}

/** Threads a run of this cost takes here (../parallel/threads.ts threadsForRun, as the engine decides). */
export function threadsOf(cost: IterationCost): number {
  const entries = cost.machines.reduce((s, w) => s + w.entries, 0);
  return threadsForRun(entries, cost.machines.length);
}

/**
 * Where a working set of `bytes` lies between the calibration's in-cache and out-of-cache blocks: 0 at
 * or below the first, 1 at or above the second, linear in log(bytes) between.
 */
export function cacheFraction(bytes: number, calibration: Calibration): number {
  const { inCacheBytes, outOfCacheBytes } = calibration;
  if (bytes <= inCacheBytes) return 0;
  if (bytes >= outOfCacheBytes) return 1;
  return Math.log(bytes / inCacheBytes) / Math.log(outOfCacheBytes / inCacheBytes);
}

/**
 * Seconds of one iteration in this process: the chunks at the calibrated rates (in or out of cache by
 * a thread's share of the iteration's working set, the bytes of matrix data all chunks hold), each with a call's fixed cost;
 * on T > 1 threads max(their sum / T, the largest chunk), times the threads' slowdown (calibration.threadSlowdown),
 * plus one phase's synchronisation (each thread runs its block of chunks, then the others' remainders); the gradient methods' step phase (its
 * bytes at the step's rate, shared by the T threads, times the slowdown, plus a phase's synchronisation when
 * threadedStep hands it to them); then the taskmaster on the calling thread, and the algorithm's fixed
 * costs per iteration (calibration.overheads: its method's and the runner's calls, gathers, measures and
 * trace, perIteration + perMachine m; without them the runner's constant).
 */
export function secondsHere(cost: IterationCost, calibration: Calibration, threads = threadsOf(cost)): number {
  const working = cost.machines.reduce((s, w) => s + w.residentBytes, 0);
  // In cache or not by a thread's share of the working set: each thread streams its own block of the chunks, and the
  // calibration times one thread. Priced on the whole, dense n = 1000 Cimmino (A_i and Q_i, 16 MiB on two threads, in
  // this host's 32 MiB cache) read 1.2-1.5x what it took, where APC (Q_i alone, 8 MiB) read 0.8-1.0.
  const f = cacheFraction(working / Math.max(1, threads), calibration);
  const secondsPerFlop = (1 - f) / calibration.flopsPerSecondInCache + f / calibration.flopsPerSecond;
  const secondsPerProductFlop = (1 - f) / calibration.productFlopsPerSecondInCache + f / calibration.productFlopsPerSecond;
  const perByte = (inCache: number, out: number): number => (1 - f) / inCache + f / out;
  const secondsPerByte = perByte(calibration.bytesPerSecondInCache, calibration.bytesPerSecond);
  const secondsPerLoopByte = perByte(calibration.csrLoopBytesPerSecondInCache, calibration.csrLoopBytesPerSecond);
  const secondsPerFactorByte = perByte(calibration.factorBytesPerSecondInCache, calibration.factorBytesPerSecond);
  const at = (w: Work): number =>
    w.flops * secondsPerFlop +
    w.productFlops * secondsPerProductFlop +
    w.triangleEntries * calibration.triangleEntrySeconds +
    w.matrixBytes * secondsPerByte +
    w.csrLoopBytes * secondsPerLoopByte +
    w.factorBytes * secondsPerFactorByte +
    w.factorColumns * calibration.factorColumnSeconds +
    w.consensusEntries * calibration.consensusEntrySeconds +
    w.vectorBytes / calibration.vectorBytesPerSecond;
  let sum = 0;
  let largest = 0;
  for (const w of cost.machines) {
    const s = at(w) + calibration.perMachineOverheadSeconds;
    sum += s;
    largest = Math.max(largest, s);
  }
  // Threaded, each chunk takes threadSlowdown times its one-thread price (the threads share caches and bandwidth).
  const slowdown = calibration.threadSlowdown[cost.storage];
  const machines = threads > 1 ? slowdown * Math.max(sum / threads, largest) + calibration.phaseSyncSeconds : sum;
  // The gradient methods' step is a phase of its own, its ranges of columns shared by the threads.
  const { stepBytes, stepEntries } = cost.taskmaster;
  const stepAlone = stepBytes / calibration.stepBytesPerSecond;
  const step = threadedStep(threads, stepEntries) ? (slowdown * stepAlone) / threads + calibration.phaseSyncSeconds : stepAlone;
  const fixed = calibration.overheads?.[cost.algorithm][cost.storage];
  const perIteration = fixed === undefined ? calibration.runnerIterationSeconds : fixed.perIteration + fixed.perMachine * cost.machineCount;
  return machines + step + at(cost.taskmaster) + perIteration;
}

/**
 * A run's start here, before its first iteration: a threaded run's worker threads started and its data
 * copied into shared memory (calibration.threadStartSeconds), else one copy of the data (the one-thread
 * layouts, arenas); then the setup's first pass (the residual or projection at x(0)), one iteration.
 */
export function startSecondsHere(cost: IterationCost, calibration: Calibration, threads = threadsOf(cost)): number {
  const working = cost.machines.reduce((s, w) => s + w.residentBytes, 0);
  const start = threads > 1 ? calibration.threadStartSeconds : working / calibration.vectorBytesPerSecond;
  return start + secondsHere(cost, calibration, threads);
}

/** Seconds of one iteration on the deployment: slowest machine, taskmaster, one round of messages. */
export function secondsOnDeployment(cost: IterationCost, d: Deployment): number {
  const flopsRate = d.machineGflops * 1e9;
  const memory = d.memoryBandwidthGBs * 1e9;
  // A dense fused pass reads 8 bytes per 4 flops, a product pass per 2, a triangle's pass per 2: whichever of compute or memory binds.
  const at = (w: Work): number =>
    Math.max(
      (w.flops + w.productFlops + 2 * w.triangleEntries) / flopsRate,
      (w.flops * 2 +
        w.productFlops * 4 +
        w.triangleEntries * BYTES +
        w.matrixBytes +
        w.csrLoopBytes +
        w.factorBytes +
        w.vectorBytes +
        w.stepBytes) /
        memory,
    );
  let slowest = 0;
  for (const w of cost.machines) slowest = Math.max(slowest, at(w));
  const communication = 2 * d.latencyMicroseconds * 1e-6 + cost.bytesPerIteration / (d.bandwidthGBs * 1e9);
  return slowest + at(cost.taskmaster) + communication;
}

export interface TimeToSolutionInput {
  system: SystemCost;
  rates: Record<AlgorithmId, { rate: number; gap: number }>;
  tolerance: number;
  calibration: Calibration;
  deployment?: Deployment;
}

function times(
  input: TimeToSolutionInput,
  perIteration: (cost: IterationCost) => number,
  start: (cost: IterationCost) => number,
): AlgorithmTimes {
  const out = {} as AlgorithmTimes;
  for (const id of ALGORITHM_IDS) {
    const cost = iterationCost(id, input.system);
    const iterations = predictIterations(input.rates[id].rate, input.tolerance, input.rates[id].gap);
    const secondsPerIteration = perIteration(cost);
    const startSeconds = start(cost);
    out[id] = {
      iterations,
      secondsPerIteration,
      startSeconds,
      seconds: iterations === null ? null : startSeconds + iterations * secondsPerIteration,
      bytesPerIteration: cost.bytesPerIteration,
      messagesPerIteration: cost.messagesPerIteration,
    };
  }
  return out;
}

export function timeToSolution(input: TimeToSolutionInput): TimeToSolution {
  const here = times(
    input,
    (cost) => secondsHere(cost, input.calibration),
    (cost) => startSecondsHere(cost, input.calibration),
  );
  const result: TimeToSolution = { ...here, calibration: input.calibration };
  const { deployment } = input;
  if (deployment !== undefined) {
    result.deployment = {
      ...times(
        input,
        (cost) => secondsOnDeployment(cost, deployment),
        () => 0,
      ),
      assumptions: deployment,
    };
  }
  return result;
}

/** APC or D-HBM by predicted seconds (null seconds, i.e. no convergence, lose; equal: D-HBM, as for the rates). */
export function finishesFirstOf(t: AlgorithmTimes): 'apc' | 'dhbm' {
  const apc = t.apc.seconds ?? Infinity;
  const dhbm = t.dhbm.seconds ?? Infinity;
  return apc < dhbm ? 'apc' : 'dhbm';
}

function seconds(s: number | null): string {
  return s === null ? 'never (rho >= 1)' : `${s.toPrecision(3)} s`;
}

/** APC's or D-HBM's name in the explanation. */
const nameOf = (id: 'apc' | 'dhbm'): string => (id === 'apc' ? 'APC' : 'D-HBM');

function comparison(t: AlgorithmTimes, where: string): string {
  const winner = finishesFirstOf(t);
  return `${where} ${nameOf(winner)} finishes first: APC ${String(t.apc.iterations ?? '-')} iterations x ${t.apc.secondsPerIteration.toPrecision(3)} s = ${seconds(t.apc.seconds)}, D-HBM ${String(t.dhbm.iterations ?? '-')} x ${t.dhbm.secondsPerIteration.toPrecision(3)} s = ${seconds(t.dhbm.seconds)}.`;
}

/**
 * Which of APC and D-HBM finishes first, here and on the deployment, with why it can differ from the rates; and, given
 * the job's iteration limit, which of the two it would stop before the tolerance (the prediction is of a run to it).
 */
export function finishesFirst(faster: 'apc' | 'dhbm', t: TimeToSolution, maxIterations?: number): FinishesFirst {
  const here = finishesFirstOf(t);
  const deployment = t.deployment === undefined ? null : finishesFirstOf(t.deployment);
  const parts = [comparison(t, 'Here'), ...(t.deployment === undefined ? [] : [comparison(t.deployment, 'On the described deployment')])];
  const disagree = here !== faster || (deployment !== null && deployment !== faster);
  parts.push(
    disagree
      ? `This differs from the per-iteration answer (${nameOf(faster)} converges in fewer iterations) because an iteration's cost differs: APC projects (a pass over Q_i or solves with the factor of A_i A_i^T, and vectors of n to and from every machine) where D-HBM makes one pass over A_i and exchanges vectors of the column supports.`
      : `This agrees with the per-iteration answer: the difference in iterations outweighs the difference in cost per iteration.`,
  );
  if (maxIterations !== undefined) parts.push(...beyondLimit(t, maxIterations));
  return { here, deployment, explanation: parts.join(' ') };
}

/** Says of APC and D-HBM, those whose predicted iterations exceed the job's limit, that a run of them stops there. */
function beyondLimit(t: AlgorithmTimes, maxIterations: number): string[] {
  const beyond = (['apc', 'dhbm'] as const).filter((id) => (t[id].iterations ?? 0) > maxIterations);
  if (beyond.length === 0) return [];
  const names = beyond.map(nameOf).join(' and ');
  const counts = beyond.map((id) => String(t[id].iterations)).join(' and ');
  // Said of a run with the job's options: a solve's runs, or those a solve would make after an analysis or an advice
  // (the analysis is the same whichever job computed it).
  const [needs, runs] = beyond.length === 1 ? ['needs', 'a run of it'] : ['need', 'runs of them'];
  return [
    `${names} ${needs} ${counts} iterations, more than this job's maxIterations (${maxIterations}): ${runs} with these options stop${beyond.length === 1 ? 's' : ''} at 'max-iterations' before the tolerance; options.maxIterations raises the limit.`,
  ];
}

/**
 * The analysis with its time to solution and the recommendation's finishesFirst (the other fields unchanged), which
 * names the iteration limit the job's runs have when given.
 */
export function withTimeToSolution(analysis: Analysis, t: TimeToSolution, maxIterations?: number): Analysis {
  const recommendation = { ...analysis.recommendation, finishesFirst: finishesFirst(analysis.recommendation.algorithm, t, maxIterations) };
  return { ...analysis, recommendation, timeToSolution: t };
}
