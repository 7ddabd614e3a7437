import { describe, expect, it } from 'vitest';
import { computeLocalAngles, lineAngle, localAnglesOfCsrWork } from '../../../src/solvers/analysis/localAngles.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { fromRows, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import { describeEachBackend } from '../../support/backends.js';

const partition = (assignment: number[], m: number) => partitionFromAssignment(Int32Array.from(assignment), m);

/** Brute-force reference: arccos of the absolute cosine over all pairs (fine for angles > 1e-4). */
function bruteForce(a: DenseMatrix, assignment: number[], m: number) {
  const n = a.rows;
  const row = (k: number) => Array.from(a.data.subarray(k * n, (k + 1) * n));
  const norms = Array.from({ length: n }, (_, k) => Math.hypot(...row(k)));
  const angle = (k: number, l: number) => {
    let dot = 0;
    for (let t = 0; t < n; t++) dot += a.data[k * n + t] * a.data[l * n + t];
    return Math.acos(Math.min(1, Math.abs(dot) / (norms[k] * norms[l])));
  };
  const thetaMin = Array.from({ length: n }, (_, l) =>
    Math.min(...Array.from({ length: n }, (_, k) => (k === l ? Infinity : angle(k, l)))),
  );
  const phi = Array.from({ length: m }, (_, i) => {
    const rows = assignment.flatMap((mi, k) => (mi === i ? [k] : []));
    if (rows.length < 2) return null;
    let best = Infinity;
    for (const k of rows) for (const l of rows) if (k < l) best = Math.min(best, angle(k, l));
    return best;
  });
  return { thetaMin, phi, norms };
}

describe('angle between two lines', () => {
  it('is accurate for tiny angles, folds antiparallel vectors and gives pi/2 for orthogonal ones', () => {
    for (const d of [0.3, 1e-4, 1e-9, 1e-14]) {
      expect(Math.abs(lineAngle([1, 0, 0], [1, d, 0]) - Math.atan(d))).toBeLessThanOrEqual(2 * Number.EPSILON * Math.atan(d));
      expect(Math.abs(lineAngle([2, 0, 0], [-3, 3 * d, 0]) - Math.atan(d))).toBeLessThanOrEqual(2 * Number.EPSILON * Math.atan(d));
    }
    expect(lineAngle([1, 2, 0], [-2, 1, 5])).toBe(Math.PI / 2);
    expect(lineAngle([1, 1], [1, 1])).toBe(0);
  });
});

describeEachBackend('local angles phi_i, theta_min^(l) and Theorem 4', () => {
  it('match the closed forms of a hand-built matrix', () => {
    // Rows (1, 0) and (1, 1) at pi/4 on machine 0; row (0, 4) on machine 1 (phi null).
    const a = fromRows([
      [1, 0, 0],
      [1, 1, 0],
      [0, 0, 4],
    ]);
    const r = computeLocalAngles(a, partition([0, 0, 1], 2));
    expect(r.phi[0]).toBeCloseTo(Math.PI / 4, 15);
    expect(r.phi[1]).toBeNull();
    expect(r.phiMin).toBe(r.phi[0]);
    expect(Array.from(r.thetaMin!).map((x) => +x.toFixed(15))).toEqual([Math.PI / 4, Math.PI / 4, Math.PI / 2].map((x) => +x.toFixed(15)));
    expect(r.rowNormRatio).toBe(4);
    // max |a_k| = 4; min_l |a_l| sin theta_min^(l) = min(1 sin(pi/4), sqrt(2) sin(pi/4), 4) = sqrt(2)/2.
    expect(r.theorem4KappaALowerBound!).toBeCloseTo(4 / (Math.SQRT2 / 2), 12);
  });

  it('give phiMin = null when every machine holds one row', () => {
    const r = computeLocalAngles(
      fromRows([
        [1, 2],
        [3, 1],
      ]),
      partition([0, 1], 2),
    );
    expect(r.phi).toEqual([null, null]);
    expect(r.phiMin).toBeNull();
  });

  for (const eps of [0.1, 1e-3, 1e-6]) {
    it(`match the paper's Example 3 for J - eps I (eps = ${eps})`, () => {
      const n = 20;
      const a = fromRows(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 - eps : 1))));
      // The stored diagonal is fl(1 - eps); the eps it represents, 1 - fl(1 - eps), is exact (Sterbenz).
      const e = 1 - (1 - eps);
      const assignment = Array.from({ length: n }, (_, k) => Math.floor(k / 5));
      const r = computeLocalAngles(a, partition(assignment, 4));
      // Any two rows differ by eps (e_i - e_j) and have norm sqrt(n - 2 eps + eps^2), so their angle is
      // arccos(1 - eps^2 / (n - 2 eps + eps^2)) = 2 asin(eps / sqrt(2 (n - 2 eps + eps^2))).
      const norm2 = n - 2 * e + e * e;
      const exact = 2 * Math.asin(e / Math.sqrt(2 * norm2));
      if (eps === 0.1) expect(Math.abs(exact - Math.acos(1 - (eps * eps) / (n - 2 * eps + eps * eps)))).toBeLessThan(1e-14);
      // Absolute accuracy of a few eps: the rows are normalized before they are subtracted, which costs
      // eps / |a| per entry whatever the angle (arccos would lose eps / angle instead).
      const tol = 2e-16;
      for (const phi of r.phi) expect(Math.abs((phi as number) - exact)).toBeLessThan(tol);
      for (const t of r.thetaMin!) expect(Math.abs(t - exact)).toBeLessThan(tol);
      expect(Math.abs(r.rowNormRatio - 1)).toBeLessThan(4 * Number.EPSILON);
      // Theorem 4 bound = 1 / sin(phi) here (all rows have the same norm).
      expect(Math.abs(r.theorem4KappaALowerBound! * Math.sin(exact) - 1)).toBeLessThan(tol / exact + 1e-14);
    });
  }

  it('finds a tiny angle hidden among many rows (accurate re-evaluation of the candidates)', () => {
    const n = 40;
    const rng = new SeededRandom(17);
    const rows = Array.from({ length: n }, () => Array.from({ length: n }, () => 2 * rng.nextDouble() - 1));
    const d = 1e-9;
    // Row 31 = -2 a + d e_0 with a_0 = 0: exact in floating point, at angle atan(d / (2 |a|)) to row 7.
    rows[7][0] = 0;
    rows[31] = rows[7].map((v, j) => (j === 0 ? d : -2 * v));
    const assignment = Array.from({ length: n }, (_, k) => k % 4); // rows 7 and 31 both on machine 3
    const r = computeLocalAngles(fromRows(rows), partition(assignment, 4));
    const exact = Math.atan(d / (2 * Math.hypot(...rows[7])));
    for (const angle of [r.phi[3] as number, r.thetaMin![7], r.thetaMin![31], r.phiMin as number]) {
      expect(Math.abs(angle - exact)).toBeLessThan(4 * Number.EPSILON * exact);
    }
  });

  for (const [label, density] of [
    ['dense path', 1],
    ['sparse path', 0.01],
  ] as const) {
    it(`agree with a brute-force scan (${label})`, () => {
      const n = 300;
      const rng = new SeededRandom(5);
      const rows = Array.from({ length: n }, (_, i) =>
        Array.from({ length: n }, (_, j) => (i === j ? 1 + rng.nextDouble() : rng.nextDouble() < density ? 2 * rng.nextDouble() - 1 : 0)),
      );
      const assignment = Array.from({ length: n }, (_, k) => (k * 13) % 7);
      const a = fromRows(rows);
      const r = computeLocalAngles(a, partition(assignment, 7));
      const ref = bruteForce(a, assignment, 7);
      for (let l = 0; l < n; l++) expect(Math.abs(r.thetaMin![l] - ref.thetaMin[l])).toBeLessThan(1e-12);
      for (let i = 0; i < 7; i++) expect(Math.abs((r.phi[i] as number) - (ref.phi[i] as number))).toBeLessThan(1e-12);
      const maxNorm = Math.max(...ref.norms);
      const bound = maxNorm / Math.min(...ref.norms.map((nl, l) => nl * Math.sin(ref.thetaMin[l])));
      expect(Math.abs(r.theorem4KappaALowerBound! - bound) / bound).toBeLessThan(1e-12);
      expect(Math.abs(r.rowNormRatio - maxNorm / Math.min(...ref.norms))).toBeLessThan(1e-12);
    });
  }
});

describe("a tall CSR matrix's local angles within its machines ('machine-rows')", () => {
  it("give the all-rows scan's phi_i, a brute force's, a tiny angle to a few eps, and no theta_min or Theorem 4 bound", () => {
    const N = 400;
    const n = 25;
    const m = 6;
    const rng = new SeededRandom(29);
    const rows = Array.from({ length: N }, () => {
      const row = new Array<number>(n).fill(0);
      for (let t = 0; t < 3; t++) row[Math.floor(rng.nextDouble() * n)] = 2 * rng.nextDouble() - 1;
      return row;
    });
    // Rows 10 and 310 (both on machine 4): 310 = -2 (row 10) + d e_j (exact in floating point), e_j off row 10's support, at angle atan(d / (2 |a|)).
    const d = 1e-9;
    const free = rows[10].findIndex((v) => v === 0);
    rows[310] = rows[10].map((v, j) => (j === free ? d : -2 * v));
    const assignment = Array.from({ length: N }, (_, k) => (k * 7) % m);
    const p = partition(assignment, m);
    const a = csrFromDense(fromRows(rows));
    const within = runSync(localAnglesOfCsrWork(a, p, 'machine-rows'));
    const all = runSync(localAnglesOfCsrWork(a, p, 'all-rows'));
    expect(within.phi).toEqual(all.phi);
    expect(within.rowNormRatio).toBe(all.rowNormRatio);
    expect(within.thetaMin).toBeNull();
    expect(within.theorem4KappaALowerBound).toBeNull();
    expect(all.theorem4KappaALowerBound).not.toBeNull();
    const exact = Math.atan(d / (2 * Math.hypot(...rows[10])));
    expect(Math.abs(within.phi[4]! - exact)).toBeLessThan(4 * Number.EPSILON * exact);
    // Brute force over each machine's pairs (arccos: fine for angles above 1e-4).
    for (let i = 0; i < m; i++) {
      if (i === 4) continue;
      const own = rows.filter((_, k) => assignment[k] === i);
      let best = Infinity;
      for (let k = 0; k < own.length; k++) {
        for (let l = k + 1; l < own.length; l++) {
          const dot = own[k].reduce((sum, v, j) => sum + v * own[l][j], 0);
          const cos = Math.abs(dot) / (Math.hypot(...own[k]) * Math.hypot(...own[l]));
          best = Math.min(best, Math.acos(Math.min(1, cos)));
        }
      }
      expect(Math.abs(within.phi[i]! - best), `machine ${i}`).toBeLessThan(1e-10);
    }
  });
});
