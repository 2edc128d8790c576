/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pixel chains (m2i/chan.c, chan-fused.c): 4-byte, gray and RGB pixels.
 *
 * - gray's luma against BT.601 evaluated in double precision for all 256^3
 *   (R, G, B) triples, through the reference path and the fused path, from
 *   RGB, BGR, 4-byte and planar pixels; NV12/I420's gray is their Y plane;
 * - dropAlpha keeps exactly the three colour bytes of each 4-byte format;
 * - the fused path equals the reference path for every chain the kernel
 *   runs, from every pixel format, both profiles, 1-3 threads, resize modes
 *   up and down, odd widths and padded strides (u8 exact, fp16 within one
 *   ulp, fp32 within 1e-5);
 * - the pixel fetch kernels (chan-fetch.h) at the level this run allows,
 *   from every interleaved 4- and 3-byte order, gray planes and NV12's Y,
 *   down (past their permute windows) and up, odd widths, rows narrower
 *   than a vector, padded strides, linear and other modes, 1-2 threads:
 *   fp32 and fp16 equal to the reference path bit for bit without norm,
 *   within 1e-5 / one fp16 ulp with it;
 * - letterbox padding of one-channel data through the plan cache.
 * Run once per SIMD level (the resize row kernels). */
#include "m2i-test-util.h"

#include <base/m2i-cpu.h>
#include <m2i/chan-private.h>
#include <m2i/resize-private.h>

#include <math.h>

/* Luma of (r, g, b) by the formula in double: BT.601's weights, rounded
 * half up. */
static guint8
luma_double (int r, int g, int b)
{
  return (guint8) floor (0.299 * r + 0.587 * g + 0.114 * b + 0.5 + 1e-9);
}

/* All 256^3 colours: pixel (x, y) of a 4096x4096 picture is R = x % 256,
 * G = x / 256 * 16 + y % 16, B = y / 16. */
static void
colour_of (gint x, gint y, int *r, int *g, int *b)
{
  *r = x % 256;
  *g = (x / 256) * 16 + y % 16;
  *b = y / 16;
}

static void
fill_all_colours (TestImage *t)
{
  const M2iImage *im = &t->img;
  gboolean bgr = m2i_format_order (im->format) == M2I_ORDER_BGR;
  gboolean planar = m2i_format_layout (im->format) == M2I_LAYOUT_PLANAR;
  guint px = m2i_format_pixel_stride (im->format), off = m2i_format_channel_offset (im->format);
  for (gint y = 0; y < im->height; y++)
    for (gint x = 0; x < im->width; x++) {
      int c[3];
      colour_of (x, y, &c[0], &c[1], &c[2]);
      for (int k = 0; k < 3; k++) {
        int v = c[bgr ? 2 - k : k];
        if (planar)
          im->data[k][y * im->stride[k] + x] = (guint8) v;
        else
          im->data[0][y * im->stride[0] + (gsize) x * px + off + k] = (guint8) v;
      }
      if (px == 4)                 /* the X byte must not matter */
        im->data[0][y * im->stride[0] + (gsize) x * 4 + (off ? 0 : 3)] = (guint8) (x * 7 + y);
    }
}

static void
check_luma (const M2iImage *g)
{
  for (gint y = 0; y < g->height; y++)
    for (gint x = 0; x < g->width; x++) {
      int r, gg, b;
      colour_of (x, y, &r, &gg, &b);
      guint8 want = luma_double (r, gg, b), got = g->data[0][y * g->stride[0] + x];
      if (want != got)
        g_printerr ("(%d,%d,%d): %u, want %u\n", r, gg, b, got, want);
      g_assert_cmpuint (got, ==, want);
    }
}

static void
test_gray_all_colours (void)
{
  /* chan.c has no SIMD levels: the 16M colours once, at the native level */
  const char *disable = g_getenv ("M2I_CPU_DISABLE");
  if (disable && *disable) {
    g_test_skip ("plain C: checked at the native level");
    return;
  }
  static const M2iFormat formats[] = { M2I_FORMAT_IL_RGB888, M2I_FORMAT_IL_BGRX8888,
    M2I_FORMAT_IL_XRGB8888, M2I_FORMAT_PL_BGR24 };
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++) {
    /* the reference path on a quarter (it is per sample), the fused on all */
    for (int fused = 0; fused < 2; fused++) {
      gint h = fused ? 4096 : 1024;
      TestImage in, out;
      test_image_alloc (&in, formats[i], 4096, h);
      fill_all_colours (&in);
      test_image_alloc (&out, M2I_FORMAT_PL_GRAY8, 4096, h);
      M2iOpList ops;
      m2i_op_list_init (&ops);
      m2i_op_list_add_gray (&ops);
      GError *err = NULL;
      if (fused) {
        M2iPlanOptions o = { M2I_PROFILE_EXTENDED, 2 };
        M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
        g_assert_no_error (err);
        M2iTaskInfo t;
        m2i_plan_get_task (plan, 0, &t);
        g_assert_true (t.fused_kernel);
        g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
        m2i_plan_free (plan);
      } else {
        g_assert_true (m2i_reference_run (&in.img, &ops, &out.img, &err));
      }
      g_assert_no_error (err);
      check_luma (&out.img);
      test_image_free (&in);
      test_image_free (&out);
    }
  }
}

/* NV12 / I420: gray is the Y plane, byte for byte. */
static void
test_gray_yuv (void)
{
  GRand *rand = g_rand_new_with_seed (16);
  for (int f = 0; f < 2; f++) {
    M2iFormat fmt = f ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8;
    TestImage in, ref, out;
    test_image_alloc_padded (&in, fmt, 66, 40, 6, 0);
    test_image_randomize (&in, rand);
    test_image_alloc (&ref, M2I_FORMAT_PL_GRAY8, 66, 40);
    test_image_alloc (&out, M2I_FORMAT_PL_GRAY8, 66, 40);
    M2iOpList ops;
    m2i_op_list_init (&ops);
    m2i_op_list_add_gray (&ops);
    GError *err = NULL;
    g_assert_true (m2i_reference_run (&in.img, &ops, &ref.img, &err));
    M2iPlanOptions o = { M2I_PROFILE_EXTENDED, 1 };
    M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
    g_assert_no_error (err);
    g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
    m2i_plan_free (plan);
    for (gint y = 0; y < 40; y++)
      for (gint x = 0; x < 66; x++) {
        guint8 yv = in.img.data[0][y * in.img.stride[0] + x];
        g_assert_cmpuint (ref.img.data[0][y * ref.img.stride[0] + x], ==, yv);
        g_assert_cmpuint (out.img.data[0][y * out.img.stride[0] + x], ==, yv);
      }
    test_image_free (&in);
    test_image_free (&ref);
    test_image_free (&out);
  }
  g_rand_free (rand);
}

/* dropAlpha: each 4-byte format's colour bytes, in their order. */
static void
test_drop_alpha (void)
{
  static const struct {
    M2iFormat in, out;
    int first;                   /* byte of the first colour channel */
  } cases[] = {
    { M2I_FORMAT_IL_RGBX8888, M2I_FORMAT_IL_RGB888, 0 },
    { M2I_FORMAT_IL_BGRX8888, M2I_FORMAT_IL_BGR888, 0 },
    { M2I_FORMAT_IL_XRGB8888, M2I_FORMAT_IL_RGB888, 1 },
    { M2I_FORMAT_IL_XBGR8888, M2I_FORMAT_IL_BGR888, 1 },
  };
  GRand *rand = g_rand_new_with_seed (4);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (int prof = 0; prof < 2; prof++) {
      TestImage in, out;
      test_image_alloc_padded (&in, cases[i].in, 37, 9, 8, 0);
      test_image_randomize (&in, rand);
      test_image_alloc (&out, cases[i].out, 37, 9);
      M2iOpList ops;
      m2i_op_list_init (&ops);
      m2i_op_list_add_drop_alpha (&ops);
      GError *err = NULL;
      M2iPlanOptions o = { (M2iProfile) prof, 2 };
      M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
      g_assert_no_error (err);
      g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
      m2i_plan_free (plan);
      for (gint y = 0; y < 9; y++)
        for (gint x = 0; x < 37; x++)
          for (int c = 0; c < 3; c++)
            g_assert_cmpuint (out.img.data[0][y * out.img.stride[0] + 3 * x + c], ==,
                in.img.data[0][y * in.img.stride[0] + 4 * x + cases[i].first + c]);
      test_image_free (&in);
      test_image_free (&out);
    }
  g_rand_free (rand);
}

/* ---- fused == reference ---------------------------------------------------- */

typedef enum { S_HEAD = 1, S_CVT16, S_CVT32, S_RESIZE, S_PERM, S_NORM, S_END = 0 } Step;

typedef struct {
  const char *name;
  Step steps[7];
} Chain;

static const Chain chains[] = {
  { "head", { S_HEAD } },
  { "head-cvt16", { S_HEAD, S_CVT16 } },
  { "head-cvt16-norm", { S_HEAD, S_CVT16, S_NORM } },
  { "head-cvt32-norm", { S_HEAD, S_CVT32, S_NORM } },
  { "head-resize", { S_HEAD, S_RESIZE } },
  { "head-cvt16-resize", { S_HEAD, S_CVT16, S_RESIZE } },
  { "head-cvt16-resize-norm", { S_HEAD, S_CVT16, S_RESIZE, S_NORM } },
  { "head-cvt32-resize-norm", { S_HEAD, S_CVT32, S_RESIZE, S_NORM } },
  { "head-resize-perm", { S_HEAD, S_RESIZE, S_PERM } },
  { "head-cvt16-resize-perm-norm", { S_HEAD, S_CVT16, S_RESIZE, S_PERM, S_NORM } },
  { "head-cvt32-resize-perm-norm", { S_HEAD, S_CVT32, S_RESIZE, S_PERM, S_NORM } },
  { "head-cvt16-perm-norm", { S_HEAD, S_CVT16, S_PERM, S_NORM } },
  { "head-perm", { S_HEAD, S_PERM } },
};

typedef enum { HEAD_NONE, HEAD_DROP, HEAD_GRAY } Head;

/* Builds @c on @in_fmt with @head as its head step; FALSE when the chain
 * makes no sense there (permute of one channel, interleaved fp output). */
static gboolean
build (const Chain *c, M2iFormat in_fmt, Head head, const M2iResizeParams *rp, M2iOpList *ops,
    M2iFormat *out_fmt)
{
  const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  M2iNormParams n;
  g_assert_true (m2i_norm_params_from_mean_std (&n, mean, std, 1.0f / 255.0f));
  M2iLayout l = m2i_format_layout (in_fmt);
  M2iChannelOrder order = m2i_format_order (in_fmt);
  M2iDataType dt = M2I_DTYPE_U8;
  m2i_op_list_init (ops);
  for (int i = 0; c->steps[i] != S_END; i++) {
    switch (c->steps[i]) {
      case S_HEAD:
        if (head == HEAD_DROP) {
          m2i_op_list_add_drop_alpha (ops);
        } else if (head == HEAD_GRAY) {
          m2i_op_list_add_gray (ops);
          l = M2I_LAYOUT_PLANAR;
          order = M2I_ORDER_GRAY;
        }
        break;
      case S_CVT16: m2i_op_list_add_convert (ops, M2I_DTYPE_F16); dt = M2I_DTYPE_F16; break;
      case S_CVT32: m2i_op_list_add_convert (ops, M2I_DTYPE_F32); dt = M2I_DTYPE_F32; break;
      case S_RESIZE: m2i_op_list_add_resize (ops, rp); break;
      case S_PERM:
        if (l == M2I_LAYOUT_PLANAR)
          return FALSE;
        m2i_op_list_add_permute (ops);
        l = M2I_LAYOUT_PLANAR;
        break;
      case S_NORM: m2i_op_list_add_norm (ops, &n); break;
      default: g_assert_not_reached ();
    }
  }
  if (ops->n_ops == 0 || (l == M2I_LAYOUT_INTERLEAVED && dt != M2I_DTYPE_U8))
    return FALSE;
  *out_fmt = m2i_format_compose (l, dt, order);
  return TRUE;
}

static void
compare_one (M2iFormat in_fmt, Head head, gint iw, gint ih, const Chain *c,
    const M2iResizeParams *rp, M2iProfile prof, gint threads, gsize pad, GRand *rand)
{
  M2iOpList ops;
  M2iFormat of;
  if (!build (c, in_fmt, head, rp, &ops, &of))
    return;
  gboolean resize = FALSE;
  for (guint i = 0; i < ops.n_ops; i++)
    resize |= ops.ops[i].kind == M2I_OP_RESIZE;
  gint ow = resize ? rp->out_width : iw, oh = resize ? rp->out_height : ih;
  TestImage in, ref, out;
  test_image_alloc_padded (&in, in_fmt, iw, ih, pad, 0);
  test_image_pattern (&in, rand);
  test_image_alloc (&ref, of, ow, oh);
  test_image_alloc_padded (&out, of, ow, oh, pad, 0xa5);
  GError *err = NULL;
  g_assert_true (m2i_reference_run (&in.img, &ops, &ref.img, &err));
  g_assert_no_error (err);
  M2iPlanOptions o = { prof, threads };
  M2iPlan *plan = m2i_plan_new (&in.img, &ops, &out.img, &o, &err);
  g_assert_no_error (err);
  g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
  g_assert_no_error (err);
  guint d = test_image_max_diff (&ref.img, &out.img);
  guint allowed = m2i_format_dtype (of) == M2I_DTYPE_U8 ? 0
      : m2i_format_dtype (of) == M2I_DTYPE_F16 ? 1 : 10;
  if (d > allowed) {
    gchar *desc = m2i_plan_to_string (plan);
    g_printerr ("%s %dx%d %s -> %s %dx%d: max diff %u\n%s\n", m2i_format_to_string (in_fmt),
        iw, ih, c->name, m2i_format_to_string (of), ow, oh, d, desc);
    g_free (desc);
  }
  g_assert_cmpuint (d, <=, allowed);
  g_assert_true (test_image_padding_intact (&out, 0xa5));
  /* the extended profile runs the whole chain as one fused device task */
  if (prof == M2I_PROFILE_EXTENDED && ops.n_ops >= 2) {
    M2iTaskInfo t;
    g_assert_cmpuint (m2i_plan_n_tasks (plan), ==, 1);
    m2i_plan_get_task (plan, 0, &t);
    g_assert_true (t.target == M2I_TASK_DEVICE && t.fused_kernel);
  }
  m2i_plan_free (plan);
  test_image_free (&in);
  test_image_free (&ref);
  test_image_free (&out);
}

static void
test_fused_vs_reference (void)
{
  static const struct {
    M2iFormat f;
    Head head;
  } inputs[] = {
    { M2I_FORMAT_IL_RGBX8888, HEAD_DROP }, { M2I_FORMAT_IL_BGRX8888, HEAD_DROP },
    { M2I_FORMAT_IL_XRGB8888, HEAD_DROP }, { M2I_FORMAT_IL_XBGR8888, HEAD_DROP },
    { M2I_FORMAT_IL_XBGR8888, HEAD_GRAY }, { M2I_FORMAT_IL_RGB888, HEAD_GRAY },
    { M2I_FORMAT_PL_BGR24, HEAD_GRAY }, { M2I_FORMAT_SP_NV12_8, HEAD_GRAY },
    { M2I_FORMAT_PL_YUV420_8, HEAD_GRAY }, { M2I_FORMAT_PL_GRAY8, HEAD_NONE },
    { M2I_FORMAT_IL_BGR888, HEAD_NONE }, { M2I_FORMAT_PL_RGB24, HEAD_NONE },
  };
  static const M2iResizeMode modes[] = { M2I_RESIZE_LINEAR, M2I_RESIZE_LINEAR_ONNX,
    M2I_RESIZE_NEAREST, M2I_RESIZE_CUBIC, M2I_RESIZE_BILINEAR_PILLOW };
  static const gint sizes[][4] = {     /* in w, h -> out w, h */
    { 64, 48, 28, 28 }, { 46, 30, 64, 40 }, { 33, 17, 5, 3 }, { 130, 8, 129, 1 },
  };
  GRand *rand = g_rand_new_with_seed (2025);
  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    for (guint k = 0; k < G_N_ELEMENTS (chains); k++)
      for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
        M2iResizeParams rp;
        m2i_resize_params_init (&rp, sizes[s][2], sizes[s][3]);
        rp.mode = modes[(i + k + s) % G_N_ELEMENTS (modes)];
        rp.antialias = s == 2;
        gint iw = sizes[s][0], ih = sizes[s][1];
        if (m2i_format_is_yuv (inputs[i].f)) {
          iw &= ~1;
          ih &= ~1;
        }
        compare_one (inputs[i].f, inputs[i].head, iw, ih, &chains[k], &rp,
            (M2iProfile) ((k + s) % 2), 1 + (gint) ((i + s) % 3), s % 2 ? 8 : 0, rand);
      }
  g_rand_free (rand);
}

/* The level the fetch kernels must run at in this process. */
static const char *
fetch_level (void)
{
  M2iCpuFlags l = m2i_cpu_kernel_level (M2I_KERNELS_FUSED);
  if (l & M2I_CPU_AVX512F)
    return "avx512";
  if ((l & M2I_CPU_AVX2) && (m2i_cpu_flags () & M2I_CPU_F16C))
    return "avx2";
  return "c";
}

static void
test_fetch_vs_reference (void)
{
  static const struct {
    M2iFormat f;
    Head head;
  } inputs[] = {
    { M2I_FORMAT_IL_BGRX8888, HEAD_DROP }, { M2I_FORMAT_IL_RGBX8888, HEAD_DROP },
    { M2I_FORMAT_IL_XRGB8888, HEAD_DROP }, { M2I_FORMAT_IL_XBGR8888, HEAD_DROP },
    { M2I_FORMAT_IL_RGB888, HEAD_NONE }, { M2I_FORMAT_IL_BGR888, HEAD_NONE },
    { M2I_FORMAT_PL_GRAY8, HEAD_NONE }, { M2I_FORMAT_SP_NV12_8, HEAD_GRAY },
  };
  static const Chain fchains[] = {
    { "cvt32-resize-perm-norm", { S_HEAD, S_CVT32, S_RESIZE, S_PERM, S_NORM } },
    { "cvt16-resize-perm-norm", { S_HEAD, S_CVT16, S_RESIZE, S_PERM, S_NORM } },
    { "cvt32-resize-perm", { S_HEAD, S_CVT32, S_RESIZE, S_PERM } },
    { "cvt16-resize-perm", { S_HEAD, S_CVT16, S_RESIZE, S_PERM } },
  };
  static const struct {
    gint iw, ih, ow, oh;
    M2iResizeMode mode;
    gboolean aa;
  } cases[] = {
    { 192, 41, 64, 24, M2I_RESIZE_LINEAR },         /* 3:1 as 1920 -> 640: one tap in x */
    { 190, 41, 64, 24, M2I_RESIZE_LINEAR },
    { 101, 37, 33, 19, M2I_RESIZE_LINEAR },
    { 300, 9, 33, 5, M2I_RESIZE_LINEAR },           /* past the 32-pixel windows */
    { 61, 45, 97, 70, M2I_RESIZE_LINEAR },          /* up */
    { 7, 5, 13, 3, M2I_RESIZE_LINEAR },             /* narrower than a vector */
    { 130, 8, 129, 1, M2I_RESIZE_LINEAR_ONNX },
    { 64, 48, 29, 31, M2I_RESIZE_CUBIC },
    { 93, 20, 40, 7, M2I_RESIZE_NEAREST },
    { 80, 30, 17, 11, M2I_RESIZE_LINEAR, TRUE },    /* antialias: more taps */
  };
  const char *level = fetch_level ();
  GRand *rand = g_rand_new_with_seed (19);
  guint n = 0;
  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    for (guint k = 0; k < G_N_ELEMENTS (fchains); k++)
      for (guint s = 0; s < G_N_ELEMENTS (cases); s++) {
        M2iResizeParams rp;
        m2i_resize_params_init (&rp, cases[s].ow, cases[s].oh);
        rp.mode = cases[s].mode;
        rp.antialias = cases[s].aa;
        gint iw = cases[s].iw, ih = cases[s].ih;
        if (m2i_format_is_yuv (inputs[i].f)) {
          iw &= ~1;
          ih &= ~1;
        }
        /* one channel: no permute */
        gboolean one = inputs[i].f == M2I_FORMAT_PL_GRAY8 || inputs[i].head == HEAD_GRAY;
        Chain cc = { fchains[k].name, { S_END } };
        for (gint j = 0, m = 0; fchains[k].steps[j] != S_END; j++)
          if (!(one && fchains[k].steps[j] == S_PERM))
            cc.steps[m++] = fchains[k].steps[j];
        M2iOpList ops;
        M2iFormat of;
        g_assert_true (build (&cc, inputs[i].f, inputs[i].head, &rp, &ops, &of));
        TestImage in, ref, out;
        gsize pad = s % 2 ? 12 : 0;
        test_image_alloc_padded (&in, inputs[i].f, iw, ih, pad, 0);
        test_image_pattern (&in, rand);
        test_image_alloc (&ref, of, rp.out_width, rp.out_height);
        test_image_alloc_padded (&out, of, rp.out_width, rp.out_height, pad, 0xa5);
        GError *err = NULL;
        g_assert_true (m2i_reference_run (&in.img, &ops, &ref.img, &err));
        g_assert_no_error (err);
        g_assert_true (m2i_chan_fused_supported (&in.img, ops.ops, ops.n_ops, &out.img));
        ChanFused *f = m2i_chan_fused_new (&in.img, ops.ops, ops.n_ops, &out.img,
            1 + (gint) ((i + s) % 2), &err);
        g_assert_no_error (err);
        g_assert_cmpstr (m2i_chan_fused_kernel (f), ==, level);
        m2i_chan_fused_run (f, &in.img, &out.img);
        gboolean norm = ops.ops[ops.n_ops - 1].kind == M2I_OP_NORM;
        guint d = test_image_max_diff (&ref.img, &out.img);
        guint allowed = !norm ? 0 : m2i_format_dtype (of) == M2I_DTYPE_F16 ? 1 : 10;
        if (d > allowed)
          g_printerr ("%s %dx%d %s %s -> %s %dx%d: max diff %u\n",
              m2i_format_to_string (inputs[i].f), iw, ih, m2i_resize_mode_names[rp.mode],
              cc.name, m2i_format_to_string (of), rp.out_width, rp.out_height, d);
        g_assert_cmpuint (d, <=, allowed);
        g_assert_true (test_image_padding_intact (&out, 0xa5));
        m2i_chan_fused_free (f);
        test_image_free (&in);
        test_image_free (&ref);
        test_image_free (&out);
        n++;
      }
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (inputs) * G_N_ELEMENTS (fchains) * G_N_ELEMENTS (cases));
  g_rand_free (rand);
}

/* Letterbox padding of one-channel data: the border is the pad value
 * normalised, the picture what the chain gives without padding. */
static void
test_gray_letterbox (void)
{
  GRand *rand = g_rand_new_with_seed (7);
  TestImage in, pic, canvas;
  test_image_alloc (&in, M2I_FORMAT_PL_GRAY8, 40, 20);
  test_image_randomize (&in, rand);
  M2iResizeParams rp;
  m2i_resize_params_init (&rp, 32, 16);
  const float mean[3] = { 0.5f, 0.5f, 0.5f }, std[3] = { 0.25f, 0.25f, 0.25f };
  M2iNormParams n;
  g_assert_true (m2i_norm_params_from_mean_std (&n, mean, std, 1.0f / 255.0f));
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_convert (&ops, M2I_DTYPE_F32);
  m2i_op_list_add_resize (&ops, &rp);
  m2i_op_list_add_norm (&ops, &n);
  test_image_alloc (&pic, M2I_FORMAT_PL_FP32_GRAY, 32, 16);
  GError *err = NULL;
  g_assert_true (m2i_reference_run (&in.img, &ops, &pic.img, &err));
  test_image_alloc (&canvas, M2I_FORMAT_PL_FP32_GRAY, 32, 32);
  M2iLetterbox lb = { TRUE, 2, 0, 8, 32, 32, 114.0f };
  M2iPlanOptions o = { M2I_PROFILE_EXTENDED, 1 };
  M2iPlanCache *cache = m2i_plan_cache_new ();
  g_assert_true (m2i_plan_cache_run (cache, &in.img, &ops, &lb, &canvas.img, &o, NULL, &err));
  g_assert_no_error (err);
  /* (114 - B) / C with B = 0.5 * 255, C = 0.25 * 255 in fp16 */
  float b = m2i_f16_to_f32 (m2i_f32_to_f16 (127.5f)), c = m2i_f16_to_f32 (m2i_f32_to_f16 (63.75f));
  float border = (114.0f - b) / c;
  for (gint y = 0; y < 32; y++)
    for (gint x = 0; x < 32; x++) {
      float v = ((const float *) (canvas.img.data[0] + y * canvas.img.stride[0]))[x];
      if (y < 8 || y >= 24)
        g_assert_cmpfloat_with_epsilon (v, border, 1e-5);
      else
        g_assert_cmpfloat_with_epsilon (v,
            ((const float *) (pic.img.data[0] + (y - 8) * pic.img.stride[0]))[x], 1e-5);
    }
  m2i_plan_cache_free (cache);
  test_image_free (&in);
  test_image_free (&pic);
  test_image_free (&canvas);
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/chan/gray-all-colours", test_gray_all_colours);
  g_test_add_func ("/m2i/chan/gray-yuv", test_gray_yuv);
  g_test_add_func ("/m2i/chan/drop-alpha", test_drop_alpha);
  g_test_add_func ("/m2i/chan/fused-vs-reference", test_fused_vs_reference);
  g_test_add_func ("/m2i/chan/fetch-vs-reference", test_fetch_vs_reference);
  g_test_add_func ("/m2i/chan/gray-letterbox", test_gray_letterbox);
  return g_test_run ();
}
