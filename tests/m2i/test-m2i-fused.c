/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fused path (m2i_plan_run) against the reference path
 * (m2i_reference_run) for every single op and every fuse pattern, NV12 and
 * I420 in, RGB and BGR out, both profiles, several resize modes, awkward
 * sizes (1x1 outputs, widths off the SIMD width, up- and downscale, 8K) and
 * padded strides. u8 results must be identical, fp16 within one ulp, fp32
 * within 1e-5 absolute. Run once per SIMD level (see meson.build). */
#include "m2i-test-util.h"

typedef enum { C_CSC = 1, C_CVT16, C_CVT32, C_RESIZE, C_PERM, C_NORM, C_END = 0 } Step;

typedef struct {
  const char *name;
  Step steps[7];
} Chain;

static const Chain chains[] = {
  { "csc", { C_CSC } },
  { "csc-permute", { C_CSC, C_PERM } },
  { "csc-cvt16-permute", { C_CSC, C_CVT16, C_PERM } },
  { "csc-resize", { C_CSC, C_RESIZE } },
  { "csc-resize-permute", { C_CSC, C_RESIZE, C_PERM } },
  { "csc-cvt16-resize-permute", { C_CSC, C_CVT16, C_RESIZE, C_PERM } },
  { "csc-cvt16-resize-permute-norm", { C_CSC, C_CVT16, C_RESIZE, C_PERM, C_NORM } },
  { "csc-cvt16-resize-norm-permute", { C_CSC, C_CVT16, C_RESIZE, C_NORM, C_PERM } },
  { "csc-cvt16-permute-norm", { C_CSC, C_CVT16, C_PERM, C_NORM } },
  { "csc-cvt32-resize-permute-norm", { C_CSC, C_CVT32, C_RESIZE, C_PERM, C_NORM } },
  { "csc-cvt32-permute", { C_CSC, C_CVT32, C_PERM } },
  { "csc-resize-cvt16-permute", { C_CSC, C_RESIZE, C_CVT16, C_PERM } },
  { "csc-permute-resize", { C_CSC, C_PERM, C_RESIZE } },
  { "csc-cvt16", { C_CSC, C_CVT16 } },
  { "csc-cvt16-resize", { C_CSC, C_CVT16, C_RESIZE } },
  { "csc-cvt16-norm-resize-permute", { C_CSC, C_CVT16, C_NORM, C_RESIZE, C_PERM } },
};

static M2iNormParams
imagenet_norm (void)
{
  const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  M2iNormParams n;
  g_assert_true (m2i_norm_params_from_mean_std (&n, mean, std, 1.0f / 255.0f));
  return n;
}

/* Builds the op list of @c; returns the output format. */
static M2iFormat
build (const Chain *c, M2iChannelOrder order, const M2iResizeParams *rp, M2iOpList *ops)
{
  M2iNormParams n = imagenet_norm ();
  M2iLayout l = M2I_LAYOUT_INTERLEAVED;
  M2iDataType dt = M2I_DTYPE_U8;
  m2i_op_list_init (ops);
  for (int i = 0; c->steps[i] != C_END; i++) {
    switch (c->steps[i]) {
      case C_CSC: m2i_op_list_add_csc (ops, order); break;
      case C_CVT16: m2i_op_list_add_convert (ops, M2I_DTYPE_F16); dt = M2I_DTYPE_F16; break;
      case C_CVT32: m2i_op_list_add_convert (ops, M2I_DTYPE_F32); dt = M2I_DTYPE_F32; break;
      case C_RESIZE: m2i_op_list_add_resize (ops, rp); break;
      case C_PERM: m2i_op_list_add_permute (ops); l = M2I_LAYOUT_PLANAR; break;
      case C_NORM: m2i_op_list_add_norm (ops, &n); break;
      default: g_assert_not_reached ();
    }
  }
  return m2i_format_compose (l, dt, order);
}

static gboolean
has_step (const Chain *c, Step s)
{
  for (int i = 0; c->steps[i] != C_END; i++)
    if (c->steps[i] == s)
      return TRUE;
  return FALSE;
}

static guint
allowed_diff (M2iFormat f)
{
  switch (m2i_format_dtype (f)) {
    case M2I_DTYPE_U8: return 0;
    case M2I_DTYPE_F16: return 1;
    default: return 10;          /* 1e-5 */
  }
}

/* One comparison: fused (profile, threads) vs reference. */
static void
compare_one (M2iFormat in_fmt, gint iw, gint ih, const Chain *c, M2iChannelOrder order,
    const M2iResizeParams *rp, M2iProfile prof, gint threads, gsize in_pad, gsize out_pad,
    GRand *rand)
{
  M2iOpList ops;
  M2iFormat of = build (c, order, rp, &ops);
  gint ow = has_step (c, C_RESIZE) ? rp->out_width : iw;
  gint oh = has_step (c, C_RESIZE) ? rp->out_height : ih;
  TestImage in, ref, out;
  test_image_alloc_padded (&in, in_fmt, iw, ih, in_pad, 0);
  test_image_pattern (&in, rand);
  test_image_alloc_padded (&ref, of, ow, oh, 0, 0);
  test_image_alloc_padded (&out, of, ow, oh, out_pad, 0xa5);
  GError *err = NULL;
  g_assert_true (m2i_reference_run (&in.img, &ops, &ref.img, &err));
  g_assert_no_error (err);
  M2iPlanOptions o = { prof, threads };
  M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
  g_assert_no_error (err);
  g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
  g_assert_no_error (err);
  guint d = test_image_max_diff (&ref.img, &out.img);
  if (d > allowed_diff (of)) {
    gchar *desc = m2i_plan_to_string (plan);
    g_printerr ("%s %dx%d %s -> %s %dx%d: max diff %u\n%s\n", m2i_format_to_string (in_fmt),
        iw, ih, c->name, m2i_format_to_string (of), ow, oh, d, desc);
    g_free (desc);
  }
  g_assert_cmpuint (d, <=, allowed_diff (of));
  g_assert_true (test_image_padding_intact (&out, 0xa5));
  /* a second run with the same plan gives the same result (no stale scratch) */
  memset (out.img.data[0], 0, 1);
  g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
  g_assert_cmpuint (test_image_max_diff (&ref.img, &out.img), <=, allowed_diff (of));
  m2i_plan_free (plan);
  test_image_free (&in);
  test_image_free (&ref);
  test_image_free (&out);
}

static void
resize_params (M2iResizeParams *p, M2iResizeMode mode, gint w, gint h)
{
  m2i_resize_params_init (p, w, h);
  p->mode = mode;
  p->coord = mode == M2I_RESIZE_NEAREST ? M2I_COORD_ASYMMETRIC : M2I_COORD_HALF_PIXEL;
}

/* Every chain x NV12/I420 x RGB/BGR x both profiles, linear downscale by a
 * non-integer factor, odd-ish width (not a multiple of 32 or 64). */
static void
test_all_chains (void)
{
  GRand *rand = g_rand_new_with_seed (1);
  M2iResizeParams rp;
  resize_params (&rp, M2I_RESIZE_LINEAR, 37, 23);
  for (guint c = 0; c < G_N_ELEMENTS (chains); c++)
    for (int f = 0; f < 2; f++)
      for (int o = 0; o < 2; o++)
        for (int prof = 0; prof < 2; prof++)
          compare_one (f ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8, 118, 54,
              &chains[c], o ? M2I_ORDER_BGR : M2I_ORDER_RGB, &rp, prof, 2, 0, 0, rand);
  g_rand_free (rand);
}

/* Resize modes through the fused pipeline (compacted and full-row). */
static void
test_resize_modes (void)
{
  GRand *rand = g_rand_new_with_seed (2);
  static const M2iResizeMode modes[] = { M2I_RESIZE_NEAREST, M2I_RESIZE_LINEAR,
    M2I_RESIZE_LINEAR_ONNX, M2I_RESIZE_CUBIC, M2I_RESIZE_BILINEAR_PILLOW,
    M2I_RESIZE_BICUBIC_PILLOW };
  static const gint sizes[][2] = { { 19, 11 }, { 150, 90 }, { 1, 1 }, { 64, 3 } };
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      for (int aa = 0; aa < 2; aa++) {
        M2iResizeParams rp;
        resize_params (&rp, modes[m], sizes[s][0], sizes[s][1]);
        rp.antialias = aa;
        for (int c = 4; c <= 5; c++)     /* u8 and fp16 resize */
          compare_one (s & 1 ? M2I_FORMAT_SP_NV12_8 : M2I_FORMAT_PL_YUV420_8, 96, 60,
              &chains[c], M2I_ORDER_RGB, &rp, M2I_PROFILE_DEFAULT, 2, 0, 0, rand);
      }
  g_rand_free (rand);
}

/* 1x1 output from a 2x2 frame, tiny frames, widths around the SIMD block,
 * thread counts larger than the rows. */
static void
test_awkward_sizes (void)
{
  GRand *rand = g_rand_new_with_seed (3);
  static const gint dims[][2] = { { 2, 2 }, { 2, 8 }, { 30, 2 }, { 32, 4 }, { 34, 6 },
    { 62, 10 }, { 64, 2 }, { 66, 4 }, { 130, 2 } };
  for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
    for (guint c = 0; c < G_N_ELEMENTS (chains); c++)
      for (gint threads = 1; threads <= 3; threads += 2) {
        M2iResizeParams rp;
        resize_params (&rp, M2I_RESIZE_LINEAR, 1 + (gint) d * 7 % 5, 1);
        compare_one (d & 1 ? M2I_FORMAT_SP_NV12_8 : M2I_FORMAT_PL_YUV420_8,
            dims[d][0], dims[d][1], &chains[c], d & 2 ? M2I_ORDER_BGR : M2I_ORDER_RGB,
            &rp, M2I_PROFILE_EXTENDED, threads, 0, 0, rand);
      }
  g_rand_free (rand);
}

static void
test_upscale (void)
{
  GRand *rand = g_rand_new_with_seed (4);
  M2iResizeParams rp;
  resize_params (&rp, M2I_RESIZE_CUBIC, 161, 97);
  for (guint c = 0; c < G_N_ELEMENTS (chains); c++)
    compare_one (M2I_FORMAT_SP_NV12_8, 40, 26, &chains[c], M2I_ORDER_BGR, &rp,
        M2I_PROFILE_EXTENDED, 2, 0, 0, rand);
  g_rand_free (rand);
}

/* Padded input and output rows (odd amounts), padding must stay untouched. */
static void
test_padded_strides (void)
{
  GRand *rand = g_rand_new_with_seed (5);
  M2iResizeParams rp;
  resize_params (&rp, M2I_RESIZE_LINEAR, 45, 31);
  for (guint c = 0; c < G_N_ELEMENTS (chains); c++)
    for (int f = 0; f < 2; f++)
      compare_one (f ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8, 100, 62, &chains[c],
          M2I_ORDER_RGB, &rp, M2I_PROFILE_EXTENDED, 2, 14 + 2 * f, 6 + f, rand);
  g_rand_free (rand);
}

/* 8K NV12 frames to 224x224 (the fused path converts only what it needs). */
static void
test_8k (void)
{
  GRand *rand = g_rand_new_with_seed (6);
  M2iResizeParams rp;
  resize_params (&rp, M2I_RESIZE_LINEAR, 224, 224);
  compare_one (M2I_FORMAT_SP_NV12_8, 7680, 4320, &chains[6], M2I_ORDER_RGB, &rp,
      M2I_PROFILE_EXTENDED, 2, 64, 0, rand);
  compare_one (M2I_FORMAT_PL_YUV420_8, 7680, 4320, &chains[4], M2I_ORDER_BGR, &rp,
      M2I_PROFILE_DEFAULT, 2, 0, 0, rand);
  g_rand_free (rand);
}

/* Two-tap linear downscales at scales and widths that take every load mode
 * of the float pair kernels (VBMI byte permutes over windows; 16-byte
 * windows with two outputs per window, and with one where a block spans
 * more; the scalar fill for tails), rows pairs that share a chroma row and
 * pairs that do not, NV12 and I420, both channel orders, one and two
 * slices; u8 (exact), fp16 and fp16 + norm. Vertical steps of 2 or more
 * take fpair_out (one sweep per output row); the last two cases (steps 1.2
 * and 1.25) the ring: fpair_rows, then vfinish_f16. */
static void
test_float_pairs (void)
{
  GRand *rand = g_rand_new_with_seed (8);
  static const gint cases[][4] = {       /* in w, in h, out w, out h */
    { 1920, 1080, 224, 224 }, { 1920, 1080, 300, 169 }, { 1280, 720, 213, 120 },
    { 640, 480, 100, 75 }, { 3840, 360, 224, 60 }, { 2600, 64, 70, 9 },
    { 256, 40, 17, 19 }, { 130, 18, 40, 7 }, { 1000, 30, 499, 14 },
    { 640, 48, 100, 40 }, { 1000, 30, 499, 24 },
  };
  static const int chain_ids[] = { 4, 5, 6 };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    for (guint c = 0; c < G_N_ELEMENTS (chain_ids); c++) {
      M2iResizeParams rp;
      resize_params (&rp, M2I_RESIZE_LINEAR, cases[k][2], cases[k][3]);
      compare_one (k & 1 ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8, cases[k][0],
          cases[k][1], &chains[chain_ids[c]], (k + c) & 1 ? M2I_ORDER_BGR : M2I_ORDER_RGB,
          &rp, M2I_PROFILE_EXTENDED, 1 + (gint) (k % 2), 0, 0, rand);
      compare_one (k & 1 ? M2I_FORMAT_SP_NV12_8 : M2I_FORMAT_PL_YUV420_8, cases[k][0],
          cases[k][1], &chains[chain_ids[c]], (k + c) & 1 ? M2I_ORDER_RGB : M2I_ORDER_BGR,
          &rp, M2I_PROFILE_DEFAULT, 2, 0, 0, rand);
    }
  g_rand_free (rand);
}

/* The ops that do not start with csc, alone, as elements use them. */
static void
test_single_ops (void)
{
  GRand *rand = g_rand_new_with_seed (7);
  M2iNormParams n = imagenet_norm ();
  M2iResizeParams rp;
  resize_params (&rp, M2I_RESIZE_LINEAR, 33, 17);
  struct { M2iFormat in, out; int op; } cases[] = {
    { M2I_FORMAT_IL_RGB888, M2I_FORMAT_IL_FP16_RGB, C_CVT16 },
    { M2I_FORMAT_PL_BGR24, M2I_FORMAT_PL_FP32_BGR, C_CVT32 },
    { M2I_FORMAT_IL_BGR888, M2I_FORMAT_IL_BGR888, C_RESIZE },
    { M2I_FORMAT_PL_RGB24, M2I_FORMAT_PL_RGB24, C_RESIZE },
    { M2I_FORMAT_IL_RGB888, M2I_FORMAT_PL_RGB24, C_PERM },
    { M2I_FORMAT_PL_FP16_RGB, M2I_FORMAT_PL_FP16_RGB, C_NORM },
    { M2I_FORMAT_PL_FP32_RGB, M2I_FORMAT_PL_FP32_RGB, C_NORM },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    M2iOpList ops;
    m2i_op_list_init (&ops);
    gint ow = 50, oh = 30;
    switch (cases[i].op) {
      case C_CVT16: m2i_op_list_add_convert (&ops, M2I_DTYPE_F16); break;
      case C_CVT32: m2i_op_list_add_convert (&ops, M2I_DTYPE_F32); break;
      case C_RESIZE: m2i_op_list_add_resize (&ops, &rp); ow = 33; oh = 17; break;
      case C_PERM: m2i_op_list_add_permute (&ops); break;
      case C_NORM: m2i_op_list_add_norm (&ops, &n); break;
    }
    TestImage in, ref, out;
    test_image_alloc_padded (&in, cases[i].in, 50, 30, 0, 0);
    test_image_randomize (&in, rand);
    if (m2i_format_dtype (cases[i].in) == M2I_DTYPE_F16)   /* values 0..255 */
      for (gsize k = 0; k < in.size / 2; k++)
        ((m2i_f16 *) in.mem)[k] = m2i_f32_to_f16 ((float) (k * 7 % 256));
    if (m2i_format_dtype (cases[i].in) == M2I_DTYPE_F32)
      for (gsize k = 0; k < in.size / 4; k++)
        ((float *) in.mem)[k] = (float) (k * 13 % 256) * 0.5f;
    test_image_alloc_padded (&ref, cases[i].out, ow, oh, 0, 0);
    test_image_alloc_padded (&out, cases[i].out, ow, oh, 0, 0);
    GError *err = NULL;
    g_assert_true (m2i_reference_run (&in.img, &ops, &ref.img, &err));
    for (int prof = 0; prof < 2; prof++) {
      M2iPlanOptions o = { prof, 2 };
      M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
      g_assert_no_error (err);
      g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
      g_assert_cmpuint (test_image_max_diff (&ref.img, &out.img), <=, allowed_diff (cases[i].out));
      m2i_plan_free (plan);
    }
    test_image_free (&in);
    test_image_free (&ref);
    test_image_free (&out);
  }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/fused/all-chains", test_all_chains);
  g_test_add_func ("/m2i/fused/resize-modes", test_resize_modes);
  g_test_add_func ("/m2i/fused/awkward-sizes", test_awkward_sizes);
  g_test_add_func ("/m2i/fused/upscale", test_upscale);
  g_test_add_func ("/m2i/fused/padded-strides", test_padded_strides);
  g_test_add_func ("/m2i/fused/single-ops", test_single_ops);
  g_test_add_func ("/m2i/fused/8k", test_8k);
  g_test_add_func ("/m2i/fused/float-pairs", test_float_pairs);
  return g_test_run ();
}
