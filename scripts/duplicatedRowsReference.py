"""
NumPy reference for a tall sparse system whose machines hold scaled copies of their own and others' rows, where
SuiteSparseQR's rank detection (Heath's method, native/src/spqr_native.c) kept a row in the others' span and called an
independent one dead on one machine (its 60 kept rows spanned 59 dimensions; the job failed with singular-matrix):

  python3 scripts/duplicatedRowsReference.py

writes test/fixtures/duplicatedRowsSparse.json: the 14th case of scripts/tallSparseSearch.py's seed 4, 1625 x 60 with 3
nonzeros a row on 5 contiguous machines, with NumPy's ranks, x_W and x_LS.
"""
import itertools
import json
import os

from tallSparseSearch import cases, reference

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures")

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "duplicatedRowsSparse.json"), "w") as f:
        json.dump(reference(*next(itertools.islice(cases(4), 13, None))), f)
        f.write("\n")
