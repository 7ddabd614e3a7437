/**
 * The dense row passes' rates on one thread by the bytes they stream, as the time model's calibration times them
 * (../src/solvers/analysis/calibration.ts: an 8 MiB block in cache, a 40 MiB one out of it) and at the sizes between:
 * where this host's cache ends for one thread. Per block size: the fused pass (4 flops an entry), the product passes
 * over one block twice (the calibration's), and the product passes over two halves, one each (a Cimmino machine's
 * A_i x, then Q_i w). Median of 9 after 3 untimed. Run alone:
 *   node --import tsx bench/denseCacheCurve.ts [native|typescript]
 */
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { accumulateRowCombination, fusedRowPass, multiplyRows } from '../src/solvers/linalg/rowKernels.js';
import { passKernels } from '../src/solvers/machines/placement.js';
import { selectBackend, type BackendName } from './backends.js';

selectBackend((process.argv[2] ?? 'native') as BackendName);
const rows = passKernels({ backend: selectedKernels().backend, arenaKernels: null }).rows;
const c = 1024;

function medianSeconds(pass: () => void): number {
  for (let k = 0; k < 3; k++) pass();
  const times: number[] = [];
  for (let k = 0; k < 9; k++) {
    const t0 = performance.now();
    pass();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[4] / 1e3;
}

for (const mib of [4, 8, 12, 16, 20, 24, 32, 40, 64]) {
  const p = (mib * 2 ** 20) / 8 / c;
  const half = p >> 1;
  const a = new Float64Array(p * c).map((_, k) => ((k * 7919) % 1000) / 1000 - 0.5);
  const [first, second] = [a.subarray(0, half * c), a.subarray(half * c)];
  const start = new Int32Array(p);
  const end = new Int32Array(p).fill(c);
  const v = new Float64Array(c).fill(0.5);
  const bias = new Float64Array(p);
  const dots = new Float64Array(p);
  const y = new Float64Array(c);
  const entries = p * c;
  const fused = medianSeconds(() => fusedRowPass(rows, a, p, c, start, end, v, bias, dots, 0, 1, y));
  const twice = medianSeconds(() => {
    multiplyRows(rows, a, p, c, start, end, v, dots, 0);
    accumulateRowCombination(rows, a, p, c, start, end, dots, 0, 1e-9, y);
  });
  const halves = medianSeconds(() => {
    multiplyRows(rows, first, half, c, start, end, v, dots, 0);
    accumulateRowCombination(rows, second, half, c, start, end, dots, 0, 1e-9, y);
  });
  const rate = (flops: number, seconds: number): string => `${(flops / seconds / 1e9).toFixed(1)} GFLOP/s`;
  console.log(
    `${String(mib).padStart(2)} MiB: fused ${rate(4 * entries, fused)}, products over one block twice ${rate(4 * entries, twice)}, ` +
      `products over two halves ${rate(2 * entries, halves)}`,
  );
}
