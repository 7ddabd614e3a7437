"""
NumPy references for tall systems (N > n) and least squares:

  python3 scripts/tallReference.py

writes
  test/fixtures/tallGaussian.json: a noisy 400 x 100 Gaussian system (seed 20260101, m = 5 contiguous
    machines of 80 rows), b = A x_true + 0.1 noise, with NumPy's lstsq solution x_LS, the block-weighted
    solution x_W = argmin sum_i |L_i^{-1} (A_i x - b_i)|^2 (L_i the Cholesky factor of A_i A_i^T),
    kappa(S) (S = sum_i A_i^T (A_i A_i^T)^{-1} A_i) and kappa(A^T A);
  test/fixtures/ash608.json: for ash608 (../shared/matrices) on 4 contiguous machines, each machine's
    rank, kappa(S) with S = sum_i Q_i Q_i^T (Q_i an orthonormal basis of R(A_i), from the SVD), and
    kappa(A^T A).
x_W is computed as the least-squares solution of the stacked whitened blocks L_i^{-1} A_i, L_i^{-1} b_i,
independently of the TypeScript route (QR of A_i^T).
"""
import json
import os

import numpy as np
import scipy.io
import scipy.linalg

HERE = os.path.dirname(__file__)
SHARED = os.environ.get("SHARED_DIR") or os.path.join(HERE, "..", "..", "shared")
OUT = os.path.join(HERE, "..", "test", "fixtures")


def blocks(N, m):
    """NumPy's array_split row blocks, as { machines: m } partitions."""
    return np.array_split(np.arange(N), m)


def kappa_s(A, parts):
    n = A.shape[1]
    S = np.zeros((n, n))
    for rows in parts:
        Ai = A[rows]
        u, s, vt = np.linalg.svd(Ai, full_matrices=False)
        r = int(np.sum(s > s[0] * max(Ai.shape) * np.finfo(float).eps))
        V = vt[:r].T
        S += V @ V.T
    w = np.linalg.eigvalsh(S)
    return float(w[-1] / w[0]), float(w[0]), float(w[-1])


def kappa_ata(A):
    s = np.linalg.svd(A, compute_uv=False)
    return float((s[0] / s[-1]) ** 2)


def gaussian():
    rng = np.random.default_rng(20260101)
    N, n, m = 400, 100, 5
    A = rng.standard_normal((N, n))
    x_true = rng.standard_normal(n)
    b = A @ x_true + 0.1 * rng.standard_normal(N)
    parts = blocks(N, m)
    x_ls = np.linalg.lstsq(A, b, rcond=None)[0]
    whitened_a = []
    whitened_b = []
    for rows in parts:
        Ai, bi = A[rows], b[rows]
        L = np.linalg.cholesky(Ai @ Ai.T)
        whitened_a.append(scipy.linalg.solve_triangular(L, Ai, lower=True))
        whitened_b.append(scipy.linalg.solve_triangular(L, bi, lower=True))
    x_w = np.linalg.lstsq(np.vstack(whitened_a), np.concatenate(whitened_b), rcond=None)[0]
    # S from its definition, A_i^T (A_i A_i^T)^{-1} A_i, as a check of kappa_s's bases.
    S = sum(A[r].T @ np.linalg.solve(A[r] @ A[r].T, A[r]) for r in parts)
    w = np.linalg.eigvalsh(S)
    ks, lmin, lmax = kappa_s(A, parts)
    assert abs(ks - w[-1] / w[0]) <= 1e-10 * ks
    return {
        "seed": 20260101,
        "machines": m,
        "noise": 0.1,
        "A": A.tolist(),
        "b": b.tolist(),
        "xTrue": x_true.tolist(),
        "leastSquares": x_ls.tolist(),
        "blockWeighted": x_w.tolist(),
        "leastSquaresResidual": float(np.linalg.norm(A @ x_ls - b) / np.linalg.norm(b)),
        "weightedResidual": float(np.linalg.norm(A @ x_w - b) / np.linalg.norm(b)),
        "weightedDistance": float(np.linalg.norm(x_w - x_ls) / np.linalg.norm(x_ls)),
        "kappaS": ks,
        "lambdaMinS": lmin,
        "lambdaMaxS": lmax,
        "kappaAtA": kappa_ata(A),
    }


def ash608():
    A = scipy.io.mmread(os.path.join(SHARED, "matrices", "ash608.mtx")).toarray()
    parts = blocks(A.shape[0], 4)
    ks, lmin, lmax = kappa_s(A, parts)
    return {
        "machines": 4,
        "ranks": [int(np.linalg.matrix_rank(A[r])) for r in parts],
        "kappaS": ks,
        "lambdaMinS": lmin,
        "lambdaMaxS": lmax,
        "kappaAtA": kappa_ata(A),
    }


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, make in (("tallGaussian.json", gaussian), ("ash608.json", ash608)):
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(make(), f)
            f.write("\n")
