/**
 * What the first touch of fresh memory costs on this host, against copying into memory already touched: a
 * WebAssembly.Memory of `mb` MB (as a TypeScript run's arena) filled from a fresh Float64Array, then filled again.
 * The first fill pays one page fault per page (4 KiB, or 2 MiB where transparent huge pages apply:
 * /sys/kernel/mm/transparent_hugepage/enabled); docs/operations.md reads it.
 *
 *   node --import tsx bench/firstTouch.ts [mb = 80] [rounds = 3]
 */
const mb = Number(process.argv[2] ?? 80);
const rounds = Number(process.argv[3] ?? 3);
const pagesOf64KiB = mb * 16;
for (let round = 0; round < rounds; round++) {
  const memory = new WebAssembly.Memory({ initial: pagesOf64KiB, maximum: pagesOf64KiB, shared: true });
  const arena = new Float64Array(memory.buffer);
  const t0 = performance.now();
  const source = new Float64Array(arena.length).fill(1);
  const t1 = performance.now();
  arena.set(source);
  const t2 = performance.now();
  arena.set(source);
  const t3 = performance.now();
  const ms = (a: number, b: number): string => (b - a).toFixed(1);
  console.log(
    `${mb} MB: a fresh array filled ${ms(t0, t1)} ms, copied into fresh WebAssembly memory ${ms(t1, t2)} ms, copied again ${ms(t2, t3)} ms`,
  );
}
