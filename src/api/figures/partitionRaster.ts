/**
 * A matrix's sparsity pattern downsampled to at most `maxCells` x `maxCells` cells, each cell given
 * the machine that holds most of its nonzeros (-1 when it has none), so that a picture of n = 10^6
 * rows stays small. Rows are placed in the matrix's order or grouped by machine; grouped, the columns
 * are grouped too, each by the machine holding most of its nonzeros, so that a partition whose
 * machines share no columns (S = I, kappa(S) = 1) shows as m diagonal blocks.
 *
 * Work O(nnz + n + m + cells^2), memory O(n + m + cells^2) besides the matrix.
 */
import type { CsrMatrix, DenseMatrix } from '../../solvers/matrix.js';

export type RowOrder = 'matrix' | 'machine';

/** A matrix as the raster reads it: dense (row-major) or CSR. */
export type PatternSource = { storage: 'dense'; A: DenseMatrix } | { storage: 'csr'; A: CsrMatrix };

export interface PartitionRaster {
  n: number;
  m: number;
  order: RowOrder;
  /** Rows (and columns) per cell: ceil(n / maxCells), the same for every cell but the last. */
  perCell: number;
  /** Cells per side: ceil(n / perCell), at most maxCells. */
  cells: number;
  /** Cells across A's columns: ceil(cols / perCell) (fewer than `cells` on a tall matrix, whose columns come first in either order). */
  columnCells: number;
  /** machine[r * cells + c]: the machine holding most nonzeros of cell (r, c); -1 when it has none. */
  machine: Int32Array;
  /** rowMachine[r]: the machine of most of the rows of band r. */
  rowMachine: Int32Array;
  /** order 'machine': where each machine's rows begin in the grouped order (length m + 1); null in the matrix's order. */
  rowStarts: number[] | null;
  /** order 'machine': where the columns of each machine begin (length m + 2: the last group holds columns without nonzeros). */
  columnStarts: number[] | null;
  nnz: number;
}

/** Calls visit(column) for each nonzero of `row`. */
type RowVisitor = (row: number, visit: (column: number) => void) => void;

function rowVisitor(source: PatternSource): RowVisitor {
  if (source.storage === 'csr') {
    const { rowPtr, colIdx, values } = source.A;
    return (row, visit) => {
      for (let p = rowPtr[row]; p < rowPtr[row + 1]; p++) if (values[p] !== 0) visit(colIdx[p]);
    };
  }
  const { data, cols } = source.A;
  return (row, visit) => {
    const start = row * cols;
    for (let j = 0; j < cols; j++) if (data[start + j] !== 0) visit(j);
  };
}

/** Stable counting sort of 0..n-1 by key (keys in 0..groups-1): the order, and where each group starts (length groups + 1). */
function groupBy(keys: Int32Array, groups: number, items?: Int32Array): { order: Int32Array; starts: Int32Array } {
  const starts = new Int32Array(groups + 1);
  let list = items;
  if (!list) {
    list = new Int32Array(keys.length);
    for (let k = 0; k < keys.length; k++) list[k] = k;
  }
  for (const item of list) starts[keys[item] + 1]++;
  for (let g = 0; g < groups; g++) starts[g + 1] += starts[g];
  const next = starts.slice(0, groups);
  const order = new Int32Array(list.length);
  for (const item of list) order[next[keys[item]]++] = item;
  return { order, starts };
}

/**
 * Each column's machine: the one holding most of its nonzeros (the lowest on a tie), m for a column
 * without nonzeros. CSR: the rows' machines laid out by column (as a transpose would), read column by
 * column; in the order of the rows, so that a banded matrix is read in place. Dense (n <= MAX_N):
 * counted column by column.
 */
function columnMachines(source: PatternSource, m: number, assignment: Int32Array): Int32Array {
  const n = source.A.rows;
  const owner = new Int32Array(n).fill(m);
  const count = new Int32Array(m);
  const pick = (machines: ArrayLike<number>, from: number, to: number, column: number): void => {
    let best = 0;
    for (let q = from; q < to; q++) {
      const machine = machines[q];
      const c = ++count[machine];
      if (c > best || (c === best && machine < owner[column])) {
        best = c;
        owner[column] = machine;
      }
    }
    for (let q = from; q < to; q++) count[machines[q]] = 0;
  };
  if (source.storage === 'csr') {
    const { rowPtr, colIdx, values } = source.A;
    const start = new Int32Array(n + 1);
    for (let p = 0; p < colIdx.length; p++) if (values[p] !== 0) start[colIdx[p] + 1]++;
    for (let j = 0; j < n; j++) start[j + 1] += start[j];
    const next = start.slice(0, n);
    const machines = new Int32Array(start[n]);
    for (let i = 0; i < n; i++)
      for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) if (values[p] !== 0) machines[next[colIdx[p]]++] = assignment[i];
    for (let j = 0; j < n; j++) pick(machines, start[j], start[j + 1], j);
    return owner;
  }
  const { data, cols } = source.A;
  const machines = new Int32Array(n);
  for (let j = 0; j < cols; j++) {
    let used = 0;
    for (let i = 0; i < n; i++) if (data[i * cols + j] !== 0) machines[used++] = assignment[i];
    pick(machines, 0, used, j);
  }
  return owner;
}

export function partitionRaster(
  source: PatternSource,
  assignment: Int32Array,
  m: number,
  order: RowOrder,
  maxCells = 256,
): PartitionRaster {
  const n = source.A.rows;
  const perCell = Math.max(1, Math.ceil(n / maxCells));
  const cells = Math.max(1, Math.ceil(n / perCell));
  const rows = rowVisitor(source);
  // Position of each row and column in the picture.
  const rowPosition = new Int32Array(n);
  const columnPosition = new Int32Array(n);
  let rowStarts: number[] | null = null;
  let columnStarts: number[] | null = null;
  if (order === 'machine') {
    const byMachine = groupBy(assignment, m);
    byMachine.order.forEach((row, position) => (rowPosition[row] = position));
    rowStarts = Array.from(byMachine.starts);
    const byColumnMachine = groupBy(columnMachines(source, m, assignment), m + 1);
    byColumnMachine.order.forEach((column, position) => (columnPosition[column] = position));
    columnStarts = Array.from(byColumnMachine.starts);
  } else {
    for (let k = 0; k < n; k++) rowPosition[k] = columnPosition[k] = k;
  }
  const bandOf = (position: number): number => Math.floor(position / perCell);
  const columnCell = new Int32Array(n);
  for (let j = 0; j < n; j++) columnCell[j] = bandOf(columnPosition[j]);
  const rowBand = new Int32Array(n);
  for (let k = 0; k < n; k++) rowBand[k] = bandOf(rowPosition[k]);
  // Rows by band, then by machine: each (band, machine) group is counted over the band's cells in one pass.
  const byMachine = groupBy(assignment, m).order;
  const { order: rowsInBands, starts: bandStarts } = groupBy(rowBand, cells, byMachine);

  const machine = new Int32Array(cells * cells).fill(-1);
  const rowMachine = new Int32Array(cells).fill(-1);
  const best = new Int32Array(cells);
  const count = new Int32Array(cells);
  const touched = new Int32Array(cells);
  let nnz = 0;
  for (let band = 0; band < cells; band++) {
    best.fill(0);
    const base = band * cells;
    let mostRows = 0;
    let p = bandStarts[band];
    const end = bandStarts[band + 1];
    while (p < end) {
      const owner = assignment[rowsInBands[p]];
      let used = 0;
      const first = p;
      for (; p < end && assignment[rowsInBands[p]] === owner; p++)
        rows(rowsInBands[p], (column) => {
          const cell = columnCell[column];
          if (count[cell]++ === 0) touched[used++] = cell;
        });
      if (p - first > mostRows) {
        mostRows = p - first;
        rowMachine[band] = owner;
      }
      for (let t = 0; t < used; t++) {
        const cell = touched[t];
        nnz += count[cell];
        if (count[cell] > best[cell]) {
          best[cell] = count[cell];
          machine[base + cell] = owner;
        }
        count[cell] = 0;
      }
    }
  }
  const columnCells = Math.max(1, Math.ceil(source.A.cols / perCell));
  return { n, m, order, perCell, cells, columnCells, machine, rowMachine, rowStarts, columnStarts, nnz };
}
