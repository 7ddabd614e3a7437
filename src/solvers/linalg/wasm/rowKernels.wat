;; The row kernels of the TypeScript backend in WebAssembly SIMD (two-lane f64x2), the same three
;; as native/src/row_kernels.c: rowsDot, rowsCombine and the fused pass rowsFused, on a row-major
;; X (rows x cols, leading dimension ld elements) in the imported linear memory; and csrGradient, the
;; gradient methods' fused pass over CSR rows (at the end). Every pointer is a byte offset into that memory.
;;
;; Why WebAssembly: V8 compiles the TypeScript loops to scalar code with a bounds check per load
;; (~4.5 ms per fused 2000 x 2000 pass on one core); these take ~1.9 ms, near the native kernels'
;; ~1.4 ms, and need no compiler nor system library (assembled once by scripts/buildWasm.ts into
;; rowKernelsModule.ts; Node >= 16.4 runs WebAssembly SIMD).
;;
;; Rows are taken eight at a time ($dot8, $combine8: each load of v, or load and store of y,
;; serves eight rows; eight independent accumulators), the rows after the last whole block one at a
;; time ($dot1, $axpy1). A row's dot product is (lane 0 + lane 1) of its vector sum plus its odd last
;; column, whether it is in a block or not. The memory is shared: one run's threads all read it.
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; out[j] = X[j] . v for the 8 rows from x (each row: (lane 0 + lane 1) of its vector sum, plus its odd last column).
  (func $dot8 (param $x i32) (param $ldb i32) (param $even i32) (param $bytes i32) (param $v i32) (param $out i32)
    (local $t i32) (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32) (local $p4 i32) (local $p5 i32) (local $p6 i32) (local $p7 i32)
    (local $vt v128) (local $odd f64)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128) (local $s4 v128) (local $s5 v128) (local $s6 v128) (local $s7 v128)
    (local.set $p0 (local.get $x))
    (local.set $p1 (i32.add (local.get $p0) (local.get $ldb)))
    (local.set $p2 (i32.add (local.get $p1) (local.get $ldb)))
    (local.set $p3 (i32.add (local.get $p2) (local.get $ldb)))
    (local.set $p4 (i32.add (local.get $p3) (local.get $ldb)))
    (local.set $p5 (i32.add (local.get $p4) (local.get $ldb)))
    (local.set $p6 (i32.add (local.get $p5) (local.get $ldb)))
    (local.set $p7 (i32.add (local.get $p6) (local.get $ldb)))
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (local.set $vt (v128.load (i32.add (local.get $v) (local.get $t))))
      (local.set $s0 (f64x2.add (local.get $s0) (f64x2.mul (v128.load (i32.add (local.get $p0) (local.get $t))) (local.get $vt))))
      (local.set $s1 (f64x2.add (local.get $s1) (f64x2.mul (v128.load (i32.add (local.get $p1) (local.get $t))) (local.get $vt))))
      (local.set $s2 (f64x2.add (local.get $s2) (f64x2.mul (v128.load (i32.add (local.get $p2) (local.get $t))) (local.get $vt))))
      (local.set $s3 (f64x2.add (local.get $s3) (f64x2.mul (v128.load (i32.add (local.get $p3) (local.get $t))) (local.get $vt))))
      (local.set $s4 (f64x2.add (local.get $s4) (f64x2.mul (v128.load (i32.add (local.get $p4) (local.get $t))) (local.get $vt))))
      (local.set $s5 (f64x2.add (local.get $s5) (f64x2.mul (v128.load (i32.add (local.get $p5) (local.get $t))) (local.get $vt))))
      (local.set $s6 (f64x2.add (local.get $s6) (f64x2.mul (v128.load (i32.add (local.get $p6) (local.get $t))) (local.get $vt))))
      (local.set $s7 (f64x2.add (local.get $s7) (f64x2.mul (v128.load (i32.add (local.get $p7) (local.get $t))) (local.get $vt))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (f64.store offset=0 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s0)) (f64x2.extract_lane 1 (local.get $s0))))
    (f64.store offset=8 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s1)) (f64x2.extract_lane 1 (local.get $s1))))
    (f64.store offset=16 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s2)) (f64x2.extract_lane 1 (local.get $s2))))
    (f64.store offset=24 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s3)) (f64x2.extract_lane 1 (local.get $s3))))
    (f64.store offset=32 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s4)) (f64x2.extract_lane 1 (local.get $s4))))
    (f64.store offset=40 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s5)) (f64x2.extract_lane 1 (local.get $s5))))
    (f64.store offset=48 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s6)) (f64x2.extract_lane 1 (local.get $s6))))
    (f64.store offset=56 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s7)) (f64x2.extract_lane 1 (local.get $s7))))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (local.set $odd (f64.load (i32.add (local.get $v) (local.get $even))))
      (f64.store offset=0 (local.get $out) (f64.add (f64.load offset=0 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p0) (local.get $even))) (local.get $odd))))
      (f64.store offset=8 (local.get $out) (f64.add (f64.load offset=8 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p1) (local.get $even))) (local.get $odd))))
      (f64.store offset=16 (local.get $out) (f64.add (f64.load offset=16 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p2) (local.get $even))) (local.get $odd))))
      (f64.store offset=24 (local.get $out) (f64.add (f64.load offset=24 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p3) (local.get $even))) (local.get $odd))))
      (f64.store offset=32 (local.get $out) (f64.add (f64.load offset=32 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p4) (local.get $even))) (local.get $odd))))
      (f64.store offset=40 (local.get $out) (f64.add (f64.load offset=40 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p5) (local.get $even))) (local.get $odd))))
      (f64.store offset=48 (local.get $out) (f64.add (f64.load offset=48 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p6) (local.get $even))) (local.get $odd))))
      (f64.store offset=56 (local.get $out) (f64.add (f64.load offset=56 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p7) (local.get $even))) (local.get $odd))))
    )))

  ;; X[0] . v for the row at x, summed as in $dot8.
  (func $dot1 (param $x i32) (param $even i32) (param $bytes i32) (param $v i32) (result f64)
    (local $t i32) (local $s v128) (local $d f64)
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (local.set $s (f64x2.add (local.get $s) (f64x2.mul (v128.load (i32.add (local.get $x) (local.get $t))) (v128.load (i32.add (local.get $v) (local.get $t))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (local.set $d (f64.add (f64x2.extract_lane 0 (local.get $s)) (f64x2.extract_lane 1 (local.get $s))))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (local.set $d (f64.add (local.get $d) (f64.mul (f64.load (i32.add (local.get $x) (local.get $even))) (f64.load (i32.add (local.get $v) (local.get $even))))))))
    (local.get $d))

  ;; y += scale sum_j w[j] X[j] over the 8 rows from x (the eight products summed pairwise).
  (func $combine8 (param $x i32) (param $ldb i32) (param $even i32) (param $bytes i32) (param $w i32) (param $scale f64) (param $y i32)
    (local $t i32) (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32) (local $p4 i32) (local $p5 i32) (local $p6 i32) (local $p7 i32)
    (local $c0 f64) (local $c1 f64) (local $c2 f64) (local $c3 f64) (local $c4 f64) (local $c5 f64) (local $c6 f64) (local $c7 f64)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128) (local $v4 v128) (local $v5 v128) (local $v6 v128) (local $v7 v128)
    (local.set $p0 (local.get $x))
    (local.set $p1 (i32.add (local.get $p0) (local.get $ldb)))
    (local.set $p2 (i32.add (local.get $p1) (local.get $ldb)))
    (local.set $p3 (i32.add (local.get $p2) (local.get $ldb)))
    (local.set $p4 (i32.add (local.get $p3) (local.get $ldb)))
    (local.set $p5 (i32.add (local.get $p4) (local.get $ldb)))
    (local.set $p6 (i32.add (local.get $p5) (local.get $ldb)))
    (local.set $p7 (i32.add (local.get $p6) (local.get $ldb)))
    (local.set $c0 (f64.mul (local.get $scale) (f64.load offset=0 (local.get $w))))
    (local.set $c1 (f64.mul (local.get $scale) (f64.load offset=8 (local.get $w))))
    (local.set $c2 (f64.mul (local.get $scale) (f64.load offset=16 (local.get $w))))
    (local.set $c3 (f64.mul (local.get $scale) (f64.load offset=24 (local.get $w))))
    (local.set $c4 (f64.mul (local.get $scale) (f64.load offset=32 (local.get $w))))
    (local.set $c5 (f64.mul (local.get $scale) (f64.load offset=40 (local.get $w))))
    (local.set $c6 (f64.mul (local.get $scale) (f64.load offset=48 (local.get $w))))
    (local.set $c7 (f64.mul (local.get $scale) (f64.load offset=56 (local.get $w))))
    (local.set $v0 (f64x2.splat (local.get $c0)))
    (local.set $v1 (f64x2.splat (local.get $c1)))
    (local.set $v2 (f64x2.splat (local.get $c2)))
    (local.set $v3 (f64x2.splat (local.get $c3)))
    (local.set $v4 (f64x2.splat (local.get $c4)))
    (local.set $v5 (f64x2.splat (local.get $c5)))
    (local.set $v6 (f64x2.splat (local.get $c6)))
    (local.set $v7 (f64x2.splat (local.get $c7)))
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $y) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $y) (local.get $t)))
          (f64x2.add
            (f64x2.add
              (f64x2.add (f64x2.mul (local.get $v0) (v128.load (i32.add (local.get $p0) (local.get $t)))) (f64x2.mul (local.get $v1) (v128.load (i32.add (local.get $p1) (local.get $t)))))
              (f64x2.add (f64x2.mul (local.get $v2) (v128.load (i32.add (local.get $p2) (local.get $t)))) (f64x2.mul (local.get $v3) (v128.load (i32.add (local.get $p3) (local.get $t))))))
            (f64x2.add
              (f64x2.add (f64x2.mul (local.get $v4) (v128.load (i32.add (local.get $p4) (local.get $t)))) (f64x2.mul (local.get $v5) (v128.load (i32.add (local.get $p5) (local.get $t)))))
              (f64x2.add (f64x2.mul (local.get $v6) (v128.load (i32.add (local.get $p6) (local.get $t)))) (f64x2.mul (local.get $v7) (v128.load (i32.add (local.get $p7) (local.get $t)))))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (f64.store (i32.add (local.get $y) (local.get $even))
        (f64.add (f64.load (i32.add (local.get $y) (local.get $even)))
          (f64.add
            (f64.add
              (f64.add (f64.mul (local.get $c0) (f64.load (i32.add (local.get $p0) (local.get $even)))) (f64.mul (local.get $c1) (f64.load (i32.add (local.get $p1) (local.get $even)))))
              (f64.add (f64.mul (local.get $c2) (f64.load (i32.add (local.get $p2) (local.get $even)))) (f64.mul (local.get $c3) (f64.load (i32.add (local.get $p3) (local.get $even))))))
            (f64.add
              (f64.add (f64.mul (local.get $c4) (f64.load (i32.add (local.get $p4) (local.get $even)))) (f64.mul (local.get $c5) (f64.load (i32.add (local.get $p5) (local.get $even)))))
              (f64.add (f64.mul (local.get $c6) (f64.load (i32.add (local.get $p6) (local.get $even)))) (f64.mul (local.get $c7) (f64.load (i32.add (local.get $p7) (local.get $even))))))))))))

  ;; y += coef X[0] for the row at x.
  (func $axpy1 (param $x i32) (param $even i32) (param $bytes i32) (param $coef f64) (param $y i32)
    (local $t i32) (local $c v128)
    (local.set $c (f64x2.splat (local.get $coef)))
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $y) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $y) (local.get $t))) (f64x2.mul (local.get $c) (v128.load (i32.add (local.get $x) (local.get $t))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (f64.store (i32.add (local.get $y) (local.get $even))
        (f64.add (f64.load (i32.add (local.get $y) (local.get $even))) (f64.mul (local.get $coef) (f64.load (i32.add (local.get $x) (local.get $even)))))))))

  ;; out[k] = X[k] . v for k < rows.
  (func (export "rowsDot") (param $rows i32) (param $cols i32) (param $x i32) (param $ld i32) (param $v i32) (param $out i32)
    (local $k i32) (local $bytes i32) (local $even i32) (local $ldb i32) (local $block i32) (local $whole i32)
    (local.set $bytes (i32.shl (local.get $cols) (i32.const 3)))
    (local.set $even (i32.and (local.get $bytes) (i32.const -16)))
    (local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))
    (local.set $block (i32.shl (local.get $ld) (i32.const 6)))
    (local.set $whole (i32.and (local.get $rows) (i32.const -8)))
    (block $blocksEnd (loop $blocks
      (br_if $blocksEnd (i32.ge_u (local.get $k) (local.get $whole)))
      (call $dot8 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $v) (local.get $out))
      (local.set $x (i32.add (local.get $x) (local.get $block)))
      (local.set $out (i32.add (local.get $out) (i32.const 64)))
      (local.set $k (i32.add (local.get $k) (i32.const 8)))
      (br $blocks)))
    (block $rowsEnd (loop $rows
      (br_if $rowsEnd (i32.ge_u (local.get $k) (local.get $rows)))
      (f64.store (local.get $out) (call $dot1 (local.get $x) (local.get $even) (local.get $bytes) (local.get $v)))
      (local.set $x (i32.add (local.get $x) (local.get $ldb)))
      (local.set $out (i32.add (local.get $out) (i32.const 8)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $rows))))

  ;; y += scale sum_k w[k] X[k].
  (func (export "rowsCombine") (param $rows i32) (param $cols i32) (param $scale f64) (param $x i32) (param $ld i32) (param $w i32) (param $y i32)
    (local $k i32) (local $bytes i32) (local $even i32) (local $ldb i32) (local $block i32) (local $whole i32)
    (local.set $bytes (i32.shl (local.get $cols) (i32.const 3)))
    (local.set $even (i32.and (local.get $bytes) (i32.const -16)))
    (local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))
    (local.set $block (i32.shl (local.get $ld) (i32.const 6)))
    (local.set $whole (i32.and (local.get $rows) (i32.const -8)))
    (block $blocksEnd (loop $blocks
      (br_if $blocksEnd (i32.ge_u (local.get $k) (local.get $whole)))
      (call $combine8 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $w) (local.get $scale) (local.get $y))
      (local.set $x (i32.add (local.get $x) (local.get $block)))
      (local.set $w (i32.add (local.get $w) (i32.const 64)))
      (local.set $k (i32.add (local.get $k) (i32.const 8)))
      (br $blocks)))
    (block $rowsEnd (loop $rows
      (br_if $rowsEnd (i32.ge_u (local.get $k) (local.get $rows)))
      (call $axpy1 (local.get $x) (local.get $even) (local.get $bytes) (f64.mul (local.get $scale) (f64.load (local.get $w))) (local.get $y))
      (local.set $x (i32.add (local.get $x) (local.get $ldb)))
      (local.set $w (i32.add (local.get $w) (i32.const 8)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $rows))))

  ;; Each row read once: dots[k] = X[k] . v - bias[k], then y += scale dots[k] X[k] (block by block, while the rows are in cache).
  (func (export "rowsFused") (param $rows i32) (param $cols i32) (param $scale f64) (param $x i32) (param $ld i32) (param $v i32) (param $bias i32) (param $dots i32) (param $y i32)
    (local $k i32) (local $bytes i32) (local $even i32) (local $ldb i32) (local $block i32) (local $whole i32) (local $j i32) (local $d f64)
    (local.set $bytes (i32.shl (local.get $cols) (i32.const 3)))
    (local.set $even (i32.and (local.get $bytes) (i32.const -16)))
    (local.set $ldb (i32.shl (local.get $ld) (i32.const 3)))
    (local.set $block (i32.shl (local.get $ld) (i32.const 6)))
    (local.set $whole (i32.and (local.get $rows) (i32.const -8)))
    (block $blocksEnd (loop $blocks
      (br_if $blocksEnd (i32.ge_u (local.get $k) (local.get $whole)))
      (call $dot8 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $v) (local.get $dots))
      (local.set $j (i32.const 0))
      (loop $residuals
        (f64.store (i32.add (local.get $dots) (local.get $j))
          (f64.sub (f64.load (i32.add (local.get $dots) (local.get $j))) (f64.load (i32.add (local.get $bias) (local.get $j)))))
        (local.set $j (i32.add (local.get $j) (i32.const 8)))
        (br_if $residuals (i32.lt_u (local.get $j) (i32.const 64))))
      (call $combine8 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $dots) (local.get $scale) (local.get $y))
      (local.set $x (i32.add (local.get $x) (local.get $block)))
      (local.set $bias (i32.add (local.get $bias) (i32.const 64)))
      (local.set $dots (i32.add (local.get $dots) (i32.const 64)))
      (local.set $k (i32.add (local.get $k) (i32.const 8)))
      (br $blocks)))
    (block $rowsEnd (loop $rows
      (br_if $rowsEnd (i32.ge_u (local.get $k) (local.get $rows)))
      (local.set $d (f64.sub (call $dot1 (local.get $x) (local.get $even) (local.get $bytes) (local.get $v)) (f64.load (local.get $bias))))
      (f64.store (local.get $dots) (local.get $d))
      (call $axpy1 (local.get $x) (local.get $even) (local.get $bytes) (f64.mul (local.get $scale) (local.get $d)) (local.get $y))
      (local.set $x (i32.add (local.get $x) (local.get $ldb)))
      (local.set $bias (i32.add (local.get $bias) (i32.const 8)))
      (local.set $dots (i32.add (local.get $dots) (i32.const 8)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $rows))))

  ;; The gradient methods' fused pass over CSR rows (src/solvers/linalg/csrKernels.ts): term[0 .. cols) = A^T (A x - b)
  ;; and the result |A x - b|^2, for A rows x cols with rowPtr (i32, rows + 1 entries from rowPtr[0]), colIdx (i32,
  ;; each < cols) and values (f64). Row k: s = a_k . x in entry order, r = s - b[k], then term[colIdx[e]] += r values[e]
  ;; in entry order: the TypeScript loop's additions, one by one (scalar code: no gather in WebAssembly SIMD), so
  ;; the result is that loop's to the bit.
  (func (export "csrGradient") (param $rows i32) (param $cols i32) (param $rowPtr i32) (param $colIdx i32) (param $values i32) (param $x i32) (param $b i32) (param $term i32) (result f64)
    (local $k i32) (local $e i32) (local $end i32) (local $q i32) (local $t i32) (local $s f64) (local $r f64) (local $r2 f64) (local $bytes i32)
    ;; term = 0
    (local.set $bytes (i32.shl (local.get $cols) (i32.const 3)))
    (block $zeroed (loop $zero
      (br_if $zeroed (i32.ge_u (local.get $t) (local.get $bytes)))
      (i64.store (i32.add (local.get $term) (local.get $t)) (i64.const 0))
      (local.set $t (i32.add (local.get $t) (i32.const 8)))
      (br $zero)))
    (local.set $e (i32.load (local.get $rowPtr)))
    (block $done (loop $row
      (br_if $done (i32.ge_u (local.get $k) (local.get $rows)))
      (local.set $rowPtr (i32.add (local.get $rowPtr) (i32.const 4)))
      (local.set $end (i32.load (local.get $rowPtr)))
      (local.set $s (f64.const 0))
      (local.set $q (local.get $e))
      (block $dotted (loop $dot
        (br_if $dotted (i32.ge_s (local.get $q) (local.get $end)))
        (local.set $s (f64.add (local.get $s)
          (f64.mul (f64.load (i32.add (local.get $values) (i32.shl (local.get $q) (i32.const 3))))
                   (f64.load (i32.add (local.get $x) (i32.shl (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $q) (i32.const 2)))) (i32.const 3)))))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $dot)))
      (local.set $r (f64.sub (local.get $s) (f64.load (local.get $b))))
      (local.set $r2 (f64.add (local.get $r2) (f64.mul (local.get $r) (local.get $r))))
      (local.set $q (local.get $e))
      (block $added (loop $add
        (br_if $added (i32.ge_s (local.get $q) (local.get $end)))
        (local.set $t (i32.add (local.get $term) (i32.shl (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $q) (i32.const 2)))) (i32.const 3))))
        (f64.store (local.get $t) (f64.add (f64.load (local.get $t))
          (f64.mul (local.get $r) (f64.load (i32.add (local.get $values) (i32.shl (local.get $q) (i32.const 3)))))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $add)))
      (local.set $e (local.get $end))
      (local.set $b (i32.add (local.get $b) (i32.const 8)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $row)))
    (local.get $r2))
)
