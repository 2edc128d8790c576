/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc over all 256^3 (Y, U, V) triples: the reference path, the fused path
 * (whichever SIMD level M2I_CPU_DISABLE leaves) and the plain-C kernels
 * against the DESIGN.md formula, evaluated here independently in double
 * precision: round-half-up of (1164(Y-16) + k·(C-128)) / 1000, clamped. */
#include "m2i-test-util.h"
#include <m2i/engine-private.h>
#include <math.h>

#define W 4096
#define H 4096

static int
spec_channel (long num)
{
  double v = floor ((double) num / 1000.0 + 0.5);
  return v < 0 ? 0 : v > 255 ? 255 : (int) v;
}

static void
spec_rgb (int Y, int U, int V, int rgb[3])
{
  long y = 1164L * (Y - 16);
  rgb[0] = spec_channel (y + 1596L * (V - 128));
  rgb[1] = spec_channel (y - 813L * (V - 128) - 391L * (U - 128));
  rgb[2] = spec_channel (y + 2018L * (U - 128));
}

/* Block b (2x2 pixels) carries chroma pair b/64 and Y values 4(b%64)+0..3,
 * so the 4096x4096 frame holds every triple exactly once. */
static void
triple_at (gint x, gint y, int *Y, int *U, int *V)
{
  gint b = (y / 2) * (W / 2) + x / 2;
  gint pair = b >> 6;
  *U = pair >> 8;
  *V = pair & 255;
  *Y = (b & 63) * 4 + (y & 1) * 2 + (x & 1);
}

static void
fill_frame (TestImage *t)
{
  const M2iImage *im = &t->img;
  for (gint y = 0; y < H; y++)
    for (gint x = 0; x < W; x++) {
      int Y, U, V;
      triple_at (x, y, &Y, &U, &V);
      im->data[0][y * im->stride[0] + x] = (guint8) Y;
      if ((x | y) & 1)
        continue;
      if (im->format == M2I_FORMAT_SP_NV12_8) {
        im->data[1][(y / 2) * im->stride[1] + x] = (guint8) U;
        im->data[1][(y / 2) * im->stride[1] + x + 1] = (guint8) V;
      } else {
        im->data[1][(y / 2) * im->stride[1] + x / 2] = (guint8) U;
        im->data[2][(y / 2) * im->stride[2] + x / 2] = (guint8) V;
      }
    }
}

static void
check_against_spec (const M2iImage *out, gboolean bgr)
{
  guint64 bad = 0;
  for (gint y = 0; y < H; y++) {
    const guint8 *row = out->data[0] + y * out->stride[0];
    for (gint x = 0; x < W; x++) {
      int Y, U, V, rgb[3];
      triple_at (x, y, &Y, &U, &V);
      spec_rgb (Y, U, V, rgb);
      for (int c = 0; c < 3; c++)
        if (row[3 * x + (bgr ? 2 - c : c)] != rgb[c] && bad++ < 5)
          g_printerr ("Y=%d U=%d V=%d channel %d: got %d, spec %d\n", Y, U, V, c,
              row[3 * x + (bgr ? 2 - c : c)], rgb[c]);
    }
  }
  g_assert_cmpuint (bad, ==, 0);
}

static void
run_case (M2iFormat in_fmt, M2iChannelOrder order, gboolean reference)
{
  TestImage in, out;
  test_image_alloc_padded (&in, in_fmt, W, H, 0, 0);
  fill_frame (&in);
  M2iFormat of = order == M2I_ORDER_BGR ? M2I_FORMAT_IL_BGR888 : M2I_FORMAT_IL_RGB888;
  test_image_alloc_padded (&out, of, W, H, 0, 0);
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, order);
  GError *err = NULL;
  if (reference) {
    g_assert_true (m2i_reference_run (&in.img, &ops, &out.img, &err));
  } else {
    M2iPlanOptions o;
    m2i_plan_options_init (&o);
    M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
    g_assert_no_error (err);
    g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
    g_assert_no_error (err);
    m2i_plan_free (plan);
  }
  check_against_spec (&out.img, order == M2I_ORDER_BGR);
  test_image_free (&in);
  test_image_free (&out);
}

static void
test_reference_i420 (void)
{
  run_case (M2I_FORMAT_PL_YUV420_8, M2I_ORDER_RGB, TRUE);
}

static void
test_fused_nv12_bgr (void)
{
  run_case (M2I_FORMAT_SP_NV12_8, M2I_ORDER_BGR, FALSE);
}

static void
test_fused_i420_rgb (void)
{
  run_case (M2I_FORMAT_PL_YUV420_8, M2I_ORDER_RGB, FALSE);
}

/* The plain-C kernel's scalar formula on every triple (it is also the tail
 * and fallback of the others), and the conditions on the terms that every
 * SIMD level's 16-bit arithmetic relies on (csc-private.h): 1000·Q + R is
 * the chroma part minus 18124, and 0 <= R < 17254. */
static void
test_scalar_kernel (void)
{
  for (int U = 0; U < 256; U++)
    for (int V = 0; V < 256; V++) {
      gint16 t[CSC_N_TERMS];
      m2i_csc_chroma_terms (U, V, t);
      const long k[3] = { 1596L * (V - 128), -813L * (V - 128) - 391L * (U - 128),
        2018L * (U - 128) };
      for (int c = 0; c < 3; c++) {
        g_assert_cmpint (1000L * t[2 * c] + t[2 * c + 1], ==, k[c] - 18124);
        g_assert_cmpint (t[2 * c + 1], >=, 0);
        g_assert_cmpint (t[2 * c + 1], <, 17254);
      }
      for (int Y = 0; Y < 256; Y++) {
        int rgb[3];
        spec_rgb (Y, U, V, rgb);
        if (m2i_csc_pixel (Y, t[CSC_QR], t[CSC_RR]) != rgb[0]
            || m2i_csc_pixel (Y, t[CSC_QG], t[CSC_RG]) != rgb[1]
            || m2i_csc_pixel (Y, t[CSC_QB], t[CSC_RB]) != rgb[2])
          g_error ("scalar kernel wrong at Y=%d U=%d V=%d", Y, U, V);
      }
    }
}

/* The row kernel over per-pixel terms (prep_444 + row, the resize path's
 * listed columns) at the SIMD level in use, on every triple: per U, one row
 * of 65536 pixels holding every (Y, V), written interleaved RGB and planar. */
static void
test_row_kernel (void)
{
  const CscKernels *k = m2i_csc_kernels ();
  enum { N = 65536 };
  gsize ts = m2i_csc_terms_stride (k, N);
  gint16 *t = g_new (gint16, ts * CSC_N_TERMS);
  guint8 *y = g_new (guint8, N), *u = g_new (guint8, N), *v = g_new (guint8, N);
  guint8 *il = g_new (guint8, 3 * N), *pl = g_new (guint8, 3 * N);
  CscOutSpec spec_il = { .mode = CSC_OUT_IL_U8 }, spec_pl = { .mode = CSC_OUT_PL_U8 };
  guint8 *const dil[3] = { il, NULL, NULL }, *const dpl[3] = { pl, pl + N, pl + 2 * N };
  guint64 bad = 0;
  for (gint j = 0; j < N; j++) {
    y[j] = (guint8) j;
    v[j] = (guint8) (j >> 8);
  }
  for (int U = 0; U < 256; U++) {
    memset (u, U, N);
    k->prep_444 (u, v, N, t, ts);
    k->row (y, t, ts, N, dil, &spec_il);
    k->row (y, t, ts, N, dpl, &spec_pl);
    for (gint j = 0; j < N; j++) {
      int rgb[3];
      spec_rgb (y[j], U, v[j], rgb);
      for (int c = 0; c < 3; c++)
        if ((il[3 * j + c] != rgb[c] || pl[c * N + j] != rgb[c]) && bad++ < 5)
          g_printerr ("%s Y=%d U=%d V=%d channel %d: got %d/%d, spec %d\n", k->name, y[j], U,
              v[j], c, il[3 * j + c], pl[c * N + j], rgb[c]);
    }
  }
  g_assert_cmpuint (bad, ==, 0);
  g_free (t);
  g_free (y);
  g_free (u);
  g_free (v);
  g_free (il);
  g_free (pl);
}

/* The float pair kernels' fp32 csc (whichever SIMD level is in use) on
 * every triple: each row of the all-triples frame through fpair_rows with
 * weights (1, 0) — the sum is then the colour of column x — and (0, 1) for
 * column x + 1. Luma pairs share the chroma row, like the fused path. */
static void
test_float_pairs (void)
{
  const CscKernels *k = m2i_csc_kernels ();
  if (!k->fpair_rows) {
    g_test_skip ("no float pair kernels at this SIMD level");
    return;
  }
  for (int f = 0; f < 2; f++) {
    gboolean nv12 = f == 0;
    TestImage in;
    test_image_alloc_padded (&in, nv12 ? M2I_FORMAT_SP_NV12_8 : M2I_FORMAT_PL_YUV420_8, W, H, 0, 0);
    fill_frame (&in);
    const M2iImage *im = &in.img;
    gint n = W - 1;
    gint32 *xs = g_new (gint32, n);
    float *one = g_new (float, n), *zero = g_new0 (float, n);
    for (gint i = 0; i < n; i++) {
      xs[i] = i;
      one[i] = 1.0f;
    }
    float *h0 = g_new (float, 3 * (gsize) n), *h1 = g_new (float, 3 * (gsize) n);
    guint64 bad = 0;
    for (int tap = 0; tap < 2; tap++) {
      FPairTable *t = m2i_fpair_table_new (xs, tap ? zero : one, tap ? one : zero, n, W, nv12,
          FALSE, k->fpair_fetch);
      for (gint y = 0; y < H; y += 2) {
        const guint8 *c1 = im->data[1] + (gsize) (y / 2) * im->stride[1];
        const guint8 *c2 = nv12 ? NULL : im->data[2] + (gsize) (y / 2) * im->stride[2];
        k->fpair_rows (t, im->data[0] + (gsize) y * im->stride[0],
            im->data[0] + (gsize) (y + 1) * im->stride[0], c1, c2, h0, h1);
        for (int r = 0; r < 2; r++)
          for (gint i = 0; i < n; i++) {
            int Y, U, V, rgb[3];
            triple_at (i + tap, y + r, &Y, &U, &V);
            spec_rgb (Y, U, V, rgb);
            for (int c = 0; c < 3; c++)
              if ((r ? h1 : h0)[(gsize) c * n + i] != (float) rgb[c] && bad++ < 5)
                g_printerr ("%s Y=%d U=%d V=%d channel %d: got %g, spec %d\n",
                    nv12 ? "NV12" : "I420", Y, U, V, c, (r ? h1 : h0)[(gsize) c * n + i], rgb[c]);
          }
      }
      m2i_fpair_table_free (t);
    }
    g_assert_cmpuint (bad, ==, 0);
    g_free (xs);
    g_free (one);
    g_free (zero);
    g_free (h0);
    g_free (h1);
    test_image_free (&in);
  }
}

/* The divide-by-1000 identity the kernels rely on. */
static void
test_div1000 (void)
{
  for (guint z = 0; z < 59074; z++)
    g_assert_cmpuint ((z * 33555u) >> 25, ==, z / 1000);
  g_assert_cmpuint ((59999u * 33555u) >> 25, !=, 59999u / 1000);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/csc/div1000", test_div1000);
  g_test_add_func ("/m2i/csc/scalar-kernel-all-triples", test_scalar_kernel);
  g_test_add_func ("/m2i/csc/reference-i420-all-triples", test_reference_i420);
  g_test_add_func ("/m2i/csc/fused-nv12-bgr-all-triples", test_fused_nv12_bgr);
  g_test_add_func ("/m2i/csc/fused-i420-rgb-all-triples", test_fused_i420_rgb);
  g_test_add_func ("/m2i/csc/row-kernel-all-triples", test_row_kernel);
  g_test_add_func ("/m2i/csc/float-pairs-all-triples", test_float_pairs);
  return g_test_run ();
}
