// Past 500 lines: one streaming parser, whose reader state and number scanners are one unit.
/**
 * Streaming Matrix Market reader producing CSR directly (the sparse path's counterpart of
 * ../input/matrixMarket.ts, which builds a dense matrix): fed text chunks of any size, split anywhere
 * (inside a line, a number or a "\r\n"), it keeps only the current partial line and the entries read
 * so far, never the whole text and never anything dense. Memory O(entries read): the file's entries as
 * flat arrays (row, column, value: 16 bytes each; line numbers are recovered from a sparse record of
 * the blank and comment lines), grown by doubling as entries arrive (never allocated for the count the
 * size line announces, which may lie), plus the CSR built from them (12 bytes per stored entry) at the
 * end: about 28 bytes per entry at the peak for general storage, 40 for symmetric storage. A line
 * longer than `maxLineChars` is refused as soon as that many characters arrived without a newline.
 *
 *   const reader = new MatrixMarketStreamReader({ maxN, maxNnz });
 *   for await (const chunk of source) reader.push(chunk);
 *   const a = reader.finish();              // or: await readMatrixMarketStream(source, limits)
 *
 * Accepted: what the dense reader accepts in coordinate format, with the same grammar (header
 * `%%MatrixMarket matrix coordinate real|double|integer|pattern general|symmetric|skew-symmetric`, words
 * in any case; comment lines starting with % and blank lines anywhere after the header; fields
 * separated by any whitespace; Fortran D exponents; a leading byte-order mark; "\n" or "\r\n").
 * Symmetric storage is mirrored (a_ji = a_ij), skew-symmetric negated (a_ji = -a_ij, zero diagonal),
 * pattern entries are 1. Explicit zeros in the file are stored, as SciPy's mmread keeps them.
 *
 * Refused, each with the 1-based line where the problem was found:
 * - the array (dense) format: UnsupportedMatrixError, to be sent as the dense input instead;
 * - complex fields and hermitian symmetry: UnsupportedMatrixError; a wide size (rows < cols), or a rectangular
 *   symmetric one: NotSquareError (tall general matrices are least-squares systems);
 * - limits, checked on the size line before anything is allocated: n > maxN, or more than maxNnz
 *   entries announced: ProblemTooLargeError; for symmetric storage the mirrored entries count too,
 *   checked as they are read;
 * - an entry count that does not match the size line (too many: at the first extra entry; too few: at
 *   the end), a malformed or out-of-range index, a value that is not a number: MatrixMarketSyntaxError;
 * - the same (i, j) given twice, including (i, j) and (j, i) in symmetric storage, where the dense
 *   reader adds them up: MatrixMarketSyntaxError naming both lines;
 * - NaN, Infinity or a literal that overflows: NonFiniteValueError naming the 0-based entry and the line.
 */
import { MatrixMarketSyntaxError, NonFiniteValueError, NotSquareError, ProblemTooLargeError, UnsupportedMatrixError } from '../errors.js';
import { matrixEntryName } from '../matrix.js';
import {
  INTEGER_LITERAL,
  NON_FINITE_LITERAL,
  parseBanner,
  parseIndex,
  REAL_LITERAL,
  tokens,
  type MatrixMarketField,
  type MatrixMarketSymmetry,
} from './matrixMarketGrammar.js';
import type { CsrMatrix } from './csr.js';

export interface SparseInputLimits {
  /** Largest accepted n. */
  maxN?: number;
  /** Most stored entries (after mirroring symmetric storage). */
  maxNnz?: number;
  /** Longest line, in characters (default 65536); a longer one is refused as soon as it is seen, not buffered. */
  maxLineChars?: number;
}

export type { MatrixMarketField, MatrixMarketSymmetry };

/** What the header and size line declared. */
export interface MatrixMarketHeader {
  readonly field: MatrixMarketField;
  readonly symmetry: MatrixMarketSymmetry;
  readonly n: number;
  /** Rows (n for a square matrix; more for a tall one). */
  readonly rows: number;
  /** Entries listed in the file (one triangle for symmetric storage). */
  readonly entries: number;
}

/** A block of empty lines, compared at once when skipping a run of them. */
const NEWLINES = '\n'.repeat(256);
/** Int32 indices: at most 2^31 - 1 stored entries whatever the limits. */
const MAX_INT32_NNZ = 2 ** 31 - 1;
/** A longer line is refused rather than buffered: Matrix Market coordinate lines are short. */
const DEFAULT_MAX_LINE_CHARS = 1 << 16;
/**
 * Entries are stored in arrays grown as entries arrive (doubling, up to the announced count), never
 * allocated up front for the count on the size line: a size line that announces millions of entries
 * and is followed by a few costs memory for those few.
 */
const INITIAL_ENTRY_CAPACITY = 1 << 12;

type Stage = 'header' | 'size' | 'entries' | 'finished';

export class MatrixMarketStreamReader {
  private readonly maxN: number;
  private readonly maxNnz: number;
  private readonly maxLineChars: number;
  private stage: Stage = 'header';
  private atStart = true;
  private partial = '';
  /** 1-based number of the last complete line handed to `line`. */
  private lineNumber = 0;
  private declared: MatrixMarketHeader | undefined;
  private field: MatrixMarketField = 'real';
  private symmetry: MatrixMarketSymmetry = 'general';
  private n = 0;
  /** Rows (>= n, the columns). */
  private rows = 0;
  private expected = 0;
  private read = 0;
  /** Entries after mirroring. */
  private stored = 0;
  private rowOf = new Int32Array(0);
  private colOf = new Int32Array(0);
  private valueOf = new Float64Array(0);
  /** Line number of the size line: entry k is on line sizeLine + 1 + k + (blank and comment lines before it). */
  private sizeLine = 0;
  /**
   * Blank and comment lines among the entries, recorded sparsely: after skipMarkEntry[t] entries had
   * been read, skipMarkTotal[t] such lines had been seen (both nondecreasing).
   */
  private skipMarkEntry = new Float64Array(16);
  private skipMarkTotal = new Float64Array(16);
  private skipMarks = 0;

  constructor(limits: SparseInputLimits = {}) {
    this.maxN = limits.maxN ?? Number.POSITIVE_INFINITY;
    this.maxNnz = Math.min(limits.maxNnz ?? MAX_INT32_NNZ, MAX_INT32_NNZ);
    this.maxLineChars = limits.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  }

  /** The header and size line, once read. */
  get header(): MatrixMarketHeader | undefined {
    return this.declared;
  }

  /** Feed the next piece of text. */
  push(chunk: string): void {
    if (this.stage === 'finished') throw new Error('MatrixMarketStreamReader: push after finish');
    let start = 0;
    if (this.atStart) {
      if (chunk.length === 0) return;
      this.atStart = false;
      // A leading byte-order mark would hide the %%MatrixMarket banner.
      if (chunk.charCodeAt(0) === 0xfeff) start = 1;
    }
    let newline = chunk.indexOf('\n', start);
    if (newline === -1) {
      this.partial += start === 0 ? chunk : chunk.slice(start);
      this.checkPartialLength();
      return;
    }
    this.line(this.partial + chunk.slice(start, newline));
    this.partial = '';
    start = newline + 1;
    for (;;) {
      start = this.skipEmptyLines(chunk, start);
      if ((newline = chunk.indexOf('\n', start)) === -1) break;
      this.line(chunk.slice(start, newline));
      start = newline + 1;
    }
    this.partial = chunk.slice(start);
    this.checkPartialLength();
  }

  /** End of the text: checks the entry count and builds the CSR matrix (rows sorted, columns ascending). */
  finish(): CsrMatrix {
    if (this.stage === 'finished') throw new Error('MatrixMarketStreamReader: finish called twice');
    // The text after the last newline is a line too (possibly empty), as for the dense reader's split.
    this.line(this.partial);
    this.partial = '';
    const lineCount = this.lineNumber;
    if (this.stage === 'size') throw new MatrixMarketSyntaxError('the size line is missing after the header and comments.', lineCount + 1);
    if (this.read < this.expected) {
      throw new MatrixMarketSyntaxError(`the size line announces ${this.expected} entries but only ${this.read} were found.`, lineCount);
    }
    this.stage = 'finished';
    const matrix = this.buildCsr();
    this.rowOf = new Int32Array(0);
    this.colOf = new Int32Array(0);
    this.valueOf = new Float64Array(0);
    return matrix;
  }

  private checkPartialLength(): void {
    if (this.partial.length > this.maxLineChars) {
      throw new MatrixMarketSyntaxError(`the line is longer than ${this.maxLineChars} characters.`, this.lineNumber + 1);
    }
  }

  /**
   * Past the run of empty lines at `start` (after the size line's stage began), counted in one pass:
   * a text padded with millions of newlines (a decompression bomb of them) costs a byte each, not a
   * line each. Returns where the run ends.
   */
  private skipEmptyLines(chunk: string, start: number): number {
    if (this.stage !== 'size' && this.stage !== 'entries') return start;
    let end = start;
    while (chunk.startsWith(NEWLINES, end)) end += NEWLINES.length;
    while (chunk.charCodeAt(end) === 10) end++;
    const count = end - start;
    if (count === 0) return start;
    this.lineNumber += count;
    if (this.stage === 'entries') this.recordSkippedLine(count);
    return end;
  }

  private line(text: string): void {
    this.lineNumber++;
    if (text.length > this.maxLineChars)
      throw new MatrixMarketSyntaxError(`the line is longer than ${this.maxLineChars} characters.`, this.lineNumber);
    switch (this.stage) {
      case 'header':
        this.parseHeader(text);
        return;
      case 'size':
        if (!isSkippable(text)) this.parseSize(text);
        return;
      case 'entries': {
        const kind = this.parseEntryFast(text);
        if (kind === FAST_SKIPPED || (kind === FAST_NOT_HANDLED && isSkippable(text))) this.recordSkippedLine();
        else if (kind === FAST_NOT_HANDLED) this.parseEntry(text);
        return;
      }
      case 'finished':
        return;
    }
  }

  private parseHeader(line: string): void {
    const { format, field, symmetry } = parseBanner(line);
    if (format === 'array') {
      throw new UnsupportedMatrixError(
        'The Matrix Market array format stores every entry of a dense matrix; the sparse reader takes the coordinate format only. ' +
          'Send an array file as the dense Matrix Market input instead.',
        { format, line: 1 },
      );
    }
    this.field = field;
    this.symmetry = symmetry;
    this.stage = 'size';
  }

  private parseSize(line: string): void {
    const sizeTokens = tokens(line);
    if (sizeTokens.length !== 3 || !sizeTokens.every((t) => INTEGER_LITERAL.test(t) && !t.startsWith('-'))) {
      throw new MatrixMarketSyntaxError(
        `expected the size line "rows cols entries" (non-negative integers), found ${JSON.stringify(line.trim().slice(0, 80))}.`,
        this.lineNumber,
      );
    }
    const rows = Number(sizeTokens[0]);
    const cols = Number(sizeTokens[1]);
    const entries = Number(sizeTokens[2]);
    if (rows < cols) throw new NotSquareError(rows, cols, 'wide Matrix Market matrix (fewer rows than columns)');
    if (rows !== cols && this.symmetry !== 'general')
      throw new NotSquareError(rows, cols, `rectangular Matrix Market matrix declared ${this.symmetry}`);
    const n = cols;
    if (n === 0)
      throw new MatrixMarketSyntaxError(`the matrix has no columns (${rows} x 0); a system needs at least one unknown.`, this.lineNumber);
    if (rows > this.maxN) {
      throw new ProblemTooLargeError(
        `The Matrix Market matrix has n = ${rows}${rows === n ? '' : ' rows'}; at most n = ${this.maxN} is accepted.`,
        {
          n: rows,
          maxN: this.maxN,
          line: this.lineNumber,
        },
      );
    }
    if (entries > this.maxNnz) {
      throw new ProblemTooLargeError(
        `The Matrix Market size line announces ${entries} entries; at most ${this.maxNnz} stored entries are accepted.`,
        { nnz: entries, maxNnz: this.maxNnz, line: this.lineNumber },
      );
    }
    // Distinct (i, j) pairs are required, so more entries than positions cannot be right (and would be allocated for nothing).
    // (Skew-symmetric files may list zero diagonal entries.)
    const positions = this.symmetry === 'general' ? rows * n : (n * (n + 1)) / 2;
    if (entries > positions) {
      throw new MatrixMarketSyntaxError(
        `the size line announces ${entries} entries, ` +
          `more than the ${positions} distinct positions of a ${rows} x ${n} ${this.symmetry} matrix.`,
        this.lineNumber,
      );
    }
    this.n = n;
    this.rows = rows;
    this.expected = entries;
    this.declared = { field: this.field, symmetry: this.symmetry, n, rows, entries };
    const capacity = Math.min(entries, INITIAL_ENTRY_CAPACITY);
    this.rowOf = new Int32Array(capacity);
    this.colOf = new Int32Array(capacity);
    if (this.field !== 'pattern') this.valueOf = new Float64Array(capacity);
    this.sizeLine = this.lineNumber;
    this.stage = 'entries';
  }

  /**
   * The common case without allocating: an ASCII line "i j value" (or "i j") that is valid, or blank,
   * or a comment. Returns false for anything else (including every error), which parseEntry then
   * reads with the full grammar and reports: this path accepts a subset of what parseEntry accepts,
   * with the same values.
   */
  private parseEntryFast(line: string): FastResult {
    const length = line.length;
    let p = skipBlanks(line, 0);
    if (p === length) return FAST_SKIPPED; // blank
    if (line.charCodeAt(p) === 37) return FAST_SKIPPED; // % comment
    const i = parseSmallIndex(line, p);
    if (i < 1) return FAST_NOT_HANDLED;
    p = indexEnd;
    let next = skipBlanks(line, p);
    if (next === p) return FAST_NOT_HANDLED;
    const j = parseSmallIndex(line, next);
    if (j < 1) return FAST_NOT_HANDLED;
    p = indexEnd;
    const pattern = this.field === 'pattern';
    let value = 1;
    if (!pattern) {
      next = skipBlanks(line, p);
      if (next === p) return FAST_NOT_HANDLED;
      const end = this.field === 'integer' ? integerLiteralEnd(line, next) : realLiteralEnd(line, next);
      if (end < 0) return FAST_NOT_HANDLED;
      value = Number.isNaN(literalValue)
        ? Number(exponentIsD ? line.slice(next, end).replace(/[dD]/, 'e') : line.slice(next, end))
        : literalValue;
      p = end;
    }
    if (skipBlanks(line, p) !== length) return FAST_NOT_HANDLED;
    if (i > this.rows || j > this.n || !Number.isFinite(value) || this.read === this.expected) return FAST_NOT_HANDLED;
    if (this.symmetry === 'skew-symmetric' && i === j && value !== 0) return FAST_NOT_HANDLED;
    const storedHere = this.symmetry !== 'general' && i !== j ? 2 : 1;
    if (this.stored + storedHere > this.maxNnz) return FAST_NOT_HANDLED;
    const k = this.read;
    if (k === this.rowOf.length) this.growEntries();
    this.stored += storedHere;
    this.rowOf[k] = i - 1;
    this.colOf[k] = j - 1;
    if (!pattern) this.valueOf[k] = value;
    this.read++;
    return FAST_ENTRY;
  }

  /** Twice the room for entries (at most the announced count: the entry after it is an error). */
  private growEntries(): void {
    const capacity = Math.min(this.expected, 2 * Math.max(1, this.rowOf.length));
    const grow = <T extends Int32Array | Float64Array>(old: T, make: (length: number) => T): T => {
      const grown = make(capacity);
      grown.set(old);
      return grown;
    };
    this.rowOf = grow(this.rowOf, (length) => new Int32Array(length));
    this.colOf = grow(this.colOf, (length) => new Int32Array(length));
    if (this.field !== 'pattern') this.valueOf = grow(this.valueOf, (length) => new Float64Array(length));
  }

  private recordSkippedLine(count = 1): void {
    const t = this.skipMarks;
    if (t > 0 && this.skipMarkEntry[t - 1] === this.read) {
      this.skipMarkTotal[t - 1] += count;
      return;
    }
    if (t === this.skipMarkEntry.length) {
      const entry = new Float64Array(2 * t);
      const total = new Float64Array(2 * t);
      entry.set(this.skipMarkEntry);
      total.set(this.skipMarkTotal);
      this.skipMarkEntry = entry;
      this.skipMarkTotal = total;
    }
    this.skipMarkEntry[t] = this.read;
    this.skipMarkTotal[t] = (t > 0 ? this.skipMarkTotal[t - 1] : 0) + count;
    this.skipMarks++;
  }

  /** The line of the file's k-th entry (0-based k). */
  private lineOfEntry(k: number): number {
    // The last mark recorded with at most k entries read: its skipped lines all precede entry k.
    let lo = 0;
    let hi = this.skipMarks;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.skipMarkEntry[mid] <= k) lo = mid + 1;
      else hi = mid;
    }
    return this.sizeLine + 1 + k + (lo > 0 ? this.skipMarkTotal[lo - 1] : 0);
  }

  private parseEntry(line: string): void {
    const lineNumber = this.lineNumber;
    if (this.read === this.expected)
      throw new MatrixMarketSyntaxError(`more entries than the ${this.expected} announced on the size line.`, lineNumber);
    const parts = tokens(line);
    const pattern = this.field === 'pattern';
    const tokensPerEntry = pattern ? 2 : 3;
    if (parts.length !== tokensPerEntry) {
      throw new MatrixMarketSyntaxError(
        `expected ${pattern ? '"row col"' : '"row col value"'} (${tokensPerEntry} fields), ` +
          `found ${parts.length} fields: ${JSON.stringify(line.trim().slice(0, 80))}.`,
        lineNumber,
      );
    }
    const i = parseIndex(parts[0], this.rows, 'row', lineNumber);
    const j = parseIndex(parts[1], this.n, 'column', lineNumber);
    const k = this.read;
    if (k === this.rowOf.length) this.growEntries();
    if (!pattern) {
      const token = parts[2];
      const where = (): string => `${matrixEntryName(i, j)} (Matrix Market line ${lineNumber})`;
      if (NON_FINITE_LITERAL.test(token)) throw new NonFiniteValueError(where(), token);
      if (!(this.field === 'integer' ? INTEGER_LITERAL : REAL_LITERAL).test(token)) {
        throw new MatrixMarketSyntaxError(
          `${JSON.stringify(token)} is not ${this.field === 'integer' ? 'an integer' : 'a real number'}.`,
          lineNumber,
        );
      }
      const value = Number(token.replace(/[dD]/, 'e'));
      // Literals too large for a double (1e400) overflow to Infinity.
      if (!Number.isFinite(value)) throw new NonFiniteValueError(where(), token);
      if (this.symmetry === 'skew-symmetric' && i === j && value !== 0) {
        throw new MatrixMarketSyntaxError(`skew-symmetric matrix with nonzero diagonal entry (${i + 1}, ${j + 1}) = ${token}.`, lineNumber);
      }
      this.valueOf[k] = value;
    }
    const storedHere = this.symmetry !== 'general' && i !== j ? 2 : 1;
    if (this.stored + storedHere > this.maxNnz) {
      throw new ProblemTooLargeError(
        `The Matrix Market matrix stores more than ${this.maxNnz} entries once its symmetric storage is mirrored (line ${lineNumber}).`,
        { maxNnz: this.maxNnz, line: lineNumber },
      );
    }
    this.stored += storedHere;
    this.rowOf[k] = i;
    this.colOf[k] = j;
    this.read++;
  }

  /**
   * The CSR matrix: the entries (and their mirrors) scattered to their rows in file order, then each
   * row sorted by column (already sorted for files listed by column or by row, the usual orders), where
   * duplicates become adjacent. Memory: the file's entries (16 bytes each) and the CSR arrays.
   */
  private buildCsr(): CsrMatrix {
    const { n, rows, read, rowOf, colOf, valueOf, symmetry } = this;
    const pattern = this.field === 'pattern';
    const mirrored = symmetry !== 'general';
    const negate = symmetry === 'skew-symmetric' ? -1 : 1;
    const nnz = this.stored;
    const rowPtr = new Int32Array(rows + 1);
    for (let k = 0; k < read; k++) {
      rowPtr[rowOf[k] + 1]++;
      if (mirrored && rowOf[k] !== colOf[k]) rowPtr[colOf[k] + 1]++;
    }
    for (let i = 0; i < rows; i++) rowPtr[i + 1] += rowPtr[i];
    const next = rowPtr.slice(0, rows);
    const colIdx = new Int32Array(nnz);
    const values = new Float64Array(nnz);
    for (let k = 0; k < read; k++) {
      const i = rowOf[k];
      const j = colOf[k];
      const value = pattern ? 1 : valueOf[k];
      let q = next[i]++;
      colIdx[q] = j;
      values[q] = value;
      if (mirrored && i !== j) {
        q = next[j]++;
        colIdx[q] = i;
        values[q] = negate * value;
      }
    }
    for (let i = 0; i < rows; i++) {
      const first = rowPtr[i];
      const end = rowPtr[i + 1];
      sortRow(colIdx, values, first, end);
      for (let q = first + 1; q < end; q++) if (colIdx[q] === colIdx[q - 1]) this.duplicate(i, colIdx[q]);
    }
    return { rows, cols: n, rowPtr, colIdx, values };
  }

  /** Throws the error for position (i, j) (0-based) assigned twice, naming the lines of the first two assignments. */
  private duplicate(i: number, j: number): never {
    const lines: number[] = [];
    for (let k = 0; k < this.read && lines.length < 2; k++) {
      const r = this.rowOf[k];
      const c = this.colOf[k];
      if ((r === i && c === j) || (this.symmetry !== 'general' && r === j && c === i)) lines.push(this.lineOfEntry(k));
    }
    const mirrorNote = this.symmetry !== 'general' ? ' (symmetric storage: (i, j) and (j, i) are the same entry)' : '';
    throw new MatrixMarketSyntaxError(
      `entry (${i + 1}, ${j + 1}) is assigned twice, on lines ${lines[0]} and ${lines[1]}${mirrorNote}.`,
      lines[1],
    );
  }
}

/** Rows longer than this are sorted through keys, shorter ones by insertion (linear on sorted input). */
const INSERTION_SORT_LIMIT = 64;

/** Sorts colIdx[first .. end) ascending, moving values along; a stable sort (equal columns keep their order). */
function sortRow(colIdx: Int32Array, values: Float64Array, first: number, end: number): void {
  let sorted = true;
  for (let q = first + 1; sorted && q < end; q++) sorted = colIdx[q - 1] <= colIdx[q];
  if (sorted) return;
  if (end - first <= INSERTION_SORT_LIMIT) {
    for (let q = first + 1; q < end; q++) {
      const column = colIdx[q];
      const value = values[q];
      let t = q - 1;
      while (t >= first && colIdx[t] > column) {
        colIdx[t + 1] = colIdx[t];
        values[t + 1] = values[t];
        t--;
      }
      colIdx[t + 1] = column;
      values[t + 1] = value;
    }
    return;
  }
  // Key = column * 2^22 + position in the row: exact in a double (column < 2^31, rows up to 2^22
  // entries), unique, so a numeric sort of the keys is a stable sort by column.
  const length = end - first;
  if (length >= 2 ** 22) {
    sortRowByIndex(colIdx, values, first, end);
    return;
  }
  const keys = new Float64Array(length);
  for (let t = 0; t < length; t++) keys[t] = colIdx[first + t] * 4194304 + t;
  keys.sort();
  const oldValues = values.slice(first, end);
  for (let t = 0; t < length; t++) {
    const position = keys[t] % 4194304;
    colIdx[first + t] = (keys[t] - position) / 4194304;
    values[first + t] = oldValues[position];
  }
}

/** Rows of 2^22 entries or more: a stable sort of positions by column. */
function sortRowByIndex(colIdx: Int32Array, values: Float64Array, first: number, end: number): void {
  const columns = colIdx.slice(first, end);
  const oldValues = values.slice(first, end);
  const order = Array.from({ length: end - first }, (_, t) => t).sort((x, y) => columns[x] - columns[y] || x - y);
  for (let t = 0; t < order.length; t++) {
    colIdx[first + t] = columns[order[t]];
    values[first + t] = oldValues[order[t]];
  }
}

/**
 * Reads a whole Matrix Market text from an async source of text or bytes (UTF-8, e.g. a request
 * stream, possibly gunzipped): the reader above, fed chunk by chunk.
 */
export async function readMatrixMarketStream(
  source: AsyncIterable<string | Uint8Array>,
  limits: SparseInputLimits = {},
): Promise<{ matrix: CsrMatrix; header: MatrixMarketHeader }> {
  const reader = new MatrixMarketStreamReader(limits);
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of source) reader.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
  reader.push(decoder.decode());
  const matrix = reader.finish();
  // finish() succeeded, so the size line was read.
  return { matrix, header: reader.header as MatrixMarketHeader };
}

/** What parseEntryFast did with a line. */
type FastResult = 0 | 1 | 2;
const FAST_NOT_HANDLED = 0;
const FAST_ENTRY = 1;
const FAST_SKIPPED = 2;

// The fast path's scanners (ASCII only; anything else is left to the regular expressions).

/** Set by parseSmallIndex: where the index token ended. */
let indexEnd = 0;
/** Set by realLiteralEnd: the literal has a Fortran D exponent. */
let exponentIsD = false;
/**
 * Set by realLiteralEnd / integerLiteralEnd: the literal's value when it is exact to compute here
 * (Clinger's fast path: an integer mantissa below 2^53 times 10^e with |e| <= 22, both exact doubles,
 * so one correctly rounded multiplication or division), else NaN (then Number() converts it).
 */
let literalValue = Number.NaN;
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, e) => 10 ** e);
const MANTISSA_LIMIT = 2 ** 53;

const isBlank = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

function skipBlanks(line: string, p: number): number {
  while (p < line.length && isBlank(line.charCodeAt(p))) p++;
  return p;
}

/** An index "[+]digits" of at most 9 digits ending at a blank or the end (its end in indexEnd), else -1. */
function parseSmallIndex(line: string, p: number): number {
  if (line.charCodeAt(p) === 43) p++;
  const first = p;
  let value = 0;
  while (p < line.length) {
    const c = line.charCodeAt(p);
    if (!isDigit(c)) {
      if (!isBlank(c)) return -1;
      break;
    }
    value = value * 10 + (c - 48);
    p++;
  }
  if (p === first || p - first > 9) return -1;
  indexEnd = p;
  return value;
}

/** End of an INTEGER_LITERAL starting at p and ending at a blank or the line's end, else -1. */
function integerLiteralEnd(line: string, p: number): number {
  exponentIsD = false;
  const c = line.charCodeAt(p);
  const negative = c === 45;
  if (c === 43 || c === 45) p++;
  const first = p;
  let mantissa = 0;
  while (p < line.length && isDigit(line.charCodeAt(p))) mantissa = mantissa * 10 + (line.charCodeAt(p++) - 48);
  literalValue = mantissa < MANTISSA_LIMIT ? (negative ? -mantissa : mantissa) : Number.NaN;
  return p > first && (p === line.length || isBlank(line.charCodeAt(p))) ? p : -1;
}

/** End of a REAL_LITERAL (sign, digits with an optional point, optional [eEdD] exponent) at p, else -1. */
function realLiteralEnd(line: string, p: number): number {
  exponentIsD = false;
  const length = line.length;
  let c = line.charCodeAt(p);
  const negative = c === 45;
  if (c === 43 || c === 45) p++;
  let mantissaDigits = 0;
  let mantissa = 0;
  /** Decimal exponent of the mantissa's last digit. */
  let scale = 0;
  while (p < length && isDigit((c = line.charCodeAt(p)))) {
    mantissa = mantissa * 10 + (c - 48);
    p++;
    mantissaDigits++;
  }
  if (p < length && line.charCodeAt(p) === 46) {
    p++;
    while (p < length && isDigit((c = line.charCodeAt(p)))) {
      mantissa = mantissa * 10 + (c - 48);
      scale--;
      p++;
      mantissaDigits++;
    }
  }
  if (mantissaDigits === 0) return -1;
  if (p < length) {
    c = line.charCodeAt(p);
    if (c === 101 || c === 69 || c === 100 || c === 68) {
      exponentIsD = c === 100 || c === 68;
      p++;
      c = line.charCodeAt(p);
      const negativeExponent = c === 45;
      if (c === 43 || c === 45) p++;
      const first = p;
      let exponent = 0;
      while (p < length && isDigit((c = line.charCodeAt(p)))) {
        if (exponent < 100000) exponent = exponent * 10 + (c - 48);
        p++;
      }
      if (p === first) return -1;
      scale += negativeExponent ? -exponent : exponent;
    }
  }
  if (mantissa < MANTISSA_LIMIT && scale >= -22 && scale <= 22) {
    const magnitude = scale < 0 ? mantissa / POWERS_OF_TEN[-scale] : mantissa * POWERS_OF_TEN[scale];
    literalValue = negative ? -magnitude : magnitude;
  } else {
    literalValue = Number.NaN;
  }
  return p === length || isBlank(line.charCodeAt(p)) ? p : -1;
}

function isSkippable(line: string): boolean {
  const trimmed = line.trimStart();
  return trimmed === '' || trimmed.startsWith('%');
}
