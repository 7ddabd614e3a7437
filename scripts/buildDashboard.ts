/**
 * Builds the dashboard (src/dashboard) into dist/dashboard: esbuild bundles and minifies the
 * TypeScript client and its CSS (uPlot's included) into content-hashed files under assets/, then
 * index.html is written with their names, and every file gets a gzip and a brotli copy that
 * @fastify/static sends to clients accepting them (src/api/plugins/dashboard.ts).
 *
 * `npm run build` runs it after tsc; the browser tests call buildDashboard() themselves. Prints the
 * initial page weight: index.html, the script and the stylesheet, as sent (compressed).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DASHBOARD_SOURCE = join(ROOT, 'src', 'dashboard');
export const DASHBOARD_OUT = join(ROOT, 'dist', 'dashboard');

export interface FileWeight {
  file: string;
  bytes: number;
  gzipBytes: number;
  brotliBytes: number;
}

export interface DashboardBuild {
  outDir: string;
  /** What a first visit loads: index.html, the script, the stylesheet. */
  initial: FileWeight[];
  initialGzipBytes: number;
  initialBrotliBytes: number;
}

function compressCopies(path: string): FileWeight {
  const content = readFileSync(path);
  const gzip = gzipSync(content, { level: 9 });
  const brotli = brotliCompressSync(content, {
    params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: content.length },
  });
  writeFileSync(`${path}.gz`, gzip);
  writeFileSync(`${path}.br`, brotli);
  return { file: path, bytes: content.length, gzipBytes: gzip.length, brotliBytes: brotli.length };
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

export async function buildDashboard(outDir: string = DASHBOARD_OUT): Promise<DashboardBuild> {
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(DASHBOARD_SOURCE, 'main.ts')],
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    sourcemap: 'linked',
    outdir: assets,
    entryNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
    absWorkingDir: ROOT,
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([, output]) => output.entryPoint !== undefined || output.bytes > 0);
  const script = outputs.find(([path]) => path.endsWith('.js'))?.[0];
  const style = outputs.find(([path]) => path.endsWith('.css'))?.[0];
  if (!script || !style) throw new Error('esbuild produced no script or no stylesheet for the dashboard');
  const assetUrl = (path: string): string => `/assets/${basename(path)}`;

  const html = readFileSync(join(DASHBOARD_SOURCE, 'index.html'), 'utf8')
    .replace('%SCRIPT%', assetUrl(script))
    .replace('%STYLE%', assetUrl(style));
  writeFileSync(join(outDir, 'index.html'), html);

  const initialPaths = new Set([join(outDir, 'index.html'), join(ROOT, script), join(ROOT, style)].map((path) => relative(ROOT, path)));
  const weights = filesUnder(outDir).map(compressCopies);
  const initial = weights.filter((weight) => initialPaths.has(relative(ROOT, weight.file)));
  return {
    outDir,
    initial,
    initialGzipBytes: initial.reduce((sum, weight) => sum + weight.gzipBytes, 0),
    initialBrotliBytes: initial.reduce((sum, weight) => sum + weight.brotliBytes, 0),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const built = await buildDashboard();
  for (const weight of built.initial)
    console.log(`${relative(ROOT, weight.file)}: ${weight.bytes} B, gzip ${weight.gzipBytes} B, brotli ${weight.brotliBytes} B`);
  console.log(`dashboard initial page weight: gzip ${built.initialGzipBytes} B, brotli ${built.initialBrotliBytes} B`);
}
