/** What the dense and the sparse stage processes (./stages.ts, ./sparseStages.ts) share: raw file reads and best-of timing. */
import { closeSync, openSync, readSync } from 'node:fs';

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
