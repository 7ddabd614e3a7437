"""
A numerical check of the identity docs/performance.md ("lambda_max(S) of a partition that is not bipartite: what
was tried, and the route left") proposes for a faster lambda_max(S): with G = A A^T, Gb its machines' diagonal
blocks (Gb = Lb Lb^T) and E = G - Gb, S' = Lb^{-1} G Lb^{-T} = I + Lb^{-1} E Lb^{-T} has the nonzero spectrum of S,
and E is zero outside the coupling rows C (rows with an entry in a column another machine also has). So

    lambda_max(S) = 1 + lambda_max(E_CC H),   H = (Gb^{-1})_CC,

an eigenproblem of the order of the coupling rows, H block diagonal by machine (each block the inverse of the Schur
complement of its machine's Gram matrix onto its coupling rows: the trailing block of its Cholesky factor when those
rows are ordered last). Dense NumPy on a small Poisson grid in boxes, whose overlap graph has triangles (no
reflection); prints both sides.

  python3 scripts/couplingRowsReduction.py
"""

import numpy as np
import scipy.sparse as sp

k = 24
n = k * k
T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k), dtype=float)
A = (sp.kron(sp.eye(k), T) + sp.kron(T, sp.eye(k))).toarray()
# 3 x 3 boxes of 8 x 8 grid points.
machine = np.array([(i // 8) * 3 + (j // 8) for i in range(k) for j in range(k)])
m = 9

G = A @ A.T
Gb = np.zeros_like(G)
for i in range(m):
    rows = np.where(machine == i)[0]
    Gb[np.ix_(rows, rows)] = G[np.ix_(rows, rows)]
E = G - Gb
Li = np.linalg.inv(np.linalg.cholesky(Gb))
lambda_max = np.linalg.eigvalsh(Li @ G @ Li.T)[-1]

coupling = np.where(np.abs(E).sum(axis=1) > 0)[0]
H = np.linalg.inv(Gb)[np.ix_(coupling, coupling)]
reduced = 1 + max(np.linalg.eigvals(E[np.ix_(coupling, coupling)] @ H).real)
print(f"n = {n}, coupling rows {len(coupling)}: lambda_max(S) = {float(lambda_max)!r}, 1 + lambda_max(E_CC H) = {float(reduced)!r}")
