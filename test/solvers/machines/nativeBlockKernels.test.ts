/**
 * The addon's kernels of the gradient methods' block runs against the TypeScript loops they replace, to the
 * bit: the fused CSR term G = A^T (A X - B) (csrBlockTerm: no R kept, G zeroed as the sweep reaches its rows;
 * rows with repeated, unsorted and no column indices, widths w = 1..17 so that every slice width is used)
 * and the step phase (blockStep: the machines' terms summed in machine order on full, strip and scattered
 * supports, then each rule's update) against ./blockShard.ts's loop.
 */
import { describe, expect, it } from 'vitest';
import { nativeBlockStep, nativeCsr } from '../../../src/solvers/linalg/backend.js';
import { nativeCsrBlock, typescriptCsrBlock, type CsrBlockRows } from '../../../src/solvers/linalg/blockKernels.js';
import {
  BlockShard,
  STEP_PHASE,
  type BlockSpec,
  type BlockStepRule,
  type DenseBlockStorage,
} from '../../../src/solvers/machines/blockShard.js';
import { SeededRandom } from '../../../src/solvers/random.js';

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
