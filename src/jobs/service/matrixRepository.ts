/**
 * Stored matrices as the API reads and changes them (POST/GET/DELETE /v1/matrices, and jobs that
 * name one): the Matrix Market text is parsed as it arrives by the streaming CSR reader (limits
 * MAX_N_SPARSE and MAX_NNZ checked on the size line, before anything is allocated), then written by
 * ../store/matrixStore.ts. Every call fails at once with StoreUnavailableError when Redis is unreachable.
 */
import type { Config } from '../../config.js';
import { nnzOf } from '../../solvers/sparse/csr.js';
import { readMatrixMarketStream } from '../../solvers/sparse/matrixMarketStream.js';
import { MatrixNotFoundError, QuotaTooLargeError } from '../errors.js';
import { JOB_ID_PATTERN, newJobId } from '../jobId.js';
import type { Tenant } from '../apiKeys/apiKey.js';
import type { TenantUsage } from '../apiKeys/tenantUsage.js';
import type { MatrixStore } from '../store/matrixStore.js';
import { storeCall } from '../store/redisConnection.js';
import type { MatrixListQuery, MatrixPage, MatrixService, StoredMatrix } from '../types.js';
import { pageOfIndex } from './listCursor.js';

export class MatrixRepository implements MatrixService {
  constructor(
    private readonly store: MatrixStore,
    private readonly config: Pick<Config, 'MAX_N_SPARSE' | 'MAX_NNZ' | 'MATRIX_TTL_SECONDS'>,
    /** What tenants store (their matrices' bytes count against MAX_STORED_BYTES_PER_KEY). */
    private readonly usage: TenantUsage | null = null,
  ) {}

  /**
   * Throws MatrixNotFoundError unless matrix `id` exists and, when `owner` is given, belongs to it
   * (another key's matrix is not found). Returns its owner ('' for none).
   */
  private async assertVisible(id: string, owner?: string): Promise<string> {
    const stored = JOB_ID_PATTERN.test(id) ? await this.store.owner(id) : null;
    if (stored === null || (owner !== undefined && stored !== owner)) throw new MatrixNotFoundError(id);
    return stored;
  }

  /**
   * For a tenant (an API key), the matrix is its own and its bytes count against the key's limit:
   * an upload is refused before it is read when the key is already at its limit, and after it is
   * parsed when its CSR does not fit (QuotaTooLargeError 413 if it never could, else QuotaExceededError 429).
   */
  async upload(text: AsyncIterable<Uint8Array | string>, tenant: Tenant | null = null): Promise<StoredMatrix> {
    const usage = tenant ? this.usage : null;
    if (tenant && usage) await storeCall(() => usage.assertRoomToStore(tenant));
    const { matrix: csr, header } = await readMatrixMarketStream(text, { maxN: this.config.MAX_N_SPARSE, maxNnz: this.config.MAX_NNZ });
    const now = Date.now();
    const id = newJobId(now);
    const ttl = this.config.MATRIX_TTL_SECONDS;
    if (tenant && usage) {
      const bytes = csr.rowPtr.byteLength + csr.colIdx.byteLength + csr.values.byteLength;
      if (bytes > tenant.quotas.storedBytes) {
        throw new QuotaTooLargeError(
          `The matrix takes ${bytes} bytes as CSR, more than this API key's limit of ${tenant.quotas.storedBytes} bytes.`,
        );
      }
      await storeCall(() => usage.admitStored(tenant, this.store.keys.doc(id), bytes, ttl));
    }
    const document = {
      id,
      n: csr.rows,
      ...(csr.cols === csr.rows ? {} : { cols: csr.cols }),
      nnz: nnzOf(csr),
      symmetry: header.symmetry,
      field: header.field,
      createdAt: new Date(now).toISOString(),
    };
    return storeCall(() => this.store.create(document, csr, ttl, tenant?.owner ?? null)).catch(async (error: unknown) => {
      if (tenant) await usage?.release(tenant.owner, this.store.keys.doc(id)).catch(() => undefined);
      throw error;
    });
  }

  /** `owner`: only that key's matrix is found (absent: any). */
  async get(id: string, owner?: string): Promise<StoredMatrix> {
    return storeCall(async () => {
      if (owner !== undefined) await this.assertVisible(id, owner);
      const matrix = JOB_ID_PATTERN.test(id) ? await this.store.get(id) : null;
      if (!matrix) throw new MatrixNotFoundError(id);
      return matrix;
    });
  }

  async use(id: string, owner?: string): Promise<StoredMatrix> {
    return storeCall(async () => {
      if (owner !== undefined) await this.assertVisible(id, owner);
      const matrix = JOB_ID_PATTERN.test(id) ? await this.store.use(id, this.config.MATRIX_TTL_SECONDS) : null;
      if (!matrix) throw new MatrixNotFoundError(id);
      return matrix;
    });
  }

  /** Newest first; `owner`: that key's matrices only (from its own index), absent: every matrix. */
  async list(query: MatrixListQuery & { owner?: string }): Promise<MatrixPage> {
    const { owner, symmetry, field, minN, maxN } = query;
    return storeCall(() =>
      pageOfIndex<StoredMatrix>(
        {
          indexPage: (before, count) => this.store.indexPage(before, count, owner),
          items: (ids) => this.store.documents(ids),
          drop: (ids) => this.store.dropFromIndex(ids, owner),
        },
        {
          limit: query.limit,
          cursor: query.cursor,
          filtered: [symmetry, field, minN, maxN].some((f) => f !== undefined),
          list: 'GET /v1/matrices',
        },
        (matrix) =>
          (symmetry === undefined || matrix.symmetry === symmetry) &&
          (field === undefined || matrix.field === field) &&
          (minN === undefined || matrix.n >= minN) &&
          (maxN === undefined || matrix.n <= maxN),
      ),
    );
  }

  async remove(id: string, owner?: string): Promise<void> {
    return storeCall(async () => {
      const stored = await this.assertVisible(id, owner);
      if (!(await this.store.delete(id, stored === '' ? null : stored))) throw new MatrixNotFoundError(id);
      if (stored !== '') await this.usage?.release(stored, this.store.keys.doc(id));
    });
  }
}
