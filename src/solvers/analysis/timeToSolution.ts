/**
 * Time to solution: the recommendation compares rates per iteration, as the paper
 * does; this model prices one iteration of each algorithm so that "fewer iterations" and "finishes
 * first" can both be answered.
 *
 * Per iteration, counted from what the passes of ../machines/machine.ts and csrMachine.ts read:
 *  - each machine's work. Dense (row kernels over each row's nonzero extent, e_A = sum of A_i's
 *    extents, e_Q = Q_i^T's): gradient pass 4 e_A flops (dot + axpy); Cimmino 2 e_A + p_i^2 + 2 e_Q;
 *    APC / MLM 4 e_Q + p_i^2 (R^T w) plus the n-long update of x_i (24 n bytes). CSR (memory-bound,
 *    12 bytes a stored entry: value + column index): gradient one pass over A_i; a projection
 *    (APC, MLM, Cimmino) A_i v, two triangular solves with the factor L_i of A_i A_i^T (2 x 12 nnz(L_i)
 *    bytes) and A_i^T y, each refinement correction repeating the three;
 *  - the taskmaster's: adding the machines' terms on their supports (16 c_i bytes each) and the
 *    update of x (40 n bytes: x, its predecessor, the step); APC / MLM average the m copies x_i (8 m n);
 *  - the messages: x out to each machine and its term back (gradient methods and Cimmino: vectors of
 *    the column support c_i), or xbar out and x_i back (APC / MLM: vectors of n, as they are held here).
 * Here: the sum of the machines' work (one process) at the calibrated rates, plus the taskmaster's and
 * a measured per-machine call overhead; messages cost nothing (shared memory) but are counted.
 * On a deployment: the slowest machine (max of flops / machineGflops and bytes / memoryBandwidth),
 * then the taskmaster, then each round's messages: 2 latencies + all the bytes through the
 * taskmaster's link at `bandwidthGBs`.
 */
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../algorithms/registry.js';
import type { DistributedSystem } from '../distributed/distributedSystem.js';
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

export interface SystemCost {
  storage: 'dense' | 'csr';
  n: number;
  machines: MachineCost[];
}

export function systemCost(system: DistributedSystem): SystemCost {
  if (system.storage === 'dense') {
    const machines = system.machines.map((d) => ({
      p: d.p,
      c: d.c,
      entriesA: extentSum(d.aStart, d.aEnd),
      entriesQ: extentSum(d.qStart, d.qEnd),
      factorNnz: 0,
      refinement: 0,
    }));
    return { storage: 'dense', n: system.n, machines };
  }
  const machines = system.machines.map((d) => ({
    p: d.p,
    c: d.c,
    entriesA: d.a.rowPtr[d.p],
    entriesQ: 0,
    factorNnz: d.gram.symbolic.nnzL,
    refinement: d.gramRefinement,
  }));
  return { storage: 'csr', n: system.n, machines };
}

function extentSum(start: Int32Array, end: Int32Array): number {
  let s = 0;
  for (let k = 0; k < start.length; k++) s += end[k] - start[k];
  return s;
}

/** One party's work in an iteration: dense flops, matrix/factor bytes (CSR), vector bytes. */
export interface Work {
  flops: number;
  matrixBytes: number;
  vectorBytes: number;
}

export interface IterationCost {
  machines: Work[];
  taskmaster: Work;
  bytesPerIteration: number;
  messagesPerIteration: number;
}

const BYTES = 8;
const CSR_ENTRY_BYTES = 12;

/** The counts of one iteration of `id` on `system` (see the header). */
export function iterationCost(id: AlgorithmId, system: SystemCost): IterationCost {
  const { n, machines, storage } = system;
  const m = machines.length;
  const projection = algorithms[id].family === 'projection';
  const consensus = id === 'apc' || id === 'mlm';
  const work = machines.map((d): Work => {
    // Gathering x onto a partial support and scattering back: two vectors of c.
    const gather = d.c < n ? 2 * BYTES * d.c : 0;
    const update = consensus ? 3 * BYTES * n : 0;
    if (storage === 'dense') {
      const flops = !projection ? 4 * d.entriesA : consensus ? 4 * d.entriesQ + d.p * d.p : 2 * d.entriesA + 2 * d.entriesQ + d.p * d.p;
      return { flops, matrixBytes: 0, vectorBytes: gather + update };
    }
    const solve = 2 * CSR_ENTRY_BYTES * d.factorNnz + 2 * CSR_ENTRY_BYTES * d.entriesA;
    const matrixBytes = !projection ? CSR_ENTRY_BYTES * d.entriesA : solve + d.refinement * (solve + 2 * CSR_ENTRY_BYTES * d.entriesA);
    return { flops: 0, matrixBytes, vectorBytes: update };
  });
  const supports = machines.reduce((s, d) => s + d.c, 0);
  const taskmaster: Work = {
    flops: 0,
    matrixBytes: 0,
    vectorBytes: consensus ? BYTES * m * n + 5 * BYTES * n : 2 * BYTES * supports + 5 * BYTES * n,
  };
  // Out and back to every machine: vectors of n (APC, MLM) or of each support.
  const bytesPerIteration = consensus ? 2 * BYTES * n * m : 2 * BYTES * supports;
  return { machines: work, taskmaster, bytesPerIteration, messagesPerIteration: 2 * m };
}

/** Seconds of one iteration in this process: the machines one after the other, at the calibrated rates. */
export function secondsHere(cost: IterationCost, calibration: Calibration): number {
  const at = (w: Work): number =>
    w.flops / calibration.flopsPerSecond + w.matrixBytes / calibration.bytesPerSecond + w.vectorBytes / calibration.vectorBytesPerSecond;
  let s = at(cost.taskmaster);
  for (const w of cost.machines) s += at(w) + calibration.perMachineOverheadSeconds;
  return s;
}

/** Seconds of one iteration on the deployment: slowest machine, taskmaster, one round of messages. */
export function secondsOnDeployment(cost: IterationCost, d: Deployment): number {
  const flopsRate = d.machineGflops * 1e9;
  const memory = d.memoryBandwidthGBs * 1e9;
  // A dense pass reads 8 bytes per 4 flops at most: whichever of compute or memory binds.
  const at = (w: Work): number => Math.max(w.flops / flopsRate, (w.flops * 2 + w.matrixBytes + w.vectorBytes) / memory);
  let slowest = 0;
  for (const w of cost.machines) slowest = Math.max(slowest, at(w));
  const communication = 2 * d.latencyMicroseconds * 1e-6 + cost.bytesPerIteration / (d.bandwidthGBs * 1e9);
  return slowest + at(cost.taskmaster) + communication;
}

export interface TimeToSolutionInput {
  system: SystemCost;
  rates: Record<AlgorithmId, { rate: number }>;
  tolerance: number;
  calibration: Calibration;
  deployment?: Deployment;
}

function times(input: TimeToSolutionInput, perIteration: (cost: IterationCost) => number): AlgorithmTimes {
  const out = {} as AlgorithmTimes;
  for (const id of ALGORITHM_IDS) {
    const cost = iterationCost(id, input.system);
    const iterations = predictIterations(input.rates[id].rate, input.tolerance);
    const secondsPerIteration = perIteration(cost);
    out[id] = {
      iterations,
      secondsPerIteration,
      seconds: iterations === null ? null : iterations * secondsPerIteration,
      bytesPerIteration: cost.bytesPerIteration,
      messagesPerIteration: cost.messagesPerIteration,
    };
  }
  return out;
}

export function timeToSolution(input: TimeToSolutionInput): TimeToSolution {
  const here = times(input, (cost) => secondsHere(cost, input.calibration));
  const result: TimeToSolution = { ...here, calibration: input.calibration };
  const { deployment } = input;
  if (deployment !== undefined) {
    result.deployment = { ...times(input, (cost) => secondsOnDeployment(cost, deployment)), assumptions: deployment };
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

function comparison(t: AlgorithmTimes, where: string): string {
  const winner = finishesFirstOf(t);
  const name = (id: 'apc' | 'dhbm'): string => (id === 'apc' ? 'APC' : 'D-HBM');
  return `${where} ${name(winner)} finishes first: APC ${String(t.apc.iterations ?? '-')} iterations x ${t.apc.secondsPerIteration.toPrecision(3)} s = ${seconds(t.apc.seconds)}, D-HBM ${String(t.dhbm.iterations ?? '-')} x ${t.dhbm.secondsPerIteration.toPrecision(3)} s = ${seconds(t.dhbm.seconds)}.`;
}

/** Which of APC and D-HBM finishes first, here and on the deployment, with why it can differ from the rates. */
export function finishesFirst(faster: 'apc' | 'dhbm', t: TimeToSolution): FinishesFirst {
  const here = finishesFirstOf(t);
  const deployment = t.deployment === undefined ? null : finishesFirstOf(t.deployment);
  const parts = [comparison(t, 'Here'), ...(t.deployment === undefined ? [] : [comparison(t.deployment, 'On the described deployment')])];
  const disagree = here !== faster || (deployment !== null && deployment !== faster);
  parts.push(
    disagree
      ? `This differs from the per-iteration answer (${faster === 'apc' ? 'APC' : 'D-HBM'} converges in fewer iterations) because an iteration's cost differs: APC projects (a pass over Q_i or solves with the factor of A_i A_i^T, and vectors of n to and from every machine) where D-HBM makes one pass over A_i and exchanges vectors of the column supports.`
      : `This agrees with the per-iteration answer: the difference in iterations outweighs the difference in cost per iteration.`,
  );
  return { here, deployment, explanation: parts.join(' ') };
}

/** The analysis with its time to solution and the recommendation's finishesFirst (the other fields unchanged). */
export function withTimeToSolution(analysis: Analysis, t: TimeToSolution): Analysis {
  const recommendation = { ...analysis.recommendation, finishesFirst: finishesFirst(analysis.recommendation.algorithm, t) };
  return { ...analysis, recommendation, timeToSolution: t };
}
