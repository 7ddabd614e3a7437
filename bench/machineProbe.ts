/**
 * The machine the benchmark runs on: what it is (CPU, caches, OS, transparent huge pages, the
 * NumPy side's versions), and the load other processes put on it, so that a timed part can wait
 * for quiet cores and a disturbed one can be told apart.
 *
 * Other load = CPU time all processes used (/proc/stat) minus what this process and its finished
 * children used (/proc/self/stat utime, stime, cutime, cstime), both in clock ticks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { lastJson, log, runChild } from './processes.js';

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  caches: string;
  os: string;
  node: string;
  python: string;
  numpy: string;
  blas: string;
  /** Transparent huge pages setting (the bracketed choice of /sys/kernel/mm/transparent_hugepage/enabled). */
  thp: string;
  loadBefore: number[];
  /** Filled in when the run ends. */
  loadAfter: number[];
}

/** Prints the NumPy side's Python, NumPy and BLAS versions as one JSON line. */
const PYTHON_VERSIONS = [
  'import json, platform, numpy as np',
  'b = np.show_config(mode="dicts")["Build Dependencies"]["blas"]',
  'print(json.dumps({"python": platform.python_version(), "numpy": np.__version__, "blas": b["name"] + " " + b["version"]}))',
].join('; ');

/** Describes this machine; its load average first, before the probes add their own. */
export async function probeMachine(): Promise<Machine> {
  const loadBefore = os.loadavg();
  const py = lastJson<{ python: string; numpy: string; blas: string }>(await runChild('python3', ['-c', PYTHON_VERSIONS]), 'python3');
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    ramGiB: os.totalmem() / 2 ** 30,
    caches: await cacheSizes(),
    os: osName(),
    node: process.version,
    python: 'error' in py ? 'unavailable' : py.python,
    numpy: 'error' in py ? 'unavailable' : py.numpy,
    blas: 'error' in py ? 'unavailable' : py.blas,
    thp: transparentHugePages(),
    loadBefore,
    loadAfter: [],
  };
}

function transparentHugePages(): string {
  try {
    return /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function osName(): string {
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return `${pretty ? pretty[1] : os.type()}, kernel ${os.release()}`;
  } catch {
    return `${os.type()} ${os.release()}`;
  }
}

async function cacheSizes(): Promise<string> {
  const result = await runChild('lscpu', []);
  if (result.code !== 0) return 'unknown';
  return result.stdout
    .split('\n')
    .filter((line) => /^L[123]\w* cache:/.test(line))
    .map((line) => line.replace(/\s+/g, ' ').replace(' cache:', ''))
    .join(', ');
}

// ---------------------------------------------------------------------------------------------
// Other load on the machine

export interface CpuSnapshot {
  machineBusyTicks: number;
  oursTicks: number;
  at: number;
}

export const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Other processes' load below which the machine counts as quiet, and above which a part counts as disturbed (cores). */
export const QUIET_CORES = 0.1;
export const NOISY_CORES = 0.25;

export function cpuSnapshot(): CpuSnapshot | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    const busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + (cpu[7] ?? 0);
    const self = readFileSync('/proc/self/stat', 'utf8');
    const fields = self
      .slice(self.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // Fields after the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    const ours = fields[11] + fields[12] + fields[13] + fields[14];
    return { machineBusyTicks: busy, oursTicks: ours, at: performance.now() };
  } catch {
    return null;
  }
}

/** Average number of cores other processes kept busy between two snapshots. */
export function foreignCores(from: CpuSnapshot | null, to: CpuSnapshot | null): number | null {
  if (!from || !to || to.at <= from.at) return null;
  const seconds = (to.at - from.at) / 1e3;
  return Math.max(0, (to.machineBusyTicks - from.machineBusyTicks - (to.oursTicks - from.oursTicks)) / TICKS_PER_SECOND / seconds);
}

/** The fields of a /proc stat file after the command name (the state is [0], the parent [1]); null once it is gone. */
function statFields(path: string): string[] | null {
  try {
    const stat = readFileSync(path, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime so far, in ticks, of a process, or of one of its threads (`tid`); 0 once it is gone. */
export function processTicks(pid: number, tid?: number): number {
  const fields = statFields(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`);
  return fields === null ? 0 : Number(fields[11]) + Number(fields[12]);
}

/** The live children of a process (every thread's). */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** A process of a tree: its CPU ticks so far (user and kernel) and its command line. */
export interface TreeProcess {
  userTicks: number;
  kernelTicks: number;
  cmdline: string;
}

/** A process and all its descendants alive now (pid -> what /proc says of it); null without /proc. */
export function treeProcesses(rootPid: number): Map<number, TreeProcess> | null {
  try {
    const stats = new Map<number, TreeProcess & { ppid: number }>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = statFields(`/proc/${entry}/stat`)?.map(Number);
      if (fields === undefined) continue; // the process ended meanwhile
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
        stats.set(Number(entry), { ppid: fields[1], userTicks: fields[11], kernelTicks: fields[12], cmdline });
      } catch {
        // the process ended meanwhile
      }
    }
    const inTree = (pid: number): boolean => {
      for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
        if (p === rootPid) return true;
        p = stats.get(p)?.ppid ?? 0;
      }
      return false;
    };
    const tree = new Map<number, TreeProcess>();
    for (const [pid, { userTicks, kernelTicks, cmdline }] of stats) if (inTree(pid)) tree.set(pid, { userTicks, kernelTicks, cmdline });
    return tree;
  } catch {
    return null;
  }
}

/**
 * CPU ticks used so far by a process and all its descendants alive now (the service: API, worker
 * children, redis-server).
 */
export function treeCpuTicks(rootPid: number): number | null {
  const tree = treeProcesses(rootPid);
  if (tree === null) return null;
  let ticks = 0;
  for (const p of tree.values()) ticks += p.userTicks + p.kernelTicks;
  return ticks;
}

/** Resident set size now of a process and all its descendants (bytes; the service's tree: API, worker children, redis-server). */
export function treeRssBytes(rootPid: number): number | null {
  try {
    const parents = new Map<number, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // the process ended meanwhile
      }
    }
    let bytes = 0;
    for (const pid of parents.keys()) {
      let p = pid;
      for (let hops = 0; p > 1 && p !== rootPid && hops < 64; hops++) p = parents.get(p) ?? 0;
      if (p !== rootPid) continue;
      try {
        const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
        bytes += Number(statm[1]) * 4096;
      } catch {
        // the process ended meanwhile
      }
    }
    return bytes;
  } catch {
    return null;
  }
}

/**
 * Waits (up to maxSeconds) for a 2 s window in which other processes use under QUIET_CORES;
 * returns the last measurement.
 */
export async function waitForQuiet(maxSeconds: number): Promise<number | null> {
  if (maxSeconds <= 0) return null;
  const deadline = performance.now() + maxSeconds * 1e3;
  let waited = false;
  for (;;) {
    const from = cpuSnapshot();
    await new Promise((r) => setTimeout(r, 2000));
    const load = foreignCores(from, cpuSnapshot());
    if (load === null || load < QUIET_CORES || performance.now() > deadline) {
      if (waited) {
        const state = load !== null && load < QUIET_CORES ? 'quiet now' : 'still busy, going on';
        log(`  ${state} (other processes: ${load?.toFixed(2) ?? '?'} cores)`);
      }
      return load;
    }
    if (!waited) log(`  waiting up to ${maxSeconds} s for a quiet machine: other processes use ${load.toFixed(2)} cores`);
    waited = true;
  }
}
