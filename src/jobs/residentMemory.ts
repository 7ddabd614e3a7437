/**
 * The resident set size of a process, read from /proc (Linux): what the kernel actually holds for
 * it, typed arrays, WebAssembly memories and native buffers included (which V8's heap limit does
 * not count).
 */
import { readFile } from 'node:fs/promises';

/** Bytes resident for `pid`, or null when unknown (no /proc, or the process is gone). */
export async function residentBytes(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
