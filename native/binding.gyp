{
  # Built by scripts/buildNative.mjs (npm install / npm run build:native) when the OpenBLAS and
  # LAPACKE headers and libraries are present. NATIVE_BLAS_INCLUDE_DIRS and NATIVE_BLAS_LIBRARY_DIRS
  # (space-separated, set by that script) cover distributions that keep cblas.h outside the
  # default include path (e.g. /usr/include/openblas).
  # The sparse part (src/sparse_native.c: CHOLMOD; src/lu_native.c: UMFPACK) is compiled in when that script
  # sets NATIVE_SPARSE=1 (it found cholmod.h, umfpack.h and their libraries), with NATIVE_SPARSE_INCLUDE_DIRS for cholmod.h
  # (e.g. /usr/include/suitesparse) and NATIVE_SPARSE_LIBRARY_DIRS. Likewise ARPACK (src/arpack_native.c)
  # with NATIVE_ARPACK=1, NATIVE_ARPACK_INCLUDE_DIRS (the directory holding arpack/arpack.h) and
  # NATIVE_ARPACK_LIBRARY_DIRS. And METIS (src/metis_native.c) with NATIVE_METIS=1, NATIVE_METIS_INCLUDE_DIRS (metis.h)
  # and NATIVE_METIS_LIBRARY_DIRS. And SuiteSparseQR (src/spqr_native.c) with NATIVE_SPQR=1, only together with the
  # sparse part (it shares CHOLMOD and its include and library directories).
  "variables": {
    "native_sparse%": "<!(node -p \"process.env.NATIVE_SPARSE === '1' ? 1 : 0\")",
    "native_arpack%": "<!(node -p \"process.env.NATIVE_ARPACK === '1' ? 1 : 0\")",
    "native_metis%": "<!(node -p \"process.env.NATIVE_METIS === '1' ? 1 : 0\")",
    "native_spqr%": "<!(node -p \"process.env.NATIVE_SPQR === '1' ? 1 : 0\")"
  },
  "targets": [
    {
      "target_name": "linalg_native",
      "sources": ["src/linalg_native.c", "src/row_kernels.c", "src/csr_kernels.c", "src/block_step.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-std=c11", "-O3", "-ffp-contract=fast", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-Wno-psabi"],
      "include_dirs": ["<!@(node -p \"process.env.NATIVE_BLAS_INCLUDE_DIRS || ''\")"],
      "libraries": [
        "<!@(node -p \"(process.env.NATIVE_BLAS_LIBRARY_DIRS || '').split(' ').filter(Boolean).map((d) => '-L' + d).join(' ')\")",
        "-lopenblas",
        "-llapacke"
      ],
      "conditions": [
        ["native_sparse==1", {
          "sources": ["src/sparse_native.c", "src/lu_native.c"],
          "defines": ["LINALG_SPARSE"],
          "include_dirs": ["<!@(node -p \"process.env.NATIVE_SPARSE_INCLUDE_DIRS || ''\")"],
          "libraries": [
            "<!@(node -p \"(process.env.NATIVE_SPARSE_LIBRARY_DIRS || '').split(' ').filter(Boolean).map((d) => '-L' + d).join(' ')\")",
            "-lcholmod",
            "-lumfpack",
            "-lsuitesparseconfig"
          ]
        }],
        ["native_arpack==1", {
          "sources": ["src/arpack_native.c"],
          "defines": ["LINALG_ARPACK"],
          "include_dirs": ["<!@(node -p \"process.env.NATIVE_ARPACK_INCLUDE_DIRS || ''\")"],
          "libraries": [
            "<!@(node -p \"(process.env.NATIVE_ARPACK_LIBRARY_DIRS || '').split(' ').filter(Boolean).map((d) => '-L' + d).join(' ')\")",
            "-larpack"
          ]
        }],
        ["native_metis==1", {
          "sources": ["src/metis_native.c"],
          "defines": ["LINALG_METIS"],
          "include_dirs": ["<!@(node -p \"process.env.NATIVE_METIS_INCLUDE_DIRS || ''\")"],
          "libraries": [
            "<!@(node -p \"(process.env.NATIVE_METIS_LIBRARY_DIRS || '').split(' ').filter(Boolean).map((d) => '-L' + d).join(' ')\")",
            "-lmetis"
          ]
        }],
        ["native_sparse==1 and native_spqr==1", {
          "sources": ["src/spqr_native.c"],
          "defines": ["LINALG_SPQR"],
          "libraries": ["-lspqr"]
        }]
      ]
    }
  ]
}
