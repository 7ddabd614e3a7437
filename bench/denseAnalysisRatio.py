#!/usr/bin/env python3
"""NumPy's side of bench/denseAnalysisRatio.ts: reference.py's analysis alone on one problem file,
best of `reps` wall times, with that run's CPU time (all BLAS threads) and the process' peak RSS.

Usage: denseAnalysisRatio.py <problem.json> <reps>   (prints one JSON object)
"""
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import analysis, setup  # noqa: E402

spec = json.load(open(sys.argv[1]))
reps = int(sys.argv[2])
n, m = spec["n"], spec["m"]
A = np.fromfile(spec["matrixFile"], dtype="<f8").reshape(n, n)
assignment = np.fromfile(spec["assignmentFile"], dtype="<i4")
rows_of = [np.flatnonzero(assignment == i) for i in range(m)]
warm = np.random.default_rng(1).standard_normal((64, 64)) + 1.0
warm_rows = np.array_split(np.arange(64), 4)
analysis(warm, warm_rows, setup(warm, warm_rows)[0], {})
qs = setup(A, rows_of)[0]
best = None
for _ in range(reps):
    phases = {}
    c0, t0 = time.process_time(), time.perf_counter()
    analysis(A, rows_of, qs, phases)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if best is None or wall < best["wall"]:
        best = {"wall": wall, "cpu": cpu, "phases": phases}
best["peakRssBytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
json.dump(best, sys.stdout)
sys.stdout.write("\n")
