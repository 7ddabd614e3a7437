/**
 * The addon's kernels of the gradient methods' block runs against the TypeScript loops they replace, to the
 * bit: the fused CSR term G = A^T (A X - B) (csrBlockTerm: no R kept, G zeroed as the sweep reaches its rows;
 * rows with repeated, unsorted and no column indices, widths w = 1..17 so that every slice width is used)
 * and the step phase (blockStep: the machines' terms summed in machine order on full, strip and scattered
 * supports, then each rule's update) against ./blockShard.ts's loop; the one-sweep dense pass (rowsFusedBlock
 * and dtrmm) against the defining sums, and each of its columns to the bit against that column alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nativeBlas, nativeBlockStep, nativeCsr } from '../../../src/solvers/linalg/backend.js';
import { nativeCsrBlock, nativeDenseBlockTerm, typescriptCsrBlock, type CsrBlockRows } from '../../../src/solvers/linalg/blockKernels.js';
import {
  BlockShard,
  STEP_PHASE,
  type BlockSpec,
  type BlockStepRule,
  type DenseBlockStorage,
} from '../../../src/solvers/machines/blockShard.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { stepLayout } from '../../../src/solvers/machines/stepRules.js';

const csr = nativeCsr();
const step = nativeBlockStep();

describe.skipIf(csr === null || typeof csr.csrBlockTerm !== 'function')("the addon's fused CSR block term", () => {
  it('equals the TypeScript sweep on a zeroed G to the bit, and leaves no stale entry of G, w = 1..17', () => {
    const rng = new SeededRandom(31);
    const p = 23;
    const cols = 17;
    const rowPtr = new Int32Array(p + 1);
    const colIdx: number[] = [];
    for (let k = 0; k < p; k++) {
      // Rows 3 and 11 empty, the others 1-6 entries in any order, repeats now and then; column 16 never used.
      const count = k === 3 || k === 11 ? 0 : 1 + Math.floor(rng.nextDouble() * 6);
      for (let e = 0; e < count; e++) colIdx.push(Math.floor(rng.nextDouble() * (cols - 1)));
      rowPtr[k + 1] = colIdx.length;
    }
    const rows: CsrBlockRows = {
      p,
      c: cols,
      rowPtr,
      colIdx: Int32Array.from(colIdx),
      values: rng.fillSigned(new Float64Array(colIdx.length)),
    };
    const native = nativeCsrBlock(csr, rows);
    const plain = typescriptCsrBlock(rows);
    if (native === null) throw new Error('no native sweep');
    for (let w = 1; w <= 17; w++) {
      const x = rng.fillSigned(new Float64Array(cols * w));
      const b = rng.fillSigned(new Float64Array(p * w));
      const squares0 = rng.fillSigned(new Float64Array(w));
      const runOn = (kernel: typeof native): { g: Float64Array; squares: Float64Array } => {
        // G starts with garbage: term overwrites it.
        const g = rng.fillSigned(new Float64Array(cols * w));
        const squares = Float64Array.from(squares0);
        kernel.term(w, x, b, new Float64Array(p * w), g, squares);
        return { g, squares };
      };
      const fromNative = runOn(native);
      const fromLoop = runOn(plain);
      expect(Array.from(fromNative.g), `w ${w}: G`).toEqual(Array.from(fromLoop.g));
      expect(Array.from(fromNative.squares), `w ${w}: squares`).toEqual(Array.from(fromLoop.squares));
      expect(fromNative.g.subarray(16 * w).every((v) => v === 0)).toBe(true);
    }
  });

  it('refuses blocks too short or overlapping', () => {
    const rows: CsrBlockRows = { p: 2, c: 3, rowPtr: Int32Array.of(0, 1, 2), colIdx: Int32Array.of(0, 2), values: Float64Array.of(1, 2) };
    const native = nativeCsrBlock(csr, rows);
    if (native === null) throw new Error('no native sweep');
    const w = 4;
    const x = new Float64Array(3 * w);
    const b = new Float64Array(2 * w);
    expect(() => native.term(w, x, b, new Float64Array(0), new Float64Array(3 * w - 1), new Float64Array(w))).toThrow(RangeError);
    expect(() => native.term(w, x, b, new Float64Array(0), x, new Float64Array(w))).toThrow(RangeError);
  });
});

const denseTerm = nativeDenseBlockTerm(nativeBlas());
const cpuFlags = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';

describe.skipIf(denseTerm === null)("the addon's one-sweep dense block pass", () => {
  // p not a multiple of the 4 or 8 rows swept at once, w = 1..17: every lane tail (padded copies) and whole chunks.
  const p = 13;
  const c = 37;
  const rng = new SeededRandom(8);
  const rows = rng.fillSigned(new Float64Array(p * c));
  const r = new Float64Array(p * p);
  for (let i = 0; i < p; i++) for (let j = i; j < p; j++) r[i * p + j] = i === j ? 2 + rng.nextDouble() : rng.nextDouble() - 0.5;
  const x17 = rng.fillSigned(new Float64Array(c * 17));
  const rhs17 = rng.fillSigned(new Float64Array(p * 17));
  /** Columns [0, w) of a K-column block. */
  const first = (block: Float64Array, height: number, K: number, w: number): Float64Array => {
    const out = new Float64Array(height * w);
    for (let k = 0; k < height; k++) for (let j = 0; j < w; j++) out[k * w + j] = block[k * K + j];
    return out;
  };
  const run = (w: number, scale: number, withR: boolean, x: Float64Array, rhs: Float64Array) => {
    const dots = new Float64Array(p * w);
    const residual = new Float64Array(p * w);
    // The term starts with garbage: the pass overwrites it.
    const term = rng.fillSigned(new Float64Array(c * w));
    denseTerm!(p, c, w, scale, rows, x, rhs, withR ? r : null, dots, residual, term);
    return { dots, residual, term };
  };

  it('equals the defining sums: D = rows X - rhs, term = scale rows^T D, residual = R^T D, w = 1..17', () => {
    for (let w = 1; w <= 17; w++) {
      const x = first(x17, c, 17, w);
      const rhs = first(rhs17, p, 17, w);
      const scale = w % 2 === 0 ? -1 : 0.5;
      const { dots, residual, term } = run(w, scale, true, x, rhs);
      for (let j = 0; j < w; j++) {
        const d = new Float64Array(p);
        for (let k = 0; k < p; k++) {
          let s = -rhs[k * w + j];
          for (let t = 0; t < c; t++) s += rows[k * c + t] * x[t * w + j];
          d[k] = s;
          expect(dots[k * w + j]).toBeCloseTo(s, 12);
        }
        for (let t = 0; t < c; t++) {
          let s = 0;
          for (let k = 0; k < p; k++) s += rows[k * c + t] * d[k];
          expect(term[t * w + j]).toBeCloseTo(scale * s, 12);
        }
        for (let k = 0; k < p; k++) {
          let s = 0;
          for (let i = 0; i <= k; i++) s += r[i * p + k] * d[i];
          expect(residual[k * w + j]).toBeCloseTo(s, 12);
        }
      }
    }
  });

  // The sweep runs on AVX-512 only (elsewhere two dgemm, whose sums need not be a column's alone).
  const avx512 = /\bavx512f\b/.test(cpuFlags) && /\bavx512vl\b/.test(cpuFlags);
  it.skipIf(!avx512)("gives each column the bits it has alone (the lanes run over the columns), whatever the block's width", () => {
    const alone = Array.from({ length: 17 }, (_, j) =>
      run(
        1,
        -1,
        false,
        Float64Array.from({ length: c }, (_, t) => x17[t * 17 + j]),
        Float64Array.from({ length: p }, (_, k) => rhs17[k * 17 + j]),
      ),
    );
    for (const w of [3, 8, 16, 17]) {
      const { dots, term } = run(w, -1, false, first(x17, c, 17, w), first(rhs17, p, 17, w));
      for (let j = 0; j < w; j++) {
        expect(
          Array.from({ length: p }, (_, k) => dots[k * w + j]),
          `w ${w}, column ${j}: D`,
        ).toEqual(Array.from(alone[j].dots));
        expect(
          Array.from({ length: c }, (_, t) => term[t * w + j]),
          `w ${w}, column ${j}: term`,
        ).toEqual(Array.from(alone[j].term));
      }
    }
  });

  it('refuses blocks too short or overlapping', () => {
    const blas = nativeBlas()!;
    const w = 4;
    const x = new Float64Array(c * w);
    const rhs = new Float64Array(p * w);
    const dots = new Float64Array(p * w);
    const term = new Float64Array(c * w);
    expect(() => blas.rowsFusedBlock!(p, c, w, 1, rows, c, x, rhs, dots, new Float64Array(c * w - 1))).toThrow(RangeError);
    expect(() => blas.rowsFusedBlock!(p, c, w, 1, rows, c, x, rhs, dots, x)).toThrow(RangeError);
    expect(() => blas.rowsFusedBlock!(p, c, w, 1, rows, c, term, rhs, dots, term)).toThrow(RangeError);
  });
});

describe.skipIf(step === null)("the addon's block step phase", () => {
  const n = 700;
  const K = 16;
  const m = 5;
  /** Dense storage stubs: the step phase reads only the supports. */
  const machine = (cols: Int32Array, full = false): DenseBlockStorage => ({
    storage: 'dense',
    p: 1,
    c: cols.length,
    full,
    cols,
    a: new Float64Array(cols.length),
    q: null,
    r: null,
  });
  const rng = new SeededRandom(8);
  const scattered = (count: number): Int32Array => {
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(Math.floor(rng.nextDouble() * n));
    return Int32Array.from([...chosen].sort((a, b) => a - b));
  };
  const range = (from: number, count: number): Int32Array => Int32Array.from({ length: count }, (_, t) => from + t);
  // Full support, two strips (one across a tile boundary), two scattered supports.
  const machines = [
    machine(range(0, n), true),
    machine(range(120, 300)),
    machine(range(650, 50)),
    machine(scattered(90)),
    machine(scattered(400)),
  ];
  const outputOffset = new Int32Array(m + 1);
  machines.forEach(({ c }, i) => (outputOffset[i + 1] = outputOffset[i] + c * K));

  for (const rule of ['consensus', 'dgd', 'cimmino', 'dhbm', 'dnag'] as const)
    it(`${rule}: equals the TypeScript loop to the bit, row range by row range, w = 1, 7, 16`, () => {
      const stepRule: BlockStepRule = { rule, alpha: 0.37, beta: 0.81 };
      const spec: BlockSpec = {
        kind: 'gradient',
        n,
        columns: K,
        machines,
        rowOffset: new Int32Array(m + 1),
        outputOffset,
        step: stepRule,
        stepLayout: stepLayout(machines),
      };
      const shards = (['native', 'typescript'] as const).map((backend) => new BlockShard(spec, { backend, arenaKernels: null }));
      for (const w of [1, 7, 16]) {
        const input0 = rng.fillSigned(new Float64Array(3 * n * K));
        const output = rng.fillSigned(new Float64Array(2 * outputOffset[m]));
        const [native, loop] = shards.map((shard) => {
          const input = Float64Array.from(input0);
          for (let chunk = 0; chunk < m; chunk++) shard.run(STEP_PHASE | w, chunk, input, output, new Float64Array(m * K));
          return input;
        });
        expect(native.some((v, e) => v !== input0[e])).toBe(true);
        expect(Array.from(native), `w ${w}`).toEqual(Array.from(loop));
      }
    });
});
