/**
 * Long numerical work (factorizations, solver runs) is written as generators that `yield` a progress
 * snapshot (or `undefined`) between units of work. The same code then runs two ways:
 *  - `runSync`: to completion, for library users and tests;
 *  - `runCooperatively`: in time slices, returning to the event loop every `sliceMs`, so that the
 *    process running it (a sandboxed BullMQ child) can receive a cancel message, report progress and
 *    renew its job lock while a long solve is under way.
 * Cancellation is delivered by throwing a `CancelledError` into the generator at its current `yield`;
 * solver runs catch it and return a `cancelled` result, analysis lets it propagate.
 */
import { CancelledError } from './errors.js';

export interface WorkProgress {
  /** What is being computed: 'bases', 'principal-angles', 'conditioning', 'solve', ... */
  phase: string;
  algorithm?: string;
  iteration?: number;
  relativeResidual?: number;
  /** Fraction of the current phase done, in [0, 1], when known. */
  fraction?: number;
}

export type Work<T> = Generator<WorkProgress | undefined, T, undefined>;

/** A Work that is already done: `value`, with no step (where a caller takes a Work and the value is at hand). */
// eslint-disable-next-line require-yield -- nothing to do: the value is at hand.
export function* doneWork<T>(value: T): Work<T> {
  return value;
}

/**
 * `work` with each of its yields replaced by relabel(what it yielded): its time-slice points kept, its progress
 * renamed, dropped or replaced by the caller's. An error thrown in at a yield (cancellation) is delivered inside
 * `work`, so that it unwinds from its own yield.
 */
export function* relabelled<T>(work: Work<T>, relabel: (progress: WorkProgress | undefined) => WorkProgress | undefined): Work<T> {
  let step = work.next();
  while (!step.done) {
    try {
      yield relabel(step.value);
    } catch (error) {
      step = work.throw(error);
      continue;
    }
    step = work.next();
  }
  return step.value;
}

export function runSync<T>(work: Work<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

export interface CooperativeOptions {
  signal?: AbortSignal;
  /** Called with the latest progress at most every `progressIntervalMs`. */
  onProgress?: (progress: WorkProgress) => void;
  progressIntervalMs?: number;
  /** Longest stretch of computation between two returns to the event loop. */
  sliceMs?: number;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function runCooperatively<T>(work: Work<T>, options: CooperativeOptions = {}): Promise<T> {
  const { signal, onProgress } = options;
  const progressIntervalMs = options.progressIntervalMs ?? 200;
  const sliceMs = options.sliceMs ?? 20;
  let latest: WorkProgress | undefined;
  let lastReport = -Infinity;
  let sliceStart = performance.now();
  let cancelDelivered = false;

  let step = work.next();
  for (;;) {
    if (step.done) return step.value;
    if (step.value !== undefined) latest = step.value;
    const now = performance.now();
    if (onProgress && latest !== undefined && now - lastReport >= progressIntervalMs) {
      lastReport = now;
      onProgress(latest);
    }
    if (now - sliceStart >= sliceMs) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
    if (signal?.aborted && !cancelDelivered) {
      cancelDelivered = true;
      step = work.throw(new CancelledError());
      continue;
    }
    step = work.next();
  }
}
