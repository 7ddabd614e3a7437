"""
NumPy reference for machines whose rows are dependent, with labels outside their span:

  python3 scripts/dependentRowsReference.py

writes test/fixtures/ash608Noisy.json: ash608 (../shared/matrices, 608 x 188) on 4 contiguous machines
(NumPy's array_split, as { machines: 4 }), b_k = (A ones)_k + 0.01 sin(k + 1) (k from 0: inconsistent, and
inconsistent on each machine), with
  - each machine's rank (matrix_rank) and its minimum-norm local least-squares solution x_0 = A_i^+ b_i;
  - the block-weighted solution x_W, the fixed point of the projection methods:
    sum_i A_i^+ (A_i x - b_i) = 0, i.e. (sum_i A_i^+ A_i) x = sum_i A_i^+ b_i.
The pseudo-inverses cut the singular values below max(p, n) eps sigma_max, matrix_rank's own threshold.
"""
import json
import os

import numpy as np
import scipy.io

HERE = os.path.dirname(__file__)
SHARED = os.environ.get("SHARED_DIR") or os.path.join(HERE, "..", "..", "shared")
OUT = os.path.join(HERE, "..", "test", "fixtures")


def machine_points(A, b, parts):
    """Each machine's rank and x_0 = A_i^+ b_i, and x_W, for the machines' row index arrays `parts`."""
    n = A.shape[1]
    ranks, local = [], []
    S = np.zeros((n, n))
    rhs = np.zeros(n)
    for rows in parts:
        Ai, bi = A[rows], b[rows]
        pinv = np.linalg.pinv(Ai, rcond=max(Ai.shape) * np.finfo(float).eps)
        ranks.append(int(np.linalg.matrix_rank(Ai)))
        local.append((pinv @ bi).tolist())
        S += pinv @ Ai
        rhs += pinv @ bi
    x_w = np.linalg.solve(S, rhs)
    return {"ranks": ranks, "localLeastSquares": local, "blockWeighted": x_w.tolist()}


def main():
    A = scipy.io.mmread(os.path.join(SHARED, "matrices", "ash608.mtx")).toarray()
    N, n = A.shape
    b = A @ np.ones(n) + 0.01 * np.sin(np.arange(N) + 1.0)
    return {"machines": 4, "b": b.tolist(), **machine_points(A, b, np.array_split(np.arange(N), 4))}


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "ash608Noisy.json"), "w") as f:
        json.dump(main(), f)
        f.write("\n")
