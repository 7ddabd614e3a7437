/**
 * Files the user downloads: the API's own (its CSV, Matrix Market and JSON by `Accept`), fetched with
 * the API key as every call is, and saved as the bytes the API sent. The one file the API has no
 * endpoint for, every run's trace in one table, is joined from the API's per-run CSVs.
 */
import type { ApiClient } from './apiClient.js';

/** The file name of a Content-Disposition header (`attachment; filename="..."`), if it gives one. */
function fileNameOf(response: Response): string | null {
  const header = response.headers.get('content-disposition') ?? '';
  return /filename="([^"]+)"/.exec(header)?.[1] ?? null;
}

/** GET `path` as `accept` and save the body byte for byte, under the API's name for it (else `fallbackName`). */
export async function downloadFromApi(api: ApiClient, path: string, accept: string, fallbackName: string): Promise<void> {
  const response = await api.send('GET', path, undefined, { accept: `${accept}, application/problem+json` });
  saveFile(fileNameOf(response) ?? fallbackName, await response.blob());
}

/**
 * Every run's trace in one long table, the algorithm in the first column, each row the API's CSV row
 * as sent (`GET .../runs/{alg}/trace`, Accept: text/csv): the API serves one run per request.
 */
export async function tracesCsv(api: ApiClient, paths: { algorithm: string; path: string }[]): Promise<string> {
  const tables = await Promise.all(
    paths.map(async ({ algorithm, path }) => {
      const response = await api.send('GET', path, undefined, { accept: 'text/csv, application/problem+json' });
      return { algorithm, lines: (await response.text()).split('\n').filter((line) => line !== '') };
    }),
  );
  const header = tables[0]?.lines[0] ?? 'iteration,relativeResidual,relativeError,consensusDistance';
  const lines = [`algorithm,${header}`];
  for (const { algorithm, lines: rows } of tables) for (const row of rows.slice(1)) lines.push(`${algorithm},${row}`);
  return `${lines.join('\n')}\n`;
}

export function saveFile(name: string, content: Blob | string, type = 'application/octet-stream'): void {
  const url = URL.createObjectURL(typeof content === 'string' ? new Blob([content], { type }) : content);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
