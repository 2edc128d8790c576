/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-convert.c — element conversion with the rules of Convert-1: floats to
 * integers truncate toward zero (saturating, NaN → 0, where the spec leaves
 * it undefined), integers wrap modulo 2^N, anything non-zero is boolean
 * true, f16/bf16 round to nearest even. */
#include "ir-private.h"
#include <base/m2i-fp16.h>

#include <math.h>
#include <string.h>

typedef enum { V_SIGNED, V_UNSIGNED, V_FLOAT } ValueKind;

typedef struct {
  ValueKind kind;
  gint64 i;
  guint64 u;
  double f;
} Value;

static inline float
bf16_to_f32 (guint16 h)
{
  return m2i_f32_from_bits ((guint32) h << 16);
}

static inline guint16
f32_to_bf16 (float f)
{
  guint32 x = m2i_f32_bits (f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (guint16) ((x >> 16) | 0x40);        /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (guint16) (x >> 16);
}

static inline Value
read_value (const guint8 *p, M2iElementType t)
{
  Value v = { V_SIGNED, 0, 0, 0 };
  switch (t) {
    case M2I_ET_BOOLEAN: v.i = *p != 0; break;
    case M2I_ET_U8: v.i = *p; break;
    case M2I_ET_I8: v.i = *(const gint8 *) p; break;
    case M2I_ET_U16: v.i = *(const guint16 *) p; break;
    case M2I_ET_I16: v.i = *(const gint16 *) p; break;
    case M2I_ET_U32: v.i = *(const guint32 *) p; break;
    case M2I_ET_I32: v.i = *(const gint32 *) p; break;
    case M2I_ET_U64: v.kind = V_UNSIGNED; v.u = *(const guint64 *) p; break;
    case M2I_ET_I64: v.i = *(const gint64 *) p; break;
    case M2I_ET_F16: v.kind = V_FLOAT; v.f = m2i_f16_to_f32 (*(const guint16 *) p); break;
    case M2I_ET_BF16: v.kind = V_FLOAT; v.f = bf16_to_f32 (*(const guint16 *) p); break;
    case M2I_ET_F32: v.kind = V_FLOAT; v.f = *(const float *) p; break;
    case M2I_ET_F64: v.kind = V_FLOAT; v.f = *(const double *) p; break;
    default: break;
  }
  return v;
}

/* Truncates toward zero into [lo, hi]; NaN → 0. */
static inline gint64
float_to_int (double f, double lo, double hi, gint64 ilo, gint64 ihi)
{
  if (isnan (f))
    return 0;
  if (f <= lo)
    return ilo;
  if (f >= hi)
    return ihi;
  return (gint64) f;
}

static inline guint64
float_to_u64 (double f)
{
  if (isnan (f) || f <= 0)
    return 0;
  if (f >= 18446744073709551616.0)
    return G_MAXUINT64;
  return (guint64) f;
}

/* The value as an integer with the bits of the destination (wrapping). */
static inline guint64
value_bits (const Value *v, double lo, double hi, gint64 ilo, gint64 ihi)
{
  switch (v->kind) {
    case V_FLOAT: return (guint64) float_to_int (v->f, lo, hi, ilo, ihi);
    case V_UNSIGNED: return v->u;
    default: return (guint64) v->i;
  }
}

static inline double
value_float (const Value *v)
{
  switch (v->kind) {
    case V_FLOAT: return v->f;
    case V_UNSIGNED: return (double) v->u;
    default: return (double) v->i;
  }
}

static inline void
write_value (guint8 *p, M2iElementType t, const Value *v)
{
  switch (t) {
    case M2I_ET_BOOLEAN:
      *p = v->kind == V_FLOAT ? v->f != 0 : v->kind == V_UNSIGNED ? v->u != 0 : v->i != 0;
      break;
    case M2I_ET_U8: *p = (guint8) value_bits (v, 0, 255, 0, 255); break;
    case M2I_ET_I8: *(gint8 *) p = (gint8) value_bits (v, -128, 127, -128, 127); break;
    case M2I_ET_U16: *(guint16 *) p = (guint16) value_bits (v, 0, 65535, 0, 65535); break;
    case M2I_ET_I16:
      *(gint16 *) p = (gint16) value_bits (v, -32768, 32767, -32768, 32767);
      break;
    case M2I_ET_U32:
      *(guint32 *) p = (guint32) value_bits (v, 0, 4294967295.0, 0, G_MAXUINT32);
      break;
    case M2I_ET_I32:
      *(gint32 *) p = (gint32) value_bits (v, -2147483648.0, 2147483647.0, G_MININT32, G_MAXINT32);
      break;
    case M2I_ET_U64:
      *(guint64 *) p = v->kind == V_FLOAT ? float_to_u64 (v->f) :
          v->kind == V_UNSIGNED ? v->u : (guint64) v->i;
      break;
    case M2I_ET_I64:
      *(gint64 *) p = v->kind == V_FLOAT ?
          float_to_int (v->f, -9223372036854775808.0, 9223372036854775807.0, G_MININT64,
              G_MAXINT64) : v->kind == V_UNSIGNED ? (gint64) v->u : v->i;
      break;
    case M2I_ET_F16: *(guint16 *) p = m2i_f32_to_f16 ((float) value_float (v)); break;
    case M2I_ET_BF16: *(guint16 *) p = f32_to_bf16 ((float) value_float (v)); break;
    case M2I_ET_F32: *(float *) p = (float) value_float (v); break;
    case M2I_ET_F64: *(double *) p = value_float (v); break;
    default: break;
  }
}

void
ir_convert_elements (const void *src, M2iElementType st, void *dst,
    M2iElementType dt, gsize n)
{
  if (st == dt) {
    if (src != dst)
      memmove (dst, src, n * m2i_element_type_size (st));
    return;
  }
  /* the conversions models actually contain, without the generic switch */
  if (st == M2I_ET_U8 && dt == M2I_ET_F32) {
    const guint8 *s = src;
    float *d = dst;
    for (gsize i = 0; i < n; i++)
      d[i] = s[i];
    return;
  }
  if (st == M2I_ET_F16 && dt == M2I_ET_F32) {
    m2i_f16_to_f32_n (src, dst, n);
    return;
  }
  if (st == M2I_ET_F32 && dt == M2I_ET_F16) {
    m2i_f32_to_f16_n (src, dst, n);
    return;
  }
  gsize ss = m2i_element_type_size (st), ds = m2i_element_type_size (dt);
  const guint8 *s = src;
  guint8 *d = dst;
  for (gsize i = 0; i < n; i++) {
    Value v = read_value (s + i * ss, st);
    write_value (d + i * ds, dt, &v);
  }
}
