/**
 * The time-to-solution calibration (../src/solvers/analysis/calibration.ts measureCalibration) taken `--times`
 * times in one process, as a long-lived worker retakes it every 600 s, or once in each of `--processes` fresh
 * processes, as each worker child takes its first (the one it prices its jobs by for 600 s): prints each take's
 * kernel rates and the dense fixed costs per iteration, then each figure's spread over the takes (largest over
 * smallest), so that a rate that moves between takes (noise on a shared host, code the engine has not optimized
 * yet in a process's first take) shows.
 *   node --import tsx bench/calibrationRepeats.ts [typescript|native] [--times 5 | --processes 8]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measureCalibration, type Calibration } from '../src/solvers/analysis/calibration.js';
import { selectBackend, type BackendName } from './backends.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    times: { type: 'string', default: '5' },
    processes: { type: 'string', default: '0' },
    child: { type: 'boolean', default: false },
  },
});
const backend = (positionals[0] ?? 'native') as BackendName;

/** The figures compared between takes, in the units printed. */
function figures(c: Calibration): Record<string, number> {
  const o = c.overheads;
  const us = (s: number): number => s * 1e6;
  return {
    'dense GFLOP/s in cache': c.flopsPerSecondInCache / 1e9,
    'dense GFLOP/s': c.flopsPerSecond / 1e9,
    'products GFLOP/s in cache': c.productFlopsPerSecondInCache / 1e9,
    'products GFLOP/s': c.productFlopsPerSecond / 1e9,
    'triangle ns/entry': c.triangleEntrySeconds * 1e9,
    'call us': us(c.perMachineOverheadSeconds),
    'CSR gradient GB/s in cache': c.bytesPerSecondInCache / 1e9,
    'CSR gradient GB/s': c.bytesPerSecond / 1e9,
    'CSR loops GB/s': c.csrLoopBytesPerSecond / 1e9,
    'factor GB/s': c.factorBytesPerSecond / 1e9,
    'vector GB/s': c.vectorBytesPerSecond / 1e9,
    'step GB/s': c.stepBytesPerSecond / 1e9,
    ...(o === null
      ? {}
      : Object.fromEntries(
          Object.entries(o).map(([id, { dense }]) => [`${id} dense fixed us (m = 4)`, us(dense.perIteration + 4 * dense.perMachine)]),
        )),
  };
}

function takeInThisProcess(): Record<string, number> {
  return figures(measureCalibration());
}

function takeInFreshProcess(): Record<string, number> {
  const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), backend, '--child'], {
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
}

if (values.child) {
  selectBackend(backend);
  console.log(JSON.stringify(takeInThisProcess()));
} else {
  console.log(JSON.stringify(selectBackend(backend)));
  const processes = Number(values.processes);
  const takes: Record<string, number>[] = [];
  const count = processes > 0 ? processes : Number(values.times);
  for (let take = 1; take <= count; take++) {
    const f = processes > 0 ? takeInFreshProcess() : takeInThisProcess();
    takes.push(f);
    console.log(
      `take ${take}${processes > 0 ? ' (fresh process)' : ''}: ${Object.entries(f)
        .map(([k, v]) => `${k} ${v.toPrecision(3)}`)
        .join('; ')}`,
    );
  }
  console.log('spread over the takes (largest / smallest):');
  for (const key of Object.keys(takes[0] ?? {})) {
    const v = takes.map((t) => t[key]);
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    console.log(`  ${key.padEnd(28)} ${lo.toPrecision(3)} .. ${hi.toPrecision(3)}  ${lo > 0 ? (hi / lo).toFixed(2) : 'n/a'}x`);
  }
}
