"""
An extended-precision reference for the smallest principal angle between the row spaces of plat362's two contiguous
halves (rows 0-180 and 181-361: a partition into 2 machines), where several angles are below 1e-8 rad:

  python3 scripts/csrPairAngleReference.py

writes test/fixtures/plat362PairAngle.json. cos^2 of those angles is 1 to within rounding, so only a sine route sees
them: sin(theta_min) = sigma_min(W), W = Q_b - Q_a (Q_a^T Q_b) for orthonormal bases Q_a, Q_b of the two row spaces.
Computed in x87 long double (numpy.longdouble, eps 1.1e-19): Householder QR of each half's A_i^T (362 x 181), W, the
QR of W, then inverse iteration with R^T R on a block of 4 vectors and Rayleigh-Ritz on |R X|^2 for the smallest
singular values. Also written: NumPy's double-precision sine route (LAPACK QR and SVD) and the cosines of the top, for
comparison. The double-precision bases themselves carry ~eps kappa(A_i) (~1e-13, kappa(A_i) ~ 900) of error, which
bounds what any double-precision method can agree with this to.
"""
import json
import os

import numpy as np
import scipy.io

HERE = os.path.dirname(__file__)
MATRIX = os.path.join(HERE, "..", "..", "shared", "matrices", "plat362.mtx")
OUT = os.path.join(HERE, "..", "test", "fixtures", "plat362PairAngle.json")
LD = np.longdouble

A = scipy.io.mmread(MATRIX).toarray()
n = A.shape[0]
half = (n + 1) // 2
rows_a = np.arange(half)
rows_b = np.arange(half, n)


def householder_q(X):
    """Thin Q of X (m x k, long double) by Householder reflections."""
    m, k = X.shape
    R = X.astype(LD).copy()
    vs = []
    for j in range(k):
        x = R[j:, j].copy()
        alpha = -np.sign(x[0] if x[0] != 0 else 1) * np.sqrt(np.sum(x * x))
        v = x.copy()
        v[0] -= alpha
        v /= np.sqrt(np.sum(v * v))
        R[j:, j:] -= 2 * np.outer(v, v @ R[j:, j:])
        vs.append(v)
    Q = np.zeros((m, k), dtype=LD)
    for j in range(k):
        Q[j, j] = 1
    for j in range(k - 1, -1, -1):
        v = vs[j]
        Q[j:, :] -= 2 * np.outer(v, v @ Q[j:, :])
    return Q, np.triu(R[:k, :])


def upper_solve(R, b):
    k = R.shape[0]
    x = np.zeros(k, dtype=LD)
    for i in range(k - 1, -1, -1):
        x[i] = (b[i] - R[i, i + 1 :] @ x[i + 1 :]) / R[i, i]
    return x


def lower_solve_transposed(R, b):
    # R^T x = b, R upper triangular.
    k = R.shape[0]
    x = np.zeros(k, dtype=LD)
    for i in range(k):
        x[i] = (b[i] - R[:i, i] @ x[:i]) / R[i, i]
    return x


Qa, _ = householder_q(A[rows_a].T)
Qb, _ = householder_q(A[rows_b].T)
W = Qb - Qa @ (Qa.T @ Qb)
_, Rw = householder_q(W)
# Inverse iteration with (R^T R)^{-1} on a block, then Rayleigh-Ritz on |R X|^2.
rng = np.random.default_rng(1)
X = rng.standard_normal((Rw.shape[0], 4)).astype(LD)
for _ in range(80):
    Y = np.column_stack([upper_solve(Rw, lower_solve_transposed(Rw, X[:, t])) for t in range(X.shape[1])])
    X, _ = householder_q(Y)
RX = Rw @ X
H = (RX.T @ RX).astype(np.float64)
# The Ritz problem is small and its values tiny: solve it in double on the long-double products' rounding.
ritz = np.sort(np.linalg.eigvalsh(H))
sines_ld = np.sqrt(np.maximum(ritz, 0))

# Double precision, as NumPy does it.
qa, _ = np.linalg.qr(A[rows_a].T)
qb, _ = np.linalg.qr(A[rows_b].T)
cosines = np.linalg.svd(qa.T @ qb, compute_uv=False)
sines_double = np.sort(np.linalg.svd(qb - qa @ (qa.T @ qb), compute_uv=False))

with open(OUT, "w") as f:
    json.dump(
        {
            "generatedBy": "scripts/csrPairAngleReference.py",
            "versions": {"numpy": np.__version__, "scipy": scipy.__version__},
            "matrix": "plat362",
            "machines": 2,
            "rowsA": [0, half],
            "rowsB": [half, n],
            "smallestSinesLongDouble": [float(s) for s in sines_ld],
            "thetaMinLongDouble": float(np.arcsin(sines_ld[0])),
            "smallestSinesDouble": [float(s) for s in sines_double[:4]],
            "topCosinesDouble": [float(c) for c in cosines[:4]],
        },
        f,
        indent=2,
    )
print(json.dumps({"sinesLongDouble": [float(s) for s in sines_ld], "sinesDouble": [float(s) for s in sines_double[:4]]}))
