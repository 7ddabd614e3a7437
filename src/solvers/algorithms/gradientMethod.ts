/**
 * What DGD, D-NAG and D-HBM share: the machines' fused gradient pass (../machines/gradientPass.ts),
 * whose point x is the estimate, the residual it measured, and the method's step rule
 * (../machines/stepRules.ts), which the pass applies: it sums the machines' terms into g(x) and moves x
 * (and the carried vector: D-HBM's z, D-NAG's y); the pass then evaluates g and |A x - b|^2 at the
 * new point, ready for the next step.
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { GradientPass, type GradientStepRule } from '../machines/gradientPass.js';
import { checkStateLengths } from '../runner/snapshot.js';
import { checkInitialGuess } from './common.js';
import type { IterativeMethod } from './types.js';

export class GradientMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  readonly threads: number;
  private readonly pass: GradientPass;
  private readonly name: string;
  private residual2: number;

  /**
   * x(0) = initialGuess (checked by checkInitialGuess), else 0; the carried vector starts at 0 (D-HBM's z:
   * x(-1) = x(0)) or at x(0) (D-NAG's y: the first step is a plain gradient step).
   */
  constructor(system: DistributedSystem, rule: GradientStepRule, initialGuess?: Float64Array) {
    const guess = checkInitialGuess(system, initialGuess);
    this.name = `${rule.rule} method`;
    this.pass = new GradientPass(system, rule);
    this.threads = this.pass.threads;
    this.estimate = this.pass.x;
    if (guess) this.estimate.set(guess);
    if (rule.rule === 'dnag') this.pass.carried.set(this.estimate);
    try {
      this.residual2 = this.pass.evaluate();
    } catch (error) {
      this.pass.dispose();
      throw error;
    }
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): null {
    return null;
  }

  step(): void {
    this.pass.advance();
    this.residual2 = this.pass.evaluate();
  }

  /** The vectors a step carries: x and, for D-HBM and D-NAG, z or y. */
  private vectors(): Float64Array[] {
    return this.pass.carried.length > 0 ? [this.estimate, this.pass.carried] : [this.estimate];
  }

  /** [x, carried]: g(x) and the residual are measured again from x on restore. */
  state(): Float64Array[] {
    return this.vectors().map((vector) => vector.slice());
  }

  restore(state: readonly Float64Array[]): void {
    const vectors = this.vectors();
    checkStateLengths(
      this.name,
      state,
      vectors.map((vector) => vector.length),
    );
    vectors.forEach((vector, k) => vector.set(state[k]));
    // The same pass at the same x: the g and |A x - b|^2 the interrupted run had, to the bit.
    this.residual2 = this.pass.evaluate();
  }

  dispose(): void {
    this.pass.dispose();
  }
}
