/**
 * The web dashboard at `/`: the static files that `npm run build` bundles into dist/dashboard
 * (scripts/buildDashboard.ts), served by @fastify/static. The dashboard is a client of the public
 * API only (it calls /v1 like any other client), so this plugin serves files and nothing else.
 *
 * Only the files present when the app starts get routes (`wildcard: false`), so every other path
 * still reaches the API's own 404 problem. Each file is also stored gzip- and brotli-compressed at
 * build time and sent compressed to clients that accept it (`preCompressed`). Asset names carry a
 * content hash, so they are cached for good; index.html is revalidated on each visit.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';

export interface DashboardOptions {
  /** The bundle's directory; default dist/dashboard of the package this module belongs to. */
  root?: string;
}

/** dist/dashboard under the package root (the directory holding package.json), from src/ (tsx) and from dist/src/ alike. */
export function defaultDashboardRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  return join(directory, 'dist', 'dashboard');
}

const HTML_CACHE = 'no-cache';
const ASSET_CACHE = 'public, max-age=31536000, immutable';

export const dashboard: FastifyPluginAsync<DashboardOptions> = async (app: FastifyInstance, options) => {
  const root = options.root ?? defaultDashboardRoot();
  if (!existsSync(join(root, 'index.html'))) {
    // The service works without the bundle (e.g. `npm run dev` before a build): `/` says how to get it.
    app.get('/', { schema: { hide: true } }, (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build` (or `npm start`), then reload.\n'),
    );
    app.log.warn({ root }, 'dashboard bundle not found; run npm run build');
    return;
  }
  // `/` itself is answered here from memory (index.html is small): @fastify/static's own index route
  // does not find index.html's pre-compressed copies.
  const index = {
    identity: readFileSync(join(root, 'index.html')),
    br: readOptional(join(root, 'index.html.br')),
    gzip: readOptional(join(root, 'index.html.gz')),
  };
  app.get('/', { schema: { hide: true } }, (request, reply) => {
    const accepted = String(request.headers['accept-encoding'] ?? '');
    const encoding = index.br && /\bbr\b/.test(accepted) ? 'br' : index.gzip && /\bgzip\b/.test(accepted) ? 'gzip' : 'identity';
    reply.type('text/html; charset=utf-8').header('cache-control', HTML_CACHE).header('vary', 'accept-encoding');
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.send(index[encoding]);
  });
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: false,
    preCompressed: true,
    // The compressed copies are sent in place of their file, never under their own names.
    globIgnore: ['**/*.gz', '**/*.br'],
    decorateReply: false,
    schemaHide: true,
    cacheControl: false,
    setHeaders: (reply, path) => {
      reply.header('cache-control', /\.html(\.br|\.gz)?$/.test(path) ? HTML_CACHE : ASSET_CACHE);
    },
  });
};

function readOptional(path: string): Buffer | null {
  return existsSync(path) ? readFileSync(path) : null;
}
