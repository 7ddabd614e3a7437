"""
NumPy reference for a tall banded sparse regression whose machines hold more rows than support columns, each of full
rank on its support (src/solvers/distributed/sparseSystem.ts fullSupportRankMachine):

  python3 scripts/bandedRegressionReference.py

writes test/fixtures/bandedRegression.json: the 5,040 x 2,100 system of `banded_regression` below on 2 contiguous
machines (2,520 rows on all 2,100 columns each), with each machine's rank, its local least-squares solution
x_0 = A_i^+ b_i, the block-weighted solution x_W and x_LS. On the TypeScript backend such machines (a row basis above
the streamed route's 2^22 entries) went to the pivot-dropping Cholesky, whose greedily kept rows failed the setup
("conjugate gradients reached a relative residual of 1.67e+62", singular-matrix).

The matrix and b come from the MINSTD generator (state * 48271 mod 2^31 - 1, u = state / (2^31 - 1)), whose arithmetic
is exact in doubles: test/solvers/sparse/support.ts bandedRegression draws the same entries.
"""
import json
import os

import numpy as np

from dependentRowsReference import machine_points

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures")
MODULUS = 2147483647


def banded_regression(rows, n, per_row, width, seed):
    """Row r: per_row distinct columns within `width` of a uniform centre (clamped to [0, n)), values 2u - 1;
    b = A ones + 0.05 (2u - 1)."""
    state = seed

    def draw():
        nonlocal state
        state = state * 48271 % MODULUS
        return state / MODULUS

    A = np.zeros((rows, n))
    b = np.zeros(rows)
    for r in range(rows):
        centre = int(draw() * n)
        cols = []
        while len(cols) < per_row:
            col = min(n - 1, max(0, centre + int(draw() * width) - width // 2))
            if col not in cols:
                cols.append(col)
        for col in sorted(cols):
            A[r, col] = 2 * draw() - 1
        b[r] = A[r].sum() + 0.05 * (2 * draw() - 1)
    return A, b


CASE = {"rows": 5040, "cols": 2100, "perRow": 4, "width": 24, "seed": 20261206, "machines": 2}

if __name__ == "__main__":
    A, b = banded_regression(CASE["rows"], CASE["cols"], CASE["perRow"], CASE["width"], CASE["seed"])
    assert np.linalg.matrix_rank(A) == CASE["cols"]
    points = machine_points(A, b, np.array_split(np.arange(CASE["rows"]), CASE["machines"]))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "bandedRegression.json"), "w") as f:
        json.dump({**CASE, "b": b.tolist(), **points, "leastSquares": np.linalg.lstsq(A, b, rcond=None)[0].tolist()}, f)
        f.write("\n")
