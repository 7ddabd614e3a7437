"""
An extended-precision reference for sigma_min of an ill-conditioned real matrix, plat362 (kappa(A) ~ 2.2e11):

  python3 scripts/illConditionedReference.py

writes test/fixtures/plat362Extended.json. In double precision no method resolves mu = sigma_min(A)^2 beyond about
eps kappa(A) ~ 5e-5 relative (NumPy's SVD and eigvalsh of A differ by 9e-6), so the reference is computed in x87 long
double (numpy.longdouble, eps 1.1e-19, where eps kappa(A) ~ 2.4e-8): an LU with partial pivoting of A, block inverse
iteration on (A^T A)^{-1} = A^{-1} A^{-T} with 8 vectors (plat362's two smallest singular values are 1.4e-4 apart,
relative), then Rayleigh-Ritz on A^T A in the block: the smallest Ritz value of |A X|^2, which is accurate to about
eps_ld kappa(A) relative in long double. Also written: NumPy's double-precision values, for comparison.
"""
import json
import os

import numpy as np
import scipy.io

HERE = os.path.dirname(__file__)
MATRIX = os.path.join(HERE, "..", "..", "shared", "matrices", "plat362.mtx")
OUT = os.path.join(HERE, "..", "test", "fixtures", "plat362Extended.json")

A = scipy.io.mmread(MATRIX).toarray().astype(np.longdouble)
n = A.shape[0]

# P A = L U in long double.
LU = A.copy()
piv = np.arange(n)
for k in range(n - 1):
    p = k + int(np.argmax(np.abs(LU[k:, k])))
    if p != k:
        LU[[k, p]] = LU[[p, k]]
        piv[[k, p]] = piv[[p, k]]
    LU[k + 1 :, k] /= LU[k, k]
    LU[k + 1 :, k + 1 :] -= np.outer(LU[k + 1 :, k], LU[k, k + 1 :])
L = np.tril(LU, -1) + np.eye(n, dtype=np.longdouble)
U = np.triu(LU)


def lower(T, b):
    x = np.zeros(n, dtype=np.longdouble)
    for i in range(n):
        x[i] = (b[i] - T[i, :i] @ x[:i]) / T[i, i]
    return x


def upper(T, b):
    x = np.zeros(n, dtype=np.longdouble)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - T[i, i + 1 :] @ x[i + 1 :]) / T[i, i]
    return x


def inverse_normal(b):
    """(A^T A)^{-1} b = A^{-1} A^{-T} b: A^T = U^T L^T P."""
    z = upper(L.T, lower(U.T, b))
    y = np.zeros(n, dtype=np.longdouble)
    y[piv] = z
    return upper(U, lower(L, y[piv]))


def orthonormal(X):
    Q = X.copy()
    for j in range(Q.shape[1]):
        for _ in range(2):
            for i in range(j):
                Q[:, j] -= (Q[:, i] @ Q[:, j]) * Q[:, i]
        Q[:, j] /= np.sqrt(Q[:, j] @ Q[:, j])
    return Q


X = orthonormal(np.random.default_rng(1).standard_normal((n, 8)).astype(np.longdouble))
for _ in range(60):
    X = orthonormal(np.stack([inverse_normal(X[:, j]) for j in range(X.shape[1])], axis=1))
# Rayleigh-Ritz on A^T A in span(X): the eigenvalues of (A X)^T (A X), in long double by Jacobi rotations.
AX = A @ X
H = AX.T @ AX
for _ in range(30):
    for p in range(H.shape[0]):
        for q in range(p + 1, H.shape[0]):
            if H[p, q] == 0:
                continue
            theta = (H[q, q] - H[p, p]) / (2 * H[p, q])
            t = np.sign(theta) / (abs(theta) + np.sqrt(theta * theta + 1)) if theta != 0 else np.longdouble(1)
            c = 1 / np.sqrt(t * t + 1)
            s = t * c
            J = np.eye(H.shape[0], dtype=np.longdouble)
            J[p, p] = J[q, q] = c
            J[p, q] = s
            J[q, p] = -s
            H = J.T @ H @ J
ritz = np.sort(np.diag(H))
mu = ritz[0]

# L = sigma_max^2 by the power method on A^T A (well conditioned: double suffices, done in long double anyway).
v = np.ones(n, dtype=np.longdouble)
for _ in range(500):
    w = A.T @ (A @ v)
    v = w / np.sqrt(w @ w)
top = (A @ v) @ (A @ v)

Ad = A.astype(np.float64)
s = np.linalg.svd(Ad, compute_uv=False)
reference = {
    "matrix": "plat362",
    "method": "long double LU, block inverse iteration (8 vectors, 60 steps), Rayleigh-Ritz on A^T A",
    "mu": float(mu),
    "secondSmallest": float(ritz[1]),
    "L": float(top),
    "kappaAtA": float(top / mu),
    "numpySvdMu": float(s[-1] ** 2),
    "numpyEigvalshMu": float(np.min(np.abs(np.linalg.eigvalsh(Ad))) ** 2),
}
with open(OUT, "w") as f:
    json.dump(reference, f, indent=2)
    f.write("\n")
print(json.dumps(reference, indent=2))
