#!/usr/bin/env python3
"""Reference values for the sparse path's tests (test/solvers/sparse), computed independently of the
TypeScript code with NumPy/SciPy and SuiteSparse's AMD (libamd, called through ctypes).

    python3 test/reference/sparse/sparse_reference.py > test/reference/sparse/expected.json

Needs numpy, scipy and libamd (Debian: libamd2 or libsuitesparse-dev). Inputs: the Matrix Market files
of test/reference/matrices and two grid generators written here from their definitions.

- "matrixMarket": scipy.io.mmread of every file -> CSR (duplicates summed, symmetric storage mirrored):
  shape, nnz and checksums (sum of values, of |values|, of values weighted by row and by column).
- "generators": the 5-point Poisson and the central-difference convection-diffusion matrices of a small
  grid, in full (CSR arrays).
- "gram": for each case, A partitioned into m contiguous blocks (NumPy array_split) and for each block
  G_i = A_i A_i^T: its nnz, trace, Frobenius norm; the solution of G_i x = b (b_k = sin(k + 1)) by
  scipy.sparse.linalg.spsolve on the diagonally equilibrated system; the 2-norm condition number of that
  equilibrated matrix (the accuracy any Cholesky of G_i can reach); log det G_i from a dense Cholesky;
  and AMD's ordering of G_i with its nnz(L) (libamd's Info[AMD_LNZ], diagonal excluded) next to a
  count by plain graph elimination in Python under the same ordering, and under the natural ordering.
"""
import ctypes
import ctypes.util
import json
import math
import os
import sys

import numpy as np
import scipy
import scipy.io
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spl

HERE = os.path.dirname(os.path.abspath(__file__))
MATRICES = os.path.join(HERE, '..', 'matrices')

AMD_LNZ = 9  # amd.h: index of the nnz(L) count in Info
AMD_CONTROL, AMD_INFO = 5, 20


def load_amd():
    for name in [ctypes.util.find_library('amd'), 'libamd.so.2', 'libamd.so']:
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                pass
    sys.exit('libamd not found (Debian: apt-get install libamd2)')


AMD = load_amd()


def amd_order(pattern):
    """AMD ordering (new -> old) of a symmetric CSR/CSC pattern and its nnz(L) without the diagonal."""
    c = sp.csc_matrix(pattern)
    c.sort_indices()
    n = c.shape[0]
    ap = np.ascontiguousarray(c.indptr, dtype=np.int32)
    ai = np.ascontiguousarray(c.indices, dtype=np.int32)
    perm = np.zeros(n, dtype=np.int32)
    control = np.zeros(AMD_CONTROL)
    info = np.zeros(AMD_INFO)
    AMD.amd_defaults(control.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    status = AMD.amd_order(
        ctypes.c_int(n),
        ap.ctypes.data_as(ctypes.POINTER(ctypes.c_int)),
        ai.ctypes.data_as(ctypes.POINTER(ctypes.c_int)),
        perm.ctypes.data_as(ctypes.POINTER(ctypes.c_int)),
        control.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        info.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
    )
    assert status == 0, f'amd_order status {status}'
    return perm, int(info[AMD_LNZ])


def elimination_fill(pattern, perm):
    """nnz(L) without the diagonal for P G P^T: eliminate vertices in order, each one's later neighbours becoming a clique."""
    g = sp.csr_matrix(pattern)
    n = g.shape[0]
    position = np.empty(n, dtype=np.int64)
    position[perm] = np.arange(n)
    adjacency = [set() for _ in range(n)]
    for i in range(n):
        for j in g.indices[g.indptr[i]:g.indptr[i + 1]]:
            if i != j:
                adjacency[position[i]].add(int(position[j]))
    lnz = 0
    for k in range(n):
        later = [j for j in adjacency[k] if j > k]
        lnz += len(later)
        if later:
            parent = min(later)  # the elimination tree parent inherits the others (its column's pattern contains them)
            adjacency[parent].update(j for j in later if j != parent)
    return lnz


def checksums(a):
    a = sp.csr_matrix(a)
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    v = a.data.astype(np.float64)
    return {
        'sum': float(v.sum()),
        'sumAbs': float(np.abs(v).sum()),
        'sumRowWeighted': float((v * (rows + 1)).sum()),
        'sumColWeighted': float((v * (a.indices + 1)).sum()),
    }


def matrix_market():
    out = []
    for name in sorted(os.listdir(MATRICES)):
        if not name.endswith('.mtx'):
            continue
        m = scipy.io.mmread(os.path.join(MATRICES, name))
        a = sp.csr_matrix(m)
        a.sum_duplicates()
        entry = {'file': name, 'rows': a.shape[0], 'cols': a.shape[1], 'nnz': int(a.nnz)}
        if np.iscomplexobj(a.data):
            entry['complex'] = True
        else:
            entry.update(checksums(a))
        out.append(entry)
    return out


def grid(k, gamma):
    """k x k interior grid, unknown (i, j) -> i k + j; diagonal 4, west/south -1 - gamma, east/north -1 + gamma (zeros not stored)."""
    n = k * k
    rows, cols, vals = [], [], []
    for i in range(k):
        for j in range(k):
            r = i * k + j
            rows.append(r), cols.append(r), vals.append(4.0)
            for di, dj, v in [(-1, 0, -1 - gamma), (0, -1, -1 - gamma), (0, 1, -1 + gamma), (1, 0, -1 + gamma)]:
                if 0 <= i + di < k and 0 <= j + dj < k and v != 0:
                    rows.append(r), cols.append((i + di) * k + j + dj), vals.append(v)
    a = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    a.sort_indices()
    return a


def poisson(k):
    return grid(k, 0.0)


def convection_diffusion(k, peclet):
    return grid(k, peclet / (k + 1) / 2)


def csr_json(a):
    return {'rows': a.shape[0], 'cols': a.shape[1], 'rowPtr': a.indptr.tolist(), 'colIdx': a.indices.tolist(), 'values': a.data.tolist()}


def structural_gram(ai):
    """A_i A_i^T on the structural pattern of the product (SciPy's sparse product drops the entries whose sum is
    exactly zero; the TypeScript Gram keeps every position some product a_rk a_ck reaches, as a symbolic analysis must)."""
    ones = sp.csr_matrix(ai, copy=True)
    ones.data[:] = 1.0
    pattern = (ones @ ones.T).tocsr()
    pattern.sort_indices()
    values = (ai @ ai.T).toarray()
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return sp.csr_matrix((values[rows, pattern.indices], pattern.indices, pattern.indptr), shape=pattern.shape)


def gram_case(label, a, m, source):
    a = sp.csr_matrix(a)
    n = a.shape[0]
    blocks = np.array_split(np.arange(n), m)
    machines = []
    for rows in blocks:
        ai = a[rows[0]:rows[-1] + 1]
        g = structural_gram(ai)
        p = g.shape[0]
        b = np.sin(np.arange(1, p + 1, dtype=np.float64))
        d = 1 / np.sqrt(g.diagonal())
        scale = sp.diags(d)
        equilibrated = (scale @ g @ scale).tocsc()
        x = d * spl.spsolve(equilibrated, d * b)
        dense = g.toarray()
        sv = np.linalg.svd(equilibrated.toarray(), compute_uv=False)
        chol = np.linalg.cholesky(dense)
        perm, amd_lnz = amd_order(g)
        machines.append({
            'rows': [int(rows[0]), int(rows[-1]) + 1],
            'nnz': int(g.nnz),
            'trace': float(g.diagonal().sum()),
            'frobenius': float(scipy.sparse.linalg.norm(g)),
            'x': x.tolist(),
            'relativeResidual': float(np.linalg.norm(g @ x - b) / np.linalg.norm(b)),
            'equilibratedCondition': float(sv[0] / sv[-1]),
            'logDet': float(2 * np.log(np.diag(chol)).sum()),
            'amdPerm': perm.tolist(),
            'amdLnz': amd_lnz,
            'amdLnzByElimination': elimination_fill(g, perm),
            'naturalLnzByElimination': elimination_fill(g, np.arange(p)),
        })
    return {'label': label, 'source': source, 'machines': m, 'n': n, 'blocks': machines}


def main():
    mm = lambda f: scipy.io.mmread(os.path.join(MATRICES, f)).tocsr()
    result = {
        'generatedBy': 'test/reference/sparse/sparse_reference.py',
        'versions': {'numpy': np.__version__, 'scipy': scipy.__version__},
        'matrixMarket': matrix_market(),
        'generators': {
            'poisson2d_k4': csr_json(poisson(4)),
            'convectionDiffusion2d_k4_peclet30': csr_json(convection_diffusion(4, 30.0)),
        },
        'gram': [
            gram_case('sherman5 m=8', mm('sherman5.mtx'), 8, {'matrixMarket': 'sherman5.mtx'}),
            gram_case('1138_bus m=4', mm('1138_bus.mtx'), 4, {'matrixMarket': '1138_bus.mtx'}),
            gram_case('fs1831 m=4', mm('fs1831.mtx'), 4, {'matrixMarket': 'fs1831.mtx'}),
            gram_case('poisson2d k=30 m=4', poisson(30), 4, {'generator': 'poisson2d', 'k': 30}),
            gram_case(
                'convectionDiffusion2d k=24 peclet=30 m=3',
                convection_diffusion(24, 30.0),
                3,
                {'generator': 'convectionDiffusion2d', 'k': 24, 'peclet': 30},
            ),
        ],
    }
    json.dump(result, sys.stdout, indent=None, separators=(',', ':'))
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
