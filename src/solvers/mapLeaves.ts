/**
 * Deep copies of the plain data a solver run hands its threads (a shard spec: arrays and plain
 * objects holding numbers, strings and typed arrays), with chosen leaves replaced: the shared copy
 * for workers (./parallel/engine.ts), the copy into a WebAssembly arena and the places of its arrays
 * (./linalg/wasmRowKernels.ts). Below both folders (./parallel uses ./linalg).
 */

/**
 * A deep copy of `value` in which every leaf for which `isLeaf` holds is replaced by `replace(leaf)`. A WebAssembly
 * memory (shared: a setup's staging memory, ./linalg/wasmRowKernels.ts) is kept as it is, never taken apart.
 */
export function mapLeaves<Leaf>(value: unknown, isLeaf: (item: unknown) => item is Leaf, replace: (leaf: Leaf) => unknown): unknown {
  if (isLeaf(value)) return replace(value);
  if (value instanceof WebAssembly.Memory) return value;
  if (Array.isArray(value)) return value.map((item) => mapLeaves(item, isLeaf, replace));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = mapLeaves(item, isLeaf, replace);
    return out;
  }
  return value;
}

export function isTypedArray(value: unknown): value is ArrayBufferView {
  return ArrayBuffer.isView(value);
}
