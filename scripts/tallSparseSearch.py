"""
A random search over tall sparse systems, for the row bases of machines with dependent rows
(src/solvers/distributed/sparseSystem.ts): each case with NumPy's machine ranks, x_W and x_LS.

  python3 scripts/tallSparseSearch.py <seed> [large] > /tmp/cases.json
  node --import tsx scripts/tallSparseSearch.ts /tmp/cases.json

Up to 24 cases a seed: n in {5, 12, 30, 60} unknowns (`large`: up to 6 cases, n in {100, 200, 400}), m in {2, 3, 5} contiguous machines of up to 6 n rows, k in
{1, 2, 3, 5} nonzeros a row at random columns (values uniform in [-1, 1]), in 40% of the cases a fifth of the rows
replaced by scaled copies of random rows; only cases of full column rank. b = A ones + 0.05 N(0, 1).
"""
import json
import sys

import numpy as np

from dependentRowsReference import machine_points


SMALL = ([5, 12, 30, 60], 24)
LARGE = ([100, 200, 400], 6)


def cases(seed, sizes=SMALL):
    """The accepted cases of NumPy's default_rng(seed), as (A, b, m); sizes: the unknowns' choices and the draws."""
    rng = np.random.default_rng(seed)
    choices, draws = sizes
    for _ in range(draws):
        n = int(rng.choice(choices))
        m = int(rng.choice([2, 3, 5]))
        per = int(rng.integers(m * n // m + 1, 6 * n))
        N = per * m
        k = min(int(rng.choice([1, 2, 3, 5])), n)
        A = np.zeros((N, n))
        for i in range(N):
            cols = rng.choice(n, size=k, replace=False)
            A[i, cols] = rng.uniform(-1, 1, size=k)
        if rng.random() < 0.4:
            for i in rng.choice(N, size=N // 5, replace=False):
                A[i] = A[int(rng.integers(N))] * rng.uniform(0.5, 2)
        A[np.abs(A).sum(1) == 0, int(rng.integers(n))] = 1.0
        if np.linalg.matrix_rank(A) < n:
            continue
        yield A, A @ np.ones(n) + 0.05 * rng.standard_normal(N), m


def reference(A, b, m):
    """The case as JSON: its entries and NumPy's ranks, x_W and x_LS."""
    N, n = A.shape
    rows, cols = np.nonzero(A)
    return {
        "rows": N,
        "cols": n,
        "machines": m,
        "entries": [[int(i), int(j), float(A[i, j])] for i, j in zip(rows, cols)],
        "b": b.tolist(),
        **{key: value for key, value in machine_points(A, b, np.array_split(np.arange(N), m)).items() if key != "localLeastSquares"},
        "leastSquares": np.linalg.lstsq(A, b, rcond=None)[0].tolist(),
    }


if __name__ == "__main__":
    sizes = LARGE if sys.argv[2:] == ["large"] else SMALL
    json.dump([reference(*case) for case in cases(int(sys.argv[1]), sizes)], sys.stdout)
    sys.stdout.write("\n")
