/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-fp16.h — IEEE 754 binary16 conversions.
 *
 * Every fp32 → fp16 conversion in the project rounds to nearest, ties to
 * even, overflows to infinity and keeps NaN a (quiet) NaN, as F16C's
 * vcvtps2ph with imm 0 and OpenVINO's float16 do. fp16 → fp32 is exact.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <string.h>

G_BEGIN_DECLS

typedef guint16 m2i_f16;

static inline guint32
m2i_f32_bits (float f)
{
  guint32 u;
  memcpy (&u, &f, sizeof u);
  return u;
}

static inline float
m2i_f32_from_bits (guint32 u)
{
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
}

/* Rounds @f to the nearest binary16, ties to even. */
static inline m2i_f16
m2i_f32_to_f16 (float f)
{
  guint32 x = m2i_f32_bits (f);
  guint32 sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;

  if (x >= 0x7f800000u)                 /* inf or NaN */
    return (m2i_f16) (sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u)                 /* >= 65520: rounds to inf */
    return (m2i_f16) (sign | 0x7c00u);
  if (x < 0x38800000u) {                /* below 2^-14: half subnormal or 0 */
    /* Adding 0.5 aligns the half-subnormal grid with fp32's last mantissa
     * bits; the FPU's own round-to-nearest-even does the rounding. */
    float v = m2i_f32_from_bits (x) + 0.5f;
    return (m2i_f16) (sign | (m2i_f32_bits (v) - 0x3f000000u));
  }
  /* Normal: rebias the exponent and round the 13 dropped bits to even. */
  guint32 odd = (x >> 13) & 1u;
  x += ((guint32) (15 - 127) << 23) + 0xfffu + odd;
  return (m2i_f16) (sign | (x >> 13));
}

/* Widens a binary16 to fp32 (exact). */
static inline float
m2i_f16_to_f32 (m2i_f16 h)
{
  guint32 sign = ((guint32) h & 0x8000u) << 16;
  guint32 exp = (h >> 10) & 0x1fu;
  guint32 mant = h & 0x3ffu;

  if (exp == 0x1f)
    return m2i_f32_from_bits (sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = (float) mant * (1.0f / 16777216.0f);     /* mant · 2^-24 */
    return sign ? -v : v;
  }
  return m2i_f32_from_bits (sign | ((exp + 112u) << 23) | (mant << 13));
}

/* Converts @n values; uses F16C when the CPU has it (same results). */
M2I_API void m2i_f32_to_f16_n (const float *src, m2i_f16 *dst, gsize n);
M2I_API void m2i_f16_to_f32_n (const m2i_f16 *src, float *dst, gsize n);

/* Distance in units in the last place between two finite halves of the same
 * sign (used by tests and by checks "within one ulp"). */
M2I_API guint m2i_f16_ulp_distance (m2i_f16 a, m2i_f16 b);

G_END_DECLS
