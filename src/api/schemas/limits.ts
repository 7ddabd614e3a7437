/**
 * Input limits that the service enforces from its configuration (src/config.ts), stated in the
 * OpenAPI document. The zod schemas do not depend on the configuration (they are module constants,
 * and a value over such a limit is answered 413 by the semantic checks, not 400 by the schema), so
 * a schema names the setting in its metadata (`x-limit`), and plugins/openapi.ts writes the value
 * the service runs with as the JSON Schema keyword (maxItems, maxLength, maximum).
 */
import type { Config } from '../../config.js';

/** The metadata key naming the limits of a schema; it never reaches the document. */
export const LIMIT_KEY = 'x-limit';

/** The limits, each the value a setting (or settings) gives. */
const LIMITS = {
  /** n of a dense matrix (rows given as `data`, a Matrix Market array, a generator). */
  MAX_N: (config: Config) => config.MAX_N,
  /** n of a sparse matrix (COO, Matrix Market coordinate). */
  MAX_N_SPARSE: (config: Config) => config.MAX_N_SPARSE,
  /** Entries of a sparse matrix. */
  MAX_NNZ: (config: Config) => config.MAX_NNZ,
  /** n of any matrix a job takes, dense or sparse: the length of rhs. */
  LARGEST_N: (config: Config) => Math.max(config.MAX_N, config.MAX_N_SPARSE),
  MAX_MACHINES: (config: Config) => config.MAX_MACHINES,
  /** Right-hand sides of a solve job (rhs given as a list of vectors). */
  MAX_RHS: (config: Config) => config.MAX_RHS,
  /** Characters of a string in a JSON body: at most its bytes (a gzip body's decompressed bytes are bounded alike). */
  BODY_LIMIT_BYTES: (config: Config) => config.BODY_LIMIT_BYTES,
} satisfies Record<string, (config: Config) => number>;

export type LimitName = keyof typeof LIMITS;
type Keyword = 'maxItems' | 'maxLength' | 'maximum';

/** Metadata for a schema's `.meta()`: e.g. `.meta(limitedBy('maxItems', 'MAX_N'))`. */
export function limitedBy(keyword: Keyword, limit: LimitName): Record<typeof LIMIT_KEY, Partial<Record<Keyword, LimitName>>> {
  return { [LIMIT_KEY]: { [keyword]: limit } };
}

/** The document (or any part of it) with every named limit written as its value under `config`. */
export function withConfiguredLimits<T>(document: T, config: Config): T {
  return rewrite(document, config) as T;
}

function rewrite(node: unknown, config: Config): unknown {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, config));
  if (node === null || typeof node !== 'object') return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) if (key !== LIMIT_KEY) copy[key] = rewrite(value, config);
  const limits = (node as Record<string, unknown>)[LIMIT_KEY] as Partial<Record<Keyword, LimitName>> | undefined;
  for (const [keyword, limit] of Object.entries(limits ?? {})) {
    // The tighter of the limit and what the schema says already (an integer's maximum is 2^53 - 1).
    const value = LIMITS[limit](config);
    const given = copy[keyword];
    copy[keyword] = typeof given === 'number' ? Math.min(given, value) : value;
  }
  return copy;
}
