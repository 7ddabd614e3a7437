/**
 * The block methods' steps on the solver threads (row ranges summing the machines' terms, or APC's
 * and MLM's offsets, and updating x in place): every iterate of every column is the same with one thread and with
 * two, to the bit, also across a column's retirement, on dense and CSR systems whose machines have
 * full, strip and scattered column supports; and the gradient methods' iterates are the textbook
 * recurrences with g = A^T (A x - b) computed here from A directly.
 */
import { describe, expect, it } from 'vitest';
import { createBlockMethod, type BlockIterativeMethod } from '../../../src/solvers/algorithms/blockMethods.js';
import { buildDistributedSystem, type DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { useBackend } from '../../../src/solvers/linalg/backend.js';
import { fromRows, type CsrMatrix, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { setParallelMinWork, setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { csrFromDense, csrToDense } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';

const K = 4;
const STEPS = 12;
/** The step after which column 1 retires. */
const RETIRE_AFTER = 5;

/** n = 40, diagonal 4 and two scattered entries per row: a machine's rows reach columns that are neither all nor a strip. */
function scattered(): DenseMatrix {
  const n = 40;
  const random = new SeededRandom(3);
  const rows = Array.from({ length: n }, (_, i) => {
    const row = new Array<number>(n).fill(0);
    row[i] = 4;
    row[(i + 7) % n] = random.nextDouble() - 0.5;
    row[(13 * i + 5) % n] += random.nextDouble() - 0.5;
    return row;
  });
  return fromRows(rows);
}

function denseRandom(n: number): DenseMatrix {
  const random = new SeededRandom(9);
  return fromRows(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? n / 2 : random.nextDouble() - 0.5))));
}

const cases: { name: string; A: DenseMatrix | CsrMatrix; m: number }[] = [
  { name: 'dense, full supports', A: denseRandom(30), m: 4 },
  { name: 'dense, scattered supports', A: scattered(), m: 4 },
  { name: 'CSR, strip supports', A: poisson2d(7), m: 3 },
  { name: 'CSR, scattered supports', A: csrFromDense(scattered()), m: 5 },
];

function rightHandSides(n: number): Float64Array[] {
  const random = new SeededRandom(17);
  return Array.from({ length: K }, () => Float64Array.from({ length: n }, () => random.nextDouble() * 2 - 1));
}

function frobenius2(A: DenseMatrix | CsrMatrix): number {
  const dense = 'data' in A ? A : csrToDense(A);
  return dense.data.reduce((s, v) => s + v * v, 0);
}

/** Every column's estimate after every step (column 1 retired after RETIRE_AFTER steps). */
function iterates(
  threads: number,
  backend: 'typescript' | 'native',
  system: DistributedSystem,
  id: string,
  parameters: Record<string, number>,
  rhs: Float64Array[],
): Float64Array[][] {
  useBackend(backend);
  setSolverThreads(threads);
  const previous = setParallelMinWork(0);
  let method: BlockIterativeMethod | null = null;
  try {
    method = createBlockMethod(id, system, parameters, rhs);
    expect(method.threads).toBe(threads);
    const seen: Float64Array[][] = [];
    for (let t = 0; t <= STEPS; t++) {
      if (t > 0) method.step();
      seen.push(
        rhs.map((_, j) => {
          const x = new Float64Array(system.n);
          method?.estimate(j, x);
          return x;
        }),
      );
      if (t === RETIRE_AFTER) method.retire(1);
    }
    return seen;
  } finally {
    method?.dispose();
    setParallelMinWork(previous);
    setSolverThreads('auto');
    useBackend('auto');
  }
}

/** The textbook DGD, D-HBM or D-NAG iterates of one right-hand side, g = A^T (A x - b) from A's rows. */
function reference(A: DenseMatrix, b: Float64Array, id: string, alpha: number, beta: number): Float64Array[] {
  const n = A.rows;
  const x = new Float64Array(n);
  const z = new Float64Array(n);
  const y = new Float64Array(n);
  const out = [x.slice()];
  for (let t = 0; t < STEPS; t++) {
    const g = new Float64Array(n);
    for (let r = 0; r < n; r++) {
      let residual = -b[r];
      for (let c = 0; c < n; c++) residual += A.data[r * n + c] * x[c];
      for (let c = 0; c < n; c++) g[c] += A.data[r * n + c] * residual;
    }
    for (let e = 0; e < n; e++) {
      if (id === 'dgd') x[e] -= alpha * g[e];
      else if (id === 'dhbm') {
        z[e] = beta * z[e] + g[e];
        x[e] -= alpha * z[e];
      } else {
        const yNext = x[e] - alpha * g[e];
        x[e] = yNext + beta * (yNext - y[e]);
        y[e] = yNext;
      }
    }
    out.push(x.slice());
  }
  return out;
}

describe.each(['typescript', 'native'] as const)('block steps on the solver threads (%s backend)', (backend) => {
  for (const { name, A, m } of cases) {
    describe(name, () => {
      const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
      const rhs = rightHandSides(A.rows);
      const alpha = 1 / frobenius2(A);
      const parameters: Record<string, Record<string, number>> = {
        dgd: { alpha },
        dhbm: { alpha, beta: 0.5 },
        dnag: { alpha, beta: 0.5 },
        cimmino: { nu: 1 / m },
        apc: { gamma: 0.9, eta: 1.2 },
        mlm: {},
      };

      it.each(['dgd', 'dhbm', 'dnag', 'cimmino', 'apc', 'mlm'])(
        '%s: every iterate with two threads is the one-thread iterate, to the bit',
        (id) => {
          const one = iterates(1, backend, system, id, parameters[id], rhs);
          const two = iterates(2, backend, system, id, parameters[id], rhs);
          expect(two).toEqual(one);
          // Column 1 keeps its estimate from its retirement on.
          expect(one[STEPS][1]).toEqual(one[RETIRE_AFTER][1]);
          expect(one[STEPS][0]).not.toEqual(one[RETIRE_AFTER][0]);
        },
      );

      it.each(['dgd', 'dhbm', 'dnag'])('%s: the iterates are the recurrence on g = A^T (A x - b)', (id) => {
        const dense = 'data' in A ? A : csrToDense(A);
        const got = iterates(2, backend, system, id, parameters[id], rhs);
        rhs.forEach((b, j) => {
          const expected = reference(dense, b, id, parameters[id].alpha, parameters[id].beta ?? 0);
          for (let t = 0; t <= (j === 1 ? RETIRE_AFTER : STEPS); t++) {
            const scale = Math.max(...expected[t].map(Math.abs), 1e-300);
            got[t][j].forEach((v, e) => expect(Math.abs(v - expected[t][e])).toBeLessThanOrEqual(1e-12 * Math.max(scale, 1)));
          }
        });
      });
    });
  }
});
