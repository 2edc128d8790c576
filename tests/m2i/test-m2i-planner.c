/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The planner: which chains each profile makes one task, which several and
 * where (DEVICE / CPU), and which requests are errors — each error's message
 * checked for the reason a user needs. */
#include "m2i-test-util.h"

typedef struct {
  M2iImage in, out;
  M2iOpList ops;
} Req;

static void
req_init (Req *r, M2iFormat in_fmt, gint w, gint h)
{
  memset (r, 0, sizeof *r);
  g_assert_true (m2i_image_init (&r->in, in_fmt, w, h) || w <= 0 || h <= 0);
  if (w <= 0 || h <= 0) {
    r->in.format = in_fmt;
    r->in.width = w;
    r->in.height = h;
  }
  m2i_op_list_init (&r->ops);
}

static void
req_out (Req *r, M2iFormat f, gint w, gint h)
{
  g_assert_true (m2i_image_init (&r->out, f, w, h));
}

static M2iResizeParams
rs (gint w, gint h)
{
  M2iResizeParams p;
  m2i_resize_params_init (&p, w, h);
  p.mode = M2I_RESIZE_LINEAR;
  return p;
}

static M2iNormParams
nrm (void)
{
  M2iNormParams n;
  m2i_norm_params_identity (&n);
  return n;
}

/* Plans @r under @prof and checks the task list: @expect is e.g.
 * "D:csc,convertU8F16,resize,permute|D:norm". */
static void
expect_plan (const Req *r, M2iProfile prof, const char *expect)
{
  GError *err = NULL;
  M2iPlanOptions o = { prof, 1 };
  M2iPlan *plan = m2i_plan_new (&r->in, &r->ops, &r->out, &o, &err);
  g_assert_no_error (err);
  GString *got = g_string_new (NULL);
  for (guint i = 0; i < m2i_plan_n_tasks (plan); i++) {
    M2iTaskInfo t;
    m2i_plan_get_task (plan, i, &t);
    g_string_append_printf (got, "%s%s:", i ? "|" : "", t.target == M2I_TASK_DEVICE ? "D" : "C");
    for (guint k = 0; k < t.n_ops; k++) {
      const M2iOp *op = &t.ops[k];
      g_string_append_printf (got, "%s%s", k ? "," : "",
          op->kind == M2I_OP_CONVERT && op->u.convert.to == M2I_DTYPE_F32 ? "convertU8F32"
          : m2i_op_kind_to_string (op->kind));
    }
  }
  if (g_strcmp0 (got->str, expect)) {
    gchar *d = m2i_plan_to_string (plan);
    g_printerr ("profile %s: expected %s, got %s\n%s\n", m2i_profile_to_string (prof),
        expect, got->str, d);
    g_free (d);
  }
  g_assert_cmpstr (got->str, ==, expect);
  /* the description has one line per task */
  gchar *d = m2i_plan_to_string (plan);
  gchar **lines = g_strsplit (d, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, m2i_plan_n_tasks (plan));
  g_strfreev (lines);
  g_free (d);
  g_string_free (got, TRUE);
  m2i_plan_free (plan);
}

static void
expect_error (const Req *r, const char *needle)
{
  GError *err = NULL;
  M2iPlan *plan = m2i_plan_new (&r->in, &r->ops, &r->out, NULL, &err);
  g_assert_null (plan);
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  if (!strstr (err->message, needle))
    g_printerr ("message \"%s\" lacks \"%s\"\n", err->message, needle);
  g_assert_nonnull (strstr (err->message, needle));
  g_error_free (err);
}

/* The five seed patterns: one device task each, in both profiles, for NV12
 * and I420, RGB and BGR. */
static void
test_seed_patterns (void)
{
  M2iResizeParams p = rs (32, 24);
  for (int f = 0; f < 2; f++)
    for (int o = 0; o < 2; o++)
      for (int prof = 0; prof < 2; prof++) {
        M2iFormat in = f ? M2I_FORMAT_PL_YUV420_8 : M2I_FORMAT_SP_NV12_8;
        M2iChannelOrder ord = o ? M2I_ORDER_BGR : M2I_ORDER_RGB;
        Req r;
        req_init (&r, in, 64, 48);
        m2i_op_list_add_csc (&r.ops, ord);
        m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
        m2i_op_list_add_resize (&r.ops, &p);
        m2i_op_list_add_permute (&r.ops);
        req_out (&r, o ? M2I_FORMAT_PL_FP16_BGR : M2I_FORMAT_PL_FP16_RGB, 32, 24);
        expect_plan (&r, prof, "D:csc,convertU8F16,resize,permute");

        req_init (&r, in, 64, 48);
        m2i_op_list_add_csc (&r.ops, ord);
        m2i_op_list_add_resize (&r.ops, &p);
        m2i_op_list_add_permute (&r.ops);
        req_out (&r, o ? M2I_FORMAT_PL_BGR24 : M2I_FORMAT_PL_RGB24, 32, 24);
        expect_plan (&r, prof, "D:csc,resize,permute");

        req_init (&r, in, 64, 48);
        m2i_op_list_add_csc (&r.ops, ord);
        m2i_op_list_add_resize (&r.ops, &p);
        req_out (&r, o ? M2I_FORMAT_IL_BGR888 : M2I_FORMAT_IL_RGB888, 32, 24);
        expect_plan (&r, prof, "D:csc,resize");

        req_init (&r, in, 64, 48);
        m2i_op_list_add_csc (&r.ops, ord);
        m2i_op_list_add_permute (&r.ops);
        req_out (&r, o ? M2I_FORMAT_PL_BGR24 : M2I_FORMAT_PL_RGB24, 64, 48);
        expect_plan (&r, prof, "D:csc,permute");

        req_init (&r, in, 64, 48);
        m2i_op_list_add_csc (&r.ops, ord);
        m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
        m2i_op_list_add_permute (&r.ops);
        req_out (&r, o ? M2I_FORMAT_PL_FP16_BGR : M2I_FORMAT_PL_FP16_RGB, 64, 48);
        expect_plan (&r, prof, "D:csc,convertU8F16,permute");

        req_init (&r, in, 64, 48);
        m2i_op_list_add_csc (&r.ops, ord);
        req_out (&r, o ? M2I_FORMAT_IL_BGR888 : M2I_FORMAT_IL_RGB888, 64, 48);
        expect_plan (&r, prof, "D:csc");
      }
}

/* Norm: default runs it as its own device task, extended fuses it; the
 * order norm->permute is brought to permute->norm (exact). */
static void
test_norm_fusion (void)
{
  M2iResizeParams p = rs (32, 24);
  M2iNormParams n = nrm ();
  Req r;
  for (int before_permute = 0; before_permute < 2; before_permute++) {
    req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
    m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
    m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
    m2i_op_list_add_resize (&r.ops, &p);
    if (before_permute)
      m2i_op_list_add_norm (&r.ops, &n);
    m2i_op_list_add_permute (&r.ops);
    if (!before_permute)
      m2i_op_list_add_norm (&r.ops, &n);
    req_out (&r, M2I_FORMAT_PL_FP16_RGB, 32, 24);
    expect_plan (&r, M2I_PROFILE_DEFAULT, "D:csc,convertU8F16,resize,permute|D:norm");
    expect_plan (&r, M2I_PROFILE_EXTENDED, "D:csc,convertU8F16,resize,permute,norm");
  }
  req_init (&r, M2I_FORMAT_PL_YUV420_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_BGR);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_permute (&r.ops);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_PL_FP16_BGR, 64, 48);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:csc,convertU8F16,permute|D:norm");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:csc,convertU8F16,permute,norm");
  /* norm on planar fp16 alone (an m2inorm element) is a device task */
  req_init (&r, M2I_FORMAT_PL_FP16_RGB, 64, 48);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_PL_FP16_RGB, 64, 48);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:norm");
  /* ...but on interleaved fp16 the device cannot: CPU */
  req_init (&r, M2I_FORMAT_IL_FP16_RGB, 64, 48);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_IL_FP16_RGB, 64, 48);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "C:norm");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "C:norm");
}

/* Chains the device can only do in part. */
static void
test_split_chains (void)
{
  M2iResizeParams p = rs (32, 24);
  Req r;
  /* interleaved fp16 output: the device stops after csc */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_IL_FP16_RGB, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:csc|C:convertU8F16,resize");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:csc|C:convertU8F16,resize");
  /* fp32: extension only */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F32);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_permute (&r.ops);
  req_out (&r, M2I_FORMAT_PL_FP32_RGB, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:csc|C:convertU8F32,resize,permute");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:csc,convertU8F32,resize,permute");
  /* resize after convert-less csc, then convert: not a seed pattern */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_permute (&r.ops);
  req_out (&r, M2I_FORMAT_PL_FP16_RGB, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:csc,resize|C:convertU8F16,permute");
  /* permute written before resize is moved after it: one task */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_permute (&r.ops);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_PL_RGB24, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:csc,resize,permute");
  /* a resize on RGB input (m2iresize alone) */
  req_init (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_IL_RGB888, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:resize");
}

/* Pixel chains: 4-byte and gray pixels. The default profile has no channel
 * stage (dropAlpha and gray run on the CPU); the extended one fuses them
 * like csc, and chains on u8 RGB or gray pixels too. */
static void
test_pixel_chains (void)
{
  M2iResizeParams p = rs (32, 24);
  M2iNormParams n = nrm ();
  Req r;
  static const M2iFormat x4[] = { M2I_FORMAT_IL_RGBX8888, M2I_FORMAT_IL_BGRX8888,
    M2I_FORMAT_IL_XRGB8888, M2I_FORMAT_IL_XBGR8888 };
  for (guint i = 0; i < G_N_ELEMENTS (x4); i++) {
    req_init (&r, x4[i], 64, 48);
    m2i_op_list_add_drop_alpha (&r.ops);
    m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
    m2i_op_list_add_resize (&r.ops, &p);
    m2i_op_list_add_permute (&r.ops);
    m2i_op_list_add_norm (&r.ops, &n);
    req_out (&r, i % 2 ? M2I_FORMAT_PL_FP16_BGR : M2I_FORMAT_PL_FP16_RGB, 32, 24);
    expect_plan (&r, M2I_PROFILE_DEFAULT, "C:dropAlpha,convertU8F16,resize,permute|D:norm");
    expect_plan (&r, M2I_PROFILE_EXTENDED, "D:dropAlpha,convertU8F16,resize,permute,norm");
  }
  /* dropAlpha alone: a CPU task, or the extended block's channel stage */
  req_init (&r, M2I_FORMAT_IL_BGRX8888, 64, 48);
  m2i_op_list_add_drop_alpha (&r.ops);
  req_out (&r, M2I_FORMAT_IL_BGR888, 64, 48);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "C:dropAlpha");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:dropAlpha");
  /* GRAY8 video into a 1-channel fp32 model input */
  req_init (&r, M2I_FORMAT_PL_GRAY8, 64, 48);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F32);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_PL_FP32_GRAY, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "C:convertU8F32,resize,norm");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:convertU8F32,resize,norm");
  /* fp16: the seed's single-op tasks on one plane */
  req_init (&r, M2I_FORMAT_PL_GRAY8, 64, 48);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_PL_FP16_GRAY, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "D:convertU8F16|D:resize|D:norm");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:convertU8F16,resize,norm");
  /* NV12's luma plane: no csc */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_gray (&r.ops);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_PL_FP16_GRAY, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "C:gray|D:convertU8F16|D:resize");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:gray,convertU8F16,resize");
  /* RGB video's luma */
  req_init (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  m2i_op_list_add_gray (&r.ops);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_PL_GRAY8, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "C:gray|D:resize");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:gray,resize");
  /* extended, RGB video into an fp16 tensor: one task */
  req_init (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_permute (&r.ops);
  req_out (&r, M2I_FORMAT_PL_FP16_RGB, 32, 24);
  expect_plan (&r, M2I_PROFILE_DEFAULT, "C:convertU8F16,resize,permute");
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:convertU8F16,resize,permute");
  /* ...but never interleaved fp output on the device */
  req_init (&r, M2I_FORMAT_IL_RGBX8888, 64, 48);
  m2i_op_list_add_drop_alpha (&r.ops);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  req_out (&r, M2I_FORMAT_IL_FP16_RGB, 64, 48);
  expect_plan (&r, M2I_PROFILE_EXTENDED, "D:dropAlpha|C:convertU8F16");
}

/* What the channel ops refuse, with the reason. */
static void
test_pixel_errors (void)
{
  M2iResizeParams p = rs (32, 24);
  Req r;
  req_init (&r, M2I_FORMAT_IL_BGRX8888, 64, 48);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_IL_BGR888, 32, 24);
  expect_error (&r, "IL_BGRX8888 (4 bytes per pixel) here; resize needs 3-byte pixels, so "
      "dropAlpha must come first");
  req_init (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  m2i_op_list_add_drop_alpha (&r.ops);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  expect_error (&r, "dropAlpha takes 4-byte pixels");
  req_init (&r, M2I_FORMAT_PL_GRAY8, 64, 48);
  m2i_op_list_add_gray (&r.ops);
  req_out (&r, M2I_FORMAT_PL_GRAY8, 64, 48);
  expect_error (&r, "already one channel (PL_GRAY8)");
  req_init (&r, M2I_FORMAT_PL_GRAY8, 64, 48);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_permute (&r.ops);
  req_out (&r, M2I_FORMAT_PL_FP16_GRAY, 64, 48);
  expect_error (&r, "is planar already: there is nothing to permute");
  req_init (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_gray (&r.ops);
  req_out (&r, M2I_FORMAT_PL_FP16_GRAY, 64, 48);
  expect_error (&r, "gray takes u8 pixels, the data is fp16 here; put gray before convert");
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_drop_alpha (&r.ops);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  expect_error (&r, "csc must come first (or gray, for the luma plane)");
}

static void
test_errors (void)
{
  M2iResizeParams p = rs (32, 24);
  M2iNormParams n = nrm ();
  Req r;
  req_init (&r, M2I_FORMAT_SP_NV12_8, 63, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 63, 48);
  expect_error (&r, "needs an even width and height");
  req_init (&r, M2I_FORMAT_PL_YUV420_8, 64, 47);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 47);
  expect_error (&r, "needs an even width and height");
  req_init (&r, M2I_FORMAT_SP_NV12_8, 0, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  expect_error (&r, "is not positive");
  /* resize before csc */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 32, 24);
  expect_error (&r, "csc must come first");
  /* norm on u8 */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  expect_error (&r, "norm needs fp16 or fp32 data");
  /* permute twice */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_permute (&r.ops);
  m2i_op_list_add_permute (&r.ops);
  req_out (&r, M2I_FORMAT_PL_RGB24, 64, 48);
  expect_error (&r, "permute twice");
  /* convert twice */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  req_out (&r, M2I_FORMAT_IL_FP16_RGB, 64, 48);
  expect_error (&r, "already fp16");
  /* csc on RGB */
  req_init (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  expect_error (&r, "already IL_RGB888");
  /* output format not matching */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_PL_RGB24, 64, 48);
  expect_error (&r, "the op chain produces IL_RGB888 64x48");
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_resize (&r.ops, &p);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  expect_error (&r, "the op chain produces IL_RGB888 32x24");
  /* stride too small */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  r.out.stride[0] = 100;
  expect_error (&r, "stride 100 is smaller than its row of 192 bytes");
  /* empty op list */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  req_out (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  expect_error (&r, "empty");
  /* resize to zero: refused when added, and by the planner if forced */
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  M2iResizeParams z = rs (0, 24);
  g_assert_false (m2i_op_list_add_resize (&r.ops, &z));
  m2i_op_list_add_resize (&r.ops, &p);
  r.ops.ops[1].u.resize.out_width = 0;
  req_out (&r, M2I_FORMAT_IL_RGB888, 32, 24);
  expect_error (&r, "is not positive");
}

/* Run-time checks: wrong geometry, missing data, buffers too small. */
static void
test_run_errors (void)
{
  Req r;
  req_init (&r, M2I_FORMAT_SP_NV12_8, 64, 48);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  req_out (&r, M2I_FORMAT_IL_RGB888, 64, 48);
  GError *err = NULL;
  M2iPlan *plan = m2i_plan_new (&r.in, &r.ops, &r.out, NULL, &err);
  g_assert_no_error (err);
  TestImage in, out, other;
  test_image_alloc_padded (&in, M2I_FORMAT_SP_NV12_8, 64, 48, 0, 0);
  test_image_alloc_padded (&out, M2I_FORMAT_IL_RGB888, 64, 48, 0, 0);
  test_image_alloc_padded (&other, M2I_FORMAT_IL_RGB888, 64, 48, 8, 0);
  g_assert_false (m2i_plan_run (plan, &in.img, &other.img, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "make a new plan"));
  g_clear_error (&err);
  M2iImage small = out.img;
  small.size[0] = 64 * 48 * 3 - 1;
  g_assert_false (m2i_plan_run (plan, &in.img, &small, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL);
  g_clear_error (&err);
  M2iImage nodata = in.img;
  nodata.data[1] = NULL;
  g_assert_false (m2i_plan_run (plan, &nodata, &out.img, &err));
  g_assert_nonnull (strstr (err->message, "no data pointer"));
  g_clear_error (&err);
  g_assert_true (m2i_plan_run (plan, &in.img, &out.img, &err));
  m2i_plan_free (plan);
  test_image_free (&in);
  test_image_free (&out);
  test_image_free (&other);
}

/* The cost model: fused moves fewer bytes and cycles than the same chain as
 * separate tasks, and reads only the source rows the resize needs. */
static void
test_cost_model (void)
{
  M2iResizeParams p = rs (224, 224);
  M2iNormParams n = nrm ();
  Req r;
  req_init (&r, M2I_FORMAT_SP_NV12_8, 1920, 1080);
  m2i_op_list_add_csc (&r.ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&r.ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&r.ops, &p);
  m2i_op_list_add_permute (&r.ops);
  m2i_op_list_add_norm (&r.ops, &n);
  req_out (&r, M2I_FORMAT_PL_FP16_RGB, 224, 224);
  guint64 bytes[2] = { 0 }, cycles[2] = { 0 };
  for (int prof = 0; prof < 2; prof++) {
    M2iPlanOptions o = { prof, 1 };
    M2iPlan *plan = m2i_plan_new (&r.in, &r.ops, &r.out, &o, NULL);
    for (guint i = 0; i < m2i_plan_n_tasks (plan); i++) {
      M2iTaskInfo t;
      m2i_plan_get_task (plan, i, &t);
      bytes[prof] += t.bytes_read + t.bytes_written;
      cycles[prof] += t.cycles;
      if (i == 0) {
        /* 2-tap linear 1080 -> 224 rows: at most 2 x 224 source rows read */
        g_assert_cmpuint (t.bytes_read, <=, 2 * 224 * 1920 * 3 / 2);
        g_assert_true (t.fused_kernel);
      }
    }
    m2i_plan_free (plan);
  }
  g_assert_cmpuint (bytes[1], <, bytes[0]);
  g_assert_cmpuint (cycles[1], <, cycles[0]);
  g_assert_cmpuint (bytes[0] - bytes[1], ==, 2 * 224 * 224 * 3 * 2);  /* the fp16 intermediate */
}

/* What a chain produces, for caps negotiation. */
static void
test_op_list_result (void)
{
  M2iOpList ops;
  M2iResizeParams p = rs (224, 200);
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, M2I_ORDER_BGR);
  m2i_op_list_add_convert (&ops, M2I_DTYPE_F32);
  m2i_op_list_add_resize (&ops, &p);
  m2i_op_list_add_permute (&ops);
  M2iFormat f;
  gint w, h;
  GError *err = NULL;
  g_assert_true (m2i_op_list_result (&ops, M2I_FORMAT_PL_YUV420_8, 640, 480, &f, &w, &h, &err));
  g_assert_cmpint (f, ==, M2I_FORMAT_PL_FP32_BGR);
  g_assert_cmpint (w, ==, 224);
  g_assert_cmpint (h, ==, 200);
  g_assert_false (m2i_op_list_result (&ops, M2I_FORMAT_SP_NV12_8, 641, 480, &f, &w, &h, &err));
  g_assert_nonnull (strstr (err->message, "even width"));
  g_clear_error (&err);
  g_assert_false (m2i_op_list_result (&ops, M2I_FORMAT_IL_RGB888, 640, 480, &f, &w, &h, &err));
  g_assert_nonnull (strstr (err->message, "already IL_RGB888"));
  g_clear_error (&err);
}

static void
test_profile_strings (void)
{
  M2iProfile p;
  g_assert_true (m2i_profile_from_string ("extended", &p));
  g_assert_cmpint (p, ==, M2I_PROFILE_EXTENDED);
  g_assert_true (m2i_profile_from_string ("default", &p));
  g_assert_cmpint (p, ==, M2I_PROFILE_DEFAULT);
  g_assert_false (m2i_profile_from_string ("fast", &p));
  g_assert_cmpstr (m2i_profile_to_string (M2I_PROFILE_EXTENDED), ==, "extended");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/m2i/planner/seed-patterns", test_seed_patterns);
  g_test_add_func ("/m2i/planner/norm-fusion", test_norm_fusion);
  g_test_add_func ("/m2i/planner/split-chains", test_split_chains);
  g_test_add_func ("/m2i/planner/errors", test_errors);
  g_test_add_func ("/m2i/planner/pixel-chains", test_pixel_chains);
  g_test_add_func ("/m2i/planner/pixel-errors", test_pixel_errors);
  g_test_add_func ("/m2i/planner/run-errors", test_run_errors);
  g_test_add_func ("/m2i/planner/cost-model", test_cost_model);
  g_test_add_func ("/m2i/planner/profile-strings", test_profile_strings);
  g_test_add_func ("/m2i/planner/op-list-result", test_op_list_result);
  return g_test_run ();
}
