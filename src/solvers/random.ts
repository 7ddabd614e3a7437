/**
 * Seeded, reproducible random numbers for the matrix generators (Math.random cannot be seeded).
 *
 * - Uniform bits: xoshiro128** (Blackman & Vigna, 2018), 128-bit state, period 2^128 - 1, written
 *   with Math.imul and `>>> 0` so every step is exact 32-bit integer arithmetic: the same seed gives
 *   bit-identical streams on every platform.
 * - Seeding: the seed (any safe integer) is split into its low and high 32-bit words, which are
 *   mixed into a splitmix32 state (golden-ratio increment + MurmurHash3 fmix32 finalizer); four
 *   splitmix32 outputs fill the xoshiro state. Nearby seeds (1, 2, 3...) thus give unrelated streams.
 * - Uniform doubles in [0, 1): 53 random bits from two outputs (27 + 26 bits), as in xoshiro's
 *   reference `next_double`.
 * - Normal variates: Marsaglia's polar method. It draws (u, v) uniform in the unit disc
 *   (rejecting ~21% of pairs), and returns u * f and v * f with f = sqrt(-2 ln s / s), s = u^2 + v^2;
 *   the second variate is cached for the next call.
 */
import { InvalidParameterError } from './errors.js';

const TWO_POW_32 = 4294967296;

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class SeededRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  private spareNormal: number | null = null;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) {
      throw new InvalidParameterError(`seed must be an integer (at most 2^53 - 1 in magnitude); got ${String(seed)}.`, {
        parameter: 'seed',
        value: seed,
      });
    }
    const low = seed >>> 0;
    const high = Math.floor(seed / TWO_POW_32) | 0;
    const mixer = { s: low };
    mixer.s = (splitmix32(mixer) ^ high) | 0;
    this.s0 = splitmix32(mixer);
    this.s1 = splitmix32(mixer);
    this.s2 = splitmix32(mixer);
    this.s3 = splitmix32(mixer);
    // xoshiro must not start from the all-zero state (it would stay there).
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** A generator started from an explicit xoshiro128** state (for checks against reference vectors). */
  static fromState(state: readonly [number, number, number, number]): SeededRandom {
    const rng = new SeededRandom(0);
    [rng.s0, rng.s1, rng.s2, rng.s3] = state.map((word) => word | 0);
    if ((rng.s0 | rng.s1 | rng.s2 | rng.s3) === 0) throw new InvalidParameterError('The xoshiro128** state must not be all zero.');
    return rng;
  }

  /** Next 32 uniform random bits as an unsigned integer (xoshiro128**). */
  nextUint32(): number {
    const s1 = this.s1;
    const rotated = Math.imul(s1, 5);
    const result = Math.imul((rotated << 7) | (rotated >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  nextDouble(): number {
    const high27 = this.nextUint32() >>> 5;
    const low26 = this.nextUint32() >>> 6;
    return (high27 * 67108864 + low26) / 9007199254740992;
  }

  /** Uniform integer in [0, bound) without modulo bias (bound <= 2^32). */
  nextInt(bound: number): number {
    // Reject the top partial range so that every residue is equally likely.
    const limit = TWO_POW_32 - (TWO_POW_32 % bound);
    for (;;) {
      const r = this.nextUint32();
      if (r < limit) return r % bound;
    }
  }

  /** Standard normal N(0, 1) variate (Marsaglia polar method). */
  nextNormal(): number {
    if (this.spareNormal !== null) {
      const spare = this.spareNormal;
      this.spareNormal = null;
      return spare;
    }
    for (;;) {
      const u = 2 * this.nextDouble() - 1;
      const v = 2 * this.nextDouble() - 1;
      const s = u * u + v * v;
      if (s > 0 && s < 1) {
        const factor = Math.sqrt((-2 * Math.log(s)) / s);
        this.spareNormal = v * factor;
        return u * factor;
      }
    }
  }

  /** Fill `out` with i.i.d. N(mean, std^2) variates. */
  fillNormal(out: Float64Array, mean = 0, std = 1, offset = 0, length = out.length - offset): Float64Array {
    for (let k = offset; k < offset + length; k++) out[k] = mean + std * this.nextNormal();
    return out;
  }

  /** Fill `out` with uniform values in [-1, 1) (random start vectors of iterative eigensolvers). */
  fillSigned(out: Float64Array): Float64Array {
    for (let i = 0; i < out.length; i++) out[i] = 2 * this.nextDouble() - 1;
    return out;
  }

  /** A uniformly random permutation of 0..n-1 (Fisher-Yates). */
  permutation(n: number): Int32Array {
    const perm = new Int32Array(n);
    for (let k = 0; k < n; k++) perm[k] = k;
    for (let k = n - 1; k > 0; k--) {
      const r = this.nextInt(k + 1);
      const tmp = perm[k];
      perm[k] = perm[r];
      perm[r] = tmp;
    }
    return perm;
  }
}
