"""SciPy's side of bench/csrGradient.ts: one D-HBM iteration on a CSR matrix the way reference.py's sparse branch
times it (SparseDhbm, `global` and `machines`), served over stdin/stdout so that the TypeScript side can interleave
its own timings with these in one run. Commands (one a line): `load <sparse.json>` -> `ready`; `time <repeats>` ->
JSON {"global": best seconds, "machines": best seconds} of that many steps each (after 3 untimed ones)."""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

from reference import SparseDhbm


def load(path):
    spec = json.load(open(path))
    n, nnz, m = spec["n"], spec["nnz"], spec["m"]
    a = sp.csr_matrix((np.fromfile(spec["valuesFile"], dtype="<f8"), np.fromfile(spec["colIdxFile"], dtype="<i4"),
                       np.fromfile(spec["rowPtrFile"], dtype="<i4")), shape=(n, n))
    assignment = np.fromfile(spec["assignmentFile"], dtype="<i4")
    # Contiguous strips (the benchmark's partitions): machine i holds rows starts[i] .. starts[i + 1].
    starts = np.searchsorted(assignment, np.arange(m + 1))
    blocks = [a[starts[i]:starts[i + 1]] for i in range(m)]
    b = np.sin(0.7 * np.arange(n)) + 0.25
    return {how: SparseDhbm(a, b, blocks, starts, 1e-30, 0.5, how) for how in ("global", "machines")}


def best(method, repeats):
    for _ in range(3):
        method.step()
    out = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        method.step()
        out = min(out, time.perf_counter() - t0)
    return out


def main():
    methods = None
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "load":
            methods = load(argument)
            print("ready", flush=True)
        elif command == "time":
            print(json.dumps({how: best(method, int(argument)) for how, method in methods.items()}), flush=True)
        elif command == "quit":
            return


if __name__ == "__main__":
    main()
