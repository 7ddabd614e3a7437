/**
 * The non-JSON forms of a run's trace and solution (GET .../trace and .../solution by `Accept`):
 *  - text/csv: a header row, then one row per trace point (iteration, relativeResidual,
 *    relativeError, consensusDistance) or per entry of x (index, x); numbers as JavaScript prints
 *    them (the shortest text that reads back to the same double, as in the JSON), an empty cell
 *    where the JSON has null (absent, or not finite);
 *  - application/x-matrix-market: x as an n x 1 array (`%%MatrixMarket matrix array real general`),
 *    17 significant digits per value (enough to read back the same double), nan / inf / -inf for
 *    values that are not finite (as NumPy, SciPy and Julia read them);
 *  - application/octet-stream: x as n little-endian float64, nothing else (8 n bytes).
 * A solution (n up to MAX_N_SPARSE) is written as a stream of blocks of rows, never one string.
 */
import { Readable } from 'node:stream';
import type { TraceView } from '../jobs/types.js';

/** Rows per block of a streamed solution. */
const BLOCK_ROWS = 8192;

export const TRACE_MEDIA_TYPES = ['application/json', 'text/csv'] as const;
export const SOLUTION_MEDIA_TYPES = ['application/json', 'text/csv', 'application/x-matrix-market', 'application/octet-stream'] as const;
export type SolutionMediaType = (typeof SOLUTION_MEDIA_TYPES)[number];

const cell = (value: number | undefined): string => (value === undefined || !Number.isFinite(value) ? '' : String(value));

export function traceCsv(trace: TraceView): string {
  const lines = ['iteration,relativeResidual,relativeError,consensusDistance'];
  for (let k = 0; k < trace.iteration.length; k++) {
    lines.push(
      `${trace.iteration[k]},${cell(trace.relativeResidual[k])},${cell(trace.relativeError?.[k])},${cell(trace.consensusDistance?.[k])}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function matrixMarketValue(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return value.toPrecision(17);
}

function* blocks(head: string, x: Float64Array, row: (value: number, index: number) => string): Generator<string> {
  yield head;
  for (let start = 0; start < x.length; start += BLOCK_ROWS) {
    const end = Math.min(x.length, start + BLOCK_ROWS);
    let text = '';
    for (let k = start; k < end; k++) text += `${row(x[k], k)}\n`;
    yield text;
  }
}

export function solutionCsv(x: Float64Array): Readable {
  return Readable.from(blocks('index,x\n', x, (value, index) => `${index},${cell(value)}`));
}

export function solutionMatrixMarket(x: Float64Array, comment: string): Readable {
  const head = `%%MatrixMarket matrix array real general\n% ${comment}\n${x.length} 1\n`;
  return Readable.from(blocks(head, x, matrixMarketValue));
}

/** n little-endian float64 (the store's bytes are little-endian; written explicitly, whatever the host's order). */
export function solutionBytes(x: Float64Array): Buffer {
  const bytes = Buffer.allocUnsafe(8 * x.length);
  for (let k = 0; k < x.length; k++) bytes.writeDoubleLE(x[k], 8 * k);
  return bytes;
}
