#!/usr/bin/env python3
"""Reference values for the sparse LU and the sparse spectra (test/solvers/sparse: sparseLu,
analysis/conditioning.ts, spectrumOfS), computed with SciPy independently of the TypeScript code.

    python3 test/reference/sparse/spectra.py > test/reference/sparse/spectra.json

Inputs: the real square matrices of test/reference/matrices and two grid matrices defined here as
src/solvers/sparse/generators.ts defines them (k x k interior grid, unknown (i, j) -> i k + j, 4 on
the diagonal; Poisson: -1 for each neighbour; convection-diffusion: -1 - g west and south, -1 + g
east and north, g = peclet / (k + 1) / 2).

- "lu": scipy.sparse.linalg.splu (SuperLU, COLAMD, partial pivoting) of each real matrix: the
  solution of A x = b with b = A x_true, x_true_k = sin(k + 1), the relative residuals
  max|A x - b| / max|b| of that solve and of the transposed one (A^T y = b), and nnz(L) + nnz(U).
- "conditioning": sigma_max and sigma_min by ARPACK (scipy.sparse.linalg.eigsh, tol = 0: to machine
  precision): the largest eigenvalue of A^T A applied as A^T (A v), and the smallest by shift-invert at 0,
  the largest eigenvalue of (A^T A)^{-1} = A^{-1} A^{-T} applied through splu. For n <= 3312 also the
  dense SVD (numpy.linalg.svd), whose sigma_min is itself only known to ~eps sigma_max absolute.
- "sSpectrum": A partitioned into m contiguous blocks (NumPy array_split), S = sum_i A_i^T G_i^{-1} A_i
  (G_i = A_i A_i^T): lambda_max(S) by ARPACK on S applied with splu of each G_i, lambda_min(S) by
  ARPACK on S^{-1} = A^{-1} diag(G_i) A^{-T} through splu of A (shift-invert at 0); for n <= 3312 the
  dense eigvalsh of S from an orthonormal basis Q_i of each R(A_i^T) (QR) as a cross-check; and the
  principal angles of every pair of machines whose column supports overlap, from the QR bases on the
  union of the two supports: c = sigma_max(Q_a^T Q_b), s = sigma_min(Q_b - Q_a (Q_a^T Q_b)) (b: the
  block with fewer rows), theta = atan2(s, c).
"""
import json
import math
import os
import sys

import numpy as np
import scipy
import scipy.io
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spl

HERE = os.path.dirname(os.path.abspath(__file__))
MATRICES = os.path.join(HERE, '..', 'matrices')
REAL = ['bfwa62', 'bcsstk03', 'arc130', 'fs1831', 'impcol_a', 'plat362', 'gr_30_30', 'olm1000', '1138_bus', 'sherman5']
DENSE_LIMIT = 3312


def grid(k, gamma):
    n = k * k
    rows, cols, vals = [], [], []
    for i in range(k):
        for j in range(k):
            r = i * k + j
            for (di, dj, v) in [(-1, 0, -1 - gamma), (0, -1, -1 - gamma), (0, 0, 4.0), (0, 1, -1 + gamma), (1, 0, -1 + gamma)]:
                if 0 <= i + di < k and 0 <= j + dj < k:
                    rows.append(r)
                    cols.append((i + di) * k + j + dj)
                    vals.append(v)
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def poisson2d(k):
    return grid(k, 0.0)


def convection_diffusion2d(k, peclet):
    return grid(k, peclet / (k + 1) / 2)


def real(name):
    return sp.csr_matrix(scipy.io.mmread(os.path.join(MATRICES, name + '.mtx')))


def largest(op, n):
    v0 = np.sin(np.arange(1, n + 1) * 0.7)
    # A wider Krylov space than the default 20 vectors: the grids' A^T A have clustered tops.
    ncv = min(n - 1, 60)
    return float(spl.eigsh(op, k=1, which='LA', tol=0, v0=v0, ncv=ncv, maxiter=100000, return_eigenvectors=False)[0])


def progress(*what):
    print(*what, file=sys.stderr, flush=True)


def lu_case(name, a):
    progress('lu', name)
    a = a.tocsc()
    n = a.shape[0]
    lu = spl.splu(a)
    x_true = np.sin(np.arange(1, n + 1))
    b = a @ x_true
    x = lu.solve(b)
    y = lu.solve(b, trans='T')
    return {
        'name': name,
        'n': n,
        'nnz': int(a.nnz),
        'spluFactorNonzeros': int(lu.L.nnz + lu.U.nnz),
        'x': x.tolist(),
        'relativeResidual': float(np.max(np.abs(a @ x - b)) / np.max(np.abs(b))),
        'relativeResidualTransposed': float(np.max(np.abs(a.T @ y - b)) / np.max(np.abs(b))),
    }


def conditioning_case(name, a):
    progress('conditioning', name)
    a = a.tocsr()
    n = a.shape[0]
    at = a.T.tocsr()
    normal = spl.LinearOperator((n, n), matvec=lambda v: at @ (a @ v), dtype=float)
    lu = spl.splu(a.tocsc())
    inverse = spl.LinearOperator((n, n), matvec=lambda v: lu.solve(lu.solve(v, trans='T')), dtype=float)
    L = largest(normal, n)
    mu = 1 / largest(inverse, n)
    case = {
        'name': name,
        'n': n,
        'method': 'arpack eigsh (tol 0) on A^T A and on A^{-1} A^{-T} through splu',
        'sigmaMax': math.sqrt(L),
        'sigmaMin': math.sqrt(mu),
        'L': L,
        'mu': mu,
        'kappaAtA': L / mu,
    }
    if n <= DENSE_LIMIT:
        s = np.linalg.svd(a.toarray(), compute_uv=False)
        case['dense'] = {'sigmaMax': float(s[0]), 'sigmaMin': float(s[-1])}
    return case


def orthonormal_rows_basis(block):
    """Q (p x c) with orthonormal rows spanning the rows of the dense block (thin QR of its transpose)."""
    q, _ = np.linalg.qr(block.T)
    return q.T


def pair_angle(a_rows, b_rows):
    """theta between the row spaces of two sparse blocks, on the union of their column supports."""
    support = np.union1d(np.unique(a_rows.indices), np.unique(b_rows.indices))
    qa = orthonormal_rows_basis(a_rows[:, support].toarray())
    qb = orthonormal_rows_basis(b_rows[:, support].toarray())
    if qb.shape[0] > qa.shape[0]:
        qa, qb = qb, qa
    g = qa @ qb.T  # Q_a^T Q_b in column-basis terms: p_a x p_b
    c = float(np.linalg.svd(g, compute_uv=False)[0])
    w = qb - g.T @ qa  # rows of (Q_b - Q_a G)^T
    s = float(np.linalg.svd(w, compute_uv=False)[-1])
    return math.atan2(s, c), c


def s_case(name, a, m):
    progress('S', name)
    a = a.tocsr()
    n = a.shape[0]
    bounds = [int(c[0]) for c in np.array_split(np.arange(n), m)] + [n]
    blocks = [a[bounds[i]:bounds[i + 1], :] for i in range(m)]
    gram_lu = [spl.splu((blk @ blk.T).tocsc()) for blk in blocks]

    def s_apply(v):
        out = np.zeros(n)
        for blk, f in zip(blocks, gram_lu):
            out += blk.T @ f.solve(blk @ v)
        return out

    lu = spl.splu(a.tocsc())
    gb = sp.block_diag([blk @ blk.T for blk in blocks]).tocsr()

    def s_inverse_apply(v):
        return lu.solve(gb @ lu.solve(v, trans='T'))

    lambda_max = largest(spl.LinearOperator((n, n), matvec=s_apply, dtype=float), n)
    lambda_min = 1 / largest(spl.LinearOperator((n, n), matvec=s_inverse_apply, dtype=float), n)
    supports = [set(np.unique(blk.indices).tolist()) for blk in blocks]
    pairs = []
    for i in range(m):
        for j in range(i + 1, m):
            if supports[i] & supports[j]:
                theta, cos = pair_angle(blocks[i], blocks[j])
                pairs.append({'i': i, 'j': j, 'theta': theta, 'cos': cos})
    case = {
        'name': name,
        'n': n,
        'm': m,
        'blockStarts': bounds[:-1],
        'method': 'arpack eigsh (tol 0) on S (splu of each G_i) and on A^{-1} diag(G_i) A^{-T} (splu of A)',
        'lambdaMaxS': lambda_max,
        'lambdaMinS': lambda_min,
        'kappaS': lambda_max / lambda_min,
        'pairs': pairs,
    }
    if n <= DENSE_LIMIT:
        q = np.vstack([orthonormal_rows_basis(blk.toarray()) for blk in blocks])
        ev = np.linalg.eigvalsh(q.T @ q)
        case['dense'] = {'lambdaMaxS': float(ev[-1]), 'lambdaMinS': float(ev[0])}
    return case


def main():
    grids = {
        'poisson2d-k100': poisson2d(100),
        'convectionDiffusion2d-k100-peclet50': convection_diffusion2d(100, 50),
        'convectionDiffusion2d-k150-peclet50': convection_diffusion2d(150, 50),
    }
    out = {
        'generatedBy': 'test/reference/sparse/spectra.py',
        'versions': {'numpy': np.__version__, 'scipy': scipy.__version__},
        'lu': [lu_case(name, real(name)) for name in REAL] + [lu_case('convectionDiffusion2d-k100-peclet50', grids['convectionDiffusion2d-k100-peclet50'])],
        'conditioning': [conditioning_case(name, real(name)) for name in REAL] + [conditioning_case(name, a) for name, a in grids.items()],
        'sSpectrum': [
            s_case('sherman5-m8', real('sherman5'), 8),
            s_case('1138_bus-m4', real('1138_bus'), 4),
            s_case('gr_30_30-m10', real('gr_30_30'), 10),
            s_case('poisson2d-k100-m8', grids['poisson2d-k100'], 8),
            s_case('convectionDiffusion2d-k100-peclet50-m10', grids['convectionDiffusion2d-k100-peclet50'], 10),
        ],
    }
    print(json.dumps(out))


if __name__ == '__main__':
    main()
