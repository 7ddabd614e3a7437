/** What the bench's processes share: raw file reads (a sparse problem's arrays among them) and best-of timing. */
import { closeSync, openSync, readSync } from 'node:fs';
import type { CsrMatrix } from '../src/solvers/index.js';
import type { SparseProblemFile } from './sparseProblems.js';

/** Reads a raw little-endian file straight into a typed array (no second copy, so RSS stays honest). */
export function readRaw<T extends Float64Array | Int32Array>(file: string, out: T): T {
  const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  const fd = openSync(file, 'r');
  try {
    let done = 0;
    while (done < bytes.length) {
      const got = readSync(fd, bytes, done, bytes.length - done, done);
      if (got === 0) throw new Error(`${file}: ${done} of ${bytes.length} bytes`);
      done += got;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The matrix A (CSR) and the machines' assignment of its rows that a sparse problem file names (./sparseProblems.ts). */
export function readSparseProblemArrays(spec: SparseProblemFile): { A: CsrMatrix; assignment: Int32Array } {
  const { n, nnz } = spec;
  const A: CsrMatrix = {
    rows: n,
    cols: n,
    rowPtr: readRaw(spec.rowPtrFile, new Int32Array(n + 1)),
    colIdx: readRaw(spec.colIdxFile, new Int32Array(nnz)),
    values: readRaw(spec.valuesFile, new Float64Array(nnz)),
  };
  return { A, assignment: readRaw(spec.assignmentFile, new Int32Array(n)) };
}

/** Best wall time (seconds) of `repeats` calls, and the last result. */
export function timed<T>(fn: () => T, repeats = 1): [number, T] {
  let best = Infinity;
  let result!: T;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    result = fn();
    best = Math.min(best, (performance.now() - t0) / 1e3);
  }
  return [best, result];
}
