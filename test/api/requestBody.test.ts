/**
 * bodyWithin (src/api/requestBody.ts): UPLOAD_TIMEOUT_MS is the client's deadline. A body that
 * trickles is refused once it passes; a body that arrived whole is read to its end however long its
 * reader takes (a gzip bomb inflating on a loaded machine is not the client's delay); a body that
 * arrived in part and then stalls is refused once its reader has caught up with it.
 */
import { PassThrough, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BodyTimeoutError, bodyWithin } from '../../src/api/requestBody.js';

const TIMEOUT_MS = 200;
const CHUNK = Buffer.alloc(64 * 1024, 0x0a);

/** Reads `stream` to its end, pausing `delayMs` after each chunk; resolves to the bytes read, or rejects with its error. */
async function readSlowly(stream: Readable, delayMs: number): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += (chunk as Buffer).length;
    if (delayMs > 0) await sleep(delayMs);
  }
  return bytes;
}

describe('bodyWithin', () => {
  it('refuses a body that trickles past the deadline, even to a prompt reader', async () => {
    const body = new PassThrough();
    const trickle = setInterval(() => body.write('x'), 20);
    try {
      const read = readSlowly(bodyWithin(body, TIMEOUT_MS), 0);
      await expect(read).rejects.toBeInstanceOf(BodyTimeoutError);
    } finally {
      clearInterval(trickle);
    }
  });

  it('reads a body that arrived whole to its end, although its reader takes several deadlines', async () => {
    const body = new PassThrough();
    const chunks = 40;
    for (let i = 0; i < chunks; i++) body.write(CHUNK);
    body.end();
    const started = Date.now();
    // 40 chunks at 25 ms each: 1 s of reading, five deadlines.
    await expect(readSlowly(bodyWithin(body, TIMEOUT_MS), 25)).resolves.toBe(chunks * CHUNK.length);
    expect(Date.now() - started).toBeGreaterThan(3 * TIMEOUT_MS);
  });

  it('refuses a body sent in part and then stalled, once its slow reader has caught up', async () => {
    const body = new PassThrough();
    for (let i = 0; i < 20; i++) body.write(CHUNK);
    // Never ended: the reader, slower than the deadline, must still be refused when it runs dry.
    const started = Date.now();
    await expect(readSlowly(bodyWithin(body, TIMEOUT_MS), 25)).rejects.toBeInstanceOf(BodyTimeoutError);
    expect(Date.now() - started).toBeGreaterThan(20 * 25 - 50);
  });
});
