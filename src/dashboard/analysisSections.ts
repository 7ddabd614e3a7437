/**
 * The analysis sections of a job's page (#/jobs/{id}): heterogeneity (theta_ij heatmap, phi_i),
 * conditioning with the paper's bounds, the six algorithms' rates against their Table 1 bounds, the
 * recommendation, the predicted time to solution and an advise job's candidates; each built from the
 * job's result alone.
 */
import { ALGORITHM_NAMES, ALGORITHMS, type Analysis, type Job, type Run } from './apiTypes.js';
import { h, scrollingTable } from './dom.js';
import { formatAngle, formatInteger, formatNumber, formatRate, formatSetting, formatTime, yesNo } from './format.js';
import { thetaHeatmap } from './heatmap.js';
import { phiChart } from './phiChart.js';
import { statusBadge } from './statusBadge.js';

/** A term and its value in a description list. */
export function fact(term: string, value: string): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, value)];
}

type RunTarget = NonNullable<Run['target']>;

/** Where a run of a tall system converges: x_LS (least squares) or x_W (the block-weighted point). */
export const TARGET_SYMBOLS: Record<RunTarget, string> = { 'least-squares': 'x_LS', 'block-weighted': 'x_W' };

/** "error to x_LS", "error to x_W", or "error to x*" for a square system (whose runs carry no target). */
export const errorLabel = (target: RunTarget | undefined): string => `error to ${target ? TARGET_SYMBOLS[target] : 'x*'}`;

/**
 * A tall system (N > n): whether b is in the range of A, the residuals of the two points the runs
 * converge to, how far apart those are, the machines' ranks when one holds dependent rows, and the
 * recommendation's note on what the projection methods answer. Nothing for a square system.
 */
export function consistencySection(analysis: Analysis): HTMLElement | string {
  const { consistency, machineRanks, rows } = analysis;
  if (!consistency) return '';
  const deficient = machineRanks?.some((rank, i) => rank < analysis.blockSizes[i]) ?? false;
  return h(
    'section',
    { class: 'card', id: 'consistency', 'aria-labelledby': 'consistency-title' },
    h(
      'h2',
      { id: 'consistency-title' },
      `Least squares: ${rows === undefined ? '' : `${formatInteger(rows)} × ${formatInteger(analysis.n)}, `}`,
      consistency.consistent ? 'consistent' : 'inconsistent',
    ),
    analysis.recommendation.leastSquaresNote ? h('p', { class: 'explanation' }, analysis.recommendation.leastSquaresNote) : null,
    h(
      'dl',
      { class: 'facts' },
      ...factOf('consistent', 'Consistent (b in the range of A)', yesNo(consistency.consistent)),
      ...factOf(
        'leastSquaresResidual',
        'Least-squares residual |A x_LS − b| / |b| (DGD, D-HBM, D-NAG converge to x_LS)',
        formatNumber(consistency.leastSquaresResidual),
      ),
      ...factOf(
        'weightedResidual',
        'Block-weighted residual |A x_W − b| / |b| (APC, Block Cimmino, Mou-Liu-Morse converge to x_W)',
        formatNumber(consistency.weightedResidual),
      ),
      ...factOf('weightedDistance', '|x_W − x_LS| / |x_LS|', formatNumber(consistency.weightedDistance)),
    ),
    deficient && machineRanks
      ? scrollingTable(
          'Machines with dependent rows: rank of A_i against its rows',
          ['Machine', 'Rows', 'Rank dim R(A_i)'],
          machineRanks.map((rank, i) => [
            String(i),
            formatInteger(analysis.blockSizes[i]),
            rankText(rank, analysis.blockSizes[i], analysis.n),
          ]),
          { class: 'machine-ranks' },
        )
      : null,
    h(
      'p',
      { class: 'hint' },
      "Each run's relative error is measured to the point it converges to (its target, in the rates table and the chart).",
    ),
  );
}

/**
 * A machine's rank against its rows: all rows independent; rank n with more rows than n (full column rank: one local
 * least-squares point, as every machine of a regression with more samples than features has); or deficient, flagged.
 */
function rankText(rank: number, rows: number, n: number): HTMLElement | string {
  if (rank >= rows) return formatInteger(rank);
  if (rank === n) return `${formatInteger(rank)} = n (full column rank)`;
  return h('strong', { class: 'rank-deficient' }, `${formatInteger(rank)} (deficient)`);
}

/** A fact whose value a test reads by name (data-value). */
function factOf(name: string, term: string, value: string): HTMLElement[] {
  return [h('dt', {}, term), h('dd', { 'data-value': name }, value)];
}

export function heterogeneitySection(analysis: Analysis): HTMLElement {
  const { heterogeneity } = analysis;
  return h(
    'section',
    { class: 'card', id: 'heterogeneity', 'aria-labelledby': 'heterogeneity-title' },
    h('h2', { id: 'heterogeneity-title' }, 'Heterogeneity'),
    h(
      'dl',
      { class: 'facts' },
      ...fact('theta_H (smallest angle between two machines)', formatAngle(heterogeneity.thetaH)),
      ...fact('Pair', heterogeneity.thetaHPair ? `machines ${heterogeneity.thetaHPair[0]} and ${heterogeneity.thetaHPair[1]}` : '—'),
      ...fact('phi_min (smallest angle between two rows of a machine)', formatAngle(heterogeneity.phiMin)),
      ...fact('Row-norm ratio max |a_k| / min |a_k|', formatNumber(heterogeneity.rowNormRatio)),
    ),
    h(
      'div',
      { class: 'figures' },
      h(
        'div',
        {},
        h('h3', {}, 'theta_ij between machines'),
        thetaHeatmap(heterogeneity.theta, heterogeneity.thetaHPair, heterogeneity.thetaH),
      ),
      h('div', {}, h('h3', {}, 'phi_i per machine'), phiChart(heterogeneity.phi)),
    ),
  );
}

type TallBounds = NonNullable<Analysis['bounds']['tall']>;
type TallBound = Exclude<keyof TallBounds, 'note'>;

/** Whether a bound's proof carries over to N > n: "no" stands out, as a warning. */
const tallCell = (holds: boolean): HTMLElement =>
  holds
    ? h('span', { class: 'tall-holds', 'data-tall': 'yes' }, 'yes')
    : h('span', { class: 'tall-fails', 'data-tall': 'no' }, '⚠ not guaranteed');

export function conditioningSection(analysis: Analysis): HTMLElement {
  const { conditioning, bounds } = analysis;
  const tall = bounds.tall;
  const bar = (label: string, value: number, max: number): HTMLElement => {
    const fill = h('span', { class: 'log-bar-fill' });
    // Lengths on a log scale from 1: kappa values span many orders of magnitude.
    fill.style.width = `${Math.max(1, (100 * Math.log10(Math.max(1, value))) / Math.max(1e-9, Math.log10(Math.max(10, max))))}%`;
    return h(
      'div',
      { class: 'log-bar' },
      h('span', { class: 'log-bar-label' }, label),
      h('span', { class: 'log-bar-track' }, fill),
      h('span', {}, formatNumber(value)),
    );
  };
  const max = Math.max(conditioning.kappaS, conditioning.kappaAtA);
  return h(
    'section',
    { class: 'card', id: 'conditioning', 'aria-labelledby': 'conditioning-title' },
    h('h2', { id: 'conditioning-title' }, 'Conditioning: kappa(S) against kappa(AᵀA)'),
    h(
      'div',
      {
        class: 'log-bars',
        role: 'img',
        'aria-label': `kappa(S) = ${formatNumber(conditioning.kappaS)}, kappa(A^T A) = ${formatNumber(conditioning.kappaAtA)} (log scale)`,
      },
      bar('kappa(S)', conditioning.kappaS, max),
      bar('kappa(AᵀA)', conditioning.kappaAtA, max),
    ),
    h(
      'p',
      { class: 'hint' },
      'Bar lengths on a log scale. APC and Cimmino converge at rates set by kappa(S); D-HBM, DGD and D-NAG by kappa(AᵀA).',
    ),
    tall ? h('p', { class: 'hint tall-note' }, `N > n: ${tall.note}`) : null,
    scrollingTable(
      'Bounds on the condition numbers',
      ['Bound', 'Value', 'Hypothesis holds', ...(tall ? ['Holds for N > n'] : [])],
      (
        [
          [
            'proposition1',
            'Proposition 1: theta_H = π/2 gives kappa(S) = 1',
            conditioning.kappaS === 1 ? '1' : '—',
            yesNo(bounds.proposition1.hypothesisHolds),
          ],
          [
            'proposition2',
            'Proposition 2: kappa(S) ≥ 1 / sin²(theta_H)',
            // null: 1 / sin²(0), no finite bound (two machines' row spaces meet), not a value missing.
            bounds.proposition2KappaSLowerBound === null && analysis.heterogeneity.thetaH === 0
              ? '∞ (theta_H = 0)'
              : formatNumber(bounds.proposition2KappaSLowerBound),
            'yes',
          ],
          [
            'theorem2',
            `Theorem 2: kappa(S) ≤ (1 + s + u) / (1 − s − u), s = √(p (n − p) cos theta_H), u = (n − p) cos theta_H, ${
              bounds.theorem2.p === null ? 'no block size p gives 1 − s − u > 0' : `best at p = ${bounds.theorem2.p}`
            }`,
            formatNumber(bounds.theorem2KappaSUpperBound),
            yesNo(bounds.theorem2.hypothesisHolds),
          ],
          [
            'theorem3',
            `Theorem 3: kappa(S) ≤ (1 + c) / (1 − c), c = ${formatNumber(bounds.theorem3.c)}`,
            formatNumber(bounds.theorem3KappaSUpperBound),
            yesNo(bounds.theorem3.hypothesisHolds),
          ],
          [
            'theorem4',
            'Theorem 4: kappa(A) ≥ max_k |a_k| / min_l (|a_l| sin theta_min^(l))',
            // A tall A's value bounds nothing (rows e1, e1, e2, e2: kappa(A) = 1), and the service does not compute it.
            tall ? 'not computed (N > n)' : formatNumber(bounds.theorem4KappaALowerBound),
            tall ? '—' : 'yes',
          ],
          [
            'theorem4',
            'Theorem 4: kappa(AᵀA) ≥ 1 / sin²(phi_min)',
            formatNumber(bounds.theorem4KappaAtALowerBounds.phiMin),
            yesNo(bounds.theorem4KappaAtALowerBounds.phiMin !== null),
          ],
          ['theorem4', 'Theorem 4: kappa(AᵀA) ≥ (row-norm ratio)²', formatNumber(bounds.theorem4KappaAtALowerBounds.rowNormRatio), 'yes'],
        ] as [TallBound, string, string, string][]
      ).map(([bound, ...cells]) => (tall ? [...cells, tallCell(tall[bound])] : cells)),
      { class: 'bounds' },
    ),
  );
}

/**
 * Under the predicted iterations and times: the tolerance is below the attainable accuracy eps kappa(A), so they are
 * exact arithmetic's and a run may stagnate first (the recommendation's explanation says it too). Nothing otherwise.
 */
function unattainableWarning(analysis: Analysis): HTMLElement | null {
  const { tolerance, attainableAccuracy } = analysis.recommendation;
  if (attainableAccuracy === null || !(tolerance < attainableAccuracy)) return null;
  return h(
    'p',
    { class: 'unattainable' },
    `⚠ The tolerance ${formatSetting(tolerance)} is below the attainable accuracy eps κ(A) = ${formatNumber(attainableAccuracy)}: `,
    'these predictions are exact arithmetic’s; in double precision a run may stagnate near it instead.',
  );
}

/** How a run ended: its status badge, the rate it showed and its error when known. */
function runOutcome(run: Run): HTMLElement {
  return h(
    'span',
    {},
    statusBadge(run.status),
    run.empiricalRate !== null ? h('span', { class: 'cell-note' }, `ρ̂ = ${formatRate(run.empiricalRate)}`) : null,
    run.relativeError !== null || run.target
      ? h(
          'span',
          { class: 'cell-note run-error', 'data-target': run.target ?? 'exact' },
          `${errorLabel(run.target)}: ${formatNumber(run.relativeError)}`,
        )
      : null,
  );
}

const parameterList = (parameters: Record<string, number>): string =>
  Object.entries(parameters)
    .map(([name, value]) => `${name} = ${formatRate(value)}`)
    .join(', ');

export function ratesSection(analysis: Analysis, runs: Partial<Record<string, Run>>): HTMLElement {
  const recommended = analysis.recommendation.algorithm;
  const rows = ALGORITHMS.map((algorithm) => {
    const tuning = analysis.rates[algorithm];
    const bounds = analysis.bounds.table1[algorithm];
    const run = runs[algorithm];
    const lowerNames = bounds
      ? Object.entries(bounds.lowerBounds)
          .map(([name, value]) => `${name} ${formatRate(value)}`)
          .join(', ')
      : '';
    return [
      h(
        'span',
        {},
        ALGORITHM_NAMES[algorithm],
        algorithm === recommended ? h('span', { class: 'recommended-tag' }, ' ★ recommended') : null,
      ),
      h('span', { class: 'rate' }, formatRate(tuning.rate, tuning.gap)),
      bounds
        ? h(
            'span',
            {},
            `${formatRate(bounds.lower)} to ${formatRate(bounds.upper)}`,
            bounds.upperHypothesisHolds ? '' : ' (upper bound: hypothesis fails)',
            analysis.bounds.tall && !analysis.bounds.tall.table1
              ? h('span', { class: 'cell-note tall-fails', 'data-tall': 'no' }, '⚠ not guaranteed for N > n')
              : null,
            lowerNames ? h('span', { class: 'cell-note' }, `lower: ${lowerNames}`) : null,
          )
        : '—',
      parameterList(tuning.parameters),
      formatInteger(analysis.recommendation.predictedIterations[algorithm] ?? null),
      run ? formatInteger(run.iterations) : '—',
      run ? runOutcome(run) : '—',
    ];
  });
  return h(
    'section',
    { class: 'card', id: 'rates', 'aria-labelledby': 'rates-title' },
    h('h2', { id: 'rates-title' }, 'Rates of the six algorithms'),
    h(
      'p',
      { class: 'hint' },
      `Optimal rate ρ (smaller is faster) with the bounds of Table 1; the upper bound's hypothesis is (m − 1) cos(theta_H) < 1. `,
      `Predicted iterations to reduce the error by ${formatSetting(analysis.recommendation.tolerance)}: ⌈ln(tol) / ln(ρ)⌉. `,
      'ρ̂: the rate the run showed.',
    ),
    unattainableWarning(analysis),
    scrollingTable(
      'Rates, Table 1 bounds, predicted and actual iterations',
      ['Algorithm', 'Optimal rate ρ', 'Table 1 bounds on ρ', 'Parameters', 'Predicted iterations', 'Actual iterations', 'Run'],
      rows,
      { class: 'rates' },
    ),
  );
}

type JobResult = NonNullable<Job['result']>;

/**
 * A solve cancelled, or stopped at its time or memory limit, before its analysis was complete
 * (result.analysisCompleted false): says so, with the spectral data its runs took their parameters
 * and rates from, and each run as it ended.
 */
export function analysisNotCompletedSection(result: JobResult, status: Job['status']): HTMLElement {
  const { spectral, runs } = result;
  const rows = ALGORITHMS.flatMap((algorithm) => {
    const run = runs[algorithm];
    if (!run) return [];
    return [
      [
        ALGORITHM_NAMES[algorithm],
        h('span', { class: 'rate' }, formatRate(run.theoreticalRate)),
        parameterList(run.parameters),
        formatInteger(run.iterations),
        runOutcome(run),
      ],
    ];
  });
  return h(
    'section',
    { class: 'card', id: 'analysis-not-completed', 'aria-labelledby': 'analysis-not-completed-title' },
    h('h2', { id: 'analysis-not-completed-title' }, 'Analysis not completed'),
    h(
      'p',
      { class: 'explanation' },
      status === 'cancelled' ? 'The job was cancelled' : 'The job was stopped (its problem is above)',
      ' before its analysis was complete: its heterogeneity, bounds, recommendation and predicted time ',
      'to solution were not computed (an analyze job on the same input computes them). ',
      spectral
        ? 'Its runs took their parameters and rates from the spectral data below.'
        : 'Its runs were given every parameter and started without the spectral data.',
    ),
    spectral
      ? h(
          'dl',
          { class: 'facts spectral' },
          ...fact('L = λmax(AᵀA)', formatNumber(spectral.L)),
          ...fact('mu = λmin(AᵀA)', formatNumber(spectral.mu)),
          ...fact('λmin(S)', formatNumber(spectral.lambdaMinS)),
          ...fact('λmax(S)', formatNumber(spectral.lambdaMaxS)),
        )
      : null,
    rows.length > 0
      ? scrollingTable('Runs as they ended', ['Algorithm', 'Theoretical rate ρ', 'Parameters', 'Iterations', 'Run'], rows, {
          class: 'runs',
        })
      : h('p', { class: 'hint' }, 'No run had started.'),
  );
}

export function recommendationSection(analysis: Analysis): HTMLElement {
  const { recommendation } = analysis;
  const condition = recommendation.sufficientCondition;
  return h(
    'section',
    { class: 'card', id: 'recommendation', 'aria-labelledby': 'recommendation-title' },
    h(
      'h2',
      { id: 'recommendation-title' },
      'Recommendation: ',
      h('span', { class: 'recommended' }, ALGORITHM_NAMES[recommendation.algorithm]),
      // An inconsistent system: the two compared methods reach different points (the least-squares note says how far apart).
      analysis.consistency?.consistent === false
        ? h(
            'span',
            { class: 'recommended-target' },
            recommendation.algorithm === 'apc' ? ' for x_W (block-weighted); for x_LS, D-HBM' : ' (reaches x_LS)',
          )
        : null,
    ),
    h('p', { class: 'explanation' }, recommendation.explanation),
    h(
      'dl',
      { class: 'facts' },
      ...fact('Regime', recommendation.regime),
      ...fact(
        'Corollary 1 (sin²(phi_min) < (1 − c)/(1 + c))',
        condition.applicable
          ? `${formatNumber(condition.lhs)} < ${formatNumber(condition.rhs)}: ${condition.holds ? 'holds, APC is faster' : 'does not hold'}`
          : 'not applicable',
      ),
      ...fact(
        'Exact comparison',
        `APC ρ = ${formatRate(recommendation.exact.apcRate)}, D-HBM ρ = ${formatRate(recommendation.exact.dhbmRate)}: ${
          recommendation.exact.tie ? 'a tie' : `${ALGORITHM_NAMES[recommendation.exact.faster]} is faster`
        }`,
      ),
    ),
  );
}

/** Seconds as a duration a reader compares: 4 significant digits and the unit. */
function seconds(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${formatNumber(value)} s`;
}

/**
 * Predicted time to solution: per algorithm, the iterations its optimal rate needs (marked where they exceed the job's
 * iteration limit: its run stops there, or with `solving` false, an analysis' or advice's, a later solve's with its
 * options would), the seconds one iteration costs here (and on the described deployment), and their product; which of
 * APC and D-HBM finishes first, and why that can differ from the rates.
 */
export function timeToSolutionSection(analysis: Analysis, maxIterations?: number, solving = true): HTMLElement | string {
  const times = analysis.timeToSolution;
  if (!times) return '';
  const deployment = times.deployment;
  const head = ['Algorithm', 'Iterations', 'Seconds per iteration', 'Seconds'];
  if (deployment) head.push('Deployment: seconds per iteration', 'Deployment: seconds');
  const fastest = (of: typeof deployment | typeof times): number =>
    Math.min(...ALGORITHMS.map((algorithm) => of?.[algorithm].seconds ?? Infinity));
  const [bestHere, bestThere] = [fastest(times), fastest(deployment)];
  const rows = ALGORITHMS.map((algorithm) => {
    const here = times[algorithm];
    const there = deployment?.[algorithm];
    const mark = (value: number | null, best: number): HTMLElement | string =>
      value !== null && value === best ? h('strong', { class: 'fastest' }, seconds(value), ' ★') : seconds(value);
    const beyond = maxIterations !== undefined && here.iterations !== null && here.iterations > maxIterations;
    return [
      ALGORITHM_NAMES[algorithm],
      beyond
        ? h(
            'span',
            {},
            formatInteger(here.iterations),
            h(
              'span',
              {
                class: 'cell-note beyond-limit',
                title: `${solving ? "This job's runs stop" : "A solve with this job's options stops"} at maxIterations = ${formatInteger(maxIterations)}, before the tolerance; options.maxIterations raises the limit.`,
              },
              `⚠ over maxIterations (${formatInteger(maxIterations)})`,
            ),
          )
        : formatInteger(here.iterations),
      seconds(here.secondsPerIteration),
      mark(here.seconds, bestHere),
      ...(there ? [seconds(there.secondsPerIteration), mark(there.seconds, bestThere)] : []),
    ];
  });
  const { calibration } = times;
  const assumptions = deployment?.assumptions;
  return h(
    'section',
    { class: 'card', id: 'time-to-solution', 'aria-labelledby': 'time-to-solution-title' },
    h('h2', { id: 'time-to-solution-title' }, 'Predicted time to solution'),
    analysis.recommendation.finishesFirst ? h('p', { class: 'explanation' }, analysis.recommendation.finishesFirst.explanation) : null,
    h(
      'p',
      { class: 'hint' },
      `Iterations at each optimal rate to reduce the error by ${formatSetting(analysis.recommendation.tolerance)}; `,
      `seconds per iteration priced here on the ${calibration.backend} kernels (measured ${formatTime(calibration.measuredAt)})`,
      assumptions
        ? `, and on the deployment: ${formatNumber(assumptions.machineGflops)} GFLOP/s and ${formatNumber(assumptions.memoryBandwidthGBs)} GB/s per machine, ${formatNumber(assumptions.latencyMicroseconds)} µs latency, ${formatNumber(assumptions.bandwidthGBs)} GB/s links`
        : '',
      '. ★: the fastest.',
    ),
    unattainableWarning(analysis),
    scrollingTable('Time to solution per algorithm', head, rows, { class: 'time-to-solution' }),
  );
}

export type Advice = NonNullable<NonNullable<Job['result']>['advice']>;

/**
 * A candidate's kappa(S), or when it was not computed (it cannot win) its bounds, or "not computed" when it has none
 * (the given partition is at kappa(S) = 1), with the reason on hover.
 */
function candidateKappaS(candidate: Advice['candidates'][number]): HTMLElement | string {
  if (candidate.kappaS === null && candidate.kappaSBounds === null && candidate.notComputed !== null)
    return h('span', { title: candidate.notComputed }, 'not computed');
  if (candidate.kappaS !== null || candidate.kappaSBounds === null) return formatNumber(candidate.kappaS);
  const { lower, upper } = candidate.kappaSBounds;
  const text = upper === null ? `at least ${formatNumber(lower)} (bound)` : `${formatNumber(lower)} to ${formatNumber(upper)} (bounds)`;
  return h('span', { title: candidate.notComputed ?? '' }, text);
}

/**
 * An advise job's candidate partitions: each strategy's machine sizes, kappa(S), theta_H and predicted
 * time, the best marked; under them the pictures of the given partition and of the best. `solve`: a link that
 * takes the best (none when the form cannot hold the job's matrix).
 */
export function adviceSection(advice: Advice, pictures: HTMLElement, solve: HTMLElement | null = null): HTMLElement {
  const sizes = (list: number[]): string =>
    list.length <= 8 ? list.join(', ') : `${list.length} machines, ${Math.min(...list)} to ${Math.max(...list)} rows`;
  return h(
    'section',
    { class: 'card', id: 'advice', 'aria-labelledby': 'advice-title' },
    h('h2', { id: 'advice-title' }, 'Partition advice: ', h('span', { class: 'recommended' }, advice.best)),
    h('p', { class: 'explanation' }, advice.summary),
    h(
      'p',
      { class: 'hint' },
      `kappa(S) decides APC's rate (smaller is faster). The given partition's kappa(S) is ${formatNumber(advice.givenRatio)} times the best's; `,
      `constructed candidates keep every machine within ${formatNumber(advice.imbalance * 100, 3)}% of n/m rows. `,
      'Take the best as partition { "fromAdvice": id }.',
    ),
    solve && h('p', { class: 'actions' }, solve),
    scrollingTable(
      'Candidate partitions',
      ['Strategy', 'Rows per machine', 'kappa(S)', 'theta_H', 'APC iterations', 'APC time', 'Within imbalance'],
      advice.candidates.map((candidate) => [
        h(
          'span',
          { 'data-strategy': candidate.strategy },
          candidate.strategy,
          candidate.strategy === advice.best ? h('span', { class: 'recommended-tag' }, ' ★ best') : null,
          // == null: a result stored before the field existed has none.
          candidate.refinement == null
            ? null
            : h(
                'span',
                { class: 'hint' },
                ` from ${candidate.refinement.from}, ${candidate.refinement.kept} of ${candidate.refinement.tries} tries kept`,
              ),
        ),
        sizes(candidate.sizes),
        candidateKappaS(candidate),
        candidate.thetaH === null && candidate.notComputed !== null
          ? h('span', { title: candidate.notComputed }, 'not computed')
          : formatAngle(candidate.thetaH),
        formatInteger(candidate.timeToSolution?.iterations ?? null),
        seconds(candidate.timeToSolution?.seconds),
        yesNo(candidate.withinImbalance),
      ]),
      { class: 'advice' },
    ),
    pictures,
  );
}
