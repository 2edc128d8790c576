/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-tap-tile.h — one register-tile kernel of the direct 1×K / K×1
 * convolution (conv-tap.h), written once and included by conv-tap-micro.h
 * per width and masking (deliberately no include guard). The includer
 * defines:
 *   T_FN      the function's name
 *   T_TARGET  its target attribute string
 *   T_VEC, T_W          the vector type and its floats
 *   T_MR, T_NV          rows (4 or 8) and vectors of columns (1 to 3)
 *   T_MASKED  1: tap t's vector J is T_MLOAD (p, t, J) (its pad lanes 0,
 *             from the masks `mk`), 0: T_LOAD (p)
 *   T_ZERO, T_SET1, T_FMA, T_ADD, T_MAX, T_LOAD, T_STORE   the intrinsics
 *   T_LOAD_N (p, n), T_STORE_N (p, v, n)  load (the rest 0) and store the
 *             first n lanes
 *   T_MASK_T  the type of a mask (`mk` is T_MASK_T[IR_TAP_MAX][3])
 *
 * For every input channel and tap: T_NV loads of the input shifted by the
 * tap, each weight one broadcast, T_MR·T_NV FMAs — the GEMM micro-kernel's
 * arithmetic (gemm-micro.h), its B rows found by adding the tap's offset
 * instead of through a row table. Accumulators are separate variables
 * (rIJ: row I, vector J), as there; rows and vectors past T_MR and T_NV
 * are dead code. A call may take only some of the taps (those reading
 * inside the image somewhere in the panel: the others add only zeros)
 * and some of the input channels, adding to what C holds.
 */

#define TM_J3(X, I) \
  { X (I, 0) } \
  if (T_NV > 1) { X (I, 1) } \
  if (T_NV > 2) { X (I, 2) }

#define TM_FMA(I, J) r##I##J = T_FMA (ai, b##J, r##I##J);
#define TM_ROW(I) \
  if (I < T_MR) { \
    T_VEC ai = T_SET1 (at[I]); \
    TM_J3 (TM_FMA, I) \
  }
#define TM_BIAS(I, J) r##I##J = T_ADD (r##I##J, bv);
#define TM_RELU(I, J) r##I##J = T_MAX (r##I##J, T_ZERO ()); /* max (NaN, 0) = 0, as x > 0 ? x : 0 */
#define TM_PUT(I, J) \
  if ((J + 1) * T_W <= ncols) \
    T_STORE (row + J * T_W, r##I##J); \
  else \
    T_STORE_N (row + J * T_W, r##I##J, ncols - J * T_W);
#define TM_GET(I, J) \
  r##I##J = (J + 1) * T_W <= ncols ? T_LOAD (row + J * T_W) : T_LOAD_N (row + J * T_W, \
      ncols - J * T_W);
#define TM_START(I) \
  if (I < T_MR && I < rows) { \
    const float *row = c + I * ldc; \
    TM_J3 (TM_GET, I) \
  }
#define TM_FINISH(I) \
  if (I < T_MR && I < rows) { \
    float *row = c + I * ldc; \
    if (bias) { \
      T_VEC bv = T_SET1 (bias[I]); \
      TM_J3 (TM_BIAS, I) \
    } \
    if (relu) { TM_J3 (TM_RELU, I) } \
    TM_J3 (TM_PUT, I) \
  }

#if T_MASKED
#define TM_B(J) T_MLOAD (bp + J * T_W, t, J)
#else
#define TM_B(J) T_LOAD (bp + J * T_W)
#endif

/* @b: the first input channel at the tile's first pixel, channels @plane
 * apart; the @nt taps: tap t at offset toff[t] from the pixel, its
 * weights at @a + tw[t] (then every @a_ci floats the next channel's);
 * @c: the tile's first output row at that pixel, rows @ldc apart, added
 * to when @acc; @ncols <= T_NV·T_W pixels, @rows <= T_MR output channels
 * stored. */
__attribute__ ((target (T_TARGET)))
static void
T_FN (const float *b, gsize plane, gint c_in, gint nt, const gint32 *toff, const gint32 *tw,
    gsize a_ci, const void *mk_, const float *a, float *c, gsize ldc, gint rows, gint ncols,
    gboolean acc, const float *bias, gboolean relu)
{
#if T_MASKED
  const T_MASK_T *mk = mk_;
#else
  (void) mk_;
#endif
  T_VEC r00 = T_ZERO (), r01 = r00, r02 = r00, r10 = r00, r11 = r00, r12 = r00,
      r20 = r00, r21 = r00, r22 = r00, r30 = r00, r31 = r00, r32 = r00,
      r40 = r00, r41 = r00, r42 = r00, r50 = r00, r51 = r00, r52 = r00,
      r60 = r00, r61 = r00, r62 = r00, r70 = r00, r71 = r00, r72 = r00;
  if (acc) {
    TM_START (0) TM_START (1) TM_START (2) TM_START (3)
    TM_START (4) TM_START (5) TM_START (6) TM_START (7)
  }
  for (gint ci = 0; ci < c_in; ci++, b += plane, a += a_ci)
    for (gint t = 0; t < nt; t++) {
      const float *bp = b + toff[t];
      T_VEC b0 = TM_B (0);
      T_VEC b1 = T_NV > 1 ? TM_B (1) : b0;
      T_VEC b2 = T_NV > 2 ? TM_B (2) : b0;
      const float *at = a + tw[t];
      TM_ROW (0) TM_ROW (1) TM_ROW (2) TM_ROW (3)
      TM_ROW (4) TM_ROW (5) TM_ROW (6) TM_ROW (7)
    }
  TM_FINISH (0) TM_FINISH (1) TM_FINISH (2) TM_FINISH (3)
  TM_FINISH (4) TM_FINISH (5) TM_FINISH (6) TM_FINISH (7)
}

#undef TM_J3
#undef TM_FMA
#undef TM_ROW
#undef TM_BIAS
#undef TM_RELU
#undef TM_PUT
#undef TM_GET
#undef TM_START
#undef TM_FINISH
#undef TM_B
#undef T_FN
#undef T_NV
#undef T_MASKED
