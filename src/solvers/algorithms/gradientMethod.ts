/**
 * What DGD, D-NAG and D-HBM share: the machines' fused gradient pass (../machines/gradientPass.ts),
 * whose point x is the estimate, and the residual it measured. A subclass only moves x given g(x)
 * (`update`); the pass then evaluates g and |A x - b|^2 at the new point, ready for the next step.
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { GradientPass } from '../machines/gradientPass.js';
import { checkStateLengths } from '../runner/snapshot.js';
import { checkInitialGuess } from './common.js';
import type { IterativeMethod } from './types.js';

export abstract class GradientMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  readonly threads: number;
  private readonly pass: GradientPass;
  private residual2: number;

  /** x(0) = initialGuess (checked by checkInitialGuess), else 0. */
  constructor(system: DistributedSystem, initialGuess?: Float64Array) {
    const guess = checkInitialGuess(system, initialGuess);
    this.pass = new GradientPass(system);
    this.threads = this.pass.threads;
    this.estimate = this.pass.x;
    if (guess) this.estimate.set(guess);
    try {
      this.residual2 = this.pass.evaluate();
    } catch (error) {
      this.pass.dispose();
      throw error;
    }
  }

  /** Move the estimate x (in place), given the gradient g(x) at it. */
  protected abstract update(x: Float64Array, g: Float64Array): void;

  /** The vectors update() carries from step to step besides x (D-HBM's z, D-NAG's y), the subclass's own arrays. */
  protected carried(): Float64Array[] {
    return [];
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): null {
    return null;
  }

  step(): void {
    this.update(this.estimate, this.pass.gradient());
    this.residual2 = this.pass.evaluate();
  }

  /** [x, ...carried()]: g(x) and the residual are measured again from x on restore. */
  state(): Float64Array[] {
    return [this.estimate, ...this.carried()].map((vector) => vector.slice());
  }

  restore(state: readonly Float64Array[]): void {
    const vectors = [this.estimate, ...this.carried()];
    checkStateLengths(
      this.constructor.name,
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
