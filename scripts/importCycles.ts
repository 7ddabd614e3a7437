/**
 * The import graph of a source tree (src/solvers by default) and its cycles: between files, and
 * between the tree's top folders (a file directly in the tree counts as the folder `.`). Every
 * static import and re-export counts, type-only ones too (a cycle through types is still one the
 * folders' order has to break). Read with the TypeScript compiler's own import scanner
 * (`ts.preProcessFile`), resolved as NodeNext does for this project's relative specifiers
 * (`./x.js` is `./x.ts` or `./x.d.ts`). test/architecture.test.ts asserts there are none.
 *
 * `npx tsx scripts/importCycles.ts [directory]` prints the cycles and the folders' dependencies;
 * it exits with 1 when there is a cycle.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** File (relative to the root, `/`-separated) -> the files of the root it imports. */
export type ImportGraph = Map<string, Set<string>>;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function resolveSpecifier(fromFile: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const target = resolve(dirname(fromFile), specifier);
  const stem = target.replace(/\.js$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.d.ts`, join(target, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

const toKey = (root: string, file: string) => relative(root, file).split(sep).join('/');

/** The graph of the files under `root` and their imports of each other (imports leaving `root` are left out). */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map();
  const files = sourceFiles(root);
  for (const file of files) {
    const imports = new Set<string>();
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      const target = resolveSpecifier(file, fileName);
      if (target === null) continue;
      const key = toKey(root, target);
      if (!key.startsWith('..')) imports.add(key);
    }
    graph.set(toKey(root, file), imports);
  }
  return graph;
}

/** The strongly connected components with more than one member (or a file importing itself), sorted. */
export function cycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  // Tarjan's algorithm.
  let counter = 0;
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    lowLink.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!));
      }
    }
    if (lowLink.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/**
 * A file's top folder under the root: `input/types.ts` -> `input`, `matrix.ts` -> `.`; the tree's
 * `index.ts` (a library's entry point, re-exporting the folders) is a node of its own, `index`.
 */
export const folderOf = (file: string): string => {
  if (file === 'index.ts') return 'index';
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : '.';
};

/**
 * src/solvers' folders from the bottom up: a file imports only from its own folder and the folders
 * before it. `.` is the tree's own files (errors, cooperative, random, mapLeaves, matrix with the
 * DenseMatrix and CsrMatrix types, problem); linalg the dense kernels and the backends; parallel the
 * shard engine and task pool on threads; sparse CSR and its factorizations and eigensolvers; input
 * the builders of problems from requests; machines the operator layer (and the types of what the
 * machines hold); distributed the builders of the systems; algorithms; runner; analysis; studies;
 * `index` the library's entry point over all of them.
 */
export const SOLVERS_FOLDER_ORDER: readonly string[] = [
  '.',
  'linalg',
  'eigen',
  'parallel',
  'sparse',
  'input',
  'machines',
  'distributed',
  'algorithms',
  'runner',
  'analysis',
  'partitioning',
  'studies',
  'index',
];

/**
 * Imports still going against SOLVERS_FOLDER_ORDER, each with its reason: the methods' restore
 * check (checkStateLengths, SnapshotMismatchError) lives in runner/snapshot.ts, which imports the
 * algorithms' AlgorithmId and Parameters types back. Moving the check below machines edits
 * runner/snapshot.ts beyond its imports, left to the work on warm starts that is changing it.
 * And inside machines, consensusPass.ts (createConsensusPass builds a CsrConsensusPass) and
 * csrConsensusPass.ts (implements consensusPass.ts' ConsensusMachines interface) import each other:
 * the interface wants a module of its own, an edit of consensusPass.ts left to the same work.
 */
export const SOLVERS_KNOWN_EXCEPTIONS: readonly string[] = [
  'algorithms/apc.ts -> runner/snapshot.ts',
  'algorithms/cimmino.ts -> runner/snapshot.ts',
  'algorithms/gradientMethod.ts -> runner/snapshot.ts',
  'machines/consensusPass.ts -> runner/snapshot.ts',
  'machines/csrConsensusPass.ts -> machines/consensusPass.ts',
  'machines/csrConsensusPass.ts -> runner/snapshot.ts',
];

/** The graph without the given `from -> to` file imports. */
export function withoutImports(graph: ImportGraph, imports: readonly string[]): ImportGraph {
  const left = new Set(imports);
  return new Map([...graph].map(([file, targets]) => [file, new Set([...targets].filter((target) => !left.has(`${file} -> ${target}`)))]));
}

/** The imports (`file -> imported file`) from a folder to a later one of `order`, or from or to a folder it does not list. */
export function orderViolations(graph: ImportGraph, order: readonly string[]): string[] {
  const rank = new Map(order.map((folder, k) => [folder, k]));
  const found: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const from = rank.get(folderOf(file));
      const to = rank.get(folderOf(target));
      if (from === undefined || to === undefined || to > from) found.push(`${file} -> ${target}`);
    }
  }
  return found.sort();
}

/** Folder -> the other folders its files import. */
export function folderGraph(graph: ImportGraph): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [file, imports] of graph) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of imports) if (folderOf(target) !== from) edges.add(folderOf(target));
  }
  return folders;
}

/** For each folder edge, one import that makes it: `from -> to` -> `file -> imported file`. */
export function folderEdgeWitnesses(graph: ImportGraph): Map<string, string[]> {
  const witnesses = new Map<string, string[]>();
  for (const [file, imports] of graph) {
    for (const target of imports) {
      if (folderOf(target) === folderOf(file)) continue;
      const edge = `${folderOf(file)} -> ${folderOf(target)}`;
      witnesses.set(edge, [...(witnesses.get(edge) ?? []), `${file} -> ${target}`]);
    }
  }
  return witnesses;
}

export const SOLVERS_ROOT = fileURLToPath(new URL('../src/solvers', import.meta.url));

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? SOLVERS_ROOT);
  const graph = importGraph(root);
  const fileCycles = cycles(graph);
  const folders = folderGraph(graph);
  const folderCycles = cycles(folders);
  const witnesses = folderEdgeWitnesses(graph);
  console.log(`${graph.size} files under ${relative(process.cwd(), root) || '.'}`);
  console.log(`file cycles: ${fileCycles.length}`);
  for (const cycle of fileCycles) console.log(`  ${cycle.join('  ')}`);
  console.log(`folder cycles: ${folderCycles.length}`);
  for (const cycle of folderCycles) {
    console.log(`  ${cycle.join('  ')}`);
    for (const from of cycle) {
      for (const to of cycle) {
        for (const witness of witnesses.get(`${from} -> ${to}`) ?? []) console.log(`    ${witness}`);
      }
    }
  }
  console.log(`imports against the folders' order (known exceptions marked *):`);
  for (const violation of orderViolations(graph, SOLVERS_FOLDER_ORDER)) {
    console.log(`  ${violation}${SOLVERS_KNOWN_EXCEPTIONS.includes(violation) ? ' *' : ''}`);
  }
  console.log('folder dependencies:');
  for (const [folder, edges] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${folder} -> ${[...edges].sort().join(', ')}`);
  }
  process.exitCode = fileCycles.length + folderCycles.length > 0 ? 1 : 0;
}
