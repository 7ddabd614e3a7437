/**
 * The fused pass of the gradient methods (DGD, D-NAG, D-HBM): machine i reads each of its rows a_k
 * once, computes r_k = a_k . x - b_k, and while the row is in cache accumulates its gradient term
 * r_k a_k; the taskmaster sums the machines' terms into
 *   g(x) = A^T (A x - b) = sum_i A_i^T (A_i x - b_i)
 * and gets |A x - b|^2 = sum_k r_k^2 for free. Cost 4 sum_i p_i c_i <= 4 n^2 flops, no allocation.
 */
import type { DistributedSystem, MachineData } from '../distributed/distributedSystem.js';

export class GradientPass {
  private readonly machines: readonly MachineData[];
  /** x restricted to a machine's column support, and that machine's gradient term there. */
  private readonly supportX: Float64Array;
  private readonly supportG: Float64Array;

  constructor(system: DistributedSystem) {
    this.machines = system.machines;
    const largestSupport = Math.max(1, ...system.machines.map((mc) => (mc.full ? 0 : mc.c)));
    this.supportX = new Float64Array(largestSupport);
    this.supportG = new Float64Array(largestSupport);
  }

  /** g <- A^T (A x - b); returns |A x - b|^2. */
  evaluate(x: Float64Array, g: Float64Array): number {
    g.fill(0);
    let residual2 = 0;
    for (const machine of this.machines) {
      const { p, c, a, aStart, aEnd, b, cols, full } = machine;
      let xs = x;
      let gs = g;
      if (!full) {
        xs = this.supportX;
        gs = this.supportG;
        for (let t = 0; t < c; t++) {
          xs[t] = x[cols[t]];
          gs[t] = 0;
        }
      }
      for (let k = 0; k < p; k++) {
        const off = k * c;
        const lo = aStart[k];
        const hi = aEnd[k];
        let r = -b[k];
        for (let t = lo; t < hi; t++) r += a[off + t] * xs[t];
        residual2 += r * r;
        for (let t = lo; t < hi; t++) gs[t] += r * a[off + t];
      }
      if (!full) for (let t = 0; t < c; t++) g[cols[t]] += gs[t];
    }
    return residual2;
  }
}
