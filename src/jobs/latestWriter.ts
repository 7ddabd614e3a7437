/**
 * Writes values one at a time, the newest waiting one next: a value given while the previous is
 * still being written waits, and only the latest waiting one is written. For stores where each
 * write replaces the last (a job's progress, its checkpoint): concurrent writes could land out of
 * order and leave an older value stored after a newer one.
 */
export class LatestWriter<T> {
  private writing: Promise<void> | null = null;
  private waiting: { value: T } | null = null;

  constructor(
    private readonly write: (value: T) => Promise<unknown>,
    /** A failed write (the next value tries again). */
    private readonly failed: (err: unknown, value: T) => void,
  ) {}

  /** Returns at once; the write goes on in the background. */
  save(value: T): void {
    this.waiting = { value };
    this.writing ??= this.drain();
  }

  /** Resolves once every value saved so far is written (or failed to be). */
  async flush(): Promise<void> {
    await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.waiting !== null) {
      const { value } = this.waiting;
      this.waiting = null;
      try {
        await this.write(value);
      } catch (err) {
        this.failed(err, value);
      }
    }
    this.writing = null;
  }
}
