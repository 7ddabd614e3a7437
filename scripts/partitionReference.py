"""
NumPy reference for the partition advisor's check cases (issue 25 §2): kappa(S), S = sum_i Q_i Q_i^T
(Q_i an orthonormal basis of machine i's row space), of a matrix's natural contiguous partition and
of the contiguous partition of the same matrix with its rows shuffled. The shuffles are drawn here
(NumPy's default_rng, seeds below) and written into the JSON, which the TypeScript tests read to
build the same shuffled matrices (test/solvers/partitioning/advisor.test.ts).

  python3 scripts/partitionReference.py > test/solvers/partitioning/shuffledCases.json

A column shuffle does not change kappa(S) (it rotates every Q_i alike), so only the row
permutation decides the shuffled partition: shuffled row perm[k] is natural row k.
"""
import json
import os
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp

SHARED = os.environ.get("SHARED_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "shared")
M = 8


def poisson2d(k):
    """The 5-point Laplacian with the diagonal 4, unknown (i, j) numbered i k + j (src/solvers/sparse/generators.ts)."""
    t = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(k, k))
    e = sp.diags([-1.0, -1.0], [-1, 1], shape=(k, k))
    return (sp.kron(sp.identity(k), t) + sp.kron(e, sp.identity(k))).toarray()


def contiguous(n, m):
    """NumPy's array_split, as `{ machines: m }`."""
    return np.concatenate([np.full(len(block), i) for i, block in enumerate(np.array_split(np.arange(n), m))])


def kappa_s(a, assignment, m):
    n = a.shape[0]
    s = np.zeros((n, n))
    for i in range(m):
        q, _ = np.linalg.qr(a[assignment == i].T)
        s += q @ q.T
    eig = np.linalg.eigvalsh(s)
    return float(eig[-1] / eig[0])


def case(name, a, seed):
    n = a.shape[0]
    rng = np.random.default_rng(seed)
    row_perm = rng.permutation(n)
    col_perm = rng.permutation(n)
    natural = contiguous(n, M)
    # Shuffled row row_perm[k] is natural row k; its contiguous machine is that of position row_perm[k].
    shuffled = natural[row_perm]
    return {
        "name": name,
        "n": n,
        "m": M,
        "rowPerm": row_perm.tolist(),
        "colPerm": col_perm.tolist(),
        "kappaSNatural": kappa_s(a, natural, M),
        "kappaSShuffledContiguous": kappa_s(a, shuffled, M),
    }


def main():
    gr = scipy.io.mmread(os.path.join(SHARED, "matrices", "gr_30_30.mtx")).toarray()
    cases = [case("poisson2d-30", poisson2d(30), 25), case("gr_30_30", gr, 26)]
    json.dump({"machines": M, "cases": cases}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
