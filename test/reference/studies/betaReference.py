"""Reference values of the regularized incomplete beta function (SciPy) for test/solvers/studies/statistics.test.ts.

Run: python3 test/reference/studies/betaReference.py > test/reference/studies/beta.json
"""
import json

from scipy.special import betainc
from scipy.stats import beta

CASES = [(0.1, 0.5, 7.5), (0.01, 0.5, 31.5), (0.5, 2, 3), (0.9, 0.5, 127.5), (0.3, 5, 1.5), (0.05, 0.5, 2.5)]
# P(tan^-2 theta > eps) for two independent uniform lines in R^n: cos^2 theta ~ Beta(1/2, (n-1)/2).
LINES = [(n, eps) for n in (16, 64, 256) for eps in (0.01, 0.1)]
# The far tail (Experiment 3's largest eps), where 1 - I_x cancels: from SciPy's upper tail, beta.sf, to its own digits.
TAIL = [(n, eps) for n in (32, 64, 128, 256) for eps in (0.5, 2.0)]

print(
    json.dumps(
        {
            "betainc": [{"x": x, "a": a, "b": b, "value": float(betainc(a, b, x))} for x, a, b in CASES],
            "lineExceedance": [{"n": n, "eps": eps, "value": float(1 - betainc(0.5, (n - 1) / 2, eps / (1 + eps)))} for n, eps in LINES],
            "lineExceedanceTail": [{"n": n, "eps": eps, "value": float(beta.sf(eps / (1 + eps), 0.5, (n - 1) / 2))} for n, eps in TAIL],
        },
        indent=2,
    )
)
