/**
 * sharedCopy (src/solvers/parallel/workerThreads.ts): what a task pool or a run posts to its threads. Every typed array
 * in shared memory with its values; one already shared kept as it is; one met twice (machines of one Gram pattern share
 * its symbolic part) copied once, also across the calls given the same copies.
 */
import { describe, expect, it } from 'vitest';
import { sharedCopy } from '../../../src/solvers/parallel/workerThreads.js';

describe('sharedCopy', () => {
  it('copies each typed array into shared memory once, keeps the shared ones, and keeps the rest of the data', () => {
    const symbolic = { colPtr: Int32Array.of(0, 1, 3), rowIdx: Int32Array.of(0, 1, 1) };
    const shared = new Float64Array(new SharedArrayBuffer(16));
    shared.set([3, 4]);
    const machines = [
      { index: 0, gram: { symbolic, values: Float64Array.of(1, 2, 3) }, b: shared },
      { index: 1, gram: { symbolic, values: Float64Array.of(4, 5, 6) }, name: 'x' },
    ];
    const copy = sharedCopy(machines) as typeof machines;
    expect(copy[0].gram.symbolic.colPtr.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Array.from(copy[1].gram.values)).toEqual([4, 5, 6]);
    expect(copy[1].gram.values.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(copy[0].gram.symbolic.rowIdx).not.toBe(symbolic.rowIdx);
    // The pattern both machines share is one copy.
    expect(copy[1].gram.symbolic.colPtr).toBe(copy[0].gram.symbolic.colPtr);
    expect(copy[1].gram.symbolic.rowIdx).toBe(copy[0].gram.symbolic.rowIdx);
    expect(copy[0].b).toBe(shared);
    expect(copy[1].name).toBe('x');
    expect(copy[0].index).toBe(0);

    // Across calls given the same copies: machine by machine, as a setup on threads makes them.
    const copies = new WeakMap<ArrayBufferView, ArrayBufferView>();
    const first = sharedCopy(machines[0], copies) as (typeof machines)[0];
    const second = sharedCopy(machines[1], copies) as (typeof machines)[1];
    expect(second.gram.symbolic.rowIdx).toBe(first.gram.symbolic.rowIdx);
    expect((sharedCopy(machines[1]) as (typeof machines)[1]).gram.symbolic.rowIdx).not.toBe(first.gram.symbolic.rowIdx);
  });
});
