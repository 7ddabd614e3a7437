/**
 * How the engine's threads share a phase's chunks (../../../src/solvers/parallel/protocol.ts): each thread's block
 * is an even share of the work, a thread runs its own block first, front to back, then takes what is left of the
 * others from their ends, and every chunk runs once. The threads are played here one after another on one thread
 * (the words are the shared control words a real phase uses); the threaded runs' tests check that the iterates of
 * real threads are those of one thread.
 */
import { describe, expect, it } from 'vitest';
import {
  CONTROL_WORDS,
  chunkBlocks,
  emptyBlocks,
  resetBlocks,
  runChunks,
  type DataViews,
  type Shard,
} from '../../../src/solvers/parallel/protocol.js';

const views: DataViews = { input: new Float64Array(0), output: new Float64Array(0), scalars: new Float64Array(0) };

/** A shard that records the chunks it runs, and may stop after `limit` of them (a thread taken off its core). */
function recorder(limit = Infinity): Shard & { ran: number[] } {
  const ran: number[] = [];
  return {
    ran,
    run(_phase, chunk) {
      if (ran.length >= limit) throw new Error('descheduled');
      ran.push(chunk);
    },
  };
}

function controlFor(blocks: Int32Array): Int32Array {
  const control = new Int32Array(new SharedArrayBuffer((CONTROL_WORDS + blocks.length - 1) * 4));
  resetBlocks(control, blocks);
  return control;
}

describe('chunkBlocks', () => {
  it('cuts the chunks into consecutive blocks of about even work, one chunk at least each', () => {
    expect([...chunkBlocks([1, 1, 1, 1, 1, 1, 1, 1], 8, 2)]).toEqual([0, 4, 8]);
    expect([...chunkBlocks([1, 1, 1, 1, 1, 1, 1, 1, 1], 9, 3)]).toEqual([0, 3, 6, 9]);
    // The work decides, not the count: one heavy chunk is a block of its own.
    expect([...chunkBlocks([10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 11, 2)]).toEqual([0, 1, 11]);
    expect([...chunkBlocks([1, 1, 1, 1, 1, 1, 12], 7, 2)]).toEqual([0, 6, 7]);
    // As many blocks as threads, none empty, even when the work sits in one chunk.
    expect([...chunkBlocks([100, 0, 0, 0], 4, 4)]).toEqual([0, 1, 2, 3, 4]);
    expect([...chunkBlocks([0, 0, 0, 100], 4, 3)]).toEqual([0, 2, 3, 4]);
    expect([...chunkBlocks([5, 7], 2, 1)]).toEqual([0, 2]);
  });
});

describe('runChunks', () => {
  it('runs its own block from the front, then the others from their ends; every chunk once', () => {
    const blocks = chunkBlocks(new Array(9).fill(1), 9, 3);
    const control = controlFor(blocks);
    // Thread 1 runs alone (the others late): its block 3..5, then block 2 and block 0 from their ends.
    const alone = recorder();
    runChunks(control, blocks, 1, alone, 0, views);
    expect(alone.ran).toEqual([3, 4, 5, 8, 7, 6, 2, 1, 0]);
    // Nothing left for the threads that come late.
    const late = recorder();
    runChunks(control, blocks, 0, late, 0, views);
    expect(late.ran).toEqual([]);
  });

  it('leaves a thread its block but what the others took while it was away', () => {
    const blocks = chunkBlocks(new Array(8).fill(1), 8, 2);
    const control = controlFor(blocks);
    // Thread 0 runs two chunks of its block and is taken off its core (its shard throws: the phase's failure path).
    const first = recorder(2);
    expect(() => runChunks(control, blocks, 0, first, 0, views)).toThrow('descheduled');
    expect(first.ran).toEqual([0, 1]);
    // Thread 1 runs its block, then steals block 0's end: chunk 2 is the one thread 0 took and did not run.
    const second = recorder();
    runChunks(control, blocks, 1, second, 0, views);
    expect(second.ran).toEqual([4, 5, 6, 7, 3]);
    // A new phase: the blocks are whole again.
    resetBlocks(control, blocks);
    const again = recorder();
    runChunks(control, blocks, 0, again, 0, views);
    expect(again.ran).toEqual([0, 1, 2, 3, 7, 6, 5, 4]);
  });

  it('hands out nothing once the blocks are emptied (a chunk failed)', () => {
    const blocks = chunkBlocks(new Array(6).fill(1), 6, 2);
    const control = controlFor(blocks);
    emptyBlocks(control, blocks);
    const shard = recorder();
    runChunks(control, blocks, 0, shard, 0, views);
    expect(shard.ran).toEqual([]);
  });

  it('still runs every chunk once where a block is longer than a packed word holds (65,535 chunks)', () => {
    const chunks = 140_000;
    const blocks = chunkBlocks(new Array(chunks).fill(1), chunks, 2);
    expect(blocks[1] - blocks[0]).toBeGreaterThan(0xffff);
    const control = controlFor(blocks);
    const first = recorder(10);
    expect(() => runChunks(control, blocks, 1, first, 0, views)).toThrow('descheduled');
    const second = recorder();
    runChunks(control, blocks, 0, second, 0, views);
    const seen = new Uint8Array(chunks);
    for (const c of [...first.ran, ...second.ran]) seen[c]++;
    // Thread 1 took an eleventh chunk before it stopped: that one was lost with it, as a failed chunk is.
    expect(seen.reduce((sum, v) => sum + v, 0)).toBe(chunks - 1);
    expect(seen.every((v, c) => v === 1 || (v === 0 && c === blocks[1] + 10))).toBe(true);
    expect(second.ran.slice(0, 3)).toEqual([0, 1, 2]);
    emptyBlocks(control, blocks);
    const none = recorder();
    runChunks(control, blocks, 0, none, 0, views);
    expect(none.ran).toEqual([]);
  });
});
