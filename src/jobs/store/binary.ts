/**
 * Typed arrays <-> Redis binary strings. Bytes are the platform's (little-endian on every
 * supported CPU); Redis only stores them.
 */
export function bytesOf(array: Float64Array | Int32Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** Copies: a Buffer from ioredis need not be 8-byte aligned within its ArrayBuffer. */
export function float64From(buffer: Buffer): Float64Array {
  const out = new Float64Array(buffer.byteLength / 8);
  new Uint8Array(out.buffer).set(buffer);
  return out;
}

export function int32From(buffer: Buffer): Int32Array {
  const out = new Int32Array(buffer.byteLength / 4);
  new Uint8Array(out.buffer).set(buffer);
  return out;
}
