/**
 * A job's checkpoint (what a running attempt has done so far, ../checkpoints.ts) as one binary
 * string and back. Layout: 'LSCP', the header's length (uint32), the header (JSON), then every
 * typed array's bytes, each at a multiple of 8: the vectors (iterates, the machines' estimates,
 * solutions, traces) go as their float64 / int32 bytes, never as JSON numbers; in the header an
 * array is a reference { "$array": "float64", "at": bytes after the header, "length" }, and a number
 * JSON cannot hold exactly (NaN, +-Infinity, -0) is { "$number": "NaN" }, so that everything comes
 * back to the bit. Bytes are the platform's
 * (little-endian on every supported CPU), as ./binary.ts. Decoding checks the shape (zod).
 */
import { z } from 'zod';
import { ALGORITHM_IDS } from '../../solvers/algorithms/registry.js';
import type { Analysis } from '../../solvers/analysis/types.js';
import type { BlockState } from '../../solvers/algorithms/blockMethods.js';
import type { BlockRunSnapshot, RunSnapshot, TraceRecorderState } from '../../solvers/runner/snapshot.js';
import type { RunResult, Trace } from '../../solvers/runner/types.js';
import type { RunSummary } from '../types.js';

/** Bumped whenever what a checkpoint holds changes meaning; a checkpoint of another format is not used. */
export const CHECKPOINT_FORMAT = 1;

const MAGIC = Buffer.from('LSCP', 'latin1');
const PREFIX_BYTES = 8;

// z.custom, not z.instanceof: the solver's arrays are typed over any ArrayBufferLike.
const float64 = z.custom<Float64Array>((value) => value instanceof Float64Array);
const int32 = z.custom<Int32Array>((value) => value instanceof Int32Array);
const count = z.number().int().min(0);

const traceSchema = z.object({
  iteration: int32,
  relativeResidual: float64,
  relativeError: float64.nullable(),
  consensusDistance: float64.nullable(),
  totalIterations: count,
  cap: count,
  downsampled: z.boolean(),
}) satisfies z.ZodType<Trace>;

const traceRecorderStateSchema = z.object({
  cap: count,
  iteration: int32,
  relativeResidual: float64,
  relativeError: float64.nullable(),
  consensusDistance: float64.nullable(),
  committed: count,
  stride: z.number().int().min(1),
  pendingIteration: z.number().int().min(-1),
  lastIteration: z.number().int().min(-1),
}) satisfies z.ZodType<TraceRecorderState>;

const runSnapshotSchema = z.object({
  algorithm: z.enum(ALGORITHM_IDS),
  parameters: z.record(z.string(), z.number()),
  iteration: count,
  elapsedMs: z.number().min(0),
  measures: z.object({
    residual: z.number(),
    error: z.number().nullable(),
    consensus: z.number().nullable(),
    initialResidual: z.number(),
    initialError: z.number().nullable(),
    consensusScale: z.number(),
    bestResidual: z.number(),
    referenceResidual: z.number(),
    referenceIteration: count,
    peakResidual: z.number(),
    peakIteration: count,
  }),
  trace: traceRecorderStateSchema,
  method: z.array(float64).readonly(),
}) satisfies z.ZodType<RunSnapshot>;

const isRecord = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);

const blockStateSchema = z.object({
  active: z.array(count).readonly(),
  residual2: float64,
  consensus: float64,
  blocks: z.array(float64).readonly(),
}) satisfies z.ZodType<BlockState>;

/** A run over several right-hand sides under way: the block's state, each column's snapshot or result. */
const blockRunSnapshotSchema = z.object({
  algorithm: z.enum(ALGORITHM_IDS),
  parameters: z.record(z.string(), z.number()),
  iteration: count,
  block: blockStateSchema,
  columns: z
    .array(
      z.union([
        z.object({ running: runSnapshotSchema }),
        // Written by this service only, as the runs' summaries; its solution and trace checked.
        z.object({
          ended: z.custom<RunResult>(
            (value) => isRecord(value) && (value as RunResult).solution instanceof Float64Array && isRecord((value as RunResult).trace),
          ),
        }),
      ]),
    )
    .readonly(),
}) satisfies z.ZodType<BlockRunSnapshot>;

/** A solution and its trace. */
const outputSchema = z.object({ solution: float64, trace: traceSchema });

export const jobCheckpointSchema = z.object({
  format: z.literal(CHECKPOINT_FORMAT),
  /**
   * A solve job's spectral data, computed before its runs (the analysis follows them): a retried
   * attempt resumes its runs without computing it again. Absent in checkpoints of older versions.
   */
  spectral: z.object({ m: count, lambdaMinS: z.number(), lambdaMaxS: z.number(), mu: z.number(), L: z.number() }).nullable().optional(),
  /** The analysis once done: a retried attempt does not compute it again. Written by this service only (as the document's result). */
  analysis: z.custom<Analysis>(isRecord).nullable(),
  /** The runs that ended, in the job's order, with what finish() stores of them (several right-hand sides: columns 1..k-1 in otherColumns). */
  runs: z.array(
    outputSchema.extend({
      algorithm: z.enum(ALGORITHM_IDS),
      summary: z.custom<RunSummary>(isRecord),
      otherColumns: z.array(outputSchema).optional(),
    }),
  ),
  /** The run under way when the checkpoint was taken: of one right-hand side, or of several (a block run). */
  current: z.union([runSnapshotSchema, blockRunSnapshotSchema]).nullable(),
});

export type JobCheckpoint = Omit<z.infer<typeof jobCheckpointSchema>, 'format'>;

/** The stored bytes are not a checkpoint this version reads (truncated, another format or shape). */
export class CheckpointUnreadableError extends Error {
  constructor(reason: string) {
    super(`The stored checkpoint cannot be read: ${reason}.`);
    this.name = 'CheckpointUnreadableError';
  }
}

const padding = (bytes: number): number => (8 - (bytes % 8)) % 8;

export function encodeCheckpoint(checkpoint: JobCheckpoint): Buffer {
  const arrays: (Float64Array | Int32Array)[] = [];
  // Where each array starts after the header (its own bytes, then padding to a multiple of 8).
  let dataBytes = 0;
  const header = JSON.stringify({ format: CHECKPOINT_FORMAT, ...checkpoint }, (_key, value: unknown) => {
    if (value instanceof Float64Array || value instanceof Int32Array) {
      const ref = { $array: value instanceof Float64Array ? 'float64' : 'int32', at: dataBytes, length: value.length };
      arrays.push(value);
      dataBytes += value.byteLength + padding(value.byteLength);
      return ref;
    }
    if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) {
      return { $number: Object.is(value, -0) ? '-0' : String(value) };
    }
    return value;
  });
  const headerBytes = Buffer.from(header, 'utf8');
  const dataStart = PREFIX_BYTES + headerBytes.length + padding(headerBytes.length);
  const out = Buffer.alloc(dataStart + dataBytes);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(headerBytes.length, 4);
  headerBytes.copy(out, PREFIX_BYTES);
  let at = dataStart;
  for (const array of arrays) {
    out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at);
    at += array.byteLength + padding(array.byteLength);
  }
  return out;
}

/** Throws CheckpointUnreadableError for anything encodeCheckpoint of this format did not write. */
export function decodeCheckpoint(bytes: Buffer): JobCheckpoint {
  if (bytes.length < PREFIX_BYTES || !bytes.subarray(0, 4).equals(MAGIC)) throw new CheckpointUnreadableError('no checkpoint header');
  const headerLength = bytes.readUInt32LE(4);
  if (PREFIX_BYTES + headerLength > bytes.length) throw new CheckpointUnreadableError('truncated header');
  const dataStart = PREFIX_BYTES + headerLength + padding(headerLength);
  const revive = (_key: string, value: unknown): unknown => {
    if (!isRecord(value)) return value;
    const record = value as Record<string, unknown>;
    if (typeof record.$number === 'string') return Number(record.$number);
    if (record.$array !== 'float64' && record.$array !== 'int32') return value;
    const float = record.$array === 'float64';
    const [at, length] = [Number(record.at), Number(record.length)];
    const start = dataStart + at;
    const end = start + length * (float ? 8 : 4);
    if (!Number.isSafeInteger(at) || !Number.isSafeInteger(length) || at < 0 || length < 0 || end > bytes.length) {
      throw new CheckpointUnreadableError('an array lies outside the stored bytes');
    }
    const array = float ? new Float64Array(length) : new Int32Array(length);
    // A copy: a Buffer from ioredis need not be aligned for a typed array view.
    new Uint8Array(array.buffer).set(bytes.subarray(start, end));
    return array;
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + headerLength), revive);
  } catch (error) {
    if (error instanceof CheckpointUnreadableError) throw error;
    throw new CheckpointUnreadableError(`its header is not JSON (${(error as Error).message})`);
  }
  const checked = jobCheckpointSchema.safeParse(parsed);
  if (!checked.success) {
    const [issue] = checked.error.issues;
    throw new CheckpointUnreadableError(`unexpected shape (${issue?.message ?? ''} at ${issue?.path.join('.') ?? ''})`);
  }
  const { format: _format, ...checkpoint } = checked.data;
  return checkpoint;
}
