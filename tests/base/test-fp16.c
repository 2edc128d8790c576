/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fp16 conversions against an independent reference: the nearest half found
 * by exhaustive search in double precision, and the CPU's own F16C unit. */
#include <base/m2i-fp16.h>
#include <base/m2i-cpu.h>
#include <math.h>

/* Value of a finite half, computed from the definition in double. */
static double
half_value (guint16 h)
{
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e ? ldexp (1024 + m, e - 25) : ldexp (m, -24);
  return (h & 0x8000) ? -v : v;
}

/* Round-to-nearest-even by definition: bracket the value between adjacent
 * halves and pick the nearer, the even one on a tie. */
static guint16
reference_f32_to_f16 (float f)
{
  if (isnan (f))
    return 0x7e00;
  guint16 sign = signbit (f) ? 0x8000 : 0;
  double a = fabs ((double) f);
  if (a >= 65520.0)
    return sign | 0x7c00;
  guint16 lo = 0;
  for (guint16 h = 0; h < 0x7c00; h++)  /* largest half <= a */
    if (half_value (h) <= a)
      lo = h;
    else
      break;
  if (half_value (lo) == a)
    return sign | lo;
  double dlo = a - half_value (lo);
  double dhi = (lo + 1 == 0x7c00) ? INFINITY : half_value (lo + 1) - a;
  guint16 r = (dlo < dhi) ? lo : (dhi < dlo) ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
  return sign | r;
}

static void
test_widen_exhaustive (void)
{
  for (guint32 h = 0; h < 0x10000; h++) {
    float f = m2i_f16_to_f32 ((guint16) h);
    if (((h >> 10) & 0x1f) == 0x1f) {
      g_assert_true ((h & 0x3ff) ? isnan (f) : isinf (f));
      continue;
    }
    g_assert_cmpfloat ((double) f, ==, half_value ((guint16) h));
    /* Every finite half survives the round trip. */
    g_assert_cmpuint (m2i_f32_to_f16 (f), ==, h);
  }
}

static void
test_narrow_against_definition (void)
{
  /* Halfway points and their neighbours in every binade, plus randoms. */
  GRand *r = g_rand_new_with_seed (7);
  for (guint32 h = 0; h < 0x7bff; h += 1 + (h & 7)) {
    double mid = (half_value (h) + half_value (h + 1)) / 2;
    float cand[3] = { (float) mid, nextafterf ((float) mid, 0), nextafterf ((float) mid, INFINITY) };
    for (int i = 0; i < 3; i++) {
      g_assert_cmphex (m2i_f32_to_f16 (cand[i]), ==, reference_f32_to_f16 (cand[i]));
      g_assert_cmphex (m2i_f32_to_f16 (-cand[i]), ==, reference_f32_to_f16 (-cand[i]));
    }
  }
  for (int i = 0; i < 20000; i++) {
    float f = (float) g_rand_double_range (r, -70000, 70000) *
        (float) ldexp (1, g_rand_int_range (r, -30, 1));
    g_assert_cmphex (m2i_f32_to_f16 (f), ==, reference_f32_to_f16 (f));
  }
  g_assert_cmphex (m2i_f32_to_f16 (65519.99f), ==, 0x7bff);
  g_assert_cmphex (m2i_f32_to_f16 (65520.f), ==, 0x7c00);
  g_assert_cmphex (m2i_f32_to_f16 (-INFINITY), ==, 0xfc00);
  g_assert_cmphex (m2i_f32_to_f16 (NAN) & 0x7e00, ==, 0x7e00);
  g_assert_cmphex (m2i_f32_to_f16 (ldexpf (1, -25)), ==, 0);     /* tie to even: 0 */
  g_assert_cmphex (m2i_f32_to_f16 (nextafterf (ldexpf (1, -25), 1)), ==, 1);
  g_rand_free (r);
}

static void
test_bulk_matches_scalar (void)
{
  /* The bulk path may use F16C; it must agree with the scalar code. */
  enum { N = 100003 };
  float *src = g_new (float, N), *back = g_new (float, N);
  guint16 *h = g_new (guint16, N);
  GRand *r = g_rand_new_with_seed (11);
  for (int i = 0; i < N; i++)
    src[i] = (float) g_rand_double_range (r, -1e5, 1e5) *
        (float) ldexp (1, g_rand_int_range (r, -40, 1));
  m2i_f32_to_f16_n (src, h, N);
  for (int i = 0; i < N; i++)
    g_assert_cmphex (h[i], ==, m2i_f32_to_f16 (src[i]));
  m2i_f16_to_f32_n (h, back, N);
  for (int i = 0; i < N; i++)
    g_assert_true (m2i_f32_bits (back[i]) == m2i_f32_bits (m2i_f16_to_f32 (h[i])));
  g_assert_cmpuint (m2i_f16_ulp_distance (0x3c00, 0x3c01), ==, 1);
  g_assert_cmpuint (m2i_f16_ulp_distance (0x8001, 0x0001), ==, 2);
  g_free (src);
  g_free (back);
  g_free (h);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_message ("cpu: %s", m2i_cpu_flags_string ());
  g_test_add_func ("/fp16/widen-exhaustive", test_widen_exhaustive);
  g_test_add_func ("/fp16/narrow-definition", test_narrow_against_definition);
  g_test_add_func ("/fp16/bulk", test_bulk_matches_scalar);
  return g_test_run ();
}
