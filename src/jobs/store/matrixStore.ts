/**
 * Stored matrices (POST /v1/matrices) in Redis: a document (a hash: id, n, nnz, symmetry, field,
 * createdAt, bytes) and the matrix as binary CSR, one string per array (rowPtr Int32, colIdx Int32,
 * values Float64, little-endian as ./binary.ts), all under one prefix and with a TTL.
 *
 * A 2e7-entry matrix is ~240 MB of CSR: it is written in pieces of PIECE_BYTES (SET, then APPEND),
 * straight from the typed arrays' memory, so no Redis command carries more than a piece and Node
 * holds no second copy; it is read back with GETRANGE into typed arrays allocated once. The pieces go
 * under temporary keys (with a TTL of their own), and one MULTI renames them to the matrix's keys and
 * writes its document: a matrix exists completely or not at all, and an upload interrupted before
 * that MULTI leaves nothing readable (its temporary keys are deleted, or expire).
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { MatrixMarketField, MatrixMarketSymmetry } from '../../solvers/sparse/matrixMarketStream.js';
import type { CsrMatrix } from '../../solvers/sparse/csr.js';
import type { StoredMatrix } from '../types.js';
import { bytesOf } from './binary.js';
import { execOrThrow } from './redisBatch.js';

/** Largest piece of a binary value in one Redis command. */
export const PIECE_BYTES = 4 * 1024 * 1024;
/** TTL of the temporary keys of a write in progress (a crashed writer leaves them for at most this long). */
const PENDING_TTL_SECONDS = 3600;

const CSR_PARTS = ['rowPtr', 'colIdx', 'values'] as const;
type CsrPart = (typeof CSR_PARTS)[number];

/** The keys of one binary CSR matrix: `${base}:rowPtr`, `${base}:colIdx`, `${base}:values`. */
export function csrKeys(base: string): Record<CsrPart, string> {
  return { rowPtr: `${base}:rowPtr`, colIdx: `${base}:colIdx`, values: `${base}:values` };
}

function csrArrays(csr: CsrMatrix): Record<CsrPart, Buffer> {
  return { rowPtr: bytesOf(csr.rowPtr), colIdx: bytesOf(csr.colIdx), values: bytesOf(csr.values) };
}

/**
 * Write `csr` under temporary keys, piece by piece, and return them; the caller renames them in
 * its MULTI (queueCsrCommit). On failure the temporary keys are deleted (best effort; they expire anyway).
 */
export async function writePendingCsr(redis: Redis, pendingBase: string, csr: CsrMatrix): Promise<Record<CsrPart, string>> {
  const keys = csrKeys(pendingBase);
  const arrays = csrArrays(csr);
  try {
    for (const part of CSR_PARTS) {
      const bytes = arrays[part];
      // SET first (an empty array is an empty string), with a TTL, so that an abandoned write expires.
      await redis.set(keys[part], bytes.subarray(0, PIECE_BYTES), 'EX', PENDING_TTL_SECONDS);
      for (let offset = PIECE_BYTES; offset < bytes.length; offset += PIECE_BYTES) {
        await redis.append(keys[part], bytes.subarray(offset, offset + PIECE_BYTES));
      }
    }
  } catch (error) {
    await redis.del(...Object.values(keys)).catch(() => undefined);
    throw error;
  }
  return keys;
}

/** Queue the renames of pending CSR keys to their final names, with the final TTL. */
export function queueCsrCommit(multi: ChainableCommander, pending: Record<CsrPart, string>, finalBase: string, ttlSeconds: number): void {
  const keys = csrKeys(finalBase);
  for (const part of CSR_PARTS) {
    multi.rename(pending[part], keys[part]);
    multi.expire(keys[part], ttlSeconds);
  }
}

/**
 * Read the CSR matrix stored under `base` (n rows, `cols` columns, nnz entries, as its document says):
 * each array is allocated once and filled piece by piece. Null when a part is missing or shorter
 * than announced (expired or deleted, possibly while being read).
 */
export async function readCsr(redis: Redis, base: string, n: number, nnz: number, cols = n): Promise<CsrMatrix | null> {
  const keys = csrKeys(base);
  const rowPtr = new Int32Array(n + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  const targets: Record<CsrPart, Uint8Array> = {
    rowPtr: new Uint8Array(rowPtr.buffer),
    colIdx: new Uint8Array(colIdx.buffer),
    values: new Uint8Array(values.buffer),
  };
  for (const part of CSR_PARTS) {
    const target = targets[part];
    if ((await redis.strlen(keys[part])) !== target.length) return null;
    for (let offset = 0; offset < target.length; offset += PIECE_BYTES) {
      const end = Math.min(offset + PIECE_BYTES, target.length);
      const piece = await redis.getrangeBuffer(keys[part], offset, end - 1);
      if (piece.length !== end - offset) return null;
      target.set(piece, offset);
    }
  }
  if (rowPtr[0] !== 0 || rowPtr[n] !== nnz) return null;
  return { rows: n, cols, rowPtr, colIdx, values };
}

/** The matrix resource's keys, next to the job store's under `${KEY_PREFIX}:store:${QUEUE_NAME}`. */
export class MatrixKeys {
  private readonly base: string;
  /** Sorted set of every stored matrix's id (score 0: ordered by id, and ULIDs sort by creation time). */
  readonly index: string;

  constructor(keyPrefix: string, queueName: string) {
    this.base = `${keyPrefix}:store:${queueName}`;
    this.index = `${this.base}:matrices`;
  }

  /** The ids of one owner's (API key's) matrices, as `index` (GET /v1/matrices for a tenant). */
  ownerIndex(owner: string): string {
    return `${this.base}:owner:${owner}:matrices`;
  }

  /** The document (a hash). */
  doc(id: string): string {
    return `${this.base}:matrix:${id}`;
  }

  /** Prefix of the binary CSR keys (csrKeys). */
  csr(id: string): string {
    return `${this.doc(id)}:csr`;
  }

  /** Prefix of the temporary keys of an upload being written. */
  pending(token: string): string {
    return `${this.base}:pending:${token}`;
  }

  /** Every key of a stored matrix, document first. */
  allOf(id: string): string[] {
    return [this.doc(id), ...Object.values(csrKeys(this.csr(id)))];
  }
}

export class MatrixStore {
  readonly keys: MatrixKeys;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    queueName: string,
  ) {
    this.keys = new MatrixKeys(keyPrefix, queueName);
  }

  /** The API key that owns the matrix ('' with AUTH_MODE=none), or null when there is no such matrix. */
  async owner(id: string): Promise<string | null> {
    const [stored, owner] = await this.redis.hmget(this.keys.doc(id), 'id', 'owner');
    return stored === null ? null : (owner ?? '');
  }

  /** Store a parsed matrix: pieces under temporary keys, then one MULTI makes it exist. `owner`: the API key's id. */
  async create(
    matrix: Omit<StoredMatrix, 'bytes'>,
    csr: CsrMatrix,
    ttlSeconds: number,
    owner: string | null = null,
  ): Promise<StoredMatrix> {
    const { keys } = this;
    const bytes = csr.rowPtr.byteLength + csr.colIdx.byteLength + csr.values.byteLength;
    const stored: StoredMatrix = { ...matrix, bytes };
    const pending = await writePendingCsr(this.redis, keys.pending(matrix.id), csr);
    const multi = this.redis.multi();
    queueCsrCommit(multi, pending, keys.csr(matrix.id), ttlSeconds);
    multi.hset(keys.doc(matrix.id), { ...documentFields(stored), ...(owner ? { owner } : {}) });
    multi.expire(keys.doc(matrix.id), ttlSeconds);
    // Indexes outlive their entries (an expired matrix is dropped when a listing meets it).
    multi.zadd(keys.index, 0, matrix.id);
    if (owner) multi.zadd(keys.ownerIndex(owner), 0, matrix.id);
    try {
      await execOrThrow(multi);
    } catch (error) {
      await this.redis.del(...Object.values(pending), ...keys.allOf(matrix.id)).catch(() => undefined);
      throw error;
    }
    return stored;
  }

  /** The document, or null when there is no such matrix. */
  async get(id: string): Promise<StoredMatrix | null> {
    const fields = await this.redis.hgetall(this.keys.doc(id));
    return fields.id === undefined ? null : matrixFromFields(fields);
  }

  /**
   * The document, its TTL renewed to at least `ttlSeconds` on every key (a job that names the
   * matrix keeps it alive); null when there is no such matrix.
   */
  async use(id: string, ttlSeconds: number): Promise<StoredMatrix | null> {
    const multi = this.redis.multi();
    multi.hgetall(this.keys.doc(id));
    for (const key of this.keys.allOf(id)) multi.expire(key, ttlSeconds, 'GT');
    const [fields] = await execOrThrow(multi);
    const document = fields as Record<string, string>;
    return document.id === undefined ? null : matrixFromFields(document);
  }

  /** The matrix's CSR arrays; null when it is gone (expired or deleted, possibly while being read). */
  async csr(id: string): Promise<{ matrix: StoredMatrix; csr: CsrMatrix } | null> {
    const matrix = await this.get(id);
    if (!matrix) return null;
    const csr = await readCsr(this.redis, this.keys.csr(id), matrix.n, matrix.nnz, matrix.cols);
    return csr ? { matrix, csr } : null;
  }

  /** True when a matrix was deleted, false when there was none. `owner`: its key's index entry goes too. */
  async delete(id: string, owner: string | null = null): Promise<boolean> {
    const multi = this.redis.multi();
    multi.del(...this.keys.allOf(id));
    multi.zrem(this.keys.index, id);
    if (owner) multi.zrem(this.keys.ownerIndex(owner), id);
    const [deleted] = await execOrThrow(multi);
    return Number(deleted) > 0;
  }

  /** Up to `count` ids, newest first, strictly older than `beforeId` when given; only `owner`'s when given. */
  async indexPage(beforeId: string | null, count: number, owner?: string): Promise<string[]> {
    const index = owner === undefined ? this.keys.index : this.keys.ownerIndex(owner);
    return this.redis.zrevrangebylex(index, beforeId === null ? '+' : `(${beforeId}`, '-', 'LIMIT', 0, count);
  }

  /** The documents of `ids`, null for those gone. */
  async documents(ids: string[]): Promise<(StoredMatrix | null)[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.doc(id));
    const replies = await execOrThrow(pipeline);
    return replies.map((fields) => {
      const document = fields as Record<string, string>;
      return document.id === undefined ? null : matrixFromFields(document);
    });
  }

  /** Forget index entries whose matrices are gone (expired). */
  async dropFromIndex(ids: string[], owner?: string): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.zrem(owner === undefined ? this.keys.index : this.keys.ownerIndex(owner), ...ids);
  }
}

function documentFields(matrix: StoredMatrix): Record<string, string> {
  return {
    id: matrix.id,
    n: String(matrix.n),
    ...(matrix.cols === undefined ? {} : { cols: String(matrix.cols) }),
    nnz: String(matrix.nnz),
    symmetry: matrix.symmetry,
    field: matrix.field,
    createdAt: matrix.createdAt,
    bytes: String(matrix.bytes),
  };
}

function matrixFromFields(fields: Record<string, string>): StoredMatrix {
  return {
    id: fields.id,
    n: Number(fields.n),
    ...(fields.cols === undefined ? {} : { cols: Number(fields.cols) }),
    nnz: Number(fields.nnz),
    symmetry: fields.symmetry as MatrixMarketSymmetry,
    field: fields.field as MatrixMarketField,
    createdAt: fields.createdAt,
    bytes: Number(fields.bytes),
  };
}
