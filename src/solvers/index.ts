/**
 * The numerical core as a library: no HTTP, no Redis. A typical use:
 *
 *   const A = generateMatrix({ generator: 'gaussian', n: 200, mean: 1, seed: 7 });
 *   const system = buildDistributedSystem(createProblem({ A, partition: { machines: 10 } }));
 *   const analysis = analyze(system);                     // metrics, rates, bounds, recommendation
 *   const run = runAlgorithm(system, 'apc', spectralDataOf(analysis), { tolerance: 1e-8, maxIterations: 20000 });
 *
 * With A a CsrMatrix, createProblem and buildDistributedSystem give a sparse system (CSR rows per
 * machine, never densified) that runAlgorithm iterates on.
 *
 * Long computations also exist as generators (`analyzeWork`, `runAlgorithmWork`) for
 * `runCooperatively`, which keeps an event loop responsive and honours an AbortSignal.
 */
export * from './errors.js';
export { fromRows, toRows, matVec, norm2, relativeResidual, type DenseMatrix } from './matrix.js';
export { runSync, runCooperatively, type Work, type WorkProgress, type CooperativeOptions } from './cooperative.js';
export { partitionFromAssignment, type Partition, type DenseProblem, type CsrProblem } from './problem.js';
export * from './input/index.js';
export type { CsrMatrix } from './sparse/csr.js';
export {
  buildDistributedSystem,
  buildDistributedSystemWork,
  type DenseSystem,
  type DenseMachineData,
  type DistributedSystem,
} from './distributed/distributedSystem.js';
export type { CsrMachineData, CsrSystem } from './distributed/sparseSystem.js';
export { analyze, analyzeWork, spectralDataOf, DEFAULT_ANALYSIS_TOLERANCE, type AnalyzeOptions } from './analysis/analyze.js';
export type * from './analysis/types.js';
export { ALGORITHM_IDS, algorithms, getAlgorithm, isAlgorithmId, type AlgorithmId } from './algorithms/registry.js';
export type * from './algorithms/types.js';
export {
  runAlgorithm,
  runAlgorithmWork,
  DEFAULT_TRACE_CAP,
  DEFAULT_DIVERGENCE_TOLERANCE,
  DIVERGENCE_FACTOR,
} from './runner/runAlgorithm.js';
export {
  setSolverThreads,
  solverThreads,
  setParallelMinWork,
  parallelMinWork,
  DEFAULT_PARALLEL_MIN_WORK,
  setParallelTasksMinNnz,
  setParallelAnalysisTasksMinNnz,
  setParallelDenseAnalysisMinN,
  DEFAULT_PARALLEL_TASKS_MIN_NNZ,
  DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ,
} from './parallel/threads.js';
export { activeSolverWorkers, lastThreadStartFailure } from './parallel/engine.js';
export type * from './runner/types.js';
export { useBackend, activeBackend, nativeBlas, nativeUnavailableReason, type BackendName } from './linalg/backend.js';
export { kernelsOf, selectedKernels, TYPESCRIPT_KERNELS, type Kernels } from './linalg/kernels.js';
export { useWasmKernels, wasmKernelsEnabled, wasmKernelsUnavailableReason } from './linalg/wasmRowKernels.js';
