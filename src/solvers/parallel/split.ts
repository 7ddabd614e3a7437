/**
 * Cutting the gradient methods' rows into chunks (the projection methods' chunks are the machines:
 * a machine's x_i and basis go together). Chunks depend on the system only, never on the thread
 * count, so the reduction over chunks (in chunk order) gives the same iterates on any number of
 * threads. Work is measured in matrix entries read per iteration (nonzero extents).
 */

/** A range [from, to) of one machine's rows. */
export interface RowRange {
  readonly machine: number;
  readonly from: number;
  readonly to: number;
}

/** Chunks per run the gradient methods aim at: enough for two to four threads to balance dynamically. */
export const TARGET_ROW_CHUNKS = 16;
/**
 * No chunk is cut smaller than this many entries: each chunk costs a reduction of its support and
 * a kernel call, and the native row kernels take only blocks of >= 1024 entries (rowKernels.ts).
 * Threaded runs read >= 250 000 entries (threads.ts), so their chunks are larger anyway; this
 * keeps single-threaded small runs in few, native-sized chunks (n = 250, m = 10, native D-HBM:
 * 100 -> ~25 microseconds per iteration).
 */
export const MIN_CHUNK_WORK = 16_384;

/**
 * Each machine's rows (rowWork[i][k]: entries of row k of machine i) cut into consecutive ranges
 * of about max(total / targetChunks, MIN_CHUNK_WORK) entries; a chunk never spans machines, and
 * every machine with rows gives at least one chunk (targetChunks = 1: one chunk per machine).
 */
export function rowChunks(rowWork: readonly ArrayLike<number>[], targetChunks = TARGET_ROW_CHUNKS): RowRange[] {
  let total = 0;
  for (const w of rowWork) for (let k = 0; k < w.length; k++) total += w[k];
  const target = targetChunks <= 1 ? Infinity : Math.max(total / targetChunks, MIN_CHUNK_WORK);
  const chunks: RowRange[] = [];
  rowWork.forEach((w, machine) => {
    let machineWork = 0;
    for (let k = 0; k < w.length; k++) machineWork += w[k];
    // Equal shares of the machine, as many as the target asks for.
    const pieces = Math.max(1, Math.min(w.length, Math.round(machineWork / target)));
    let from = 0;
    let done = 0;
    for (let piece = 1; piece <= pieces && from < w.length; piece++) {
      let to = from;
      const goal = (machineWork * piece) / pieces;
      while (to < w.length && (piece === pieces || done + w[to] <= goal || to === from)) done += w[to++];
      chunks.push({ machine, from, to });
      from = to;
    }
  });
  return chunks;
}
