"""
NumPy reference for the advisor's 'refined' candidate: kappa(S), S = sum_i Q_i Q_i^T (Q_i an orthonormal
basis of machine i's row space, from numpy.linalg.qr), of the start assignment (the best other candidate)
and of the refined one, for each case and backend of test/solvers/partitioning/refinedPartitions.json
(scripts/refinedPartitions.ts), on the shuffled matrices of shuffledCases.json (scripts/partitionReference.py).
The assignments are taken as given; only kappa(S) is recomputed, from the matrix formed S's eigenvalues.

  python3 scripts/refinedPartitionReference.py > test/solvers/partitioning/refinedReference.json
  npx prettier --write test/solvers/partitioning/refinedReference.json
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from partitionReference import SHARED, kappa_s, poisson2d  # noqa: E402

import scipy.io  # noqa: E402

HERE = os.path.join(os.path.dirname(__file__), "..", "test", "solvers", "partitioning")


def natural(name):
    if name == "poisson2d-30":
        return poisson2d(30)
    return scipy.io.mmread(os.path.join(SHARED, "matrices", name + ".mtx")).toarray()


def shuffled(case):
    """B[rowPerm[k], colPerm[l]] = A[k, l] (test/solvers/partitioning/cases.ts shuffleCsr)."""
    a = natural(case["name"])
    b = np.zeros_like(a)
    b[np.ix_(case["rowPerm"], case["colPerm"])] = a
    return b


def main():
    with open(os.path.join(HERE, "shuffledCases.json")) as f:
        matrices = {case["name"]: shuffled(case) for case in json.load(f)["cases"]}
    with open(os.path.join(HERE, "refinedPartitions.json")) as f:
        refined = json.load(f)["cases"]
    out = []
    for case in refined:
        b = matrices[case["name"]]
        m = case["m"]
        out.append(
            {
                "backend": case["backend"],
                "name": case["name"],
                "start": case["start"],
                "kappaSStart": kappa_s(b, np.array(case["startAssignment"]), m),
                "kappaSRefined": kappa_s(b, np.array(case["refinedAssignment"]), m),
            }
        )
    json.dump({"cases": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
