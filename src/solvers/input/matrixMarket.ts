/**
 * Matrix Market reader (NIST format, https://math.nist.gov/MatrixMarket/formats.html) producing a
 * dense square matrix.
 *
 * Supported: `%%MatrixMarket matrix coordinate|array real|double|integer|pattern general|symmetric|skew-symmetric`.
 * - coordinate: `i j [value]` lines, 1-based; pattern entries are 1.0; duplicated coordinates are
 *   summed (as SciPy's mmread does).
 * - array: one value per entry, column-major; symmetric stores the lower triangle (diagonal included),
 *   skew-symmetric the strictly lower triangle.
 * - symmetric storage is expanded by mirroring off-diagonal entries, skew-symmetric by A[j][i] = -A[i][j]
 *   (a nonzero diagonal entry is an error).
 * Rejected: complex fields and hermitian symmetry (UnsupportedMatrixError), non-square sizes
 * (NotSquareError), NaN/Infinity values (NonFiniteValueError, 0-based "matrix entry (i, j)"), and
 * anything malformed (MatrixMarketSyntaxError with the 1-based line number).
 */
import { MatrixMarketSyntaxError, NonFiniteValueError, NotSquareError } from '../errors.js';
import type { DenseMatrix } from '../matrix.js';
import { checkAllFinite, checkDenseSize, matrixEntryName } from './entries.js';
import {
  INTEGER_LITERAL,
  NON_FINITE_LITERAL,
  parseBanner,
  parseIndex,
  REAL_LITERAL,
  tokens,
  type MatrixMarketBanner,
  type MatrixMarketField,
} from '../sparse/matrixMarketGrammar.js';
import type { InputLimits } from './types.js';

type Header = MatrixMarketBanner;
type Field = MatrixMarketField;

export function parseMatrixMarket(text: string, limits?: InputLimits): DenseMatrix {
  if (typeof text !== 'string') throw new MatrixMarketSyntaxError('the data must be a string holding the file text.');
  // A leading byte-order mark would hide the %%MatrixMarket banner.
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split(/\r?\n/);
  const header = parseBanner(lines[0] ?? '');

  // Size line: the first line after the header that is neither a comment nor blank.
  let lineIndex = 1;
  while (lineIndex < lines.length && isSkippable(lines[lineIndex])) lineIndex++;
  if (lineIndex >= lines.length)
    throw new MatrixMarketSyntaxError('the size line is missing after the header and comments.', lineIndex + 1);
  const sizeLine = lineIndex + 1;
  const sizeTokens = tokens(lines[lineIndex]);
  const expectedTokens = header.format === 'coordinate' ? 3 : 2;
  if (sizeTokens.length !== expectedTokens || !sizeTokens.every((t) => INTEGER_LITERAL.test(t) && !t.startsWith('-'))) {
    throw new MatrixMarketSyntaxError(
      `expected the size line "${header.format === 'coordinate' ? 'rows cols entries' : 'rows cols'}" (non-negative integers), found ${JSON.stringify(lines[lineIndex].trim())}.`,
      sizeLine,
    );
  }
  const rows = Number(sizeTokens[0]);
  const cols = Number(sizeTokens[1]);
  if (rows < cols) throw new NotSquareError(rows, cols, 'wide Matrix Market matrix (fewer rows than columns)');
  if (rows !== cols && header.symmetry !== 'general')
    throw new NotSquareError(rows, cols, `rectangular Matrix Market matrix declared ${header.symmetry}`);
  const n = cols;
  if (n === 0) throw new MatrixMarketSyntaxError(`the matrix has no columns (${rows} x 0); a system needs at least one unknown.`, sizeLine);
  checkDenseSize(rows, limits, 'Matrix Market matrix');

  const data = new Float64Array(rows * n);
  if (header.format === 'coordinate') {
    readCoordinate(lines, lineIndex + 1, rows, n, Number(sizeTokens[2]), header, data);
    checkAllFinite({ rows, cols: n, data }); // summed duplicates can overflow
  } else {
    readArray(lines, lineIndex + 1, rows, n, header, data);
  }
  return { rows, cols: n, data };
}

function readCoordinate(
  lines: string[],
  firstLine: number,
  rows: number,
  n: number,
  entryCount: number,
  header: Header,
  data: Float64Array,
): void {
  const { field, symmetry } = header;
  const tokensPerEntry = field === 'pattern' ? 2 : 3;
  let read = 0;
  for (let li = firstLine; li < lines.length; li++) {
    const line = lines[li];
    if (isSkippable(line)) continue;
    const lineNumber = li + 1;
    if (read === entryCount)
      throw new MatrixMarketSyntaxError(`more entries than the ${entryCount} announced on the size line.`, lineNumber);
    const parts = tokens(line);
    if (parts.length !== tokensPerEntry) {
      throw new MatrixMarketSyntaxError(
        `expected ${field === 'pattern' ? '"row col"' : '"row col value"'} (${tokensPerEntry} fields), found ${parts.length} fields: ${JSON.stringify(line.trim().slice(0, 80))}.`,
        lineNumber,
      );
    }
    const i = parseIndex(parts[0], rows, 'row', lineNumber);
    const j = parseIndex(parts[1], n, 'column', lineNumber);
    const value = field === 'pattern' ? 1 : parseValue(parts[2], field, i, j, lineNumber);
    if (symmetry === 'general' || i === j) {
      if (symmetry === 'skew-symmetric' && value !== 0) {
        throw new MatrixMarketSyntaxError(
          `skew-symmetric matrix with nonzero diagonal entry (${i + 1}, ${j + 1}) = ${parts[2]}.`,
          lineNumber,
        );
      }
      data[i * n + j] += value;
    } else {
      data[i * n + j] += value;
      data[j * n + i] += symmetry === 'symmetric' ? value : -value;
    }
    read++;
  }
  if (read < entryCount) {
    throw new MatrixMarketSyntaxError(`the size line announces ${entryCount} entries but only ${read} were found.`, lines.length);
  }
}

/** Column-major values; symmetric storage holds rows j..n-1 of column j, skew-symmetric rows j+1..n-1 (both square: rows = n). */
function readArray(lines: string[], firstLine: number, rows: number, n: number, header: Header, data: Float64Array): void {
  const { field, symmetry } = header;
  const skipDiagonal = symmetry === 'skew-symmetric' ? 1 : 0;
  const expected = symmetry === 'general' ? rows * n : symmetry === 'symmetric' ? (n * (n + 1)) / 2 : (n * (n - 1)) / 2;
  // Position of the next value: column j, row i.
  let i = symmetry === 'general' ? 0 : skipDiagonal;
  let j = 0;
  let read = 0;
  for (let li = firstLine; li < lines.length; li++) {
    const line = lines[li];
    if (isSkippable(line)) continue;
    const lineNumber = li + 1;
    for (const token of tokens(line)) {
      if (read === expected)
        throw new MatrixMarketSyntaxError(`more values than the ${expected} a ${rows} x ${n} ${symmetry} array holds.`, lineNumber);
      const value = parseValue(token, field, i, j, lineNumber);
      data[i * n + j] = value;
      if (i !== j && symmetry !== 'general') data[j * n + i] = symmetry === 'symmetric' ? value : -value;
      read++;
      i++;
      if (i === rows) {
        j++;
        i = symmetry === 'general' ? 0 : j + skipDiagonal;
      }
    }
  }
  if (read < expected) {
    throw new MatrixMarketSyntaxError(
      `a ${rows} x ${n} ${symmetry} array holds ${expected} values but only ${read} were found.`,
      lines.length,
    );
  }
}

/** `i`, `j` are 0-based, for the NonFiniteValueError message. */
function parseValue(token: string, field: Field, i: number, j: number, lineNumber: number): number {
  if (NON_FINITE_LITERAL.test(token)) throw new NonFiniteValueError(matrixEntryName(i, j), token);
  const literal = field === 'integer' ? INTEGER_LITERAL : REAL_LITERAL;
  if (!literal.test(token)) {
    throw new MatrixMarketSyntaxError(
      `${JSON.stringify(token)} is not ${field === 'integer' ? 'an integer' : 'a real number'}.`,
      lineNumber,
    );
  }
  const value = Number(token.replace(/[dD]/, 'e'));
  // Literals too large for a double (1e400) overflow to Infinity.
  if (!Number.isFinite(value)) throw new NonFiniteValueError(matrixEntryName(i, j), token);
  return value;
}

function isSkippable(line: string): boolean {
  const trimmed = line.trimStart();
  return trimmed === '' || trimmed.startsWith('%');
}
