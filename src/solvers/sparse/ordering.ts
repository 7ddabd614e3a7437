// Past 500 lines: approximate minimum degree is one algorithm whose steps share the quotient graph's state.
/**
 * Fill-reducing orderings of a symmetric sparsity pattern, for the sparse Cholesky of the machines'
 * Gram matrices (sparseCholesky.ts) and the sparse LU (on the pattern of A + A^T or A^T A).
 *
 * `approximateMinimumDegree` is the approximate minimum degree method of Amestoy, Davis and Duff
 * ("An approximate minimum degree ordering algorithm", SIAM J. Matrix Anal. Appl. 17(4), 1996):
 * minimum degree on the quotient graph (eliminated nodes become elements, a variable's adjacency is
 * its elements plus the variables not yet covered by one), with their approximate external degree
 * (an upper bound of the true one, computed from the set differences |L_e \ L_p|), element absorption
 * (including aggressive absorption), mass elimination, indistinguishable-variable detection by
 * hashing (supervariables), and dense rows ordered last. It returns the elimination order itself
 * (not post-ordered: a post-order of the elimination tree gives the same fill).
 *
 * Permutations are new-to-old: perm[k] = the original index of the k-th row/column of P A P^T;
 * inverse[old] = new.
 */
import { DimensionMismatchError } from '../errors.js';
import type { CsrMatrix } from './csr.js';

export interface Ordering {
  /** perm[k] = original index placed at position k (new -> old). */
  readonly perm: Int32Array;
  /** inverse[perm[k]] = k (old -> new). */
  readonly inverse: Int32Array;
}

/** A symmetric adjacency structure without self-loops: neighbours of i are idx[ptr[i] .. ptr[i + 1]). */
export interface SymmetricPattern {
  readonly n: number;
  readonly ptr: Int32Array;
  readonly idx: Int32Array;
}

export function invertPermutation(perm: Int32Array): Int32Array {
  const inverse = new Int32Array(perm.length);
  for (let k = 0; k < perm.length; k++) inverse[perm[k]] = k;
  return inverse;
}

export function identityOrdering(n: number): Ordering {
  const perm = new Int32Array(n);
  for (let k = 0; k < n; k++) perm[k] = k;
  return { perm, inverse: perm.slice() };
}

/**
 * Whether the square CSR pattern is symmetric with each row's columns strictly ascending (as a Gram
 * matrix from gram.ts): one pass that matches each entry (i, j), rows taken in ascending order, with
 * the next unmatched entry of row j, which must be (j, i); symmetric iff every entry is matched.
 * O(nnz + n), no transpose built.
 */
export function isSortedSymmetricPattern(a: CsrMatrix): boolean {
  const n = a.rows;
  if (a.cols !== n) return false;
  const { rowPtr, colIdx } = a;
  const cursor = rowPtr.slice(0, n);
  for (let i = 0; i < n; i++) {
    let previous = -1;
    for (let q = rowPtr[i]; q < rowPtr[i + 1]; q++) {
      const j = colIdx[q];
      if (j <= previous || j < 0 || j >= n) return false;
      previous = j;
      const c = cursor[j];
      if (c >= rowPtr[j + 1] || colIdx[c] !== i) return false;
      cursor[j] = c + 1;
    }
  }
  for (let j = 0; j < n; j++) if (cursor[j] !== rowPtr[j + 1]) return false;
  return true;
}

/**
 * The pattern of A + A^T without its diagonal (A square; values ignored), each neighbour list
 * ascending and duplicate-free. O(nnz + n); a pattern that is already symmetric and sorted (a Gram
 * matrix) only loses its diagonal.
 */
export function symmetricPattern(a: CsrMatrix): SymmetricPattern {
  const n = a.rows;
  if (a.cols !== n) throw new DimensionMismatchError(`A symmetric pattern needs a square matrix; this one is ${a.rows} x ${a.cols}.`);
  const { rowPtr, colIdx } = a;
  if (isSortedSymmetricPattern(a)) {
    const ptr = new Int32Array(n + 1);
    const idx = new Int32Array(rowPtr[n]);
    let q = 0;
    for (let i = 0; i < n; i++) {
      for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) if (colIdx[p] !== i) idx[q++] = colIdx[p];
      ptr[i + 1] = q;
    }
    return { n, ptr, idx: q === idx.length ? idx : idx.slice(0, q) };
  }
  // Both (i, j) and (j, i) for every off-diagonal entry, then the duplicates (entries stored on both sides) dropped.
  const count = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      const j = colIdx[p];
      if (j !== i) {
        count[i + 1]++;
        count[j + 1]++;
      }
    }
  }
  for (let i = 0; i < n; i++) count[i + 1] += count[i];
  const next = count.slice(0, n);
  const both = new Int32Array(count[n]);
  for (let i = 0; i < n; i++) {
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      const j = colIdx[p];
      if (j !== i) {
        both[next[i]++] = j;
        both[next[j]++] = i;
      }
    }
  }
  // Entries stored on both sides of the diagonal appear twice: keep the first (marker), then sort each list.
  const ptr = new Int32Array(n + 1);
  const mark = new Int32Array(n).fill(-1);
  let q = 0;
  for (let i = 0; i < n; i++) {
    const start = q;
    for (let p = count[i]; p < count[i + 1]; p++) {
      const j = both[p];
      if (mark[j] !== i) {
        mark[j] = i;
        both[q++] = j;
      }
    }
    both.subarray(start, q).sort();
    ptr[i + 1] = q;
  }
  return { n, ptr, idx: both.slice(0, q) };
}

const VARIABLE = 0;
const ELEMENT = 1;
/** An absorbed element, a variable merged into a supervariable or eliminated, or a dense variable set aside. */
const DEAD = 2;

/**
 * Approximate minimum degree ordering of the symmetric pattern of A + A^T (A square CSR; values
 * and the diagonal ignored). Variables of degree above `dense` (default max(16, 10 sqrt(n)), as AMD)
 * are ordered last. O(nnz) memory; time close to O(nnz(L)) in practice.
 */
export function approximateMinimumDegree(a: CsrMatrix | SymmetricPattern, options: { dense?: number } = {}): Ordering {
  const pattern = 'rowPtr' in a ? symmetricPattern(a) : a;
  const n = pattern.n;
  if (n === 0) return { perm: new Int32Array(0), inverse: new Int32Array(0) };
  const dense = Math.max(0, Math.min(n - 2, options.dense ?? Math.max(16, Math.floor(10 * Math.sqrt(n)))));
  const perm = new QuotientGraph(pattern, dense).order();
  return { perm, inverse: invertPermutation(perm) };
}

/**
 * The elimination on the quotient graph. Its lists live in one pool: a variable's list is E_i (its
 * elen[i] elements) followed by A_i (its variable neighbours); an element's list is L_e (its
 * variables). One method per phase of a pivot step (small methods get optimized early).
 */
class QuotientGraph {
  private readonly n: number;
  private pool: Int32Array;
  private free: number;
  private readonly start: Int32Array;
  private readonly len: Int32Array;
  private readonly elen: Int32Array;
  /** Supervariable weight; 0 when not principal (and for elements); negated while the variable is in the new element L_p. */
  private readonly nv: Int32Array;
  /** Approximate external degree of a variable; weighted |L_e| of an element. */
  private readonly degree: Int32Array;
  private readonly status: Uint8Array;
  // Degree lists (doubly linked), hash buckets for supervariable detection, members of each supervariable.
  private readonly head: Int32Array;
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly hashHead: Int32Array;
  private readonly hashNext: Int32Array;
  private readonly hashOf: Int32Array;
  private readonly memberNext: Int32Array;
  private readonly memberLast: Int32Array;
  /** w[e] - mark = |L_e \ L_p| for the elements met in the current step (w[e] < mark: not met yet). */
  private readonly w: Int32Array;
  private mark = 1;
  private largestElement = 0;
  /** Tags for comparing two variables' lists in supervariable detection. */
  private readonly tag: Int32Array;
  private tagStamp = 0;
  private readonly perm: Int32Array;
  private ordered = 0;
  /** Weight of the variables eliminated so far, and of all variables that are not dense. */
  private eliminated = 0;
  private live: number;
  private minDegree = 0;
  // The current pivot step: the new element L_p = pool[lpStart .. lpEnd), its weighted size.
  private lpStart = 0;
  private lpEnd = 0;
  private pDegree = 0;

  constructor(
    private readonly pattern: SymmetricPattern,
    private readonly dense: number,
  ) {
    const n = pattern.n;
    this.n = n;
    const nnz = pattern.ptr[n];
    this.pool = new Int32Array(nnz + Math.floor(nnz / 5) + 2 * n);
    this.pool.set(pattern.idx.subarray(0, nnz));
    this.free = nnz;
    this.start = pattern.ptr.slice(0, n);
    this.len = new Int32Array(n);
    this.elen = new Int32Array(n);
    this.nv = new Int32Array(n).fill(1);
    this.degree = new Int32Array(n);
    this.status = new Uint8Array(n);
    this.head = new Int32Array(n + 1).fill(-1);
    this.next = new Int32Array(n).fill(-1);
    this.prev = new Int32Array(n).fill(-1);
    this.hashHead = new Int32Array(n).fill(-1);
    this.hashNext = new Int32Array(n).fill(-1);
    this.hashOf = new Int32Array(n);
    this.memberNext = new Int32Array(n).fill(-1);
    this.memberLast = new Int32Array(n);
    this.w = new Int32Array(n);
    this.tag = new Int32Array(n);
    this.perm = new Int32Array(n);
    this.live = n;
  }

  order(): Int32Array {
    const { n, pattern, dense, len, degree, status, nv, memberLast } = this;
    let denseCount = 0;
    for (let i = 0; i < n; i++) {
      memberLast[i] = i;
      len[i] = pattern.ptr[i + 1] - pattern.ptr[i];
      degree[i] = len[i];
      if (degree[i] > dense) {
        status[i] = DEAD;
        nv[i] = 0;
        denseCount++;
        this.live--;
      }
    }
    for (let i = 0; i < n; i++) {
      if (status[i] !== VARIABLE) continue;
      if (degree[i] === 0) {
        // Isolated: nothing to eliminate it with.
        status[i] = DEAD;
        this.output(i);
        this.eliminated++;
      } else {
        this.insertDegree(i, degree[i]);
      }
    }
    while (this.eliminated < this.live) {
      const p = this.selectPivot();
      const pElements = this.elen[p];
      this.buildElement(p);
      this.setDifferences();
      this.updateDegrees(p);
      this.detectSupervariables();
      this.finalizeElement(p, pElements);
    }
    // Dense variables last, in their original order.
    if (denseCount > 0) for (let i = 0; i < n; i++) if (pattern.ptr[i + 1] - pattern.ptr[i] > dense) this.perm[this.ordered++] = i;
    if (this.ordered !== n) throw new Error(`approximateMinimumDegree ordered ${this.ordered} of ${n} variables`);
    return this.perm;
  }

  /** Appends supervariable i (its members) to the ordering. */
  private output(i: number): void {
    for (let v = i; v !== -1; v = this.memberNext[v]) this.perm[this.ordered++] = v;
  }

  private insertDegree(i: number, d: number): void {
    const h = this.head[d];
    this.next[i] = h;
    this.prev[i] = -1;
    if (h !== -1) this.prev[h] = i;
    this.head[d] = i;
  }

  private removeDegree(i: number): void {
    const { next, prev } = this;
    if (prev[i] !== -1) next[prev[i]] = next[i];
    else this.head[this.degree[i]] = next[i];
    if (next[i] !== -1) prev[next[i]] = prev[i];
  }

  /** A variable of least approximate degree, taken off its list and ordered. */
  private selectPivot(): number {
    const head = this.head;
    while (head[this.minDegree] === -1) this.minDegree++;
    const p = head[this.minDegree];
    this.removeDegree(p);
    this.eliminated += this.nv[p];
    this.output(p);
    return p;
  }

  /** The new element L_p = (A_p ∪ the L_e of E_p) \ {p}, over principal variables; E_p's elements are absorbed. */
  private buildElement(p: number): void {
    const { start, len, nv, status } = this;
    const pElements = this.elen[p];
    let needed = len[p] - pElements;
    for (let t = 0; t < pElements; t++) {
      const e = this.pool[start[p] + t];
      if (status[e] === ELEMENT) needed += len[e];
    }
    if (pElements > 0 && this.free + needed > this.pool.length) this.compact(needed);
    const pool = this.pool;
    const pStart = start[p];
    // Without elements, L_p is a subset of A_p and is written over it in place.
    const lpStart = pElements === 0 ? pStart : this.free;
    let lpEnd = lpStart;
    let pDegree = 0;
    nv[p] = -nv[p];
    for (let t = 0; t <= pElements; t++) {
      let from: number;
      let to: number;
      if (t < pElements) {
        const e = pool[pStart + t];
        if (status[e] !== ELEMENT) continue;
        from = start[e];
        to = from + len[e];
        status[e] = DEAD; // absorbed into p
      } else {
        from = pStart + pElements;
        to = pStart + len[p];
      }
      for (let q = from; q < to; q++) {
        const i = pool[q];
        const weight = nv[i];
        if (weight <= 0) continue; // not principal, p itself, or already in L_p
        pDegree += weight;
        nv[i] = -weight;
        pool[lpEnd++] = i;
        this.removeDegree(i);
      }
    }
    if (pElements > 0) this.free = lpEnd;
    status[p] = ELEMENT;
    start[p] = lpStart;
    len[p] = lpEnd - lpStart;
    this.elen[p] = 0;
    this.lpStart = lpStart;
    this.lpEnd = lpEnd;
    this.pDegree = pDegree;
  }

  /** Copies every live list into a pool with room for `needed` more entries at its end. */
  private compact(needed: number): void {
    const { n, start, len, status } = this;
    let used = 0;
    for (let i = 0; i < n; i++) if (status[i] !== DEAD) used += len[i];
    const fresh = new Int32Array(Math.max(this.pool.length, used + needed + Math.floor(used / 5) + n));
    let q = 0;
    for (let i = 0; i < n; i++) {
      if (status[i] === DEAD) continue;
      fresh.set(this.pool.subarray(start[i], start[i] + len[i]), q);
      start[i] = q;
      q += len[i];
    }
    this.pool = fresh;
    this.free = q;
  }

  /** |L_e \ L_p| for every element e adjacent to a variable of L_p. */
  private setDifferences(): void {
    const { pool, start, elen, nv, status, degree, w } = this;
    if (this.mark + 2 * this.largestElement + 2 > 0x3fffffff) {
      w.fill(0);
      this.mark = 1;
    }
    const mark = this.mark;
    for (let q = this.lpStart; q < this.lpEnd; q++) {
      const i = pool[q];
      const iWeight = -nv[i];
      for (let r = start[i]; r < start[i] + elen[i]; r++) {
        const e = pool[r];
        if (status[e] !== ELEMENT) continue;
        if (w[e] >= mark) w[e] -= iWeight;
        else w[e] = mark + degree[e] - iWeight;
      }
    }
  }

  /** Degrees of L_p's variables, list pruning, aggressive absorption, mass elimination, hashing. */
  private updateDegrees(p: number): void {
    const { pool, start, len, elen, nv, status, degree, w, n, hashHead, hashNext, hashOf } = this;
    const mark = this.mark;
    for (let q = this.lpStart; q < this.lpEnd; q++) {
      const i = pool[q];
      const iStart = start[i];
      const iElements = elen[i];
      const iEnd = iStart + len[i];
      let write = iStart;
      let external = 0;
      let hash = 0;
      for (let r = iStart; r < iStart + iElements; r++) {
        const e = pool[r];
        if (status[e] !== ELEMENT) continue;
        const outside = w[e] - mark;
        if (outside > 0) {
          external += outside;
          pool[write++] = e;
          hash += e;
        } else {
          status[e] = DEAD; // L_e is inside L_p: aggressive absorption into p
        }
      }
      const keptElements = write - iStart;
      for (let r = iStart + iElements; r < iEnd; r++) {
        const j = pool[r];
        const weight = nv[j];
        if (weight <= 0) continue; // merged, eliminated, p, an element, or in L_p (covered by element p now)
        external += weight;
        pool[write++] = j;
        hash += j;
      }
      if (external === 0) {
        // i is adjacent to p's element only: eliminate it together with p.
        const iWeight = -nv[i];
        this.pDegree -= iWeight;
        this.eliminated += iWeight;
        nv[i] = 0;
        status[i] = DEAD;
        this.output(i);
        continue;
      }
      degree[i] = Math.min(degree[i], external);
      // Put p first among i's elements: at least one entry (p as a variable, or an element absorbed
      // into p) was pruned, so the list has room for it.
      const kept = write - iStart;
      if (kept >= len[i]) throw new Error(`approximateMinimumDegree: no pruned entry in the list of variable ${i}`);
      pool[iStart + kept] = pool[iStart + keptElements];
      pool[iStart + keptElements] = pool[iStart];
      pool[iStart] = p;
      len[i] = kept + 1;
      elen[i] = keptElements + 1;
      const bucket = (hash >>> 0) % n;
      hashOf[i] = bucket;
      hashNext[i] = hashHead[bucket];
      hashHead[bucket] = i;
    }
    this.degree[p] = this.pDegree;
    this.largestElement = Math.max(this.largestElement, this.pDegree);
    this.mark = mark + this.largestElement + 1;
  }

  /** Variables of L_p with identical lists (elements and variables) merge into one supervariable. */
  private detectSupervariables(): void {
    const { pool, start, len, elen, nv, status, hashHead, hashNext, hashOf, tag, memberNext, memberLast } = this;
    for (let q = this.lpStart; q < this.lpEnd; q++) {
      const first = pool[q];
      if (nv[first] >= 0) continue;
      const bucket = hashOf[first];
      let i = hashHead[bucket];
      hashHead[bucket] = -1;
      for (; i !== -1; i = hashNext[i]) {
        if (hashNext[i] === -1) break;
        const stamp = ++this.tagStamp;
        const iStart = start[i];
        const iLen = len[i];
        for (let r = iStart + 1; r < iStart + iLen; r++) tag[pool[r]] = stamp;
        let before = i;
        for (let j = hashNext[i]; j !== -1;) {
          let same = len[j] === iLen && elen[j] === elen[i];
          for (let r = start[j] + 1; same && r < start[j] + iLen; r++) same = tag[pool[r]] === stamp;
          const after = hashNext[j];
          if (same) {
            nv[i] += nv[j]; // both negated: the sum stays negated
            nv[j] = 0;
            status[j] = DEAD;
            memberNext[memberLast[i]] = j;
            memberLast[i] = memberLast[j];
            hashNext[before] = after;
          } else {
            before = j;
          }
          j = after;
        }
      }
    }
  }

  /** L_p keeps its principal variables; each gets its new approximate degree and goes back to a degree list. */
  private finalizeElement(p: number, pElements: number): void {
    const { pool, nv, degree } = this;
    const pDegree = this.pDegree;
    let write = this.lpStart;
    for (let q = this.lpStart; q < this.lpEnd; q++) {
      const i = pool[q];
      const iWeight = -nv[i];
      if (iWeight <= 0) continue;
      nv[i] = iWeight;
      const d = Math.max(0, Math.min(degree[i] + pDegree - iWeight, this.live - this.eliminated - iWeight));
      degree[i] = d;
      this.insertDegree(i, d);
      if (d < this.minDegree) this.minDegree = d;
      pool[write++] = i;
    }
    nv[p] = 0; // an element: never taken for a variable again
    this.len[p] = write - this.lpStart;
    if (this.len[p] === 0) this.status[p] = DEAD;
    if (pElements > 0) this.free = write;
  }
}
