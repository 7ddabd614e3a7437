/**
 * The analysis sections of a job's page (#/jobs/{id}): heterogeneity (theta_ij heatmap, phi_i),
 * conditioning with the paper's bounds, the six algorithms' rates against their Table 1 bounds, and
 * the recommendation; each built from the job's Analysis alone.
 */
import { ALGORITHM_NAMES, ALGORITHMS, type Analysis, type Run } from './apiTypes.js';
import { h, scrollingTable } from './dom.js';
import { formatAngle, formatInteger, formatNumber, formatRate, yesNo } from './format.js';
import { thetaHeatmap } from './heatmap.js';
import { phiChart } from './phiChart.js';
import { statusBadge } from './statusBadge.js';

/** A term and its value in a description list. */
export function fact(term: string, value: string): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, value)];
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

export function conditioningSection(analysis: Analysis): HTMLElement {
  const { conditioning, bounds } = analysis;
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
    scrollingTable(
      'Bounds on the condition numbers',
      ['Bound', 'Value', 'Hypothesis holds'],
      [
        [
          'Proposition 1: theta_H = π/2 gives kappa(S) = 1',
          conditioning.kappaS === 1 ? '1' : '—',
          yesNo(bounds.proposition1.hypothesisHolds),
        ],
        ['Proposition 2: kappa(S) ≥ 1 / sin²(theta_H)', formatNumber(bounds.proposition2KappaSLowerBound), 'yes'],
        [
          `Theorem 2: kappa(S) ≤ (1 + s + u) / (1 − s − u), s = √(p (n − p) cos theta_H), u = (n − p) cos theta_H, ${
            bounds.theorem2.p === null ? 'no block size p gives 1 − s − u > 0' : `best at p = ${bounds.theorem2.p}`
          }`,
          formatNumber(bounds.theorem2KappaSUpperBound),
          yesNo(bounds.theorem2.hypothesisHolds),
        ],
        [
          `Theorem 3: kappa(S) ≤ (1 + c) / (1 − c), c = ${formatNumber(bounds.theorem3.c)}`,
          formatNumber(bounds.theorem3KappaSUpperBound),
          yesNo(bounds.theorem3.hypothesisHolds),
        ],
        ['Theorem 4: kappa(A) ≥ max_k |a_k| / min_l (|a_l| sin theta_min^(l))', formatNumber(bounds.theorem4KappaALowerBound), 'yes'],
        [
          'Theorem 4: kappa(AᵀA) ≥ 1 / sin²(phi_min)',
          formatNumber(bounds.theorem4KappaAtALowerBounds.phiMin),
          yesNo(bounds.theorem4KappaAtALowerBounds.phiMin !== null),
        ],
        ['Theorem 4: kappa(AᵀA) ≥ (row-norm ratio)²', formatNumber(bounds.theorem4KappaAtALowerBounds.rowNormRatio), 'yes'],
      ],
    ),
  );
}

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
      h('span', { class: 'rate' }, formatRate(tuning.rate)),
      bounds
        ? h(
            'span',
            {},
            `${formatRate(bounds.lower)} to ${formatRate(bounds.upper)}`,
            bounds.upperHypothesisHolds ? '' : ' (upper bound: hypothesis fails)',
            lowerNames ? h('span', { class: 'cell-note' }, `lower: ${lowerNames}`) : null,
          )
        : '—',
      Object.entries(tuning.parameters)
        .map(([name, value]) => `${name} = ${formatRate(value)}`)
        .join(', '),
      formatInteger(analysis.recommendation.predictedIterations[algorithm] ?? null),
      run ? formatInteger(run.iterations) : '—',
      run
        ? h(
            'span',
            {},
            statusBadge(run.status),
            run.empiricalRate !== null ? h('span', { class: 'cell-note' }, `ρ̂ = ${formatRate(run.empiricalRate)}`) : null,
          )
        : '—',
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
      `Predicted iterations to reduce the error by ${formatNumber(analysis.recommendation.tolerance)}: ⌈ln(tol) / ln(ρ)⌉. `,
      'ρ̂: the rate the run showed.',
    ),
    scrollingTable(
      'Rates, Table 1 bounds, predicted and actual iterations',
      ['Algorithm', 'Optimal rate ρ', 'Table 1 bounds on ρ', 'Parameters', 'Predicted iterations', 'Actual iterations', 'Run'],
      rows,
      { class: 'rates' },
    ),
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
