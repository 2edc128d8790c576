/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gemm-micro.h — one register-tile micro-kernel of the GEMM (gemm.h),
 * written once and included by gemm-x86.c per instruction set and width
 * (deliberately no include guard). The includer defines:
 *   K_FN      the function's name
 *   K_TARGET  its target attribute string
 *   K_VEC, K_W          the vector type and its floats
 *   K_MR, K_NV          rows (4 or 8) and vectors of columns (1 to 3)
 *   K_ZERO, K_LOAD, K_STORE, K_SET1, K_FMA, K_ADD, K_MAX   the intrinsics
 *   K_MASKED  1 when K_MASK_LOAD (src, mask, p) (lanes not in mask from src)
 *             and K_MASK_STORE (p, mask, v) exist (AVX-512), else 0
 *   K_FINISH  (K_MASKED 0 only) finish (row, i, v, g, tile): the epilogue
 *             and store of vector g of row i through the runs, lane by lane
 *
 * Row p of B is K_NV loads, each A value one broadcast, K_MR·K_NV FMAs.
 * The accumulators are 24 separate variables (rIJ: row I, vector J), not
 * an array: the compiler keeps an array of vectors this large in memory
 * at the function's ends, and every call would then move all of it
 * through the stack — as much work as a short K loop. Rows and vectors
 * past K_MR and K_NV are dead code.
 *
 * The epilogue (M2iGemmTile) tests each of its steps once per row, then
 * applies it to the row's vectors; stores are whole vectors (PLAIN), else
 * a masked store per run (AVX-512) or K_FINISH's lanes.
 */

/* X (I, J) for the row's vectors J = 0 .. K_NV - 1. */
#define GM_J3(X, I) \
  { X (I, 0) } \
  if (K_NV > 1) { X (I, 1) } \
  if (K_NV > 2) { X (I, 2) }

#define GM_FMA(I, J) r##I##J = K_FMA (ai, b##J, r##I##J);
#define GM_ROW(I) \
  if (I < K_MR) { \
    K_VEC ai = K_SET1 (a[I]); \
    GM_J3 (GM_FMA, I) \
  }

#define GM_BIAS(I, J) r##I##J = K_ADD (r##I##J, bias);
#define GM_RELU(I, J) r##I##J = K_MAX (r##I##J, K_ZERO ()); /* max (NaN, 0) = 0, as x > 0 ? x : 0 */
/* Row I's epilogue: ACC (I, J) adds what C holds, COLB (I, J) the column
 * biases, PUT (I, J) stores; `row` is C's row I. */
#define GM_EPILOGUE(I, ACC, COLB, PUT) \
  if (I < K_MR && I < t->rows) { \
    float *row = t->c + I * t->ldc; \
    if (t->accumulate) { GM_J3 (ACC, I) } \
    if (t->col_bias) { GM_J3 (COLB, I) } \
    if (t->row_bias) { \
      K_VEC bias = K_SET1 (t->row_bias[I]); \
      GM_J3 (GM_BIAS, I) \
    } \
    if (t->relu) { GM_J3 (GM_RELU, I) } \
    GM_J3 (PUT, I) \
  }
#define GM_EPILOGUES(ACC, COLB, PUT) \
  GM_EPILOGUE (0, ACC, COLB, PUT) GM_EPILOGUE (1, ACC, COLB, PUT) \
  GM_EPILOGUE (2, ACC, COLB, PUT) GM_EPILOGUE (3, ACC, COLB, PUT) \
  GM_EPILOGUE (4, ACC, COLB, PUT) GM_EPILOGUE (5, ACC, COLB, PUT) \
  GM_EPILOGUE (6, ACC, COLB, PUT) GM_EPILOGUE (7, ACC, COLB, PUT)

/* PLAIN: vector J at column at0 + J·K_W. */
#define GM_ACC_PLAIN(I, J) r##I##J = K_ADD (r##I##J, K_LOAD (row + at0 + J * K_W));
#define GM_COLB_PLAIN(I, J) r##I##J = K_ADD (r##I##J, K_LOAD (t->col_bias + J * K_W));
#define GM_PUT_PLAIN(I, J) K_STORE (row + at0 + J * K_W, r##I##J);
/* Runs (AVX-512): vector J's lanes go to C by the runs of group J, with
 * masked loads and stores. */
#define GM_ACC_RUNS(I, J) { \
    K_VEC prev = K_ZERO (); \
    for (gint r = t->run_start[J]; r < t->run_start[J + 1]; r++) \
      prev = K_MASK_LOAD (prev, t->run_mask[r], row + t->run_at[r]); \
    r##I##J = K_ADD (r##I##J, prev); \
  }
#define GM_COLB_RUNS(I, J) \
  r##I##J = K_ADD (r##I##J, K_MASK_LOAD (K_ZERO (), t->run_mask[t->run_start[J]], \
          t->col_bias + J * K_W));
#define GM_PUT_RUNS(I, J) \
  for (gint r = t->run_start[J]; r < t->run_start[J + 1]; r++) \
    K_MASK_STORE (row + t->run_at[r], t->run_mask[r], r##I##J);
/* Any runs: K_FINISH does every step. */
#define GM_FINISH(I, J) K_FINISH (t->c + I * t->ldc, I, r##I##J, J, t);
#define GM_FINISH_ROW(I) \
  if (I < K_MR && I < t->rows) { GM_J3 (GM_FINISH, I) }

__attribute__ ((target (K_TARGET)))
static void
K_FN (gint kc, const float *a, const float *b, const gint32 *off, const M2iGemmTile *t)
{
  K_VEC r00 = K_ZERO (), r01 = r00, r02 = r00, r10 = r00, r11 = r00, r12 = r00,
      r20 = r00, r21 = r00, r22 = r00, r30 = r00, r31 = r00, r32 = r00,
      r40 = r00, r41 = r00, r42 = r00, r50 = r00, r51 = r00, r52 = r00,
      r60 = r00, r61 = r00, r62 = r00, r70 = r00, r71 = r00, r72 = r00;
  for (gint p = 0; p < kc; p++) {
    const float *bp = b + off[p];
    K_VEC b0 = K_LOAD (bp);
    K_VEC b1 = K_NV > 1 ? K_LOAD (bp + K_W) : b0;
    K_VEC b2 = K_NV > 2 ? K_LOAD (bp + 2 * K_W) : b0;
    GM_ROW (0) GM_ROW (1) GM_ROW (2) GM_ROW (3)
    GM_ROW (4) GM_ROW (5) GM_ROW (6) GM_ROW (7)
    a += K_MR;
  }
  if (t->layout == M2I_GEMM_PLAIN) {
    gint32 at0 = t->run_at[0];
    GM_EPILOGUES (GM_ACC_PLAIN, GM_COLB_PLAIN, GM_PUT_PLAIN)
#if K_MASKED
  } else {
    GM_EPILOGUES (GM_ACC_RUNS, GM_COLB_RUNS, GM_PUT_RUNS)
#else
  } else {
    GM_FINISH_ROW (0) GM_FINISH_ROW (1) GM_FINISH_ROW (2) GM_FINISH_ROW (3)
    GM_FINISH_ROW (4) GM_FINISH_ROW (5) GM_FINISH_ROW (6) GM_FINISH_ROW (7)
#endif
  }
}

#undef GM_J3
#undef GM_FMA
#undef GM_ROW
#undef GM_BIAS
#undef GM_RELU
#undef GM_EPILOGUE
#undef GM_EPILOGUES
#undef GM_ACC_PLAIN
#undef GM_COLB_PLAIN
#undef GM_PUT_PLAIN
#undef GM_ACC_RUNS
#undef GM_COLB_RUNS
#undef GM_PUT_RUNS
#undef GM_FINISH
#undef GM_FINISH_ROW
