/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conv-small-tile.h — the register tile of the small-plane convolution
 * (conv-small.h), written once and included by conv-small-avx2.c and
 * conv-small-avx512.c (deliberately no include guard). The includer
 * defines:
 *   T_TARGET  the target attribute string
 *   T_VEC, T_W           the vector type and its floats (channels)
 *   T_P, T_V             the largest tile: pixels and channel vectors
 *   T_ZERO, T_SET1, T_LOAD, T_FMA, T_STORE   the intrinsics
 * and then instantiates tiles with T_TILE (P, V) (P <= T_P, V <= T_V),
 * named tile_P_V.
 *
 * For every tap and input channel: V loads of a weight row (the
 * channels at fixed offsets), one broadcast per pixel, P·V FMAs. The
 * accumulators are an array the compiler keeps in registers once P and V
 * are constants and the loops over them unrolled.
 */

__attribute__ ((target (T_TARGET)))
static inline __attribute__ ((always_inline)) void
small_body (const IrSmallConv *s, const float *in, gint64 p0, gint c0, float *sums, gsize ld,
    const gint np, const gint nv)
{
  T_VEC acc[T_P][T_V];
#pragma GCC unroll 16
  for (gint p = 0; p < np; p++)
#pragma GCC unroll 8
    for (gint v = 0; v < nv; v++)
      acc[p][v] = T_ZERO ();
  gsize ohw = (gsize) (s->oh * s->ow), plane = (gsize) (s->h * s->w);
  gsize c_in = (gsize) s->c_in, group = (gsize) s->group;
  const float *wr = s->wts + c0 * s->taps * s->c_in;
  for (gint64 t = 0; t < s->taps; t++) {
    const gint32 *tab = s->tab + t * ohw + p0;
    const float *ip[T_P];
#pragma GCC unroll 16
    for (gint p = 0; p < np; p++)
      ip[p] = tab[p] >= 0 ? in + tab[p] : s->zeros;
    for (gsize ci = 0, o = 0; ci < c_in; ci++, o += plane, wr += group) {
      T_VEC wv[T_V];
#pragma GCC unroll 8
      for (gint v = 0; v < nv; v++)
        wv[v] = T_LOAD (wr + v * T_W);
#pragma GCC unroll 16
      for (gint p = 0; p < np; p++) {
        T_VEC b = T_SET1 (ip[p][o]);
#pragma GCC unroll 8
        for (gint v = 0; v < nv; v++)
          acc[p][v] = T_FMA (wv[v], b, acc[p][v]);
      }
    }
  }
#pragma GCC unroll 16
  for (gint p = 0; p < np; p++)
#pragma GCC unroll 8
    for (gint v = 0; v < nv; v++)
      T_STORE (sums + (p0 + p) * ld + c0 + v * T_W, acc[p][v]);
}

#define T_TILE(P, V) \
  __attribute__ ((target (T_TARGET))) \
  static void \
  tile_##P##_##V (const IrSmallConv *s, const float *in, gint64 p0, gint np, gint c0, \
      gint nv, float *sums, gsize ld) \
  { \
    small_body (s, in, p0, c0, sums, ld, P, V); \
  }
