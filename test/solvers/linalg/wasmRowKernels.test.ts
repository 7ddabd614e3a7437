/**
 * The TypeScript backend's WebAssembly SIMD row kernels: the committed module is the assembled
 * .wat; the three kernels equal plain sums (every block tail, odd widths, ld > cols, offsets), with
 * their vectors in the arena or staged from elsewhere (bit for bit the same either way, across row
 * batches); extents are checked; an arena's arrays reach another thread by their places; the
 * LINALG_WASM=off switch; and rowKernels.ts with these kernels (matrices in the arena only).
 */
import { describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { assembleRowKernels } from '../../../scripts/buildWasm.js';
import { fusedRowPass } from '../../../src/solvers/linalg/rowKernels.js';
import { ROW_KERNELS_WASM_BASE64 } from '../../../src/solvers/linalg/wasm/rowKernelsModule.js';
import {
  ArenaStaging,
  ROW_BATCH,
  WasmArena,
  attachArena,
  reviveArenaViews,
  wasmKernelsUnavailableReason,
  type WasmRowKernels,
} from '../../../src/solvers/linalg/wasmRowKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import {
  addTermRows,
  applyStepRule,
  STEP_RULE_CODE,
  stepLayout,
  type StepRuleName,
  type SupportOf,
} from '../../../src/solvers/machines/stepRules.js';

const available = wasmKernelsUnavailableReason() === '';

/** An arena with room for `doubles` entries of data, attached on this thread (slot 0), and its kernels. */
function arenaOf(doubles: number, maxCols: number): { arena: WasmArena; kernels: WasmRowKernels } {
  const arena = WasmArena.forSpec({}, 8 * doubles, 1, maxCols);
  if (arena === null) throw new Error('no arena');
  return { arena, kernels: attachArena(arena.layout, 0) };
}

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = 1e-12): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(Math.abs(actual[i] - expected[i]), `entry ${i}`).toBeLessThanOrEqual(tolerance);
}

describe('the committed module', () => {
  it('is rowKernels.wat assembled (npm run build:wasm after editing the .wat)', async () => {
    expect(await assembleRowKernels()).toBe(ROW_KERNELS_WASM_BASE64);
  });
});

describe.skipIf(!available)(`WebAssembly row kernels${available ? '' : ` [SKIPPED: ${wasmKernelsUnavailableReason()}]`}`, () => {
  it('equal plain sums for every row count mod 8, odd and even widths, ld > cols and offsets', () => {
    const rng = new SeededRandom(7);
    const { arena, kernels } = arenaOf(40_000, 64);
    for (const rows of [1, 3, 7, 8, 9, 15, 16, 17, 30]) {
      for (const cols of [1, 2, 5, 16, 33]) {
        const ld = cols + (rows % 3);
        const xOffset = 3;
        const x = rng.fillSigned(arena.allocate(Float64Array, 8, xOffset + rows * ld));
        const v = rng.fillSigned(arena.allocate(Float64Array, 8, cols + 1));
        const bias = rng.fillSigned(arena.allocate(Float64Array, 8, rows + 2));
        const y = rng.fillSigned(arena.allocate(Float64Array, 8, cols + 2));
        const dots = arena.allocate(Float64Array, 8, rows + 1);
        const scale = rng.nextDouble() + 0.5;
        const row = (k: number, t: number): number => x[xOffset + k * ld + t];
        const dot = (k: number): number => {
          let s = 0;
          for (let t = 0; t < cols; t++) s += row(k, t) * v[1 + t];
          return s;
        };

        const expectedDots = Array.from({ length: rows }, (_, k) => dot(k) - bias[2 + k]);
        const expectedY = Array.from(
          y.subarray(2, 2 + cols),
          (yt, t) => yt + expectedDots.reduce((s, d, k) => s + scale * d * row(k, t), 0),
        );
        const y0 = Float64Array.from(y);
        kernels.rowsFused(rows, cols, scale, x, xOffset, ld, v, 1, bias, 2, dots, 1, y, 2);
        close(dots.subarray(1), expectedDots);
        close(y.subarray(2, 2 + cols), expectedY);
        expect(y[0]).toBe(y0[0]);
        expect(y[1]).toBe(y0[1]);

        kernels.rowsDot(rows, cols, x, xOffset, ld, v, 1, dots, 0);
        close(
          dots.subarray(0, rows),
          Array.from({ length: rows }, (_, k) => dot(k)),
        );

        y.set(y0);
        kernels.rowsCombine(rows, cols, scale, x, xOffset, ld, bias, 2, y, 2);
        close(
          y.subarray(2, 2 + cols),
          Array.from(
            y0.subarray(2, 2 + cols),
            (yt, t) => yt + scale * bias.subarray(2, 2 + rows).reduce((s, w, k) => s + w * row(k, t), 0),
          ),
        );
      }
    }
  });

  it('give bit-identical results whether their vectors are in the arena or staged, over several row batches', () => {
    const rng = new SeededRandom(8);
    const rows = 2 * ROW_BATCH + 13;
    const cols = 41;
    const { arena, kernels } = arenaOf(rows * cols + 4 * rows + 4 * cols, cols);
    const x = rng.fillSigned(arena.allocate(Float64Array, 8, rows * cols));
    const inArena = {
      v: rng.fillSigned(arena.allocate(Float64Array, 8, cols)),
      bias: rng.fillSigned(arena.allocate(Float64Array, 8, rows)),
      dots: arena.allocate(Float64Array, 8, rows),
      y: rng.fillSigned(arena.allocate(Float64Array, 8, cols)),
    };
    const outside = {
      v: Float64Array.from(inArena.v),
      bias: Float64Array.from(inArena.bias),
      dots: new Float64Array(rows),
      y: Float64Array.from(inArena.y),
    };

    kernels.rowsFused(rows, cols, 0.75, x, 0, cols, inArena.v, 0, inArena.bias, 0, inArena.dots, 0, inArena.y, 0);
    kernels.rowsFused(rows, cols, 0.75, x, 0, cols, outside.v, 0, outside.bias, 0, outside.dots, 0, outside.y, 0);
    expect(Array.from(outside.dots)).toEqual(Array.from(inArena.dots));
    expect(Array.from(outside.y)).toEqual(Array.from(inArena.y));

    kernels.rowsDot(rows, cols, x, 0, cols, inArena.v, 0, inArena.dots, 0);
    kernels.rowsDot(rows, cols, x, 0, cols, outside.v, 0, outside.dots, 0);
    expect(Array.from(outside.dots)).toEqual(Array.from(inArena.dots));

    kernels.rowsCombine(rows, cols, -1.5, x, 0, cols, inArena.bias, 0, inArena.y, 0);
    kernels.rowsCombine(rows, cols, -1.5, x, 0, cols, outside.bias, 0, outside.y, 0);
    expect(Array.from(outside.y)).toEqual(Array.from(inArena.y));
  });

  it('refuse extents beyond their arrays, matrices outside the arena and rows longer than a scratch slot', () => {
    const { arena, kernels } = arenaOf(200, 8);
    const x = arena.allocate(Float64Array, 8, 32);
    const v = new Float64Array(8);
    const out = new Float64Array(4);
    expect(() => kernels.rowsDot(5, 8, x, 0, 8, v, 0, out, 0)).toThrow(RangeError);
    expect(() => kernels.rowsDot(4, 8, x, 1, 8, v, 0, out, 0)).toThrow(RangeError);
    expect(() => kernels.rowsDot(4, 8, x, 0, 7, v, 0, out, 0)).toThrow(RangeError);
    expect(() => kernels.rowsDot(4, 8, x, 0, 8, v, 1, out, 0)).toThrow(RangeError);
    expect(() => kernels.rowsDot(4, 8, x, 0, 8, v, 0, out, 1)).toThrow(RangeError);
    expect(() => kernels.rowsCombine(4, 8, 1, x, 0, 8, out, 1, v, 0)).toThrow(RangeError);
    expect(() => kernels.rowsFused(4, 8, 1, x, 0, 8, v, 0, out, 0, out, 0, new Float64Array(7), 0)).toThrow(RangeError);
    expect(() => kernels.rowsDot(4, 8, new Float64Array(32), 0, 8, v, 0, out, 0)).toThrow(/not in this arena/);
    const wide = arena.allocate(Float64Array, 8, 9);
    expect(() => kernels.rowsDot(1, 9, wide, 0, 9, new Float64Array(9), 0, out, 0)).toThrow(/exceed the 8/);
    expect(() => arena.allocate(Float64Array, 8, 1000)).toThrow(/beyond the space reserved/);
  });

  it('copy a spec into the arena and give it back on another thread by the places of its arrays', () => {
    const spec = { gamma: 0.5, machines: [{ a: Float64Array.from([1, 2, 3]), cols: Int32Array.from([4, 5]), full: true }], name: 'x' };
    const arena = WasmArena.forSpec(spec, 0, 2, 4);
    if (arena === null) throw new Error('no arena');
    const copy = arena.copyInto(spec) as typeof spec;
    expect(copy.machines[0].a).not.toBe(spec.machines[0].a);
    expect(Array.from(copy.machines[0].a)).toEqual([1, 2, 3]);
    expect(copy.machines[0].cols).toBeInstanceOf(Int32Array);
    const described = arena.describe(copy);
    // What a worker receives: a structured clone (the memory is shared, the places are plain data).
    const { memory, places } = structuredClone({ memory: arena.layout.memory, places: described });
    const revived = reviveArenaViews(places, memory) as typeof spec;
    expect(revived.gamma).toBe(0.5);
    expect(revived.name).toBe('x');
    expect(Array.from(revived.machines[0].a)).toEqual([1, 2, 3]);
    copy.machines[0].a[1] = 7;
    expect(revived.machines[0].a[1]).toBe(7);
    expect(() => arena.describe({ a: new Float64Array(2) })).toThrow(/not in the arena/);
    expect(() => arena.copyInto({ a: new Uint8Array(2) })).toThrow(/cannot hold a Uint8Array/);
    // A spec with an array no arena holds gets no arena (its run keeps the plain loops).
    expect(WasmArena.forSpec({ a: new Uint8Array(2) }, 0, 1, 4)).toBeNull();
  });

  it('stage arrays before the arena is laid out: the arena takes them as they are (no copy) and copies the rest in', () => {
    const staging = ArenaStaging.create();
    if (staging === null) throw new Error('no staging memory');
    const values = staging.allocate(Float64Array, 8, 3);
    values.set([1, 2, 3]);
    // Another thread fills a region reserved here, through the memory; it is viewed here afterwards.
    const offset = staging.reserve(16);
    const { memory } = structuredClone({ memory: staging.memory });
    new Int32Array(memory.buffer, offset, 4).set([4, 5, 6, 7]);
    const filled = staging.view(Int32Array, offset, 4);
    expect(Array.from(filled)).toEqual([4, 5, 6, 7]);
    // Growth (more than its first page) gives the memory a new buffer object; the arrays made before stay held.
    const big = staging.allocate(Float64Array, 8, 20_000);
    expect(big.buffer).not.toBe(values.buffer);
    expect(staging.holds(values) && staging.holds(filled) && staging.holds(big)).toBe(true);
    expect(staging.holds(new Float64Array(3))).toBe(false);
    const spec = { values, filled, b: Float64Array.from([8, 9]) };
    const before = staging.end;
    const arena = WasmArena.forSpec(spec, 0, 2, 4, 0, staging);
    if (arena === null) throw new Error('no arena');
    // The arena's own region is reserved in the staging memory: what is reserved next does not overlap it.
    expect(staging.end).toBeGreaterThanOrEqual(arena.layout.scratchOffset + 2 * arena.layout.slotBytes);
    expect(arena.layout.scratchOffset).toBeGreaterThan(before);
    const copy = arena.copyInto(spec) as typeof spec;
    expect(copy.values.byteOffset).toBe(values.byteOffset);
    expect(copy.filled.byteOffset).toBe(filled.byteOffset);
    expect(copy.b.byteOffset).toBeGreaterThanOrEqual(before);
    expect(Array.from(copy.b)).toEqual([8, 9]);
    // The same memory, not a copy: a write through the staged array shows in the arena's.
    values[0] = 10;
    expect(copy.values[0]).toBe(10);
    const kernels = attachArena(arena.layout, 0);
    const out = new Float64Array(1);
    kernels.rowsDot(1, 3, copy.values, 0, 3, Float64Array.from([1, 1, 1]), 0, out, 0);
    expect(out[0]).toBe(15);
    expect(() => arena.describe(copy)).not.toThrow();
    // A run's regions handed back are taken again by the next one, zeroed.
    const mark = staging.end;
    const scratch = staging.allocate(Float64Array, 8, 4);
    scratch.fill(3);
    staging.release(mark, staging.end);
    expect(staging.end).toBe(mark);
    const again = staging.allocate(Float64Array, 8, 4);
    expect(again.byteOffset).toBe(scratch.byteOffset);
    expect(Array.from(again)).toEqual([0, 0, 0, 0]);
    // Not handed back while a later region is still held; both go when that one goes.
    const held = staging.end;
    staging.allocate(Float64Array, 8, 1);
    const later = staging.end;
    staging.release(mark, held);
    expect(staging.end).toBe(later);
    staging.release(held, later);
    expect(staging.end).toBe(mark);
  });

  describe("the step phase (blockStep) against stepRules.ts's loops", () => {
    const rng = new SeededRandom(12);
    const range = (from: number, count: number): Int32Array => Int32Array.from({ length: count }, (_, t) => from + t);
    const scattered = (n: number, count: number): Int32Array => {
      const chosen = new Set<number>();
      while (chosen.size < count) chosen.add(Math.floor(rng.nextDouble() * n));
      return Int32Array.from([...chosen].sort((a, b) => a - b));
    };
    const RULES: readonly StepRuleName[] = ['consensus', 'dgd', 'cimmino', 'dhbm', 'dnag'];

    /** Rows [first, end) moved by the loops: the terms summed from 0 in machine order (addTermRows), then applyStepRule. */
    function loopStep(
      machines: readonly SupportOf[],
      K: number,
      w: number,
      rule: StepRuleName,
      first: number,
      end: number,
      input: Float64Array,
      output: Float64Array,
      summed: number,
      n: number,
    ): void {
      const sums = new Float64Array((end - first) * w);
      let offset = summed;
      for (const machine of machines) {
        addTermRows(machine, output, offset, first, end, w, sums);
        offset += machine.c * K;
      }
      applyStepRule(rule, 0.37, 0.81, machines.length, input, input.subarray(2 * n * K), first * w, sums, 0, sums.length);
    }

    // One vector over 9000 columns (three of the kernel's 4096-row tiles), and blocks of K = 16 (256 rows a tile).
    for (const { n, K, widths } of [
      { n: 9000, K: 1, widths: [1] },
      { n: 700, K: 16, widths: [1, 7, 16] },
    ])
      it(`n = ${n}, K = ${K}: every rule, full, strip and scattered supports, odd row ranges, to the bit`, () => {
        // Full support, two strips (one across tiles), two scattered supports.
        const machines: SupportOf[] = [
          { c: n, full: true, cols: range(0, n) },
          { c: Math.floor(n / 2), full: false, cols: range(120, Math.floor(n / 2)) },
          { c: 50, full: false, cols: range(n - 50, 50) },
          { c: 90, full: false, cols: scattered(n, 90) },
          { c: Math.floor(n / 2), full: false, cols: scattered(n, Math.floor(n / 2)) },
        ];
        const layout = stepLayout(machines);
        const summed = 3;
        const termsLength = summed + layout.colsOffset[machines.length] * K;
        const arrays = { ...layout, input: new Float64Array(3 * n * K), output: new Float64Array(termsLength) };
        const arena = WasmArena.forSpec(arrays, 0, 1, 0);
        if (arena === null) throw new Error('no arena');
        const held = arena.copyInto(arrays) as typeof arrays;
        const kernel = attachArena(arena.layout, 0).blockStep(n, K, held.strip, held.cols, held.colsOffset);
        if (kernel === null) throw new Error('no step kernel');
        for (const rule of RULES)
          for (const w of widths) {
            const input0 = rng.fillSigned(new Float64Array(3 * n * K));
            rng.fillSigned(held.output);
            held.input.set(input0);
            const expected = Float64Array.from(input0);
            const ranges = [0, 1, Math.floor(n / 3), n - 5, n];
            for (let r = 0; r + 1 < ranges.length; r++) {
              kernel.run(STEP_RULE_CODE[rule], 0.37, 0.81, w, ranges[r], ranges[r + 1], held.input, held.output, summed);
              loopStep(machines, K, w, rule, ranges[r], ranges[r + 1], expected, held.output, summed, n);
            }
            expect(held.input.some((v, e) => v !== input0[e])).toBe(true);
            expect(Array.from(held.input), `${rule}, w ${w}`).toEqual(Array.from(expected));
          }
      });

    it('is null for supports outside the arena, and refuses bad supports and arrays', () => {
      const n = 10;
      const layout = stepLayout([{ c: 4, full: false, cols: Int32Array.of(1, 3, 5, 7) }]);
      const { arena, kernels } = arenaOf(200, 0);
      expect(kernels.blockStep(n, 1, layout.strip, layout.cols, layout.colsOffset)).toBeNull();
      const held = arena.copyInto(layout) as typeof layout;
      const unsorted = arena.copyInto(Int32Array.of(1, 5, 3, 7)) as Int32Array;
      expect(() => kernels.blockStep(n, 1, held.strip, unsorted, held.colsOffset)).toThrow(/not ascending/);
      expect(() => kernels.blockStep(3, 1, held.strip, held.cols, held.colsOffset)).toThrow(/not ascending/);
      const kernel = kernels.blockStep(n, 1, held.strip, held.cols, held.colsOffset);
      if (kernel === null) throw new Error('no step kernel');
      const input = arena.allocate(Float64Array, 8, 3 * n);
      const output = arena.allocate(Float64Array, 8, 4);
      expect(() => kernel.run(3, 1, 1, 1, 0, n, new Float64Array(3 * n), output, 0)).toThrow(/not in this arena/);
      expect(() => kernel.run(3, 1, 1, 1, 0, n, input.subarray(0, 2 * n), output, 0)).toThrow(/shorter than its blocks/);
      expect(() => kernel.run(3, 1, 1, 1, 0, n, input, output, 1)).toThrow(/shorter than summed/);
      expect(() => kernel.run(3, 1, 1, 1, 0, n + 1, input, output, 0)).toThrow(/not within/);
      expect(() => kernel.run(3, 1, 1, 2, 0, n, input, output, 0)).toThrow(/exceeds the layout/);
      expect(() => kernel.run(5, 1, 1, 1, 0, n, input, output, 0)).toThrow(/no rule/);
    });
  });

  it('take the dense runs of rows of a matrix in their arena in rowKernels.ts, the plain loops the rest, to the same sums', () => {
    const rng = new SeededRandom(9);
    // Rows 0..63 dense, 64..191 sparse (3 entries): too sparse overall for one call, so rowKernels.ts
    // cuts runs of 64 rows, gives the dense one to the kernels and the sparse ones to the plain loops.
    const rows = 192;
    const cols = 50;
    const start = new Int32Array(rows);
    const end = new Int32Array(rows).fill(cols);
    for (let k = 64; k < rows; k++) {
      start[k] = k % 47;
      end[k] = start[k] + 3;
    }
    const { arena, kernels } = arenaOf(rows * cols, cols);
    const x = arena.allocate(Float64Array, 8, rows * cols);
    for (let k = 0; k < rows; k++) for (let t = start[k]; t < end[k]; t++) x[k * cols + t] = 2 * rng.nextDouble() - 1;
    const plain = Float64Array.from(x);
    const v = rng.fillSigned(new Float64Array(cols));
    const bias = rng.fillSigned(new Float64Array(rows));
    const run = (vectorKernels: WasmRowKernels | null, matrix: Float64Array): { dots: Float64Array; y: Float64Array } => {
      const dots = new Float64Array(rows);
      const y = new Float64Array(cols);
      fusedRowPass(vectorKernels, matrix, rows, cols, start, end, v, bias, dots, 0, 2, y);
      return { dots, y };
    };
    const calls = vi.spyOn(kernels, 'rowsFused');
    const viaWasm = run(kernels, x);
    expect(calls.mock.calls.map((call) => call[0])).toEqual([64]);
    const viaLoops = run(null, plain);
    close(viaWasm.dots, viaLoops.dots);
    close(viaWasm.y, viaLoops.y);
    // The sparse rows' residuals come from the same plain loops either way.
    expect(Array.from(viaWasm.dots.subarray(64))).toEqual(Array.from(viaLoops.dots.subarray(64)));
    // The kernels take only matrices in their arena.
    expect(() => run(kernels, plain)).toThrow(/not in this arena/);
  });
});

describe('the switch', () => {
  it('LINALG_WASM=off: unavailable with the reason, and a TypeScript run keeps its plain loops', () => {
    const script = [
      "import { wasmKernelsEnabled, wasmKernelsUnavailableReason, useWasmKernels, WasmArena } from './src/solvers/linalg/wasmRowKernels.ts';",
      'let refused = false;',
      'try { useWasmKernels(true); } catch { refused = true; }',
      'console.log(JSON.stringify({ enabled: wasmKernelsEnabled(), reason: wasmKernelsUnavailableReason(), refused, arena: WasmArena.forSpec({}, 8, 1, 1) }));',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, LINALG_WASM: 'off' },
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout.trim())).toEqual({ enabled: false, reason: 'LINALG_WASM=off', refused: true, arena: null });
  });
});
