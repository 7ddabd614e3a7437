/**
 * src/solvers' import graph (scripts/importCycles.ts, every static import and re-export, type-only
 * ones included): no cycle between its files, and its folders depend in the one order the script
 * documents (SOLVERS_FOLDER_ORDER), but for the imports it lists with their reason.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cycles,
  folderGraph,
  importGraph,
  orderViolations,
  SOLVERS_FOLDER_ORDER,
  SOLVERS_KNOWN_EXCEPTIONS,
  SOLVERS_ROOT,
  withoutImports,
} from '../scripts/importCycles.js';

const graph = importGraph(SOLVERS_ROOT);

/**
 * The files that choose and implement the kernels (linalg/kernels.ts picks a set; the dense interface and its
 * TypeScript and native implementations; the addon's loader and LAPACK's panel drivers): the only ones that see
 * the addon's BLAS as such.
 */
const KERNEL_FILES: readonly string[] = [
  'linalg/backend.ts',
  'linalg/denseKernels.ts',
  'linalg/kernels.ts',
  'linalg/nativeDenseKernels.ts',
  'linalg/panelFactorizations.ts',
  'linalg/typescriptDenseKernels.ts',
  'linalg/typescriptFactorizations.ts',
];

/**
 * The files whose entry points default to the selected backend's kernels (linalg/kernels.ts selectedKernels):
 * the library's synchronous wrappers, analyzeWork, the advisor, a system's construction, a task thread's entry
 * and a solver run's placement. Everything below them takes its kernels as an argument; a new default is
 * added here on purpose.
 */
const KERNEL_DEFAULTS: readonly string[] = [
  'analysis/analyze.ts',
  'analysis/calibration.ts',
  'analysis/conditioning.ts',
  'analysis/denseAnalysisTasks.ts',
  'analysis/gramBlocks.ts',
  'analysis/kappaS.ts',
  'analysis/localAngles.ts',
  'analysis/principalAngles.ts',
  'analysis/sparseAnalysis.ts',
  'analysis/sparseAnalysisTasks.ts',
  'analysis/splitAnalysis.ts',
  'distributed/distributedSystem.ts',
  'distributed/leastSquares.ts',
  'distributed/sparseSystem.ts',
  'eigen/lanczos.ts',
  'linalg/lu.ts',
  'linalg/singularValues.ts',
  'machines/blockPass.ts',
  'machines/placement.ts',
  'partitioning/advisor.ts',
  'studies/sampler.ts',
];

describe('src/solvers import graph', () => {
  it('reads type-only imports and re-exports too', () => {
    expect(graph.get('machines/storage.ts')).toContain('machines/machineData.ts');
    expect(graph.get('sparse/csr.ts')).toContain('matrix.ts');
    expect(graph.get('index.ts')?.size).toBeGreaterThan(5);
  });

  it('finds a cycle, type-only or not, when there is one', () => {
    const cyclic = new Map([
      ['a.ts', new Set(['b/c.ts'])],
      ['b/c.ts', new Set(['b/d.ts'])],
      ['b/d.ts', new Set(['a.ts'])],
      ['e.ts', new Set(['e.ts'])],
    ]);
    expect(cycles(cyclic)).toEqual([['a.ts', 'b/c.ts', 'b/d.ts'], ['e.ts']]);
    expect(cycles(folderGraph(cyclic))).toEqual([['.', 'b']]);
    expect(orderViolations(cyclic, ['.', 'b'])).toEqual(['a.ts -> b/c.ts']);
  });

  it('has no import cycle between files or folders, but through the known exceptions', () => {
    const ordered = withoutImports(graph, SOLVERS_KNOWN_EXCEPTIONS);
    expect(cycles(ordered)).toEqual([]);
    expect(cycles(folderGraph(ordered))).toEqual([]);
  });

  it("has its folders depend in SOLVERS_FOLDER_ORDER's order", () => {
    expect([...folderGraph(graph).keys()].sort()).toEqual([...SOLVERS_FOLDER_ORDER].sort());
    const violations = orderViolations(graph, SOLVERS_FOLDER_ORDER);
    expect(violations.filter((violation) => !SOLVERS_KNOWN_EXCEPTIONS.includes(violation))).toEqual([]);
  });

  it('asks which backend is selected in one file: linalg/kernels.ts (and linalg/backend.ts, which holds the selection)', () => {
    const queries = new Set(['activeBackend']);
    // index.ts re-exports the selection for the library's users; it computes nothing.
    const selectors = new Set(['linalg/kernels.ts', 'index.ts']);
    const askers: string[] = [];
    for (const [file, imports] of graph) {
      if (!imports.has('linalg/backend.ts') || selectors.has(file)) continue;
      const text = readFileSync(join(SOLVERS_ROOT, file), 'utf8');
      for (const [, names] of text.matchAll(/(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'[^']*backend\.js'/g)) {
        const asked = names.split(',').map(
          (name) =>
            name
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0],
        );
        for (const name of asked) if (queries.has(name)) askers.push(`${file}: ${name}`);
      }
    }
    expect(askers).toEqual([]);
  });

  it("tests the backend's name against 'native' or 'typescript' only in linalg/kernels.ts and linalg/backend.ts: elsewhere a kernel choice reads a member", () => {
    const asks = /\bbackend\s*[!=]==?\s*'(?:native|typescript)'|'(?:native|typescript)'\s*[!=]==?\s*[\w.()]*\bbackend\b/;
    const testers = [...graph.keys()].filter(
      (file) => !['linalg/kernels.ts', 'linalg/backend.ts'].includes(file) && asks.test(readFileSync(join(SOLVERS_ROOT, file), 'utf8')),
    );
    expect(testers).toEqual([]);
    expect(asks.test("if (selectedKernels().backend === 'native') {")).toBe(true);
    expect(asks.test("context.backend !== 'typescript'")).toBe(true);
    expect(asks.test('cached.backend === selectedKernels().backend')).toBe(false);
  });

  it("reads the addon's BLAS (a `.blas` member) only in the kernel files: every routine calls the dense kernels' methods", () => {
    const readers = [...graph.keys()].filter(
      (file) => !KERNEL_FILES.includes(file) && /\.blas\b/.test(readFileSync(join(SOLVERS_ROOT, file), 'utf8')),
    );
    expect(readers).toEqual([]);
  });

  it('defaults to the selected kernels only in the files listed in KERNEL_DEFAULTS', () => {
    const defaulting = [...graph].filter(
      ([file, imports]) =>
        imports.has('linalg/kernels.ts') &&
        /\bselectedKernels\b/.test(readFileSync(join(SOLVERS_ROOT, file), 'utf8')) &&
        file !== 'index.ts',
    );
    expect(defaulting.map(([file]) => file).sort()).toEqual([...KERNEL_DEFAULTS].sort());
  });
});
