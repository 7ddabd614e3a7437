"""
NumPy references for federated regression data (src/solvers/input/regression.ts):

  python3 scripts/regressionReference.py

runs `npx tsx scripts/regressionData.ts` (the data a regression job generates on 4 contiguous machines,
and one sample of a small regression study) and writes test/fixtures/regression.json with, for each:
the checksums sum(A), sum(b) (so a changed generator is noticed), NumPy's lstsq solution x_LS, the
block-weighted solution x_W (the projection methods' fixed point: S x = sum_i A_i^+ b_i with
S = sum_i A_i^+ A_i, pseudo-inverses from the SVD), kappa(S), kappa(A^T A), |A x_LS - b| / |b| and the
optimal rates (sqrt(k) - 1) / (sqrt(k) + 1) of APC (k = kappa(S)) and D-HBM (k = kappa(A^T A)).
The data itself is not stored: the tests generate it again from the same specs.
"""
import json
import os
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
OUT = os.path.join(ROOT, "test", "fixtures", "regression.json")


def rate(k):
    return float((np.sqrt(k) - 1) / (np.sqrt(k) + 1))


def reference(case):
    A = np.array(case["A"])
    b = np.array(case["b"])
    assignment = np.array(case["assignment"])
    n = A.shape[1]
    x_ls = np.linalg.lstsq(A, b, rcond=None)[0]
    S = np.zeros((n, n))
    rhs = np.zeros(n)
    for i in range(assignment.max() + 1):
        Ai, bi = A[assignment == i], b[assignment == i]
        pinv = np.linalg.pinv(Ai)
        S += pinv @ Ai
        rhs += pinv @ bi
    x_w = np.linalg.solve(S, rhs)
    w = np.linalg.eigvalsh((S + S.T) / 2)
    kappa_s = float(w[-1] / w[0])
    s = np.linalg.svd(A, compute_uv=False)
    kappa_ata = float((s[0] / s[-1]) ** 2)
    return {
        "rows": A.shape[0],
        "n": n,
        "sumA": float(A.sum()),
        "sumB": float(b.sum()),
        "leastSquares": x_ls.tolist(),
        "blockWeighted": x_w.tolist(),
        "kappaS": kappa_s,
        "kappaAtA": kappa_ata,
        "leastSquaresResidual": float(np.linalg.norm(A @ x_ls - b) / np.linalg.norm(b)),
        "apcRate": rate(kappa_s),
        "dhbmRate": rate(kappa_ata),
    }


def main():
    text = subprocess.run(["npx", "tsx", "scripts/regressionData.ts"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    data = json.loads(text)
    out = {
        "job": {"spec": data["job"]["spec"], "machines": data["job"]["machines"], **reference(data["job"])},
        "study": {"request": data["study"]["request"], "point": data["study"]["point"], "sample": data["study"]["sample"], **reference(data["study"])},
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
