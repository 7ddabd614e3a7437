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
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spl


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
    if spec.get("storage") == "csr":
        sparse_main(spec)
        return
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


# ---------------------------------------------------------------------------------------------
# Sparse problems (sparse.json from bench/sparseProblems.ts: raw CSR arrays, storage "csr")


def sparse_setup(a, starts):
    """Each machine's rows A_i (CSR row slices) and an LU (splu, SuperLU with a fill-reducing
    ordering for symmetric patterns) of its Gram matrix A_i A_i^T, for the projections."""
    blocks, grams = [], []
    for i in range(len(starts) - 1):
        blk = a[starts[i]:starts[i + 1], :]
        blocks.append(blk)
        grams.append(spl.splu((blk @ blk.T).tocsc(), permc_spec="MMD_AT_PLUS_A"))
    return blocks, grams


class SparseApc:
    """APC on CSR: P_i v = v - A_i^T (A_i A_i^T)^{-1} A_i v through each machine's splu; residual |A xbar - b| each step."""

    def __init__(self, a, b, blocks, grams, starts, gamma, eta):
        self.a, self.b, self.blocks, self.grams, self.gamma, self.eta = a, b, blocks, grams, gamma, eta
        self.nb = np.linalg.norm(b)
        n, m = a.shape[0], len(blocks)
        # x_i(0) = A_i^T (A_i A_i^T)^{-1} b_i, the minimum-norm solution of machine i's rows.
        self.x = np.empty((m, n))
        for i, (blk, lu) in enumerate(zip(blocks, grams)):
            self.x[i] = blk.T @ lu.solve(b[starts[i]:starts[i + 1]])
        self.xbar = self.x.mean(axis=0)

    def estimate(self):
        return self.xbar

    def step(self):
        for i, (blk, lu) in enumerate(zip(self.blocks, self.grams)):
            v = self.xbar - self.x[i]
            self.x[i] += self.gamma * (v - blk.T @ lu.solve(blk @ v))
        self.xbar = self.eta * self.x.mean(axis=0) + (1 - self.eta) * self.xbar
        return np.linalg.norm(self.a @ self.xbar - self.b) / self.nb


class SparseDhbm:
    """D-HBM on CSR, the gradient sum_i A_i^T (A_i x - b_i) = A^T (A x - b) formed two ways, both timed
    (the reference keeps the faster): `global`, A.T @ (A @ x - b) on the whole CSR matrix; `machines`, per
    machine on its column support (A_i restricted to the columns it touches), summed by the taskmaster."""

    def __init__(self, a, b, blocks, starts, alpha, beta, how):
        self.a, self.at, self.b, self.alpha, self.beta, self.how = a, a.T.tocsr(), b, alpha, beta, how
        self.nb = np.linalg.norm(b)
        self.x = np.zeros(a.shape[1])
        self.z = np.zeros(a.shape[1])
        self.local = []
        for i, blk in enumerate(blocks):
            support = np.unique(blk.indices)
            local = blk[:, support].tocsr()
            self.local.append((support, local, local.T.tocsr(), b[starts[i]:starts[i + 1]]))

    def estimate(self):
        return self.x

    def step(self):
        if self.how == "global":
            r = self.a @ self.x - self.b
            g = self.at @ r
            rr = r @ r
        else:
            g = np.zeros_like(self.x)
            rr = 0.0
            for support, local, local_t, b_i in self.local:
                r = local @ self.x[support] - b_i
                g[support] += local_t @ r
                rr += r @ r
        self.z = self.beta * self.z + g
        self.x -= self.alpha * self.z
        return math.sqrt(rr) / self.nb


# ARPACK's residual tolerance for the sparse analysis: the one our Lanczos stops at for S's spectrum
# (its eigenvalue errors are below it); 1e-10 took ten minutes on the clustered top of S at n = 10^4.
ANALYSIS_TOLERANCE = 1e-8


def largest_eig(op, n, tol):
    """ARPACK's largest eigenvalue of a symmetric operator (fixed start, 60 Lanczos vectors)."""
    v0 = np.sin(np.arange(1, n + 1) * 0.7)
    return float(spl.eigsh(op, k=1, which="LA", tol=tol, v0=v0, ncv=min(n - 1, 60), maxiter=100000, return_eigenvectors=False)[0])


def sparse_pair_angle(a_rows, b_rows):
    """theta between the row spaces of two sparse blocks, on the union of their column supports (QR bases)."""
    support = np.union1d(np.unique(a_rows.indices), np.unique(b_rows.indices))
    qa = np.linalg.qr(a_rows[:, support].toarray().T)[0]
    qb = np.linalg.qr(b_rows[:, support].toarray().T)[0]
    if qb.shape[1] > qa.shape[1]:
        qa, qb = qb, qa
    g = qa.T @ qb
    c = float(np.linalg.svd(g, compute_uv=False)[0])
    s = float(np.linalg.svd(qb - qa @ g, compute_uv=False)[-1])
    return math.atan2(s, c)


# Above this many entries in the dense bases of a pair (rows x union support), theta_ij goes through
# ARPACK instead of dense QR: at convection-diffusion n = 250,000, m = 100 one pair (2500 rows each,
# 5500 columns) took 545 s of dense QR and SVD on a loaded 2-core machine.
DENSE_PAIR_MAX_ENTRIES = 2_000_000


def sparse_pair_angle_krylov(a_rows, b_rows, lu_a, lu_b, tol):
    """theta between the row spaces of two sparse blocks through their Gram factorizations (splu of
    A_i A_i^T): cos^2 theta = lambda_max(P_b P_a P_b), P_i = A_i^T G_i^{-1} A_i the projector onto
    R(A_i^T), by eigsh on the union of the column supports; theta = arccos(sqrt(.)) (fine away from
    tiny angles, where the dense route's sine is needed)."""
    support = np.union1d(np.unique(a_rows.indices), np.unique(b_rows.indices))
    ra = a_rows[:, support].tocsr()
    rb = b_rows[:, support].tocsr()
    rat, rbt = ra.T.tocsr(), rb.T.tocsr()

    def apply(v):
        w = rbt @ lu_b.solve(rb @ v)
        w = rat @ lu_a.solve(ra @ w)
        return rbt @ lu_b.solve(rb @ w)

    size = support.size
    c2 = largest_eig(spl.LinearOperator((size, size), matvec=apply, dtype=float), size, tol)
    return math.acos(min(1.0, math.sqrt(max(0.0, c2))))


def sparse_analysis(a, blocks, grams, tol, phases=None):
    """The analysis on CSR the way a SciPy user would do it: ARPACK (eigsh) on A^T A and, shift-invert
    through splu of A, on (A^T A)^{-1}; on S = sum_i A_i^T G_i^{-1} A_i and on S^{-1} = A^{-1} diag(G_i) A^{-T};
    theta_ij for the pairs whose column supports overlap (QR on their union, pi/2 for the others); the row
    products U U^T (rows sharing a column) for phi_i, theta_min^(l) and the row-norm ratio."""
    n = a.shape[0]
    m = len(blocks)
    at = a.T.tocsr()
    phases = {} if phases is None else phases
    clock = [time.perf_counter()]

    def lap(name):
        now = time.perf_counter()
        phases[name] = now - clock[0]
        clock[0] = now

    lu = spl.splu(a.tocsc())
    lap("lu")
    L = largest_eig(spl.LinearOperator((n, n), matvec=lambda v: at @ (a @ v), dtype=float), n, tol)
    lap("L")
    mu = 1 / largest_eig(spl.LinearOperator((n, n), matvec=lambda v: lu.solve(lu.solve(v, trans="T")), dtype=float), n, tol)
    lap("mu")

    def s_apply(v):
        out = np.zeros(n)
        for blk, f in zip(blocks, grams):
            out += blk.T @ f.solve(blk @ v)
        return out

    gb = sp.block_diag([blk @ blk.T for blk in blocks]).tocsr()
    lam_max = largest_eig(spl.LinearOperator((n, n), matvec=s_apply, dtype=float), n, tol)
    lap("lambdaMaxS")
    lam_min = 1 / largest_eig(spl.LinearOperator((n, n), matvec=lambda v: lu.solve(gb @ lu.solve(v, trans="T")), dtype=float), n, tol)
    lap("lambdaMinS")
    supports = [np.unique(blk.indices) for blk in blocks]
    theta_h = math.pi / 2
    for i in range(m):
        for j in range(i + 1, m):
            common = np.intersect1d(supports[i], supports[j], assume_unique=True).size
            if common == 0:
                continue
            union = supports[i].size + supports[j].size - common
            if (blocks[i].shape[0] + blocks[j].shape[0]) * union <= DENSE_PAIR_MAX_ENTRIES:
                theta = sparse_pair_angle(blocks[i], blocks[j])
            else:
                theta = sparse_pair_angle_krylov(blocks[i], blocks[j], grams[i], grams[j], tol)
            theta_h = min(theta_h, theta)
    lap("principalAngles")
    norms = np.sqrt(np.asarray(a.multiply(a).sum(axis=1)).ravel())
    u = (sp.diags(1 / norms) @ a).tocsr()
    products = (u @ u.T).tocoo()
    keep = products.row != products.col
    cosines = np.abs(products.data[keep])
    row_max = np.zeros(n)
    np.maximum.at(row_max, products.row[keep], cosines)
    lap("localAngles")
    return {"kappaS": lam_max / lam_min, "lambdaMinS": lam_min, "lambdaMaxS": lam_max, "kappaAtA": L / mu, "thetaH": theta_h,
            "L": L, "mu": mu, "rowNormRatio": float(norms.max() / norms.min()), "largestRowCosine": float(row_max.max())}


def sparse_main(spec):
    n, m, nnz = spec["n"], spec["m"], spec["nnz"]
    baseline_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    row_ptr = np.fromfile(spec["rowPtrFile"], dtype="<i4")
    col_idx = np.fromfile(spec["colIdxFile"], dtype="<i4")
    values = np.fromfile(spec["valuesFile"], dtype="<f8")
    a = sp.csr_matrix((values, col_idx, row_ptr), shape=(n, n))
    assignment = np.fromfile(spec["assignmentFile"], dtype="<i4")
    starts = [int(s) for s in np.searchsorted(assignment, np.arange(m))] + [n]
    b = a @ np.ones(n)
    out = {"side": "numpy", "environment": {**environment(), "scipy": scipy.__version__}, "stages": {}, "values": None}
    repeats, expensive = spec["iterationRepeats"], spec["expensiveRepeats"]

    # Warm-up (first-call costs), as bench/sparseStages.ts does: a small sparse system.
    warm = sp.random(400, 400, density=0.02, random_state=1, format="csr") + sp.identity(400, format="csr") * 4
    sparse_setup(warm, [0, 100, 200, 300, 400])

    t, (blocks, grams) = timed(lambda: sparse_setup(a, starts), expensive)
    out["stages"]["setup"] = t
    gamma, eta, alpha, beta = 1.0, 1.0, 1e-2, 0.5
    if spec["analysis"]:
        phases = {}
        t, values = timed(lambda: sparse_analysis(a, blocks, grams, ANALYSIS_TOLERANCE, phases), expensive)
        out["stages"]["analysis"] = t
        out["analysisPhases"] = phases
        out["values"] = {k: values[k] for k in ("kappaS", "lambdaMinS", "lambdaMaxS", "kappaAtA", "thetaH")}
        mu_min, mu_max = values["lambdaMinS"] / m, values["lambdaMaxS"] / m
        d = math.sqrt(mu_max) + math.sqrt(mu_min)
        root = math.sqrt(max(0.0, (1 - mu_min) * (1 - mu_max)))
        gamma = 2 * (1 + math.sqrt(mu_min * mu_max) - root) / d ** 2
        eta = 2 * (1 + math.sqrt(mu_min * mu_max) + root) / d ** 2
        sk = math.sqrt(values["kappaAtA"])
        alpha, beta = 4 / (math.sqrt(values["L"]) + math.sqrt(values["mu"])) ** 2, ((sk - 1) / (sk + 1)) ** 2
    warmup = spec["iterationWarmup"]
    dhbm = {how: best_step(SparseDhbm(a, b, blocks, starts, alpha, beta, how), warmup, 0, repeats) for how in ("global", "machines")}
    out["dhbmVariants"] = dhbm
    out["stages"]["dhbmIteration"] = min(dhbm.values())
    out["stages"]["apcIteration"] = best_step(SparseApc(a, b, blocks, grams, starts, gamma, eta), warmup, 0, repeats)
    out["peakRssBytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["baselineRssBytes"] = baseline_rss
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
