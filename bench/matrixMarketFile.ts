/**
 * A CSR matrix written as Matrix Market coordinate text (1-based, `general`, every stored entry), in
 * pieces so that n = 10^6 never becomes one string; String(v) is the shortest text that reads back
 * as the same double, so an upload of the file is the matrix bit for bit.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { CsrMatrix } from '../src/solvers/index.js';

export function writeMatrixMarket(A: CsrMatrix, file: string): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, `%%MatrixMarket matrix coordinate real general\n${A.rows} ${A.cols} ${A.rowPtr[A.rows]}\n`);
    let lines: string[] = [];
    for (let i = 0; i < A.rows; i++) {
      for (let q = A.rowPtr[i]; q < A.rowPtr[i + 1]; q++) lines.push(`${i + 1} ${A.colIdx[q] + 1} ${String(A.values[q])}`);
      if (lines.length >= 65_536) {
        writeSync(fd, `${lines.join('\n')}\n`);
        lines = [];
      }
    }
    if (lines.length > 0) writeSync(fd, `${lines.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
}
