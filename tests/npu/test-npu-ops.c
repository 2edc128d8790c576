/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Layout converters, weight blocking, pooling, element-wise add and PReLU
 * against references written here from the definitions. meson runs this
 * binary once per M2I_CPU_DISABLE level (the fp16 pooling kernels: AVX-512,
 * AVX2 + F16C, plain C). */
#include "npu-test-util.h"

/* ---- layouts ----------------------------------------------------------------- */

static void
check_layout (M2iNpuPrecision prec, M2iMliType type, gint N, gint C, gint H, gint W)
{
  GRand *r = g_rand_new_with_seed (N * 1000 + C);
  gsize es = prec == M2I_NPU_FP16 ? 2 : 1;
  /* NCHW with padded channel planes: strides {C*cs, cs, W+3, 1}, cs = H*(W+3)+5 */
  gint rs = W + 3, cs = H * rs + 5;
  gsize span = ((gsize) N * C * cs) * es;
  guint8 *src = g_malloc (span), *back = g_malloc (span);
  for (gsize i = 0; i < span; i++)
    src[i] = (guint8) g_rand_int (r);
  memset (back, 0xee, span);
  guint32 shape[] = { N, C, H, W };
  M2iMliTensor m, mb;
  m2i_mli_tensor_init (&m, type, src, span, 4, shape);
  m.mem_stride[0] = C * cs;
  m.mem_stride[1] = cs;
  m.mem_stride[2] = rs;
  if (type == M2I_MLI_SA8)
    m2i_mli_tensor_set_sa (&m, -7, 1, 0);
  mb = m;
  mb.data = back;
  gsize bb = m2i_npu_tensor_bytes (prec, N, C, H, W);
  guint8 *blk = g_malloc (bb);
  M2iNpuTensor t;
  m2i_npu_tensor_init (&t, prec, N, C, H, W, blk, bb);
  GError *err = NULL;
  g_assert_true (m2i_npu_to_blocked (&m, &t, 2, &err));
  g_assert_no_error (err);
  guint8 *dense = g_malloc ((gsize) N * C * H * W * es);
  guint8 pad[2] = { type == M2I_MLI_SA8 ? (guint8) -7 : 0, 0 };   /* the zero point */
  tu_unblock (blk, dense, es, N, C, H, W, pad);
  g_assert_true (m2i_npu_from_blocked (&t, &mb, 1, &err));
  g_assert_no_error (err);
  for (gint n = 0; n < N; n++)
    for (gint c = 0; c < C; c++)
      for (gint y = 0; y < H; y++) {
        gsize o = (((gsize) n * C + c) * cs + y * rs) * es;
        gsize dense_row = (((gsize) n * C + c) * H + y) * W * es;
        g_assert_cmpmem (dense + dense_row, W * es, src + o, W * es);
        g_assert_cmpmem (back + o, W * es, src + o, W * es);
        g_assert_cmpint (back[o + W * es], ==, 0xee);     /* row gap untouched */
      }
  g_free (src);
  g_free (back);
  g_free (blk);
  g_free (dense);
  g_rand_free (r);
}

static void
test_layout (void)
{
  check_layout (M2I_NPU_INT8, M2I_MLI_SA8, 2, 13, 5, 7);
  check_layout (M2I_NPU_INT8, M2I_MLI_FX8, 1, 8, 3, 4);
  check_layout (M2I_NPU_FP16, M2I_MLI_FP16, 2, 3, 4, 9);
  check_layout (M2I_NPU_FP16, M2I_MLI_FP16, 1, 17, 6, 1);
}

/* fp16 blocked ↔ f32 / f16 NCHW (the split boundary): every element exactly
 * m2i_f32_to_f16 of its source (ties, overflow to inf, subnormals, signed
 * zeros) or its exact widening, over widths that are and are not multiples
 * of 8, channel counts below, at and above a block, and NCHW rows with a
 * gap. */
static void
check_convert_f16 (gint N, gint C, gint H, gint W, GRand *r)
{
  gint rs = W + 2, cs = H * rs + 3;                 /* padded rows and planes */
  gsize span = (gsize) N * C * cs;
  float *f = g_new0 (float, span), *back = g_new (float, span);
  m2i_f16 *h = g_new0 (m2i_f16, span), *hback = g_new (m2i_f16, span);
  for (gsize i = 0; i < span; i++) {
    switch (g_rand_int_range (r, 0, 12)) {
      case 0: f[i] = 1.0f + ldexpf (1, -11); break;            /* a tie, to even */
      case 1: f[i] = 1.0f + 3 * ldexpf (1, -11); break;        /* a tie, up */
      case 2: f[i] = 70000.0f; break;                           /* inf */
      case 3: f[i] = -ldexpf (1, -20); break;                   /* subnormal */
      case 4: f[i] = -0.0f; break;
      default: f[i] = (float) g_rand_double_range (r, -1000, 1000);
    }
    h[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -10, 10));
  }
  guint32 shape[] = { N, C, H, W };
  for (gint from_f32 = 0; from_f32 < 2; from_f32++) {
    M2iMliTensor m, mb;
    M2iMliType type = from_f32 ? M2I_MLI_FP32 : M2I_MLI_FP16;
    gsize es = from_f32 ? 4 : 2;
    m2i_mli_tensor_init (&m, type, from_f32 ? (gpointer) f : (gpointer) h, span * es, 4, shape);
    m.mem_stride[0] = C * cs;
    m.mem_stride[1] = cs;
    m.mem_stride[2] = rs;
    mb = m;
    mb.data = from_f32 ? (gpointer) back : (gpointer) hback;
    memset (mb.data, 0xee, span * es);
    gsize bb = m2i_npu_tensor_bytes (M2I_NPU_FP16, N, C, H, W);
    m2i_f16 *blk = g_malloc (bb);
    M2iNpuTensor t;
    m2i_npu_tensor_init (&t, M2I_NPU_FP16, N, C, H, W, blk, bb);
    M2iMliQuant q = { 0 };
    q.axis = -1;
    GError *err = NULL;
    g_assert_true (m2i_npu_convert_to_blocked (&m, M2I_MLI_FP16, &q, &t, M2I_MLI_ROUND_HALF_UP,
            2, &err));
    g_assert_no_error (err);
    for (gint n = 0; n < N; n++)
      for (gint c = 0; c < TU_CEIL8 (C) * 8; c++)
        for (gint y = 0; y < H; y++)
          for (gint x = 0; x < W; x++) {
            m2i_f16 got = blk[tu_blocked_index (C, H, W, n, c, y, x)];
            gsize i = ((gsize) n * C + c) * cs + y * rs + x;
            m2i_f16 want = c >= C ? 0 : from_f32 ? m2i_f32_to_f16 (f[i]) : h[i];
            if (got != want)
              g_error ("to blocked (%s, %dx%dx%dx%d) n %d c %d y %d x %d: 0x%04x, expected 0x%04x",
                  from_f32 ? "f32" : "f16", N, C, H, W, n, c, y, x, got, want);
          }
    g_assert_true (m2i_npu_convert_from_blocked (&t, M2I_MLI_FP16, &q, &mb,
            M2I_MLI_ROUND_HALF_UP, 1, &err));
    g_assert_no_error (err);
    for (gint n = 0; n < N; n++)
      for (gint c = 0; c < C; c++)
        for (gint y = 0; y < H; y++) {
          for (gint x = 0; x < W; x++) {
            gsize i = ((gsize) n * C + c) * cs + y * rs + x;
            m2i_f16 code = blk[tu_blocked_index (C, H, W, n, c, y, x)];
            if (from_f32)
              g_assert_cmpfloat (back[i], ==, m2i_f16_to_f32 (code));
            else
              g_assert_cmphex (hback[i], ==, code);
          }
          gsize gap = ((gsize) n * C + c) * cs + y * rs + W;          /* row gap untouched */
          g_assert_cmphex (((guint8 *) mb.data)[gap * es], ==, 0xee);
        }
    g_free (blk);
  }
  g_free (f);
  g_free (back);
  g_free (h);
  g_free (hback);
}

static void
test_convert_blocked_f16 (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (22);
  check_convert_f16 (1, 3, 5, 37, r);        /* squeezenet's input: 3 lanes */
  check_convert_f16 (2, 11, 3, 16, r);
  check_convert_f16 (1, 16, 2, 9, r);
  check_convert_f16 (1, 8, 4, 3, r);
  g_rand_free (r);
}

static void
test_layout_errors (void)
{
  gint8 a[512], b[512];
  guint32 shape[] = { 1, 4, 4, 4 };
  M2iMliTensor m;
  M2iNpuTensor t;
  GError *err = NULL;
  m2i_npu_tensor_init (&t, M2I_NPU_INT8, 1, 4, 4, 4, b, sizeof b);
  m2i_mli_tensor_init (&m, M2I_MLI_SA8, a, sizeof a, 3, shape);      /* rank 3 */
  g_assert_false (m2i_npu_to_blocked (&m, &t, 1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  m2i_mli_tensor_init (&m, M2I_MLI_FX16, a, sizeof a, 4, shape);     /* 16-bit into int8 */
  g_assert_false (m2i_npu_to_blocked (&m, &t, 1, &err));
  g_clear_error (&err);
  m2i_mli_tensor_init (&m, M2I_MLI_SA8, a, sizeof a, 4, shape);
  gint32 z[4] = { 0 }, s[4] = { 1, 1, 1, 1 };
  gint8 f[4] = { 0 };
  m2i_mli_tensor_set_sa_axis (&m, 1, z, s, f);                        /* per axis */
  g_assert_false (m2i_npu_to_blocked (&m, &t, 1, &err));
  g_clear_error (&err);
  m2i_mli_tensor_init (&m, M2I_MLI_SA8, a, sizeof a, 4, shape);
  t.w = 3;                                                            /* shape */
  g_assert_false (m2i_npu_to_blocked (&m, &t, 1, &err));
  g_clear_error (&err);
  m2i_mli_tensor_init (&m, M2I_MLI_SA8, a, 10, 4, shape);             /* capacity */
  t.w = 4;
  g_assert_false (m2i_npu_from_blocked (&t, &m, 1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL);
  g_clear_error (&err);
}

/* The CPU/device boundary in one pass: fp32 NCHW → sa8 blocked (the
 * test's own quantizer: ties are measure-zero for random floats) and back,
 * fp32 → fp16 blocked (the base RNE helper), and a per-channel sa8 source
 * requantized per tensor. */
static void
test_convert_blocked (void)
{
  GRand *r = g_rand_new_with_seed (21);
  gint N = 2, C = 11, H = 3, W = 5;
  gsize n = (gsize) N * C * H * W;
  guint32 shape[] = { N, C, H, W };
  float *f = g_new (float, n), *back = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    f[i] = (float) g_rand_double_range (r, -12, 12);
  M2iMliTensor src, dst;
  m2i_mli_tensor_init (&src, M2I_MLI_FP32, f, n * 4, 4, shape);
  m2i_mli_tensor_init (&dst, M2I_MLI_FP32, back, n * 4, 4, shape);
  M2iMliQuant q = { 0 };
  q.axis = -1;
  q.zero_point = 3;
  q.scale = 77;
  q.scale_frac_bits = 12;                  /* step 77/4096 ≈ 0.0188: ±12 saturates */
  gsize bb = m2i_npu_tensor_bytes (M2I_NPU_INT8, N, C, H, W);
  gint8 *blk = g_malloc (bb);
  M2iNpuTensor t;
  m2i_npu_tensor_init (&t, M2I_NPU_INT8, N, C, H, W, blk, bb);
  GError *err = NULL;
  g_assert_true (m2i_npu_convert_to_blocked (&src, M2I_MLI_SA8, &q, &t, M2I_MLI_ROUND_HALF_UP, 2, &err));
  g_assert_no_error (err);
  for (gint b = 0; b < N; b++)
    for (gint c = 0; c < 16; c++)
      for (gint y = 0; y < H; y++)
        for (gint x = 0; x < W; x++) {
          gint8 got = blk[tu_blocked_index (C, H, W, b, c, y, x)];
          if (c >= C) {
            g_assert_cmpint (got, ==, 3);
            continue;
          }
          double v = f[(((gsize) b * C + c) * H + y) * W + x];
          double want = CLAMP (floor (v * 4096 / 77 + 0.5) + 3, -128, 127);
          g_assert_cmpint (got, ==, (gint) want);
        }
  g_assert_true (m2i_npu_convert_from_blocked (&t, M2I_MLI_SA8, &q, &dst, M2I_MLI_ROUND_HALF_UP, 1, &err));
  g_assert_no_error (err);
  for (gint b = 0; b < N; b++)
    for (gint c = 0; c < C; c++)
      for (gint y = 0; y < H; y++)
        for (gint x = 0; x < W; x++) {
          gsize i = (((gsize) b * C + c) * H + y) * W + x;
          gint8 code = blk[tu_blocked_index (C, H, W, b, c, y, x)];
          g_assert_cmpfloat (back[i], ==, (code - 3) * 77 / 4096.0);
        }

  /* fp32 → fp16 blocked */
  gsize bh = m2i_npu_tensor_bytes (M2I_NPU_FP16, N, C, H, W);
  m2i_f16 *hb = g_malloc (bh);
  M2iNpuTensor th;
  m2i_npu_tensor_init (&th, M2I_NPU_FP16, N, C, H, W, hb, bh);
  g_assert_true (m2i_npu_convert_to_blocked (&src, M2I_MLI_FP16, &q, &th, M2I_MLI_ROUND_HALF_UP, 2, &err));
  for (gint b = 0; b < N; b++)
    for (gint c = 0; c < 16; c++)
      for (gint y = 0; y < H; y++)
        for (gint x = 0; x < W; x++) {
          m2i_f16 got = hb[tu_blocked_index (C, H, W, b, c, y, x)];
          m2i_f16 want = c < C ? m2i_f32_to_f16 (f[(((gsize) b * C + c) * H + y) * W + x]) : 0;
          g_assert_cmphex (got, ==, want);
        }

  /* sa8 NCHW quantized per channel → sa8 blocked per tensor (scale 1/8) */
  gint8 *s8 = g_malloc (n);
  gint32 zc[11], sc[11];
  gint8 fc[11];
  for (gint c = 0; c < C; c++) {
    zc[c] = c - 5;
    sc[c] = 1 + c;
    fc[c] = 4;
  }
  for (gsize i = 0; i < n; i++)
    s8[i] = (gint8) g_rand_int_range (r, -128, 128);
  M2iMliTensor s8t;
  m2i_mli_tensor_init (&s8t, M2I_MLI_SA8, s8, n, 4, shape);
  m2i_mli_tensor_set_sa_axis (&s8t, 1, zc, sc, fc);
  M2iMliQuant q8 = { 0 };
  q8.axis = -1;
  q8.scale = 1;
  q8.scale_frac_bits = 3;
  g_assert_true (m2i_npu_convert_to_blocked (&s8t, M2I_MLI_SA8, &q8, &t, M2I_MLI_ROUND_HALF_EVEN, 1, &err));
  for (gint b = 0; b < N; b++)
    for (gint c = 0; c < C; c++)
      for (gint y = 0; y < H; y++)
        for (gint x = 0; x < W; x++) {
          gint v = s8[(((gsize) b * C + c) * H + y) * W + x];
          /* (v - z)·s/16 in steps of 1/8 = (v - z)·s/2: ties to even */
          gint num = (v - zc[c]) * sc[c];
          gint q2 = num / 2 + ((num % 2 != 0 && ((num / 2) % 2 != 0)) ? (num > 0 ? 1 : -1) : 0);
          g_assert_cmpint (blk[tu_blocked_index (C, H, W, b, c, y, x)], ==, CLAMP (q2, -128, 127));
        }

  /* fp16 elements do not fit an int8 tensor; per-axis blocked quantization
   * is refused. */
  g_assert_false (m2i_npu_convert_to_blocked (&src, M2I_MLI_FP16, &q, &t, M2I_MLI_ROUND_HALF_UP, 1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  M2iMliQuant qa = q;
  qa.axis = 1;
  g_assert_false (m2i_npu_convert_to_blocked (&src, M2I_MLI_SA8, &qa, &t, M2I_MLI_ROUND_HALF_UP, 1, &err));
  g_clear_error (&err);
  g_free (f);
  g_free (back);
  g_free (blk);
  g_free (hb);
  g_free (s8);
  g_rand_free (r);
}

static void
test_weights_blocked (void)
{
  GRand *r = g_rand_new_with_seed (9);
  for (int iter = 0; iter < 20; iter++) {
    gint O = g_rand_int_range (r, 1, 30), I = g_rand_int_range (r, 1, 30);
    gint kh = g_rand_int_range (r, 1, 4), kw = g_rand_int_range (r, 1, 4);
    gsize es = iter % 2 ? 2 : 1, n = (gsize) O * I * kh * kw;
    gsize nb = m2i_npu_weights_blocked_count (O, I, kh, kw);
    g_assert_cmpuint (nb, ==, (gsize) TU_CEIL8 (O) * TU_CEIL8 (I) * kh * kw * 64);
    guint8 *w = g_malloc (n * es), *a = g_malloc (nb * es), *b = g_malloc (nb * es);
    for (gsize i = 0; i < n * es; i++)
      w[i] = (guint8) g_rand_int (r);
    memset (a, 0x99, nb * es);
    m2i_npu_weights_to_blocked (w, es, O, I, kh, kw, a);
    tu_block_weights (w, b, es, O, I, kh, kw);
    g_assert_cmpmem (a, nb * es, b, nb * es);
    g_free (w);
    g_free (a);
    g_free (b);
  }
  g_assert_cmpuint (m2i_npu_weights_blocked_count (0, 1, 1, 1), ==, 0);
  g_rand_free (r);
}

/* ---- pooling ------------------------------------------------------------------- */

static void
test_pool_sizes (void)
{
  /* squeezenet1.1's max pools (3x3, stride 2, ceil) and global average */
  static const struct { gint in, k, s, pb, pe; gboolean ceil_mode; gint out; } c[] = {
    { 113, 3, 2, 0, 0, TRUE, 56 }, { 56, 3, 2, 0, 0, TRUE, 28 },
    { 28, 3, 2, 0, 0, TRUE, 14 }, { 14, 14, 1, 0, 0, FALSE, 1 },
    { 56, 3, 2, 0, 0, FALSE, 27 },
    { 6, 3, 4, 2, 2, TRUE, 2 },     /* a third window would start in the end pad */
    { 6, 3, 4, 2, 2, FALSE, 2 },
    { 5, 2, 2, 0, 1, TRUE, 3 }, { 5, 2, 2, 0, 1, FALSE, 3 }, { 5, 2, 2, 0, 0, TRUE, 3 },
    { 5, 2, 2, 0, 0, FALSE, 2 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (c); i++) {
    M2iNpuPoolParams p = { M2I_NPU_POOL_MAX, c[i].k, 1, c[i].s, 1, c[i].pb, 0, c[i].pe, 0,
      c[i].ceil_mode };
    gint oh, ow;
    g_assert_true (m2i_npu_pool_output_size (&p, c[i].in, 3, &oh, &ow, NULL));
    g_assert_cmpint (oh, ==, c[i].out);
    g_assert_cmpint (ow, ==, 3);
  }
  GError *err = NULL;
  gint oh, ow;
  M2iNpuPoolParams bad = { M2I_NPU_POOL_AVG, 3, 3, 1, 1, 3, 0, 0, 0 };   /* pad == kernel */
  g_assert_false (m2i_npu_pool_output_size (&bad, 5, 5, &oh, &ow, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  M2iNpuPoolParams big = { M2I_NPU_POOL_MAX, 6, 6, 1, 1 };
  g_assert_false (m2i_npu_pool_output_size (&big, 5, 5, &oh, &ow, &err));
  g_clear_error (&err);
}

/* Round(num / den) by floor division and the remainder (den > 0). */
static gint64
ref_round_div (gint64 num, gint64 den, M2iMliRound mode)
{
  gint64 q = num / den, r = num % den;
  if (r < 0) {
    q--;
    r += den;
  }
  if (2 * r > den || (2 * r == den && (mode == M2I_MLI_ROUND_HALF_UP || q % 2 != 0)))
    q++;
  return q;
}

static void
run_pool (const M2iNpuPoolParams *p, M2iNpuPrecision prec, gint N, gint C, gint H,
    gint W, GRand *r)
{
  gint OH, OW;
  g_assert_true (m2i_npu_pool_output_size (p, H, W, &OH, &OW, NULL));
  gsize es = prec == M2I_NPU_FP16 ? 2 : 1, nx = (gsize) N * C * H * W;
  guint8 *x = g_malloc (nx * es), *y = g_malloc ((gsize) N * C * OH * OW * es);
  for (gsize i = 0; i < nx; i++) {
    if (es == 1)
      x[i] = (guint8) g_rand_int (r);
    else
      ((m2i_f16 *) x)[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -8, 8));
  }
  guint16 garbage = 0x7e00, zero16 = 0;
  gint8 zero8 = (gint8) p->zero_point;
  M2iNpuTensor ti, to;
  tu_tensor_new (&ti, prec, N, C, H, W, x, &garbage);
  tu_tensor_new (&to, prec, N, C, OH, OW, NULL, NULL);
  GError *err = NULL;
  g_assert_true (m2i_npu_pool_run (p, &ti, &to, 2, &err));
  g_assert_no_error (err);
  tu_unblock (to.data, y, es, N, C, OH, OW, es == 1 ? (gconstpointer) &zero8 : &zero16);
  for (gint n = 0; n < N; n++)
    for (gint c = 0; c < C; c++)
      for (gint oy = 0; oy < OH; oy++)
        for (gint ox = 0; ox < OW; ox++) {
          gsize yi = (((gsize) n * C + c) * OH + oy) * OW + ox;
          gint y0 = oy * p->stride_h - p->pad_top, x0 = ox * p->stride_w - p->pad_left;
          gint64 isum = 0, imax = G_MININT64, count = 0;
          double fsum = 0, fmax = -INFINITY, fabs_sum = 0;
          for (gint wy = y0; wy < y0 + p->kernel_h; wy++)
            for (gint xx = x0; xx < x0 + p->kernel_w; xx++) {
              gboolean in_pad_area = wy < H + p->pad_bottom && xx < W + p->pad_right;
              gboolean inside = wy >= 0 && wy < H && xx >= 0 && xx < W;
              if (p->exclude_pad ? inside : in_pad_area)
                count++;
              if (!inside)
                continue;
              gsize xi = (((gsize) n * C + c) * H + wy) * W + xx;
              if (es == 1) {
                gint64 v = (gint8) x[xi];
                isum += v - p->zero_point;
                imax = MAX (imax, v);
              } else {
                double v = m2i_f16_to_f32 (((m2i_f16 *) x)[xi]);
                fsum += v;
                fabs_sum += fabs (v);
                fmax = MAX (fmax, v);
              }
            }
          if (es == 1) {
            gint64 want = p->kind == M2I_NPU_POOL_MAX ? imax
                : CLAMP (p->zero_point + ref_round_div (isum, count, p->round), -128, 127);
            g_assert_cmpint ((gint8) y[yi], ==, want);
          } else {
            double got = m2i_f16_to_f32 (((m2i_f16 *) y)[yi]);
            if (p->kind == M2I_NPU_POOL_MAX)
              g_assert_cmpfloat (got, ==, fmax);
            else {
              double ref = fsum / count, k = p->kernel_h * p->kernel_w;
              double bound = ldexp (fabs (ref), -11)
                  + (k + 1) * ldexp (1, -24) * fabs_sum / count + ldexp (1, -24);
              g_assert_cmpfloat (fabs (got - ref), <=, bound);
            }
          }
        }
  g_free (x);
  g_free (y);
  g_free (ti.data);
  g_free (to.data);
}

static void
test_pool (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (12);
  static const M2iNpuPoolParams ps[] = {
    { M2I_NPU_POOL_MAX, 3, 3, 2, 2, 0, 0, 0, 0, TRUE, FALSE, 0, 5 },
    { M2I_NPU_POOL_MAX, 2, 3, 2, 1, 1, 2, 1, 0, FALSE, FALSE, 0, -3 },
    { M2I_NPU_POOL_AVG, 3, 3, 1, 1, 1, 1, 1, 1, FALSE, TRUE, M2I_MLI_ROUND_HALF_UP, 4 },
    { M2I_NPU_POOL_AVG, 3, 3, 1, 1, 1, 1, 1, 1, FALSE, FALSE, M2I_MLI_ROUND_HALF_EVEN, -9 },
    { M2I_NPU_POOL_AVG, 2, 2, 2, 2, 0, 0, 0, 0, FALSE, TRUE, M2I_MLI_ROUND_HALF_EVEN, 0 },
    { M2I_NPU_POOL_AVG, 3, 2, 3, 2, 2, 1, 1, 1, TRUE, FALSE, M2I_MLI_ROUND_HALF_UP, 17 },
    { M2I_NPU_POOL_AVG, 3, 2, 3, 2, 2, 1, 1, 1, TRUE, TRUE, M2I_MLI_ROUND_HALF_EVEN, 17 },
    { M2I_NPU_POOL_AVG, 7, 9, 1, 1, 0, 0, 0, 0, FALSE, TRUE, M2I_MLI_ROUND_HALF_UP, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ps); i++) {
    run_pool (&ps[i], M2I_NPU_INT8, 2, 13, 7, 9, r);
    run_pool (&ps[i], M2I_NPU_FP16, 1, 11, 7, 9, r);
    run_pool (&ps[i], M2I_NPU_INT8, 1, 8, 11, 10, r);
  }
  g_rand_free (r);
}

/* fp16 pooling, bit for bit: the engine's contract (docs/npu.md) written
 * here in fp32 — MAX keeps f > acc ? f : acc from -inf, AVG adds the
 * window's values in row-major order from +0 and divides once by the count,
 * then one rounding to fp16 — on data with signed zeros, infinities, NaNs
 * and subnormals. */
static void
run_pool_f16_exact (const M2iNpuPoolParams *p, gint N, gint C, gint H, gint W, GRand *r)
{
  gint OH, OW;
  g_assert_true (m2i_npu_pool_output_size (p, H, W, &OH, &OW, NULL));
  gsize nx = (gsize) N * C * H * W;
  m2i_f16 *x = g_new (m2i_f16, nx);
  for (gsize i = 0; i < nx; i++) {
    switch (g_rand_int_range (r, 0, 40)) {
      case 0: x[i] = 0x8000; break;                 /* -0 */
      case 1: x[i] = 0x0000; break;
      case 2: x[i] = g_rand_boolean (r) ? 0x7c00 : 0xfc00; break;    /* ±inf */
      case 3: x[i] = 0x7e00; break;                 /* NaN */
      case 4: x[i] = (m2i_f16) g_rand_int_range (r, 1, 0x400); break;  /* subnormal */
      default: x[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -1000, 1000));
    }
  }
  m2i_f16 *out = g_new (m2i_f16, (gsize) N * C * OH * OW);
  m2i_f16 garbage = 0x7e00, zero = 0;
  M2iNpuTensor ti, to;
  tu_tensor_new (&ti, M2I_NPU_FP16, N, C, H, W, x, &garbage);
  tu_tensor_new (&to, M2I_NPU_FP16, N, C, OH, OW, NULL, NULL);
  for (gint threads = 1; threads <= 2; threads++) {
    memset (to.data, 0xcd, to.capacity);
    GError *err = NULL;
    g_assert_true (m2i_npu_pool_run (p, &ti, &to, threads, &err));
    g_assert_no_error (err);
    tu_unblock (to.data, out, 2, N, C, OH, OW, &zero);
    for (gint n = 0; n < N; n++)
      for (gint c = 0; c < C; c++)
        for (gint oy = 0; oy < OH; oy++)
          for (gint ox = 0; ox < OW; ox++) {
            m2i_f16 got = out[(((gsize) n * C + c) * OH + oy) * OW + ox];
            gint y0 = oy * p->stride_h - p->pad_top, x0 = ox * p->stride_w - p->pad_left;
            gint count = 0;
            float acc = p->kind == M2I_NPU_POOL_MAX ? -INFINITY : 0.0f;
            for (gint y = y0; y < y0 + p->kernel_h; y++)
              for (gint xx = x0; xx < x0 + p->kernel_w; xx++) {
                gboolean inside = y >= 0 && y < H && xx >= 0 && xx < W;
                if (p->exclude_pad ? inside : (y < H + p->pad_bottom && xx < W + p->pad_right))
                  count++;
                if (!inside)
                  continue;
                float v = m2i_f16_to_f32 (x[(((gsize) n * C + c) * H + y) * W + xx]);
                if (p->kind == M2I_NPU_POOL_MAX)
                  acc = v > acc ? v : acc;
                else
                  acc = acc + v;
              }
            if (p->kind == M2I_NPU_POOL_AVG)
              acc = acc / (float) count;
            m2i_f16 want = m2i_f32_to_f16 (acc);
            if (isnan (acc))
              g_assert_true ((got & 0x7c00) == 0x7c00 && (got & 0x3ff));
            else if (got != want)
              g_error ("pool (kind %d, %dx%d s%d,%d) n %d c %d y %d x %d: got 0x%04x, "
                  "expected 0x%04x", p->kind, p->kernel_h, p->kernel_w, p->stride_h,
                  p->stride_w, n, c, oy, ox, got, want);
          }
  }
  g_free (x);
  g_free (out);
  g_free (ti.data);
  g_free (to.data);
}

static void
test_pool_f16_exact (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (15);
  static const M2iNpuPoolParams ps[] = {
    /* squeezenet's: 3x3 s2 ceil, and the global average (ReduceMean) */
    { M2I_NPU_POOL_MAX, 3, 3, 2, 2, 0, 0, 0, 0, TRUE, FALSE, 0, 0 },
    { M2I_NPU_POOL_AVG, 13, 13, 13, 13, 0, 0, 0, 0, FALSE, TRUE, 0, 0 },
    { M2I_NPU_POOL_MAX, 2, 3, 2, 1, 1, 2, 1, 0, FALSE, FALSE, 0, 0 },
    { M2I_NPU_POOL_AVG, 3, 3, 1, 1, 1, 1, 1, 1, FALSE, TRUE, 0, 0 },
    { M2I_NPU_POOL_AVG, 3, 3, 1, 1, 1, 1, 1, 1, FALSE, FALSE, 0, 0 },
    { M2I_NPU_POOL_AVG, 3, 2, 3, 2, 2, 1, 1, 1, TRUE, FALSE, 0, 0 },
    { M2I_NPU_POOL_MAX, 3, 2, 3, 2, 2, 1, 1, 1, TRUE, FALSE, 0, 0 },
    { M2I_NPU_POOL_AVG, 2, 2, 2, 2, 0, 0, 0, 0, FALSE, TRUE, 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ps); i++) {
    gint H = i == 1 ? 13 : 15, W = i == 1 ? 13 : 18;
    run_pool_f16_exact (&ps[i], 1, 21, H, W, r);
    run_pool_f16_exact (&ps[i], 2, 8, i == 1 ? H : H + 1, i == 1 ? W : W - 3, r);
  }
  g_rand_free (r);
}

/* ---- PReLU ---------------------------------------------------------------------- */

/* fp16: x < 0 ? x·slope : x in fp32, one rounding — exactly, per channel and
 * with one slope, out of place and in place. */
static void
test_prelu_fp16 (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (16);
  gint N = 2, C = 19, H = 3, W = 11;
  gsize n = (gsize) N * C * H * W;
  m2i_f16 *x = g_new (m2i_f16, n), *got = g_new (m2i_f16, n);
  float slopes[19];
  for (gint c = 0; c < C; c++)
    slopes[c] = (float) g_rand_double_range (r, -1.5, 1.5);
  slopes[3] = 0;
  for (gsize i = 0; i < n; i++)
    x[i] = i % 17 == 0 ? 0x8000 : m2i_f32_to_f16 ((float) g_rand_double_range (r, -300, 300));
  m2i_f16 pad = 0x7e00, zero = 0;
  for (gint mode = 0; mode < 3; mode++) {      /* per channel; one slope; in place */
    M2iNpuPreluParams p = { mode == 1 ? 1 : C, mode == 1 ? &slopes[5] : slopes };
    M2iNpuTensor ti, to;
    tu_tensor_new (&ti, M2I_NPU_FP16, N, C, H, W, x, &pad);
    if (mode == 2)
      to = ti;
    else
      tu_tensor_new (&to, M2I_NPU_FP16, N, C, H, W, NULL, NULL);
    GError *err = NULL;
    g_assert_true (m2i_npu_prelu_run (&p, &ti, &to, 2, &err));
    g_assert_no_error (err);
    tu_unblock (to.data, got, 2, N, C, H, W, &zero);
    for (gsize i = 0; i < n; i++) {
      float v = m2i_f16_to_f32 (x[i]);
      float s = mode == 1 ? slopes[5] : slopes[i / (H * W) % C];
      g_assert_cmphex (got[i], ==, m2i_f32_to_f16 (v < 0 ? v * s : v));
    }
    if (mode != 2)
      g_free (to.data);
    g_free (ti.data);
  }
  g_free (x);
  g_free (got);
  g_rand_free (r);
}

/* int8: TFLite's quantized PReLU (literal SRDHM / RoundingDivideByPOT), the
 * slope folded into the negative branch; and the parameters implement the
 * real-valued PReLU within half a step. */
static void
test_prelu_int8 (void)
{
  GRand *r = g_rand_new_with_seed (17);
  gint N = 1, C = 21, H = 4, W = 9;
  gsize n = (gsize) N * C * H * W;
  gint8 *x = g_malloc (n), *got = g_malloc (n);
  for (int trial = 0; trial < 6; trial++) {
    gint ns = trial % 2 ? 1 : C;
    float slopes[21];
    for (gint c = 0; c < ns; c++)
      slopes[c] = (float) g_rand_double_range (r, -2, 2);
    double si = g_rand_double_range (r, 0.005, 0.1), so = g_rand_double_range (r, 0.005, 0.1);
    gint32 zi = g_rand_int_range (r, -40, 40), zo = g_rand_int_range (r, -40, 40);
    gint32 nm[21];
    gint8 nsh[21];
    M2iNpuPreluParams p;
    GError *err = NULL;
    g_assert_true (m2i_npu_prelu_params_from_scales (si, zi, so, zo, slopes, ns, nm, nsh, &p, &err));
    g_assert_no_error (err);
    if (trial == 4) {
      p.act_min = -100;
      p.act_max = 90;
    }
    for (gsize i = 0; i < n; i++)
      x[i] = (gint8) g_rand_int_range (r, -128, 128);
    gint8 pad = 77, zero = (gint8) CLAMP (zo, p.act_min, p.act_max);
    M2iNpuTensor ti, to;
    tu_tensor_new (&ti, M2I_NPU_INT8, N, C, H, W, x, &pad);
    tu_tensor_new (&to, M2I_NPU_INT8, N, C, H, W, NULL, NULL);
    g_assert_true (m2i_npu_prelu_run (&p, &ti, &to, 2, &err));
    g_assert_no_error (err);
    tu_unblock (to.data, got, 1, N, C, H, W, &zero);
    for (gsize i = 0; i < n; i++) {
      gint k = ns == 1 ? 0 : (gint) (i / (H * W) % C);
      gint32 d = x[i] - zi;
      gint64 ds = (gint64) d * ((gint64) 1 << p.left_shift);
      gint64 q = d >= 0 ? tu_mbqm (ds, p.pos_multiplier, p.pos_shift)
          : tu_mbqm (ds, nm[k], nsh[k]);
      g_assert_cmpint (got[i], ==, CLAMP (q + zo, p.act_min, p.act_max));
      double real = (d < 0 ? slopes[k] : 1.0) * d * si / so + zo;
      if (real > p.act_min + 1 && real < p.act_max - 1)
        g_assert_cmpfloat (fabs (got[i] - real), <=, 0.5 + 1e-3);
    }
    g_free (ti.data);
    g_free (to.data);
  }
  g_free (x);
  g_free (got);
  g_rand_free (r);
}

static void
test_prelu_errors (void)
{
  m2i_f16 a[8 * 4], b[8 * 4];
  float slopes[3] = { 0.5f, NAN, 1 };
  M2iNpuTensor ta, tb;
  m2i_npu_tensor_init (&ta, M2I_NPU_FP16, 1, 3, 2, 2, a, sizeof a);
  m2i_npu_tensor_init (&tb, M2I_NPU_FP16, 1, 3, 2, 2, b, sizeof b);
  GError *err = NULL;
  M2iNpuPreluParams p = { 2, slopes };             /* neither 1 nor C */
  g_assert_false (m2i_npu_prelu_run (&p, &ta, &tb, 1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  p.n = 3;                                         /* a NaN slope */
  g_assert_false (m2i_npu_prelu_run (&p, &ta, &tb, 1, &err));
  g_clear_error (&err);
  g_assert_false (m2i_npu_prelu_run (NULL, &ta, &tb, 1, &err));
  g_clear_error (&err);
  p.n = 1;
  tb.w = 1;                                        /* shape */
  g_assert_false (m2i_npu_prelu_run (&p, &ta, &tb, 1, &err));
  g_clear_error (&err);
  M2iNpuTensor half;                               /* overlapping, not in place */
  m2i_npu_tensor_init (&half, M2I_NPU_FP16, 1, 3, 2, 2, a + 8, sizeof a - 16);
  half.h = 1;
  ta.h = 1;
  g_assert_false (m2i_npu_prelu_run (&p, &ta, &half, 1, &err));
  g_clear_error (&err);
  gint8 i8[64];
  M2iNpuTensor ti;
  m2i_npu_tensor_init (&ti, M2I_NPU_INT8, 1, 3, 2, 2, i8, sizeof i8);
  g_assert_false (m2i_npu_prelu_run (&p, &ti, &ti, 1, &err));   /* int8 without multipliers */
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  gint32 nm[1];
  gint8 ns[1];
  g_assert_false (m2i_npu_prelu_params_from_scales (0.1, 0, 0.1, 0, &slopes[1], 1, nm, ns, &p,
          &err));
  g_clear_error (&err);
  g_assert_false (m2i_npu_prelu_params_from_scales (-0.1, 0, 0.1, 0, slopes, 1, nm, ns, &p, &err));
  g_clear_error (&err);
}

/* ---- add ------------------------------------------------------------------------ */

/* The inputs of an add, dense @a and @b blocked (padding lanes @pad), and
 * an output filled with 0xcd. */
typedef struct {
  M2iNpuTensor a, b, out;
} AddTensors;

static void
add_tensors_new (AddTensors *t, M2iNpuPrecision prec, gint N, gint C, gint H, gint W,
    const void *a, const void *b, const void *pad)
{
  tu_tensor_new (&t->a, prec, N, C, H, W, a, pad);
  tu_tensor_new (&t->b, prec, N, C, H, W, b, pad);
  tu_tensor_new (&t->out, prec, N, C, H, W, NULL, NULL);
}

static void
add_tensors_free (AddTensors *t)
{
  g_free (t->a.data);
  g_free (t->b.data);
  g_free (t->out.data);
}

static void
test_add_int8 (void)
{
  GRand *r = g_rand_new_with_seed (13);
  gint N = 2, C = 13, H = 5, W = 6;
  gsize n = (gsize) N * C * H * W;
  gint8 *a = g_malloc (n), *b = g_malloc (n), *got = g_malloc (n);
  for (int trial = 0; trial < 6; trial++) {
    double sa = g_rand_double_range (r, 0.01, 0.2), sb = g_rand_double_range (r, 0.01, 0.2);
    double so = g_rand_double_range (r, 0.02, 0.3);
    gint32 za = g_rand_int_range (r, -30, 30), zb = g_rand_int_range (r, -30, 30), zo = g_rand_int_range (r, -10, 10);
    M2iNpuAddParams p;
    GError *err = NULL;
    g_assert_true (m2i_npu_add_params_from_scales (sa, za, sb, zb, so, zo, &p, &err));
    if (trial % 2) {                  /* fused ReLU */
      p.act_min = zo;
      p.act_max = 127;
    }
    for (gsize i = 0; i < n; i++) {
      a[i] = (gint8) g_rand_int_range (r, -128, 128);
      b[i] = (gint8) g_rand_int_range (r, -128, 128);
    }
    gint8 pad = 99, zero = (gint8) CLAMP (zo, p.act_min, p.act_max);
    AddTensors t;
    add_tensors_new (&t, M2I_NPU_INT8, N, C, H, W, a, b, &pad);
    g_assert_true (m2i_npu_add_run (&p, &t.a, &t.b, &t.out, 2, &err));
    g_assert_no_error (err);
    tu_unblock (t.out.data, got, 1, N, C, H, W, &zero);
    for (gsize i = 0; i < n; i++) {
      /* TFLite's quantized Add, literally */
      gint32 sa_ = tu_mbqm ((gint64) (a[i] - za) * (1 << p.left_shift), p.a_multiplier, p.a_shift);
      gint32 sb_ = tu_mbqm ((gint64) (b[i] - zb) * (1 << p.left_shift), p.b_multiplier, p.b_shift);
      gint64 q = (gint64) tu_mbqm (sa_ + sb_, p.out_multiplier, p.out_shift) + zo;
      g_assert_cmpint (got[i], ==, (gint8) CLAMP (q, p.act_min, p.act_max));
      /* and the parameters implement the real-valued sum */
      double real = ((a[i] - za) * sa + (b[i] - zb) * sb) / so + zo;
      if (real > p.act_min + 1 && real < p.act_max - 1)
        g_assert_cmpfloat (fabs (got[i] - real), <=, 0.5 + 1e-3);
    }
    add_tensors_free (&t);
  }
  GError *err = NULL;
  M2iNpuAddParams p;
  g_assert_false (m2i_npu_add_params_from_scales (0, 0, 1, 0, 1, 0, &p, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_free (a);
  g_free (b);
  g_free (got);
  g_rand_free (r);
}

static void
test_add_fp16 (void)
{
  GRand *r = g_rand_new_with_seed (14);
  gint N = 1, C = 21, H = 4, W = 37;
  gsize n = (gsize) N * C * H * W;
  m2i_f16 *a = g_new (m2i_f16, n), *b = g_new (m2i_f16, n), *got = g_new (m2i_f16, n);
  for (gsize i = 0; i < n; i++) {
    a[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -100, 100));
    b[i] = m2i_f32_to_f16 ((float) (g_rand_double_range (r, -1, 1) * pow (10, g_rand_int_range (r, -4, 3))));
  }
  m2i_f16 pad = 0x7c00, zero = 0;
  AddTensors t;
  add_tensors_new (&t, M2I_NPU_FP16, N, C, H, W, a, b, &pad);
  M2iNpuAddParams p = { 0 };
  p.f_min = -50;
  p.f_max = INFINITY;
  GError *err = NULL;
  g_assert_true (m2i_npu_add_run (&p, &t.a, &t.b, &t.out, 1, &err));
  g_assert_no_error (err);
  tu_unblock (t.out.data, got, 2, N, C, H, W, &zero);
  for (gsize i = 0; i < n; i++) {
    double exact = (double) m2i_f16_to_f32 (a[i]) + m2i_f16_to_f32 (b[i]);
    exact = MAX (exact, -50.0);
    /* one rounding to fp16: within half an ulp */
    g_assert_cmpfloat (fabs (m2i_f16_to_f32 (got[i]) - exact), <=,
        ldexp (fabs (exact), -11) + ldexp (1, -25));
  }
  /* shapes must match */
  t.out.w = W - 1;
  g_assert_false (m2i_npu_add_run (&p, &t.a, &t.b, &t.out, 1, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  p.f_min = 1;
  p.f_max = 0;
  t.out.w = W;
  g_assert_false (m2i_npu_add_run (&p, &t.a, &t.b, &t.out, 1, &err));
  g_clear_error (&err);
  add_tensors_free (&t);
  g_free (a);
  g_free (b);
  g_free (got);
  g_rand_free (r);
}

/* fp16 add with a fused PReLU and clamp, exactly: v = a + b in fp32,
 * v < 0 ? v·slope : v, clamp, one rounding; per channel and one slope. */
static void
test_add_fp16_prelu (void)
{
  tu_log_cpu ();
  GRand *r = g_rand_new_with_seed (18);
  gint N = 2, C = 13, H = 3, W = 21;
  gsize n = (gsize) N * C * H * W;
  m2i_f16 *a = g_new (m2i_f16, n), *b = g_new (m2i_f16, n), *got = g_new (m2i_f16, n);
  float slopes[13];
  for (gint c = 0; c < C; c++)
    slopes[c] = (float) g_rand_double_range (r, -1, 1);
  for (gsize i = 0; i < n; i++) {
    a[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -100, 100));
    b[i] = m2i_f32_to_f16 ((float) g_rand_double_range (r, -100, 100));
  }
  m2i_f16 pad = 0x7e00, zero = 0;
  AddTensors t;
  add_tensors_new (&t, M2I_NPU_FP16, N, C, H, W, a, b, &pad);
  for (gint mode = 0; mode < 2; mode++) {
    M2iNpuAddParams p = { 0 };
    p.f_min = mode ? -30 : -INFINITY;
    p.f_max = mode ? 70 : INFINITY;
    p.f_slope = mode ? &slopes[4] : slopes;
    p.n_slope = mode ? 1 : C;
    memset (t.out.data, 0xcd, t.out.capacity);
    GError *err = NULL;
    g_assert_true (m2i_npu_add_run (&p, &t.a, &t.b, &t.out, 2, &err));
    g_assert_no_error (err);
    tu_unblock (t.out.data, got, 2, N, C, H, W, &zero);
    for (gsize i = 0; i < n; i++) {
      float v = m2i_f16_to_f32 (a[i]) + m2i_f16_to_f32 (b[i]);
      float s = mode ? slopes[4] : slopes[i / (H * W) % C];
      v = v < 0 ? v * s : v;
      v = v < p.f_min ? p.f_min : v > p.f_max ? p.f_max : v;
      g_assert_cmphex (got[i], ==, m2i_f32_to_f16 (v));
    }
    /* a slope count that is neither 1 nor C */
    p.n_slope = 2;
    g_assert_false (m2i_npu_add_run (&p, &t.a, &t.b, &t.out, 1, &err));
    g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
    g_clear_error (&err);
  }
  add_tensors_free (&t);
  g_free (a);
  g_free (b);
  g_free (got);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/npu/ops/layout", test_layout);
  g_test_add_func ("/npu/ops/layout-errors", test_layout_errors);
  g_test_add_func ("/npu/ops/convert-blocked", test_convert_blocked);
  g_test_add_func ("/npu/ops/convert-blocked-fp16", test_convert_blocked_f16);
  g_test_add_func ("/npu/ops/weights-blocked", test_weights_blocked);
  g_test_add_func ("/npu/ops/pool-sizes", test_pool_sizes);
  g_test_add_func ("/npu/ops/pool", test_pool);
  g_test_add_func ("/npu/ops/pool-fp16-exact", test_pool_f16_exact);
  g_test_add_func ("/npu/ops/prelu-fp16", test_prelu_fp16);
  g_test_add_func ("/npu/ops/prelu-int8", test_prelu_int8);
  g_test_add_func ("/npu/ops/prelu-errors", test_prelu_errors);
  g_test_add_func ("/npu/ops/add-int8", test_add_int8);
  g_test_add_func ("/npu/ops/add-fp16", test_add_fp16);
  g_test_add_func ("/npu/ops/add-fp16-prelu", test_add_fp16_prelu);
  return g_test_run ();
}
