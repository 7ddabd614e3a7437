/**
 * The sparse analysis by component, on one sparse benchmark problem (bench/sparseProblems.ts) and one
 * backend: the LU of A, L = lambda_max(A^T A), mu by shift-invert, the principal angles of the
 * overlapping pairs, lambda_max(S), lambda_min(S), the local angles; wall time, operator applications
 * and value of each, then the whole analysis once through analyzeWork (what bench/sparseStages.ts times),
 * and the peak RSS; and what one product or solve of each part costs (unitCosts: x -> A^T A x, an LU
 * solve pair A^{-1} A^{-T}, machine 0's Gram solve pair L_0^{-T} L_0^{-1}), the floor of each part
 * being its count of them times that. Prints one JSON line.
 *
 * lambda_max(S) is had by reflection (2 - lambda_min(S)) when the machines' overlap graph is bipartite, as
 * in the analysis; --lanczos-max also times the Lanczos run it replaces. --plain-angles also runs the pairs'
 * angles by Lanczos on C^T C alone (without the joint Gram's shift-invert route) and compares. --timeline prints the
 * whole analysis' progress as it goes (phase and tenth of its fraction, with the seconds since it began, on stderr), as a
 * job sees it: which part sets the wall time when the parts run on two threads.
 *
 *   node --import tsx bench/sparseAnalysisProfile.ts <sparse.json> <typescript|native> [--whole-only | --parts-only] [--lanczos-max] [--plain-angles] [--conditioning-only] [--arpack]
 *     [--basis=<vectors>] [--kept=<vectors>] [--timeline]
 */
import { readFileSync } from 'node:fs';
import { analyzeWork, buildDistributedSystem, createProblem, partitionFromAssignment } from '../src/solvers/index.js';
import { runSync, type Work } from '../src/solvers/cooperative.js';
import { machineGramSolves, sBasisSize } from '../src/solvers/analysis/sparseAnalysis.js';
import { localAnglesOfCsrWork } from '../src/solvers/analysis/localAngles.js';
import { inverseNormalOperatorOfSparse } from '../src/solvers/sparse/normalOperators.js';
import { factorNonzeros } from '../src/solvers/sparse/sparseLu.js';
import { currentThreadLuSolves, currentThreadNormalOperator, currentThreadSparseLuWork } from '../src/solvers/machines/placement.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import {
  eigensolverOptionsOf,
  KrylovWorkspace,
  largestEigenvalueWork,
  smallestEigenvalueByInverseWork,
  type SymmetricOperator,
} from '../src/solvers/eigen/lanczos.js';
import { lambdaMaxSWork, lambdaMinSWork, reflectedLambdaMax } from '../src/solvers/analysis/kappaS.js';
import {
  machineColumnSlots,
  overlappingMachinePairs,
  overlapTwoColouring,
  PairAngleContext,
  sparsePairAngleWork,
  type SparsePairAngle,
} from '../src/solvers/sparse/spectrumOfS.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const TOLERANCE = 1e-8;

function clock<T>(fn: () => T): [number, T] {
  const t0 = performance.now();
  const value = fn();
  return [(performance.now() - t0) / 1e3, value];
}

/** `work` run to its end, each change of its phase or of the tenth of its fraction written to stderr with its seconds. */
function runWithTimeline<T>(work: Work<T>): T {
  const start = performance.now();
  let last = '';
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (step.value === undefined) continue;
    const line = `${step.value.phase} ${Math.floor((step.value.fraction ?? 0) * 10) / 10}`;
    if (line !== last) process.stderr.write(`${((performance.now() - start) / 1e3).toFixed(1)} s  ${line}\n`);
    last = line;
  }
}

/** Seconds of this process's CPU (all threads) spent in fn, beside the wall time: the machine may be shared. */
function cpuClock<T>(fn: () => T): [number, number, T] {
  const c0 = process.cpuUsage();
  const [seconds, value] = clock(fn);
  const c1 = process.cpuUsage(c0);
  return [seconds, (c1.user + c1.system) / 1e6, value];
}

function main(): void {
  const [problemPath, backendArg, ...rest] = process.argv.slice(2);
  const flags = new Set(rest);
  if (!problemPath || (backendArg !== 'typescript' && backendArg !== 'native')) {
    throw new Error('usage: sparseAnalysisProfile.ts <sparse.json> <typescript|native> [--whole-only | --parts-only] [--lanczos-max]');
  }
  const spec = JSON.parse(readFileSync(problemPath, 'utf8')) as SparseProblemFile;
  selectBackend(backendArg);
  const { m } = spec;
  const { A, assignment } = readSparseProblemArrays(spec);
  const partition = partitionFromAssignment(assignment, m);
  const [setupSeconds, system] = clock(() => buildDistributedSystem(createProblem({ A, partition })));
  const parts: Record<string, unknown> = { setup: setupSeconds };
  const log = (name: string, value: unknown): void => {
    parts[name] = value;
    process.stderr.write(`${name}: ${JSON.stringify(value)}\n`);
  };

  if (!flags.has('--whole-only')) {
    const workspace = new KrylovWorkspace();
    const [luSeconds, lu] = clock(() => runSync(currentThreadSparseLuWork(A)));
    log('lu', { seconds: luSeconds, nnzLU: factorNonzeros(lu), ordering: lu.ordering });
    const luSolves = currentThreadLuSolves(lu);
    // What one product or solve of each part costs here (median of `repeats`): a part's floor is its count of them times this.
    const median = (repeats: number, fn: () => void): number => {
      const times = Array.from({ length: repeats }, () => clock(fn)[0]).sort((a, b) => a - b);
      return times[Math.floor(repeats / 2)];
    };
    const x = new Float64Array(A.rows).fill(1);
    const y = new Float64Array(A.rows);
    const normal = currentThreadNormalOperator(A);
    const gramSolves = machineGramSolves(system.machines.map((machine) => machine.gram));
    const p0 = system.machines[0].p;
    log('unitCosts', {
      normalProduct: median(9, () => normal.apply(x, y)),
      luSolvePair: median(5, () => {
        luSolves.solveTransposed(x, y);
        luSolves.solve(y, x.fill(1));
      }),
      gramSolvePair: median(9, () => {
        gramSolves.solveL(0, x.subarray(0, p0), y.subarray(0, p0));
        gramSolves.solveLT(0, y.subarray(0, p0), x.subarray(0, p0));
      }),
    });
    x.fill(1);
    // L and mu timed apart, each with the seconds spent inside its operator (products or solve pairs):
    // the rest is the Lanczos's own work (orthogonalization, restarts, Ritz vectors).
    const timed = (op: SymmetricOperator): { op: SymmetricOperator; seconds: () => number } => {
      let inside = 0;
      return {
        op: {
          size: op.size,
          apply: (u, v) => {
            const t0 = performance.now();
            op.apply(u, v);
            inside += performance.now() - t0;
          },
        },
        seconds: () => inside / 1e3,
      };
    };
    // By default the analysis' choice (the kernels' largeEigensolver); --arpack: ARPACK for the large operators.
    const option = (name: string): number | undefined => {
      const given = rest.find((flag) => flag.startsWith(`--${name}=`));
      return given === undefined ? undefined : Number(given.slice(name.length + 3));
    };
    // --basis=<vectors> --kept=<vectors>: the Lanczos's cycle, for measuring its cost against the products.
    const lanczosOptions = {
      tolerance: TOLERANCE,
      ...eigensolverOptionsOf(selectedKernels()),
      ...(flags.has('--arpack') ? { arpack: selectedKernels().arpack } : {}),
      basisSize: option('basis'),
      kept: option('kept'),
    };
    const forward = timed(currentThreadNormalOperator(A));
    const [lSeconds, lCpuSeconds, L] = cpuClock(() => runSync(largestEigenvalueWork(forward.op, lanczosOptions, workspace)));
    log('L', { seconds: lSeconds, cpuSeconds: lCpuSeconds, operatorSeconds: forward.seconds(), ...L });
    const inverse = timed(inverseNormalOperatorOfSparse(lu, luSolves));
    const [muSeconds, muCpuSeconds, mu] = cpuClock(() => runSync(smallestEigenvalueByInverseWork(inverse.op, lanczosOptions, workspace)));
    log('mu', { seconds: muSeconds, cpuSeconds: muCpuSeconds, operatorSeconds: inverse.seconds(), ...mu });
    log('conditioning', { seconds: lSeconds + muSeconds, kappaAtA: L.value / mu.value });
    if (flags.has('--conditioning-only')) {
      process.stdout.write(`${JSON.stringify({ problem: spec.name, backend: backendArg, parts })}\n`);
      return;
    }
    const slots = machineColumnSlots(A, partition.rowsOf);
    const factors = machineGramSolves(system.machines.map((machine) => machine.gram));
    const pairs = overlappingMachinePairs(slots);
    const context = new PairAngleContext(slots, factors);
    let products = 0;
    let thetaH = Math.PI / 2;
    const angles: SparsePairAngle[] = [];
    const [anglesSeconds, anglesCpuSeconds] = cpuClock(() => {
      for (let q = 0; q < pairs.length / 2; q++) {
        const angle = runSync(sparsePairAngleWork(context, pairs[2 * q], pairs[2 * q + 1]));
        angles.push(angle);
        products += angle.iterations;
        thetaH = Math.min(thetaH, angle.theta);
      }
    });
    const methods = [...new Set(angles.map((angle) => angle.method))];
    log('principalAngles', { seconds: anglesSeconds, cpuSeconds: anglesCpuSeconds, pairs: pairs.length / 2, products, thetaH, methods });
    if (flags.has('--plain-angles')) {
      // The same pairs by Lanczos on C^T C alone (no joint Gram): products, CPU, and the largest
      // |theta - theta_plain| over the sum of both bounds.
      const plainContext = new PairAngleContext(slots, {
        solveL: (machine, b, y) => factors.solveL(machine, b, y),
        solveLT: (machine, y, x) => factors.solveLT(machine, y, x),
      });
      let plainProducts = 0;
      let worstOverBounds = 0;
      let largestBound = 0;
      const [plainSeconds, plainCpuSeconds] = cpuClock(() => {
        for (let q = 0; q < pairs.length / 2; q++) {
          const plain = runSync(sparsePairAngleWork(plainContext, pairs[2 * q], pairs[2 * q + 1]));
          plainProducts += plain.iterations;
          const bounds = angles[q].absoluteErrorBound + plain.absoluteErrorBound;
          worstOverBounds = Math.max(worstOverBounds, Math.abs(angles[q].theta - plain.theta) / bounds);
          largestBound = Math.max(largestBound, angles[q].absoluteErrorBound);
        }
      });
      log('principalAnglesPlain', {
        seconds: plainSeconds,
        cpuSeconds: plainCpuSeconds,
        products: plainProducts,
        worstOverBounds,
        largestBound,
      });
    }
    // S's ends with the analysis' options (sparseAnalysis.ts: its basis size, the backend's dense kernels).
    const sOptions = { ...lanczosOptions, basisSize: option('basis') ?? sBasisSize(A.rows) };
    const [minSeconds, minCpuSeconds, lambdaMinS] = cpuClock(() => runSync(lambdaMinSWork(slots, lu, sOptions, workspace, luSolves)));
    log('lambdaMinS', { seconds: minSeconds, cpuSeconds: minCpuSeconds, ...lambdaMinS });
    const bipartite = overlapTwoColouring(slots, pairs) !== null;
    if (bipartite) log('lambdaMaxS', { seconds: 0, ...reflectedLambdaMax(lambdaMinS) });
    if (!bipartite || flags.has('--lanczos-max')) {
      const [maxSeconds, lambdaMaxS] = clock(() => runSync(lambdaMaxSWork(slots, factors, sOptions, workspace)));
      log(bipartite ? 'lambdaMaxSByLanczos' : 'lambdaMaxS', { seconds: maxSeconds, ...lambdaMaxS });
    }
    const [localSeconds] = clock(() => runSync(localAnglesOfCsrWork(A, partition)));
    log('localAngles', { seconds: localSeconds });
  }
  if (!flags.has('--parts-only')) {
    const run = flags.has('--timeline') ? runWithTimeline : runSync;
    const [wholeSeconds, wholeCpuSeconds, analysis] = cpuClock(() => run(analyzeWork(system)));
    const c = analysis.conditioning;
    log('whole', {
      seconds: wholeSeconds,
      cpuSeconds: wholeCpuSeconds,
      kappaS: c.kappaS,
      lambdaMinS: c.lambdaMinS,
      lambdaMaxS: c.lambdaMaxS,
      kappaAtA: c.kappaAtA,
      L: c.L,
      mu: c.mu,
      thetaH: analysis.heterogeneity.thetaH,
    });
  }
  parts.peakRssBytes = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(`${JSON.stringify({ problem: spec.name, backend: backendArg, parts })}\n`);
}

main();
