/** Files the user downloads, made in the browser from the API's JSON (so the API key is sent, as for every call). */
import type { Solution, Trace } from './apiTypes.js';

const cell = (value: number | null | undefined): string => (value === null || value === undefined ? '' : String(value));

/** One row per recorded iteration; empty cells where a value is absent or was not finite. */
export function traceCsv(trace: Trace): string {
  const lines = ['iteration,relativeResidual,relativeError,consensusDistance'];
  for (let k = 0; k < trace.iteration.length; k++)
    lines.push(
      [trace.iteration[k], cell(trace.relativeResidual[k]), cell(trace.relativeError?.[k]), cell(trace.consensusDistance?.[k])].join(','),
    );
  return `${lines.join('\n')}\n`;
}

/** Every run's trace in one long table, the algorithm in the first column. */
export function tracesCsv(traces: Trace[]): string {
  const lines = ['algorithm,iteration,relativeResidual,relativeError,consensusDistance'];
  for (const trace of traces) for (const line of traceCsv(trace).trimEnd().split('\n').slice(1)) lines.push(`${trace.algorithm},${line}`);
  return `${lines.join('\n')}\n`;
}

export function solutionCsv(solution: Solution): string {
  return `index,x\n${solution.x.map((value, i) => `${i},${cell(value)}`).join('\n')}\n`;
}

export function saveFile(name: string, content: string, type: string): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
