/**
 * The compile-time checks of src/api/schemas/sameShape.ts. The `@ts-expect-error` cases below are
 * checked by `npm run typecheck` (an assertion that stopped failing would leave an unused directive,
 * itself an error); the tests compile drifted fixtures through the TypeScript compiler and read the
 * message, so they also fail when the check stops naming the drifted field.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RunSummarySchema } from '../../../src/api/schemas/job.js';
import { assertSameShape, type ShapeDifferences } from '../../../src/api/schemas/sameShape.js';
import type { ProblemDetails, RunSummary } from '../../../src/jobs/types.js';
import { ProblemSchema } from '../../../src/api/schemas/problem.js';

type RunOutput = z.output<typeof RunSummarySchema>;

// The schema and its type agree.
assertSameShape<RunOutput, RunSummary>(true);
assertSameShape<z.output<typeof ProblemSchema>, ProblemDetails>(true);

// A field that is nullable in the schema only.
// @ts-expect-error relativeResidual: number | null in the schema, number here
assertSameShape<RunOutput, Omit<RunSummary, 'relativeResidual'> & { relativeResidual: number }>(true);
// A field missing from the schema.
// @ts-expect-error threads is only in the type
assertSameShape<RunOutput, RunSummary & { threads: number }>(true);
// A field missing from the type.
// @ts-expect-error tracePoints is only in the schema
assertSameShape<RunOutput, Omit<RunSummary, 'tracePoints'>>(true);
// A field optional on one side only.
// @ts-expect-error stopReason is optional here
assertSameShape<RunOutput, Omit<RunSummary, 'stopReason'> & { stopReason?: string }>(true);
// A field whose type differs (a tuple of another length).
// @ts-expect-error a pair is not a triple
assertSameShape<{ pair: [number, number] }, { pair: [number, number, number] }>(true);

// `readonly` carries no meaning in JSON: it is not a difference.
assertSameShape<{ bounds: { lower: number | null }[] }, { readonly bounds: readonly { readonly lower: number | null }[] }>(true);

// The differences are named by their path.
const namedPath: ShapeDifferences<{ a: { b: number[] } }, { a: { b: (number | null)[] } }> = 'a.b[]';
void namedPath;

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const FIXTURE = join(REPO, 'test', 'api', 'schemas', 'driftFixture.ts');

/** The messages tsc gives for `source` compiled as a file of this directory with the project's options. */
function compile(source: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(REPO, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error('cannot read tsconfig.json');
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (
    (exists) => (name: string) =>
      name === FIXTURE || exists(name)
  )(host.fileExists.bind(host));
  host.readFile = (name) => (name === FIXTURE ? source : readFile(name));
  host.getSourceFile = (name, language, onError, shouldCreate) =>
    name === FIXTURE ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, onError, shouldCreate);
  const program = ts.createProgram([FIXTURE], { ...config.options, noEmit: true }, host);
  const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(FIXTURE));
  return diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

const HEADER = `
import { z } from 'zod';
import { AnalysisSchema } from '../../../src/api/schemas/analysis.js';
import { RunSummarySchema } from '../../../src/api/schemas/job.js';
import { assertSameShape } from '../../../src/api/schemas/sameShape.js';
import type { RunSummary } from '../../../src/jobs/types.js';
import type { Analysis, Heterogeneity } from '../../../src/solvers/analysis/types.js';
`;

describe('assertSameShape', () => {
  it('compiles when a schema and its type agree', () => {
    const messages = compile(`${HEADER}
assertSameShape<z.output<typeof RunSummarySchema>, RunSummary>(true);
assertSameShape<z.output<typeof AnalysisSchema>, Analysis>(true);
`);
    expect(messages).toEqual([]);
  }, 60_000);

  it('fails to compile on a drifted field, naming its path', () => {
    const messages = compile(`${HEADER}
// A drift once shipped: relativeResidual and theoreticalRate non-nullable in the type only.
type DriftedRun = Omit<RunSummary, 'relativeResidual' | 'theoreticalRate'> & { relativeResidual: number; theoreticalRate: number };
assertSameShape<z.output<typeof RunSummarySchema>, DriftedRun>(true);
// A nested field: thetaHPair made a plain array.
type DriftedAnalysis = Omit<Analysis, 'heterogeneity'> & {
  heterogeneity: Omit<Heterogeneity, 'thetaHPair'> & { thetaHPair: number[] | null };
};
assertSameShape<z.output<typeof AnalysisSchema>, DriftedAnalysis>(true);
`);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/not assignable to parameter of type '\{ differsAt: "relativeResidual" \| "theoreticalRate"; \}'/);
    expect(messages[1]).toMatch(/differsAt: "heterogeneity\.thetaHPair"/);
  }, 60_000);
});
