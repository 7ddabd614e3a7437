import { TYPESCRIPT_DENSE_KERNELS as K } from '../src/solvers/linalg/typescriptDenseKernels.js';
import { gemmLoop } from '../src/solvers/linalg/typescriptDenseKernels.js';
function rnd(n: number) { const a = new Float64Array(n); for (let i = 0; i < n; i++) a[i] = Math.random() - 0.5; return a; }
for (const [m, n, k, t] of [[1000, 1000, 1000, false], [2000, 2000, 64, false], [2000, 2000, 32, true], [80, 200, 2000, false]] as [number, number, number, boolean][]) {
  const a = rnd(m * k), b = rnd(k * n), c = rnd(m * n), c2 = c.slice();
  const lda = t ? m : k;
  K.gemm(t, m, n, k, 1, a, lda, b, n, 1, c, n);
  let t0 = performance.now();
  const reps = 3;
  for (let r = 0; r < reps; r++) K.gemm(t, m, n, k, 1, a, lda, b, n, 0, c, n);
  const tw = (performance.now() - t0) / reps;
  t0 = performance.now();
  gemmLoop(t, m, n, k, 1, a, lda, b, n, 0, c2, n);
  const tl = performance.now() - t0;
  let err = 0; for (let i = 0; i < c.length; i++) err = Math.max(err, Math.abs(c[i] - c2[i]));
  console.log(`${m}x${n}x${k} t=${t}: wasm ${tw.toFixed(1)} ms ${(2 * m * n * k / tw / 1e6).toFixed(2)} GF/s, loop ${tl.toFixed(1)} ms ${(2 * m * n * k / tl / 1e6).toFixed(2)} GF/s, maxdiff ${err.toExponential(2)}`);
}
