/**
 * The numerical backends the benchmark measures, through the library entry point: 'typescript'
 * always (its iterations on its WebAssembly SIMD row kernels, and once more on its plain loops, see
 * stages.ts), 'native' when the OpenBLAS addon loads (nativeBlas() !== null). Solver threads are
 * 'auto' on both (they split large iterations over worker threads on either backend; OpenBLAS
 * threads its own calls, i.e. the factorizations of the native backend).
 */
import {
  activeBackend,
  nativeBlas,
  nativeUnavailableReason,
  setSolverThreads,
  solverThreads,
  useBackend,
  type BackendName,
} from '../src/solvers/index.js';

export type { BackendName };

export interface BackendSupport {
  /** Backends this tree can run: 'typescript' always, 'native' when the addon is built. */
  available: BackendName[];
  /** Why a backend is missing (for results.md), empty when all are there. */
  notes: string[];
}

export function backendSupport(): BackendSupport {
  if (nativeBlas() !== null) return { available: ['typescript', 'native'], notes: [] };
  return {
    available: ['typescript'],
    notes: [`The native backend is not available (${nativeUnavailableReason()}): only the TypeScript backend was measured.`],
  };
}

/** Select `name` (and threads 'auto') before any numerical work; returns what is in effect. */
export function selectBackend(name: BackendName): { backend: string; threads: string; blas: string | null } {
  useBackend(name);
  setSolverThreads('auto');
  const blas = name === 'native' ? nativeBlas() : null;
  return {
    backend: activeBackend(),
    threads: `auto (${solverThreads()})`,
    blas: blas ? `${blas.config()}; ${blas.threads()} threads` : null,
  };
}
