/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Conversion between every pair of quantized / float element types.
 *
 * Every integer result is the exact value of
 *   (x_src - z_src) * s_src * 2^(n_dst - n_src) / s_dst
 * rounded once (half up or half to even), plus z_dst, saturated. The exact
 * value is a rational N * 2^E / D with integers N and D; it is evaluated in
 * 64-bit integers when the slice's bounds allow it, else in 128-bit ones.
 * Float destinations get the exact value rounded once to nearest even.
 */
#include "mli-private.h"

#include <base/m2i-cpu.h>
#include <base/m2i-fp16.h>
#include <math.h>

#ifndef __SIZEOF_INT128__
#error "mli-convert.c needs __int128 (gcc or clang on a 64-bit target)"
#endif

typedef __int128 i128;

/* The rounded quotient is clamped to ±2^40 before the zero point is added:
 * every container is at most 32 bits and zero points are 32-bit, so the
 * saturated result does not change, and the sum cannot overflow. */
#define Q_LIMIT ((gint64) 1 << 40)

static inline gboolean
type_is_float (M2iMliType t)
{
  return t == M2I_MLI_FP16 || t == M2I_MLI_FP32;
}

static void
container_range (M2iMliType t, gint64 *lo, gint64 *hi)
{
  switch (t) {
    case M2I_MLI_FX8: case M2I_MLI_SA8: *lo = G_MININT8; *hi = G_MAXINT8; break;
    case M2I_MLI_FX16: *lo = G_MININT16; *hi = G_MAXINT16; break;
    default: *lo = G_MININT32; *hi = G_MAXINT32; break;
  }
}

static inline gint64
load_int (const guint8 *p, M2iMliType t)
{
  switch (t) {
    case M2I_MLI_FX8: case M2I_MLI_SA8:
      return *(const gint8 *) p;
    case M2I_MLI_FX16: {
      gint16 v;
      memcpy (&v, p, sizeof v);
      return v;
    }
    default: {
      gint32 v;
      memcpy (&v, p, sizeof v);
      return v;
    }
  }
}

static inline void
store_int (guint8 *p, M2iMliType t, gint64 v)
{
  switch (t) {
    case M2I_MLI_FX8: case M2I_MLI_SA8:
      *(gint8 *) p = (gint8) v;
      break;
    case M2I_MLI_FX16: {
      gint16 x = (gint16) v;
      memcpy (p, &x, sizeof x);
      break;
    }
    default: {
      gint32 x = (gint32) v;
      memcpy (p, &x, sizeof x);
      break;
    }
  }
}

static inline float
load_float (const guint8 *p, M2iMliType t)
{
  if (t == M2I_MLI_FP16) {
    guint16 h;
    memcpy (&h, p, sizeof h);
    return m2i_f16_to_f32 (h);
  }
  float f;
  memcpy (&f, p, sizeof f);
  return f;
}

/* Rounds @v (finite or not) to the nearest binary16, ties to even, with no
 * intermediate rounding to fp32. */
static guint16
f64_to_f16 (double v)
{
  guint16 sign = signbit (v) ? 0x8000 : 0;
  if (isnan (v))
    return sign | 0x7e00;
  double a = fabs (v);
  if (a >= 65520.0)               /* halfway to 2^16 and above: ties to even = inf */
    return sign | 0x7c00;
  if (a < 0x1p-14)                /* subnormal grid 2^-24; 1024 lands on the smallest normal */
    return sign | (guint16) rint (a * 0x1p24);
  int ex;
  double f = frexp (a, &ex);      /* a = f * 2^ex, f in [0.5, 1) */
  double q = rint (f * 2048.0);   /* 11 significant bits, in [1024, 2048] */
  if (q == 2048.0) {
    q = 1024.0;
    ex++;
  }
  return sign | (guint16) (((guint) (ex - 1 + 15) << 10) | ((guint) q - 1024u));
}

static inline void
store_float (guint8 *p, M2iMliType t, double v)
{
  if (t == M2I_MLI_FP16) {
    guint16 h = f64_to_f16 (v);
    memcpy (p, &h, sizeof h);
  } else {
    float f = (float) v;
    memcpy (p, &f, sizeof f);
  }
}

/* ---- exact rounding of rationals ------------------------------------ */

static inline gboolean
round_up_from (gint64 twice_rem, gint64 den, gint64 q, M2iMliRound mode)
{
  return twice_rem > den
      || (twice_rem == den && (mode == M2I_MLI_ROUND_HALF_UP || (q & 1)));
}

gint64
mli_div_round (gint64 num, gint64 den, M2iMliRound mode)
{
  if (den == 1)
    return num;
  gint64 q = num / den, r = num % den;
  if (r < 0) {
    q--;
    r += den;
  }
  return round_up_from (2 * r, den, q, mode) ? q + 1 : q;
}

static int
bitlen128 (i128 v)          /* v >= 0 */
{
  unsigned __int128 u = (unsigned __int128) v;
  guint64 hi = (guint64) (u >> 64), lo = (guint64) u;
  if (hi)
    return 128 - __builtin_clzll (hi);
  return lo ? 64 - __builtin_clzll (lo) : 0;
}

static inline gint64
clamp_q (i128 q)
{
  return q > Q_LIMIT ? Q_LIMIT : q < -Q_LIMIT ? -Q_LIMIT : (gint64) q;
}

/* round(n * 2^e / d) clamped to ±Q_LIMIT; |n| < 2^66, 1 <= d < 2^63. */
static gint64
round_scaled (i128 n, gint e, i128 d, M2iMliRound mode)
{
  if (n == 0)
    return 0;
  int nb = bitlen128 (n < 0 ? -n : n);
  if (e > 0) {
    if (nb + e > 120)           /* |n * 2^e / d| >= 2^(119-63): saturated */
      return n < 0 ? -Q_LIMIT : Q_LIMIT;
    n *= (i128) 1 << e;
  } else if (e < 0) {
    if (bitlen128 (d) - e > 120)  /* |n * 2^e / d| < 2^66 / 2^119: rounds to 0 */
      return 0;
    d <<= -e;
  }
  i128 q = n / d, r = n % d;
  if (r < 0) {
    q--;
    r += d;
  }
  i128 twice = 2 * r;
  if (twice > d || (twice == d && (mode == M2I_MLI_ROUND_HALF_UP || (q & 1))))
    q++;
  return clamp_q (q);
}

/* ---- per-slice plans ------------------------------------------------ */

typedef enum { INT_TO_INT, INT_TO_FLOAT, FLOAT_TO_INT, FLOAT_TO_FLOAT } Kind;

typedef struct {
  Kind kind;
  M2iMliType st, dt;
  M2iMliRound round;
  M2iMliSliceQuant sq, dq;
  gint64 lo, hi;            /* destination container range */
  /* INT_TO_INT in 64 bits: q = round((x - zs) * mul / den) */
  gboolean fast;
  gint64 mul, den;
  /* power-of-two factors as doubles (exact) */
  double src_p2;            /* 2^-ns */
  double dst_p2;            /* 2^nd */
} Plan;

static void
plan_slice (Plan *p)
{
  gint64 slo, shi;
  container_range (p->st, &slo, &shi);
  container_range (p->dt, &p->lo, &p->hi);
  p->src_p2 = ldexp (1.0, -p->sq.shift);
  p->dst_p2 = ldexp (1.0, p->dq.shift);
  p->fast = FALSE;

  if (p->kind == INT_TO_INT) {
    gint64 vmax = MAX (shi - p->sq.zero, p->sq.zero - slo);    /* < 2^33 */
    gint e = p->dq.shift - p->sq.shift;
    gint64 lim = (gint64) 1 << 62;
    if (e >= 0 && e < 31) {
      p->mul = (gint64) p->sq.scale << e;                     /* < 2^62 */
      p->den = p->dq.scale;
      p->fast = p->mul <= lim / vmax;
    } else if (e < 0 && e > -31) {
      p->mul = p->sq.scale;
      p->den = (gint64) p->dq.scale << -e;
      p->fast = p->mul <= lim / vmax;
    }
  } else if (p->kind == FLOAT_TO_INT) {
    /* The double quotient decides halfway cases exactly when the divisor
     * is below 2^16 (docs/mli.md, "exactness"). */
    p->fast = p->dq.scale < (1 << 16);
  }
}

static inline gint64
saturate (gint64 q, gint64 zero, gint64 lo, gint64 hi)
{
  gint64 v = q + zero;
  return v < lo ? lo : v > hi ? hi : v;
}

/* Splits a float into m * 2^j with an integer m (exact). */
static void
decompose (float f, gint64 *m, gint *j)
{
  guint32 b = m2i_f32_bits (f);
  gint64 sign = (b >> 31) ? -1 : 1;
  gint ex = (b >> 23) & 0xff;
  gint64 mant = b & 0x7fffff;
  if (ex == 0) {
    *m = sign * mant;
    *j = -149;
  } else {
    *m = sign * (mant | 0x800000);
    *j = ex - 150;
  }
}

static inline gint64
float_to_int (const Plan *p, float f)
{
  if (isnan (f))
    return saturate (0, p->dq.zero, p->lo, p->hi);
  if (isinf (f))
    return f > 0 ? p->hi : p->lo;
  gint64 q;
  if (p->fast) {
    double t = (double) f * p->dst_p2 / (double) p->dq.scale;
    if (t >= (double) Q_LIMIT)
      q = Q_LIMIT;
    else if (t <= (double) -Q_LIMIT)
      q = -Q_LIMIT;
    else {
      double fl = floor (t);
      double diff = t - fl;     /* exact: |t| < 2^40 */
      q = (gint64) fl;
      if (diff > 0.5 || (diff == 0.5 && (p->round == M2I_MLI_ROUND_HALF_UP || (q & 1))))
        q++;
    }
  } else {
    gint64 m;
    gint j;
    decompose (f, &m, &j);
    q = round_scaled (m, j + p->dq.shift, p->dq.scale, p->round);
  }
  return saturate (q, p->dq.zero, p->lo, p->hi);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86_ROW 1

/* Four at a time with AVX2: the same double arithmetic as the scalar loop
 * (IEEE division and floor are exact operations per lane), so the results
 * are identical. Returns how many elements it converted; it stops before a
 * group holding a value that needs float_to_int's slow cases. */
__attribute__((target("avx2"))) static gint64
fp32_to_int8_avx2 (const Plan *p, const float *s, gint8 *d, gint64 n)
{
  const __m256d scale = _mm256_set1_pd (p->dst_p2), den = _mm256_set1_pd (p->dq.scale);
  const __m256d lim = _mm256_set1_pd (1e9), half = _mm256_set1_pd (0.5);
  const __m256d sign = _mm256_set1_pd (-0.0);
  const __m128i one = _mm_set1_epi32 (1), zero = _mm_set1_epi32 (p->dq.zero);
  const __m128i up = _mm_set1_epi32 (p->round == M2I_MLI_ROUND_HALF_UP ? -1 : 0);
  gint64 i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d t = _mm256_div_pd (_mm256_mul_pd (_mm256_cvtps_pd (_mm_loadu_ps (s + i)), scale), den);
    /* NaN compares false too */
    if (_mm256_movemask_pd (_mm256_cmp_pd (_mm256_andnot_pd (sign, t), lim, _CMP_LT_OQ)) != 0xf)
      break;
    __m256d fl = _mm256_floor_pd (t), diff = _mm256_sub_pd (t, fl);
    __m128i q = _mm256_cvttpd_epi32 (fl);
    __m128i gt = _mm256_castsi256_si128 (_mm256_permutevar8x32_epi32 (_mm256_castpd_si256 (
                _mm256_cmp_pd (diff, half, _CMP_GT_OQ)), _mm256_setr_epi32 (0, 2, 4, 6, 0, 0, 0, 0)));
    __m128i eq = _mm256_castsi256_si128 (_mm256_permutevar8x32_epi32 (_mm256_castpd_si256 (
                _mm256_cmp_pd (diff, half, _CMP_EQ_OQ)), _mm256_setr_epi32 (0, 2, 4, 6, 0, 0, 0, 0)));
    __m128i odd = _mm_cmpeq_epi32 (_mm_and_si128 (q, one), one);
    __m128i bump = _mm_or_si128 (gt, _mm_and_si128 (eq, _mm_or_si128 (up, odd)));
    q = _mm_add_epi32 (_mm_sub_epi32 (q, bump), zero);
    q = _mm_packs_epi32 (q, q);
    q = _mm_packs_epi16 (q, q);
    gint32 v = _mm_cvtsi128_si32 (q);
    memcpy (d + i, &v, sizeof v);
  }
  return i;
}
#endif

/* The device's input boundary (fp32 → sa8/fx8), kept branch-light: the
 * same arithmetic as float_to_int's fast path, which handles the rare
 * large, infinite or NaN values. */
static void
fp32_to_int8_row (const Plan *p, const guint8 *s, gint64 s_step, guint8 *d,
    gint64 d_step, gint64 n)
{
  const double scale = p->dst_p2, den = (double) p->dq.scale;
  const gint64 zero = p->dq.zero;
  const gboolean up = p->round == M2I_MLI_ROUND_HALF_UP;
#ifdef HAVE_X86_ROW
  while (s_step == 4 && d_step == 1 && n >= 4 && (m2i_cpu_flags () & M2I_CPU_AVX2)) {
    gint64 done = fp32_to_int8_avx2 (p, (const float *) s, (gint8 *) d, n);
    s += done * 4;
    d += done;
    n -= done;
    if (n == 0)
      return;
    /* one element the vector loop left to the scalar one */
    float f;
    memcpy (&f, s, sizeof f);
    *(gint8 *) d = (gint8) float_to_int (p, f);
    s += 4;
    d += 1;
    n -= 1;
  }
#endif
  for (gint64 i = 0; i < n; i++, s += s_step, d += d_step) {
    float f;
    memcpy (&f, s, sizeof f);
    double t = (double) f * scale / den;
    if (G_UNLIKELY (!(fabs (t) < 1e9))) {
      *(gint8 *) d = (gint8) float_to_int (p, f);
      continue;
    }
    gint64 q = (gint64) t;          /* truncation; floor() is a libm call on baseline x86-64 */
    q -= t < (double) q;
    double diff = t - (double) q;   /* exact: |t| < 1e9 */
    q += diff > 0.5 || (diff == 0.5 && (up || (q & 1)));
    q += zero;
    *(gint8 *) d = (gint8) (q < -128 ? -128 : q > 127 ? 127 : q);
  }
}

/* (x - zs) * ss * 2^-ns as a double that holds the exact value rounded to
 * odd at 53 bits, so that one more rounding (to fp32 or fp16) is correct. */
static inline double
int_to_double (const Plan *p, gint64 x)
{
  i128 n = (i128) (x - p->sq.zero) * p->sq.scale;
  i128 a = n < 0 ? -n : n;
  if (a < ((i128) 1 << 53))
    return (double) (gint64) n * p->src_p2;
  int k = bitlen128 (a) - 53;
  i128 m = a >> k;
  if (a & (((i128) 1 << k) - 1))
    m |= 1;                     /* sticky bit: round to odd */
  double d = ldexp ((double) (gint64) m, k) * p->src_p2;
  return n < 0 ? -d : d;
}

static void
convert_row (const Plan *p, const guint8 *s, gint64 s_step, guint8 *d,
    gint64 d_step, gint64 n)
{
  switch (p->kind) {
    case INT_TO_INT:
      if (p->fast) {
        for (gint64 i = 0; i < n; i++, s += s_step, d += d_step) {
          gint64 v = (load_int (s, p->st) - p->sq.zero) * p->mul;
          store_int (d, p->dt, saturate (mli_div_round (v, p->den, p->round),
                  p->dq.zero, p->lo, p->hi));
        }
      } else {
        for (gint64 i = 0; i < n; i++, s += s_step, d += d_step) {
          i128 v = (i128) (load_int (s, p->st) - p->sq.zero) * p->sq.scale;
          gint64 q = round_scaled (v, p->dq.shift - p->sq.shift, p->dq.scale, p->round);
          store_int (d, p->dt, saturate (q, p->dq.zero, p->lo, p->hi));
        }
      }
      break;
    case INT_TO_FLOAT:
      for (gint64 i = 0; i < n; i++, s += s_step, d += d_step)
        store_float (d, p->dt, int_to_double (p, load_int (s, p->st)));
      break;
    case FLOAT_TO_INT:
      if (p->fast && p->st == M2I_MLI_FP32 && m2i_mli_type_size (p->dt) == 1) {
        fp32_to_int8_row (p, s, s_step, d, d_step, n);
        break;
      }
      for (gint64 i = 0; i < n; i++, s += s_step, d += d_step)
        store_int (d, p->dt, float_to_int (p, load_float (s, p->st)));
      break;
    case FLOAT_TO_FLOAT:
      if (p->st == p->dt) {
        gsize es = m2i_mli_type_size (p->st);
        for (gint64 i = 0; i < n; i++, s += s_step, d += d_step)
          memmove (d, s, es);
      } else if (p->dt == M2I_MLI_FP16 && s_step == 4 && d_step == 2) {
        /* contiguous rows (containers differ, so the driver has ruled out
         * overlap): the bulk converters use F16C when present */
        m2i_f32_to_f16_n ((const float *) s, (m2i_f16 *) d, n);
      } else if (p->dt == M2I_MLI_FP32 && s_step == 2 && d_step == 4) {
        m2i_f16_to_f32_n ((const m2i_f16 *) s, (float *) d, n);
      } else if (p->dt == M2I_MLI_FP16) {
        for (gint64 i = 0; i < n; i++, s += s_step, d += d_step) {
          guint16 h = m2i_f32_to_f16 (load_float (s, p->st));
          memcpy (d, &h, sizeof h);
        }
      } else {
        for (gint64 i = 0; i < n; i++, s += s_step, d += d_step) {
          float f = load_float (s, p->st);
          memcpy (d, &f, sizeof f);
        }
      }
      break;
  }
}

/* An 8-bit source has 256 possible values: for a large slice, convert
 * them once (exactly, by convert_row) and look every element up. */
#define TABLE_MIN_ELEMENTS 2048

typedef struct {
  guint8 v[256 * 4];        /* destination containers, indexed by x + 128 */
  guint size;
} Table;

static void
table_build (const Plan *p, Table *t)
{
  gint8 all[256];
  for (int i = 0; i < 256; i++)
    all[i] = (gint8) (i - 128);
  t->size = m2i_mli_type_size (p->dt);
  convert_row (p, (const guint8 *) all, 1, t->v, t->size, 256);
}

static void
table_row (const Table *t, const guint8 *s, gint64 s_step, guint8 *d,
    gint64 d_step, gint64 n)
{
  switch (t->size) {
    case 1:
      for (gint64 i = 0; i < n; i++)
        d[i * d_step] = t->v[(guint8) (s[i * s_step] ^ 0x80)];
      break;
    case 2:
      for (gint64 i = 0; i < n; i++)
        memcpy (d + i * d_step, t->v + 2 * (guint8) (s[i * s_step] ^ 0x80), 2);
      break;
    default:
      for (gint64 i = 0; i < n; i++)
        memcpy (d + i * d_step, t->v + 4 * (guint8) (s[i * s_step] ^ 0x80), 4);
      break;
  }
}

/* ---- driver --------------------------------------------------------- */

static gint
sa_axis (const M2iMliTensor *t)
{
  return (t->type == M2I_MLI_SA8 || t->type == M2I_MLI_SA32) ? t->q.axis : -1;
}

M2iMliStatus
m2i_mli_convert (const M2iMliTensor *src, M2iMliTensor *dst, M2iMliRound round)
{
  M2iMliStatus st;
  if ((st = m2i_mli_tensor_check (src)) != M2I_MLI_OK)
    return st;
  if ((st = m2i_mli_tensor_check (dst)) != M2I_MLI_OK)
    return st;
  if (round != M2I_MLI_ROUND_HALF_UP && round != M2I_MLI_ROUND_HALF_EVEN)
    return M2I_MLI_BAD_CONFIG;
  if (src->rank != dst->rank)
    return M2I_MLI_SHAPE_MISMATCH;
  for (guint i = 0; i < src->rank; i++)
    if (src->shape[i] != dst->shape[i])
      return M2I_MLI_SHAPE_MISMATCH;
  gint sa = sa_axis (src), da = sa_axis (dst);
  if (sa >= 0 && da >= 0 && sa != da)
    return M2I_MLI_AXIS_MISMATCH;
  gint axis = MAX (sa, da);

  gint64 ss[M2I_MLI_MAX_RANK], ds[M2I_MLI_MAX_RANK];
  mli_effective_strides (src, ss);
  mli_effective_strides (dst, ds);
  guint ses = m2i_mli_type_size (src->type), des = m2i_mli_type_size (dst->type);

  /* Overlapping buffers are only allowed as an exact in-place pair. */
  const guint8 *s0 = src->data;
  guint8 *d0 = dst->data;
  gsize sspan = m2i_mli_tensor_span_bytes (src), dspan = m2i_mli_tensor_span_bytes (dst);
  if (s0 < d0 + dspan && d0 < s0 + sspan) {
    if (s0 != d0 || ses != des)
      return M2I_MLI_INCOMPATIBLE;
    for (guint i = 0; i < src->rank; i++)
      if (ss[i] != ds[i])
        return M2I_MLI_INCOMPATIBLE;
  }

  /* Loop dimensions: every one but the axis; the last is the row. */
  guint loop[M2I_MLI_MAX_RANK], nloop = 0;
  for (guint i = 0; i < src->rank; i++)
    if ((gint) i != axis)
      loop[nloop++] = i;
  gint64 row_n = 1, row_ss = 0, row_ds = 0;
  if (nloop > 0) {
    guint r = loop[--nloop];
    row_n = src->shape[r];
    row_ss = ss[r] * ses;
    row_ds = ds[r] * des;
  }
  guint32 n_slices = axis >= 0 ? src->shape[axis] : 1;

  Plan p;
  p.st = src->type;
  p.dt = dst->type;
  p.round = round;
  p.kind = type_is_float (p.st)
      ? (type_is_float (p.dt) ? FLOAT_TO_FLOAT : FLOAT_TO_INT)
      : (type_is_float (p.dt) ? INT_TO_FLOAT : INT_TO_INT);

  gboolean use_table = ses == 1
      && m2i_mli_count_elements (src, 0) / n_slices >= TABLE_MIN_ELEMENTS;
  Table table;
  for (guint32 a = 0; a < n_slices; a++) {
    mli_quant_at (src, a, &p.sq);
    mli_quant_at (dst, a, &p.dq);
    plan_slice (&p);
    if (use_table)
      table_build (&p, &table);
    gint64 soff = axis >= 0 ? a * ss[axis] * ses : 0;
    gint64 doff = axis >= 0 ? a * ds[axis] * des : 0;
    /* Odometer over the outer loop dimensions. */
    guint32 idx[M2I_MLI_MAX_RANK] = { 0 };
    for (;;) {
      if (use_table)
        table_row (&table, s0 + soff, row_ss, d0 + doff, row_ds, row_n);
      else
        convert_row (&p, s0 + soff, row_ss, d0 + doff, row_ds, row_n);
      gint k = (gint) nloop - 1;
      for (; k >= 0; k--) {
        guint dim = loop[k];
        soff += ss[dim] * ses;
        doff += ds[dim] * des;
        if (++idx[k] < src->shape[dim])
          break;
        soff -= (gint64) src->shape[dim] * ss[dim] * ses;
        doff -= (gint64) src->shape[dim] * ds[dim] * des;
        idx[k] = 0;
      }
      if (k < 0)
        break;
    }
  }
  return M2I_MLI_OK;
}
