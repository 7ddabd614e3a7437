/**
 * The time-to-solution calibration (../src/solvers/analysis/calibration.ts measureCalibration) taken `--times`
 * times in one process, as a long-lived worker retakes it every 600 s: prints each take's kernel rates, so that
 * a rate that moves between takes (noise on a shared host, or a loop the engine compiles differently the second
 * time) shows.
 *   node --import tsx bench/calibrationRepeats.ts [typescript|native] [--times 5]
 */
import { parseArgs } from 'node:util';
import { measureCalibration } from '../src/solvers/analysis/calibration.js';
import { selectBackend, type BackendName } from './backends.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { times: { type: 'string', default: '5' } } });
console.log(JSON.stringify(selectBackend((positionals[0] ?? 'native') as BackendName)));
const gb = (bytesPerSecond: number): string => (bytesPerSecond / 1e9).toFixed(1);
for (let take = 1; take <= Number(values.times); take++) {
  const c = measureCalibration();
  console.log(
    `take ${take}: dense ${gb(c.flopsPerSecondInCache)} / ${gb(c.flopsPerSecond)} GFLOP/s (in / out of cache); ` +
      `CSR gradient ${gb(c.bytesPerSecondInCache)} / ${gb(c.bytesPerSecond)} GB/s; CSR loops ${gb(c.csrLoopBytesPerSecondInCache)} / ` +
      `${gb(c.csrLoopBytesPerSecond)} GB/s; vector loop ${gb(c.vectorBytesPerSecond)} GB/s; consensus entry ` +
      `${(c.consensusEntrySeconds * 1e9).toFixed(2)} ns; factor column ${(c.factorColumnSeconds * 1e9).toFixed(2)} ns`,
  );
}
