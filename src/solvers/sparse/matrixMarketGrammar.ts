/**
 * The Matrix Market grammar both readers share (NIST format, https://math.nist.gov/MatrixMarket/formats.html):
 * the banner line, the literals of an index and of a value, and how a line splits into tokens.
 * The dense reader (../input/matrixMarket.ts) and the streaming CSR reader (./matrixMarketStream.ts)
 * accept the same text, so they read it through these.
 */
import { MatrixMarketSyntaxError, UnsupportedMatrixError } from '../errors.js';

export type MatrixMarketFormat = 'coordinate' | 'array';
export type MatrixMarketField = 'real' | 'integer' | 'pattern';
export type MatrixMarketSymmetry = 'general' | 'symmetric' | 'skew-symmetric';

export interface MatrixMarketBanner {
  format: MatrixMarketFormat;
  field: MatrixMarketField;
  symmetry: MatrixMarketSymmetry;
}

/** A decimal real, optionally with an exponent; Fortran's D exponent is accepted too. */
export const REAL_LITERAL = /^[+-]?(\d+\.?\d*|\.\d+)([eEdD][+-]?\d+)?$/;
export const INTEGER_LITERAL = /^[+-]?\d+$/;
export const NON_FINITE_LITERAL = /^[+-]?(nan|inf|infinity)$/i;
const WHITESPACE = /\s+/;

export function tokens(line: string): string[] {
  const trimmed = line.trim();
  return trimmed === '' ? [] : trimmed.split(WHITESPACE);
}

/** `%%MatrixMarket matrix <format> <field> <symmetry>` (line 1); 'double' reads as 'real'. */
export function parseBanner(line: string): MatrixMarketBanner {
  const parts = tokens(line).map((t) => t.toLowerCase());
  if (parts[0] !== '%%matrixmarket') {
    throw new MatrixMarketSyntaxError(
      'the first line must be the header "%%MatrixMarket matrix <format> <field> <symmetry>", ' +
        `found ${JSON.stringify(line.trim().slice(0, 80))}.`,
      1,
    );
  }
  if (parts.length !== 5) {
    throw new MatrixMarketSyntaxError(
      `the header needs 4 words after %%MatrixMarket (matrix <format> <field> <symmetry>), found ${parts.length - 1}.`,
      1,
    );
  }
  const [, object, format, field, symmetry] = parts;
  if (object !== 'matrix')
    throw new UnsupportedMatrixError(`Matrix Market object "${object}" is not supported; only "matrix" is.`, { object });
  if (format !== 'coordinate' && format !== 'array') {
    throw new MatrixMarketSyntaxError(`unknown format "${format}"; expected coordinate or array.`, 1);
  }
  if (field === 'complex') {
    throw new UnsupportedMatrixError(
      'The Matrix Market field is complex; only real, integer and pattern matrices are supported (the solvers work over the reals).',
      { field, line: 1 },
    );
  }
  if (field !== 'real' && field !== 'double' && field !== 'integer' && field !== 'pattern') {
    throw new MatrixMarketSyntaxError(`unknown field "${field}"; expected real, integer, pattern (or complex, which is not supported).`, 1);
  }
  if (symmetry === 'hermitian') {
    throw new UnsupportedMatrixError(
      'The Matrix Market symmetry is hermitian, which implies complex entries; only real, integer and pattern matrices are supported.',
      { symmetry, line: 1 },
    );
  }
  if (symmetry !== 'general' && symmetry !== 'symmetric' && symmetry !== 'skew-symmetric') {
    throw new MatrixMarketSyntaxError(`unknown symmetry "${symmetry}"; expected general, symmetric or skew-symmetric.`, 1);
  }
  if (field === 'pattern' && format === 'array')
    throw new MatrixMarketSyntaxError('the pattern field is only valid with the coordinate format.', 1);
  if (field === 'pattern' && symmetry === 'skew-symmetric')
    throw new MatrixMarketSyntaxError('the pattern field cannot be skew-symmetric.', 1);
  return { format, field: field === 'double' ? 'real' : field, symmetry };
}

/** A 1-based index token in 1..n, returned 0-based. */
export function parseIndex(token: string, n: number, what: 'row' | 'column', lineNumber: number): number {
  if (!INTEGER_LITERAL.test(token))
    throw new MatrixMarketSyntaxError(`the ${what} index ${JSON.stringify(token)} is not an integer.`, lineNumber);
  const index = Number(token);
  if (index < 1 || index > n) throw new MatrixMarketSyntaxError(`the ${what} index ${index} is outside 1..${n}.`, lineNumber);
  return index - 1;
}
