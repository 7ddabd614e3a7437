#!/usr/bin/env python3
"""Reference analyses of sparse systems too large for the dense path (test/solvers/analysis/
sparseAnalysis.test.ts), computed with SciPy independently of the TypeScript code.

    python3 test/reference/sparse/analysis.py > test/reference/sparse/analysis.json

Matrices and helpers come from spectra.py next to this file (the same grid definitions as
src/solvers/sparse/generators.ts, the principal angle of a pair from QR bases on the union of the two
supports); eigenvalues by ARPACK eigsh with tol = 1e-12 and 120 Lanczos vectors (TOLERANCE below).
Each case: A partitioned into m contiguous blocks of rows (NumPy array_split), and every field of
the analysis the dense path would report (docs/SPEC.md):
- kappa(A^T A), L, mu: ARPACK on A^T A and on (A^T A)^{-1} = A^{-1} A^{-T} through splu (shift-invert at 0);
- lambda_max(S), lambda_min(S), kappa(S): ARPACK on S = sum_i A_i^T G_i^{-1} A_i (splu of each G_i)
  and on S^{-1} = A^{-1} diag(G_i) A^{-T} through splu of A;
- theta_ij for every pair whose column supports overlap (pi/2 for the others), theta_H, cos theta_H
  and its pair (the first in lexicographic order attaining the minimum);
- phi_i, theta_min^(l), the row-norm ratio and Theorem 4's bound from the normalized row products
  U U^T (sparse: only rows sharing a column), each angle as 2 atan2(|u - v|, |u + v|);
- the six optimal rates from the table of docs/SPEC.md.
"""
import json
import math
import os
import sys

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spectra import convection_diffusion2d, pair_angle, poisson2d, progress  # noqa: E402

# ARPACK's relative residual tolerance: the eigenvalue errors are below it (Weinberger) and in practice
# its square; tol = 0 (machine precision, as spectra.py asks) does not finish in an hour on the
# clustered top of S for 20 Poisson strips.
TOLERANCE = 1e-12


def largest(op, n):
    v0 = np.sin(np.arange(1, n + 1) * 0.7)
    ncv = min(n - 1, 120)
    return float(spl.eigsh(op, k=1, which='LA', tol=TOLERANCE, v0=v0, ncv=ncv, maxiter=100000, return_eigenvectors=False)[0])


def line_angle(u, v):
    """Angle between the lines of two unit sparse rows, accurate for tiny angles, in [0, pi/2]."""
    minus = np.linalg.norm((u - v).toarray())
    plus = np.linalg.norm((u + v).toarray())
    return 2 * math.atan2(min(minus, plus), max(minus, plus))


def local_angles(a, assignment, m):
    """phi_i, theta_min^(l) and Theorem 4's bound over the pairs of rows sharing a column."""
    n = a.shape[0]
    norms = np.sqrt(np.asarray(a.multiply(a).sum(axis=1)).ravel())
    u = sp.diags(1 / norms) @ a
    u = u.tocsr()
    products = (u @ u.T).tocoo()
    keep = products.row < products.col
    rows, cols, cosines = products.row[keep], products.col[keep], np.abs(products.data[keep])
    # The largest |cos| per row and per machine; angles recomputed accurately for every pair within
    # 1e-12 of a running maximum (the minimizer is among them).
    row_max = np.zeros(n)
    np.maximum.at(row_max, rows, cosines)
    np.maximum.at(row_max, cols, cosines)
    same = assignment[rows] == assignment[cols]
    machine_max = np.zeros(m)
    np.maximum.at(machine_max, assignment[rows[same]], cosines[same])
    theta_min = np.full(n, math.pi / 2)
    phi = np.full(m, math.pi / 2)
    candidates = (cosines >= row_max[rows] - 1e-12) | (cosines >= row_max[cols] - 1e-12)
    candidates |= same & (cosines >= machine_max[assignment[rows]] - 1e-12)
    for k, l in zip(rows[candidates], cols[candidates]):
        angle = line_angle(u[k], u[l])
        theta_min[k] = min(theta_min[k], angle)
        theta_min[l] = min(theta_min[l], angle)
        if assignment[k] == assignment[l]:
            phi[assignment[k]] = min(phi[assignment[k]], angle)
    sizes = np.bincount(assignment, minlength=m)
    phi_list = [float(phi[i]) if sizes[i] >= 2 else None for i in range(m)]
    defined = [p for p in phi_list if p is not None]
    return {
        'phi': phi_list,
        'phiMin': min(defined) if defined else None,
        'rowNormRatio': float(norms.max() / norms.min()),
        'theorem4KappaALowerBound': float(norms.max() / np.min(norms * np.sin(theta_min))),
    }


def rates(m, lambda_min_s, lambda_max_s, mu, L):
    ks = lambda_max_s / lambda_min_s
    k = L / mu
    return {
        'apc': (math.sqrt(ks) - 1) / (math.sqrt(ks) + 1),
        'mlm': 1 - lambda_min_s / m,
        'cimmino': (ks - 1) / (ks + 1),
        'dgd': (k - 1) / (k + 1),
        'dnag': 1 - 2 / math.sqrt(3 * k + 1),
        'dhbm': (math.sqrt(k) - 1) / (math.sqrt(k) + 1),
    }


def analysis_case(name, a, m):
    progress('analysis', name)
    a = a.tocsr()
    n = a.shape[0]
    starts = [int(c[0]) for c in np.array_split(np.arange(n), m)] + [n]
    assignment = np.zeros(n, dtype=np.int64)
    for i in range(m):
        assignment[starts[i]:starts[i + 1]] = i
    blocks = [a[starts[i]:starts[i + 1], :] for i in range(m)]

    at = a.T.tocsr()
    lu = spl.splu(a.tocsc())
    progress('  A^T A')
    L = largest(spl.LinearOperator((n, n), matvec=lambda v: at @ (a @ v), dtype=float), n)
    mu = 1 / largest(spl.LinearOperator((n, n), matvec=lambda v: lu.solve(lu.solve(v, trans='T')), dtype=float), n)

    gram_lu = [spl.splu((blk @ blk.T).tocsc()) for blk in blocks]

    def s_apply(v):
        out = np.zeros(n)
        for blk, f in zip(blocks, gram_lu):
            out += blk.T @ f.solve(blk @ v)
        return out

    gb = sp.block_diag([blk @ blk.T for blk in blocks]).tocsr()
    progress('  S')
    lambda_max_s = largest(spl.LinearOperator((n, n), matvec=s_apply, dtype=float), n)
    lambda_min_s = 1 / largest(spl.LinearOperator((n, n), matvec=lambda v: lu.solve(gb @ lu.solve(v, trans='T')), dtype=float), n)

    progress('  angles')
    supports = [set(np.unique(blk.indices).tolist()) for blk in blocks]
    theta = [[0.0 if i == j else math.pi / 2 for j in range(m)] for i in range(m)]
    cosines = {}
    for i in range(m):
        for j in range(i + 1, m):
            if supports[i] & supports[j]:
                t, c = pair_angle(blocks[i], blocks[j])
                theta[i][j] = theta[j][i] = t
                cosines[(i, j)] = c
    theta_h, pair = math.pi / 2, None
    for i in range(m):
        for j in range(i + 1, m):
            if pair is None or theta[i][j] < theta_h:
                theta_h, pair = theta[i][j], [i, j]
    progress('  local angles')
    local = local_angles(a, assignment, m)
    return {
        'name': name,
        'n': n,
        'm': m,
        'blockStarts': starts[:-1],
        'kappaAtA': L / mu,
        'L': L,
        'mu': mu,
        'kappaS': lambda_max_s / lambda_min_s,
        'lambdaMinS': lambda_min_s,
        'lambdaMaxS': lambda_max_s,
        'thetaH': theta_h,
        'cosThetaH': cosines.get(tuple(pair), 0.0) if pair else 0.0,
        'thetaHPair': pair,
        'theta': theta,
        **local,
        'rates': rates(m, lambda_min_s, lambda_max_s, mu, L),
    }


def main():
    out = {
        'generatedBy': 'test/reference/sparse/analysis.py',
        'versions': {'numpy': np.__version__, 'scipy': scipy.__version__},
        'cases': [
            analysis_case('poisson2d-k200-m20', poisson2d(200), 20),
            analysis_case('convectionDiffusion2d-k200-peclet50-m16', convection_diffusion2d(200, 50), 16),
        ],
    }
    print(json.dumps(out))


if __name__ == '__main__':
    main()
