/**
 * The streaming Matrix Market reader on untrusted text: bounded memory and time whatever the text
 * claims. A size line that lies costs nothing up front; a line of a million characters is refused
 * after at most maxLineChars of it; a text that never ends stops at its first entry beyond the count
 * (endless comment lines are bounded by the upload's byte limit and timeout, test/api/matrixUploadBounds.test.ts,
 * and cost the reader no memory).
 */
import { describe, expect, it } from 'vitest';
import { MatrixMarketSyntaxError } from '../../../src/solvers/errors.js';
import { MatrixMarketStreamReader, readMatrixMarketStream } from '../../../src/solvers/sparse/matrixMarketStream.js';
import { thrown } from '../../support/thrown.js';

const MiB = 2 ** 20;

/** ArrayBuffer bytes allocated by `work` and still reachable after it (the reader's arrays). */
function arrayBufferGrowth(work: () => void): number {
  const before = process.memoryUsage().arrayBuffers;
  work();
  return process.memoryUsage().arrayBuffers - before;
}

describe('a size line that lies', () => {
  it('allocates nothing for the announced count: 20 million entries announced, 2 given', () => {
    const reader = new MatrixMarketStreamReader({ maxN: 10_000, maxNnz: 20_000_000 });
    // Up front, the old reader took 16 bytes per announced entry: 320 MB here.
    const growth = arrayBufferGrowth(() =>
      reader.push('%%MatrixMarket matrix coordinate real general\n10000 10000 20000000\n1 1 2.0\n2 2 3.0\n'),
    );
    expect(growth).toBeLessThan(MiB);
    const error = thrown(() => reader.finish());
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(error.message).toContain('announces 20000000 entries but only 2 were found');
  });

  it('still reads every entry when the count is true and large (the arrays grow as entries arrive)', () => {
    const n = 400;
    const entries = new Map<number, number>();
    let state = 12345;
    // xorshift32: exact in 32-bit integer arithmetic.
    const random = (): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 2 ** 32;
    };
    while (entries.size < 20_000) entries.set(Math.floor(random() * n * n), Math.round(random() * 2000 - 1000) / 8 + 1 / 16);
    const lines = [...entries].map(([position, value]) => `${Math.floor(position / n) + 1} ${(position % n) + 1} ${value}`);
    const reader = new MatrixMarketStreamReader();
    reader.push(`%%MatrixMarket matrix coordinate real general\n${n} ${n} ${entries.size}\n`);
    for (let start = 0; start < lines.length; start += 997) reader.push(lines.slice(start, start + 997).join('\n') + '\n');
    const csr = reader.finish();
    expect(csr.rowPtr[n]).toBe(entries.size);
    for (let i = 0; i < n; i++) {
      for (let q = csr.rowPtr[i]; q < csr.rowPtr[i + 1]; q++) expect(csr.values[q]).toBe(entries.get(i * n + csr.colIdx[q]));
    }
  });
});

describe('a line of a million characters', () => {
  it('is refused once maxLineChars arrived without a newline, naming the line', () => {
    const reader = new MatrixMarketStreamReader({ maxLineChars: 4096 });
    reader.push('%%MatrixMarket matrix coordinate real general\n% a comment\n');
    const piece = '9'.repeat(1000);
    let fed = 0;
    const error = thrown(() => {
      while (fed < 1_000_000) {
        reader.push(piece);
        fed += piece.length;
      }
    });
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(error.message).toContain('longer than 4096 characters');
    expect((error as MatrixMarketSyntaxError).details).toMatchObject({ line: 3 });
    expect(fed).toBeLessThanOrEqual(5000);
  });

  it('is refused within one chunk too, and by default above 65536 characters', () => {
    const error = thrown(() =>
      new MatrixMarketStreamReader().push(`%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 ${'1'.repeat(1_000_000)}\n`),
    );
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    expect(error.message).toContain('longer than 65536 characters');
    expect((error as MatrixMarketSyntaxError).details).toMatchObject({ line: 3 });
  });
});

describe('a text that never ends', () => {
  it('stops at the first entry beyond the announced count', async () => {
    let produced = 0;
    async function* endless(): AsyncGenerator<string> {
      yield '%%MatrixMarket matrix coordinate real general\n3 3 2\n';
      for (;;) {
        produced++;
        // A chunk arriving later, as from a socket.
        await Promise.resolve();
        yield `${(produced % 3) + 1} ${((produced * 2) % 3) + 1} 1.5\n`;
      }
    }
    const error = await readMatrixMarketStream(endless()).then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(MatrixMarketSyntaxError);
    expect((error as Error).message).toContain('more entries than the 2 announced');
    expect(produced).toBe(3);
  });

  it('costs no memory for endless comment lines among the entries', () => {
    const reader = new MatrixMarketStreamReader();
    reader.push('%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n');
    const block = '% more and more comments\n'.repeat(1000);
    const growth = arrayBufferGrowth(() => {
      for (let k = 0; k < 1000; k++) reader.push(block);
    });
    expect(growth).toBeLessThan(MiB);
    reader.push('2 2 1.0\n');
    expect(reader.finish().rowPtr[3]).toBe(2);
  });
});
