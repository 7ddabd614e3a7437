"""
Cross-checks a running service against NumPy/SciPy on random systems, as a user would send them (not part of
`npm test`: a probe for a session, whose findings become tests). Each case is a random N x n system (tall or
square, Gaussian, some rows scaled by up to 1e3, some shifted by a common mean, sometimes a row doubled inside its
machine, noise on b for tall ones), dense JSON rows or COO triplets, over a random assignment of m machines, solved
by all six algorithms. Checked against NumPy:

- conditioning: kappa(S) (eigenvalues of sum_i A_i^+ A_i; to max(1e-7, 1e-14 kappa(S)), NumPy's pseudo-inverses being the
  looser side), L and mu (squared extreme singular values of A);
- theta_ij (SciPy's subspace_angles, to 1e-7 absolute: SciPy's own error near 0 reaches ~3 sqrt(eps), 3.9e-8 seen);
- each run: its relative error to its target (x_LS by lstsq; x_W = (sum P_i)^-1 sum A_i^+ b_i) and its relative
  residual, recomputed from the downloaded solution and compared with what the run reports; on an inconsistent system
  a run called converged must be within its tolerance of its target.

  npm start  (or PORT=3998 node dist/src/main.js)
  BASE=http://127.0.0.1:3000 python3 scripts/crossCheckService.py <seed> <cases> [dense|coo]

Prints one line per case, OK or the discrepancies. Run on 2026-12-06 (twenty-sixth stop) with seeds 1-8, both
backends (NUMERIC_BACKEND=typescript for a second service): every case OK once the reference's own limits above were
allowed for; its COO cases first found tall systems with a zero row refused as "singular" (now the zero-row 422).
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import scipy.linalg as sla

BASE = os.environ.get('BASE', 'http://127.0.0.1:3000')
ALGORITHMS = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm']


def request(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {'content-type': 'application/json'} if data else {}
    r = urllib.request.Request(BASE + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(r) as response:
            return response.status, json.loads(response.read() or b'null')
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b'null')


def run(body, timeout=300):
    status, job = request('POST', '/v1/jobs', body)
    if status != 202:
        return status, job
    start = time.time()
    while time.time() - start < timeout:
        status, document = request('GET', '/v1/jobs/' + job['id'])
        if document['status'] in ('succeeded', 'failed', 'cancelled'):
            return status, document
        time.sleep(0.1)
    return 0, {'timeout': job['id']}


def check(name, A, b, assign, m, options, storage):
    N, n = A.shape
    if storage == 'dense':
        matrix = {'format': 'dense', 'data': A.tolist()}
    else:
        matrix = {'format': 'coo', 'rows': N, 'cols': n,
                  'entries': [[int(i), int(j), float(A[i, j])] for i, j in zip(*np.nonzero(A))]}
    body = {'type': 'solve', 'matrix': matrix, 'rhs': b.tolist(), 'partition': {'assignment': [int(k) for k in assign]},
            'algorithms': ALGORITHMS, 'options': options}
    status, document = run(body)
    if status != 200 or document.get('status') != 'succeeded':
        print(name, 'NOT OK', status, json.dumps(document)[:400])
        return
    issues = []
    result = document['result']
    analysis = result['analysis']
    blocks = [np.where(assign == i)[0] for i in range(m)]
    projector_sum = sum(np.linalg.pinv(A[rows], rcond=1e-10) @ A[rows] for rows in blocks)
    eigenvalues = np.linalg.eigvalsh(projector_sum)
    kappa_s = eigenvalues[-1] / eigenvalues[0]
    conditioning = analysis['conditioning']

    def relative(x, y):
        return abs(x - y) / max(abs(y), 1e-300)

    if relative(conditioning['kappaS'], kappa_s) > max(1e-7, 1e-14 * kappa_s):
        issues.append(f"kappaS {conditioning['kappaS']} against {kappa_s}")
    singular = np.linalg.svd(A, compute_uv=False)
    if relative(conditioning['L'], singular[0] ** 2) > 1e-7:
        issues.append(f"L {conditioning['L']} against {singular[0] ** 2}")
    if relative(conditioning['mu'], singular[-1] ** 2) > max(1e-7, 1e-14 * (singular[0] / singular[-1]) ** 2):
        issues.append(f"mu {conditioning['mu']} against {singular[-1] ** 2}")
    theta = analysis['heterogeneity']['theta']
    for i in range(m):
        for j in range(i + 1, m):
            angle = sla.subspace_angles(A[blocks[i]].T, A[blocks[j]].T).min()
            if abs(theta[i][j] - angle) > 1e-7:
                issues.append(f'theta[{i}][{j}] {theta[i][j]} against {angle}')
    least_squares = np.linalg.lstsq(A, b, rcond=None)[0]
    weighted = np.linalg.solve(projector_sum, sum(np.linalg.pinv(A[rows], rcond=1e-10) @ b[rows] for rows in blocks))
    consistent = analysis.get('consistency', {}).get('consistent', True)
    tolerance = options.get('tolerance', 1e-8)
    for algorithm, reported in result['runs'].items():
        _, downloaded = request('GET', f"/v1/jobs/{document['id']}/runs/{algorithm}/solution")
        x = np.array(downloaded['x'])
        target = weighted if reported.get('target') == 'block-weighted' else least_squares
        error = np.linalg.norm(x - target) / np.linalg.norm(target)
        residual = np.linalg.norm(A @ x - b) / np.linalg.norm(b)
        slack = 1e-12 * np.linalg.cond(A) ** (2 if N > n else 1)
        if reported['relativeError'] is not None and abs(reported['relativeError'] - error) > 1e-6 * error + slack:
            issues.append(f"{algorithm} relativeError {reported['relativeError']} against {error}")
        if abs(reported['relativeResidual'] - residual) > 1e-6 * residual + 1e-14:
            issues.append(f"{algorithm} relativeResidual {reported['relativeResidual']} against {residual}")
        if not consistent and reported['status'] == 'converged' and error > tolerance * 1.01:
            issues.append(f"{algorithm} converged with error {error} > tolerance {tolerance}")
    print(name, 'OK' if not issues else 'ISSUES')
    for issue in issues:
        print('   ', issue)


def main(seed, cases, storage):
    rng = np.random.default_rng(seed)
    for case in range(cases):
        N = int(rng.integers(10, 120))
        n = int(rng.integers(4, min(N, 40) + 1))
        m = int(rng.integers(2, 7))
        A = rng.normal(size=(N, n)) * (rng.random(size=(N, n)) < (0.3 if storage == 'coo' else 2))
        if rng.random() < 0.3:
            A = A * 10.0 ** rng.uniform(-3, 3, size=(N, 1))
        if rng.random() < 0.3:
            A = A + rng.normal() * np.ones((N, n))
        for k in range(N):
            if not A[k].any():
                A[k, int(rng.integers(0, n))] = rng.normal()
        assign = rng.integers(0, m, size=N)
        assign[:m] = np.arange(m)
        if rng.random() < 0.3 and N > n + 2:
            k, k2 = int(rng.integers(0, N)), int(rng.integers(0, N))
            A[k2] = 2 * A[k]
            assign[k2] = assign[k]
        noise = rng.choice([0, 0.01, 0.5]) if N > n else 0
        b = A @ rng.normal(size=n) + noise * rng.normal(size=N)
        if np.linalg.matrix_rank(A) < n:
            continue
        check(f'{storage} case {case}: N = {N}, n = {n}, m = {m}, noise {noise}', A, b, assign, m,
              {'maxIterations': 20000}, storage)


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0, int(sys.argv[2]) if len(sys.argv) > 2 else 10,
         sys.argv[3] if len(sys.argv) > 3 else 'dense')
