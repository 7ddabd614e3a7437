/**
 * The service's sandboxed BullMQ children (./processor.ts, ./studies/chunkProcessor.ts): where their processor is and
 * what they run with (sandboxedProcessor; their environment: sandboxedEnvironment), and what every child does first
 * (leaveWithParent, preloaded by ./sandboxGuard.ts before BullMQ's child wrapper or the processor loads): leave when its
 * worker process is gone. A SIGKILLed worker sends its children no signal; only their IPC channel closes.
 *  - On 'disconnect' (the channel closed) the child exits.
 *  - On an uncaught exception once the channel is closed, or once its parent is gone (its parent process id changed:
 *    the closed channel may not have been read yet), it exits too. BullMQ's child wrapper (6.x) answers an uncaught
 *    exception by sending the failure to its parent and awaiting the send; on a closed channel the send rejects, the
 *    rejection comes back as another uncaught exception, and so on: a loop of microtasks that never lets the event loop
 *    deliver 'disconnect'. Seen in CI twice: children orphaned by the worker a studies test kills spun at a full core
 *    and grew to 2.5-2.9 GB for 20-28 minutes. The second was a child whose guard, then installed by the processor
 *    module itself, came after the wrapper's listener or not at all (the worker killed before the module loaded): the
 *    preload installs it first, in every child.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { WORKER_CONFIG_ENV } from './workerConfig.js';

export function leaveWithParent(): void {
  if (!process.send) return;
  const parent = process.ppid;
  process.on('disconnect', () => process.exit(1));
  process.on('uncaughtException', () => {
    if (!process.connected || process.ppid !== parent) process.exit(1);
  });
}

/**
 * A sandboxed processor's file and its children's execArgv: `stem` is the processor's URL without its extension (next
 * to the caller); its .ts under tsx/vitest (the children then load TypeScript through `--import tsx`), its .js when
 * compiled; and ./sandboxGuard preloaded (leaveWithParent before anything else runs in the child).
 */
export function sandboxedProcessor(stem: URL): { file: string; execArgv: string[] } {
  const typescript = import.meta.url.endsWith('.ts') && existsSync(fileURLToPath(`${stem.href}.ts`));
  const extension = typescript ? 'ts' : 'js';
  const guard = new URL(`./sandboxGuard.${extension}`, import.meta.url).href;
  return {
    file: fileURLToPath(`${stem.href}.${extension}`),
    execArgv: [...(typescript ? ['--import', 'tsx'] : []), '--import', guard],
  };
}

/** The glibc tunable that makes malloc advise transparent huge pages (MADV_HUGEPAGE) on the memory it maps. */
const HUGE_PAGES_TUNABLE = 'glibc.malloc.hugetlb';

/**
 * `tunables` (a GLIBC_TUNABLES value: name=value pairs joined by ':') with glibc.malloc.hugetlb=1 added, unless it sets
 * that tunable already (the operator's value stands). Large typed arrays come from malloc's own mappings; with it, the
 * first touch of each 2 MiB faults once instead of 512 times (on the 2-core VM of docs/performance.md, 86-90 ms against
 * 9-58 ms for 32 MB).
 */
export function withHugePages(tunables: string | undefined): string {
  const pairs = (tunables ?? '').split(':').filter((pair) => pair.length > 0);
  if (pairs.some((pair) => pair.split('=')[0] === HUGE_PAGES_TUNABLE)) return pairs.join(':');
  return [...pairs, `${HUGE_PAGES_TUNABLE}=1`].join(':');
}

/** Whether `tunables` (a GLIBC_TUNABLES value) sets glibc.malloc.hugetlb=1, as withHugePages adds it. */
export function asksForHugePages(tunables: string): boolean {
  return tunables.split(':').includes(`${HUGE_PAGES_TUNABLE}=1`);
}

/** The environment a worker starts its sandboxed children with: its own, the Config they read, and the huge pages (JOB_HUGE_PAGES). */
export function sandboxedEnvironment(config: Config): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, [WORKER_CONFIG_ENV]: JSON.stringify(config) };
  if (config.JOB_HUGE_PAGES) env.GLIBC_TUNABLES = withHugePages(process.env.GLIBC_TUNABLES);
  return env;
}
