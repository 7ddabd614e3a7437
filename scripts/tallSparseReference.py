"""
SciPy references for a tall CSR system above 2^24 dense entries (N = 40,000, n = 1,000, m = 8):

  python3 scripts/tallSparseReference.py

writes test/fixtures/tallSparse.json. The matrix (test/solvers/analysis/tallSparseLarge.test.ts builds the
same one from the same integer formulas, so both see the same doubles):
  machine i holds rows [5000 i, 5000 (i + 1)) on the columns [lo_i, hi_i) = [125 i - 4, 125 (i + 1) + 4)
  (clipped to [0, 1000)), c_i = hi_i - lo_i; its local row t joins columns j = lo_i + (t mod c_i) and
  k = lo_i + ((t mod c_i) + d) mod c_i, d = 1 + floor(t / c_i), with the values
  s_r (v_k + e_i) at j and -s_r v_j at k, where v_j = 1 + ((37 j + 11 i) mod 17) / 34, s_r = 1 + (r mod 7) / 10
  and e_i = 0.5 on even machines, 0 on odd ones: an odd machine's rows are orthogonal to v on its support
  (rank c_i - 1, a proper row space), an even machine's span its support (rank c_i);
  b = A ones + noise_r, noise_r = 1e-2 (((131 r) mod 101) / 50 - 1): inconsistent.
References, independent of the TypeScript routes: x_LS and sigma(A) from a Householder QR of A taken in
row chunks (R of [R; A_chunk] each time, numpy.linalg.qr), kappa(A^T A), L and mu from R's singular values;
each machine's rank and an orthonormal basis Q_i of R(A_i) from the SVD of its block on its support;
S = sum_i Q_i Q_i^T and its extreme eigenvalues (numpy.linalg.eigvalsh); x_W = S^{-1} sum_i A_i^+ b_i with
A_i^+ b_i the minimum-norm least-squares point, from the same SVD truncated at the rank.
"""
import json
import os

import numpy as np
import scipy.linalg
import scipy.sparse

HERE = os.path.dirname(__file__)
OUT = os.path.join(HERE, "..", "test", "fixtures")

N, n, m = 40000, 1000, 8
P = N // m


def machine_block(i):
    lo, hi = max(0, 125 * i - 4), min(n, 125 * (i + 1) + 4)
    c = hi - lo
    rows, cols, vals = [], [], []
    shift = 0.5 if i % 2 == 0 else 0.0
    v = lambda j: 1 + ((37 * j + 11 * i) % 17) / 34
    for t in range(P):
        r = i * P + t
        j = lo + (t % c)
        k = lo + ((t % c) + 1 + t // c) % c
        s = 1 + (r % 7) / 10
        rows += [r, r]
        cols += [j, k]
        vals += [s * (v(k) + shift), -s * v(j)]
    return lo, hi, rows, cols, vals


def main():
    rows, cols, vals, supports = [], [], [], []
    for i in range(m):
        lo, hi, r, c, v = machine_block(i)
        supports.append((lo, hi))
        rows += r
        cols += c
        vals += v
    A = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(N, n))
    noise = np.array([1e-2 * (((131 * r) % 101) / 50 - 1) for r in range(N)])
    b = A @ np.ones(n) + noise

    R = np.zeros((0, n))
    qtb = np.zeros(0)
    for start in range(0, N, 2000):
        block = A[start : start + 2000].toarray()
        q, R = np.linalg.qr(np.vstack([R, block]))
        qtb = q.T @ np.concatenate([qtb, b[start : start + 2000]])
    x_ls = scipy.linalg.solve_triangular(R, qtb)
    sigma = np.linalg.svd(R, compute_uv=False)

    S = np.zeros((n, n))
    rhs = np.zeros(n)
    ranks = []
    for i, (lo, hi) in enumerate(supports):
        block = A[i * P : (i + 1) * P, lo:hi].toarray()
        u, s, vt = np.linalg.svd(block, full_matrices=False)
        rank = int(np.sum(s > s[0] * max(block.shape) * np.finfo(float).eps))
        ranks.append(rank)
        Q = vt[:rank].T
        S[lo:hi, lo:hi] += Q @ Q.T
        # A_i^+ b_i on the numerical row space (the rank above): lstsq's own cutoff would keep the odd machines' ~eps singular value.
        rhs[lo:hi] += Q @ ((u[:, :rank].T @ b[i * P : (i + 1) * P]) / s[:rank])
    eig = np.linalg.eigvalsh(S)
    x_w = np.linalg.solve(S, rhs)

    nb = np.linalg.norm(b)
    out = {
        "N": N,
        "n": n,
        "machines": m,
        "ranks": ranks,
        "L": float(sigma[0] ** 2),
        "mu": float(sigma[-1] ** 2),
        "kappaAtA": float((sigma[0] / sigma[-1]) ** 2),
        "lambdaMinS": float(eig[0]),
        "lambdaMaxS": float(eig[-1]),
        "kappaS": float(eig[-1] / eig[0]),
        "leastSquaresResidual": float(np.linalg.norm(A @ x_ls - b) / nb),
        "weightedResidual": float(np.linalg.norm(A @ x_w - b) / nb),
        "weightedDistance": float(np.linalg.norm(x_w - x_ls) / np.linalg.norm(x_ls)),
        "leastSquares": x_ls.tolist(),
        "blockWeighted": x_w.tolist(),
    }
    with open(os.path.join(OUT, "tallSparse.json"), "w") as f:
        json.dump(out, f)
    print({k: v for k, v in out.items() if not isinstance(v, list) or len(v) < 10})


main()
