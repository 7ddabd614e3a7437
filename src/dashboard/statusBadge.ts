/** A job's or study's status and progress as text first (readable without colour), styled by class. */
import type { JobProgress, JobStatus } from './apiTypes.js';
import { h } from './dom.js';
import { formatInteger, formatNumber } from './format.js';

type Tone = 'ok' | 'warn' | 'danger' | 'muted' | 'neutral';

/**
 * Job and study statuses, and a run's (converged, max-iterations, ...): a symbol and a tone each.
 * A status not listed here (one added later) gets the neutral style and its own word: the badge
 * still says what it is.
 */
const STYLES: Record<string, { symbol: string; tone: Tone }> = {
  queued: { symbol: '…', tone: 'muted' },
  running: { symbol: '▶', tone: 'neutral' },
  succeeded: { symbol: '✓', tone: 'ok' },
  failed: { symbol: '✗', tone: 'danger' },
  cancelled: { symbol: '⊘', tone: 'muted' },
  converged: { symbol: '✓', tone: 'ok' },
  'max-iterations': { symbol: '⚠', tone: 'warn' },
  'max-wall-time': { symbol: '⚠', tone: 'warn' },
  stagnated: { symbol: '⚠', tone: 'warn' },
  diverged: { symbol: '✗', tone: 'danger' },
  'non-finite': { symbol: '✗', tone: 'danger' },
};

const DEFAULT_STYLE = { symbol: '•', tone: 'neutral' as Tone };

/** A run's status that means it reached its tolerance (the others are flagged on the job page). */
export const runConverged = (status: string): boolean => status === 'converged';

/** Whether a run's status is a failure of the iteration (red) rather than a limit reached (amber). */
export const runTone = (status: string): Tone => (STYLES[status] ?? DEFAULT_STYLE).tone;

/** Any status string: a job's or study's (JobStatus) or a run's. */
export function statusBadge(status: string): HTMLElement {
  const { symbol, tone } = STYLES[status] ?? DEFAULT_STYLE;
  return h('span', { class: `status status-${tone}`, 'data-status': status }, h('span', { 'aria-hidden': 'true' }, symbol), ` ${status}`);
}

export function progressText(progress: JobProgress | null | undefined): string {
  if (!progress) return '';
  const parts = [progress.phase];
  if (progress.algorithm) parts.push(progress.algorithm);
  if (progress.iteration !== undefined) parts.push(`iteration ${formatInteger(progress.iteration)}`);
  if (progress.relativeResidual !== undefined) parts.push(`residual ${formatNumber(progress.relativeResidual, 3)}`);
  if (progress.fraction !== undefined) parts.push(`${Math.round(progress.fraction * 100)}%`);
  return parts.join(' · ');
}

/** A study's samples done, as a bar and as text. */
export function studyProgress(progress: { done: number; total: number }): HTMLElement {
  const bar = h('progress', { max: Math.max(1, progress.total), 'aria-label': `${progress.done} of ${progress.total} samples` });
  bar.value = progress.done;
  return h('span', { class: 'progress' }, bar, h('span', { class: 'progress-text' }, `${progress.done} / ${progress.total} samples`));
}

/** A progress bar with its text; indeterminate (no value) when the phase's fraction is unknown. */
export function progressBar(status: JobStatus, progress: JobProgress | null | undefined): HTMLElement {
  const text = status === 'running' ? progressText(progress) : status === 'queued' ? 'waiting for a worker' : '';
  const bar = h('progress', { max: 1, 'aria-label': `progress: ${text || status}` });
  if (status !== 'running' && status !== 'queued') bar.value = 1;
  else if (progress?.fraction !== undefined) bar.value = progress.fraction;
  else if (status === 'queued') bar.value = 0;
  return h(
    'span',
    { class: 'progress' },
    status === 'running' || status === 'queued' ? bar : null,
    h('span', { class: 'progress-text' }, text),
  );
}
