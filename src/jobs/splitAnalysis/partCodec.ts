/**
 * A part's result (src/solvers/analysis/splitAnalysis.ts) as the fields of a Redis hash and back:
 * arrays as binary (Float64 bytes, exact), small records as JSON (doubles round-trip exactly). The
 * Gram blocks of a group of machines are its largest field (about n^2 / 2 / groups doubles).
 */
import type { MatrixConditioning } from '../../solvers/analysis/conditioning.js';
import type { AnalysisPartResult } from '../../solvers/analysis/splitAnalysis.js';
import { bytesOf, float64From } from '../store/binary.js';

export function encodePartResult(result: AnalysisPartResult): Record<string, Buffer | string> {
  switch (result.kind) {
    case 'pairs':
      return {
        kind: result.kind,
        machines: JSON.stringify(result.machines),
        theta: bytesOf(result.theta),
        cos: bytesOf(result.cos),
        stored: Buffer.from(result.stored.buffer, result.stored.byteOffset, result.stored.byteLength),
        gram: bytesOf(result.gram),
      };
    case 'local-angles':
      return {
        kind: result.kind,
        rows: JSON.stringify(result.rows),
        maxCos: bytesOf(result.scan.maxCos),
        bestAngle: bytesOf(result.scan.bestAngle),
        machineMaxCos: bytesOf(result.scan.machineMaxCos),
        machineBestAngle: bytesOf(result.scan.machineBestAngle),
        rowNorms: bytesOf(result.rowNorms),
      };
    case 'matrix-conditioning':
      return { kind: result.kind, conditioning: JSON.stringify(result.conditioning) };
    case 's-smallest':
      return { kind: result.kind, inverse: JSON.stringify(result.inverse) };
  }
}

/** The result stored by encodePartResult; null when the hash is absent or incomplete. */
export function decodePartResult(fields: Record<string, Buffer>): AnalysisPartResult | null {
  const text = (name: string): string | null => fields[name]?.toString('utf8') ?? null;
  const floats = (name: string): Float64Array => float64From(fields[name]);
  try {
    switch (text('kind')) {
      case 'pairs':
        return {
          kind: 'pairs',
          machines: JSON.parse(text('machines')!) as { from: number; to: number },
          theta: floats('theta'),
          cos: floats('cos'),
          stored: Uint8Array.from(fields.stored),
          gram: floats('gram'),
        };
      case 'local-angles':
        return {
          kind: 'local-angles',
          rows: JSON.parse(text('rows')!) as { from: number; to: number },
          scan: {
            maxCos: floats('maxCos'),
            bestAngle: floats('bestAngle'),
            machineMaxCos: floats('machineMaxCos'),
            machineBestAngle: floats('machineBestAngle'),
          },
          rowNorms: floats('rowNorms'),
        };
      case 'matrix-conditioning':
        return { kind: 'matrix-conditioning', conditioning: JSON.parse(text('conditioning')!) as MatrixConditioning };
      case 's-smallest':
        return { kind: 's-smallest', inverse: JSON.parse(text('inverse')!) as { largest: number; iterations: number } | null };
      default:
        return null;
    }
  } catch {
    return null;
  }
}
