;; The row kernels of the TypeScript backend in WebAssembly SIMD (two-lane f64x2), the same three
;; as native/src/row_kernels.c: rowsDot, rowsCombine and the fused pass rowsFused, on a row-major
;; X (rows x cols, leading dimension ld elements) in the imported linear memory; csrGradient, the
;; gradient methods' fused pass over CSR rows; and the block kernels of the passes over several
;; right-hand sides (blockProduct, csrBlockGradient, choleskySolveBlock, blockStep, blockConsensus:
;; src/solvers/linalg/blockKernels.ts).
;; Every pointer is a byte offset into that memory.
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

  ;; out[j] = X[j] . v for the 4 rows from x, each summed as in $dot8 (the same bits as $dot8 or $dot1 give the row).
  (func $dot4 (param $x i32) (param $ldb i32) (param $even i32) (param $bytes i32) (param $v i32) (param $out i32)
    (local $t i32) (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32)
    (local $vt v128) (local $odd f64)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local.set $p0 (local.get $x))
    (local.set $p1 (i32.add (local.get $p0) (local.get $ldb)))
    (local.set $p2 (i32.add (local.get $p1) (local.get $ldb)))
    (local.set $p3 (i32.add (local.get $p2) (local.get $ldb)))
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (local.set $vt (v128.load (i32.add (local.get $v) (local.get $t))))
      (local.set $s0 (f64x2.add (local.get $s0) (f64x2.mul (v128.load (i32.add (local.get $p0) (local.get $t))) (local.get $vt))))
      (local.set $s1 (f64x2.add (local.get $s1) (f64x2.mul (v128.load (i32.add (local.get $p1) (local.get $t))) (local.get $vt))))
      (local.set $s2 (f64x2.add (local.get $s2) (f64x2.mul (v128.load (i32.add (local.get $p2) (local.get $t))) (local.get $vt))))
      (local.set $s3 (f64x2.add (local.get $s3) (f64x2.mul (v128.load (i32.add (local.get $p3) (local.get $t))) (local.get $vt))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (f64.store offset=0 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s0)) (f64x2.extract_lane 1 (local.get $s0))))
    (f64.store offset=8 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s1)) (f64x2.extract_lane 1 (local.get $s1))))
    (f64.store offset=16 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s2)) (f64x2.extract_lane 1 (local.get $s2))))
    (f64.store offset=24 (local.get $out) (f64.add (f64x2.extract_lane 0 (local.get $s3)) (f64x2.extract_lane 1 (local.get $s3))))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (local.set $odd (f64.load (i32.add (local.get $v) (local.get $even))))
      (f64.store offset=0 (local.get $out) (f64.add (f64.load offset=0 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p0) (local.get $even))) (local.get $odd))))
      (f64.store offset=8 (local.get $out) (f64.add (f64.load offset=8 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p1) (local.get $even))) (local.get $odd))))
      (f64.store offset=16 (local.get $out) (f64.add (f64.load offset=16 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p2) (local.get $even))) (local.get $odd))))
      (f64.store offset=24 (local.get $out) (f64.add (f64.load offset=24 (local.get $out)) (f64.mul (f64.load (i32.add (local.get $p3) (local.get $even))) (local.get $odd))))
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

  ;; y += scale sum_j w[j] X[j] over the 4 rows from x (the four products summed pairwise).
  (func $combine4 (param $x i32) (param $ldb i32) (param $even i32) (param $bytes i32) (param $w i32) (param $scale f64) (param $y i32)
    (local $t i32) (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32)
    (local $c0 f64) (local $c1 f64) (local $c2 f64) (local $c3 f64)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local.set $p0 (local.get $x))
    (local.set $p1 (i32.add (local.get $p0) (local.get $ldb)))
    (local.set $p2 (i32.add (local.get $p1) (local.get $ldb)))
    (local.set $p3 (i32.add (local.get $p2) (local.get $ldb)))
    (local.set $c0 (f64.mul (local.get $scale) (f64.load offset=0 (local.get $w))))
    (local.set $c1 (f64.mul (local.get $scale) (f64.load offset=8 (local.get $w))))
    (local.set $c2 (f64.mul (local.get $scale) (f64.load offset=16 (local.get $w))))
    (local.set $c3 (f64.mul (local.get $scale) (f64.load offset=24 (local.get $w))))
    (local.set $v0 (f64x2.splat (local.get $c0)))
    (local.set $v1 (f64x2.splat (local.get $c1)))
    (local.set $v2 (f64x2.splat (local.get $c2)))
    (local.set $v3 (f64x2.splat (local.get $c3)))
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $y) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $y) (local.get $t)))
          (f64x2.add
            (f64x2.add (f64x2.mul (local.get $v0) (v128.load (i32.add (local.get $p0) (local.get $t)))) (f64x2.mul (local.get $v1) (v128.load (i32.add (local.get $p1) (local.get $t)))))
            (f64x2.add (f64x2.mul (local.get $v2) (v128.load (i32.add (local.get $p2) (local.get $t)))) (f64x2.mul (local.get $v3) (v128.load (i32.add (local.get $p3) (local.get $t))))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (f64.store (i32.add (local.get $y) (local.get $even))
        (f64.add (f64.load (i32.add (local.get $y) (local.get $even)))
          (f64.add
            (f64.add (f64.mul (local.get $c0) (f64.load (i32.add (local.get $p0) (local.get $even)))) (f64.mul (local.get $c1) (f64.load (i32.add (local.get $p1) (local.get $even)))))
            (f64.add (f64.mul (local.get $c2) (f64.load (i32.add (local.get $p2) (local.get $even)))) (f64.mul (local.get $c3) (f64.load (i32.add (local.get $p3) (local.get $even)))))))))))

  ;; y += scale (w[0] X[0] + w[1] X[1]) for the 2 rows from x.
  (func $combine2 (param $x i32) (param $ldb i32) (param $even i32) (param $bytes i32) (param $w i32) (param $scale f64) (param $y i32)
    (local $t i32) (local $p0 i32) (local $p1 i32) (local $c0 f64) (local $c1 f64) (local $v0 v128) (local $v1 v128)
    (local.set $p0 (local.get $x))
    (local.set $p1 (i32.add (local.get $p0) (local.get $ldb)))
    (local.set $c0 (f64.mul (local.get $scale) (f64.load offset=0 (local.get $w))))
    (local.set $c1 (f64.mul (local.get $scale) (f64.load offset=8 (local.get $w))))
    (local.set $v0 (f64x2.splat (local.get $c0)))
    (local.set $v1 (f64x2.splat (local.get $c1)))
    (block $end (loop $columns
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $y) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $y) (local.get $t)))
          (f64x2.add (f64x2.mul (local.get $v0) (v128.load (i32.add (local.get $p0) (local.get $t)))) (f64x2.mul (local.get $v1) (v128.load (i32.add (local.get $p1) (local.get $t)))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $columns)))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (f64.store (i32.add (local.get $y) (local.get $even))
        (f64.add (f64.load (i32.add (local.get $y) (local.get $even)))
          (f64.add (f64.mul (local.get $c0) (f64.load (i32.add (local.get $p0) (local.get $even)))) (f64.mul (local.get $c1) (f64.load (i32.add (local.get $p1) (local.get $even))))))))))

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
    ;; Four of the rows left at once (each row's sum is the same in any block).
    (if (i32.le_u (i32.add (local.get $k) (i32.const 4)) (local.get $rows)) (then
      (call $dot4 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $v) (local.get $out))
      (local.set $x (i32.add (local.get $x) (i32.shr_u (local.get $block) (i32.const 1))))
      (local.set $out (i32.add (local.get $out) (i32.const 32)))
      (local.set $k (i32.add (local.get $k) (i32.const 4)))))
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

  ;; y += scale sum_k w[k] X[k], as rowsCombine but with the rows after the last block of 8 taken four, then two at
  ;; a time (fewer passes over y; other bits than rowsCombine there, so the machines' passes keep rowsCombine).
  (func (export "basisCombine") (param $rows i32) (param $cols i32) (param $scale f64) (param $x i32) (param $ld i32) (param $w i32) (param $y i32)
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
    (if (i32.le_u (i32.add (local.get $k) (i32.const 4)) (local.get $rows)) (then
      (call $combine4 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $w) (local.get $scale) (local.get $y))
      (local.set $x (i32.add (local.get $x) (i32.shr_u (local.get $block) (i32.const 1))))
      (local.set $w (i32.add (local.get $w) (i32.const 32)))
      (local.set $k (i32.add (local.get $k) (i32.const 4)))))
    (if (i32.le_u (i32.add (local.get $k) (i32.const 2)) (local.get $rows)) (then
      (call $combine2 (local.get $x) (local.get $ldb) (local.get $even) (local.get $bytes) (local.get $w) (local.get $scale) (local.get $y))
      (local.set $x (i32.add (local.get $x) (i32.shl (local.get $ldb) (i32.const 1))))
      (local.set $w (i32.add (local.get $w) (i32.const 16)))
      (local.set $k (i32.add (local.get $k) (i32.const 2)))))
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

  ;; The block kernels: several right-hand sides as one row-major block (n x w, entry (j, c) at j w + c),
  ;; src/solvers/machines/blockShard.ts's passes. Register tiles of 4 rows x 4 columns of the result
  ;; (eight f64x2 accumulators; each splat of A's entry serves two vectors, each load of X four rows),
  ;; then 2 columns, then an odd one; rows after the last whole tile one at a time. One function per tile
  ;; shape, each looping over the inner dimension; blockProduct and csrBlockGradient (at the end) drive them.

  ;; out = alpha op(A) X + beta out on 4 rows x 4 columns (beta 0: out not read).
  (func $tile4x4 (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $xStep i32) (param $kk i32) (param $o i32) (param $oRow i32) (param $alpha f64) (param $beta f64)
    (local $l i32) (local $pa0 i32) (local $pa1 i32) (local $pa2 i32) (local $pa3 i32)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128) (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local $x0 v128) (local $x1 v128) (local $s v128) (local $alphaV v128) (local $betaV v128)
    (local.set $pa0 (local.get $a))
    (local.set $pa1 (i32.add (local.get $pa0) (local.get $aRow)))
    (local.set $pa2 (i32.add (local.get $pa1) (local.get $aRow)))
    (local.set $pa3 (i32.add (local.get $pa2) (local.get $aRow)))
    (block $end (loop $inner
      (br_if $end (i32.ge_s (local.get $l) (local.get $kk)))
      (local.set $x0 (v128.load offset=0 (local.get $x)))
      (local.set $x1 (v128.load offset=16 (local.get $x)))
      (local.set $s (v128.load64_splat (local.get $pa0)))
      (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $c01 (f64x2.add (local.get $c01) (f64x2.mul (local.get $s) (local.get $x1))))
      (local.set $s (v128.load64_splat (local.get $pa1)))
      (local.set $c10 (f64x2.add (local.get $c10) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $c11 (f64x2.add (local.get $c11) (f64x2.mul (local.get $s) (local.get $x1))))
      (local.set $s (v128.load64_splat (local.get $pa2)))
      (local.set $c20 (f64x2.add (local.get $c20) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $c21 (f64x2.add (local.get $c21) (f64x2.mul (local.get $s) (local.get $x1))))
      (local.set $s (v128.load64_splat (local.get $pa3)))
      (local.set $c30 (f64x2.add (local.get $c30) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $c31 (f64x2.add (local.get $c31) (f64x2.mul (local.get $s) (local.get $x1))))
      (local.set $pa0 (i32.add (local.get $pa0) (local.get $aStep)))
      (local.set $pa1 (i32.add (local.get $pa1) (local.get $aStep)))
      (local.set $pa2 (i32.add (local.get $pa2) (local.get $aStep)))
      (local.set $pa3 (i32.add (local.get $pa3) (local.get $aStep)))
      (local.set $x (i32.add (local.get $x) (local.get $xStep)))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $inner)))
    (local.set $alphaV (f64x2.splat (local.get $alpha)))
    (local.set $betaV (f64x2.splat (local.get $beta)))
    (if (f64.eq (local.get $beta) (f64.const 0)) (then
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c00)))
      (v128.store offset=16 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c01)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c10)))
      (v128.store offset=16 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c11)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c20)))
      (v128.store offset=16 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c21)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c30)))
      (v128.store offset=16 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c31)))
    ) (else
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c00)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (v128.store offset=16 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c01)) (f64x2.mul (local.get $betaV) (v128.load offset=16 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c10)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (v128.store offset=16 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c11)) (f64x2.mul (local.get $betaV) (v128.load offset=16 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c20)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (v128.store offset=16 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c21)) (f64x2.mul (local.get $betaV) (v128.load offset=16 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c30)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (v128.store offset=16 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c31)) (f64x2.mul (local.get $betaV) (v128.load offset=16 (local.get $o)))))
    )))

  ;; out = alpha op(A) X + beta out on 4 rows x 2 columns (beta 0: out not read).
  (func $tile4x2 (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $xStep i32) (param $kk i32) (param $o i32) (param $oRow i32) (param $alpha f64) (param $beta f64)
    (local $l i32) (local $pa0 i32) (local $pa1 i32) (local $pa2 i32) (local $pa3 i32)
    (local $c00 v128) (local $c10 v128) (local $c20 v128) (local $c30 v128)
    (local $x0 v128) (local $s v128) (local $alphaV v128) (local $betaV v128)
    (local.set $pa0 (local.get $a))
    (local.set $pa1 (i32.add (local.get $pa0) (local.get $aRow)))
    (local.set $pa2 (i32.add (local.get $pa1) (local.get $aRow)))
    (local.set $pa3 (i32.add (local.get $pa2) (local.get $aRow)))
    (block $end (loop $inner
      (br_if $end (i32.ge_s (local.get $l) (local.get $kk)))
      (local.set $x0 (v128.load offset=0 (local.get $x)))
      (local.set $s (v128.load64_splat (local.get $pa0)))
      (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $s (v128.load64_splat (local.get $pa1)))
      (local.set $c10 (f64x2.add (local.get $c10) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $s (v128.load64_splat (local.get $pa2)))
      (local.set $c20 (f64x2.add (local.get $c20) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $s (v128.load64_splat (local.get $pa3)))
      (local.set $c30 (f64x2.add (local.get $c30) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $pa0 (i32.add (local.get $pa0) (local.get $aStep)))
      (local.set $pa1 (i32.add (local.get $pa1) (local.get $aStep)))
      (local.set $pa2 (i32.add (local.get $pa2) (local.get $aStep)))
      (local.set $pa3 (i32.add (local.get $pa3) (local.get $aStep)))
      (local.set $x (i32.add (local.get $x) (local.get $xStep)))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $inner)))
    (local.set $alphaV (f64x2.splat (local.get $alpha)))
    (local.set $betaV (f64x2.splat (local.get $beta)))
    (if (f64.eq (local.get $beta) (f64.const 0)) (then
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c00)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c10)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c20)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c30)))
    ) (else
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c00)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c10)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c20)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c30)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
    )))

  ;; out = alpha op(A) X + beta out on 4 rows x 1 column (beta 0: out not read).
  (func $tile4x1 (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $xStep i32) (param $kk i32) (param $o i32) (param $oRow i32) (param $alpha f64) (param $beta f64)
    (local $l i32) (local $pa0 i32) (local $pa1 i32) (local $pa2 i32) (local $pa3 i32)
    (local $c00 f64) (local $c10 f64) (local $c20 f64) (local $c30 f64)
    (local $x0 f64) (local $s f64)
    (local.set $pa0 (local.get $a))
    (local.set $pa1 (i32.add (local.get $pa0) (local.get $aRow)))
    (local.set $pa2 (i32.add (local.get $pa1) (local.get $aRow)))
    (local.set $pa3 (i32.add (local.get $pa2) (local.get $aRow)))
    (block $end (loop $inner
      (br_if $end (i32.ge_s (local.get $l) (local.get $kk)))
      (local.set $x0 (f64.load offset=0 (local.get $x)))
      (local.set $s (f64.load (local.get $pa0)))
      (local.set $c00 (f64.add (local.get $c00) (f64.mul (local.get $s) (local.get $x0))))
      (local.set $s (f64.load (local.get $pa1)))
      (local.set $c10 (f64.add (local.get $c10) (f64.mul (local.get $s) (local.get $x0))))
      (local.set $s (f64.load (local.get $pa2)))
      (local.set $c20 (f64.add (local.get $c20) (f64.mul (local.get $s) (local.get $x0))))
      (local.set $s (f64.load (local.get $pa3)))
      (local.set $c30 (f64.add (local.get $c30) (f64.mul (local.get $s) (local.get $x0))))
      (local.set $pa0 (i32.add (local.get $pa0) (local.get $aStep)))
      (local.set $pa1 (i32.add (local.get $pa1) (local.get $aStep)))
      (local.set $pa2 (i32.add (local.get $pa2) (local.get $aStep)))
      (local.set $pa3 (i32.add (local.get $pa3) (local.get $aStep)))
      (local.set $x (i32.add (local.get $x) (local.get $xStep)))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $inner)))
    (if (f64.eq (local.get $beta) (f64.const 0)) (then
      (f64.store offset=0 (local.get $o) (f64.mul (local.get $alpha) (local.get $c00)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (f64.store offset=0 (local.get $o) (f64.mul (local.get $alpha) (local.get $c10)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (f64.store offset=0 (local.get $o) (f64.mul (local.get $alpha) (local.get $c20)))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (f64.store offset=0 (local.get $o) (f64.mul (local.get $alpha) (local.get $c30)))
    ) (else
      (f64.store offset=0 (local.get $o) (f64.add (f64.mul (local.get $alpha) (local.get $c00)) (f64.mul (local.get $beta) (f64.load offset=0 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (f64.store offset=0 (local.get $o) (f64.add (f64.mul (local.get $alpha) (local.get $c10)) (f64.mul (local.get $beta) (f64.load offset=0 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (f64.store offset=0 (local.get $o) (f64.add (f64.mul (local.get $alpha) (local.get $c20)) (f64.mul (local.get $beta) (f64.load offset=0 (local.get $o)))))
      (local.set $o (i32.add (local.get $o) (local.get $oRow)))
      (f64.store offset=0 (local.get $o) (f64.add (f64.mul (local.get $alpha) (local.get $c30)) (f64.mul (local.get $beta) (f64.load offset=0 (local.get $o)))))
    )))

  ;; out = alpha op(A) X + beta out on 1 row x 4 columns (beta 0: out not read).
  (func $tile1x4 (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $xStep i32) (param $kk i32) (param $o i32) (param $oRow i32) (param $alpha f64) (param $beta f64)
    (local $l i32) (local $pa0 i32)
    (local $c00 v128) (local $c01 v128)
    (local $x0 v128) (local $x1 v128) (local $s v128) (local $alphaV v128) (local $betaV v128)
    (local.set $pa0 (local.get $a))
    (block $end (loop $inner
      (br_if $end (i32.ge_s (local.get $l) (local.get $kk)))
      (local.set $x0 (v128.load offset=0 (local.get $x)))
      (local.set $x1 (v128.load offset=16 (local.get $x)))
      (local.set $s (v128.load64_splat (local.get $pa0)))
      (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $c01 (f64x2.add (local.get $c01) (f64x2.mul (local.get $s) (local.get $x1))))
      (local.set $pa0 (i32.add (local.get $pa0) (local.get $aStep)))
      (local.set $x (i32.add (local.get $x) (local.get $xStep)))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $inner)))
    (local.set $alphaV (f64x2.splat (local.get $alpha)))
    (local.set $betaV (f64x2.splat (local.get $beta)))
    (if (f64.eq (local.get $beta) (f64.const 0)) (then
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c00)))
      (v128.store offset=16 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c01)))
    ) (else
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c00)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
      (v128.store offset=16 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c01)) (f64x2.mul (local.get $betaV) (v128.load offset=16 (local.get $o)))))
    )))

  ;; out = alpha op(A) X + beta out on 1 row x 2 columns (beta 0: out not read).
  (func $tile1x2 (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $xStep i32) (param $kk i32) (param $o i32) (param $oRow i32) (param $alpha f64) (param $beta f64)
    (local $l i32) (local $pa0 i32)
    (local $c00 v128)
    (local $x0 v128) (local $s v128) (local $alphaV v128) (local $betaV v128)
    (local.set $pa0 (local.get $a))
    (block $end (loop $inner
      (br_if $end (i32.ge_s (local.get $l) (local.get $kk)))
      (local.set $x0 (v128.load offset=0 (local.get $x)))
      (local.set $s (v128.load64_splat (local.get $pa0)))
      (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $s) (local.get $x0))))
      (local.set $pa0 (i32.add (local.get $pa0) (local.get $aStep)))
      (local.set $x (i32.add (local.get $x) (local.get $xStep)))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $inner)))
    (local.set $alphaV (f64x2.splat (local.get $alpha)))
    (local.set $betaV (f64x2.splat (local.get $beta)))
    (if (f64.eq (local.get $beta) (f64.const 0)) (then
      (v128.store offset=0 (local.get $o) (f64x2.mul (local.get $alphaV) (local.get $c00)))
    ) (else
      (v128.store offset=0 (local.get $o) (f64x2.add (f64x2.mul (local.get $alphaV) (local.get $c00)) (f64x2.mul (local.get $betaV) (v128.load offset=0 (local.get $o)))))
    )))

  ;; out = alpha op(A) X + beta out on 1 row x 1 column (beta 0: out not read).
  (func $tile1x1 (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $xStep i32) (param $kk i32) (param $o i32) (param $oRow i32) (param $alpha f64) (param $beta f64)
    (local $l i32) (local $pa0 i32)
    (local $c00 f64)
    (local $x0 f64) (local $s f64)
    (local.set $pa0 (local.get $a))
    (block $end (loop $inner
      (br_if $end (i32.ge_s (local.get $l) (local.get $kk)))
      (local.set $x0 (f64.load offset=0 (local.get $x)))
      (local.set $s (f64.load (local.get $pa0)))
      (local.set $c00 (f64.add (local.get $c00) (f64.mul (local.get $s) (local.get $x0))))
      (local.set $pa0 (i32.add (local.get $pa0) (local.get $aStep)))
      (local.set $x (i32.add (local.get $x) (local.get $xStep)))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $inner)))
    (if (f64.eq (local.get $beta) (f64.const 0)) (then
      (f64.store offset=0 (local.get $o) (f64.mul (local.get $alpha) (local.get $c00)))
    ) (else
      (f64.store offset=0 (local.get $o) (f64.add (f64.mul (local.get $alpha) (local.get $c00)) (f64.mul (local.get $beta) (f64.load offset=0 (local.get $o)))))
    )))

  ;; Row entries [e0, e1) on 8 columns of the block (x, b, r, g and residual2 at those columns; wB bytes a row): see csrBlockGradient.
  (func $csrChunk8 (param $e0 i32) (param $e1 i32) (param $colIdx i32) (param $values i32) (param $x i32) (param $wB i32) (param $b i32) (param $r i32) (param $g i32) (param $residual2 i32) (param $mode i32)
    (local $e i32) (local $s v128) (local $p i32) (local $r0 v128) (local $r1 v128) (local $r2 v128) (local $r3 v128)
    (if (i32.and (local.get $mode) (i32.const 1)) (then
      (local.set $r0 (f64x2.neg (v128.load offset=0 (local.get $b))))
      (local.set $r1 (f64x2.neg (v128.load offset=16 (local.get $b))))
      (local.set $r2 (f64x2.neg (v128.load offset=32 (local.get $b))))
      (local.set $r3 (f64x2.neg (v128.load offset=48 (local.get $b))))
      (local.set $e (local.get $e0))
      (block $dotted (loop $dot
        (br_if $dotted (i32.ge_s (local.get $e) (local.get $e1)))
        (local.set $s (v128.load64_splat (i32.add (local.get $values) (i32.shl (local.get $e) (i32.const 3)))))
        (local.set $p (i32.add (local.get $x) (i32.mul (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $e) (i32.const 2)))) (local.get $wB))))
        (local.set $r0 (f64x2.add (local.get $r0) (f64x2.mul (local.get $s) (v128.load offset=0 (local.get $p)))))
        (local.set $r1 (f64x2.add (local.get $r1) (f64x2.mul (local.get $s) (v128.load offset=16 (local.get $p)))))
        (local.set $r2 (f64x2.add (local.get $r2) (f64x2.mul (local.get $s) (v128.load offset=32 (local.get $p)))))
        (local.set $r3 (f64x2.add (local.get $r3) (f64x2.mul (local.get $s) (v128.load offset=48 (local.get $p)))))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (br $dot)))
      (v128.store offset=0 (local.get $r) (local.get $r0))
      (v128.store offset=0 (local.get $residual2) (f64x2.add (v128.load offset=0 (local.get $residual2)) (f64x2.mul (local.get $r0) (local.get $r0))))
      (v128.store offset=16 (local.get $r) (local.get $r1))
      (v128.store offset=16 (local.get $residual2) (f64x2.add (v128.load offset=16 (local.get $residual2)) (f64x2.mul (local.get $r1) (local.get $r1))))
      (v128.store offset=32 (local.get $r) (local.get $r2))
      (v128.store offset=32 (local.get $residual2) (f64x2.add (v128.load offset=32 (local.get $residual2)) (f64x2.mul (local.get $r2) (local.get $r2))))
      (v128.store offset=48 (local.get $r) (local.get $r3))
      (v128.store offset=48 (local.get $residual2) (f64x2.add (v128.load offset=48 (local.get $residual2)) (f64x2.mul (local.get $r3) (local.get $r3))))
    ) (else
      (local.set $r0 (v128.load offset=0 (local.get $r)))
      (local.set $r1 (v128.load offset=16 (local.get $r)))
      (local.set $r2 (v128.load offset=32 (local.get $r)))
      (local.set $r3 (v128.load offset=48 (local.get $r)))
    ))
    (if (i32.and (local.get $mode) (i32.const 2)) (then
      (local.set $e (local.get $e0))
      (block $added (loop $add
        (br_if $added (i32.ge_s (local.get $e) (local.get $e1)))
        (local.set $s (v128.load64_splat (i32.add (local.get $values) (i32.shl (local.get $e) (i32.const 3)))))
        (local.set $p (i32.add (local.get $g) (i32.mul (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $e) (i32.const 2)))) (local.get $wB))))
        (v128.store offset=0 (local.get $p) (f64x2.add (v128.load offset=0 (local.get $p)) (f64x2.mul (local.get $s) (local.get $r0))))
        (v128.store offset=16 (local.get $p) (f64x2.add (v128.load offset=16 (local.get $p)) (f64x2.mul (local.get $s) (local.get $r1))))
        (v128.store offset=32 (local.get $p) (f64x2.add (v128.load offset=32 (local.get $p)) (f64x2.mul (local.get $s) (local.get $r2))))
        (v128.store offset=48 (local.get $p) (f64x2.add (v128.load offset=48 (local.get $p)) (f64x2.mul (local.get $s) (local.get $r3))))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (br $add)))
    )))

  ;; Row entries [e0, e1) on 2 columns of the block (x, b, r, g and residual2 at those columns; wB bytes a row): see csrBlockGradient.
  (func $csrChunk2 (param $e0 i32) (param $e1 i32) (param $colIdx i32) (param $values i32) (param $x i32) (param $wB i32) (param $b i32) (param $r i32) (param $g i32) (param $residual2 i32) (param $mode i32)
    (local $e i32) (local $s v128) (local $p i32) (local $r0 v128)
    (if (i32.and (local.get $mode) (i32.const 1)) (then
      (local.set $r0 (f64x2.neg (v128.load offset=0 (local.get $b))))
      (local.set $e (local.get $e0))
      (block $dotted (loop $dot
        (br_if $dotted (i32.ge_s (local.get $e) (local.get $e1)))
        (local.set $s (v128.load64_splat (i32.add (local.get $values) (i32.shl (local.get $e) (i32.const 3)))))
        (local.set $p (i32.add (local.get $x) (i32.mul (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $e) (i32.const 2)))) (local.get $wB))))
        (local.set $r0 (f64x2.add (local.get $r0) (f64x2.mul (local.get $s) (v128.load offset=0 (local.get $p)))))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (br $dot)))
      (v128.store offset=0 (local.get $r) (local.get $r0))
      (v128.store offset=0 (local.get $residual2) (f64x2.add (v128.load offset=0 (local.get $residual2)) (f64x2.mul (local.get $r0) (local.get $r0))))
    ) (else
      (local.set $r0 (v128.load offset=0 (local.get $r)))
    ))
    (if (i32.and (local.get $mode) (i32.const 2)) (then
      (local.set $e (local.get $e0))
      (block $added (loop $add
        (br_if $added (i32.ge_s (local.get $e) (local.get $e1)))
        (local.set $s (v128.load64_splat (i32.add (local.get $values) (i32.shl (local.get $e) (i32.const 3)))))
        (local.set $p (i32.add (local.get $g) (i32.mul (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $e) (i32.const 2)))) (local.get $wB))))
        (v128.store offset=0 (local.get $p) (f64x2.add (v128.load offset=0 (local.get $p)) (f64x2.mul (local.get $s) (local.get $r0))))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (br $add)))
    )))

  ;; Row entries [e0, e1) on 1 column of the block (x, b, r, g and residual2 at those columns; wB bytes a row): see csrBlockGradient.
  (func $csrChunk1 (param $e0 i32) (param $e1 i32) (param $colIdx i32) (param $values i32) (param $x i32) (param $wB i32) (param $b i32) (param $r i32) (param $g i32) (param $residual2 i32) (param $mode i32)
    (local $e i32) (local $s f64) (local $p i32) (local $r0 f64)
    (if (i32.and (local.get $mode) (i32.const 1)) (then
      (local.set $r0 (f64.neg (f64.load offset=0 (local.get $b))))
      (local.set $e (local.get $e0))
      (block $dotted (loop $dot
        (br_if $dotted (i32.ge_s (local.get $e) (local.get $e1)))
        (local.set $s (f64.load (i32.add (local.get $values) (i32.shl (local.get $e) (i32.const 3)))))
        (local.set $p (i32.add (local.get $x) (i32.mul (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $e) (i32.const 2)))) (local.get $wB))))
        (local.set $r0 (f64.add (local.get $r0) (f64.mul (local.get $s) (f64.load offset=0 (local.get $p)))))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (br $dot)))
      (f64.store offset=0 (local.get $r) (local.get $r0))
      (f64.store offset=0 (local.get $residual2) (f64.add (f64.load offset=0 (local.get $residual2)) (f64.mul (local.get $r0) (local.get $r0))))
    ) (else
      (local.set $r0 (f64.load offset=0 (local.get $r)))
    ))
    (if (i32.and (local.get $mode) (i32.const 2)) (then
      (local.set $e (local.get $e0))
      (block $added (loop $add
        (br_if $added (i32.ge_s (local.get $e) (local.get $e1)))
        (local.set $s (f64.load (i32.add (local.get $values) (i32.shl (local.get $e) (i32.const 3)))))
        (local.set $p (i32.add (local.get $g) (i32.mul (i32.load (i32.add (local.get $colIdx) (i32.shl (local.get $e) (i32.const 2)))) (local.get $wB))))
        (f64.store offset=0 (local.get $p) (f64.add (f64.load offset=0 (local.get $p)) (f64.mul (local.get $s) (local.get $r0))))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (br $add)))
    )))

  ;; C (m x n, ldc) = alpha op(A) X + beta C (beta 0: C not read), X kk x n (ldx). op(A)'s entry (i, l) is at
  ;; a + (i aRow + l aStep) elements: aRow = lda, aStep = 1 for A itself; aRow = 1, aStep = lda for A^T
  ;; (A stored kk x m), which the same tiles read column by column.
  (func (export "blockProduct") (param $m i32) (param $n i32) (param $kk i32) (param $alpha f64) (param $a i32) (param $aRow i32) (param $aStep i32) (param $x i32) (param $ldx i32) (param $beta f64) (param $c i32) (param $ldc i32)
    (local $i i32) (local $j i32) (local $m4 i32) (local $n4 i32) (local $xStep i32) (local $oRow i32)
    (local.set $aRow (i32.shl (local.get $aRow) (i32.const 3)))
    (local.set $aStep (i32.shl (local.get $aStep) (i32.const 3)))
    (local.set $xStep (i32.shl (local.get $ldx) (i32.const 3)))
    (local.set $oRow (i32.shl (local.get $ldc) (i32.const 3)))
    (local.set $m4 (i32.and (local.get $m) (i32.const -4)))
    (local.set $n4 (i32.and (local.get $n) (i32.const -4)))
    (block $tilesEnd (loop $tiles
      (br_if $tilesEnd (i32.ge_s (local.get $i) (local.get $m4)))
      (local.set $j (i32.const 0))
      (block $wideEnd (loop $wide
        (br_if $wideEnd (i32.ge_s (local.get $j) (local.get $n4)))
        (call $tile4x4 (local.get $a) (local.get $aRow) (local.get $aStep) (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 3))) (local.get $xStep) (local.get $kk)
          (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))) (local.get $oRow) (local.get $alpha) (local.get $beta))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $wide)))
      (if (i32.le_s (i32.add (local.get $j) (i32.const 2)) (local.get $n)) (then
        (call $tile4x2 (local.get $a) (local.get $aRow) (local.get $aStep) (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 3))) (local.get $xStep) (local.get $kk)
          (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))) (local.get $oRow) (local.get $alpha) (local.get $beta))
        (local.set $j (i32.add (local.get $j) (i32.const 2)))))
      (if (i32.lt_s (local.get $j) (local.get $n)) (then
        (call $tile4x1 (local.get $a) (local.get $aRow) (local.get $aStep) (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 3))) (local.get $xStep) (local.get $kk)
          (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))) (local.get $oRow) (local.get $alpha) (local.get $beta))))
      (local.set $a (i32.add (local.get $a) (i32.shl (local.get $aRow) (i32.const 2))))
      (local.set $c (i32.add (local.get $c) (i32.shl (local.get $oRow) (i32.const 2))))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $tiles)))
    (block $rowsEnd (loop $rows
      (br_if $rowsEnd (i32.ge_s (local.get $i) (local.get $m)))
      (local.set $j (i32.const 0))
      (block $wideEnd (loop $wide
        (br_if $wideEnd (i32.ge_s (local.get $j) (local.get $n4)))
        (call $tile1x4 (local.get $a) (local.get $aRow) (local.get $aStep) (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 3))) (local.get $xStep) (local.get $kk)
          (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))) (local.get $oRow) (local.get $alpha) (local.get $beta))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $wide)))
      (if (i32.le_s (i32.add (local.get $j) (i32.const 2)) (local.get $n)) (then
        (call $tile1x2 (local.get $a) (local.get $aRow) (local.get $aStep) (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 3))) (local.get $xStep) (local.get $kk)
          (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))) (local.get $oRow) (local.get $alpha) (local.get $beta))
        (local.set $j (i32.add (local.get $j) (i32.const 2)))))
      (if (i32.lt_s (local.get $j) (local.get $n)) (then
        (call $tile1x1 (local.get $a) (local.get $aRow) (local.get $aStep) (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 3))) (local.get $xStep) (local.get $kk)
          (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))) (local.get $oRow) (local.get $alpha) (local.get $beta))))
      (local.set $a (i32.add (local.get $a) (local.get $aRow)))
      (local.set $c (i32.add (local.get $c) (local.get $oRow)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $rows))))

  ;; The CSR block pass over w columns (the TypeScript loop csrBlockSweep of src/solvers/linalg/blockKernels.ts,
  ;; the same additions in the same order, so the same bits): rows x cols rows (rowPtr i32, rows + 1 entries;
  ;; colIdx i32, each < cols; values f64), X cols x w, B, R rows x w, G cols x w. Mode bit 1: R = A X - B and
  ;; residual2[c] += |R_c|^2 (else R is given); bit 2: G += A^T R. Row by row, 8 columns at a time in
  ;; registers: each entry read once for them in each of the two products, while the row is in cache.
  (func (export "csrBlockGradient") (param $rows i32) (param $w i32) (param $rowPtr i32) (param $colIdx i32) (param $values i32) (param $x i32) (param $b i32) (param $r i32) (param $g i32) (param $residual2 i32) (param $mode i32)
    (local $k i32) (local $e0 i32) (local $e1 i32) (local $j i32) (local $jB i32) (local $wB i32)
    (local.set $wB (i32.shl (local.get $w) (i32.const 3)))
    (local.set $e1 (i32.load (local.get $rowPtr)))
    (block $done (loop $row
      (br_if $done (i32.ge_s (local.get $k) (local.get $rows)))
      (local.set $e0 (local.get $e1))
      (local.set $rowPtr (i32.add (local.get $rowPtr) (i32.const 4)))
      (local.set $e1 (i32.load (local.get $rowPtr)))
      (local.set $j (i32.const 0))
      (block $wideEnd (loop $wide
        (br_if $wideEnd (i32.gt_s (i32.add (local.get $j) (i32.const 8)) (local.get $w)))
        (local.set $jB (i32.shl (local.get $j) (i32.const 3)))
        (call $csrChunk8 (local.get $e0) (local.get $e1) (local.get $colIdx) (local.get $values) (i32.add (local.get $x) (local.get $jB)) (local.get $wB)
          (i32.add (local.get $b) (local.get $jB)) (i32.add (local.get $r) (local.get $jB)) (i32.add (local.get $g) (local.get $jB)) (i32.add (local.get $residual2) (local.get $jB)) (local.get $mode))
        (local.set $j (i32.add (local.get $j) (i32.const 8)))
        (br $wide)))
      (block $pairsEnd (loop $pairs
        (br_if $pairsEnd (i32.gt_s (i32.add (local.get $j) (i32.const 2)) (local.get $w)))
        (local.set $jB (i32.shl (local.get $j) (i32.const 3)))
        (call $csrChunk2 (local.get $e0) (local.get $e1) (local.get $colIdx) (local.get $values) (i32.add (local.get $x) (local.get $jB)) (local.get $wB)
          (i32.add (local.get $b) (local.get $jB)) (i32.add (local.get $r) (local.get $jB)) (i32.add (local.get $g) (local.get $jB)) (i32.add (local.get $residual2) (local.get $jB)) (local.get $mode))
        (local.set $j (i32.add (local.get $j) (i32.const 2)))
        (br $pairs)))
      (if (i32.lt_s (local.get $j) (local.get $w)) (then
        (local.set $jB (i32.shl (local.get $j) (i32.const 3)))
        (call $csrChunk1 (local.get $e0) (local.get $e1) (local.get $colIdx) (local.get $values) (i32.add (local.get $x) (local.get $jB)) (local.get $wB)
          (i32.add (local.get $b) (local.get $jB)) (i32.add (local.get $r) (local.get $jB)) (i32.add (local.get $g) (local.get $jB)) (i32.add (local.get $residual2) (local.get $jB)) (local.get $mode))))
      (local.set $b (i32.add (local.get $b) (local.get $wB)))
      (local.set $r (i32.add (local.get $r) (local.get $wB)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $row))))

  ;; dst[0 .. w) -= coef src[0 .. w) (rows of a block, wB = 8 w bytes).
  (func $rowSubScaled (param $dst i32) (param $src i32) (param $coef f64) (param $wB i32)
    (local $t i32) (local $even i32) (local $c v128)
    (local.set $c (f64x2.splat (local.get $coef)))
    (local.set $even (i32.and (local.get $wB) (i32.const -16)))
    (block $end (loop $pairs
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $dst) (local.get $t))
        (f64x2.sub (v128.load (i32.add (local.get $dst) (local.get $t))) (f64x2.mul (local.get $c) (v128.load (i32.add (local.get $src) (local.get $t))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $pairs)))
    (if (i32.ne (local.get $even) (local.get $wB)) (then
      (f64.store (i32.add (local.get $dst) (local.get $even))
        (f64.sub (f64.load (i32.add (local.get $dst) (local.get $even))) (f64.mul (local.get $coef) (f64.load (i32.add (local.get $src) (local.get $even)))))))))

  ;; dst[0 .. w) += coef src[0 .. w).
  (func $rowAddScaled (param $dst i32) (param $src i32) (param $coef f64) (param $wB i32)
    (local $t i32) (local $even i32) (local $c v128)
    (local.set $c (f64x2.splat (local.get $coef)))
    (local.set $even (i32.and (local.get $wB) (i32.const -16)))
    (block $end (loop $pairs
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $dst) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $dst) (local.get $t))) (f64x2.mul (local.get $c) (v128.load (i32.add (local.get $src) (local.get $t))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $pairs)))
    (if (i32.ne (local.get $even) (local.get $wB)) (then
      (f64.store (i32.add (local.get $dst) (local.get $even))
        (f64.add (f64.load (i32.add (local.get $dst) (local.get $even))) (f64.mul (local.get $coef) (f64.load (i32.add (local.get $src) (local.get $even)))))))))

  ;; s_k[0 .. w) += l_k z_k[0 .. w) for k = 0..3, s_k the rows of w at sums + k wB (the backward sweep's partial sums).
  (func $rowsAddScaled4 (param $sums i32) (param $z0 i32) (param $l0 f64) (param $z1 i32) (param $l1 f64) (param $z2 i32) (param $l2 f64) (param $z3 i32) (param $l3 f64) (param $wB i32)
    (local $t i32) (local $s1 i32) (local $s2 i32) (local $s3 i32) (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local.set $s1 (i32.add (local.get $sums) (local.get $wB)))
    (local.set $s2 (i32.add (local.get $s1) (local.get $wB)))
    (local.set $s3 (i32.add (local.get $s2) (local.get $wB)))
    (local.set $c0 (f64x2.splat (local.get $l0)))
    (local.set $c1 (f64x2.splat (local.get $l1)))
    (local.set $c2 (f64x2.splat (local.get $l2)))
    (local.set $c3 (f64x2.splat (local.get $l3)))
    (block $end (loop $pairs
      (br_if $end (i32.ge_u (i32.add (local.get $t) (i32.const 16)) (i32.add (local.get $wB) (i32.const 1))))
      (v128.store (i32.add (local.get $sums) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $sums) (local.get $t))) (f64x2.mul (local.get $c0) (v128.load (i32.add (local.get $z0) (local.get $t))))))
      (v128.store (i32.add (local.get $s1) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $s1) (local.get $t))) (f64x2.mul (local.get $c1) (v128.load (i32.add (local.get $z1) (local.get $t))))))
      (v128.store (i32.add (local.get $s2) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $s2) (local.get $t))) (f64x2.mul (local.get $c2) (v128.load (i32.add (local.get $z2) (local.get $t))))))
      (v128.store (i32.add (local.get $s3) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $s3) (local.get $t))) (f64x2.mul (local.get $c3) (v128.load (i32.add (local.get $z3) (local.get $t))))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $pairs)))
    (if (i32.lt_u (local.get $t) (local.get $wB)) (then
      (f64.store (i32.add (local.get $sums) (local.get $t))
        (f64.add (f64.load (i32.add (local.get $sums) (local.get $t))) (f64.mul (local.get $l0) (f64.load (i32.add (local.get $z0) (local.get $t))))))
      (f64.store (i32.add (local.get $s1) (local.get $t))
        (f64.add (f64.load (i32.add (local.get $s1) (local.get $t))) (f64.mul (local.get $l1) (f64.load (i32.add (local.get $z1) (local.get $t))))))
      (f64.store (i32.add (local.get $s2) (local.get $t))
        (f64.add (f64.load (i32.add (local.get $s2) (local.get $t))) (f64.mul (local.get $l2) (f64.load (i32.add (local.get $z2) (local.get $t))))))
      (f64.store (i32.add (local.get $s3) (local.get $t))
        (f64.add (f64.load (i32.add (local.get $s3) (local.get $t))) (f64.mul (local.get $l3) (f64.load (i32.add (local.get $z3) (local.get $t)))))))))

  ;; dst[0 .. w) = (dst - ((s0 + s1) + (s2 + s3))) / d, s_k the rows of w at sums + k wB (the backward sweep's partial sums).
  (func $rowSubSumsDivide (param $dst i32) (param $sums i32) (param $d f64) (param $wB i32)
    (local $t i32) (local $v v128) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local.set $v (f64x2.splat (local.get $d)))
    (local.set $s1 (i32.add (local.get $sums) (local.get $wB)))
    (local.set $s2 (i32.add (local.get $s1) (local.get $wB)))
    (local.set $s3 (i32.add (local.get $s2) (local.get $wB)))
    (block $end (loop $pairs
      (br_if $end (i32.ge_u (i32.add (local.get $t) (i32.const 16)) (i32.add (local.get $wB) (i32.const 1))))
      (v128.store (i32.add (local.get $dst) (local.get $t))
        (f64x2.div
          (f64x2.sub (v128.load (i32.add (local.get $dst) (local.get $t)))
            (f64x2.add
              (f64x2.add (v128.load (i32.add (local.get $sums) (local.get $t))) (v128.load (i32.add (local.get $s1) (local.get $t))))
              (f64x2.add (v128.load (i32.add (local.get $s2) (local.get $t))) (v128.load (i32.add (local.get $s3) (local.get $t))))))
          (local.get $v)))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $pairs)))
    (if (i32.lt_u (local.get $t) (local.get $wB)) (then
      (f64.store (i32.add (local.get $dst) (local.get $t))
        (f64.div
          (f64.sub (f64.load (i32.add (local.get $dst) (local.get $t)))
            (f64.add
              (f64.add (f64.load (i32.add (local.get $sums) (local.get $t))) (f64.load (i32.add (local.get $s1) (local.get $t))))
              (f64.add (f64.load (i32.add (local.get $s2) (local.get $t))) (f64.load (i32.add (local.get $s3) (local.get $t))))))
          (local.get $d))))))

  ;; dst[0 .. w) /= d.
  (func $rowDivide (param $dst i32) (param $d f64) (param $wB i32)
    (local $t i32) (local $even i32) (local $v v128)
    (local.set $v (f64x2.splat (local.get $d)))
    (local.set $even (i32.and (local.get $wB) (i32.const -16)))
    (block $end (loop $pairs
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $dst) (local.get $t)) (f64x2.div (v128.load (i32.add (local.get $dst) (local.get $t))) (local.get $v)))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $pairs)))
    (if (i32.ne (local.get $even) (local.get $wB)) (then
      (f64.store (i32.add (local.get $dst) (local.get $even)) (f64.div (f64.load (i32.add (local.get $dst) (local.get $even))) (local.get $d))))))

  ;; B = G^{-1} B in place for a block B (n x w) with G = P^T L L^T P (src/solvers/sparse/sparseCholesky.ts solveCholesky
  ;; on w columns at once: the same operations on each column in the same order, so each column's bits): Z = P B
  ;; (row k of Z is row perm[k] of B; z is n x w of work), the forward sweep over L's columns (colPtr, rowIdx i32,
  ;; the diagonal first; lValues f64), the backward sweep, B = P^T Z. Each entry of L read once for the w columns.
  ;; z holds (n + 4) x w: after Z, the backward sweep's four partial sums of a row (sparseCholesky.ts backwardSweep's).
  (func (export "choleskySolveBlock") (param $n i32) (param $w i32) (param $colPtr i32) (param $rowIdx i32) (param $lValues i32) (param $perm i32) (param $b i32) (param $z i32)
    (local $k i32) (local $j i32) (local $q i32) (local $start i32) (local $end i32) (local $wB i32) (local $zj i32)
    (local $sums i32) (local $grouped i32) (local $rowsAt i32) (local $valuesAt i32)
    (local.set $wB (i32.shl (local.get $w) (i32.const 3)))
    (block $copied (loop $copy
      (br_if $copied (i32.ge_s (local.get $k) (local.get $n)))
      (memory.copy (i32.add (local.get $z) (i32.mul (local.get $k) (local.get $wB)))
        (i32.add (local.get $b) (i32.mul (i32.load (i32.add (local.get $perm) (i32.shl (local.get $k) (i32.const 2)))) (local.get $wB)))
        (local.get $wB))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $copy)))
    ;; forward: z_j /= L_jj, then z_r -= L_rj z_j below the diagonal
    (block $forwardDone (loop $forward
      (br_if $forwardDone (i32.ge_s (local.get $j) (local.get $n)))
      (local.set $start (i32.load (i32.add (local.get $colPtr) (i32.shl (local.get $j) (i32.const 2)))))
      (local.set $end (i32.load (i32.add (local.get $colPtr) (i32.shl (i32.add (local.get $j) (i32.const 1)) (i32.const 2)))))
      (local.set $zj (i32.add (local.get $z) (i32.mul (local.get $j) (local.get $wB))))
      (call $rowDivide (local.get $zj) (f64.load (i32.add (local.get $lValues) (i32.shl (local.get $start) (i32.const 3)))) (local.get $wB))
      (local.set $q (i32.add (local.get $start) (i32.const 1)))
      (block $columnDone (loop $column
        (br_if $columnDone (i32.ge_s (local.get $q) (local.get $end)))
        (call $rowSubScaled
          (i32.add (local.get $z) (i32.mul (i32.load (i32.add (local.get $rowIdx) (i32.shl (local.get $q) (i32.const 2)))) (local.get $wB)))
          (local.get $zj)
          (f64.load (i32.add (local.get $lValues) (i32.shl (local.get $q) (i32.const 3))))
          (local.get $wB))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $column)))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $forward)))
    ;; backward: the sum of L_rj z_r below the diagonal in four partial sums (the column's entries four at a time,
    ;; one into each, the rest into the first), then z_j = (z_j - sum) / L_jj
    (local.set $sums (i32.add (local.get $z) (i32.mul (local.get $n) (local.get $wB))))
    (local.set $j (local.get $n))
    (block $backwardDone (loop $backward
      (br_if $backwardDone (i32.le_s (local.get $j) (i32.const 0)))
      (local.set $j (i32.sub (local.get $j) (i32.const 1)))
      (local.set $start (i32.load (i32.add (local.get $colPtr) (i32.shl (local.get $j) (i32.const 2)))))
      (local.set $end (i32.load (i32.add (local.get $colPtr) (i32.shl (i32.add (local.get $j) (i32.const 1)) (i32.const 2)))))
      (local.set $zj (i32.add (local.get $z) (i32.mul (local.get $j) (local.get $wB))))
      (memory.fill (local.get $sums) (i32.const 0) (i32.shl (local.get $wB) (i32.const 2)))
      (local.set $q (i32.add (local.get $start) (i32.const 1)))
      (local.set $grouped (i32.add (local.get $q) (i32.and (i32.sub (local.get $end) (local.get $q)) (i32.const -4))))
      (block $groupsDone (loop $group
        (br_if $groupsDone (i32.ge_s (local.get $q) (local.get $grouped)))
        ;; the group's four row indices and values
        (local.set $rowsAt (i32.add (local.get $rowIdx) (i32.shl (local.get $q) (i32.const 2))))
        (local.set $valuesAt (i32.add (local.get $lValues) (i32.shl (local.get $q) (i32.const 3))))
        (call $rowsAddScaled4 (local.get $sums)
          (i32.add (local.get $z) (i32.mul (i32.load offset=0 (local.get $rowsAt)) (local.get $wB))) (f64.load offset=0 (local.get $valuesAt))
          (i32.add (local.get $z) (i32.mul (i32.load offset=4 (local.get $rowsAt)) (local.get $wB))) (f64.load offset=8 (local.get $valuesAt))
          (i32.add (local.get $z) (i32.mul (i32.load offset=8 (local.get $rowsAt)) (local.get $wB))) (f64.load offset=16 (local.get $valuesAt))
          (i32.add (local.get $z) (i32.mul (i32.load offset=12 (local.get $rowsAt)) (local.get $wB))) (f64.load offset=24 (local.get $valuesAt))
          (local.get $wB))
        (local.set $q (i32.add (local.get $q) (i32.const 4)))
        (br $group)))
      (block $rowDone (loop $row
        (br_if $rowDone (i32.ge_s (local.get $q) (local.get $end)))
        (call $rowAddScaled
          (local.get $sums)
          (i32.add (local.get $z) (i32.mul (i32.load (i32.add (local.get $rowIdx) (i32.shl (local.get $q) (i32.const 2)))) (local.get $wB)))
          (f64.load (i32.add (local.get $lValues) (i32.shl (local.get $q) (i32.const 3))))
          (local.get $wB))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $row)))
      (call $rowSubSumsDivide (local.get $zj) (local.get $sums) (f64.load (i32.add (local.get $lValues) (i32.shl (local.get $start) (i32.const 3)))) (local.get $wB))
      (br $backward)))
    (local.set $k (i32.const 0))
    (block $placed (loop $place
      (br_if $placed (i32.ge_s (local.get $k) (local.get $n)))
      (memory.copy (i32.add (local.get $b) (i32.mul (i32.load (i32.add (local.get $perm) (i32.shl (local.get $k) (i32.const 2)))) (local.get $wB)))
        (i32.add (local.get $z) (i32.mul (local.get $k) (local.get $wB)))
        (local.get $wB))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $place)))
  )

  ;; The dense products of the TypeScript backend (src/solvers/linalg/wasmDenseKernels.ts) on packed panels:
  ;; B in slivers of 4 columns (entry (l, j) at 4 l + j), zero-padded to whole slivers by the packing, and
  ;; op(A) as copied, row-major (lda elements) with rows zero-padded to a multiple of 4: the copy of a row
  ;; of A is one memcpy, and the inner loop streams B's sliver and four rows of A with no edge cases.
  ;; C += A B on the row-major C (ldc elements).

  ;; C[4 x 4] += A (4 rows x kc, row stride lda bytes) B sliver (kc x 4): eight f64x2 accumulators; per
  ;; step two loads of B, four splat loads of A, 16 multiply-adds.
  (func $packed4x4 (param $a i32) (param $lda i32) (param $b i32) (param $kc i32) (param $c i32) (param $cRow i32)
    (local $end i32) (local $lda2 i32) (local $lda3 i32) (local $b0 v128) (local $b1 v128) (local $s v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128) (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local.set $lda2 (i32.shl (local.get $lda) (i32.const 1)))
    (local.set $lda3 (i32.add (local.get $lda2) (local.get $lda)))
    (local.set $end (i32.add (local.get $a) (i32.shl (local.get $kc) (i32.const 3))))
    (block $done (loop $step
      (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
      (local.set $b0 (v128.load offset=0 (local.get $b)))
      (local.set $b1 (v128.load offset=16 (local.get $b)))
      (local.set $s (v128.load64_splat (local.get $a)))
      (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $s) (local.get $b0))))
      (local.set $c01 (f64x2.add (local.get $c01) (f64x2.mul (local.get $s) (local.get $b1))))
      (local.set $s (v128.load64_splat (i32.add (local.get $a) (local.get $lda))))
      (local.set $c10 (f64x2.add (local.get $c10) (f64x2.mul (local.get $s) (local.get $b0))))
      (local.set $c11 (f64x2.add (local.get $c11) (f64x2.mul (local.get $s) (local.get $b1))))
      (local.set $s (v128.load64_splat (i32.add (local.get $a) (local.get $lda2))))
      (local.set $c20 (f64x2.add (local.get $c20) (f64x2.mul (local.get $s) (local.get $b0))))
      (local.set $c21 (f64x2.add (local.get $c21) (f64x2.mul (local.get $s) (local.get $b1))))
      (local.set $s (v128.load64_splat (i32.add (local.get $a) (local.get $lda3))))
      (local.set $c30 (f64x2.add (local.get $c30) (f64x2.mul (local.get $s) (local.get $b0))))
      (local.set $c31 (f64x2.add (local.get $c31) (f64x2.mul (local.get $s) (local.get $b1))))
      (local.set $a (i32.add (local.get $a) (i32.const 8)))
      (local.set $b (i32.add (local.get $b) (i32.const 32)))
      (br $step)))
    (v128.store offset=0 (local.get $c) (f64x2.add (v128.load offset=0 (local.get $c)) (local.get $c00)))
    (v128.store offset=16 (local.get $c) (f64x2.add (v128.load offset=16 (local.get $c)) (local.get $c01)))
    (local.set $c (i32.add (local.get $c) (local.get $cRow)))
    (v128.store offset=0 (local.get $c) (f64x2.add (v128.load offset=0 (local.get $c)) (local.get $c10)))
    (v128.store offset=16 (local.get $c) (f64x2.add (v128.load offset=16 (local.get $c)) (local.get $c11)))
    (local.set $c (i32.add (local.get $c) (local.get $cRow)))
    (v128.store offset=0 (local.get $c) (f64x2.add (v128.load offset=0 (local.get $c)) (local.get $c20)))
    (v128.store offset=16 (local.get $c) (f64x2.add (v128.load offset=16 (local.get $c)) (local.get $c21)))
    (local.set $c (i32.add (local.get $c) (local.get $cRow)))
    (v128.store offset=0 (local.get $c) (f64x2.add (v128.load offset=0 (local.get $c)) (local.get $c30)))
    (v128.store offset=16 (local.get $c) (f64x2.add (v128.load offset=16 (local.get $c)) (local.get $c31))))

  ;; C (mp x np, ldc) += A B for A (mp rows, lda elements) and packed B (np / 4 slivers) of depth kc; mp
  ;; and np multiples of 4. Column slivers outside, rows inside: one sliver of B (kc x 4) stays in L1
  ;; cache while every 4 rows of A pass it.
  (func (export "packedProduct") (param $mp i32) (param $np i32) (param $kc i32) (param $ap i32) (param $lda i32) (param $bp i32) (param $c i32) (param $ldc i32)
    (local $i i32) (local $j i32) (local $sliver i32) (local $cRow i32) (local $aRow i32) (local $a i32) (local $cj i32)
    (local.set $sliver (i32.shl (local.get $kc) (i32.const 5)))
    (local.set $cRow (i32.shl (local.get $ldc) (i32.const 3)))
    (local.set $aRow (i32.shl (local.get $lda) (i32.const 3)))
    (block $colsEnd (loop $cols
      (br_if $colsEnd (i32.ge_s (local.get $j) (local.get $np)))
      (local.set $a (local.get $ap))
      (local.set $cj (i32.add (local.get $c) (i32.shl (local.get $j) (i32.const 3))))
      (local.set $i (i32.const 0))
      (block $rowsEnd (loop $rows
        (br_if $rowsEnd (i32.ge_s (local.get $i) (local.get $mp)))
        (call $packed4x4 (local.get $a) (local.get $aRow) (local.get $bp) (local.get $kc) (local.get $cj) (local.get $cRow))
        (local.set $a (i32.add (local.get $a) (i32.shl (local.get $aRow) (i32.const 2))))
        (local.set $cj (i32.add (local.get $cj) (i32.shl (local.get $cRow) (i32.const 2))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $rows)))
      (local.set $bp (i32.add (local.get $bp) (local.get $sliver)))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $cols)))
  )

  ;; The block methods' step phase (src/solvers/machines/stepRules.ts, native/src/block_step.c block_step): rows
  ;; [first, end) of the n x w blocks X (x) and the carried block (carried) moved by rule $rule (stepRules.ts
  ;; STEP_RULE_CODE) with G the sum of the m machines' terms. Machine i's term is c_i x w at terms + 8 K colsOffset[i]
  ;; on its support: the consecutive columns from strip[i] when strip[i] >= 0, else cols[colsOffset[i] ..) (ascending).
  ;; $tileRows rows at a time: sums (tileRows w entries) set to 0, every machine's rows there added in machine order,
  ;; then the rule. Each entry's operations, in their order, are the TypeScript loops' and the addon's: the same bits.
  (func $addInto (param $to i32) (param $from i32) (param $count i32)
    (local $t i32) (local $even i32) (local $bytes i32)
    (local.set $bytes (i32.shl (local.get $count) (i32.const 3)))
    (local.set $even (i32.and (local.get $bytes) (i32.const -16)))
    (block $end (loop $pairs
      (br_if $end (i32.ge_u (local.get $t) (local.get $even)))
      (v128.store (i32.add (local.get $to) (local.get $t))
        (f64x2.add (v128.load (i32.add (local.get $to) (local.get $t))) (v128.load (i32.add (local.get $from) (local.get $t)))))
      (local.set $t (i32.add (local.get $t) (i32.const 16)))
      (br $pairs)))
    (if (i32.ne (local.get $even) (local.get $bytes)) (then
      (f64.store (i32.add (local.get $to) (local.get $even))
        (f64.add (f64.load (i32.add (local.get $to) (local.get $even))) (f64.load (i32.add (local.get $from) (local.get $even))))))))

  ;; The first t in [0, c) with cols[t] >= row (c if none); cols a byte address of i32 entries.
  (func $firstAtOrAfter (param $cols i32) (param $c i32) (param $row i32) (result i32)
    (local $lo i32) (local $hi i32) (local $mid i32)
    (local.set $hi (local.get $c))
    (block $end (loop $search
      (br_if $end (i32.ge_u (local.get $lo) (local.get $hi)))
      (local.set $mid (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))
      (if (i32.lt_s (i32.load (i32.add (local.get $cols) (i32.shl (local.get $mid) (i32.const 2)))) (local.get $row))
        (then (local.set $lo (i32.add (local.get $mid) (i32.const 1))))
        (else (local.set $hi (local.get $mid))))
      (br $search)))
    (local.get $lo))

  (func (export "blockStep") (param $rule i32) (param $alpha f64) (param $beta f64) (param $m i32) (param $K i32) (param $w i32)
      (param $first i32) (param $end i32) (param $x i32) (param $carried i32) (param $terms i32)
      (param $strip i32) (param $cols i32) (param $colsOffset i32) (param $sums i32) (param $tileRows i32)
    (local $r0 i32) (local $r1 i32) (local $bytes i32) (local $even i32) (local $e i32) (local $i i32) (local $c0 i32) (local $c i32)
    (local $term i32) (local $s i32) (local $lo i32) (local $hi i32) (local $t i32) (local $tEnd i32) (local $machineCols i32)
    (local $wb i32) (local $xs i32) (local $ys i32) (local $to i32)
    (local $machines f64) (local $va v128) (local $vb v128) (local $vm v128) (local $vz v128) (local $vnext v128) (local $z f64) (local $next f64)
    (local.set $wb (i32.shl (local.get $w) (i32.const 3)))
    (local.set $machines (f64.convert_i32_s (local.get $m)))
    (local.set $va (f64x2.splat (local.get $alpha)))
    (local.set $vb (f64x2.splat (local.get $beta)))
    (local.set $vm (f64x2.splat (local.get $machines)))
    (local.set $r0 (local.get $first))
    (block $tilesEnd (loop $tiles
      (br_if $tilesEnd (i32.ge_u (local.get $r0) (local.get $end)))
      (local.set $r1 (i32.add (local.get $r0) (local.get $tileRows)))
      (if (i32.lt_u (local.get $end) (local.get $r1)) (then (local.set $r1 (local.get $end))))
      (local.set $bytes (i32.mul (i32.sub (local.get $r1) (local.get $r0)) (local.get $wb)))
      (local.set $even (i32.and (local.get $bytes) (i32.const -16)))
      ;; sums = 0
      (local.set $e (i32.const 0))
      (block $zeroEnd (loop $zero
        (br_if $zeroEnd (i32.ge_u (local.get $e) (local.get $even)))
        (v128.store (i32.add (local.get $sums) (local.get $e)) (v128.const i64x2 0 0))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $zero)))
      (if (i32.ne (local.get $even) (local.get $bytes)) (then (i64.store (i32.add (local.get $sums) (local.get $even)) (i64.const 0))))
      ;; the machines' terms, in machine order
      (local.set $i (i32.const 0))
      (block $machinesEnd (loop $machinesLoop
        (br_if $machinesEnd (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $c0 (i32.load (i32.add (local.get $colsOffset) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $c (i32.sub (i32.load offset=4 (i32.add (local.get $colsOffset) (i32.shl (local.get $i) (i32.const 2)))) (local.get $c0)))
        (local.set $term (i32.add (local.get $terms) (i32.shl (i32.mul (local.get $c0) (local.get $K)) (i32.const 3))))
        (local.set $s (i32.load (i32.add (local.get $strip) (i32.shl (local.get $i) (i32.const 2)))))
        (if (i32.ge_s (local.get $s) (i32.const 0))
          (then
            ;; a strip: its rows [lo, hi) within the tile are contiguous in sums and in its term
            (local.set $lo (local.get $s))
            (if (i32.gt_u (local.get $r0) (local.get $lo)) (then (local.set $lo (local.get $r0))))
            (local.set $hi (i32.add (local.get $s) (local.get $c)))
            (if (i32.lt_u (local.get $r1) (local.get $hi)) (then (local.set $hi (local.get $r1))))
            (if (i32.lt_u (local.get $lo) (local.get $hi)) (then
              (call $addInto
                (i32.add (local.get $sums) (i32.mul (i32.sub (local.get $lo) (local.get $r0)) (local.get $wb)))
                (i32.add (local.get $term) (i32.mul (i32.sub (local.get $lo) (local.get $s)) (local.get $wb)))
                (i32.mul (i32.sub (local.get $hi) (local.get $lo)) (local.get $w))))))
          (else
            (local.set $machineCols (i32.add (local.get $cols) (i32.shl (local.get $c0) (i32.const 2))))
            (local.set $tEnd (call $firstAtOrAfter (local.get $machineCols) (local.get $c) (local.get $r1)))
            (local.set $t (call $firstAtOrAfter (local.get $machineCols) (local.get $c) (local.get $r0)))
            (block $colsEnd (loop $colsLoop
              (br_if $colsEnd (i32.ge_u (local.get $t) (local.get $tEnd)))
              (local.set $to (i32.add (local.get $sums)
                (i32.mul (i32.sub (i32.load (i32.add (local.get $machineCols) (i32.shl (local.get $t) (i32.const 2)))) (local.get $r0)) (local.get $wb))))
              (if (i32.eq (local.get $w) (i32.const 1))
                (then (f64.store (local.get $to)
                  (f64.add (f64.load (local.get $to)) (f64.load (i32.add (local.get $term) (i32.shl (local.get $t) (i32.const 3)))))))
                (else (call $addInto (local.get $to) (i32.add (local.get $term) (i32.mul (local.get $t) (local.get $wb))) (local.get $w))))
              (local.set $t (i32.add (local.get $t) (i32.const 1)))
              (br $colsLoop)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $machinesLoop)))
      ;; the rule on the tile's entries: pairs, then the odd last one
      (local.set $xs (i32.add (local.get $x) (i32.mul (local.get $r0) (local.get $wb))))
      (local.set $ys (i32.add (local.get $carried) (i32.mul (local.get $r0) (local.get $wb))))
      (local.set $e (i32.const 0))
      (block $ruleEnd (loop $pairs
        (br_if $ruleEnd (i32.ge_u (local.get $e) (local.get $even)))
        (block $done
          (if (i32.eqz (local.get $rule)) (then
            ;; consensus: x = alpha (G + m y) + beta x
            (v128.store (i32.add (local.get $xs) (local.get $e))
              (f64x2.add
                (f64x2.mul (local.get $va) (f64x2.add (v128.load (i32.add (local.get $sums) (local.get $e)))
                  (f64x2.mul (local.get $vm) (v128.load (i32.add (local.get $ys) (local.get $e))))))
                (f64x2.mul (local.get $vb) (v128.load (i32.add (local.get $xs) (local.get $e))))))
            (br $done)))
          (if (i32.eq (local.get $rule) (i32.const 1)) (then
            ;; dgd: x -= alpha G
            (v128.store (i32.add (local.get $xs) (local.get $e))
              (f64x2.sub (v128.load (i32.add (local.get $xs) (local.get $e))) (f64x2.mul (local.get $va) (v128.load (i32.add (local.get $sums) (local.get $e))))))
            (br $done)))
          (if (i32.eq (local.get $rule) (i32.const 2)) (then
            ;; cimmino: x += alpha G
            (v128.store (i32.add (local.get $xs) (local.get $e))
              (f64x2.add (v128.load (i32.add (local.get $xs) (local.get $e))) (f64x2.mul (local.get $va) (v128.load (i32.add (local.get $sums) (local.get $e))))))
            (br $done)))
          (if (i32.eq (local.get $rule) (i32.const 3)) (then
            ;; dhbm: z = beta z + G; x -= alpha z
            (local.set $vz (f64x2.add (f64x2.mul (local.get $vb) (v128.load (i32.add (local.get $ys) (local.get $e)))) (v128.load (i32.add (local.get $sums) (local.get $e)))))
            (v128.store (i32.add (local.get $ys) (local.get $e)) (local.get $vz))
            (v128.store (i32.add (local.get $xs) (local.get $e))
              (f64x2.sub (v128.load (i32.add (local.get $xs) (local.get $e))) (f64x2.mul (local.get $va) (local.get $vz))))
            (br $done)))
          ;; dnag: y' = x - alpha G; x = y' + beta (y' - y); y = y'
          (local.set $vnext (f64x2.sub (v128.load (i32.add (local.get $xs) (local.get $e))) (f64x2.mul (local.get $va) (v128.load (i32.add (local.get $sums) (local.get $e))))))
          (v128.store (i32.add (local.get $xs) (local.get $e))
            (f64x2.add (local.get $vnext) (f64x2.mul (local.get $vb) (f64x2.sub (local.get $vnext) (v128.load (i32.add (local.get $ys) (local.get $e)))))))
          (v128.store (i32.add (local.get $ys) (local.get $e)) (local.get $vnext)))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $pairs)))
      (if (i32.ne (local.get $even) (local.get $bytes)) (then
        (local.set $e (local.get $even))
        (block $done
          (if (i32.eqz (local.get $rule)) (then
            (f64.store (i32.add (local.get $xs) (local.get $e))
              (f64.add
                (f64.mul (local.get $alpha) (f64.add (f64.load (i32.add (local.get $sums) (local.get $e)))
                  (f64.mul (local.get $machines) (f64.load (i32.add (local.get $ys) (local.get $e))))))
                (f64.mul (local.get $beta) (f64.load (i32.add (local.get $xs) (local.get $e))))))
            (br $done)))
          (if (i32.eq (local.get $rule) (i32.const 1)) (then
            (f64.store (i32.add (local.get $xs) (local.get $e))
              (f64.sub (f64.load (i32.add (local.get $xs) (local.get $e))) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $sums) (local.get $e))))))
            (br $done)))
          (if (i32.eq (local.get $rule) (i32.const 2)) (then
            (f64.store (i32.add (local.get $xs) (local.get $e))
              (f64.add (f64.load (i32.add (local.get $xs) (local.get $e))) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $sums) (local.get $e))))))
            (br $done)))
          (if (i32.eq (local.get $rule) (i32.const 3)) (then
            (local.set $z (f64.add (f64.mul (local.get $beta) (f64.load (i32.add (local.get $ys) (local.get $e)))) (f64.load (i32.add (local.get $sums) (local.get $e)))))
            (f64.store (i32.add (local.get $ys) (local.get $e)) (local.get $z))
            (f64.store (i32.add (local.get $xs) (local.get $e))
              (f64.sub (f64.load (i32.add (local.get $xs) (local.get $e))) (f64.mul (local.get $alpha) (local.get $z))))
            (br $done)))
          (local.set $next (f64.sub (f64.load (i32.add (local.get $xs) (local.get $e))) (f64.mul (local.get $alpha) (f64.load (i32.add (local.get $sums) (local.get $e))))))
          (f64.store (i32.add (local.get $xs) (local.get $e))
            (f64.add (local.get $next) (f64.mul (local.get $beta) (f64.sub (local.get $next) (f64.load (i32.add (local.get $ys) (local.get $e)))))))
          (f64.store (i32.add (local.get $ys) (local.get $e)) (local.get $next)))))
      (local.set $r0 (local.get $r1))
      (br $tiles)))
  )
 
  ;; APC's and MLM's bookkeeping of one machine after its block pass (src/solvers/machines/blockShard.ts, the
  ;; TypeScript loop blockConsensusLoop of src/solvers/linalg/blockKernels.ts: the same operations in the same
  ;; order on every entry, so the same bits). On its c support rows of X and y (n x w row-major, w f64 a row: row
  ;; first + t when first >= 0, else cols[t], i32), with e = X - y: near[j] = sum_t (e_tj - D_tj)^2 and, when
  ;; withInside, inside[j] = sum_t e_tj^2 (both set, not added to); then D += gamma (term - D) (D, term c x w).
  ;; Two columns a lane pair, an odd last column alone.
  (func (export "blockConsensus") (param $c i32) (param $w i32) (param $x i32) (param $y i32) (param $first i32) (param $cols i32)
    (param $d i32) (param $term i32) (param $gamma f64) (param $near i32) (param $inside i32) (param $withInside i32)
    (local $t i32) (local $j i32) (local $wB i32) (local $even i32) (local $row i32) (local $xr i32) (local $yr i32)
    (local $e v128) (local $f v128) (local $dv v128) (local $g v128) (local $es f64) (local $fs f64) (local $ds f64)
    (local.set $wB (i32.shl (local.get $w) (i32.const 3)))
    (local.set $even (i32.and (local.get $wB) (i32.const -16)))
    (memory.fill (local.get $near) (i32.const 0) (local.get $wB))
    (if (local.get $withInside) (then (memory.fill (local.get $inside) (i32.const 0) (local.get $wB))))
    (local.set $g (f64x2.splat (local.get $gamma)))
    (block $rowsEnd (loop $rows
      (br_if $rowsEnd (i32.ge_s (local.get $t) (local.get $c)))
      (if (i32.ge_s (local.get $first) (i32.const 0))
        (then (local.set $row (i32.add (local.get $first) (local.get $t))))
        (else (local.set $row (i32.load (i32.add (local.get $cols) (i32.shl (local.get $t) (i32.const 2)))))))
      (local.set $xr (i32.add (local.get $x) (i32.mul (local.get $row) (local.get $wB))))
      (local.set $yr (i32.add (local.get $y) (i32.mul (local.get $row) (local.get $wB))))
      (local.set $j (i32.const 0))
      (block $pairsEnd (loop $pairs
        (br_if $pairsEnd (i32.ge_u (local.get $j) (local.get $even)))
        (local.set $e (f64x2.sub (v128.load (i32.add (local.get $xr) (local.get $j))) (v128.load (i32.add (local.get $yr) (local.get $j)))))
        (if (local.get $withInside) (then
          (v128.store (i32.add (local.get $inside) (local.get $j))
            (f64x2.add (v128.load (i32.add (local.get $inside) (local.get $j))) (f64x2.mul (local.get $e) (local.get $e))))))
        (local.set $dv (v128.load (i32.add (local.get $d) (local.get $j))))
        (local.set $f (f64x2.sub (local.get $e) (local.get $dv)))
        (v128.store (i32.add (local.get $near) (local.get $j))
          (f64x2.add (v128.load (i32.add (local.get $near) (local.get $j))) (f64x2.mul (local.get $f) (local.get $f))))
        (v128.store (i32.add (local.get $d) (local.get $j))
          (f64x2.add (local.get $dv) (f64x2.mul (local.get $g) (f64x2.sub (v128.load (i32.add (local.get $term) (local.get $j))) (local.get $dv)))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $pairs)))
      (if (i32.ne (local.get $even) (local.get $wB)) (then
        (local.set $es (f64.sub (f64.load (i32.add (local.get $xr) (local.get $even))) (f64.load (i32.add (local.get $yr) (local.get $even)))))
        (if (local.get $withInside) (then
          (f64.store (i32.add (local.get $inside) (local.get $even))
            (f64.add (f64.load (i32.add (local.get $inside) (local.get $even))) (f64.mul (local.get $es) (local.get $es))))))
        (local.set $ds (f64.load (i32.add (local.get $d) (local.get $even))))
        (local.set $fs (f64.sub (local.get $es) (local.get $ds)))
        (f64.store (i32.add (local.get $near) (local.get $even))
          (f64.add (f64.load (i32.add (local.get $near) (local.get $even))) (f64.mul (local.get $fs) (local.get $fs))))
        (f64.store (i32.add (local.get $d) (local.get $even))
          (f64.add (local.get $ds) (f64.mul (local.get $gamma) (f64.sub (f64.load (i32.add (local.get $term) (local.get $even))) (local.get $ds)))))))
      (local.set $d (i32.add (local.get $d) (local.get $wB)))
      (local.set $term (i32.add (local.get $term) (local.get $wB)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $rows)))
  )
)
