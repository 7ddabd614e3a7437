import { readFileSync } from 'node:fs';
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
import { toRows, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { FIXTURES_DIR, MATRICES_DIR } from '../../support/sharedData.js';
import { thrown } from '../../support/thrown.js';

const MATRICES = MATRICES_DIR;
const FIXTURES = FIXTURES_DIR;
const readMatrixFile = (name: string) => readFileSync(`${MATRICES}/${name}`, 'utf8');

// n and storage from the matrices' README.md.
const VALID_MATRICES: { file: string; n: number; symmetric: boolean }[] = [
  { file: 'bfwa62.mtx', n: 62, symmetric: false },
  { file: 'bcsstk03.mtx', n: 112, symmetric: true },
  { file: 'arc130.mtx', n: 130, symmetric: false },
  { file: 'fs1831.mtx', n: 183, symmetric: false },
  { file: 'impcol_a.mtx', n: 207, symmetric: false },
  { file: 'plat362.mtx', n: 362, symmetric: true },
  { file: 'gr_30_30.mtx', n: 900, symmetric: true },
  { file: 'olm1000.mtx', n: 1000, symmetric: false },
  { file: '1138_bus.mtx', n: 1138, symmetric: true },
  { file: 'sherman5.mtx', n: 3312, symmetric: false },
];

const at = (a: DenseMatrix, i: number, j: number) => a.data[i * a.cols + j];

function isExactlySymmetric(a: DenseMatrix): boolean {
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < i; j++) if (at(a, i, j) !== at(a, j, i)) return false;
  return true;
}

function rowNormRatio(a: DenseMatrix): number {
  let max = 0;
  let min = Infinity;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let j = 0; j < a.cols; j++) s += at(a, i, j) ** 2;
    const norm = Math.sqrt(s);
    max = Math.max(max, norm);
    min = Math.min(min, norm);
  }
  return max / min;
}

/** Every `stride`-th entry line of a coordinate file, straight from the text: [i, j, value] 1-based. */
function sampleEntryLines(text: string, stride: number): [number, number, number][] {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('%'));
  const entries = lines.slice(1);
  const sample: [number, number, number][] = [];
  for (let k = 0; k < entries.length; k += stride) {
    const [i, j, v] = entries[k].trim().split(/\s+/);
    sample.push([Number(i), Number(j), Number(v)]);
  }
  const [i, j, v] = entries[entries.length - 1].trim().split(/\s+/);
  sample.push([Number(i), Number(j), Number(v)]);
  return sample;
}

describe('parseMatrixMarket on the shared matrices', () => {
  for (const { file, n, symmetric } of VALID_MATRICES) {
    it(`${file}: n = ${n}, entries match the file text${symmetric ? ', expanded exactly symmetric' : ''}`, () => {
      const text = readMatrixFile(file);
      const a = parseMatrixMarket(text);
      expect(a.rows).toBe(n);
      expect(a.cols).toBe(n);
      expect(a.data.length).toBe(n * n);
      for (const [i, j, v] of sampleEntryLines(text, 37)) {
        expect(at(a, i - 1, j - 1)).toBe(v);
        if (symmetric) expect(at(a, j - 1, i - 1)).toBe(v);
      }
      if (symmetric) expect(isExactlySymmetric(a)).toBe(true);
      // Nothing outside the stored pattern (and its mirror) is filled in.
      const nnzStored = Number(
        text
          .split('\n')
          .find((l) => !l.startsWith('%'))!
          .trim()
          .split(/\s+/)[2],
      );
      let nonzeros = 0;
      for (let k = 0; k < a.data.length; k++) if (a.data[k] !== 0) nonzeros++;
      expect(nonzeros).toBeLessThanOrEqual(symmetric ? 2 * nnzStored - n : nnzStored);
    });
  }

  it('bcsstk03.mtx: known entries, the lower-triangle ones mirrored', () => {
    const a = parseMatrixMarket(readMatrixFile('bcsstk03.mtx'));
    expect(at(a, 0, 0)).toBe(296965303.256);
    expect(at(a, 3, 0)).toBe(4507339372.82);
    expect(at(a, 0, 3)).toBe(4507339372.82);
    expect(at(a, 2, 1)).toBe(-4507339372.82);
    expect(at(a, 1, 2)).toBe(-4507339372.82);
    expect(at(a, 1, 0)).toBe(0);
  });

  it('gr_30_30.mtx (integer symmetric): the 9-point stencil, diagonal 8, neighbours -1', () => {
    const a = parseMatrixMarket(readMatrixFile('gr_30_30.mtx'));
    expect(at(a, 0, 0)).toBe(8);
    expect(at(a, 30, 0)).toBe(-1);
    expect(at(a, 0, 30)).toBe(-1);
    expect(at(a, 0, 31)).toBe(-1);
    expect(at(a, 0, 2)).toBe(0);
  });

  const fixtures = ['bcsstk03-m4', 'bfwa62-m2', 'bfwa62-m4', 'gr_30_30-m10', 'sherman5-m8'];
  for (const name of fixtures) {
    it(`${name}: reproduces the fixture's n and row-norm ratio (independent NumPy values)`, () => {
      const fixture = JSON.parse(readFileSync(`${FIXTURES}/${name}.json`, 'utf8')) as {
        source: { matrixMarket: string };
        expected: { n: number; rowNormRatio: number };
      };
      const a = parseMatrixMarket(readMatrixFile(fixture.source.matrixMarket));
      expect(a.rows).toBe(fixture.expected.n);
      const ratio = rowNormRatio(a);
      expect(Math.abs(ratio - fixture.expected.rowNormRatio) / fixture.expected.rowNormRatio).toBeLessThan(1e-12);
    });
  }

  it('ash608.mtx (608 x 188 pattern) is read as a tall matrix', () => {
    const a = parseMatrixMarket(readMatrixFile('ash608.mtx'));
    expect(a.rows).toBe(608);
    expect(a.cols).toBe(188);
    expect(a.data.reduce((sum, v) => sum + v, 0)).toBe(1216);
  });

  it('qc324.mtx (complex symmetric) is rejected: the field is complex', () => {
    const text = readMatrixFile('qc324.mtx');
    expect(() => parseMatrixMarket(text)).toThrow(UnsupportedMatrixError);
    expect(() => parseMatrixMarket(text)).toThrow(/complex/);
    expect(() => parseMatrixMarket(text)).toThrow(/real, integer and pattern/);
    try {
      parseMatrixMarket(text);
    } catch (error) {
      expect((error as UnsupportedMatrixError).code).toBe('unsupported-matrix');
    }
  });
});

describe('parseMatrixMarket on hand-written inputs', () => {
  it('array general is column-major', () => {
    const a = parseMatrixMarket('%%MatrixMarket matrix array real general\n% comment\n2 2\n1\n2\n3\n4\n');
    expect(toRows(a)).toEqual([
      [1, 3],
      [2, 4],
    ]);
  });

  it('array symmetric stores the lower triangle column by column', () => {
    const a = parseMatrixMarket('%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n');
    expect(toRows(a)).toEqual([
      [1, 2, 3],
      [2, 4, 5],
      [3, 5, 6],
    ]);
  });

  it('array skew-symmetric stores the strictly lower triangle; the diagonal is zero', () => {
    const a = parseMatrixMarket('%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n');
    expect(toRows(a)).toEqual([
      [0, -1, -2],
      [1, 0, -3],
      [2, 3, 0],
    ]);
  });

  it('coordinate skew-symmetric: A[j][i] = -A[i][j]; a nonzero diagonal entry is an error', () => {
    const a = parseMatrixMarket('%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 2.5\n');
    expect(toRows(a)).toEqual([
      [0, -2.5],
      [2.5, 0],
    ]);
    const error = thrown(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 2.5\n2 2 1\n'));
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(error.message).toMatch(/line 4/);
    expect(error.message).toMatch(/diagonal/);
  });

  it('integer and pattern fields; pattern entries are 1; header words are case-insensitive', () => {
    expect(toRows(parseMatrixMarket('%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -3\n2 2 7\n'))).toEqual([
      [-3, 0],
      [0, 7],
    ]);
    expect(toRows(parseMatrixMarket('%%MatrixMarket Matrix Coordinate Pattern Symmetric\n2 2 2\n2 1\n1 1\n'))).toEqual([
      [1, 1],
      [1, 0],
    ]);
    expect(() => parseMatrixMarket('%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n')).toThrow(/line 3.*not an integer/);
  });

  it('duplicated coordinates are summed (as SciPy does), also in symmetric storage', () => {
    expect(toRows(parseMatrixMarket('%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 1 2\n2 2 5\n'))).toEqual([
      [3, 0],
      [0, 5],
    ]);
    expect(toRows(parseMatrixMarket('%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n2 1 1\n2 1 0.5\n2 2 5\n'))).toEqual([
      [0, 1.5],
      [1.5, 5],
    ]);
  });

  it('accepts CRLF line ends, blank lines, comment lines between entries, exponents and Fortran D exponents', () => {
    const a = parseMatrixMarket(
      '%%MatrixMarket matrix coordinate real general\r\n%c\r\n\r\n2 2 2\r\n1 1 1.5e2\r\n% note\r\n2 2 -2.5D-1\r\n',
    );
    expect(toRows(a)).toEqual([
      [150, 0],
      [0, -0.25],
    ]);
  });

  it('NaN / Infinity values are named as 0-based matrix entries', () => {
    for (const [token, pattern] of [
      ['nan', /matrix entry \(1, 0\) is nan/],
      ['inf', /matrix entry \(1, 0\) is inf/],
      ['-Infinity', /matrix entry \(1, 0\) is -Infinity/],
      ['1e400', /matrix entry \(1, 0\)/],
    ] as const) {
      const error = thrown(() => parseMatrixMarket(`%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 1 ${token}\n`));
      expect(error).toBeInstanceOf(NonFiniteValueError);
      expect(error.message).toMatch(pattern);
    }
    const arrayError = thrown(() => parseMatrixMarket('%%MatrixMarket matrix array real general\n2 2\n1\n2\nNaN\n4\n'));
    expect(arrayError).toBeInstanceOf(NonFiniteValueError);
    expect(arrayError.message).toMatch(/matrix entry \(0, 1\)/);
  });

  it('syntax errors carry the 1-based line number', () => {
    const cases: [string, RegExp][] = [
      ['%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n', /line 1/],
      ['%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n', /line 1/],
      ['%%MatrixMarket matrix sparse real general\n1 1 1\n1 1 1\n', /line 1.*format/],
      ['%%MatrixMarket matrix coordinate real general\n% c\n2 two 1\n1 1 1\n', /line 3.*size line/],
      ['%%MatrixMarket matrix coordinate real general\n2 2\n1 1 1\n', /line 2.*size line/],
      ['%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n', /line 3.*column index 3 is outside 1\.\.2/],
      ['%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n', /line 3.*row index 0/],
      ['%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n', /line 3.*"abc" is not a real number/],
      ['%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n', /line 3.*3 fields/],
      ['%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n', /line 4.*more entries than the 1 announced/],
      ['%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n', /announces 3 entries but only 2/],
      ['%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n', /holds 4 values but only 3/],
      ['%%MatrixMarket matrix array real general\n1 1\n1\n2\n', /line 4.*more values/],
      ['%%MatrixMarket matrix coordinate real general\n', /size line is missing/],
      ['%%MatrixMarket matrix array pattern general\n1 1\n1\n', /line 1.*pattern/],
    ];
    for (const [text, pattern] of cases) {
      const error = thrown(() => parseMatrixMarket(text));
      expect(error, text).toBeInstanceOf(MatrixMarketSyntaxError);
      expect(error.message, text).toMatch(pattern);
    }
  });

  it('hermitian symmetry is unsupported; a wide size line is rejected before reading entries', () => {
    expect(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n')).toThrow(UnsupportedMatrixError);
    const error = thrown(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real general\n2 3 1\n9 9 x\n'));
    expect(error).toBeInstanceOf(NotSquareError);
    expect(error.message).toMatch(/2 x 3/);
  });

  it('checks n against limits.maxN before allocating n x n', () => {
    // A 10^6 x 10^6 dense matrix would need 8 TB: the limit must fire first.
    const error = thrown(() =>
      parseMatrixMarket('%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n1 1 1\n', { maxN: 4000 }),
    );
    expect(error).toBeInstanceOf(ProblemTooLargeError);
    expect(error.message).toMatch(/1000000/);
    expect(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n1 1 1\n')).toThrow(
      ProblemTooLargeError,
    );
    expect(parseMatrixMarket('%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n', { maxN: 3 }).rows).toBe(3);
  });
});

describe('parseMatrixMarket on corrupted files', () => {
  // Whatever a client uploads, the parser answers with a finite square matrix or a typed SolverError
  // (mapped to a 4xx problem): never a TypeError, RangeError or an allocation sized by garbage.
  const sources = ['bfwa62.mtx', 'bcsstk03.mtx', 'qc324.mtx', 'ash608.mtx'].map(readMatrixFile);
  const tokens = [
    '%%MatrixMarket',
    'matrix',
    'coordinate',
    'array',
    'real',
    'integer',
    'complex',
    'pattern',
    'general',
    'symmetric',
    'skew-symmetric',
    'hermitian',
  ];
  const pieces = [
    ...tokens,
    '0',
    '-1',
    '-0',
    '1e309',
    '1e-320',
    'nan',
    'inf',
    '1.5e',
    '99999999999',
    '2147483648',
    '\n',
    '\r\n',
    ' ',
    '\t',
    '%',
    '-',
    '+',
    '.',
    'e',
  ];
  const edit = fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    kind: fc.constantFrom('insert', 'delete', 'digit', 'duplicate-line', 'header-word'),
    piece: fc.constantFrom(...pieces),
    digit: fc.integer({ min: 0, max: 9 }),
    span: fc.integer({ min: 1, max: 12 }),
  });
  type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;
  const apply = (text: string, e: Edit): string => {
    const at = Math.floor(e.at * text.length);
    const lines = text.split('\n');
    const line = Math.floor(e.at * lines.length);
    switch (e.kind) {
      case 'insert':
        return text.slice(0, at) + e.piece + text.slice(at);
      case 'delete':
        return text.slice(0, at) + text.slice(at + e.span);
      case 'digit': {
        const next = text.slice(at).search(/[0-9]/);
        return next < 0 ? text : text.slice(0, at + next) + String(e.digit) + text.slice(at + next + 1);
      }
      case 'duplicate-line':
        lines.splice(line, 0, lines[line]);
        return lines.join('\n');
      case 'header-word': {
        const words = lines[0].split(' ');
        words[Math.min(words.length - 1, Math.floor(e.at * words.length))] = tokens[e.digit % tokens.length];
        lines[0] = words.join(' ');
        return lines.join('\n');
      }
    }
  };

  it('gives a finite square or tall matrix or a typed SolverError', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: sources.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 4 }), (source, edits) => {
        const text = edits.reduce(apply, sources[source]);
        let matrix: DenseMatrix;
        try {
          matrix = parseMatrixMarket(text, { maxN: 4000 });
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(SolverError);
          return;
        }
        expect(matrix.rows).toBeGreaterThanOrEqual(matrix.cols);
        expect(matrix.data.length).toBe(matrix.rows * matrix.cols);
        expect(matrix.data.every(Number.isFinite)).toBe(true);
      }),
      { numRuns: 400, seed: 20261121 },
    );
  });
});
