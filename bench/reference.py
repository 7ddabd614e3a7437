#!/usr/bin/env python3
"""NumPy reference for `npm run bench`.

Computes the same quantities as the TypeScript benchmark (bench/stages.ts), the way a competent user
would by hand: LAPACK through NumPy (QR of each A_i^T, SVD of Q_i^T Q_j, eigvalsh of S = sum Q_i Q_i^T,
SVD of A), projections applied as Q_i (Q_i^T v), the D-HBM gradient as A^T (A x - b) with BLAS. It reads
the exact matrix and partition the TypeScript side wrote, so both time the same problem in the same run,
with the same policy: one warm-up of setup + analysis on a 64 x 64 Gaussian system, a streaming pass over A
(best of `streamRepeats`), the expensive stages best of `expensiveRepeats`, single iterations after untimed
warm-up steps (`iterationWarmup`, `iterationWarmupSeconds`) the best of `iterationRepeats`, full solves
(construction included) capped by `maxSolveIterations` and `solveBudgetSeconds`, their final residual
recomputed as |A x - b| / |b|.

Usage: reference.py <problem.json>   (written by bench/run.ts; prints one JSON object on stdout)
  problem.json: { "matrixFile": raw float64 little-endian n*n row-major, "assignmentFile": raw int32,
                  "n", "m", "tolerance", "maxSolveIterations", "solveBudgetSeconds",
                  "iterationWarmup", "iterationWarmupSeconds", "iterationRepeats", "expensiveRepeats", "streamRepeats" }
"""
import ctypes
import glob
import json
import math
import os
import platform
import resource
import sys
import time

import numpy as np


def timed(fn, repeats=1):
    """Best wall time of `repeats` calls (seconds) and the last result."""
    best = math.inf
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def setup(A, rows_of):
    """Orthonormal bases of the machines' row spaces: thin QR of A_i^T."""
    qs, rs = [], []
    for rows in rows_of:
        q, r = np.linalg.qr(A[rows].T)
        qs.append(q)
        rs.append(r)
    return qs, rs


def pair_angle(u, v):
    """Accurate angle between two vectors, folded into [0, pi/2] (absolute cosine)."""
    u = u / np.linalg.norm(u)
    v = v / np.linalg.norm(v)
    t = 2.0 * math.atan2(np.linalg.norm(u - v), np.linalg.norm(u + v))
    return min(t, math.pi - t)


def analysis(A, rows_of, qs, phases):
    """The metrics of docs/SPEC.md; `phases` receives the seconds of each part (same split as bench/stages.ts)."""
    n = A.shape[0]
    m = len(qs)
    t0 = time.perf_counter()
    # Principal angles: cos = sigma_max(Q_a^T Q_b); sine route for small angles (docs/SPEC.md).
    theta = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            a, b = (i, j) if qs[i].shape[1] >= qs[j].shape[1] else (j, i)
            c_block = qs[a].T @ qs[b]
            c = np.linalg.svd(c_block, compute_uv=False)[0]
            if c > 0.9:
                s = np.linalg.svd(qs[b] - qs[a] @ c_block, compute_uv=False)[-1]
                t = math.atan2(s, c)
            else:
                t = math.acos(min(1.0, c))
            theta[i, j] = theta[j, i] = t
    iu = np.triu_indices(m, 1)
    theta_h = float(theta[iu].min()) if m > 1 else math.pi / 2
    t1 = time.perf_counter()
    phases["principalAngles"] = t1 - t0
    # Row angles: phi_i (within machines) and theta_min^(l) (Theorem 4), candidates from |cos|.
    norms = np.linalg.norm(A, axis=1)
    u = A / norms[:, None]
    cosines = np.abs(u @ u.T)
    np.fill_diagonal(cosines, -1.0)
    nearest = np.argmax(cosines, axis=1)
    theta_min = np.array([pair_angle(A[l], A[nearest[l]]) for l in range(n)])
    phi = []
    for rows in rows_of:
        if len(rows) < 2:
            phi.append(None)
            continue
        block = cosines[np.ix_(rows, rows)]
        k, l = np.unravel_index(np.argmax(block), block.shape)
        phi.append(pair_angle(A[rows[k]], A[rows[l]]))
    defined = [p for p in phi if p is not None]
    phi_min = min(defined) if defined else None
    theorem4 = norms.max() / np.min(norms * np.sin(theta_min))
    del u, cosines
    t2 = time.perf_counter()
    phases["localAngles"] = t2 - t1
    # kappa(S) from the spectrum of S, kappa(A^T A) from the singular values of A.
    q_all = np.hstack(qs)
    eig = np.linalg.eigvalsh(q_all @ q_all.T)
    lam_min, lam_max = float(eig[0]), float(eig[-1])
    del q_all
    t3 = time.perf_counter()
    phases["kappaS"] = t3 - t2
    sv = np.linalg.svd(A, compute_uv=False)
    L, mu = float(sv[0] ** 2), float(sv[-1] ** 2)
    phases["kappaAtA"] = time.perf_counter() - t3
    kappa_s, kappa_ata = lam_max / lam_min, L / mu
    # Optimal rates and parameters (docs/SPEC.md, the six algorithms).
    mu_min, mu_max = lam_min / m, lam_max / m
    d = math.sqrt(mu_max) + math.sqrt(mu_min)
    root = math.sqrt(max(0.0, (1 - mu_min) * (1 - mu_max)))
    gamma = 2 * (1 + math.sqrt(mu_min * mu_max) - root) / d ** 2
    eta = 2 * (1 + math.sqrt(mu_min * mu_max) + root) / d ** 2
    sk = math.sqrt(kappa_ata)
    return {
        "thetaH": theta_h,
        "phiMin": phi_min,
        "rowNormRatio": float(norms.max() / norms.min()),
        "theorem4KappaALowerBound": float(theorem4),
        "kappaS": kappa_s,
        "lambdaMinS": lam_min,
        "lambdaMaxS": lam_max,
        "kappaAtA": kappa_ata,
        "apc": {"rate": (math.sqrt(kappa_s) - 1) / (math.sqrt(kappa_s) + 1), "gamma": gamma, "eta": eta},
        "dhbm": {"rate": (sk - 1) / (sk + 1), "alpha": 4 / (math.sqrt(L) + math.sqrt(mu)) ** 2,
                 "beta": ((sk - 1) / (sk + 1)) ** 2},
    }


class Apc:
    """x_i <- x_i + gamma P_i (xbar - x_i); xbar <- (eta/m) sum x_i + (1 - eta) xbar."""

    def __init__(self, A, b, rows_of, qs, rs, gamma, eta):
        self.A, self.b, self.qs, self.gamma, self.eta = A, b, qs, gamma, eta
        self.nb = np.linalg.norm(b)
        # x_i(0): minimum-norm solution of A_i x = b_i, Q_i R^{-T} b_i.
        self.x = np.array([q @ np.linalg.solve(r.T, b[rows]) for q, r, rows in zip(qs, rs, rows_of)])
        self.xbar = self.x.mean(axis=0)

    def estimate(self):
        return self.xbar

    def step(self):
        for i, q in enumerate(self.qs):
            v = self.xbar - self.x[i]
            self.x[i] += self.gamma * (v - q @ (q.T @ v))
        self.xbar = self.eta * self.x.mean(axis=0) + (1 - self.eta) * self.xbar
        return np.linalg.norm(self.A @ self.xbar - self.b) / self.nb


class Dhbm:
    """z <- beta z + A^T (A x - b); x <- x - alpha z."""

    def __init__(self, A, b, alpha, beta):
        self.A, self.b, self.alpha, self.beta = A, b, alpha, beta
        self.nb = np.linalg.norm(b)
        self.x = np.zeros(A.shape[1])
        self.z = np.zeros(A.shape[1])

    def estimate(self):
        return self.x

    def step(self):
        r = self.A @ self.x - self.b
        self.z = self.beta * self.z + self.A.T @ r
        self.x -= self.alpha * self.z
        return np.linalg.norm(r) / self.nb


def solve(make, A, b, tolerance, cap, budget):
    """Iterate until the residual meets `tolerance`, `cap` iterations or `budget` seconds (construction included)."""
    deadline = time.perf_counter() + budget
    method = make()
    residual = math.inf
    iterations = 0
    stop = None
    while stop is None:
        if residual <= tolerance:
            stop = "converged"
        elif not math.isfinite(residual) and iterations > 0:
            stop = "diverged"
        elif iterations >= cap:
            stop = "max-iterations"
        elif time.perf_counter() > deadline:
            stop = "budget"
        else:
            residual = method.step()
            iterations += 1
    final = float(np.linalg.norm(A @ method.estimate() - b) / np.linalg.norm(b))
    return {"iterations": iterations, "relativeResidual": final, "stop": stop}


def current_rss():
    """Resident set size now, in bytes (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def best_step(method, warmup, warmup_seconds, repeats):
    """Untimed steps (at least `warmup`, for at least `warmup_seconds`), then the best of `repeats`."""
    warm_until = time.perf_counter() + warmup_seconds
    k = 0
    while k < warmup or time.perf_counter() < warm_until:
        method.step()
        k += 1
    return timed(method.step, repeats)[0]


def environment():
    env = {"python": platform.python_version(), "numpy": np.__version__}
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        env["blas"] = f'{blas["name"]} {blas["version"]}'
    except Exception:  # an unusual build: the version is informative only
        env["blas"] = None
    # OpenBLAS's own report of its kernel and thread count (NumPy wheels bundle it in numpy.libs).
    for path in glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*")):
        lib = ctypes.CDLL(path)
        for suffix in ("64_", ""):
            for prefix in ("scipy_openblas_", "openblas_"):
                config = getattr(lib, f"{prefix}get_config{suffix}", None)
                threads = getattr(lib, f"{prefix}get_num_threads{suffix}", None)
                if config is not None and threads is not None:
                    config.restype = ctypes.c_char_p
                    env["blasConfig"] = config().decode()
                    env["blasThreads"] = threads()
                    return env
    return env


def main():
    spec = json.load(open(sys.argv[1]))
    n, m = spec["n"], spec["m"]
    baseline_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    A = np.fromfile(spec["matrixFile"], dtype="<f8").reshape(n, n)
    assignment = np.fromfile(spec["assignmentFile"], dtype="<i4")
    rows_of = [np.flatnonzero(assignment == i) for i in range(m)]
    b = A @ np.ones(n)
    warmup, repeats = spec["iterationWarmup"], spec["iterationRepeats"]
    expensive = spec["expensiveRepeats"]
    out = {"side": "numpy", "environment": environment(), "stages": {}}

    # Warm-up (first-call library costs), as bench/stages.ts does: setup + analysis of a small system.
    warm = np.random.default_rng(1).standard_normal((64, 64)) + 1.0
    warm_rows = np.array_split(np.arange(64), 4)
    analysis(warm, warm_rows, setup(warm, warm_rows)[0], {})

    # Memory roofline: one streaming pass over the n x n matrix, two ways: a sum (NumPy's pairwise
    # SIMD reduction, one thread) and a matrix-vector product (OpenBLAS gemv, all its threads).
    ones = np.ones(n)
    stream = {"sum": timed(lambda: A.sum(), spec["streamRepeats"])[0], "gemv": timed(lambda: A @ ones, spec["streamRepeats"])[0]}
    out["stream"] = stream
    out["stages"]["streamMatrix"] = min(stream.values())

    t, (qs, rs) = timed(lambda: setup(A, rows_of), expensive)
    out["stages"]["setup"] = t
    # What the analysis holds beyond its inputs (same measure as bench/stages.ts).
    rss_before_analysis = current_rss()
    best = math.inf
    for _ in range(expensive):
        phases = {}
        t0 = time.perf_counter()
        values = analysis(A, rows_of, qs, phases)
        t = time.perf_counter() - t0
        if t < best:
            best, out["values"], out["analysisPhases"] = t, values, phases
    out["stages"]["analysis"] = best
    out["analysisGrowthBytes"] = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before_analysis)


    make_apc = lambda: Apc(A, b, rows_of, qs, rs, values["apc"]["gamma"], values["apc"]["eta"])
    make_dhbm = lambda: Dhbm(A, b, values["dhbm"]["alpha"], values["dhbm"]["beta"])
    warmup_seconds = spec["iterationWarmupSeconds"]
    out["stages"]["apcIteration"] = best_step(make_apc(), warmup, warmup_seconds, repeats)
    out["stages"]["dhbmIteration"] = best_step(make_dhbm(), warmup, warmup_seconds, repeats)

    cap, tol, budget = spec["maxSolveIterations"], spec["tolerance"], spec["solveBudgetSeconds"]
    for name, make in (("apcSolve", make_apc), ("dhbmSolve", make_dhbm)):
        t, result = timed(lambda: solve(make, A, b, tol, cap, budget))
        out["stages"][name] = t
        out[name] = {**result, "seconds": t}

    out["peakRssBytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["baselineRssBytes"] = baseline_rss
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
