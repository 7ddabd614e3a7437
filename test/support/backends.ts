/**
 * Runs a suite once per numerical backend (src/solvers/linalg/backend.ts). The native run is skipped,
 * with the reason in its title, when the addon is not built; it is never silently replaced by the
 * TypeScript run.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { activeBackend, nativeBlas, nativeUnavailableReason, useBackend, type BackendName } from '../../src/solvers/linalg/backend.js';
import { wasmKernelsUnavailableReason } from '../../src/solvers/linalg/wasmRowKernels.js';

const BACKENDS: readonly BackendName[] = ['typescript', 'native'];

/**
 * What a solver run's iterations can run on: each backend, and the TypeScript backend once more
 * with its WebAssembly kernels off (its plain loops: runtimes without WebAssembly SIMD, and rows no
 * vector kernel takes). The arena, hence the WebAssembly kernels, exists only in solver runs
 * (src/solvers/parallel/engine.ts): the analysis runs the same code either way.
 */
export const KERNEL_SETS: readonly { readonly backend: BackendName; readonly wasm: boolean; readonly label: string }[] = [
  { backend: 'typescript', wasm: true, label: 'typescript backend' },
  { backend: 'typescript', wasm: false, label: 'typescript backend, plain loops' },
  { backend: 'native', wasm: false, label: 'native backend' },
];

/** Why a kernel set cannot run here ('' when it can). */
export function kernelSetSkipReason(set: { readonly backend: BackendName; readonly wasm: boolean }): string {
  if (set.backend === 'native' && !nativeAvailable()) return nativeSkipReason();
  if (set.wasm && wasmKernelsUnavailableReason() !== '') return `WebAssembly kernels SKIPPED: ${wasmKernelsUnavailableReason()}`;
  return '';
}

const nativeAvailable = (): boolean => nativeBlas() !== null;

let warned = false;
/** Title suffix of a skipped native suite; also says so once per test file on stderr (the default reporter shows only counts). */
export function nativeSkipReason(): string {
  const reason = `native backend SKIPPED: ${nativeUnavailableReason()}`;
  if (!warned) {
    warned = true;
    console.warn(`[tests] ${reason}`);
  }
  return reason;
}

/** `describe(title)` per backend, with that backend selected while its tests run. */
export function describeEachBackend(title: string, body: (backend: BackendName) => void): void {
  for (const backend of BACKENDS) {
    const skipped = backend === 'native' && !nativeAvailable();
    const label = skipped ? `${title} [${nativeSkipReason()}]` : `${title} [${backend} backend]`;
    describe.skipIf(skipped)(label, () => {
      let previous: BackendName;
      beforeAll(() => {
        previous = activeBackend();
        useBackend(backend);
      });
      afterAll(() => {
        useBackend(previous);
      });
      body(backend);
    });
  }
}

/** fn() with `backend` selected, restoring the previous selection afterwards. */
export function withBackend<T>(backend: BackendName, fn: () => T): T {
  const previous = activeBackend();
  useBackend(backend);
  try {
    return fn();
  } finally {
    useBackend(previous);
  }
}
