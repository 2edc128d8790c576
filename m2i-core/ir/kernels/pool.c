/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* MaxPool-1, MaxPool-8 and AvgPool-1 over 1 to 3 spatial axes (NCW, NCHW,
 * NCDHW); MaxPool-14 and AvgPool-14 are -8 and -1 with rounding_type
 * ceil_torch (ceil, but no window may start in the right padding).
 *
 * Geometry (auto_pad, pads, rounding_type, dilations) is shared with
 * Convolution (kernel-util.c). Pads count as -inf for MaxPool; the second
 * output of MaxPool-8 is the position of the maximum in the input
 * flattened from `axis` on (pads not counted), the first maximum in
 * row-major window order winning ties. AvgPool divides by the kernel size
 * when exclude-pad is false and pads exist (OpenVINO's reference), and by
 * the number of input elements in the window otherwise.
 *
 * Each output row is computed a kernel tap at a time over the whole row, so
 * the inner loops run along contiguous memory and vectorize.
 */
#include "kernels-private.h"
#include "pool-rows.h"
#include <base/m2i-align.h>
#include <base/m2i-parallel.h>

#include <math.h>
#include <string.h>

typedef struct {
  gboolean is_max;
  gboolean exclude_pad, pads_in_avg;   /* AvgPool */
  M2iElementType type, index_type;
  gint n_outputs;
  gint64 axis;                         /* MaxPool-8 indices, normalized */
  gint64 n, c, d, h, w, od, oh, ow;    /* unit axes fill up to 3 spatial */
  gint64 kd, kh, kw, sd, sh, sw, dd, dh, dw, pd, pt, pl;
  gint slices;
  /* For each kernel column kx: the output columns [col_lo, col_hi] whose
   * input column x·sw + kx·dw − pl lies inside the row (computed once:
   * 64-bit divisions per row would cost more than the maxima). */
  gint64 *col_lo, *col_hi;
  gboolean separable;                  /* max_plane_sep () applies */
  /* max_plane_sep (): per 16 outputs of a row, the masks of the input
   * columns 16·sw·i − pl + [0, 16), + 16 and + 32 inside the row, and of
   * the outputs inside it */
  guint16 *sep_masks;
  gboolean avg_full;                   /* avg_plane_full () applies */
  gboolean rows;                       /* ir_pool_max_plane () (pool-rows.h) applies */
  IrPoolGeom rows_geom;
} PoolState;

static void
pool_state_free (gpointer p)
{
  PoolState *s = p;
  if (s) {
    g_free (s->col_lo);
    g_free (s->col_hi);
    g_free (s->sep_masks);
    g_free (s);
  }
}

/* ---- MaxPool rows ------------------------------------------------------ */

/* best[x] = max (best[x], row[x·sw + off]) for x in [lo, hi], remembering
 * where the maximum came from. Strides 1 and 2 (nearly every network) get
 * their own loops: with a constant stride the compiler vectorizes the
 * loads with permutes instead of gathers. */
#define MAX_ROW_LOOP(STRIDE) \
    for (gint64 x = lo; x <= hi; x++) { \
      gint64 p = x * (STRIDE) + off; \
      __typeof__ (*best) v = row[p]; \
      gboolean gt = v > best[x]; \
      best[x] = gt ? v : best[x]; \
      idx[x] = gt ? (gint32) (base + p) : idx[x]; \
    }
#define MAX_ROW(T) \
  M2I_K_INLINE void \
  max_row_##T##_body (const T *restrict row, gint64 off, gint64 sw, gint64 lo, gint64 hi, \
      T *restrict best, gint32 *restrict idx, gint32 base) \
  { \
    if (sw == 1) { \
      MAX_ROW_LOOP (1) \
    } else if (sw == 2) { \
      MAX_ROW_LOOP (2) \
    } else { \
      MAX_ROW_LOOP (sw) \
    } \
  } \
  M2I_K_SIMD_CLONES (max_row_##T, (const T *restrict row, gint64 off, gint64 sw, gint64 lo, \
      gint64 hi, T *restrict best, gint32 *restrict idx, gint32 base), \
      (row, off, sw, lo, hi, best, idx, base))

typedef float f32;
typedef guint8 u8;
MAX_ROW (f32)
MAX_ROW (gint32)
MAX_ROW (gint64)
MAX_ROW (u8)

/* One output row (od, oy) of one plane. best/idx hold ow entries; idx is
 * the position inside the plane (d·h·w), -1 while nothing beat the start
 * value (the type's lowest). */
#define MAX_PLANE_ROW(T, LOWEST) \
  static void \
  max_output_row_##T (const PoolState *s, const T *plane, gint64 od, gint64 oy, T *best, \
      gint32 *idx) \
  { \
    for (gint64 x = 0; x < s->ow; x++) { \
      best[x] = LOWEST; \
      idx[x] = -1; \
    } \
    for (gint64 kz = 0; kz < s->kd; kz++) { \
      gint64 iz = od * s->sd - s->pd + kz * s->dd; \
      if (iz < 0 || iz >= s->d) \
        continue; \
      for (gint64 ky = 0; ky < s->kh; ky++) { \
        gint64 iy = oy * s->sh - s->pt + ky * s->dh; \
        if (iy < 0 || iy >= s->h) \
          continue; \
        gint32 base = (gint32) ((iz * s->h + iy) * s->w); \
        for (gint64 kx = 0; kx < s->kw; kx++) { \
          max_row_##T (plane + base, kx * s->dw - s->pl, s->sw, s->col_lo[kx], \
              s->col_hi[kx], best, idx, base); \
        } \
      } \
    } \
    /* Windows where no element beat LOWEST (all lowest or NaN, or only \
     * pads): the first element of the window decides, as a scan would. */ \
    for (gint64 x = 0; x < s->ow; x++) { \
      if (idx[x] >= 0) \
        continue; \
      for (gint64 kz = 0; kz < s->kd && idx[x] < 0; kz++) \
        for (gint64 ky = 0; ky < s->kh && idx[x] < 0; ky++) \
          for (gint64 kx = 0; kx < s->kw && idx[x] < 0; kx++) { \
            gint64 iz = od * s->sd - s->pd + kz * s->dd; \
            gint64 iy = oy * s->sh - s->pt + ky * s->dh; \
            gint64 ix = x * s->sw - s->pl + kx * s->dw; \
            if (iz < 0 || iz >= s->d || iy < 0 || iy >= s->h || ix < 0 || ix >= s->w) \
              continue; \
            idx[x] = (gint32) ((iz * s->h + iy) * s->w + ix); \
            best[x] = plane[idx[x]]; \
          } \
      if (idx[x] < 0) \
        idx[x] = 0; \
    } \
  }

MAX_PLANE_ROW (f32, -INFINITY)
MAX_PLANE_ROW (gint32, G_MININT32)
MAX_PLANE_ROW (gint64, G_MININT64)
MAX_PLANE_ROW (u8, 0)

#if defined(__x86_64__) && defined(__GNUC__)
#include "row-x86.h"

/* The same output row as max_output_row_f32, with AVX-512: pooled rows are
 * short (7 to 56 outputs), too short for compiled vector loops, whose
 * scalar remainders would dominate. Here 16 outputs stay in registers
 * across every kernel tap; masks cover row ends and pads; stride 2 is two
 * loads and a permute, other strides a gather. */
/* The window of output (od, oy, x) as a scan would see it: the first
 * element inside the input, or -1 (all pads). */
static gint32
first_in_window (const PoolState *s, gint64 od, gint64 oy, gint64 x)
{
  for (gint64 kz = 0; kz < s->kd; kz++)
    for (gint64 ky = 0; ky < s->kh; ky++)
      for (gint64 kx = 0; kx < s->kw; kx++) {
        gint64 iz = od * s->sd - s->pd + kz * s->dd;
        gint64 iy = oy * s->sh - s->pt + ky * s->dh;
        gint64 ix = x * s->sw - s->pl + kx * s->dw;
        if (iz >= 0 && iz < s->d && iy >= 0 && iy < s->h && ix >= 0 && ix < s->w)
          return (gint32) ((iz * s->h + iy) * s->w + ix);
      }
  return -1;
}

/* A whole f32 plane with AVX-512: pooled rows are short (7 to 56 outputs),
 * too short for compiled vector loops, whose scalar remainders would
 * dominate. Here 16 outputs stay in registers across every kernel tap;
 * masks cover row ends and pads; stride 2 is two loads and a permute,
 * other strides a gather. Values and indices (plus @shift, as
 * index_type) go straight to the outputs; without indices, positions are
 * not tracked. */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
void
max_plane_avx512 (const PoolState *s, const float *plane, float *out, guint8 *ind,
    gint64 shift, gboolean with_idx, gint64 sw)
{
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step = _mm512_mullo_epi32 (lane, _mm512_set1_epi32 ((gint32) sw));
  const __m512 lowest = _mm512_set1_ps (-INFINITY);
  for (gint64 od = 0; od < s->od; od++)
    for (gint64 oy = 0; oy < s->oh; oy++)
      for (gint64 x = 0; x < s->ow; x += 16) {
        gint64 n = MIN (16, s->ow - x);
        __mmask16 m = (__mmask16) ((1u << n) - 1);
        /* Inside: every tap of the n lanes reads within the row, so only
         * lanes past n need masking, which the final store does; the full
         * 16 (stride 1) or 32 (stride 2) elements loaded must then merely
         * stay inside the plane. */
        gint64 first = x * sw - s->pl;
        gint64 last = (x + n - 1) * sw + (s->kw - 1) * s->dw - s->pl;
        gboolean inside = first >= 0 && last < s->w;
        gint64 span = sw == 2 ? 32 : 16, plane_len = s->d * s->h * s->w;
        __m512 bv = lowest;
        __m512i bi = _mm512_set1_epi32 (-1);
        for (gint64 kz = 0; kz < s->kd; kz++) {
          gint64 iz = od * s->sd - s->pd + kz * s->dd;
          if (iz < 0 || iz >= s->d)
            continue;
          for (gint64 ky = 0; ky < s->kh; ky++) {
            gint64 iy = oy * s->sh - s->pt + ky * s->dh;
            if (iy < 0 || iy >= s->h)
              continue;
            gint64 base = (iz * s->h + iy) * s->w;
            const float *row = plane + base;
            for (gint64 kx = 0; kx < s->kw; kx++) {
              gint64 p0 = x * sw + kx * s->dw - s->pl;
              __mmask16 ok;
              __m512 v = ir_k_load_row16 (row, p0, sw, s->w,
                  inside && base + p0 + span <= plane_len, m, &ok);
              if (!ok)
                continue;
              if (with_idx) {
                __m512i pos = _mm512_add_epi32 (_mm512_set1_epi32 ((gint32) (base + p0)), step);
                __mmask16 gt = ok & _mm512_cmp_ps_mask (v, bv, _CMP_GT_OQ);
                bv = _mm512_mask_mov_ps (bv, gt, v);
                bi = _mm512_mask_mov_epi32 (bi, gt, pos);
              } else {
                /* max (v, bv) returns bv when v is NaN: the same as v > bv. */
                bv = _mm512_mask_max_ps (bv, ok, v, bv);
              }
            }
          }
        }
        gint64 o = (od * s->oh + oy) * s->ow + x;
        /* Lanes where nothing beat -inf: the first element decides. */
        __mmask16 stuck = m & (with_idx ? _mm512_cmpeq_epi32_mask (bi, _mm512_set1_epi32 (-1))
            : _mm512_cmp_ps_mask (bv, lowest, _CMP_EQ_OQ));
        _mm512_mask_storeu_ps (out + o, m, bv);
        gint32 fix[16];
        _mm512_storeu_si512 (fix, bi);
        for (gint l = 0; stuck && l < n; l++) {
          if (!(stuck & (1u << l)))
            continue;
          gint32 f = first_in_window (s, od, oy, x + l);
          fix[l] = MAX (f, 0);
          out[o + l] = f >= 0 ? plane[f] : -INFINITY;
        }
        if (!with_idx)
          continue;
        bi = _mm512_add_epi32 (_mm512_loadu_si512 (fix), _mm512_set1_epi32 ((gint32) shift));
        if (s->index_type == M2I_ET_I32) {
          _mm512_mask_storeu_epi32 ((gint32 *) ind + o, m, bi);
        } else {
          gint64 *d = (gint64 *) ind + o;
          _mm512_mask_storeu_epi64 (d, (__mmask8) m,
              _mm512_cvtepi32_epi64 (_mm512_castsi512_si256 (bi)));
          _mm512_mask_storeu_epi64 (d + 8, (__mmask8) (m >> 8),
              _mm512_cvtepi32_epi64 (_mm512_extracti64x4_epi64 (bi, 1)));
        }
      }
}

__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))
static void
max_plane_f32_avx512 (const PoolState *s, const float *plane, float *out, guint8 *ind,
    gint64 shift)
{
  /* Strides 1 and 2 as constants: the loads' branches fold away. */
  if (ind && s->sw == 2)
    max_plane_avx512 (s, plane, out, ind, shift, TRUE, 2);
  else if (ind)
    max_plane_avx512 (s, plane, out, ind, shift, TRUE, s->sw);
  else if (s->sw == 2)
    max_plane_avx512 (s, plane, out, NULL, 0, FALSE, 2);
  else if (s->sw == 1)
    max_plane_avx512 (s, plane, out, NULL, 0, FALSE, 1);
  else
    max_plane_avx512 (s, plane, out, NULL, 0, FALSE, s->sw);
}

/* A 2-D f32 MaxPool without indices, separably, in registers: for 16
 * outputs of a row, the maxima down the window's rows of the input columns
 * they read (colmax16: one load and one maximum per row and 16 columns),
 * then the maxima across the window's columns, by permutes of those
 * column maxima: stride 1 takes 16 + kw - 1 columns (two vectors, kw ≤ 16),
 * stride 2 takes 33 (its even and odd columns, and the even ones shifted
 * by one, kw ≤ 3). About 2 + kw/sw operations per input element instead
 * of kh·kw per output element, and no round trip through memory. Other
 * strides, dilated columns and wider windows take max_plane_avx512.
 *
 * Every maximum is max (v, best) with best starting at -inf, which
 * ignores NaN as "v > best" does; lanes left at -inf (windows of only
 * -inf, NaN or pads) take the window's first element, as a scan would.
 * The maxima are taken in another order than the scan's, which can only
 * matter for the sign of a zero. */
/* The maxima down n rows (pitch apart) of the 16 input columns from c on,
 * lanes outside @m (columns outside the row) -inf; a masked load does not
 * touch them. Each maximum's second operand is what it returns for a NaN,
 * so it must never be NaN itself: the chain starts from -inf. */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
__m512
colmax16 (const float *r0, gint64 pitch, gint64 n, gint64 c, __mmask16 m)
{
  const __m512 lowest = _mm512_set1_ps (-INFINITY);
  __m512 v = lowest;
  for (gint64 r = 0; r < n; r++)
    v = _mm512_max_ps (_mm512_mask_loadu_ps (lowest, m, r0 + r * pitch + c), v);
  return v;
}

/* Two output rows' column maxima at once, for 3-row windows at row
 * stride sh = 1 or 2 (dh = 1): the rows both windows read are loaded and
 * compared once (rows 1 and 2 at stride 1, row 2 at stride 2), so a pair
 * of output rows takes 4 or 5 loads per 16 columns instead of 6. As in
 * colmax16 (), each maximum's second operand is never NaN. */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
void
colmax16_pair (const float *r0, gint64 w, gint64 sh, gint64 c, __mmask16 m, __m512 *v0,
    __m512 *v1)
{
  const __m512 lowest = _mm512_set1_ps (-INFINITY);
#define ROW(r) _mm512_mask_loadu_ps (lowest, m, r0 + (r) * w + c)
  if (sh == 1) {
    __m512 shared = _mm512_max_ps (ROW (2), _mm512_max_ps (ROW (1), lowest));
    *v0 = _mm512_max_ps (ROW (0), shared);
    *v1 = _mm512_max_ps (ROW (3), shared);
  } else {
    __m512 shared = _mm512_max_ps (ROW (2), lowest);
    *v0 = _mm512_max_ps (ROW (0), _mm512_max_ps (ROW (1), shared));
    *v1 = _mm512_max_ps (ROW (4), _mm512_max_ps (ROW (3), shared));
  }
#undef ROW
}

/* 16 outputs from the column maxima of the input columns they read: a
 * (columns c on) and next (c + 16 on) at stride 1; a, b (c + 16 on) and
 * next (c + 32 on) at stride 2. */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
__m512
max_across (__m512 a, __m512 b, __m512 next, gint64 sw, gint64 kw)
{
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512 best;
  if (sw == 1) {
    best = a;
    /* columns c + kx .. c + kx + 15: a shifted by kx lanes, the first
     * kx lanes of next after it */
    if (kw > 1)
      best = _mm512_max_ps (_mm512_castsi512_ps (_mm512_alignr_epi32 (
                  _mm512_castps_si512 (next), _mm512_castps_si512 (a), 1)), best);
    if (kw > 2)
      best = _mm512_max_ps (_mm512_castsi512_ps (_mm512_alignr_epi32 (
                  _mm512_castps_si512 (next), _mm512_castps_si512 (a), 2)), best);
    for (gint64 kx = 3; kx < kw; kx++)
      best = _mm512_max_ps (_mm512_permutex2var_ps (a,
              _mm512_add_epi32 (lane, _mm512_set1_epi32 ((gint32) kx)), next), best);
  } else {
    const __m512i even = _mm512_add_epi32 (lane, lane), odd = _mm512_add_epi32 (even,
        _mm512_set1_epi32 (1));
    __m512 e = _mm512_permutex2var_ps (a, even, b);
    best = e;
    if (kw > 1)
      best = _mm512_max_ps (_mm512_permutex2var_ps (a, odd, b), best);
    if (kw > 2)               /* columns c + 2, c + 4, ..., c + 32 */
      best = _mm512_max_ps (_mm512_castsi512_ps (_mm512_alignr_epi32 (
                  _mm512_castps_si512 (next), _mm512_castps_si512 (e), 1)), best);
  }
  return best;
}

/* Output row oy, already stored at o: the outputs left at -inf (windows
 * of only -inf, NaN or pads) take the window's first element, as a scan
 * would. */
static void
fix_stuck_row (const PoolState *s, const float *plane, gint64 oy, float *o)
{
  for (gint64 x = 0; x < s->ow; x++) {
    if (o[x] != -INFINITY)
      continue;
    gint32 f = first_in_window (s, 0, oy, x);
    o[x] = f >= 0 ? plane[f] : -INFINITY;
  }
}

/* One output row from the window's n rows at r0: 16 outputs at a time,
 * input columns c = 16·sw·i − pl on, with the masks of s->sep_masks
 * (the same for every row of every plane). */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
void
max_row_sep (const PoolState *s, const float *plane, const float *r0, gint64 pitch, gint64 n,
    gint64 oy, float *o, gint64 sw, gint64 kw)
{
  const __m512 lowest = _mm512_set1_ps (-INFINITY);
  const guint16 *mk = s->sep_masks;
  gint64 c = -s->pl, ow = s->ow;
  __mmask16 stuck = 0;
  /* a: the column maxima from c on, carried over from the previous 16
   * outputs */
  __m512 a = colmax16 (r0, pitch, n, c, mk[0]);
  for (gint64 x = 0; x < ow; x += 16, c += 16 * sw, mk += 4) {
    __m512 b = sw == 2 ? colmax16 (r0, pitch, n, c + 16, mk[1]) : a;
    __m512 next = colmax16 (r0, pitch, n, c + 16 * sw, mk[sw]);
    __m512 best = max_across (a, b, next, sw, kw);
    a = next;
    _mm512_mask_storeu_ps (o + x, mk[3], best);
    stuck |= _mm512_mask_cmp_ps_mask (mk[3], best, lowest, _CMP_EQ_OQ);
  }
  if (stuck)
    fix_stuck_row (s, plane, oy, o);
}

/* Output rows oy and oy + 1 of 3-row windows at row stride sh (1 or 2)
 * that lie inside the input from r0 on (rows w apart): max_row_sep () for
 * both, with colmax16_pair (). */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
void
max_rows2_sep (const PoolState *s, const float *plane, const float *r0, gint64 sh, gint64 oy,
    float *o, gint64 sw, gint64 kw)
{
  const __m512 lowest = _mm512_set1_ps (-INFINITY);
  const guint16 *mk = s->sep_masks;
  gint64 c = -s->pl, ow = s->ow, w = s->w;
  __mmask16 stuck = 0;
  __m512 a0, a1;
  colmax16_pair (r0, w, sh, c, mk[0], &a0, &a1);
  for (gint64 x = 0; x < ow; x += 16, c += 16 * sw, mk += 4) {
    __m512 b0 = a0, b1 = a1, n0, n1;
    if (sw == 2)
      colmax16_pair (r0, w, sh, c + 16, mk[1], &b0, &b1);
    colmax16_pair (r0, w, sh, c + 16 * sw, mk[sw], &n0, &n1);
    __m512 best0 = max_across (a0, b0, n0, sw, kw), best1 = max_across (a1, b1, n1, sw, kw);
    a0 = n0;
    a1 = n1;
    _mm512_mask_storeu_ps (o + x, mk[3], best0);
    _mm512_mask_storeu_ps (o + ow + x, mk[3], best1);
    stuck |= _mm512_mask_cmp_ps_mask (mk[3], best0, lowest, _CMP_EQ_OQ) |
        _mm512_mask_cmp_ps_mask (mk[3], best1, lowest, _CMP_EQ_OQ);
  }
  if (stuck) {
    fix_stuck_row (s, plane, oy, o);
    fix_stuck_row (s, plane, oy + 1, o + ow);
  }
}

static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))
void
max_plane_sep_sw (const PoolState *s, const float *plane, float *out, gint64 sw, gint64 kh,
    gint64 kw)
{
  gint64 pitch = s->dh * s->w;
  /* 3-row windows at row stride 1 or 2 go two output rows at a time
   * where both windows lie inside the input */
  gboolean pairs = kh == 3 && s->dh == 1 && (s->sh == 1 || s->sh == 2);
  for (gint64 oy = 0; oy < s->oh; oy++) {
    /* The window's rows inside the input: ky in [ky0, ky0 + n), equally
     * spaced, so one pointer and the pitch reach them all. */
    gint64 iy0 = oy * s->sh - s->pt, ky0 = 0, n = 0;
    if (pairs && oy + 1 < s->oh && iy0 >= 0 && iy0 + s->sh + 2 < s->h) {
      const float *r0 = plane + iy0 * s->w;
      if (s->sh == 1)
        max_rows2_sep (s, plane, r0, 1, oy, out + oy * s->ow, sw, kw);
      else
        max_rows2_sep (s, plane, r0, 2, oy, out + oy * s->ow, sw, kw);
      oy++;
      continue;
    }
    for (gint64 ky = 0; ky < kh; ky++) {
      gint64 iy = iy0 + ky * s->dh;
      if (iy >= 0 && iy < s->h && n++ == 0)
        ky0 = ky;
    }
    const float *r0 = plane + (iy0 + ky0 * s->dh) * s->w;
    /* whole windows (nearly every row) with the row count a constant */
    if (n == kh)
      max_row_sep (s, plane, r0, pitch, kh, oy, out + oy * s->ow, sw, kw);
    else
      max_row_sep (s, plane, r0, pitch, n, oy, out + oy * s->ow, sw, kw);
  }
}

__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))
static void
max_plane_sep (const PoolState *s, const float *plane, float *out)
{
  /* The common 3×3 and 2×2 windows with constant sizes: their loops
   * unrolled. */
  if (s->sw == 2 && s->kh == 3 && s->kw == 3)
    max_plane_sep_sw (s, plane, out, 2, 3, 3);
  else if (s->sw == 2 && s->kh == 2 && s->kw == 2)
    max_plane_sep_sw (s, plane, out, 2, 2, 2);
  else if (s->sw == 2)
    max_plane_sep_sw (s, plane, out, 2, s->kh, s->kw);
  else if (s->kh == 3 && s->kw == 3)
    max_plane_sep_sw (s, plane, out, 1, 3, 3);
  else
    max_plane_sep_sw (s, plane, out, 1, s->kh, s->kw);
}
#endif

/* ---- AvgPool rows ------------------------------------------------------ */

M2I_K_INLINE void
sum_row_body (const float *row, gint64 off, gint64 sw, gint64 lo, gint64 hi, float *acc)
{
  for (gint64 x = lo; x <= hi; x++)
    acc[x] += row[x * sw + off];
}
M2I_K_SIMD_CLONES (sum_row, (const float *row, gint64 off, gint64 sw, gint64 lo,
        gint64 hi, float *acc), (row, off, sw, lo, hi, acc))

/* Number of taps along one axis that land inside [0, size). */
static inline gint64
taps_inside (gint64 start, gint64 k, gint64 size)
{
  return MAX (0, MIN (start + k, size) - MAX (start, 0));
}

static void
avg_output_row (const PoolState *s, const float *plane, gint64 od, gint64 oy, float *out)
{
  memset (out, 0, s->ow * sizeof (float));
  for (gint64 kz = 0; kz < s->kd; kz++) {
    gint64 iz = od * s->sd - s->pd + kz;
    if (iz < 0 || iz >= s->d)
      continue;
    for (gint64 ky = 0; ky < s->kh; ky++) {
      gint64 iy = oy * s->sh - s->pt + ky;
      if (iy < 0 || iy >= s->h)
        continue;
      const float *row = plane + (iz * s->h + iy) * s->w;
      for (gint64 kx = 0; kx < s->kw; kx++) {
        sum_row (row, kx - s->pl, s->sw, s->col_lo[kx], s->col_hi[kx], out);
      }
    }
  }
  gint64 rows = taps_inside (od * s->sd - s->pd, s->kd, s->d) *
      taps_inside (oy * s->sh - s->pt, s->kh, s->h);
  for (gint64 x = 0; x < s->ow; x++) {
    gint64 count = s->pads_in_avg ? s->kd * s->kh * s->kw
        : rows * taps_inside (x * s->sw - s->pl, s->kw, s->w);
    out[x] = count ? out[x] / (float) count : 0.0f;
  }
}

/* A 2-D plane whose windows all lie inside it (no pads, or pads no window
 * reaches): every output is its kh·kw taps, summed in avg_output_row ()'s
 * order (rows, then columns, from 0), divided by kh·kw — the same float
 * operations, without that function's per-row calls and per-column
 * counts (person-reidentification-retail's 2×2 stride-2 AvgPool layers
 * took 13 times ONNX Runtime's time through it). */
M2I_K_INLINE void
avg_plane_full_body (const PoolState *s, const float *plane, float *out)
{
  float count = (float) (s->kh * s->kw);
  for (gint64 oy = 0; oy < s->oh; oy++) {
    const float *r0 = plane + oy * s->sh * s->w;
    float *o = out + oy * s->ow;
    if (s->kh == 2 && s->kw == 2 && s->sw == 2) {
      const float *r1 = r0 + s->w;
      for (gint64 x = 0; x < s->ow; x++)
        o[x] = (((0.0f + r0[2 * x]) + r0[2 * x + 1]) + r1[2 * x]) + r1[2 * x + 1];
    } else {
      for (gint64 x = 0; x < s->ow; x++)
        o[x] = 0.0f;
      for (gint64 ky = 0; ky < s->kh; ky++)
        for (gint64 kx = 0; kx < s->kw; kx++) {
          const float *r = r0 + ky * s->w + kx;
          for (gint64 x = 0; x < s->ow; x++)
            o[x] += r[x * s->sw];
        }
    }
    for (gint64 x = 0; x < s->ow; x++)
      o[x] = o[x] / count;
  }
}
M2I_K_SIMD_CLONES (avg_plane_full, (const PoolState *s, const float *plane, float *out),
    (s, plane, out))

#if defined(__x86_64__) && defined(__GNUC__)
/* avg_plane_full ()'s 2×2 stride-2 windows, 16 outputs a step: the even
 * and odd columns of the two rows by permutes of two loads each, added in
 * that function's order and divided by 4 — the same float operations. The
 * compiled loop above took a load per input (person-reidentification's
 * two AvgPool layers: 46 µs, ONNX Runtime 11). */
__attribute__ ((target ("avx512f")))
static void
avg_plane_2x2s2_avx512 (const PoolState *s, const float *plane, float *out)
{
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i even = _mm512_add_epi32 (lane, lane), odd = _mm512_add_epi32 (even,
      _mm512_set1_epi32 (1));
  const __m512 count = _mm512_set1_ps (4.0f), zero = _mm512_setzero_ps ();
  for (gint64 oy = 0; oy < s->oh; oy++) {
    const float *r0 = plane + oy * s->sh * s->w, *r1 = r0 + s->w;
    float *o = out + oy * s->ow;
    for (gint64 x = 0; x < s->ow; x += 16) {
      /* outputs x .. x + n - 1 read input columns 2x .. 2x + 2n - 1 */
      gint64 n = MIN (16, s->ow - x);
      __mmask16 lo = (__mmask16) (n >= 8 ? 0xffff : (1u << (2 * n)) - 1);
      __mmask16 hi = (__mmask16) (n > 8 ? (1u << (2 * n - 16)) - 1 : 0);
      __m512 a0 = _mm512_maskz_loadu_ps (lo, r0 + 2 * x), a1 = _mm512_maskz_loadu_ps (hi,
          r0 + 2 * x + 16);
      __m512 b0 = _mm512_maskz_loadu_ps (lo, r1 + 2 * x), b1 = _mm512_maskz_loadu_ps (hi,
          r1 + 2 * x + 16);
      __m512 sum = _mm512_add_ps (zero, _mm512_permutex2var_ps (a0, even, a1));
      sum = _mm512_add_ps (sum, _mm512_permutex2var_ps (a0, odd, a1));
      sum = _mm512_add_ps (sum, _mm512_permutex2var_ps (b0, even, b1));
      sum = _mm512_add_ps (sum, _mm512_permutex2var_ps (b0, odd, b1));
      _mm512_mask_storeu_ps (o + x, (__mmask16) ((1u << n) - 1), _mm512_div_ps (sum, count));
    }
  }
}
#endif

/* ---- Driver ------------------------------------------------------------ */

typedef struct {
  const PoolState *s;
  const guint8 *in;
  guint8 *out, *indices;
  guint8 *scratch;                     /* per slice: ow values + ow gint32 */
} PoolJob;

static gsize
pool_scratch_per_slice (const PoolState *s)
{
  gsize row = s->rows ? ir_pool_rows_scratch (&s->rows_geom) * sizeof (float) : 0;
  return m2i_align_up (MAX ((gsize) s->ow * (8 + 4), row), 64);
}

static void
pool_slice (gint begin, gint end, gint slice, gpointer data)
{
  const PoolJob *j = data;
  const PoolState *s = j->s;
  gsize es = m2i_element_type_size (s->type);
  gint64 in_plane = s->d * s->h * s->w, out_plane = s->od * s->oh * s->ow;
  guint8 *best = s->is_max ? j->scratch + slice * pool_scratch_per_slice (s) : NULL;
  gint32 *idx = s->is_max ? (gint32 *) (best + s->ow * 8) : NULL;
  for (gint p = begin; p < end; p++) {
    const guint8 *plane = j->in + p * in_plane * es;
    /* MaxPool-8 indices are counted from `axis` on. */
    gint64 shift = s->axis == 0 ? p * in_plane : s->axis == 1 ? (p % s->c) * in_plane : 0;
    if (s->avg_full) {
#if defined(__x86_64__) && defined(__GNUC__)
      if (s->kh == 2 && s->kw == 2 && s->sw == 2 && (m2i_cpu_flags () & M2I_CPU_AVX512F)) {
        avg_plane_2x2s2_avx512 (s, (const float *) plane, (float *) j->out + p * out_plane);
        continue;
      }
#endif
      avg_plane_full (s, (const float *) plane, (float *) j->out + p * out_plane);
      continue;
    }
    if (s->rows && !j->indices) {
      ir_pool_max_plane (&s->rows_geom, (const float *) plane, (float *) j->out + p * out_plane,
          (float *) best);
      continue;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (s->separable && !j->indices) {
      max_plane_sep (s, (const float *) plane, (float *) j->out + p * out_plane);
      continue;
    }
    if (s->is_max && s->type == M2I_ET_F32 && (m2i_cpu_flags () & M2I_CPU_AVX512F) &&
        shift + in_plane <= G_MAXINT32) {
      max_plane_f32_avx512 (s, (const float *) plane, (float *) j->out + p * out_plane,
          j->indices ? j->indices + p * out_plane *
              m2i_element_type_size (s->index_type) : NULL, shift);
      continue;
    }
#endif
    for (gint64 od = 0; od < s->od; od++)
      for (gint64 oy = 0; oy < s->oh; oy++) {
        gint64 o = p * out_plane + (od * s->oh + oy) * s->ow;
        guint8 *dst = j->out + o * es;
        if (!s->is_max) {
          avg_output_row (s, (const float *) plane, od, oy, (float *) dst);
          continue;
        }
        switch (s->type) {
          case M2I_ET_F32:
            max_output_row_f32 (s, (const float *) plane, od, oy, (float *) best, idx);
            break;
          case M2I_ET_I32:
            max_output_row_gint32 (s, (const gint32 *) plane, od, oy, (gint32 *) best, idx);
            break;
          case M2I_ET_I64:
            max_output_row_gint64 (s, (const gint64 *) plane, od, oy, (gint64 *) best, idx);
            break;
          default:
            max_output_row_u8 (s, plane, od, oy, best, idx);
            break;
        }
        memcpy (dst, best, s->ow * es);
        if (!j->indices)
          continue;
        if (s->index_type == M2I_ET_I32) {
          gint32 *ind = (gint32 *) j->indices + o;
          for (gint64 x = 0; x < s->ow; x++)
            ind[x] = (gint32) (idx[x] + shift);
        } else {
          gint64 *ind = (gint64 *) j->indices + o;
          for (gint64 x = 0; x < s->ow; x++)
            ind[x] = idx[x] + shift;
        }
      }
  }
}

static gboolean
pool_infer (M2iOpContext *ctx, gboolean is_max, gboolean v8, GError **error)
{
  static const M2iElementType max_types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64, M2I_ET_U8 };
  if (!ir_k_check_arity (ctx, 1, 1, 1, v8 ? 2 : 1, error) ||
      !ir_k_check_type (ctx, 0, max_types, is_max ? G_N_ELEMENTS (max_types) : 1, error) ||
      !ir_k_check_rank (ctx, 0, 3, 5, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint spatial = in->rank - 2;
  M2iWindow win;
  if (!ir_k_window_attrs (ctx, spatial, v8, "kernel", &win, error))
    return FALSE;
  gint64 in_sp[3], out_sp[3];
  for (gint i = 0; i < spatial; i++)
    in_sp[i] = in->dims[2 + i];
  if (!ir_k_window_output (ctx, &win, in_sp, out_sp, error))
    return FALSE;
  if (m2i_shape_numel (in) / MAX (in->dims[0] * in->dims[1], 1) > G_MAXINT32) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %s: spatial planes over 2^31 elements are not supported",
        ir_k_shape_str (in, 0));
    return FALSE;
  }

  PoolState *s = g_new0 (PoolState, 1);
  s->is_max = is_max;
  s->type = ctx->inputs[0].type;
  s->n_outputs = ctx->n_outputs;
  s->n = in->dims[0];
  s->c = in->dims[1];
  /* Spatial axes right-aligned into (d, h, w); missing ones are units. */
  gint64 *dims[3][6] = {
    { &s->d, &s->od, &s->kd, &s->sd, &s->dd, &s->pd },
    { &s->h, &s->oh, &s->kh, &s->sh, &s->dh, &s->pt },
    { &s->w, &s->ow, &s->kw, &s->sw, &s->dw, &s->pl },
  };
  for (gint a = 0; a < 3; a++) {
    gint i = a - (3 - spatial);
    *dims[a][0] = i >= 0 ? in_sp[i] : 1;
    *dims[a][1] = i >= 0 ? out_sp[i] : 1;
    *dims[a][2] = i >= 0 ? win.kernel[i] : 1;
    *dims[a][3] = i >= 0 ? win.strides[i] : 1;
    *dims[a][4] = i >= 0 ? win.dilations[i] : 1;
    *dims[a][5] = i >= 0 ? win.pads_begin[i] : 0;
  }
  gboolean any_pad = FALSE;
  for (gint i = 0; i < spatial; i++)
    any_pad |= win.pads_begin[i] != 0 || win.pads_end[i] != 0;

  if (!is_max) {
    gboolean exclude;
    if (!m2i_ir_node_attr_bool (ctx->node, "exclude-pad", FALSE, &exclude, error)) {
      pool_state_free (s);
      return FALSE;
    }
    s->exclude_pad = exclude;
    s->pads_in_avg = !exclude && any_pad;
  }
  if (v8) {
    static const char *const itypes[] = { "i64", "i32", NULL };
    gint it;
    gint64 axis;
    if (!m2i_ir_node_attr_enum (ctx->node, "index_element_type", "i64", itypes, &it, error) ||
        !m2i_ir_node_attr_int (ctx->node, "axis", 0, &axis, error) ||
        !ir_k_axis (ctx, axis, in->rank, TRUE, "axis", &s->axis, error)) {
      pool_state_free (s);
      return FALSE;
    }
    s->index_type = it == 0 ? M2I_ET_I64 : M2I_ET_I32;
    if (it == 1 && s->axis == 0 && m2i_shape_numel (in) > G_MAXINT32) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "indices of input %s do not fit index_element_type i32", ir_k_shape_str (in, 0));
      pool_state_free (s);
      return FALSE;
    }
  }
  s->col_lo = g_new (gint64, s->kw);
  s->col_hi = g_new (gint64, s->kw);
  for (gint64 kx = 0; kx < s->kw; kx++) {
    gint64 off = kx * s->dw - s->pl;
    s->col_lo[kx] = off >= 0 ? 0 : (-off + s->sw - 1) / s->sw;
    s->col_hi[kx] = MIN (s->w - 1 - off < 0 ? -1 : (s->w - 1 - off) / s->sw, s->ow - 1);
  }
  s->avg_full = !is_max && s->type == M2I_ET_F32 && s->d == 1 && s->kd == 1 && s->pd == 0 &&
      s->pt == 0 && s->pl == 0 && (s->oh - 1) * s->sh + s->kh <= s->h &&
      (s->ow - 1) * s->sw + s->kw <= s->w;
#if defined(__x86_64__) && defined(__GNUC__)
  /* The separable path (max_plane_sep): 2-D f32 max pooling, columns
   * not dilated, stride 1 with kw ≤ 16 or stride 2 with kw ≤ 3; used
   * when no indices are asked for. */
  s->separable = is_max && s->type == M2I_ET_F32 && s->d == 1 && s->kd == 1 && s->pd == 0 &&
      s->dw == 1 && ((s->sw == 1 && s->kw <= 16) || (s->sw == 2 && s->kw <= 3)) &&
      (m2i_cpu_flags () & M2I_CPU_AVX512F);
  if (s->separable) {
    gint64 chunks = (s->ow + 15) / 16;
    s->sep_masks = g_new (guint16, 4 * chunks);
    for (gint64 i = 0; i < chunks; i++) {
      for (gint j = 0; j < 3; j++) {
        gint64 c = 16 * s->sw * i - s->pl + 16 * j;
        guint32 lo = (guint32) CLAMP (-c, 0, 16), hi = (guint32) CLAMP (s->w - c, 0, 16);
        s->sep_masks[4 * i + j] = hi > lo ? (guint16) (((1u << hi) - 1) & ~((1u << lo) - 1)) : 0;
      }
      s->sep_masks[4 * i + 3] = (guint16) ((1u << MIN (16, s->ow - 16 * i)) - 1);
    }
  }
#endif
  /* Without AVX-512, 2-D f32 max pooling without indices by rows
   * (pool-rows.h); the AVX-512 kernels above keep theirs. */
  s->rows = !s->separable && is_max && s->type == M2I_ET_F32 && s->d == 1 && s->kd == 1 &&
      s->pd == 0 && s->oh > 0 && s->ow > 0 && !(m2i_cpu_flags () & M2I_CPU_AVX512F);
  s->rows_geom = (IrPoolGeom) { s->h, s->w, s->oh, s->ow, s->kh, s->kw, s->sh, s->sw, s->dh,
    s->dw, s->pt, s->pl };
  s->slices = ir_k_threads (ctx);
  ctx->scratch_bytes = is_max ? s->slices * pool_scratch_per_slice (s) : 0;
  for (gint o = 0; o < ctx->n_outputs; o++) {
    ctx->outputs[o].type = o == 0 ? s->type : s->index_type;
    ctx->outputs[o].shape = *in;
    for (gint i = 0; i < spatial; i++)
      ctx->outputs[o].shape.dims[2 + i] = out_sp[i];
  }
  ctx->state = s;
  return TRUE;
}

static gboolean
pool_execute (M2iOpContext *ctx, GError **error)
{
  const PoolState *s = ctx->state;
  PoolJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data,
    /* A runtime may leave an output nobody reads without memory: then the
     * indices are not computed. */
    ctx->n_outputs > 1 ? ctx->outputs[1].data : NULL, ctx->scratch };
  gint planes = (gint) (s->n * s->c);
  gint64 work = s->n * s->c * s->od * s->oh * s->ow * s->kd * s->kh * s->kw;
  /* A window element costs about what 16 multiply-adds of a GEMM tile do
   * (a load and a compare against 16 lanes of FMA): so inside a team a
   * pooling of a few thousand outputs is split too (Fashion-MNIST's two,
   * 3 µs each), outside one only from ~60 000 elements, as before. */
  gint slices = MIN (ir_k_slices_for (ctx, work * 16), s->slices);
  ir_k_parallel_for (planes, slices, 1, pool_slice, &j);
  return TRUE;
}

static gboolean max1_infer (M2iOpContext *c, GError **e) { return pool_infer (c, TRUE, FALSE, e); }
static gboolean max8_infer (M2iOpContext *c, GError **e) { return pool_infer (c, TRUE, TRUE, e); }
static gboolean avg_infer (M2iOpContext *c, GError **e) { return pool_infer (c, FALSE, FALSE, e); }

static gboolean
max_infer (M2iOpContext *ctx, GError **error)
{
  /* MaxPool-8 adds dilations, indices, index_element_type and axis. */
  if (ir_k_op_version (ctx) < 8)
    return max1_infer (ctx, error);
  return max8_infer (ctx, error);
}

const M2iOpKernel ir_kernel_max_pool = {
  "MaxPool", "opset1 opset8 opset14", max_infer, pool_execute, pool_state_free,
};

const M2iOpKernel ir_kernel_avg_pool = {
  "AvgPool", "opset1 opset14", avg_infer, pool_execute, pool_state_free,
};
