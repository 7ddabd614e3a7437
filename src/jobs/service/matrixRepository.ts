/**
 * Stored matrices as the API reads and changes them (POST/GET/DELETE /v1/matrices, and jobs that
 * name one): the Matrix Market text is parsed as it arrives by the streaming CSR reader (limits
 * MAX_N_SPARSE and MAX_NNZ checked on the size line, before anything is allocated), then written by
 * ../store/matrixStore.ts. Every call fails at once with StoreUnavailableError when Redis is unreachable.
 */
import type { Config } from '../../config.js';
import { nnzOf } from '../../solvers/sparse/csr.js';
import { readMatrixMarketStream } from '../../solvers/sparse/matrixMarketStream.js';
import { MatrixNotFoundError } from '../errors.js';
import { JOB_ID_PATTERN, newJobId } from '../jobId.js';
import type { MatrixStore } from '../store/matrixStore.js';
import { storeCall } from '../store/redisConnection.js';
import type { MatrixService, StoredMatrix } from '../types.js';

export class MatrixRepository implements MatrixService {
  constructor(
    private readonly store: MatrixStore,
    private readonly config: Pick<Config, 'MAX_N_SPARSE' | 'MAX_NNZ' | 'MATRIX_TTL_SECONDS'>,
  ) {}

  async upload(text: AsyncIterable<Uint8Array | string>): Promise<StoredMatrix> {
    const { matrix: csr, header } = await readMatrixMarketStream(text, { maxN: this.config.MAX_N_SPARSE, maxNnz: this.config.MAX_NNZ });
    const now = Date.now();
    return storeCall(() =>
      this.store.create(
        {
          id: newJobId(now),
          n: csr.rows,
          nnz: nnzOf(csr),
          symmetry: header.symmetry,
          field: header.field,
          createdAt: new Date(now).toISOString(),
        },
        csr,
        this.config.MATRIX_TTL_SECONDS,
      ),
    );
  }

  async get(id: string): Promise<StoredMatrix> {
    return storeCall(async () => {
      const matrix = JOB_ID_PATTERN.test(id) ? await this.store.get(id) : null;
      if (!matrix) throw new MatrixNotFoundError(id);
      return matrix;
    });
  }

  async use(id: string): Promise<StoredMatrix> {
    return storeCall(async () => {
      const matrix = JOB_ID_PATTERN.test(id) ? await this.store.use(id, this.config.MATRIX_TTL_SECONDS) : null;
      if (!matrix) throw new MatrixNotFoundError(id);
      return matrix;
    });
  }

  async remove(id: string): Promise<void> {
    return storeCall(async () => {
      if (!JOB_ID_PATTERN.test(id) || !(await this.store.delete(id))) throw new MatrixNotFoundError(id);
    });
  }
}
