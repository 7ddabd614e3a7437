/**
 * The dense row passes' rates on one thread by the bytes they stream, timed as the time model's calibration times them
 * (../src/solvers/analysis/calibration.ts denseRowPassTimer and medianSeconds: an 8 MiB block in cache, a 40 MiB one out
 * of it) and at the sizes between: where this host's cache ends for one thread. Per block size: the fused pass (4 flops
 * an entry) and the product passes over the block (the calibration's two), then the product passes over two halves, one
 * each (a Cimmino machine's A_i x, then Q_i w; the backend's row kernels on plain arrays). Run alone:
 *   node --import tsx bench/denseCacheCurve.ts [native|typescript]
 */
import { denseRowPassTimer, medianSeconds, systemClock } from '../src/solvers/analysis/calibration.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { accumulateRowCombination, multiplyRows } from '../src/solvers/linalg/rowKernels.js';
import { passKernels } from '../src/solvers/machines/placement.js';
import { selectBackend, type BackendName } from './backends.js';

selectBackend((process.argv[2] ?? 'native') as BackendName);
const kernels = selectedKernels();
const rows = passKernels({ backend: kernels.backend, arenaKernels: null }).rows;
const c = 1024;
const repeats = 9;

for (const mib of [4, 8, 12, 16, 20, 24, 32, 40, 64]) {
  const p = (mib * 2 ** 20) / 8 / c;
  const entries = p * c;
  const timer = denseRowPassTimer(kernels, p, c);
  const fused = medianSeconds(systemClock, repeats, timer.pass);
  const twice = medianSeconds(systemClock, repeats, timer.products);
  // Two halves of a block of the same size: A_i x over the first, Q_i w over the second.
  const half = p >> 1;
  const a = new Float64Array(p * c).map((_, k) => ((k * 7919) % 1000) / 1000 - 0.5);
  const [first, second] = [a.subarray(0, half * c), a.subarray(half * c)];
  const start = new Int32Array(half);
  const end = new Int32Array(half).fill(c);
  const v = new Float64Array(c).fill(0.5);
  const dots = new Float64Array(half);
  const y = new Float64Array(c);
  const halves = medianSeconds(systemClock, repeats, () => {
    multiplyRows(rows, first, half, c, start, end, v, dots, 0);
    accumulateRowCombination(rows, second, half, c, start, end, dots, 0, 1e-9, y);
  });
  const rate = (flops: number, seconds: number): string => `${(flops / seconds / 1e9).toFixed(1)} GFLOP/s`;
  console.log(
    `${String(mib).padStart(2)} MiB: fused ${rate(4 * entries, fused)}, products over one block twice ${rate(4 * entries, twice)}, ` +
      `products over two halves ${rate(2 * entries, halves)}`,
  );
}
