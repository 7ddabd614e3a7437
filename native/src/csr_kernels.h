/*
 * Kernels over compressed sparse rows (csr_kernels.c): the gradient methods' fused pass over a
 * chunk of a machine's rows (src/solvers/machines/csrMachine.ts). Single-threaded; the solvers'
 * engine runs chunks on its own threads (src/solvers/parallel/engine.ts).
 */
#ifndef LINALG_CSR_KERNELS_H
#define LINALG_CSR_KERNELS_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

/*
 * term[0 .. cols) = A^T (A x - b) and the return value |A x - b|^2, for A rows x cols in CSR (row_ptr from
 * row_ptr[0], column indices < cols), each stored entry read from memory once: row k's residual
 * r_k = a_k . x - b_k, then term += r_k a_k while the row is in cache. The additions are those of the
 * TypeScript loop, in its order and without contraction, so the result is the same to the bit.
 */
double csr_fused_gradient(size_t rows, size_t cols, const int32_t* row_ptr, const int32_t* col_idx, const double* values,
                          const double* x, const double* b, double* term);

/* Adds csrRows (a checked handle over a chunk's arrays), csrFusedGradient, csrBlockGradient and csrBlockTerm to exports. */
void register_csr_kernels(napi_env env, napi_value exports);

#endif
