/**
 * lambda_min(S) alone for a 2-D Poisson grid in m contiguous strips (native backend): the sparse LU of A
 * and shift-invert Lanczos on S^{-1} = A^{-1} Gb A^{-T} (src/solvers/analysis/kappaS.ts), with CPU
 * seconds, peak RSS and the LU's nonzeros. With lambda_max(S) <= 2 for strips (a column is shared by at
 * most two machines) it bounds kappa(S), hence APC's rate and iteration count, where the whole analysis
 * is too slow to run (Poisson n = 10^6, m = 100).
 *
 *   node --import tsx bench/sparseLambdaMinS.ts <grid side k> <machines m>
 */
import { buildPartition } from '../src/solvers/index.js';
import { runSync } from '../src/solvers/cooperative.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { sparseLuWork, factorNonzeros } from '../src/solvers/sparse/sparseLu.js';
import { lambdaMinSWork } from '../src/solvers/analysis/kappaS.js';
import { machineColumnSlots } from '../src/solvers/sparse/spectrumOfS.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { eigensolverOptionsOf } from '../src/solvers/eigen/lanczos.js';
import { selectBackend } from './backends.js';
const [k, m] = process.argv.slice(2).map(Number);
selectBackend('native');
const A = poisson2d(k);
const partition = buildPartition({ machines: m }, A.rows);
const slots = machineColumnSlots(A, partition.rowsOf);
const c0 = process.cpuUsage();
const lu = runSync(sparseLuWork(A));
console.log(JSON.stringify({ luCpu: process.cpuUsage(c0).user / 1e6, nnzLU: factorNonzeros(lu) }));
const e = runSync(lambdaMinSWork(slots, lu, { tolerance: 1e-8, ...eigensolverOptionsOf(selectedKernels()) }));
console.log(JSON.stringify({ k, m, cpu: process.cpuUsage(c0).user / 1e6, rssMiB: process.resourceUsage().maxRSS / 1024, ...e }));
