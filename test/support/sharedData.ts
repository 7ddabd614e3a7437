/**
 * Where the shared reference data (fixtures and Matrix Market files) lives: `$SHARED_DIR`, else
 * `../shared` next to the repository, else the vendored copy in test/reference (see its README).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function resolveSharedDir(): string {
  const candidates = [process.env.SHARED_DIR, resolve(repositoryRoot, '..', 'shared'), join(repositoryRoot, 'test', 'reference')];
  for (const dir of candidates) {
    if (dir && existsSync(join(dir, 'fixtures', 'heterogeneity')) && existsSync(join(dir, 'matrices'))) return dir;
  }
  throw new Error(`No shared reference data found (tried: ${candidates.filter(Boolean).join(', ')})`);
}

const SHARED_DIR = resolveSharedDir();
export const FIXTURES_DIR = join(SHARED_DIR, 'fixtures', 'heterogeneity');
export const MATRICES_DIR = join(SHARED_DIR, 'matrices');
