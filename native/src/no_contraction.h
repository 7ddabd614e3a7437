/*
 * NO_CONTRACTION marks a function whose floating-point operations must not be contracted into fused
 * multiply-adds, whatever the target's flags (binding.gyp passes -ffp-contract=fast for the BLAS-style
 * kernels): the kernels that reproduce a TypeScript loop operation for operation, so that both give the
 * same bits (./csr_kernels.c, ./lu_native.c). Under clang the pragma covers the including file from here on.
 */
#ifndef NO_CONTRACTION_H
#define NO_CONTRACTION_H

#if defined(__clang__)
#pragma clang fp contract(off)
#define NO_CONTRACTION
#elif defined(__GNUC__)
#define NO_CONTRACTION __attribute__((optimize("fp-contract=off")))
#else
#define NO_CONTRACTION
#endif

#endif
