"""
NumPy reference for a tall sparse system whose machines hold scaled copies of their own and others' rows, where
SuiteSparseQR's rank detection (Heath's method, native/src/spqr_native.c) kept a row in the others' span and called an
independent one dead on one machine (its 60 kept rows spanned 59 dimensions; the job failed with singular-matrix):

  python3 scripts/duplicatedRowsReference.py

writes test/fixtures/duplicatedRowsSparse.json: the 14th case of scripts/tallSparseSearch.py's seed 4, 1625 x 60 with 3
nonzeros a row on 5 contiguous machines, with NumPy's ranks, x_W and x_LS. And test/fixtures/illConditionedRowsSparse.json:
the 5th case of its seed 6, large, 2510 x 100 on 5 machines, where the rows SuiteSparseQR kept on one machine were
taken by the Cholesky factorization with a condition number of ~1.6e18 (x_W came out off by 7e-4).
"""
import itertools
import json
import os

from tallSparseSearch import LARGE, SMALL, cases, reference

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures")

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, seed, sizes, index in [("duplicatedRowsSparse", 4, SMALL, 13), ("illConditionedRowsSparse", 6, LARGE, 4)]:
        with open(os.path.join(OUT, f"{name}.json"), "w") as f:
            json.dump(reference(*next(itertools.islice(cases(seed, sizes), index, None))), f)
            f.write("\n")
