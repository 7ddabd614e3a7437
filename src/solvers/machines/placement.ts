/**
 * Where a solver run's passes execute, decided once per run, here and nowhere else:
 *  - the backend (TypeScript or native) is the one selected when the run starts (useBackend);
 *    every thread of the run takes it;
 *  - dense data on the TypeScript backend goes into a WebAssembly arena, where the row kernels run
 *    in WebAssembly SIMD (unless they are off or unavailable: ../linalg/wasmRowKernels.ts); sparse
 *    data has no vector kernels and stays in plain (shared) memory;
 *  - each thread then takes its kernels from that decision (`passKernels`): the native addon's row
 *    kernels and dtrsv, or the WebAssembly kernels on the run's arena (or plain TypeScript loops)
 *    and the TypeScript triangular solve.
 * The machines' passes (./machine.ts) call these kernels and never ask which backend is active.
 */
import { activeBackend, nativeBlas, nativeUnavailableReason, type BackendName } from '../linalg/backend.js';
import { solveRTransposed } from '../linalg/householderQr.js';
import type { RowKernels } from '../linalg/wasmRowKernels.js';
import { wasmKernelsEnabled } from '../linalg/wasmRowKernels.js';
import type { ThreadContext } from '../parallel/protocol.js';

export interface Placement {
  readonly backend: BackendName;
  /** Whether the run's data goes into a WebAssembly arena. */
  readonly arena: boolean;
}

/** The placement of a run over machines of this storage kind, from the current backend selection. */
export function choosePlacement(storage: 'dense' | 'csr'): Placement {
  const backend = activeBackend();
  return { backend, arena: storage === 'dense' && backend === 'typescript' && wasmKernelsEnabled() };
}

/** The kernels one thread's passes run on. */
export interface PassKernels {
  /** Vector kernels for dense rows (see ../linalg/rowKernels.ts), or null: the TypeScript loops do every row. */
  readonly rows: RowKernels | null;
  /** out[0..p) = R^{-T} rhs[0..p) (forward substitution; R p x p upper triangular, row-major). */
  solveRTransposed(r: Float64Array, p: number, rhs: Float64Array, out: Float64Array): void;
}

const typescriptSolve = (r: Float64Array, p: number, rhs: Float64Array, out: Float64Array): void => {
  solveRTransposed(r, p, rhs, out, 0);
};

/** The kernels of a thread of a run (the run's backend, and this thread's kernels on its arena if any). */
export function passKernels(context: ThreadContext): PassKernels {
  if (context.backend === 'native') {
    const blas = nativeBlas();
    if (blas === null) throw new Error(`A solver run on the native backend cannot load it: ${nativeUnavailableReason()}`);
    return {
      rows: blas,
      solveRTransposed(r, p, rhs, out) {
        out.set(rhs.subarray(0, p));
        blas.dtrsv(true, true, false, p, r, 0, p, out, 0);
      },
    };
  }
  return { rows: context.arenaKernels, solveRTransposed: typescriptSolve };
}
