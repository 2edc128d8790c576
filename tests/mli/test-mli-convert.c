/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Conversions between quantized types, against expectations worked out by
 * hand from x_dst = Sat(Round((x_src - z_src) s_src / 2^n_src * 2^n_dst /
 * s_dst + z_dst)), and a signal-to-noise check (>= 30 dB, MLI's criterion)
 * over random data for every type pair, with quantization and
 * dequantization done here from the definitions. */
#include <mli/m2i-mli.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

#define HU M2I_MLI_ROUND_HALF_UP
#define HE M2I_MLI_ROUND_HALF_EVEN

static M2iMliTensor
vec (M2iMliType type, gpointer data, guint32 n)
{
  M2iMliTensor t;
  m2i_mli_tensor_init (&t, type, data, (gsize) n * m2i_mli_type_size (type), 1, &n);
  return t;
}

/* ---- halfway cases -------------------------------------------------- */

static void
check_i8 (const M2iMliTensor *src, M2iMliTensor *dst, M2iMliRound r,
    const gint8 *expect, guint n)
{
  memset (dst->data, 0x55, n);
  g_assert_cmpint (m2i_mli_convert (src, dst, r), ==, M2I_MLI_OK);
  for (guint i = 0; i < n; i++)
    if (((gint8 *) dst->data)[i] != expect[i])
      g_error ("element %u: got %d, expected %d (%s)", i, ((gint8 *) dst->data)[i],
          expect[i], r == HU ? "half up" : "half even");
}

static void
test_halfway_fx (void)
{
  /* fx16 with 1 fractional bit → fx8 with 0: x/2. */
  gint16 in[] = { 5, -5, 7, -7, 1, -1, 3, -3, 4, 0 };
  /*             2.5 -2.5 3.5 -3.5 .5 -.5 1.5 -1.5 2  0 */
  gint8 up[] =   { 3, -2, 4, -3, 1, 0, 2, -1, 2, 0 };
  gint8 even[] = { 2, -2, 4, -4, 0, 0, 2, -2, 2, 0 };
  gint8 out[10];
  M2iMliTensor s = vec (M2I_MLI_FX16, in, 10), d = vec (M2I_MLI_FX8, out, 10);
  m2i_mli_tensor_set_fx (&s, 1);
  m2i_mli_tensor_set_fx (&d, 0);
  check_i8 (&s, &d, HU, up, 10);
  check_i8 (&s, &d, HE, even, 10);

  /* fx8 with 2 fractional bits → fx8 with 0: x/4. */
  gint8 in8[] = { 6, -6, 2, -2, 10, 127, -128 };
  /*             1.5 -1.5 .5 -.5 2.5 31.75 -32 */
  gint8 up8[] = { 2, -1, 1, 0, 3, 32, -32 };
  gint8 ev8[] = { 2, -2, 0, 0, 2, 32, -32 };
  M2iMliTensor s8 = vec (M2I_MLI_FX8, in8, 7), d8 = vec (M2I_MLI_FX8, out, 7);
  m2i_mli_tensor_set_fx (&s8, 2);
  m2i_mli_tensor_set_fx (&d8, 0);
  check_i8 (&s8, &d8, HU, up8, 7);
  check_i8 (&s8, &d8, HE, ev8, 7);
}

static void
test_halfway_sa (void)
{
  /* src sa8: value = (x - 3) * 3 / 4; dst sa8: value = x + 1 (z = -1). */
  gint8 in[] = { 5, 1, 9, 13, 3, 4 };
  /*   x-3:    2 -2  6 10  0  1
   *   value: 1.5 -1.5 4.5 7.5 0 0.75
   *   up:     2  -1   5   8  0  1   → + z(-1)
   *   even:   2  -2   4   8  0  1 */
  gint8 up[] = { 1, -2, 4, 7, -1, 0 };
  gint8 even[] = { 1, -3, 3, 7, -1, 0 };
  gint8 out[8];
  M2iMliTensor s = vec (M2I_MLI_SA8, in, 6), d = vec (M2I_MLI_SA8, out, 6);
  m2i_mli_tensor_set_sa (&s, 3, 3, 2);
  m2i_mli_tensor_set_sa (&d, -1, 1, 0);
  check_i8 (&s, &d, HU, up, 6);
  check_i8 (&s, &d, HE, even, 6);

  /* sa32 → sa8 with a 2^-35 shift, beyond the 64-bit fast path:
   * value = x * 3·2^29 / 2^35 = 3x/64. */
  gint32 in32[] = { 32, -32, 96, 64, -96, 0, 1 << 20 };
  /* 1.5 -1.5 4.5 3 -4.5 0 49152 */
  gint8 up32[] = { 2, -1, 5, 3, -4, 0, 127 };
  gint8 ev32[] = { 2, -2, 4, 3, -4, 0, 127 };
  M2iMliTensor s32 = vec (M2I_MLI_SA32, in32, 7), d32 = vec (M2I_MLI_SA8, out, 7);
  m2i_mli_tensor_set_sa (&s32, 0, 3 << 29, 35);
  m2i_mli_tensor_set_sa (&d32, 0, 1, 0);
  check_i8 (&s32, &d32, HU, up32, 7);
  check_i8 (&s32, &d32, HE, ev32, 7);
}

static void
test_halfway_float (void)
{
  /* fp32 → sa8 with scale 3: x = f / 3. */
  float in[] = { 4.5f, 7.5f, -4.5f, -7.5f, 1.5f, 3.0f };
  /* 1.5 2.5 -1.5 -2.5 0.5 1 */
  gint8 up[] = { 2, 3, -1, -2, 1, 1 };
  gint8 even[] = { 2, 2, -2, -2, 0, 1 };
  gint8 out[6];
  M2iMliTensor s = vec (M2I_MLI_FP32, in, 6), d = vec (M2I_MLI_SA8, out, 6);
  m2i_mli_tensor_set_sa (&d, 0, 3, 0);
  check_i8 (&s, &d, HU, up, 6);
  check_i8 (&s, &d, HE, even, 6);

  /* Scale 80000 / 2^17 = 625/1024 (a divisor above 2^16 takes the exact
   * integer path):
   * f = 3125/2048 → x = 2.5; f = 4375/2048 → 3.5; neighbours of the
   * first tie round away from it. Zero point 10. */
  float in2[] = { 3125.0f / 2048, 4375.0f / 2048, -3125.0f / 2048,
    nextafterf (3125.0f / 2048, 0), nextafterf (3125.0f / 2048, 2) };
  gint8 up2[] = { 13, 14, 8, 12, 13 };
  gint8 ev2[] = { 12, 14, 8, 12, 13 };
  M2iMliTensor s2 = vec (M2I_MLI_FP32, in2, 5), d2 = vec (M2I_MLI_SA8, out, 5);
  m2i_mli_tensor_set_sa (&d2, 10, 80000, 17);
  check_i8 (&s2, &d2, HU, up2, 5);
  check_i8 (&s2, &d2, HE, ev2, 5);

  /* fp16 source, fx8 destination with 2 fractional bits: x = 4f. */
  m2i_f16 h[] = { m2i_f32_to_f16 (0.375f), m2i_f32_to_f16 (0.625f), m2i_f32_to_f16 (-0.125f) };
  /* 1.5 2.5 -0.5 */
  gint8 up3[] = { 2, 3, 0 };
  gint8 ev3[] = { 2, 2, 0 };
  M2iMliTensor s3 = vec (M2I_MLI_FP16, h, 3), d3 = vec (M2I_MLI_FX8, out, 3);
  m2i_mli_tensor_set_fx (&d3, 2);
  check_i8 (&s3, &d3, HU, up3, 3);
  check_i8 (&s3, &d3, HE, ev3, 3);
}

/* Integer → float: exact values, one rounding to nearest even. */
static void
test_to_float (void)
{
  gint8 in[] = { -128, 127, 0, 5 };
  float out[4];
  M2iMliTensor s = vec (M2I_MLI_SA8, in, 4), d = vec (M2I_MLI_FP32, out, 4);
  m2i_mli_tensor_set_sa (&s, 5, 3, 3);          /* (x - 5) * 3 / 8 */
  g_assert_cmpint (m2i_mli_convert (&s, &d, HU), ==, M2I_MLI_OK);
  g_assert_cmpfloat (out[0], ==, -133 * 3 / 8.0);
  g_assert_cmpfloat (out[1], ==, 122 * 3 / 8.0);
  g_assert_cmpfloat (out[2], ==, -15 / 8.0);
  g_assert_cmpfloat (out[3], ==, 0.0);

  /* sa32 → fp16 ties. (2^29 + 2^18) / 2^29 = 1 + 2^-11 is exactly halfway
   * between two halves: to even, 1.0. 10145477 * 1776486329 = 2^54 + 2^43
   * + 1, so with 54 fractional bits the value is 1 + 2^-11 + 2^-54: just
   * above the tie (→ 1 + 2^-10), though rounding it to double first would
   * land on the tie and give 1.0. */
  gint32 ties[] = { (1 << 29) + (1 << 18), -((1 << 29) + (1 << 18)) };
  m2i_f16 hout[2];
  M2iMliTensor st = vec (M2I_MLI_SA32, ties, 2), dh = vec (M2I_MLI_FP16, hout, 2);
  m2i_mli_tensor_set_sa (&st, 0, 1, 29);
  g_assert_cmpint (m2i_mli_convert (&st, &dh, HU), ==, M2I_MLI_OK);
  g_assert_cmphex (hout[0], ==, 0x3c00);
  g_assert_cmphex (hout[1], ==, 0xbc00);

  gint32 sticky[] = { 10145477, -10145477 };
  M2iMliTensor ss = vec (M2I_MLI_SA32, sticky, 2);
  m2i_mli_tensor_set_sa (&ss, 0, 1776486329, 54);
  g_assert_cmpint (m2i_mli_convert (&ss, &dh, HU), ==, M2I_MLI_OK);
  g_assert_cmphex (hout[0], ==, 0x3c01);
  g_assert_cmphex (hout[1], ==, 0xbc01);
}

/* ---- saturation ----------------------------------------------------- */

static void
test_saturation (void)
{
  float in[] = { 1e6f, -1e6f, INFINITY, -INFINITY, NAN, 127.49f, 127.5f, -128.5f, -128.51f };
  gint8 out[9];
  M2iMliTensor s = vec (M2I_MLI_FP32, in, 9), d = vec (M2I_MLI_SA8, out, 9);
  m2i_mli_tensor_set_sa (&d, 0, 1, 0);
  gint8 up[] = { 127, -128, 127, -128, 0, 127, 127, -128, -128 };
  check_i8 (&s, &d, HU, up, 9);
  /* NaN goes to the zero point, not to 0. */
  m2i_mli_tensor_set_sa (&d, -7, 1, 0);
  g_assert_cmpint (m2i_mli_convert (&s, &d, HE), ==, M2I_MLI_OK);
  g_assert_cmpint (out[4], ==, -7);
  g_assert_cmpint (out[0], ==, 127);
  g_assert_cmpint (out[1], ==, -128);

  /* sa8 → fx16: 127 * 1000 and -128 * 1000 do not fit 16 bits. */
  gint8 in8[] = { 127, -128, 32, -33 };
  gint16 o16[4];
  M2iMliTensor s8 = vec (M2I_MLI_SA8, in8, 4), d16 = vec (M2I_MLI_FX16, o16, 4);
  m2i_mli_tensor_set_sa (&s8, 0, 1000, 0);
  m2i_mli_tensor_set_fx (&d16, 0);
  g_assert_cmpint (m2i_mli_convert (&s8, &d16, HU), ==, M2I_MLI_OK);
  g_assert_cmpint (o16[0], ==, G_MAXINT16);
  g_assert_cmpint (o16[1], ==, G_MININT16);
  g_assert_cmpint (o16[2], ==, 32000);
  g_assert_cmpint (o16[3], ==, G_MININT16);

  /* fp32 → sa32 and → fx16 with a huge left shift. */
  float big[] = { 1e12f, -1e12f, 3.0e9f };
  gint32 o32[3];
  M2iMliTensor sb = vec (M2I_MLI_FP32, big, 3), d32 = vec (M2I_MLI_SA32, o32, 3);
  m2i_mli_tensor_set_sa (&d32, 0, 1, 0);
  g_assert_cmpint (m2i_mli_convert (&sb, &d32, HU), ==, M2I_MLI_OK);
  g_assert_cmpint (o32[0], ==, G_MAXINT32);
  g_assert_cmpint (o32[1], ==, G_MININT32);
  g_assert_cmpint (o32[2], ==, G_MAXINT32);
  gint8 tiny[] = { 1, -1, 0 };
  M2iMliTensor st = vec (M2I_MLI_FX8, tiny, 3), dt = vec (M2I_MLI_FX16, o16, 3);
  m2i_mli_tensor_set_fx (&st, -32);
  m2i_mli_tensor_set_fx (&dt, 63);
  g_assert_cmpint (m2i_mli_convert (&st, &dt, HU), ==, M2I_MLI_OK);
  g_assert_cmpint (o16[0], ==, G_MAXINT16);
  g_assert_cmpint (o16[1], ==, G_MININT16);
  g_assert_cmpint (o16[2], ==, 0);
  /* ... and the opposite: values far below one step round to 0. */
  m2i_mli_tensor_set_fx (&st, 63);
  m2i_mli_tensor_set_fx (&dt, -32);
  g_assert_cmpint (m2i_mli_convert (&st, &dt, HU), ==, M2I_MLI_OK);
  g_assert_cmpint (o16[0], ==, 0);
  g_assert_cmpint (o16[1], ==, 0);

  /* fp32 → fp16 overflows to infinity as IEEE does (no saturation). */
  float f[] = { 70000.0f, -65519.0f };
  m2i_f16 h[2];
  M2iMliTensor sf = vec (M2I_MLI_FP32, f, 2), dh = vec (M2I_MLI_FP16, h, 2);
  g_assert_cmpint (m2i_mli_convert (&sf, &dh, HU), ==, M2I_MLI_OK);
  g_assert_cmphex (h[0], ==, 0x7c00);
  g_assert_cmphex (h[1], ==, 0xfbff);
}

/* ---- per-axis -------------------------------------------------------- */

static void
test_per_axis (void)
{
  /* A 2x3 sa8 tensor quantized along axis 1 (columns). */
  gint8 in[] = { 10, 11, 12,
                 -10, -11, -12 };
  gint32 zp[] = { 0, 1, -2 }, sc[] = { 1, 2, 3 };
  gint8 fb[] = { 0, 1, 2 };
  /* column c value: (x - zp[c]) * sc[c] / 2^fb[c] */
  float expect[] = { 10, 10, 10.5f,
                     -10, -12, -7.5f };
  guint32 shape[] = { 2, 3 };
  M2iMliTensor s, d;
  float out[6];
  m2i_mli_tensor_init (&s, M2I_MLI_SA8, in, sizeof in, 2, shape);
  m2i_mli_tensor_set_sa_axis (&s, 1, zp, sc, fb);
  m2i_mli_tensor_init (&d, M2I_MLI_FP32, out, sizeof out, 2, shape);
  g_assert_cmpint (m2i_mli_convert (&s, &d, HU), ==, M2I_MLI_OK);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (out[i], ==, expect[i]);

  /* Same axis on both sides: per-column requantization to scale 1/2^1,
   * zero points 5, 0, 0: (v * 2) + z. */
  gint8 o8[6];
  gint32 zd[] = { 5, 0, 0 }, sd[] = { 1, 1, 1 };
  gint8 fd[] = { 1, 1, 1 };
  M2iMliTensor d8;
  m2i_mli_tensor_init (&d8, M2I_MLI_SA8, o8, sizeof o8, 2, shape);
  m2i_mli_tensor_set_sa_axis (&d8, 1, zd, sd, fd);
  g_assert_cmpint (m2i_mli_convert (&s, &d8, HU), ==, M2I_MLI_OK);
  gint8 e8[] = { 25, 20, 21, -15, -24, -15 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (o8[i], ==, e8[i]);

  /* Per-axis source into a per-tensor destination (scale 1, z 0). */
  M2iMliTensor dt;
  m2i_mli_tensor_init (&dt, M2I_MLI_SA8, o8, sizeof o8, 2, shape);
  m2i_mli_tensor_set_sa (&dt, 0, 1, 0);
  g_assert_cmpint (m2i_mli_convert (&s, &dt, HE), ==, M2I_MLI_OK);
  gint8 et[] = { 10, 10, 10, -10, -12, -8 };     /* 10.5 → 10, -7.5 → -8 (even) */
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (o8[i], ==, et[i]);

  /* fp32 into per-axis along axis 0 (rows): row scales 1/2 and 4. */
  float f[] = { 1.25f, 2.0f, -3.0f, 10.0f, -6.0f, 2.0f };
  gint32 zr[] = { 0, 1 }, sr[] = { 1, 4 };
  gint8 fr[] = { 1, 0 };
  M2iMliTensor sf, da;
  m2i_mli_tensor_init (&sf, M2I_MLI_FP32, f, sizeof f, 2, shape);
  m2i_mli_tensor_init (&da, M2I_MLI_SA8, o8, sizeof o8, 2, shape);
  m2i_mli_tensor_set_sa_axis (&da, 0, zr, sr, fr);
  g_assert_cmpint (m2i_mli_convert (&sf, &da, HU), ==, M2I_MLI_OK);
  /* row 0: 2f → 2.5→3, 4, -6; row 1: f/4 + 1 → 2.5→3 +1, -1.5→-1 +1, 0.5→1 +1 */
  gint8 ea[] = { 3, 4, -6, 4, 0, 2 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (o8[i], ==, ea[i]);

  /* Axis 0 into axis 1 is an error, and nothing is written. */
  memset (o8, 0x7f, sizeof o8);
  g_assert_cmpint (m2i_mli_convert (&da, &d8, HU), ==, M2I_MLI_AXIS_MISMATCH);
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (o8[i], ==, 0x7f);
}

/* ---- strides, in place ---------------------------------------------- */

static void
test_strides (void)
{
  /* 2x3 fx8 (frac 1) with row stride 5 → fx16 (frac 0) with row stride 4;
   * the gaps keep their sentinels. */
  gint8 in[10] = { 3, 5, -3, 99, 99,
                   7, -7, 1, 99, 99 };
  gint16 out[8];
  for (int i = 0; i < 8; i++)
    out[i] = 1234;
  guint32 shape[] = { 2, 3 };
  M2iMliTensor s, d;
  m2i_mli_tensor_init (&s, M2I_MLI_FX8, in, sizeof in, 2, shape);
  s.mem_stride[0] = 5;
  m2i_mli_tensor_set_fx (&s, 1);
  m2i_mli_tensor_init (&d, M2I_MLI_FX16, out, sizeof out, 2, shape);
  d.mem_stride[0] = 4;
  g_assert_cmpint (m2i_mli_convert (&s, &d, HE), ==, M2I_MLI_OK);
  gint16 e[8] = { 2, 2, -2, 1234, 4, -4, 0, 1234 };
  for (int i = 0; i < 8; i++)
    g_assert_cmpint (out[i], ==, e[i]);

  /* Transposed destination: column-major strides {1, 2}. */
  gint16 tr[6];
  M2iMliTensor dtr;
  m2i_mli_tensor_init (&dtr, M2I_MLI_FX16, tr, sizeof tr, 2, shape);
  dtr.mem_stride[0] = 1;
  dtr.mem_stride[1] = 2;
  g_assert_cmpint (m2i_mli_convert (&s, &dtr, HU), ==, M2I_MLI_OK);
  gint16 et[6] = { 2, 4, 3, -3, -1, 1 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (tr[i], ==, et[i]);

  /* Capacity one element short of the strided span. */
  d.capacity = 6 * sizeof (gint16) + 1;
  g_assert_cmpint (m2i_mli_convert (&s, &d, HE), ==, M2I_MLI_NOT_ENOUGH_MEM);
}

static void
test_in_place (void)
{
  /* sa8 → fx8 in the same buffer (same container). */
  gint8 buf[] = { 10, 11, -20, 127 };
  M2iMliTensor s = vec (M2I_MLI_SA8, buf, 4), d = vec (M2I_MLI_FX8, buf, 4);
  m2i_mli_tensor_set_sa (&s, 10, 1, 1);        /* (x - 10) / 2 */
  m2i_mli_tensor_set_fx (&d, 2);               /* * 4 */
  g_assert_cmpint (m2i_mli_convert (&s, &d, HU), ==, M2I_MLI_OK);
  gint8 e[] = { 0, 2, -60, 127 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (buf[i], ==, e[i]);

  /* fx16 → fp16 in place (2-byte containers). */
  gint16 b16[] = { 3, -640 };
  M2iMliTensor s16 = vec (M2I_MLI_FX16, b16, 2), dh = vec (M2I_MLI_FP16, b16, 2);
  m2i_mli_tensor_set_fx (&s16, 2);
  g_assert_cmpint (m2i_mli_convert (&s16, &dh, HU), ==, M2I_MLI_OK);
  g_assert_cmpfloat (m2i_f16_to_f32 ((guint16) b16[0]), ==, 0.75);
  g_assert_cmpfloat (m2i_f16_to_f32 ((guint16) b16[1]), ==, -160.0);

  /* Different containers, shifted start, or different strides: refused. */
  gint8 big[16] = { 0 };
  M2iMliTensor a = vec (M2I_MLI_SA8, big, 4), b = vec (M2I_MLI_FX16, big, 4);
  b.capacity = 8;
  g_assert_cmpint (m2i_mli_convert (&a, &b, HU), ==, M2I_MLI_INCOMPATIBLE);
  M2iMliTensor c = vec (M2I_MLI_FX8, big + 1, 4);
  g_assert_cmpint (m2i_mli_convert (&a, &c, HU), ==, M2I_MLI_INCOMPATIBLE);
  guint32 two[] = { 2, 2 };
  M2iMliTensor p, q;
  m2i_mli_tensor_init (&p, M2I_MLI_FX8, big, sizeof big, 2, two);
  m2i_mli_tensor_init (&q, M2I_MLI_FX8, big, sizeof big, 2, two);
  q.mem_stride[0] = 4;
  g_assert_cmpint (m2i_mli_convert (&p, &q, HU), ==, M2I_MLI_INCOMPATIBLE);
}

/* ---- sub-tensor views as conversion targets ------------------------- */

static void
test_into_subtensor (void)
{
  /* Write a 2x2 block into the middle of a 3x4 fp32 tensor (rank 3 with a
   * leading 1, dropped by the view). */
  float big[12];
  for (int i = 0; i < 12; i++)
    big[i] = -1;
  guint32 shape[] = { 1, 3, 4 };
  M2iMliTensor whole, view;
  m2i_mli_tensor_init (&whole, M2I_MLI_FP32, big, sizeof big, 3, shape);
  M2iMliSubTensorCfg cfg = { { 0, 1, 1 }, { 1, 2, 2 }, 2 };
  g_assert_cmpint (m2i_mli_subtensor (&whole, &cfg, &view), ==, M2I_MLI_OK);
  gint8 in[] = { 1, 2, 3, 4 };
  guint32 s2[] = { 2, 2 };
  M2iMliTensor s;
  m2i_mli_tensor_init (&s, M2I_MLI_SA8, in, 4, 2, s2);
  m2i_mli_tensor_set_sa (&s, 0, 1, 1);
  g_assert_cmpint (m2i_mli_convert (&s, &view, HU), ==, M2I_MLI_OK);
  float e[12] = { -1, -1, -1, -1,
                  -1, 0.5f, 1, -1,
                  -1, 1.5f, 2, -1 };
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat (big[i], ==, e[i]);
}

/* ---- failures -------------------------------------------------------- */

static void
test_failures (void)
{
  gint8 a[4] = { 1, 2, 3, 4 }, b[4] = { 9, 9, 9, 9 };
  M2iMliTensor s = vec (M2I_MLI_SA8, a, 4), d = vec (M2I_MLI_SA8, b, 4);
  M2iMliTensor t;

  t = s; t.data = NULL;
  g_assert_cmpint (m2i_mli_convert (&t, &d, HU), ==, M2I_MLI_BAD_TENSOR);
  g_assert_cmpint (m2i_mli_convert (NULL, &d, HU), ==, M2I_MLI_BAD_TENSOR);
  t = s; t.shape[0] = 0;
  g_assert_cmpint (m2i_mli_convert (&t, &d, HU), ==, M2I_MLI_BAD_TENSOR);
  t = s; t.rank = M2I_MLI_MAX_RANK + 1;
  g_assert_cmpint (m2i_mli_convert (&t, &d, HU), ==, M2I_MLI_BAD_TENSOR);
  t = s; t.mem_stride[0] = -1;
  g_assert_cmpint (m2i_mli_convert (&t, &d, HU), ==, M2I_MLI_BAD_TENSOR);
  t = s; t.type = (M2iMliType) 42;
  g_assert_cmpint (m2i_mli_convert (&t, &d, HU), ==, M2I_MLI_BAD_TENSOR);
  t = d; t.q.scale = 0;
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_BAD_QUANT);
  t = d; t.q.scale_frac_bits = 64;
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_BAD_QUANT);
  t = d; t.type = M2I_MLI_FX8; t.q.frac_bits = -33;
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_BAD_QUANT);
  t = d; t.q.axis = 1;
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_BAD_QUANT);
  t = d; m2i_mli_tensor_set_sa_axis (&t, 0, NULL, NULL, NULL);
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_BAD_QUANT);
  gint32 zs[4] = { 0 }, sc[4] = { 1, 1, 0, 1 };
  gint8 fb[4] = { 0 };
  t = d; m2i_mli_tensor_set_sa_axis (&t, 0, zs, sc, fb);
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_BAD_QUANT);
  t = d; t.capacity = 3;
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_NOT_ENOUGH_MEM);
  t = d; t.shape[0] = 3;
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_SHAPE_MISMATCH);
  guint32 sh[] = { 2, 2 };
  m2i_mli_tensor_init (&t, M2I_MLI_SA8, b, 4, 2, sh);
  g_assert_cmpint (m2i_mli_convert (&s, &t, HU), ==, M2I_MLI_SHAPE_MISMATCH);
  g_assert_cmpint (m2i_mli_convert (&s, &d, (M2iMliRound) 7), ==, M2I_MLI_BAD_CONFIG);
  /* Nothing was written by any failed call. */
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (b[i], ==, 9);

  GError *err = NULL;
  g_assert_false (m2i_mli_set_error (M2I_MLI_NOT_ENOUGH_MEM, &err, "layer 3 input"));
  g_assert_nonnull (strstr (err->message, "layer 3 input: capacity"));
  g_clear_error (&err);
  g_assert_true (m2i_mli_set_error (M2I_MLI_OK, &err, "x"));
  g_assert_null (err);
}

/* ---- nearest-value property over random parameters ------------------ */

static void
quant_of (const M2iMliTensor *t, long double *z, long double *step)
{
  switch (t->type) {
    case M2I_MLI_FX8: case M2I_MLI_FX16:
      *z = 0;
      *step = ldexpl (1.0L, -t->q.frac_bits);
      break;
    case M2I_MLI_SA8: case M2I_MLI_SA32:
      *z = t->q.zero_point;
      *step = ldexpl ((long double) t->q.scale, -t->q.scale_frac_bits);
      break;
    default:
      *z = 0;
      *step = 1;
  }
}

static void
range_of (M2iMliType t, long double *lo, long double *hi)
{
  switch (t) {
    case M2I_MLI_FX8: case M2I_MLI_SA8: *lo = -128; *hi = 127; break;
    case M2I_MLI_FX16: *lo = -32768; *hi = 32767; break;
    default: *lo = G_MININT32; *hi = G_MAXINT32; break;
  }
}

static long double
load_ld (const M2iMliTensor *t, guint i)
{
  switch (t->type) {
    case M2I_MLI_FX8: case M2I_MLI_SA8: return ((gint8 *) t->data)[i];
    case M2I_MLI_FX16: return ((gint16 *) t->data)[i];
    case M2I_MLI_SA32: return ((gint32 *) t->data)[i];
    case M2I_MLI_FP16: return m2i_f16_to_f32 (((guint16 *) t->data)[i]);
    default: return ((float *) t->data)[i];
  }
}

static void
random_quant (GRand *r, M2iMliTensor *t)
{
  if (t->type == M2I_MLI_FX8 || t->type == M2I_MLI_FX16)
    m2i_mli_tensor_set_fx (t, g_rand_int_range (r, -4, 20));
  else if (t->type == M2I_MLI_SA8 || t->type == M2I_MLI_SA32)
    m2i_mli_tensor_set_sa (t, g_rand_int_range (r, -100, 100),
        g_rand_int_range (r, 1, g_rand_boolean (r) ? 300 : G_MAXINT32),
        g_rand_int_range (r, -2, 40));
}

/* For random types and parameters, each integer result is the nearest
 * integer to the exact value (to within long double precision), or the
 * container bound when the value lies beyond it. */
static void
test_nearest_property (void)
{
  GRand *r = g_rand_new_with_seed (11);
  enum { N = 64 };
  guint8 sbuf[N * 4], dbuf[N * 4];
  for (int iter = 0; iter < 4000; iter++) {
    M2iMliType st = g_rand_int_range (r, 0, M2I_MLI_N_TYPES);
    M2iMliType dt = g_rand_int_range (r, 0, 4);          /* integer destinations */
    M2iMliTensor s = vec (st, sbuf, N), d = vec (dt, dbuf, N);
    random_quant (r, &s);
    random_quant (r, &d);
    for (guint i = 0; i < sizeof sbuf; i++)
      sbuf[i] = (guint8) g_rand_int (r);
    if (st == M2I_MLI_FP32)
      for (int i = 0; i < N; i++)
        ((float *) sbuf)[i] = (float) g_rand_double_range (r, -1e3, 1e3);
    if (st == M2I_MLI_FP16)
      for (int i = 0; i < N; i++)
        ((guint16 *) sbuf)[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -1e3, 1e3));
    M2iMliRound mode = g_rand_boolean (r) ? HU : HE;
    g_assert_cmpint (m2i_mli_convert (&s, &d, mode), ==, M2I_MLI_OK);
    long double zs, ss, zd, sd, lo, hi;
    quant_of (&s, &zs, &ss);
    quant_of (&d, &zd, &sd);
    range_of (dt, &lo, &hi);
    for (int i = 0; i < N; i++) {
      long double v = (load_ld (&s, i) - zs) * ss / sd + zd;
      long double got = load_ld (&d, i);
      if (v >= hi + 0.5L)
        g_assert_true (got == hi);
      else if (v <= lo - 0.5L)
        g_assert_true (got == lo);
      else if (fabsl (got - v) > 0.5L + 1e-12L * fabsl (v))
        g_error ("%s→%s: value %.10Lg became %.0Lf", m2i_mli_type_to_string (st),
            m2i_mli_type_to_string (dt), v, got);
    }
  }
  g_rand_free (r);
}

/* ---- SNR over random data, every type pair --------------------------- */

typedef struct {
  M2iMliType type;
  gboolean per_axis;
} Kind;

/* Parameters of each kind for a 4x16 tensor whose values lie in [-3, 3];
 * per-axis kinds quantize each of the 4 rows with its own scale. */
static gint32 pa_zero[4] = { -5, 0, 3, 10 }, pa_scale[4] = { 7, 13, 300, 1 };
static gint8 pa_frac8[4] = { 8, 9, 13, 5 }, pa_frac32[4] = { 20, 24, 30, 22 };

static void
setup_kind (M2iMliTensor *t, Kind k, gint32 *zero_scratch)
{
  switch (k.type) {
    case M2I_MLI_FX8: m2i_mli_tensor_set_fx (t, 5); break;
    case M2I_MLI_FX16: m2i_mli_tensor_set_fx (t, 12); break;
    case M2I_MLI_SA8:
      if (k.per_axis)
        m2i_mli_tensor_set_sa_axis (t, 0, pa_zero, pa_scale, pa_frac8);
      else
        m2i_mli_tensor_set_sa (t, -5, 7, 8);
      break;
    case M2I_MLI_SA32:
      if (k.per_axis) {
        for (int i = 0; i < 4; i++)
          zero_scratch[i] = pa_zero[i] * 1000;
        m2i_mli_tensor_set_sa_axis (t, 0, zero_scratch, pa_scale, pa_frac32);
      } else
        m2i_mli_tensor_set_sa (t, 100, 3, 20);
      break;
    default:
      break;
  }
}

static double
dequant (const M2iMliTensor *t, guint i, guint row)
{
  double x = (double) load_ld (t, i);
  if (t->type == M2I_MLI_FX8 || t->type == M2I_MLI_FX16)
    return ldexp (x, -t->q.frac_bits);
  if (t->type == M2I_MLI_SA8 || t->type == M2I_MLI_SA32) {
    if (t->q.axis >= 0)
      return (x - t->q.zero_points[row]) * t->q.scales[row]
          * ldexp (1, -t->q.scale_frac_bits_per_axis[row]);
    return (x - t->q.zero_point) * t->q.scale * ldexp (1, -t->q.scale_frac_bits);
  }
  return x;
}

/* Stores the nearest representable value of @v (plain round-half-away, as a
 * test-side quantizer independent of the library). */
static void
quantize_into (M2iMliTensor *t, guint i, guint row, double v)
{
  double z = 0, step = 1;
  if (t->type == M2I_MLI_FX8 || t->type == M2I_MLI_FX16)
    step = ldexp (1, -t->q.frac_bits);
  else if (t->type == M2I_MLI_SA8 || t->type == M2I_MLI_SA32) {
    if (t->q.axis >= 0) {
      z = t->q.zero_points[row];
      step = t->q.scales[row] * ldexp (1, -t->q.scale_frac_bits_per_axis[row]);
    } else {
      z = t->q.zero_point;
      step = t->q.scale * ldexp (1, -t->q.scale_frac_bits);
    }
  }
  double q = round (v / step + z);
  switch (t->type) {
    case M2I_MLI_FX8: case M2I_MLI_SA8: ((gint8 *) t->data)[i] = (gint8) CLAMP (q, -128, 127); break;
    case M2I_MLI_FX16: ((gint16 *) t->data)[i] = (gint16) CLAMP (q, -32768, 32767); break;
    case M2I_MLI_SA32: ((gint32 *) t->data)[i] = (gint32) q; break;
    case M2I_MLI_FP16: ((guint16 *) t->data)[i] = m2i_f32_to_f16 ((float) v); break;
    case M2I_MLI_FP32: ((float *) t->data)[i] = (float) v; break;
  }
}

static void
test_snr_all_pairs (void)
{
  static const Kind kinds[] = {
    { M2I_MLI_FX8, FALSE }, { M2I_MLI_FX16, FALSE }, { M2I_MLI_SA8, FALSE },
    { M2I_MLI_SA32, FALSE }, { M2I_MLI_FP16, FALSE }, { M2I_MLI_FP32, FALSE },
    { M2I_MLI_SA8, TRUE }, { M2I_MLI_SA32, TRUE },
  };
  enum { ROWS = 4, COLS = 256, N = ROWS * COLS };
  guint32 shape[] = { ROWS, COLS };
  GRand *r = g_rand_new_with_seed (3);
  guint8 *sbuf = g_malloc (N * 4), *dbuf = g_malloc (N * 4);
  gint32 zs[4], zd[4];
  double worst = INFINITY;
  for (guint a = 0; a < G_N_ELEMENTS (kinds); a++)
    for (guint b = 0; b < G_N_ELEMENTS (kinds); b++)
      for (int mode = 0; mode < 2; mode++) {
        M2iMliTensor s, d;
        m2i_mli_tensor_init (&s, kinds[a].type, sbuf, N * 4, 2, shape);
        m2i_mli_tensor_init (&d, kinds[b].type, dbuf, N * 4, 2, shape);
        setup_kind (&s, kinds[a], zs);
        setup_kind (&d, kinds[b], zd);
        for (guint i = 0; i < N; i++)
          quantize_into (&s, i, i / COLS, g_rand_double_range (r, -3, 3));
        g_assert_cmpint (m2i_mli_convert (&s, &d, mode), ==, M2I_MLI_OK);
        double sig = 0, noise = 0;
        for (guint i = 0; i < N; i++) {
          double ref = dequant (&s, i, i / COLS), got = dequant (&d, i, i / COLS);
          sig += ref * ref;
          noise += (ref - got) * (ref - got);
        }
        double snr = noise > 0 ? 10 * log10 (sig / noise) : INFINITY;
        if (snr < 30)
          g_error ("%s%s → %s%s: SNR %.1f dB < 30 dB",
              m2i_mli_type_to_string (kinds[a].type), kinds[a].per_axis ? "/axis" : "",
              m2i_mli_type_to_string (kinds[b].type), kinds[b].per_axis ? "/axis" : "", snr);
        worst = MIN (worst, snr);
      }
  g_test_message ("worst SNR over all pairs: %.1f dB", worst);
  g_free (sbuf);
  g_free (dbuf);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mli/convert/halfway-fx", test_halfway_fx);
  g_test_add_func ("/mli/convert/halfway-sa", test_halfway_sa);
  g_test_add_func ("/mli/convert/halfway-float", test_halfway_float);
  g_test_add_func ("/mli/convert/to-float", test_to_float);
  g_test_add_func ("/mli/convert/saturation", test_saturation);
  g_test_add_func ("/mli/convert/per-axis", test_per_axis);
  g_test_add_func ("/mli/convert/strides", test_strides);
  g_test_add_func ("/mli/convert/in-place", test_in_place);
  g_test_add_func ("/mli/convert/into-subtensor", test_into_subtensor);
  g_test_add_func ("/mli/convert/failures", test_failures);
  g_test_add_func ("/mli/convert/nearest-property", test_nearest_property);
  g_test_add_func ("/mli/convert/snr-all-pairs", test_snr_all_pairs);
  return g_test_run ();
}
