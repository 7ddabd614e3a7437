/**
 * `npm run openapi`: write openapi/openapi.json, the OpenAPI document the API serves at
 * /openapi.json (built from the same zod schemas, with the default configuration and no Redis).
 * test/api/openapi.test.ts fails when the committed file is stale.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import type { JobService } from '../src/jobs/types.js';

export const OPENAPI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'openapi', 'openapi.json');

/** The document text as committed: 2-space JSON and a final newline. */
export function formatOpenApi(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

const unavailable = (): never => {
  throw new Error('no job service while generating the OpenAPI document');
};
const offlineJobService: JobService = {
  matrices: { upload: unavailable, get: unavailable, use: unavailable, remove: unavailable, list: unavailable },
  keys: { create: unavailable, list: unavailable, get: unavailable, revoke: unavailable, authenticate: unavailable, hasAdmin: unavailable },
  idempotency: { claim: unavailable, complete: unavailable, release: unavailable },
  create: unavailable,
  get: unavailable,
  view: unavailable,
  list: unavailable,
  cancel: unavailable,
  remove: unavailable,
  trace: unavailable,
  solution: unavailable,
  partition: unavailable,
  matrix: unavailable,
  subscribe: unavailable,
  subscribeAll: unavailable,
  isReady: () => Promise.resolve(false),
  queueCounts: unavailable,
  onFinished: () => () => undefined,
  close: () => Promise.resolve(),
};

/** The document as committed: with the default configuration. */
export async function generateOpenApi(): Promise<string> {
  return formatOpenApi(await openApiDocumentWith({}));
}

/**
 * The document a service configured by `env` serves (its input limits and, with AUTH_MODE=none,
 * the anonymous alternative of its security requirements depend on it).
 */
export async function openApiDocumentWith(env: NodeJS.ProcessEnv): Promise<unknown> {
  const app = await buildApp({ config: loadConfig(env), jobService: offlineJobService });
  try {
    return app.swagger();
  } finally {
    await app.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = await generateOpenApi();
  await mkdir(dirname(OPENAPI_PATH), { recursive: true });
  await writeFile(OPENAPI_PATH, text);
  console.log(`wrote ${OPENAPI_PATH} (${text.length} bytes)`);
}
