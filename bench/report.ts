/**
 * The benchmark's output: the console lines while it runs, and the markdown report (bench/results.md)
 * rendered from a run's raw results and its evaluated targets (bench/targets.ts).
 */
import { AGREEMENT_KEYS, agreementPairs, fixtureSummary, relativeDifference } from './agreement.js';
import type { BackendName } from './backends.js';
import type { AnalysisPhases, SideReport, StageName } from './common.js';
import { FLOAT64_BYTES, SPARSE_STAGE_NAMES, STAGE_NAMES, formatBytes, formatExponential, formatRatio, formatSeconds } from './common.js';
import type { SparseSideReport, SparseStageName } from './common.js';
import type { E2eResult } from './endToEnd.js';
import { asksForHugePages } from '../src/jobs/sandboxChild.js';
import { NOISY_CORES } from './machineProbe.js';
import {
  bestStream,
  isReport,
  isSparseReport,
  secondsPerIteration,
  type ProblemResult,
  type RunRecord,
  type SparseProblemResult,
} from './record.js';
import { measureRatio, ratioTargetId, targetRatio, type TargetRow } from './targets.js';

const STAGE_LABELS: Record<StageName, string> = {
  setup: 'partition + bases (QR of each A_i^T)',
  analysis: 'full analysis',
  streamMatrix: 'stream A once',
  apcIteration: 'one APC iteration',
  dhbmIteration: 'one D-HBM iteration',
  apcSolve: 'APC solve to 1e-8 (capped)',
  dhbmSolve: 'D-HBM solve to 1e-8 (capped)',
};

/** Words broken over source lines, joined into one line of the report. */
const prose = (...parts: string[]): string => parts.join(' ');

export function metText(met: boolean | null): string {
  return met === null ? 'n/a' : met ? 'met' : 'MISSED';
}

// ---------------------------------------------------------------------------------------------
// Console

/** A problem's console table: every stage on every side, with the ratios to NumPy. */
export function problemLines(result: ProblemResult, backends: BackendName[]): string[] {
  const { spec, sides } = result;
  const numpy = sides.numpy;
  const lines = [`\n${spec.name} (n = ${spec.n}, m = ${spec.m})`];
  for (const side of [...backends, 'numpy']) {
    const s = sides[side];
    if (!isReport(s)) lines.push(`  ${side}: FAILED ${s?.error ?? ''}`);
  }
  const header = [
    'stage'.padEnd(38),
    ...backends.map((b) => b.padStart(11)),
    'numpy'.padStart(11),
    ...backends.map((b) => `${b}/np`.padStart(15)),
  ];
  lines.push(`  ${header.join(' ')}`);
  for (const stage of STAGE_NAMES) {
    const time = (side: string): number | null => (isReport(sides[side]) ? sides[side].stages[stage] : null);
    const ratio = (side: string): number | null => {
      const ours = sides[side];
      if (!isReport(ours) || !isReport(numpy)) return null;
      if (stage === 'apcSolve' || stage === 'dhbmSolve') return secondsPerIteration(ours[stage]) / secondsPerIteration(numpy[stage]);
      return ours.stages[stage] / numpy.stages[stage];
    };
    const row = [
      STAGE_LABELS[stage].padEnd(38),
      ...backends.map((b) => formatSeconds(time(b)).padStart(11)),
      formatSeconds(time('numpy')).padStart(11),
      ...backends.map((b) => `${formatRatio(ratio(b))}${stage.endsWith('Solve') ? ' /it' : ''}`.padStart(15)),
    ];
    lines.push(`  ${row.join(' ')}`);
  }
  const rss = [...backends, 'numpy'].map((side) => `${side} ${isReport(sides[side]) ? formatBytes(sides[side].peakRssBytes) : '—'}`);
  const otherLoad = result.otherLoadCores === null ? '?' : result.otherLoadCores.toFixed(2);
  lines.push(`  peak RSS: ${rss.join(', ')}; other processes used ${otherLoad} cores meanwhile`);
  return lines;
}

const SPARSE_STAGE_LABELS: Record<SparseStageName, string> = {
  setup: 'partition + Gram factorizations',
  analysis: 'whole analysis',
  dhbmIteration: 'one D-HBM iteration',
  apcIteration: 'one APC iteration',
};

/** A sparse problem's console table: every stage on every side, with the ratios to SciPy. */
export function sparseProblemLines(result: SparseProblemResult, backends: BackendName[]): string[] {
  const { spec, sides } = result;
  const lines = [`\n${spec.name} (${spec.label}; n = ${spec.n}, nnz = ${spec.nnz}, m = ${spec.m}; CSR)`];
  for (const side of [...backends, 'numpy']) {
    const s = sides[side];
    if (!isSparseReport(s)) lines.push(`  ${side}: FAILED ${s?.error ?? ''}`);
  }
  lines.push(
    `  ${['stage'.padEnd(34), ...backends.map((b) => b.padStart(11)), 'scipy'.padStart(11), ...backends.map((b) => `${b}/sp`.padStart(15))].join(' ')}`,
  );
  for (const stage of SPARSE_STAGE_NAMES) {
    const time = (side: string): number | null => {
      const s = sides[side];
      return isSparseReport(s) ? (s.stages[stage] ?? null) : null;
    };
    const ratio = (side: string): number | null => {
      const ours = time(side);
      const scipy = time('numpy');
      return ours === null || scipy === null ? null : ours / scipy;
    };
    const row = [
      SPARSE_STAGE_LABELS[stage].padEnd(34),
      ...backends.map((b) => formatSeconds(time(b)).padStart(11)),
      formatSeconds(time('numpy')).padStart(11),
      ...backends.map((b) => formatRatio(ratio(b)).padStart(15)),
    ];
    lines.push(`  ${row.join(' ')}`);
  }
  const rss = [...backends, 'numpy'].map((side) => {
    const s = sides[side];
    return `${side} ${isSparseReport(s) ? formatBytes(s.peakRssBytes) : '—'}`;
  });
  lines.push(`  peak RSS: ${rss.join(', ')}; other processes used ${result.otherLoadCores?.toFixed(2) ?? '?'} cores meanwhile`);
  return lines;
}

/** The targets on the console: result, target, backend, measurement, and what limits a missed one. */
export function targetLines(rows: TargetRow[]): string[] {
  const lines = ['\ntargets'];
  for (const t of rows) {
    lines.push(`  ${metText(t.met).padEnd(7)} ${t.target} [${t.backend}]: ${t.measured}`);
    if (t.limits) lines.push(`          limited by ${t.limits}`);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Summary

/** The report's summary (at most 13 lines), its figures read from the target rows. */
export function summaryLines(record: RunRecord, rows: TargetRow[]): string[] {
  const lines: string[] = [];
  const n2000m10 = 'gaussian-n2000-m10';
  const n2000m50 = 'gaussian-n2000-m50';
  const target = (measure: Parameters<typeof ratioTargetId>[0], problem: string, backend: BackendName): string =>
    formatRatio(targetRatio(rows, ratioTargetId(measure, problem, backend)));
  // Not a target: sherman5 shows the sparse case.
  const sherman5 = (backend: BackendName, stage: StageName): string =>
    formatRatio(measureRatio(record, 'sherman5-m10', backend, { stage })?.ratio);
  lines.push(
    prose(
      `Measured by \`${record.command}\` (${record.date.slice(0, 10)}, ${record.machine.cpu}, ${record.machine.cores} cores)`,
      `against NumPy ${record.machine.numpy} with ${record.machine.blas} in the same run; ratio = our time / NumPy's, below 1 is faster.`,
    ),
  );
  for (const backend of record.backends) {
    const apc = { stage: 'apcIteration' } as const;
    const dhbm = { stage: 'dhbmIteration' } as const;
    const name =
      backend === 'native' ? 'Native (OpenBLAS) backend' : 'TypeScript backend (no native code; row kernels in WebAssembly SIMD)';
    lines.push(
      prose(
        `- ${name}: one APC iteration at n = 2000 ${target(apc, n2000m10, backend)} (m = 10) / ${target(apc, n2000m50, backend)} (m = 50),`,
        `one D-HBM iteration ${target(dhbm, n2000m10, backend)} / ${target(dhbm, n2000m50, backend)},`,
        `the full analysis at n = 1000, m = 10 ${target({ stage: 'analysis' }, 'gaussian-n1000-m10', backend)};`,
        `on sherman5 (n = 3312, sparse) ${sherman5(backend, 'apcIteration')} per APC iteration`,
        `and ${sherman5(backend, 'analysis')} for the analysis.`,
      ),
    );
  }
  if (record.backends.includes('typescript')) {
    const plain = (stage: 'apcIteration' | 'dhbmIteration', problem: string): string =>
      target({ plainLoops: stage }, problem, 'typescript');
    lines.push(
      prose(
        '- The TypeScript backend on its plain loops (LINALG_WASM=off, or no WebAssembly SIMD):',
        `one APC iteration at n = 2000 ${plain('apcIteration', n2000m10)} / ${plain('apcIteration', n2000m50)},`,
        `one D-HBM iteration ${plain('dhbmIteration', n2000m10)} / ${plain('dhbmIteration', n2000m50)}.`,
      ),
    );
  }
  if (!record.backends.includes('native'))
    lines.push(`- Native backend: not measured (${record.backendNotes.join(' ') || 'not available'}).`);
  const memory = rows.filter((r) => r.kind === 'memory').map((r) => `${r.backend}: ${r.measured}`);
  if (memory.length) lines.push(`- Memory: ${memory.join('; ')}.`);
  const e2eRow = rows.find((r) => r.kind === 'service');
  if (e2eRow)
    lines.push(`- End to end (analyze jobs n = 50, m = 5 through HTTP, BullMQ, Redis and the worker, SSE, loopback): ${e2eRow.measured}.`);
  const agreement = rows.filter((r) => r.kind === 'agreement' || r.kind === 'fixtures');
  if (agreement.length) {
    const verdict = agreement.every((r) => r.met === true)
      ? 'every analysis value agrees across backends and with NumPy within the fixture tolerances, and both backends reproduce all fixtures'
      : 'see Targets: some values disagree';
    lines.push(`- Agreement: ${verdict}.`);
  }
  const met = rows.filter((r) => r.met === true).length;
  const missed = rows.filter((r) => r.met === false);
  const missedList = missed.length ? ` (${missed.map((r) => `${r.target} [${r.backend}]`).join('; ')})` : '';
  lines.push(`- Targets: ${met} met, ${missed.length} missed${missedList}; what limits each is in the Targets table.`);
  return lines.slice(0, 13);
}

// ---------------------------------------------------------------------------------------------
// Tables

function md(rows: string[][]): string {
  const [head, ...body] = rows;
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function problemLabel(result: ProblemResult): string {
  const { spec } = result;
  return `${spec.name.replace(/-m\d+$/, '')} (n=${spec.n}, m=${spec.m})`;
}

function sidesOf(record: RunRecord): string[] {
  return [...record.backends, 'numpy'];
}

function targetTable(rows: TargetRow[]): string {
  return md([
    ['target', 'backend', 'measured (ratio = ours / NumPy)', 'target', 'result', 'what limits it'],
    ...rows.map((t) => [t.target, t.backend, t.measured, t.threshold, metText(t.met), t.limits]),
  ]);
}

/** Stage table: rows = problems, columns = each backend, NumPy and each ratio. */
function stageTable(record: RunRecord, stage: StageName): string {
  const { backends } = record;
  const head = ['problem', ...backends.map((b) => `ours (${b})`), 'NumPy', ...backends.map((b) => `ratio ${b}/NumPy`)];
  const rows = record.problems.map((result) => {
    const { sides } = result;
    const numpy = sides.numpy;
    return [
      problemLabel(result),
      ...backends.map((b) => (isReport(sides[b]) ? formatSeconds(sides[b].stages[stage]) : 'failed')),
      isReport(numpy) ? formatSeconds(numpy.stages[stage]) : 'failed',
      ...backends.map((b) => {
        const s = sides[b];
        return isReport(s) && isReport(numpy) ? formatRatio(s.stages[stage] / numpy.stages[stage]) : '—';
      }),
    ];
  });
  return md([head, ...rows]);
}

function solveTable(record: RunRecord, which: 'apcSolve' | 'dhbmSolve'): string {
  const head = [
    'problem',
    'side',
    'iterations',
    'final relative residual',
    'stopped by',
    'time',
    'time / iteration',
    'ratio / iteration vs NumPy',
    'time / iteration ÷ best single iteration',
  ];
  const rows: string[][] = [];
  for (const result of record.problems) {
    const numpy = result.sides.numpy;
    for (const side of sidesOf(record)) {
      const s = result.sides[side];
      if (!isReport(s)) continue;
      const r = s[which];
      rows.push([
        problemLabel(result),
        side,
        String(r.iterations),
        formatExponential(r.relativeResidual),
        r.stop,
        formatSeconds(r.seconds),
        formatSeconds(secondsPerIteration(r)),
        side !== 'numpy' && isReport(numpy) ? formatRatio(secondsPerIteration(r) / secondsPerIteration(numpy[which])) : '',
        formatRatio(secondsPerIteration(r) / s.stages[which === 'apcSolve' ? 'apcIteration' : 'dhbmIteration']),
      ]);
    }
  }
  return md([head, ...rows]);
}

function memoryTable(record: RunRecord): string {
  const sides = sidesOf(record);
  const head = [
    'problem',
    'one n x n',
    ...sides.map((s) => `peak RSS ${s}`),
    ...sides.map((s) => `analysis holds (n x n) ${s}`),
    ...sides.map((s) => `process growth (n x n) ${s}`),
  ];
  const rows = record.problems.map((result) => {
    const matrixBytes = result.spec.n * result.spec.n * FLOAT64_BYTES;
    const each = (f: (r: SideReport) => string) => sides.map((s) => (isReport(result.sides[s]) ? f(result.sides[s]) : '—'));
    return [
      problemLabel(result),
      formatBytes(matrixBytes),
      ...each((r) => formatBytes(r.peakRssBytes)),
      ...each((r) => (r.analysisGrowthBytes / matrixBytes).toFixed(1)),
      ...each((r) => ((r.peakRssBytes - r.baselineRssBytes) / matrixBytes).toFixed(1)),
    ];
  });
  return md([head, ...rows]);
}

function phaseTable(record: RunRecord): string {
  const phases: (keyof AnalysisPhases)[] = ['kappaAtA', 'principalAngles', 'kappaS', 'localAngles'];
  const head = ['problem', 'side', 'kappa(A^T A)', 'Gram blocks + principal angles', 'kappa(S)', 'local angles (row cosines)', 'total'];
  const rows: string[][] = [];
  for (const result of record.problems) {
    for (const side of sidesOf(record)) {
      const r = result.sides[side];
      if (!isReport(r)) continue;
      rows.push([problemLabel(result), side, ...phases.map((p) => formatSeconds(r.analysisPhases[p])), formatSeconds(r.stages.analysis)]);
    }
  }
  return md([head, ...rows]);
}

function rooflineTable(record: RunRecord): string {
  const sides = sidesOf(record);
  const head = [
    'problem',
    'A (MiB)',
    'stream: ours (1 thread)',
    'stream: NumPy sum / gemv',
    'best GB/s',
    ...sides.map((s) => `APC it. ${s} (passes)`),
    ...sides.map((s) => `D-HBM it. ${s} (passes)`),
  ];
  const rows = record.problems.map((result) => {
    const results = result.sides;
    const best = bestStream(results);
    const bytes = result.spec.n * result.spec.n * FLOAT64_BYTES;
    // Our streaming pass runs in each backend's process; its speed varies between processes (page placement), so the best.
    const oursStream = Math.min(
      ...record.backends
        .map((b) => results[b])
        .filter(isReport)
        .map((r) => r.stream.sum8),
    );
    const np = results.numpy;
    const passes = (stage: 'apcIteration' | 'dhbmIteration') => (s: string) => {
      const r = results[s];
      return isReport(r) ? `${formatSeconds(r.stages[stage])} (${(r.stages[stage] / best).toFixed(1)})` : '—';
    };
    return [
      problemLabel(result),
      (bytes / 2 ** 20).toFixed(1),
      formatSeconds(oursStream),
      isReport(np) ? `${formatSeconds(np.stream.sum)} / ${formatSeconds(np.stream.gemv)}` : '—',
      Number.isFinite(best) ? (bytes / best / 1e9).toFixed(1) : '—',
      ...sides.map(passes('apcIteration')),
      ...sides.map(passes('dhbmIteration')),
    ];
  });
  return md([head, ...rows]);
}

function agreementTable(record: RunRecord): string {
  const head = ['problem', 'compared', ...AGREEMENT_KEYS.map(([k]) => k), 'eps·kappa(S)', 'eps·sqrt(kappa(A^T A))'];
  const rows: string[][] = [];
  for (const result of record.problems) {
    for (const [a, b] of agreementPairs(record)) {
      const x = result.sides[a];
      const y = result.sides[b];
      if (!isReport(x) || !isReport(y)) continue;
      rows.push([
        problemLabel(result),
        `${a} vs ${b}`,
        ...AGREEMENT_KEYS.map(([, get]) => formatExponential(relativeDifference(get(x), get(y)))),
        formatExponential(Number.EPSILON * y.values.kappaS),
        formatExponential(Number.EPSILON * Math.sqrt(y.values.kappaAtA)),
      ]);
    }
  }
  return md([head, ...rows]);
}

function loadTable(e2e: E2eResult): string {
  const head = [
    'clients',
    'stopped by',
    'submitted',
    'succeeded',
    'failed',
    'rejected',
    'unfinished',
    'window',
    'throughput',
    'p50',
    'p90',
    'p99',
    'max',
    'POST p50 / p99',
    'CPU: service / load generator (cores)',
  ];
  const rows = e2e.loads.map((l) => [
    String(l.concurrency),
    l.stoppedBy,
    String(l.submitted),
    String(l.succeeded),
    String(l.failed),
    Object.entries(l.rejected)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || '0',
    String(l.unfinished),
    `${l.windowSeconds.toFixed(1)} s`,
    `${l.throughput.toFixed(1)} jobs/s`,
    ...(l.latencyMs
      ? [l.latencyMs.p50, l.latencyMs.p90, l.latencyMs.p99, l.latencyMs.max].map((x) => `${x.toFixed(0)} ms`)
      : ['—', '—', '—', '—']),
    l.submitMs ? `${l.submitMs.p50.toFixed(1)} / ${l.submitMs.p99.toFixed(1)} ms` : '—',
    `${l.serviceCores === null ? '?' : l.serviceCores.toFixed(2)} / ${l.loadCores.toFixed(2)}`,
  ]);
  return md([head, ...rows]);
}

// ---------------------------------------------------------------------------------------------
// The report

export function renderMarkdown(record: RunRecord, rows: TargetRow[]): string {
  const { machine } = record;
  const out: string[] = [];
  out.push('# Benchmark results', '');
  out.push('Generated by `bench/run.ts`; do not edit by hand. The numbers below are from one run on the machine described.', '');
  out.push('## Summary', '', ...summaryLines(record, rows), '');
  out.push(...runSection(record), '');
  out.push('## Targets', '');
  out.push(targetTable(rows));
  out.push('');
  out.push('## Stages', '');
  out.push('Wall time per stage; ratio = ours / NumPy (below 1: ours is faster).', '');
  for (const stage of ['setup', 'analysis', 'apcIteration', 'dhbmIteration'] as const) {
    out.push(`### ${STAGE_LABELS[stage]}`, '', stageTable(record, stage), '');
  }
  out.push('### Analysis by phase', '', phaseTable(record), '');
  out.push('### Full solves', '');
  out.push(
    prose(
      'Gaussian mean-1 matrices are badly conditioned (kappa(A^T A) ~ 1e7..1e10 here), so a solve to 1e-8 takes 1e4..1e6 iterations:',
      'most runs stop on the wall-clock budget, and the comparable number is the time per iteration (the runs include construction and,',
      'on our side, the runner: trace, divergence checks, final residual).',
      'The last column compares the sustained rate with the best single iteration: well above 1 means the long run was slowed,',
      'by per-iteration overhead or by other load on the machine',
      '(OpenBLAS splitting a gemv over both cores waits for the slower one when a core is busy).',
    ),
    '',
  );
  out.push('#### APC', '', solveTable(record, 'apcSolve'), '', '#### D-HBM', '', solveTable(record, 'dhbmSolve'), '');
  out.push('## Memory', '');
  out.push(
    prose(
      "Peak RSS of each problem's process (the analysis is its largest stage), and the growth over the process's baseline",
      '(runtime + libraries, before the matrix is read) in units of one n x n float64 matrix; A itself counts as 1.',
    ),
    '',
  );
  out.push(memoryTable(record), '');
  out.push('## Roofline', '');
  out.push(
    prose(
      'One stream pass = the fastest read of every entry of A measured in this run for that problem:',
      'ours is a single-threaded reduction with eight accumulators,',
      "NumPy's `A.sum()` (one thread) and `A @ ones` (OpenBLAS gemv, all threads).",
      '"passes" = iteration time / that time.',
      'Minimum passes per iteration: our APC reads each Q_i^T twice (2 passes; its residual comes from R^T w_i, no pass over A),',
      'our D-HBM reads A once (fused A^T (A x - b));',
      "NumPy's APC reads each Q_i twice and A once for the residual (3), its D-HBM reads A twice (2).",
      "The machine's caches are large (see Run): up to n = 2000 (31 MiB) A may be served from cache rather than DRAM.",
      'Our single-threaded pass is the best over our processes: its speed varies between processes',
      '(up to ~3x at n = 2000, with where the pages land); NumPy also asks for transparent huge pages for large arrays',
      `(madvise; this kernel's THP setting: ${machine.thp}), V8's ArrayBuffers do not.`,
    ),
    '',
  );
  out.push(rooflineTable(record), '');
  out.push('## Agreement', '');
  out.push(
    prose(
      "Relative differences of the analysis values. NumPy's eigvalsh of the formed S knows lambda_min(S) only to ~eps·kappa(S) relative,",
      'its SVD sigma_min to ~eps·kappa(A) (kappa(A^T A) to twice that); ours works with A and Q unsquared.',
      "Differences of that size are the reference's rounding, not disagreement.",
      'The targets count a value as agreeing within the tolerances of test/solvers/analysis/fixtures.test.ts,',
      'with the second side of each pair as the reference: kappa(S) relative max(1e-6, 4 eps kappa(S)),',
      'kappa(A^T A) relative max(1e-6, 8 eps sqrt(kappa(A^T A))), angles 1e-9 absolute,',
      "rates 1e-9 absolute (or the condition number's tolerance times the rate's sensitivity), the row-norm ratio 1e-9 relative.",
    ),
    '',
  );
  out.push(agreementTable(record), '');
  out.push(
    prose(
      'Fixtures (the shared reference fixtures of NumPy/SciPy values, heterogeneity cases; test/reference vendors a copy;',
      'tolerances of test/solvers/analysis/fixtures.test.ts):',
    ),
    '',
  );
  for (const backend of record.backends) out.push(`- ${backend}: ${fixtureSummary(record.fixtures[backend])}`);
  out.push('');
  out.push(...endToEndSection(record.e2e));
  out.push('');
  out.push(...sparseSection(record), '');
  out.push(...jobPathSection(record), '');
  out.push(...httpSolveSection(record), '');
  out.push('## Notes', '');
  out.push(
    prose(
      '- What NumPy computes (bench/reference.py): QR of each A_i^T (numpy.linalg.qr),',
      'cos theta_ij = sigma_max(Q_a^T Q_b) with the sine route when that cosine exceeds 0.9 (docs/SPEC.md),',
      '|u_k·u_l| for all row pairs as one GEMM, eigvalsh of the formed S = Q Q^T, SVD of A;',
      'APC as Q_i (Q_i^T v) with the residual |A xbar - b| each iteration; D-HBM as A^T (A x - b) with two gemv.',
      'A competent by-hand implementation, dense throughout',
      "(also for the sparse sherman5: ours works on each machine's column support there).",
    ),
    prose(
      '- Ratios below 1 mean ours is faster. Single iterations are best-of-k; the expensive stages at n ≥ 1000 are single runs.',
      'Between runs on a quiet machine a ratio moves by up to ~10-20 %, and the TypeScript iterations that run on two worker threads',
      'by up to 2-3x (their best step depends on how the threads are scheduled),',
      'so a ratio within ~10 % of its target is a tie rather than a clear pass or miss.',
    ),
  );
  for (const note of record.backendNotes) out.push(`- ${note}`);
  out.push('');
  return out.join('\n');
}

function runSection(record: RunRecord): string[] {
  const { machine, policy: p } = record;
  const loadAverages = (loads: number[]): string => loads.map((x) => x.toFixed(2)).join(', ');
  const loads = record.problems.map((q) => {
    const cores = q.otherLoadCores === null ? '?' : q.otherLoadCores.toFixed(2);
    return `${q.spec.name} ${cores}${q.attempts > 1 ? ` (quietest of ${q.attempts} runs)` : ''}`;
  });
  if (record.e2e) loads.push(`end to end ${record.e2e.otherLoadCores === null ? '?' : record.e2e.otherLoadCores.toFixed(2)}`);
  return [
    '## Run',
    '',
    `- Date: ${record.date}`,
    `- Command: \`${record.command}\` (total ${(record.totalSeconds / 60).toFixed(1)} min)`,
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.ramGiB.toFixed(0)} GiB RAM (${machine.caches}); ${machine.os}`,
    `- Software: Node ${machine.node}; Python ${machine.python}, NumPy ${machine.numpy}, ${machine.blas}`,
    `- Load average (1, 5, 15 min) before: ${loadAverages(machine.loadBefore)}; after: ${loadAverages(machine.loadAfter)}.`,
    prose(
      `- Other processes' CPU use while each part ran (cores of ${machine.cores}; from /proc/stat minus this benchmark's processes):`,
      `${loads.join(', ')}. Anything well above 0 inflates the times of that part, NumPy's most`,
      '(its OpenBLAS splits work over both cores and waits for the slower).',
    ),
    `- Backends measured: ${record.backends.join(', ')}${record.backendNotes.length ? `. ${record.backendNotes.join(' ')}` : ''}`,
    prose(
      '- Policy (same on both sides): one warm-up of setup + analysis on a 64 x 64 Gaussian system;',
      `setup and analysis best of 3 runs for n ≤ 500, 1 run above${p.repeatScale !== 1 ? ` (scaled by ${p.repeatScale})` : ''};`,
      'single iterations: untimed steps for 0.25 s (at least 5; V8 needs a few hundred steps of a small problem to run optimized code),',
      'then best of 50 (n ≤ 500) or 30 (larger);',
      `full solves from the standard start (construction included) to |Ax - b|/|b| ≤ ${p.tolerance},`,
      `capped at ${p.maxSolveIterations} iterations and ${p.solveBudgetSeconds} s of wall clock each.`,
      tunablesPolicy(record.glibcTunables),
      `Shared machine: before each problem and the load test the run waits up to ${record.quiet.waitSeconds} s`,
      'for other processes to leave the cores idle, and repeats a problem during which they used more than',
      `${NOISY_CORES} core (${record.quiet.retries} time(s) at most, keeping the quietest run).`,
    ),
    prose(
      '- Ours: each problem in a fresh `node --import tsx bench/stages.ts` process per backend, through the library API (no HTTP).',
      'NumPy: `python3 bench/reference.py` in its own process, reading the same bytes.',
      'Peak RSS: `process.resourceUsage().maxRSS` / `ru_maxrss`.',
    ),
  ];
}

/** The Policy line's sentence on the timed processes' GLIBC_TUNABLES, as the record holds it. */
function tunablesPolicy(tunables: string | undefined): string {
  if (tunables === undefined) return 'This record does not say which GLIBC_TUNABLES its processes ran with (it predates the field).';
  if (!asksForHugePages(tunables)) return `Every process ran with GLIBC_TUNABLES=${tunables || '(unset)'}, without glibc.malloc.hugetlb=1.`;
  return [
    `Every process runs with GLIBC_TUNABLES=${tunables}, as the service's job processes do (JOB_HUGE_PAGES):`,
    'malloc advises transparent huge pages for large arrays, as NumPy does for its own.',
  ].join(' ');
}

function endToEndSection(e2e: E2eResult | null): string[] {
  const out = ['## End to end (HTTP, BullMQ, Redis, worker)', ''];
  if (!e2e) {
    out.push('Not run (--no-e2e).');
    return out;
  }
  const config = Object.entries(e2e.config)
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');
  out.push(`- Service: ${config}; ready after ${e2e.serviceStartSeconds.toFixed(1)} s.`);
  if (e2e.error) out.push(`- Failed: ${e2e.error}`);
  const first = e2e.loads[0];
  if (first) {
    out.push(
      prose(
        '- Load: `bench/load.ts` in a second process on loopback, once per concurrency level against the same service;',
        `each level: ${first.warmupJobs} warm-up jobs (not counted), then a closed loop of that many clients,`,
        `each submitting an analyze job (gaussian n = ${first.n}, mean 1, distinct seeds; partition { machines: ${first.m} })`,
        'and following it on its SSE stream (GET /v1/jobs/{id}/events, no polling) to the final status;',
        `bounded by ${first.jobLimit} jobs and ${first.secondsLimit} s per level. Latency = POST sent to final status event received.`,
        'In a closed loop latency ≈ clients / throughput, so the levels trace the throughput-latency curve.',
      ),
    );
    out.push('');
    out.push(loadTable(e2e));
  }
  return out;
}

function sparseSection(record: RunRecord): string[] {
  const out = ['## Sparse (CSR storage, against SciPy)', ''];
  const problems = record.sparse ?? [];
  if (problems.length === 0) return [...out, 'Not run.'];
  out.push(
    prose(
      "Each problem in CSR, never densified: ours through the library on CSR storage (`bench/sparseStages.ts`: each machine's CSR rows",
      'and a sparse Cholesky of A_i A_i^T), SciPy in `bench/reference.py` on the same arrays: row slices of a `csr_matrix`, `splu` of each',
      "A_i A_i^T (MMD_AT_PLUS_A ordering) for APC's projections, D-HBM's gradient as `A.T @ (A @ x - b)` on the whole matrix and per machine",
      'on its column support (the faster kept), the analysis with ARPACK (`eigsh`, tol 1e-8) on A^T A and S, shift-invert through `splu`.',
      'Single iterations: best of k after warm-up steps; setup and analysis: single runs above n = 20,000.',
      'The analysis runs only up to the `--sparse-analysis-max-n` of the run.',
    ),
    '',
  );
  const sides = [...record.backends, 'numpy'];
  const head = [
    'problem',
    'n',
    'nnz',
    'm',
    'stage',
    ...sides.map((s) => (s === 'numpy' ? 'SciPy' : s)),
    ...record.backends.map((b) => `${b} / SciPy`),
  ];
  const rows: string[][] = [];
  for (const result of problems) {
    for (const stage of SPARSE_STAGE_NAMES) {
      const time = (side: string): number | undefined => {
        const r = result.sides[side];
        return isSparseReport(r) ? r.stages[stage] : undefined;
      };
      if (sides.every((side) => time(side) === undefined)) continue;
      rows.push([
        result.spec.name,
        String(result.spec.n),
        String(result.spec.nnz),
        String(result.spec.m),
        SPARSE_STAGE_LABELS[stage],
        ...sides.map((side) => (isSparseReport(result.sides[side]) ? formatSeconds(time(side)) : 'failed')),
        ...record.backends.map((b) => {
          const ours = time(b);
          const scipy = time('numpy');
          return ours !== undefined && scipy !== undefined ? formatRatio(ours / scipy) : '—';
        }),
      ]);
    }
  }
  out.push(md([head, ...rows]), '');
  const memoryHead = [
    'problem',
    ...sides.map((s) => `peak RSS ${s === 'numpy' ? 'SciPy' : s}`),
    'threads (APC / D-HBM)',
    'other load (cores)',
  ];
  out.push(
    md([
      memoryHead,
      ...problems.map((result) => {
        const ts = result.sides[record.backends[0]];
        return [
          result.spec.name,
          ...sides.map((side) => {
            const r = result.sides[side];
            return isSparseReport(r) ? formatBytes(r.peakRssBytes) : `failed: ${r?.error.slice(0, 80) ?? ''}`;
          }),
          isSparseReport(ts) ? `${String(ts.environment.apcThreads)} / ${String(ts.environment.dhbmThreads)}` : '—',
          result.otherLoadCores === null ? '?' : result.otherLoadCores.toFixed(2),
        ];
      }),
    ]),
  );
  const agreeing = problems.filter((p) => isSparseReport(p.sides.numpy) && p.sides.numpy.values !== null);
  if (agreeing.length > 0) {
    out.push(
      '',
      'Analysis values, largest relative difference to SciPy (kappa(S), lambda_min(S), lambda_max(S), kappa(A^T A), theta_H):',
      '',
    );
    for (const result of agreeing) {
      const scipy = result.sides.numpy as SparseSideReport;
      for (const backend of record.backends) {
        const ours = result.sides[backend];
        if (!isSparseReport(ours) || ours.values === null || scipy.values === null) continue;
        const theirs = scipy.values;
        const mine = ours.values;
        const diffs = (Object.keys(theirs) as (keyof typeof theirs)[]).map((k) => relativeDifference(mine[k], theirs[k]) ?? NaN);
        out.push(`- ${result.spec.name}, ${backend}: ${formatExponential(Math.max(...diffs))}`);
      }
    }
  }
  return out;
}

function jobPathSection(record: RunRecord): string[] {
  const out = ['## Job path (the same run through the library and through a job)', ''];
  const reports = Object.entries(record.jobPath ?? {});
  if (reports.length === 0) return [...out, 'Not run.'];
  out.push(
    prose(
      "`bench/jobPath.ts`: the same solve run (same matrix, partition, algorithm, iteration count, trace cap) through the library's runner",
      "in one process, then as a job of the service (HTTP, BullMQ, Redis, the worker's sandboxed child, time slices, progress events),",
      "each timed by the runner's wallTimeMs (creation, threads' start, iterations, trace) over the iterations. Dense: a Gaussian generator",
      'job; CSR: a 2-D Poisson matrix uploaded to POST /v1/matrices and named by the job.',
    ),
    '',
  );
  const rows: string[][] = [];
  for (const [backend, report] of reports) {
    if (!('cases' in report)) {
      rows.push([backend, `failed: ${report.error}`, '', '', '', '', '', '']);
      continue;
    }
    for (const c of report.cases)
      rows.push([
        backend,
        c.storage,
        c.problem,
        c.algorithm,
        String(c.iterations),
        `${c.libraryMsPerIteration.toFixed(3)} ms (${c.libraryThreads} thread(s))`,
        `${c.jobMsPerIteration.toFixed(3)} ms`,
        formatRatio(c.ratio),
      ]);
    if (report.error) rows.push([backend, `error: ${report.error}`, '', '', '', '', '', '']);
  }
  out.push(
    md([['backend', 'storage', 'problem', 'algorithm', 'iterations', 'library / iteration', 'job / iteration', 'job / library'], ...rows]),
  );
  return out;
}

function httpSolveSection(record: RunRecord): string[] {
  const out = ['## APC solve through HTTP', ''];
  const http = record.httpSolve;
  if (!http) return [...out, 'Not run.'];
  if (!('n' in http)) return [...out, `Failed: ${http.error}`];
  out.push(
    prose(
      '`bench/httpSolve.ts`: the service started as `npm start` does; a 2-D Poisson matrix uploaded as Matrix Market text',
      `(n = ${http.n}, nnz = ${http.nnz}, ${formatBytes(http.uploadBytes)}), a solve job naming it (m = ${http.m} contiguous strips, APC,`,
      'tolerance 1e-8), followed to its end, then its trace and solution fetched.',
    ),
    '',
  );
  out.push(
    md([
      [
        'status',
        'storage / backend',
        'iterations',
        'relative residual',
        'upload',
        'job (analysis + solve)',
        'APC run',
        'trace',
        'solution',
        'wall time',
        'peak RSS (service)',
      ],
      [
        http.error ? `${http.status}: ${http.error}` : http.status,
        `${http.storage ?? '?'} / ${http.backend ?? '?'}`,
        String(http.iterations ?? '—'),
        formatExponential(http.relativeResidual),
        formatSeconds(http.seconds.upload),
        formatSeconds(http.seconds.job),
        formatSeconds(http.runSeconds),
        formatSeconds(http.seconds.trace),
        formatSeconds(http.seconds.solution),
        formatSeconds(http.seconds.total),
        formatBytes(http.peakServiceRssBytes),
      ],
    ]),
  );
  return out;
}
