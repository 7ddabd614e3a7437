{
  # Built by scripts/buildNative.mjs (npm install / npm run build:native) when the OpenBLAS and
  # LAPACKE headers and libraries are present. NATIVE_BLAS_INCLUDE_DIRS and NATIVE_BLAS_LIBRARY_DIRS
  # (space-separated, set by that script) cover distributions that keep cblas.h outside the
  # default include path (e.g. /usr/include/openblas).
  "targets": [
    {
      "target_name": "linalg_native",
      "sources": ["src/linalg_native.c", "src/row_kernels.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-std=c11", "-O3", "-ffp-contract=fast", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-Wno-psabi"],
      "include_dirs": ["<!@(node -p \"process.env.NATIVE_BLAS_INCLUDE_DIRS || ''\")"],
      "libraries": [
        "<!@(node -p \"(process.env.NATIVE_BLAS_LIBRARY_DIRS || '').split(' ').filter(Boolean).map((d) => '-L' + d).join(' ')\")",
        "-lopenblas",
        "-llapacke"
      ]
    }
  ]
}
