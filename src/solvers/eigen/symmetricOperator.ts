/**
 * A symmetric operator known only through its products: S's Gram matrix Q^T Q, A^T A, the inverses
 * (A^T A)^{-1} = A^{-1} A^{-T} through LU solves, the small normal matrices G^T G of the principal angles.
 */
export interface SymmetricOperator {
  readonly size: number;
  /** y = Op x; y never aliases x. */
  apply(x: Float64Array, y: Float64Array): void;
}
