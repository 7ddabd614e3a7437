/** A job's or study's status and progress as text first (readable without colour), styled by class. */
import type { JobProgress, JobStatus } from './apiTypes.js';
import { h } from './dom.js';
import { formatInteger, formatNumber } from './format.js';

const SYMBOLS: Record<JobStatus, string> = { queued: '…', running: '▶', succeeded: '✓', failed: '✗', cancelled: '⊘' };

export function statusBadge(status: JobStatus): HTMLElement {
  return h(
    'span',
    { class: `status status-${status}`, 'data-status': status },
    h('span', { 'aria-hidden': 'true' }, SYMBOLS[status]),
    ` ${status}`,
  );
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
