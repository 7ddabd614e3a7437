"""The straightforward NumPy computation of the paper's Experiment 1 on one core, for bench/studies.ts.

n = 120, Gaussian entries of mean 0 and 1, m over the 16 divisors of 120 (contiguous equal blocks,
np.array_split), `samples` matrices per mean, each analyzed for every m: kappa(A^T A) from the singular
values of A (the sample is dropped above 1e7, as the paper does), kappa(S) from the eigenvalues of
S = sum_i Q_i Q_i^T (Q_i from np.linalg.qr of A_i^T), then rho_APC = (sqrt(kS) - 1) / (sqrt(kS) + 1) and
rho_HBM = (sqrt(k) - 1) / (sqrt(k) + 1). Same work as the service's study (9,600 analyses for 300
samples); NumPy's own generator draws the matrices (the same distribution, not the same bytes).

Run: OPENBLAS_NUM_THREADS=1 python3 bench/studiesReference.py [samples]  -> JSON on stdout.
"""
import json
import sys
import time

import numpy as np


def experiment_1(samples, seed=1):
    n = 120
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    rng = np.random.default_rng(seed)
    means = {}
    for mean in (0.0, 1.0):
        apc = {m: [] for m in divisors}
        hbm = []
        for _ in range(samples):
            a = mean + rng.standard_normal((n, n))
            sv = np.linalg.svd(a, compute_uv=False)
            kappa = (sv[0] / sv[-1]) ** 2
            for m in divisors:
                s = np.zeros((n, n))
                for block in np.array_split(a, m):
                    q, _ = np.linalg.qr(block.T)
                    s += q @ q.T
                ev = np.linalg.eigvalsh(s)
                ks = ev[-1] / ev[0]
                if kappa <= 1e7:
                    apc[m].append((np.sqrt(ks) - 1) / (np.sqrt(ks) + 1))
            if kappa <= 1e7:
                hbm.append((np.sqrt(kappa) - 1) / (np.sqrt(kappa) + 1))
        means[str(mean)] = {"hbm": float(np.mean(hbm)), "apc": {str(m): float(np.mean(v)) for m, v in apc.items()}, "kept": len(hbm)}
    return means


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    start = time.perf_counter()
    means = experiment_1(count)
    seconds = time.perf_counter() - start
    print(json.dumps({"samples": count, "analyses": 2 * 16 * count, "seconds": seconds, "means": means}))
