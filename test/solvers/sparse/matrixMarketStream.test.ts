import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MatrixMarketSyntaxError,
  NonFiniteValueError,
  NotSquareError,
  ProblemTooLargeError,
  SolverError,
  UnsupportedMatrixError,
} from '../../../src/solvers/errors.js';
import { parseMatrixMarket } from '../../../src/solvers/input/matrixMarket.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { checkCsr, csrToDense, nnzOf, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import {
  MatrixMarketStreamReader,
  readMatrixMarketStream,
  type SparseInputLimits,
} from '../../../src/solvers/sparse/matrixMarketStream.js';
import { thrown } from '../../support/thrown.js';
import { SPARSE_REFERENCE, readMatrixText } from './support.js';

/** Feeds `text` in chunks of random lengths between 1 and maxChunk (1: one character at a time). */
function readInChunks(text: string, seed: number, maxChunk: number, limits?: SparseInputLimits): CsrMatrix {
  const rng = new SeededRandom(seed);
  const reader = new MatrixMarketStreamReader(limits);
  for (let at = 0; at < text.length;) {
    const length = 1 + rng.nextInt(maxChunk);
    reader.push(text.slice(at, at + length));
    at += length;
  }
  return reader.finish();
}

/** The error reading `text` throws, for each of several chunkings (all must throw the same). */
function errorInChunks(text: string, limits?: SparseInputLimits): Error {
  const errors = [1, 3, 17, 1 << 20].map((maxChunk, seed) => thrown(() => readInChunks(text, seed, maxChunk, limits)));
  for (const error of errors) {
    expect(error.constructor, text).toBe(errors[0].constructor);
    expect(error.message, text).toBe(errors[0].message);
  }
  return errors[0];
}

/** The first index where two arrays differ, -1 when equal (toEqual is slow on millions of entries). */
function firstDifference(x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (x.length !== y.length) return Math.min(x.length, y.length);
  for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return k;
  return -1;
}

const HEADER = '%%MatrixMarket matrix coordinate real general\n';

describe('streaming Matrix Market reader on the real matrices', () => {
  for (const reference of SPARSE_REFERENCE.matrixMarket) {
    const { file } = reference;
    if (reference.complex === true) {
      it(`${file}: complex, refused (SciPy reads it as complex)`, () => {
        const error = errorInChunks(readMatrixText(file));
        expect(error).toBeInstanceOf(UnsupportedMatrixError);
        expect(error.message).toMatch(/complex/);
        expect((error as UnsupportedMatrixError).details).toMatchObject({ field: 'complex', line: 1 });
      });
      continue;
    }
    if (reference.rows < reference.cols) {
      it(`${file}: ${reference.rows} x ${reference.cols}, refused as wide`, () => {
        const error = errorInChunks(readMatrixText(file));
        expect(error).toBeInstanceOf(NotSquareError);
        expect(error.message).toMatch(`${reference.rows} x ${reference.cols}`);
      });
      continue;
    }
    it(`${file}: the dense reader's matrix and SciPy's nnz and checksums, in random chunks`, () => {
      const text = readMatrixText(file);
      const whole = readInChunks(text, 0, text.length);
      checkCsr(whole);
      expect(nnzOf(whole)).toBe(reference.nnz);
      // Exactly the dense reader's matrix (same values, same zeros).
      const dense = parseMatrixMarket(text);
      expect(firstDifference(csrToDense(whole).data, dense.data)).toBe(-1);
      let stored = 0;
      for (const v of dense.data) if (v !== 0) stored++;
      expect(stored).toBeLessThanOrEqual(reference.nnz); // explicit zeros in the file are stored, as SciPy does
      // SciPy's checksums (summation order differs: relative 1e-12).
      let sum = 0;
      let sumAbs = 0;
      let rowWeighted = 0;
      let colWeighted = 0;
      for (let i = 0; i < whole.rows; i++) {
        for (let q = whole.rowPtr[i]; q < whole.rowPtr[i + 1]; q++) {
          const v = whole.values[q];
          sum += v;
          sumAbs += Math.abs(v);
          rowWeighted += v * (i + 1);
          colWeighted += v * (whole.colIdx[q] + 1);
        }
      }
      const close = (ours: number, theirs: number | undefined) =>
        expect(Math.abs(ours - theirs!)).toBeLessThanOrEqual(1e-12 * reference.sumAbs!);
      close(sum, reference.sum);
      close(sumAbs, reference.sumAbs);
      expect(Math.abs(rowWeighted - reference.sumRowWeighted!)).toBeLessThanOrEqual(1e-12 * reference.sumAbs! * reference.rows);
      expect(Math.abs(colWeighted - reference.sumColWeighted!)).toBeLessThanOrEqual(1e-12 * reference.sumAbs! * reference.rows);
      // Chunked anywhere (down to one character at a time for the smaller files): the same arrays.
      for (const [seed, maxChunk] of [
        [1, text.length < 60000 ? 1 : 7],
        [2, 64],
        [3, 4096],
      ]) {
        const chunked = readInChunks(text, seed, maxChunk);
        expect(firstDifference(chunked.rowPtr, whole.rowPtr)).toBe(-1);
        expect(firstDifference(chunked.colIdx, whole.colIdx)).toBe(-1);
        expect(firstDifference(chunked.values, whole.values)).toBe(-1);
      }
    });
  }

  it('readMatrixMarketStream: bytes split inside UTF-8 characters, a byte-order mark, the header it read', async () => {
    const text = '\ufeff%%MatrixMarket matrix coordinate real symmetric\n% énergie π ✓\n3 3 3\n1 1 2\n3 1 -1.5\n% ünïcode\n3 3 4\n';
    const bytes = Buffer.from(text, 'utf8');
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 2) chunks.push(bytes.subarray(at, at + 2)); // splits the multi-byte characters
    async function* source() {
      for (const chunk of chunks) yield await Promise.resolve(chunk);
    }
    const { matrix, header } = await readMatrixMarketStream(source(), { maxN: 10, maxNnz: 10 });
    expect(header).toEqual({ field: 'real', symmetry: 'symmetric', n: 3, rows: 3, entries: 3 });
    expect(Array.from(csrToDense(matrix).data)).toEqual([2, 0, -1.5, 0, 0, 0, -1.5, 0, 4]);
    await expect(
      readMatrixMarketStream(
        (async function* () {
          yield await Promise.resolve('%%MatrixMarket matrix coordinate real general\n2 2 1\n');
          throw new Error('connection reset');
        })(),
      ),
    ).rejects.toThrow('connection reset');
  });
});

describe('streaming Matrix Market reader: accepted forms', () => {
  it('mirrors symmetric storage, negates skew-symmetric, reads pattern and integer fields, keeps explicit zeros', () => {
    const symmetric = readInChunks('%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n3 2 3\n3 3 0\n', 1, 2);
    expect(Array.from(symmetric.rowPtr)).toEqual([0, 2, 4, 6]);
    expect(Array.from(symmetric.colIdx)).toEqual([0, 1, 0, 2, 1, 2]);
    expect(Array.from(symmetric.values)).toEqual([1, 2, 2, 3, 3, 0]);
    // An upper-triangle entry in symmetric storage is mirrored the same way (as the dense reader does).
    const upper = readInChunks('%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 5\n', 2, 3);
    expect(Array.from(csrToDense(upper).data)).toEqual([0, 5, 5, 0]);
    const skew = readInChunks('%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 2.5\n1 1 0\n', 3, 1);
    expect(Array.from(csrToDense(skew).data)).toEqual([0, -2.5, 2.5, 0]);
    const pattern = readInChunks('%%MatrixMarket Matrix Coordinate Pattern Symmetric\n2 2 2\n2 1\n1 1\n', 4, 1);
    expect(Array.from(csrToDense(pattern).data)).toEqual([1, 1, 1, 0]);
    const integer = readInChunks('%%MatrixMarket matrix coordinate integer general\n2 2 2\n2 2 7\n1 1 -3\n', 5, 1);
    expect(Array.from(csrToDense(integer).data)).toEqual([-3, 0, 0, 7]);
  });

  it('entries in any order, long rows included, give sorted rows; a duplicate in a long row names its lines among comments', () => {
    const rng = new SeededRandom(9);
    const n = 300;
    const lines: string[] = [];
    for (let j = 0; j < n; j++) lines.push(`1 ${j + 1} ${j + 0.5}`); // a full first row (sorted by keys)
    for (let i = 2; i <= n; i++) lines.push(`${i} ${1 + ((i * 7) % n)} ${-i}`, `${i} ${i} 4`);
    const seen = new Set<string>();
    const kept = lines.filter((line) => {
      const position = line.split(' ').slice(0, 2).join(' ');
      if (seen.has(position)) return false;
      seen.add(position);
      return true;
    });
    const permutation = rng.permutation(kept.length);
    const shuffled = Array.from(permutation, (k) => kept[k]);
    const withComments = shuffled.flatMap((line, k) => (k % 37 === 0 ? ['% note', '', line] : [line]));
    const text = `${HEADER}${n} ${n} ${kept.length}\n${withComments.join('\n')}\n`;
    const a = readInChunks(text, 1, 500);
    checkCsr(a);
    expect(firstDifference(csrToDense(a).data, parseMatrixMarket(text).data)).toBe(-1);

    // The same file with one entry of the long row repeated further down: both lines named.
    const repeated = shuffled.findIndex((line) => line.startsWith('1 '));
    const twice = [...withComments, '% end', shuffled[repeated]];
    const lineOfFirst = 3 + twice.indexOf(shuffled[repeated]);
    const error = errorInChunks(`${HEADER}${n} ${n} ${kept.length + 1}\n${twice.join('\n')}\n`);
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    const [i, j] = shuffled[repeated].split(' ');
    expect(error.message).toContain(
      `line ${2 + twice.length}: entry (${i}, ${j}) is assigned twice, on lines ${lineOfFirst} and ${2 + twice.length}.`,
    );
  });

  it('accepts CRLF (split between \\r and \\n), blank and comment lines, D exponents, tabs, no final newline', () => {
    const text = '%%MatrixMarket matrix coordinate double general\r\n%c\r\n\r\n2 2 2\r\n1 1 1.5e2\r\n   % note\r\n\t2\t2\t-2.5D-1';
    for (let seed = 0; seed < 5; seed++) expect(Array.from(csrToDense(readInChunks(text, seed, 3)).data)).toEqual([150, 0, 0, -0.25]);
  });
});

describe('streaming Matrix Market reader: values', () => {
  it('converts every literal form to the double Number() gives (its fast path is exact, else it defers to Number)', () => {
    const rng = new SeededRandom(7);
    const tokens: string[] = [
      '0',
      '-0',
      '+0.0',
      '.5',
      '5.',
      '-.25e-3',
      '1D2',
      '2.5d-1',
      '9007199254740993',
      '123456789012345678901234567890',
      '1e22',
      '1e23',
      '3e-22',
      '4.9e-324',
      '1.7976931348623157e308',
      '0e400',
      '1e-400',
    ];
    for (let t = 0; t < 3000; t++) {
      const magnitude = Math.exp((rng.nextDouble() - 0.5) * 120) * (rng.nextDouble() < 0.5 ? -1 : 1);
      const form = t % 6;
      tokens.push(
        form === 0
          ? magnitude.toExponential(15)
          : form === 1
            ? magnitude.toExponential(rng.nextInt(20))
            : form === 2
              ? magnitude.toPrecision(1 + rng.nextInt(21))
              : form === 3
                ? String(magnitude)
                : form === 4
                  ? magnitude.toExponential(8).replace('e', 'D')
                  : String(Math.round(magnitude * 1e6)),
      );
    }
    const n = tokens.length;
    const text = `${HEADER}${n} ${n} ${n}\n${tokens.map((token, k) => `${k + 1} ${k + 1} ${token}`).join('\n')}\n`;
    const a = readInChunks(text, 3, 1000);
    for (let k = 0; k < n; k++) expect(Object.is(a.values[k], Number(tokens[k].replace(/[dD]/, 'e'))), tokens[k]).toBe(true);
  });
});

describe('streaming Matrix Market reader: errors name the line, whatever the chunking', () => {
  it('entry counts that do not match the size line', () => {
    const tooFew = errorInChunks(`${HEADER}2 2 3\n1 1 1\n2 2 1\n`);
    expect(tooFew).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(tooFew.message).toMatch(/line 5: the size line announces 3 entries but only 2 were found/);
    const tooMany = errorInChunks(`${HEADER}2 2 1\n1 1 1\n% c\n2 2 1\n`);
    expect(tooMany).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(tooMany.message).toMatch(/line 5: more entries than the 1 announced/);
    expect((tooMany as MatrixMarketSyntaxError).details).toEqual({ line: 5 });
    expect(errorInChunks(HEADER).message).toMatch(/size line is missing/);
  });

  it('indices out of range or malformed, values that are not numbers, wrong field counts', () => {
    const cases: [string, RegExp][] = [
      [`${HEADER}2 2 1\n1 3 1\n`, /line 3: the column index 3 is outside 1\.\.2/],
      [`${HEADER}2 2 1\n0 1 1\n`, /line 3: the row index 0 is outside/],
      [`${HEADER}2 2 1\n1.0 1 1\n`, /line 3: the row index "1\.0" is not an integer/],
      [`${HEADER}2 2 1\n1 1 abc\n`, /line 3: "abc" is not a real number/],
      [`${HEADER}2 2 1\n1 1 0x10\n`, /line 3: "0x10" is not a real number/],
      [`${HEADER}2 2 1\n1 1\n`, /line 3: expected "row col value" \(3 fields\), found 2/],
      ['%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n', /line 3: "1\.5" is not an integer/],
      [`${HEADER}2 two 1\n`, /line 2: expected the size line/],
      [`${HEADER}2 2 5\n`, /line 2: the size line announces 5 entries, more than the 4 distinct positions/],
      ['%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 3\n', /line 3: skew-symmetric matrix with nonzero diagonal/],
      ['%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n', /line 1: the first line must be the header/],
      ['%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 1\n1 1\n', /line 1: the pattern field cannot be skew-symmetric/],
      [`${HEADER}1 1 1\n1 1 ${'1'.repeat((1 << 20) + 5)}\n`, /line 3: the line is longer than/],
    ];
    for (const [text, pattern] of cases) {
      const error = errorInChunks(text);
      expect(error, text.slice(0, 200)).toBeInstanceOf(MatrixMarketSyntaxError);
      expect(error.message, text.slice(0, 200)).toMatch(pattern);
    }
  });

  it('a duplicate (i, j) assignment names both lines, also through symmetric mirroring', () => {
    const general = errorInChunks(`${HEADER}3 3 3\n2 1 1\n% c\n1 1 1\n2 1 2\n`);
    expect(general).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(general.message).toMatch(/line 6: entry \(2, 1\) is assigned twice, on lines 3 and 6/);
    const mirrored = errorInChunks('%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 2 1\n2 1 1\n');
    expect(mirrored.message).toMatch(/line 4: entry \(\d, \d\) is assigned twice, on lines 3 and 4 \(symmetric storage/);
    const diagonal = errorInChunks('%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n2 2\n2 2\n');
    expect(diagonal.message).toMatch(/line 4: entry \(2, 2\) is assigned twice/);
  });

  it('runs of empty lines (skipped in blocks) keep every line number: a duplicate after 1,000 of them names both lines', () => {
    const blank = (count: number): string => '\n'.repeat(count);
    // Runs of 1,000 and 777 empty lines around entries: block skips of 256 and single ones, whatever the chunking.
    const text = `${HEADER}${blank(3)}3 3 3\n2 1 1\n${blank(1000)}1 1 1\n${blank(777)}2 1 2\n`;
    const error = errorInChunks(text);
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    // The header, 3 empty lines, the size line, then the first entry.
    const first = 1 + 3 + 1 + 1;
    const repeated = first + 1000 + 1 + 777 + 1;
    expect(error.message).toMatch(new RegExp(`line ${repeated}: entry \\(2, 1\\) is assigned twice, on lines ${first} and ${repeated}`));
    const tooFew = errorInChunks(`${HEADER}2 2 2\n1 1 1\n${blank(5000)}`);
    expect(tooFew.message).toMatch(new RegExp(`line ${3 + 5000 + 1}: the size line announces 2 entries but only 1`));
  });

  it('non-finite values name the 0-based entry and the line', () => {
    for (const token of ['nan', 'inf', '-Infinity', '1e400']) {
      const error = errorInChunks(`${HEADER}2 2 2\n1 1 1\n2 1 ${token}\n`);
      expect(error, token).toBeInstanceOf(NonFiniteValueError);
      expect(error.message, token).toMatch(/matrix entry \(1, 0\) \(Matrix Market line 4\)/);
    }
  });

  it('complex fields, hermitian symmetry and the array format are unsupported; a wide size is refused', () => {
    const complex = errorInChunks('%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n');
    expect(complex).toBeInstanceOf(UnsupportedMatrixError);
    expect((complex as UnsupportedMatrixError).details).toEqual({ field: 'complex', line: 1 });
    const hermitian = errorInChunks('%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n');
    expect(hermitian).toBeInstanceOf(UnsupportedMatrixError);
    expect(hermitian.message).toMatch(/hermitian/);
    const array = errorInChunks('%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n');
    expect(array).toBeInstanceOf(UnsupportedMatrixError);
    expect(array.message).toMatch(/dense Matrix Market input/);
    const wide = errorInChunks(`${HEADER}2 3 1\n9 9 x\n`);
    expect(wide).toBeInstanceOf(NotSquareError);
    expect(wide.message).toMatch(/2 x 3/);
    // A rectangular symmetric matrix has no meaning.
    expect(errorInChunks('%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n1 1 1\n')).toBeInstanceOf(NotSquareError);
  });

  it('limits are checked on the size line, before any allocation, and on mirrored entries as they are read', () => {
    // 10^9 rows and entries: 20 GB of entry arrays if allocated; refused from the size line.
    const huge = errorInChunks(`${HEADER}1000000000 1000000000 1000000000\n1 1 1\n`, { maxN: 5e6, maxNnz: 2e7 });
    expect(huge).toBeInstanceOf(ProblemTooLargeError);
    expect(huge.message).toMatch(/n = 1000000000; at most n = 5000000/);
    const manyEntries = errorInChunks(`${HEADER}10 10 30\n`, { maxN: 10, maxNnz: 20 });
    expect(manyEntries).toBeInstanceOf(ProblemTooLargeError);
    expect((manyEntries as ProblemTooLargeError).details).toEqual({ nnz: 30, maxNnz: 20, line: 2 });
    // 3 entries announced (within 4), 5 stored once mirrored: refused at the entry that crosses the limit.
    const mirrored = errorInChunks('%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n3 1 1\n', {
      maxN: 3,
      maxNnz: 4,
    });
    expect(mirrored).toBeInstanceOf(ProblemTooLargeError);
    expect((mirrored as ProblemTooLargeError).details).toEqual({ maxNnz: 4, line: 5 });
    expect(
      nnzOf(readInChunks('%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n2 1 1\n', 0, 4, { maxN: 3, maxNnz: 3 })),
    ).toBe(3);
  });
});

describe('streaming Matrix Market reader on corrupted files: the acceptance of the dense reader', () => {
  // Same edits as the dense reader's property test. Both readers must agree: the same matrix, or the
  // same typed error, except where this reader is stricter by design (a duplicate assignment, which
  // the dense reader sums; the array format, which it reads) or names the line in a NaN message.
  const sources = [
    readMatrixText('bfwa62.mtx'),
    readMatrixText('bcsstk03.mtx'),
    '%%MatrixMarket matrix coordinate real skew-symmetric\n4 4 3\n2 1 1.5\n3 1 -2\n4 3 1e-3\n',
    '%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 4\n1 1\n2 1\n3 2\n3 3\n',
    '%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n',
  ];
  const pieces = [
    '%%MatrixMarket',
    'array',
    'complex',
    'symmetric',
    'hermitian',
    '0',
    '-1',
    '1e309',
    'nan',
    '1.5e',
    '\n',
    '\r\n',
    ' ',
    '%',
    '.',
  ];
  const edit = fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    kind: fc.constantFrom('insert', 'delete', 'digit', 'duplicate-line'),
    piece: fc.constantFrom(...pieces),
    digit: fc.integer({ min: 0, max: 9 }),
    span: fc.integer({ min: 1, max: 12 }),
  });
  type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;
  const apply = (text: string, e: Edit): string => {
    const at = Math.floor(e.at * text.length);
    const lines = text.split('\n');
    switch (e.kind) {
      case 'insert':
        return text.slice(0, at) + e.piece + text.slice(at);
      case 'delete':
        return text.slice(0, at) + text.slice(at + e.span);
      case 'digit': {
        const next = text.slice(at).search(/[0-9]/);
        return next < 0 ? text : text.slice(0, at + next) + String(e.digit) + text.slice(at + next + 1);
      }
      case 'duplicate-line': {
        const line = Math.floor(e.at * lines.length);
        lines.splice(line, 0, lines[line]);
        return lines.join('\n');
      }
    }
  };
  const stricter = (error: Error) =>
    /assigned twice|distinct positions/.test(error.message) ||
    (error instanceof UnsupportedMatrixError && /array format/.test(error.message));

  it('agrees with parseMatrixMarket', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: sources.length - 1 }),
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        fc.nat(),
        (source, edits, maxChunk, seed) => {
          const text = edits.reduce(apply, sources[source]);
          const limits = { maxN: 4000, maxNnz: 1e6 };
          let dense: Float64Array | Error;
          let sparse: CsrMatrix | Error;
          try {
            dense = parseMatrixMarket(text, limits).data;
          } catch (error) {
            dense = error as Error;
          }
          try {
            sparse = readInChunks(text, seed, maxChunk, limits);
          } catch (error) {
            sparse = error as Error;
          }
          if (sparse instanceof Error) {
            expect(sparse, String(sparse)).toBeInstanceOf(SolverError);
            if (stricter(sparse)) return;
            expect(dense, String(sparse)).toBeInstanceOf(Error);
            expect(sparse.constructor, `${String(sparse)} / ${String(dense)}`).toBe((dense as Error).constructor);
            if (!(sparse instanceof NonFiniteValueError)) expect(sparse.message).toBe((dense as Error).message);
          } else {
            checkCsr(sparse);
            expect(dense, String(dense)).toBeInstanceOf(Float64Array);
            expect(firstDifference(csrToDense(sparse).data, dense as Float64Array)).toBe(-1);
          }
        },
      ),
      { numRuns: 300, seed: 20261124 },
    );
  });
});
