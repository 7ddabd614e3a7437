"""
NumPy reference for tall sparse machines whose row-basis factor fills (R of A_i^T is dense: many more rows than
columns, a few nonzeros a row at random columns), the case the native addon's second QR takes densely:

  python3 scripts/filledRowBasisReference.py

writes test/fixtures/tallFilledSparse.json: a 600 x 40 matrix, 5 nonzeros a row at random columns (values uniform
in [-1, 1], NumPy's default_rng(20261206)), on 3 contiguous machines of 200 rows ({ machines: 3 }). Machine 2's rows
have column 39 = column 0 + column 1, so its rank is 39 of its 40 support columns. b_k = (A ones)_k + 0.01 sin(k + 1)
(inconsistent on each machine). With each machine's rank (matrix_rank), its minimum-norm local least-squares
solution x_0 = A_i^+ b_i and the block-weighted solution x_W ((sum_i A_i^+ A_i) x = sum_i A_i^+ b_i), by
scripts/dependentRowsReference.py's machine_points.
"""
import json
import os

import numpy as np

from dependentRowsReference import machine_points

HERE = os.path.dirname(__file__)
OUT = os.path.join(HERE, "..", "test", "fixtures")
N, n, m, PER_ROW = 600, 40, 3, 5


def main():
    rng = np.random.default_rng(20261206)
    A = np.zeros((N, n))
    for k in range(N):
        last = 2 * N // 3 <= k
        cols = rng.choice(n - 1 if last else n, size=PER_ROW, replace=False)
        A[k, cols] = rng.uniform(-1, 1, size=PER_ROW)
        if last:
            A[k, n - 1] = A[k, 0] + A[k, 1]
    b = A @ np.ones(n) + 0.01 * np.sin(np.arange(N) + 1.0)
    entries = [[int(i), int(j), float(A[i, j])] for i, j in zip(*np.nonzero(A))]
    return {
        "rows": N,
        "cols": n,
        "machines": m,
        "entries": entries,
        "b": b.tolist(),
        **machine_points(A, b, np.array_split(np.arange(N), m)),
    }


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "tallFilledSparse.json"), "w") as f:
        json.dump(main(), f)
        f.write("\n")
