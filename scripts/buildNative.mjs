#!/usr/bin/env node
/**
 * Builds the optional native backend (native/: an N-API addon over OpenBLAS and LAPACKE) when the
 * machine can: OpenBLAS's cblas.h, lapacke.h, libopenblas.so and liblapacke.so (Debian/Ubuntu:
 * libopenblas-dev liblapacke-dev), a C compiler, make and python3 (for node-gyp).
 *
 * Run by `npm install` / `npm ci` (the package's own "install" script) and by `npm run build:native`.
 * When something is missing it prints one line saying what and exits 0: the TypeScript backend is
 * always there, so the install never fails because of this step. With `--strict` (or
 * REQUIRE_NATIVE_BACKEND=1) a missing prerequisite or a failed build exits 1 instead, for images
 * and CI jobs that must have the native backend. SKIP_NATIVE_BUILD=1 skips the step.
 *
 * The sparse part (CHOLMOD and UMFPACK from SuiteSparse: Debian/Ubuntu libsuitesparse-dev) is compiled in
 * when cholmod.h, umfpack.h, libcholmod, libumfpack and libsuitesparseconfig are found (NATIVE_SPARSE_INCLUDE_DIRS /
 * NATIVE_SPARSE_LIBRARY_DIRS add places to look); without them, or when that build fails, the dense
 * addon is built alone and the sparse work stays on TypeScript. The one-line message says which.
 * REQUIRE_NATIVE_SPARSE=1 makes a missing sparse part fail like a missing addon under --strict.
 * ARPACK (arpack-ng's arpack/arpack.h and libarpack: libarpack2-dev) is compiled in the same way
 * when present (NATIVE_ARPACK_INCLUDE_DIRS / NATIVE_ARPACK_LIBRARY_DIRS), and METIS (metis.h and libmetis:
 * libmetis-dev) likewise (NATIVE_METIS_INCLUDE_DIRS / NATIVE_METIS_LIBRARY_DIRS): the partition advisor's graph
 * partitioner on the native backend. SuiteSparseQR (SuiteSparseQR_C.h and libspqr, also libsuitesparse-dev) is
 * compiled in with the sparse part when found in the same places: the rank-revealing QR of the machines whose
 * rows are dependent (src/solvers/distributed/sparseSystem.ts); when that build fails it is retried without
 * SuiteSparseQR, whose work then stays on TypeScript.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(root, 'native');
const addonPath = join(nativeDir, 'build', 'Release', 'linalg_native.node');
const strict = process.argv.includes('--strict') || process.env.REQUIRE_NATIVE_BACKEND === '1';
const PREFIX = '[native backend]';

const strictSparse = process.env.REQUIRE_NATIVE_SPARSE === '1';

function finish(built, message, sparseBuilt = false) {
  console.log(`${PREFIX} ${message}`);
  process.exit((!built && strict) || (strictSparse && !sparseBuilt) ? 1 : 0);
}

function listDir(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Directories to search: the environment's own, then the usual system ones (with multiarch subdirectories). */
function candidateDirs(envName, bases) {
  const fromEnv = (process.env[envName] ?? '').split(/[\s:]+/).filter(Boolean);
  const dirs = [...fromEnv];
  for (const base of bases) {
    dirs.push(base);
    for (const entry of listDir(base)) if (/-linux-gnu|-linux-musl/.test(entry)) dirs.push(join(base, entry));
  }
  return [...new Set(dirs)];
}

function findFile(dirs, name, accept = () => true) {
  for (const dir of dirs) {
    const file = join(dir, name);
    if (existsSync(file) && accept(file)) return dir;
  }
  return null;
}

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return true;
  }
  return false;
}

/** npm's node-gyp: the one npm hands to install scripts, else the copy bundled with npm next to this node. */
function nodeGypCommand() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return [process.execPath, fromNpm];
  const bundled = [
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ].find((file) => existsSync(file));
  if (bundled) return [process.execPath, bundled];
  if (onPath('node-gyp')) return ['node-gyp'];
  return null;
}

if (process.env.SKIP_NATIVE_BUILD === '1') finish(false, 'SKIP_NATIVE_BUILD=1: not built; the TypeScript backend will be used.');
if (process.platform === 'win32') finish(false, 'not supported on Windows; the TypeScript backend will be used.');

const includeDirs = candidateDirs('NATIVE_BLAS_INCLUDE_DIRS', [
  '/usr/include',
  '/usr/include/openblas',
  '/usr/local/include',
  '/usr/local/include/openblas',
  '/opt/homebrew/opt/openblas/include',
]);
// OpenBLAS's own cblas.h (it declares openblas_set_num_threads, which the addon uses).
const cblasDir = findFile(includeDirs, 'cblas.h', (file) => readFileSync(file, 'utf8').includes('openblas_set_num_threads'));
const lapackeDir = findFile(includeDirs, 'lapacke.h');
const libraryDirs = candidateDirs('NATIVE_BLAS_LIBRARY_DIRS', [
  '/usr/lib',
  '/usr/lib64',
  '/usr/local/lib',
  '/opt/homebrew/opt/openblas/lib',
]);
const libExt = process.platform === 'darwin' ? 'dylib' : 'so';
const openblasDir = findFile(libraryDirs, `libopenblas.${libExt}`);
const lapackeLibDir = findFile(libraryDirs, `liblapacke.${libExt}`) ?? (process.platform === 'darwin' ? openblasDir : null);

const missing = [];
if (!cblasDir) missing.push("OpenBLAS's cblas.h");
if (!lapackeDir) missing.push('lapacke.h');
if (!openblasDir) missing.push(`libopenblas.${libExt}`);
if (!lapackeLibDir) missing.push(`liblapacke.${libExt}`);
if (missing.length > 0) {
  finish(
    false,
    `not built (missing ${missing.join(', ')}; on Debian/Ubuntu: apt-get install libopenblas-dev liblapacke-dev); the TypeScript backend will be used.`,
  );
}
const tools = [];
if (!onPath('cc') && !onPath('gcc') && !onPath('clang')) tools.push('a C compiler');
if (!onPath('make')) tools.push('make');
if (!onPath('python3') && !onPath('python')) tools.push('python3');
const gyp = nodeGypCommand();
if (!gyp) tools.push('node-gyp');
if (tools.length > 0) finish(false, `not built (missing ${tools.join(', ')} to compile the addon); the TypeScript backend will be used.`);

const args = [...gyp.slice(1), 'rebuild'];
// Compile against the headers installed with this node when they exist (no download).
const nodePrefix = resolve(dirname(process.execPath), '..');
if (
  !process.env.npm_config_nodedir &&
  existsSync(join(nodePrefix, 'include', 'node', 'node_api.h')) &&
  existsSync(join(nodePrefix, 'include', 'node', 'common.gypi'))
) {
  args.push(`--nodedir=${nodePrefix}`);
}
const extraIncludes = [cblasDir, lapackeDir].filter((dir) => dir !== '/usr/include' && dir !== '/usr/local/include');
const extraLibs = [openblasDir, lapackeLibDir].filter((dir) => dir !== '/usr/lib' && dir !== '/usr/local/lib');

// The sparse part: CHOLMOD's and UMFPACK's headers (in suitesparse/ on Debian) and their libraries.
const sparseIncludeDirs = candidateDirs('NATIVE_SPARSE_INCLUDE_DIRS', [
  '/usr/include/suitesparse',
  '/usr/local/include/suitesparse',
  '/usr/include',
  '/usr/local/include',
  '/opt/homebrew/opt/suite-sparse/include',
  '/opt/homebrew/opt/suite-sparse/include/suitesparse',
]);
const sparseLibraryDirs = candidateDirs('NATIVE_SPARSE_LIBRARY_DIRS', [...libraryDirs, '/opt/homebrew/opt/suite-sparse/lib']);
const cholmodIncludeDir = findFile(sparseIncludeDirs, 'cholmod.h');
const cholmodLibDir = findFile(sparseLibraryDirs, `libcholmod.${libExt}`);
const configLibDir = findFile(sparseLibraryDirs, `libsuitesparseconfig.${libExt}`);
const umfpackIncludeDir = findFile(sparseIncludeDirs, 'umfpack.h');
const umfpackLibDir = findFile(sparseLibraryDirs, `libumfpack.${libExt}`);
const sparseMissing = [];
if (!cholmodIncludeDir) sparseMissing.push('cholmod.h');
if (!cholmodLibDir) sparseMissing.push(`libcholmod.${libExt}`);
if (!configLibDir) sparseMissing.push(`libsuitesparseconfig.${libExt}`);
if (!umfpackIncludeDir) sparseMissing.push('umfpack.h');
if (!umfpackLibDir) sparseMissing.push(`libumfpack.${libExt}`);

// SuiteSparseQR: its C API header next to cholmod.h, and libspqr.
const spqrFound = findFile(sparseIncludeDirs, 'SuiteSparseQR_C.h') !== null && findFile(sparseLibraryDirs, `libspqr.${libExt}`) !== null;

// ARPACK (arpack-ng): arpack/arpack.h and libarpack.
const arpackIncludeDir = findFile(
  candidateDirs('NATIVE_ARPACK_INCLUDE_DIRS', ['/usr/include', '/usr/local/include', '/opt/homebrew/opt/arpack/include']),
  join('arpack', 'arpack.h'),
);
const arpackLibDir = findFile(
  candidateDirs('NATIVE_ARPACK_LIBRARY_DIRS', [...libraryDirs, '/opt/homebrew/opt/arpack/lib']),
  `libarpack.${libExt}`,
);
const arpackFound = arpackIncludeDir !== null && arpackLibDir !== null;

// METIS: metis.h and libmetis.
const metisIncludeDir = findFile(
  candidateDirs('NATIVE_METIS_INCLUDE_DIRS', ['/usr/include', '/usr/local/include', '/opt/homebrew/opt/metis/include']),
  'metis.h',
);
const metisLibDir = findFile(
  candidateDirs('NATIVE_METIS_LIBRARY_DIRS', [...libraryDirs, '/opt/homebrew/opt/metis/lib']),
  `libmetis.${libExt}`,
);
const metisFound = metisIncludeDir !== null && metisLibDir !== null;

function rebuild(sparse, arpack = false, metis = false, spqr = false) {
  return spawnSync(gyp[0], args, {
    cwd: nativeDir,
    encoding: 'utf8',
    env: {
      ...process.env,
      NATIVE_BLAS_INCLUDE_DIRS: [...new Set(extraIncludes)].join(' '),
      NATIVE_BLAS_LIBRARY_DIRS: [...new Set(extraLibs)].join(' '),
      NATIVE_SPARSE: sparse ? '1' : '0',
      NATIVE_SPARSE_INCLUDE_DIRS: sparse ? [...new Set([cholmodIncludeDir, umfpackIncludeDir])].join(' ') : '',
      NATIVE_SPARSE_LIBRARY_DIRS: sparse
        ? [...new Set([cholmodLibDir, umfpackLibDir, configLibDir])].filter((dir) => !extraLibs.includes(dir)).join(' ')
        : '',
      NATIVE_SPQR: sparse && spqr ? '1' : '0',
      NATIVE_ARPACK: arpack ? '1' : '0',
      NATIVE_ARPACK_INCLUDE_DIRS: arpack ? arpackIncludeDir : '',
      NATIVE_ARPACK_LIBRARY_DIRS: arpack ? arpackLibDir : '',
      NATIVE_METIS: metis ? '1' : '0',
      NATIVE_METIS_INCLUDE_DIRS: metis ? metisIncludeDir : '',
      NATIVE_METIS_LIBRARY_DIRS: metis ? metisLibDir : '',
    },
  });
}

function lastLines(result) {
  return `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
}

let sparseNote = `dense only: the sparse part needs ${sparseMissing.join(', ')} (Debian/Ubuntu: apt-get install libsuitesparse-dev)`;
let build = null;
if (sparseMissing.length === 0) {
  build = rebuild(true, arpackFound, metisFound, spqrFound);
  // SuiteSparseQR is the newest part: a SuiteSparse whose libspqr does not link keeps the rest of the sparse part.
  let spqrBuilt = spqrFound;
  if (build.status !== 0 && spqrFound) {
    spqrBuilt = false;
    build = rebuild(true, arpackFound, metisFound, false);
  }
  if (build.status === 0) {
    const absent = [
      arpackFound ? null : `no ARPACK (needs arpack/arpack.h and libarpack.${libExt}: apt-get install libarpack2-dev)`,
      metisFound ? null : `no METIS (needs metis.h and libmetis.${libExt}: apt-get install libmetis-dev)`,
      spqrBuilt
        ? null
        : spqrFound
          ? 'no SuiteSparseQR (its build failed)'
          : `no SuiteSparseQR (needs SuiteSparseQR_C.h and libspqr.${libExt}: apt-get install libsuitesparse-dev)`,
    ].filter(Boolean);
    sparseNote = `dense + sparse (CHOLMOD, UMFPACK${spqrBuilt ? ', SuiteSparseQR' : ''})${arpackFound ? ' + ARPACK' : ''}${metisFound ? ' + METIS' : ''}${absent.length > 0 ? `; ${absent.join('; ')}` : ''}`;
  } else {
    const output = lastLines(build);
    if (output) console.log(output);
    sparseNote = 'dense only: the build with CHOLMOD, UMFPACK, ARPACK and METIS failed (output above)';
    build = null;
  }
}
build ??= rebuild(false);
if (build.status !== 0) {
  const output = lastLines(build);
  if (output) console.log(output);
  finish(false, `node-gyp rebuild failed (${build.error?.message ?? `exit ${build.status}`}); the TypeScript backend will be used.`);
}

// The library must also load (runtime libraries present, symbols resolved).
try {
  const addon = createRequire(import.meta.url)(addonPath);
  const sparseBuilt = addon.parts().split(',').includes('sparse');
  const sparseConfig = sparseBuilt ? `, ${addon.sparseConfig()}` : '';
  finish(true, `built ${addonPath} (${sparseNote}) against ${addon.config()}${sparseConfig}; 'auto' selects it.`, sparseBuilt);
} catch (error) {
  finish(
    false,
    `built but cannot be loaded (${error instanceof Error ? error.message : String(error)}); the TypeScript backend will be used.`,
  );
}
