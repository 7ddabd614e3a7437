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
 * The pattern of A + A^T without its diagonal (A square; values ignored), each neighbour list
 * ascending and duplicate-free. O(nnz + n).
 */
export function symmetricPattern(a: CsrMatrix): SymmetricPattern {
  const n = a.rows;
  if (a.cols !== n) throw new DimensionMismatchError(`A symmetric pattern needs a square matrix; this one is ${a.rows} x ${a.cols}.`);
  const { rowPtr, colIdx } = a;
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
  const perm = new Int32Array(n);
  if (n === 0) return { perm, inverse: perm.slice() };
  const dense = Math.max(0, Math.min(n - 2, options.dense ?? Math.max(16, Math.floor(10 * Math.sqrt(n)))));

  // The quotient graph lives in one pool: a variable's list is E_i (its elen[i] elements) followed by
  // A_i (its variable neighbours); an element's list is L_e (its variables).
  const nnz = pattern.ptr[n];
  let pool = new Int32Array(nnz + Math.floor(nnz / 5) + 2 * n);
  pool.set(pattern.idx);
  let free = nnz;
  const start = pattern.ptr.slice(0, n);
  const len = new Int32Array(n);
  const elen = new Int32Array(n);
  /** Supervariable weight; 0 when not principal; negated while the variable is in the new element L_p. */
  const nv = new Int32Array(n).fill(1);
  /** Approximate external degree of a variable; weighted |L_e| of an element. */
  const degree = new Int32Array(n);
  const status = new Uint8Array(n);
  // Degree lists (doubly linked), hash buckets for supervariable detection, members of each supervariable.
  const head = new Int32Array(n + 1).fill(-1);
  const next = new Int32Array(n).fill(-1);
  const prev = new Int32Array(n).fill(-1);
  const hashHead = new Int32Array(n).fill(-1);
  const hashNext = new Int32Array(n).fill(-1);
  const hashOf = new Int32Array(n);
  const memberNext = new Int32Array(n).fill(-1);
  const memberLast = new Int32Array(n);
  /** w[e] - mark = |L_e \ L_p| for the elements met in the current step (w[e] < mark: not met yet). */
  const w = new Int32Array(n);
  let mark = 1;
  let largestElement = 0;
  /** Tags for comparing two variables' lists in supervariable detection. */
  const tag = new Int32Array(n);
  let tagStamp = 0;

  let ordered = 0;
  const output = (i: number): void => {
    for (let v = i; v !== -1; v = memberNext[v]) perm[ordered++] = v;
  };
  const insertDegree = (i: number, d: number): void => {
    const h = head[d];
    next[i] = h;
    prev[i] = -1;
    if (h !== -1) prev[h] = i;
    head[d] = i;
  };
  const removeDegree = (i: number): void => {
    if (prev[i] !== -1) next[prev[i]] = next[i];
    else head[degree[i]] = next[i];
    if (next[i] !== -1) prev[next[i]] = prev[i];
  };

  let denseCount = 0;
  let live = n;
  let eliminated = 0;
  for (let i = 0; i < n; i++) {
    memberLast[i] = i;
    len[i] = pattern.ptr[i + 1] - pattern.ptr[i];
    degree[i] = len[i];
  }
  for (let i = 0; i < n; i++) {
    if (degree[i] > dense) {
      status[i] = DEAD;
      nv[i] = 0;
      denseCount++;
      live--;
    }
  }
  for (let i = 0; i < n; i++) {
    if (status[i] !== VARIABLE) continue;
    if (degree[i] === 0) {
      // Isolated: nothing to eliminate it with.
      status[i] = DEAD;
      output(i);
      eliminated++;
    } else {
      insertDegree(i, degree[i]);
    }
  }

  /** Copies every live list into a pool with room for `needed` more entries at its end. */
  const compact = (needed: number): void => {
    let used = 0;
    for (let i = 0; i < n; i++) if (status[i] !== DEAD) used += len[i];
    const capacity = Math.max(pool.length, used + needed + Math.floor(used / 5) + n);
    const fresh = new Int32Array(capacity);
    let q = 0;
    for (let i = 0; i < n; i++) {
      if (status[i] === DEAD) continue;
      fresh.set(pool.subarray(start[i], start[i] + len[i]), q);
      start[i] = q;
      q += len[i];
    }
    pool = fresh;
    free = q;
  };

  let minDegree = 0;
  while (eliminated < live) {
    // --- The pivot: a variable of least approximate degree.
    while (head[minDegree] === -1) minDegree++;
    const p = head[minDegree];
    removeDegree(p);
    const pWeight = nv[p];
    eliminated += pWeight;
    output(p);

    // --- The new element L_p = (A_p ∪ the L_e of E_p) \ {p}, over principal variables.
    const pElements = elen[p];
    let needed = len[p] - pElements;
    for (let t = 0; t < pElements; t++) {
      const e = pool[start[p] + t];
      if (status[e] === ELEMENT) needed += len[e];
    }
    if (pElements > 0 && free + needed > pool.length) compact(needed);
    const pStart = start[p];
    // Without elements, L_p is a subset of A_p and is written over it in place.
    const lpStart = pElements === 0 ? pStart : free;
    let lpEnd = lpStart;
    let pDegree = 0;
    nv[p] = -pWeight;
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
        removeDegree(i);
      }
    }
    if (pElements > 0) free = lpEnd;
    status[p] = ELEMENT;
    start[p] = lpStart;
    len[p] = lpEnd - lpStart;
    elen[p] = 0;

    // --- |L_e \ L_p| for every element e adjacent to a variable of L_p.
    if (mark + 2 * largestElement + 2 > 0x3fffffff) {
      w.fill(0);
      mark = 1;
    }
    for (let q = lpStart; q < lpEnd; q++) {
      const i = pool[q];
      const iWeight = -nv[i];
      for (let r = start[i]; r < start[i] + elen[i]; r++) {
        const e = pool[r];
        if (status[e] !== ELEMENT) continue;
        if (w[e] >= mark) w[e] -= iWeight;
        else w[e] = mark + degree[e] - iWeight;
      }
    }

    // --- Degree update, list pruning, aggressive absorption, mass elimination.
    for (let q = lpStart; q < lpEnd; q++) {
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
        if (weight <= 0) continue; // merged, eliminated, p, or in L_p (covered by element p now)
        external += weight;
        pool[write++] = j;
        hash += j;
      }
      if (external === 0) {
        // i is adjacent to p's element only: eliminate it together with p.
        const iWeight = -nv[i];
        pDegree -= iWeight;
        eliminated += iWeight;
        nv[i] = 0;
        status[i] = DEAD;
        output(i);
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
    degree[p] = pDegree;
    largestElement = Math.max(largestElement, pDegree);
    mark += largestElement + 1;

    // --- Supervariables: variables of L_p with identical lists (elements and variables) merge.
    for (let q = lpStart; q < lpEnd; q++) {
      const first = pool[q];
      if (nv[first] >= 0) continue;
      const bucket = hashOf[first];
      let i = hashHead[bucket];
      hashHead[bucket] = -1;
      for (; i !== -1; i = hashNext[i]) {
        if (hashNext[i] === -1) break;
        tagStamp++;
        const iStart = start[i];
        const iLen = len[i];
        for (let r = iStart + 1; r < iStart + iLen; r++) tag[pool[r]] = tagStamp;
        let before = i;
        for (let j = hashNext[i]; j !== -1;) {
          let same = len[j] === iLen && elen[j] === elen[i];
          for (let r = start[j] + 1; same && r < start[j] + iLen; r++) same = tag[pool[r]] === tagStamp;
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

    // --- Finalize L_p (principal variables only) and the variables' degrees.
    let write = lpStart;
    for (let q = lpStart; q < lpEnd; q++) {
      const i = pool[q];
      const iWeight = -nv[i];
      if (iWeight <= 0) continue;
      nv[i] = iWeight;
      const d = Math.max(0, Math.min(degree[i] + pDegree - iWeight, live - eliminated - iWeight));
      degree[i] = d;
      insertDegree(i, d);
      if (d < minDegree) minDegree = d;
      pool[write++] = i;
    }
    nv[p] = 0; // an element: never taken for a variable again
    len[p] = write - lpStart;
    if (len[p] === 0) status[p] = DEAD;
    if (pElements > 0) free = write;
  }

  // Dense variables last, in their original order.
  if (denseCount > 0) for (let i = 0; i < n; i++) if (pattern.ptr[i + 1] - pattern.ptr[i] > dense) perm[ordered++] = i;
  if (ordered !== n) throw new Error(`approximateMinimumDegree ordered ${ordered} of ${n} variables`);
  return { perm, inverse: invertPermutation(perm) };
}
