/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-elements.c — m2icolorconvert, m2iresize and m2inorm one at a
 * time (GstHarness): every pad-template format against the core's reference
 * path and against hand-computed values, GstVideoMeta strides, odd sizes,
 * negotiation failures with their messages, renegotiation, flushing, EOS and
 * state changes.
 */
#include "gst-test-util.h"

/* A harness around @desc (a launch line), output caps fixed to @out_f
 * @ow x @oh, input caps @in_f @iw x @ih. */
static GstHarness *
harness_for (const char *desc, M2iFormat in_f, gint iw, gint ih, M2iFormat out_f, gint ow,
    gint oh)
{
  GstHarness *h = gst_harness_new_parse (desc);
  GstCaps *oc = test_caps (out_f, ow, oh), *ic = test_caps (in_f, iw, ih);
  gst_harness_set_sink_caps (h, oc);
  gst_harness_set_src_caps (h, ic);
  return h;
}

/* Pushes @in (packed with row padding @pad, 0: GStreamer's layout) and
 * unpacks the one output buffer as @out_f into @out. */
static void
push_pull (GstHarness *h, const TestImage *in, gsize pad, M2iFormat out_f, TestImage *out)
{
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (in, pad)), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  fail_unless (o != NULL);
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  test_image_from_buffer (out, o, caps, out_f);
  gst_caps_unref (caps);
  gst_buffer_unref (o);
}

/* Runs @desc on one frame @in -> @out_f @ow x @oh. */
static void
run_element (const char *desc, const TestImage *in, gsize pad, M2iFormat out_f, gint ow,
    gint oh, TestImage *out)
{
  GstHarness *h = harness_for (desc, in->img.format, in->img.width, in->img.height, out_f, ow,
      oh);
  push_pull (h, in, pad, out_f, out);
  gst_harness_teardown (h);
}

/* ---- m2icolorconvert --------------------------------------------------------- */

static void
csc_ops (M2iOpList *ops, M2iFormat out)
{
  m2i_op_list_init (ops);
  m2i_op_list_add_csc (ops, m2i_format_order (out));
  if (m2i_format_dtype (out) != M2I_DTYPE_U8)
    m2i_op_list_add_convert (ops, m2i_format_dtype (out));
  if (m2i_format_layout (out) == M2I_LAYOUT_PLANAR)
    m2i_op_list_add_permute (ops);
}

/* Asserts that @got (freed here) is byte for byte the reference path's csc
 * of @in to @out_f at @in's size; @what names the case in a failure. */
static void
assert_csc_reference (const TestImage *in, TestImage *got, M2iFormat out_f, const char *what)
{
  M2iOpList ops;
  TestImage want;
  csc_ops (&ops, out_f);
  test_reference (in, &ops, out_f, in->img.width, in->img.height, &want);
  test_assert_identical (got, &want, what);
  test_image_free (&want);
  test_image_free (got);
}

GST_START_TEST (test_colorconvert_formats)
{
  static const M2iFormat ins[] = { M2I_FORMAT_SP_NV12_8, M2I_FORMAT_PL_YUV420_8 };
  static const M2iFormat outs[] = {
    M2I_FORMAT_IL_RGB888, M2I_FORMAT_IL_BGR888, M2I_FORMAT_PL_RGB24, M2I_FORMAT_PL_BGR24,
    M2I_FORMAT_PL_FP16_RGB, M2I_FORMAT_PL_FP16_BGR, M2I_FORMAT_PL_FP32_RGB,
    M2I_FORMAT_PL_FP32_BGR, M2I_FORMAT_IL_FP16_RGB, M2I_FORMAT_IL_FP32_BGR,
  };
  for (guint i = 0; i < G_N_ELEMENTS (ins); i++) {
    TestImage in;
    test_image_alloc (&in, ins[i], 38, 22);
    test_image_fill (&in, 7 + i);
    for (guint o = 0; o < G_N_ELEMENTS (outs); o++) {
      M2iFormat of = outs[o];
      /* fp32 and interleaved fp need the extended profile; tensors say
       * nothing about channel order, the channel-order property does. */
      gboolean ext = m2i_format_dtype (of) == M2I_DTYPE_F32
          || (m2i_format_dtype (of) != M2I_DTYPE_U8
          && m2i_format_layout (of) == M2I_LAYOUT_INTERLEAVED);
      gchar *desc = g_strdup_printf ("m2icolorconvert profile=%s channel-order=%s",
          ext ? "extended" : "default", m2i_format_order (of) == M2I_ORDER_BGR ? "bgr" : "rgb");
      TestImage got;
      run_element (desc, &in, 0, of, 38, 22, &got);
      gchar *what = g_strdup_printf ("%s -> %s", m2i_format_to_string (ins[i]),
          m2i_format_to_string (of));
      assert_csc_reference (&in, &got, of, what);
      g_free (what);
      g_free (desc);
    }
    test_image_free (&in);
  }
}
GST_END_TEST;

/* round(x / 1000) of the spec's integer numerator, half up, clamped. */
static int
csc_round (int num)
{
  int n = num + 500;
  int q = n >= 0 ? n / 1000 : -((-n + 999) / 1000);
  return CLAMP (q, 0, 255);
}

GST_START_TEST (test_colorconvert_hand_values)
{
  /* NV12 8x2: four 2x2 chroma blocks with extreme and mid values. */
  static const guint8 Y[2][8] = {
    { 16, 235, 128, 0, 255, 81, 145, 41 },
    { 60, 90, 200, 210, 16, 17, 250, 251 },
  };
  static const guint8 UV[8] = { 128, 128, 16, 240, 240, 16, 90, 160 };
  TestImage in;
  test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 8, 2);
  for (int y = 0; y < 2; y++)
    memcpy (in.img.data[0] + y * in.img.stride[0], Y[y], 8);
  memcpy (in.img.data[1], UV, 8);
  TestImage got;
  run_element ("m2icolorconvert", &in, 0, M2I_FORMAT_IL_RGB888, 8, 2, &got);
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 8; x++) {
      int yy = Y[y][x] - 16, u = UV[(x / 2) * 2] - 128, v = UV[(x / 2) * 2 + 1] - 128;
      /* NV12toRGB-8: R = 1.164(Y-16) + 1.596(V-128), G = 1.164(Y-16) - 0.813(V-128)
       * - 0.391(U-128), B = 1.164(Y-16) + 2.018(U-128), rounded, clamped. */
      int r = csc_round (1164 * yy + 1596 * v);
      int g = csc_round (1164 * yy - 813 * v - 391 * u);
      int b = csc_round (1164 * yy + 2018 * u);
      fail_unless_equals_int ((int) test_sample (&got, x, y, 0), r);
      fail_unless_equals_int ((int) test_sample (&got, x, y, 1), g);
      fail_unless_equals_int ((int) test_sample (&got, x, y, 2), b);
    }
  /* Two values worked by hand: Y=16, U=V=128 is black; Y=235 is 255 white. */
  fail_unless_equals_int ((int) test_sample (&got, 0, 0, 0), 0);
  fail_unless_equals_int ((int) test_sample (&got, 1, 0, 1), 255);
  test_image_free (&got);
  test_image_free (&in);
}
GST_END_TEST;

GST_START_TEST (test_tensor_dims_spellings)
{
  /* NNStreamer writes dimensions innermost first, with or without trailing
   * 1s: both spellings negotiate, and the one downstream asked for is kept. */
  static const char *spellings[] = { "16:8:3", "16:8:3:1" };
  TestImage in, want;
  test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 16, 8);
  test_image_fill (&in, 12);
  M2iOpList ops;
  csc_ops (&ops, M2I_FORMAT_PL_FP16_RGB);
  test_reference (&in, &ops, M2I_FORMAT_PL_FP16_RGB, 16, 8, &want);
  for (guint i = 0; i < G_N_ELEMENTS (spellings); i++) {
    GstHarness *h = gst_harness_new_parse ("m2icolorconvert");
    gchar *sc = g_strdup_printf ("other/tensors,types=float16,dimensions=%s", spellings[i]);
    gst_harness_set_sink_caps_str (h, sc);
    gst_harness_set_src_caps (h, test_caps (M2I_FORMAT_SP_NV12_8, 16, 8));
    TestImage got;
    push_pull (h, &in, 0, M2I_FORMAT_PL_FP16_RGB, &got);
    GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
    fail_unless_equals_string (gst_structure_get_string (gst_caps_get_structure (caps, 0),
            "dimensions"), spellings[i]);
    test_assert_identical (&got, &want, spellings[i]);
    gst_caps_unref (caps);
    test_image_free (&got);
    g_free (sc);
    gst_harness_teardown (h);
  }
  test_image_free (&want);
  test_image_free (&in);
}
GST_END_TEST;

GST_START_TEST (test_colorconvert_strides)
{
  /* Inputs with padded rows and planes apart, described by GstVideoMeta;
   * the output must equal the tight input's reference. */
  static const M2iFormat ins[] = { M2I_FORMAT_SP_NV12_8, M2I_FORMAT_PL_YUV420_8 };
  for (guint i = 0; i < G_N_ELEMENTS (ins); i++) {
    TestImage in, got;
    test_image_alloc (&in, ins[i], 64, 36);
    test_image_fill (&in, 99 + i);
    run_element ("m2icolorconvert", &in, 40, M2I_FORMAT_PL_RGB24, 64, 36, &got);
    assert_csc_reference (&in, &got, M2I_FORMAT_PL_RGB24, "strided input");
    test_image_free (&in);
  }
}
GST_END_TEST;

GST_START_TEST (test_output_video_meta)
{
  /* Downstream that reads GstVideoMeta gets buffers carrying one, and its
   * strides are what the element wrote with. */
  TestImage in, got;
  test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 30, 10);
  test_image_fill (&in, 5);
  GstHarness *h = gst_harness_new_parse ("m2icolorconvert");
  gst_harness_add_propose_allocation_meta (h, GST_VIDEO_META_API_TYPE, NULL);
  gst_harness_set_sink_caps (h, test_caps (M2I_FORMAT_IL_BGR888, 30, 10));
  gst_harness_set_src_caps (h, test_caps (M2I_FORMAT_SP_NV12_8, 30, 10));
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&in, 0)), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  GstVideoMeta *vm = gst_buffer_get_video_meta (o);
  fail_unless (vm != NULL);
  fail_unless (vm->stride[0] >= 90);
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  test_image_from_buffer (&got, o, caps, M2I_FORMAT_IL_BGR888);
  assert_csc_reference (&in, &got, M2I_FORMAT_IL_BGR888, "output with video meta");
  gst_caps_unref (caps);
  gst_buffer_unref (o);
  gst_harness_teardown (h);
  test_image_free (&in);
}
GST_END_TEST;

/* Expects negotiation of @desc from @in_f to the sink caps @sink_caps to
 * fail: not-negotiated on push and an error message containing @needle. */
static void
expect_refused (const char *desc, M2iFormat in_f, gint iw, gint ih, const char *sink_caps,
    const char *needle)
{
  GstHarness *h = gst_harness_new_parse (desc);
  GstBus *bus = test_harness_bus (h);
  gst_harness_set_sink_caps_str (h, sink_caps);
  gst_harness_set_src_caps (h, test_caps (in_f, iw, ih));
  /* as many bytes as any format of this size needs (odd sizes included) */
  GstBuffer *buf = gst_buffer_new_allocate (NULL, (gsize) iw * ih * 3 + 4096, NULL);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_NOT_NEGOTIATED);
  gchar *msg = test_bus_error (bus);
  GST_INFO ("error: %s", msg);
  fail_unless (strstr (msg, needle) != NULL, "message \"%s\" does not say \"%s\"", msg, needle);
  g_free (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_START_TEST (test_odd_nv12_refused)
{
  expect_refused ("m2icolorconvert", M2I_FORMAT_SP_NV12_8, 63, 48,
      "video/x-raw,format=RGB", "odd width or height");
  expect_refused ("m2icolorconvert", M2I_FORMAT_PL_YUV420_8, 64, 33,
      "video/x-raw,format=RGBP", "needs even sizes");
}
GST_END_TEST;

/* The odd size is refused once, not at every retry of the source
 * (gst-launch printed it seven times). */
GST_START_TEST (test_refusal_posted_once)
{
  fail_unless_equals_int (test_pipeline_refusals ("videotestsrc num-buffers=3 ! "
          "video/x-raw,format=NV12,width=321,height=240 ! m2icolorconvert name=c ! "
          "video/x-raw,format=RGB ! fakesink", "c", "odd width or height"), 1);
}
GST_END_TEST;

GST_START_TEST (test_profile_refuses_fp16_interleaved)
{
  const char *il16 = "other/tensors,types=float16,dimensions=3:64:48:1";
  expect_refused ("m2icolorconvert", M2I_FORMAT_SP_NV12_8, 64, 48, il16,
      "cannot produce interleaved fp16 tensors");
  expect_refused ("m2icolorconvert", M2I_FORMAT_SP_NV12_8, 64, 48,
      "other/tensors,types=float32,dimensions=64:48:3:1", "has no fp32");
  /* The extended profile produces it (the CPU finishes the interleaved fp
   * output), equal to the reference. */
  TestImage in, got;
  test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 64, 48);
  test_image_fill (&in, 3);
  run_element ("m2icolorconvert profile=extended", &in, 0, M2I_FORMAT_IL_FP16_RGB, 64, 48, &got);
  assert_csc_reference (&in, &got, M2I_FORMAT_IL_FP16_RGB, "interleaved fp16, extended");
  test_image_free (&in);
}
GST_END_TEST;

/* ---- m2iresize ------------------------------------------------------------------ */

/* The reference path's resize of @in with @p into a new @want of the same
 * format, p->out_width x p->out_height. */
static void
resize_reference (const TestImage *in, const M2iResizeParams *p, TestImage *want)
{
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_resize (&ops, p);
  test_reference (in, &ops, in->img.format, p->out_width, p->out_height, want);
}

GST_START_TEST (test_resize_formats_modes)
{
  static const M2iFormat fmts[] = {
    M2I_FORMAT_IL_RGB888, M2I_FORMAT_IL_BGR888, M2I_FORMAT_PL_RGB24, M2I_FORMAT_PL_BGR24,
    M2I_FORMAT_PL_FP16_RGB, M2I_FORMAT_PL_FP32_RGB, M2I_FORMAT_IL_FP16_RGB,
  };
  static const struct {
    const char *props;
    M2iResizeMode mode;
    M2iCoordMode coord;
    M2iNearestMode nearest;
    gboolean antialias;
    float cube;
  } modes[] = {
    { "mode=nearest", M2I_RESIZE_NEAREST, M2I_COORD_HALF_PIXEL, M2I_NEAREST_ROUND_PREFER_FLOOR, FALSE, -0.75f },
    { "mode=nearest coordinate-transformation-mode=asymmetric nearest-mode=floor",
      M2I_RESIZE_NEAREST, M2I_COORD_ASYMMETRIC, M2I_NEAREST_FLOOR, FALSE, -0.75f },
    { "mode=linear-onnx coordinate-transformation-mode=align-corners", M2I_RESIZE_LINEAR_ONNX,
      M2I_COORD_ALIGN_CORNERS, M2I_NEAREST_ROUND_PREFER_FLOOR, FALSE, -0.75f },
    { "mode=linear antialias=true", M2I_RESIZE_LINEAR, M2I_COORD_HALF_PIXEL,
      M2I_NEAREST_ROUND_PREFER_FLOOR, TRUE, -0.75f },
    { "mode=cubic cube-coeff=-0.5 coordinate-transformation-mode=pytorch-half-pixel",
      M2I_RESIZE_CUBIC, M2I_COORD_PYTORCH_HALF_PIXEL, M2I_NEAREST_ROUND_PREFER_FLOOR, FALSE, -0.5f },
    { "mode=bilinear-pillow", M2I_RESIZE_BILINEAR_PILLOW, M2I_COORD_HALF_PIXEL,
      M2I_NEAREST_ROUND_PREFER_FLOOR, FALSE, -0.75f },
    { "mode=bicubic-pillow coordinate-transformation-mode=tf-half-pixel-for-nn",
      M2I_RESIZE_BICUBIC_PILLOW, M2I_COORD_TF_HALF_PIXEL_FOR_NN, M2I_NEAREST_ROUND_PREFER_FLOOR, FALSE, -0.75f },
  };
  /* odd sizes, down and up */
  static const gint sizes[][4] = { { 37, 23, 17, 11 }, { 9, 7, 20, 15 } };
  for (guint f = 0; f < G_N_ELEMENTS (fmts); f++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
        const gint *sz = sizes[s];
        TestImage in, got, want;
        test_image_alloc (&in, fmts[f], sz[0], sz[1]);
        test_image_fill (&in, 11 * f + m);
        gchar *desc = g_strdup_printf ("m2iresize profile=extended %s", modes[m].props);
        run_element (desc, &in, 0, fmts[f], sz[2], sz[3], &got);
        M2iResizeParams p;
        m2i_resize_params_init (&p, sz[2], sz[3]);
        p.mode = modes[m].mode;
        p.coord = modes[m].coord;
        p.nearest = modes[m].nearest;
        p.antialias = modes[m].antialias;
        p.cube_coeff = modes[m].cube;
        resize_reference (&in, &p, &want);
        gchar *what = g_strdup_printf ("%s %s %dx%d->%dx%d", m2i_format_to_string (fmts[f]),
            modes[m].props, sz[0], sz[1], sz[2], sz[3]);
        test_assert_identical (&got, &want, what);
        g_free (what);
        g_free (desc);
        test_image_free (&got);
        test_image_free (&want);
        test_image_free (&in);
      }
}
GST_END_TEST;

GST_START_TEST (test_resize_hand_values)
{
  /* Halving with linear-onnx and half_pixel samples every output pixel at
   * the centre of a 2x2 block: the mean of four values (multiples of 4 here,
   * so the mean is exact whatever the rounding). */
  TestImage in, got;
  test_image_alloc (&in, M2I_FORMAT_IL_RGB888, 8, 6);
  for (gint y = 0; y < 6; y++)
    for (gint x = 0; x < 8; x++)
      for (int c = 0; c < 3; c++)
        in.img.data[0][y * in.img.stride[0] + x * 3 + c] = (guint8) (4 * ((x * 7 + y * 13 + c * 5) % 64));
  run_element ("m2iresize mode=linear-onnx", &in, 0, M2I_FORMAT_IL_RGB888, 4, 3, &got);
  for (gint y = 0; y < 3; y++)
    for (gint x = 0; x < 4; x++)
      for (int c = 0; c < 3; c++) {
        float sum = test_sample (&in, 2 * x, 2 * y, c) + test_sample (&in, 2 * x + 1, 2 * y, c)
            + test_sample (&in, 2 * x, 2 * y + 1, c) + test_sample (&in, 2 * x + 1, 2 * y + 1, c);
        fail_unless_equals_float (test_sample (&got, x, y, c), sum / 4);
      }
  test_image_free (&got);
  /* nearest, asymmetric, floor: output x picks input floor(x * 8/4). */
  run_element ("m2iresize mode=nearest coordinate-transformation-mode=asymmetric "
      "nearest-mode=floor", &in, 0, M2I_FORMAT_IL_RGB888, 4, 3, &got);
  for (gint y = 0; y < 3; y++)
    for (gint x = 0; x < 4; x++)
      for (int c = 0; c < 3; c++)
        fail_unless_equals_float (test_sample (&got, x, y, c), test_sample (&in, 2 * x, 2 * y, c));
  test_image_free (&got);
  test_image_free (&in);
}
GST_END_TEST;

GST_START_TEST (test_resize_letterbox)
{
  /* 40x20 into 30x30 keeping the aspect ratio: a 30x15 picture at y = 7
   * (border 7 above, 8 below) and 114 elsewhere. */
  static const M2iFormat fmts[] = { M2I_FORMAT_IL_RGB888, M2I_FORMAT_PL_BGR24,
    M2I_FORMAT_PL_FP16_RGB };
  for (guint f = 0; f < G_N_ELEMENTS (fmts); f++) {
    TestImage in, got, inner;
    test_image_alloc (&in, fmts[f], 40, 20);
    test_image_fill (&in, 21 + f);
    run_element ("m2iresize keep-aspect-ratio=true pad-value=114 mode=cubic", &in, 0, fmts[f],
        30, 30, &got);
    M2iResizeParams p;
    m2i_resize_params_init (&p, 30, 15);
    p.mode = M2I_RESIZE_CUBIC;
    resize_reference (&in, &p, &inner);
    for (gint y = 0; y < 30; y++)
      for (gint x = 0; x < 30; x++)
        for (int c = 0; c < 3; c++) {
          float want = y >= 7 && y < 22 ? test_sample (&inner, x, y - 7, c) : 114.0f;
          fail_unless_equals_float (test_sample (&got, x, y, c), want);
        }
    test_image_free (&got);
    test_image_free (&inner);
    test_image_free (&in);
  }
}
GST_END_TEST;

GST_START_TEST (test_resize_passthrough)
{
  /* Same size: nothing to do, the buffer passes untouched. */
  GstHarness *h = harness_for ("m2iresize name=rs", M2I_FORMAT_IL_RGB888, 16, 8,
      M2I_FORMAT_IL_RGB888, 16, 8);
  TestImage in;
  test_image_alloc (&in, M2I_FORMAT_IL_RGB888, 16, 8);
  GstBuffer *b = test_image_to_buffer (&in, 0);
  gst_buffer_ref (b);
  fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  fail_unless (o == b);
  gchar *fused = test_harness_fused (h, "rs");
  fail_unless (strstr (fused, "passthrough") != NULL, "%s", fused);
  g_free (fused);
  gst_buffer_unref (o);
  gst_buffer_unref (b);
  test_image_free (&in);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* ---- m2inorm ---------------------------------------------------------------------- */

static const float IMAGENET_MEAN[3] = { 0.485f, 0.456f, 0.406f };
static const float IMAGENET_STD[3] = { 0.229f, 0.224f, 0.225f };
#define IMAGENET_PROPS "mean=\"<0.485, 0.456, 0.406>\" std=\"<0.229, 0.224, 0.225>\" " \
  "input-scale=0.00392156862745098"

GST_START_TEST (test_norm_formats)
{
  static const struct { M2iFormat in, out; } cases[] = {
    { M2I_FORMAT_IL_RGB888, M2I_FORMAT_PL_FP16_RGB },
    { M2I_FORMAT_IL_BGR888, M2I_FORMAT_PL_FP32_BGR },
    { M2I_FORMAT_PL_RGB24, M2I_FORMAT_PL_FP16_RGB },
    { M2I_FORMAT_PL_BGR24, M2I_FORMAT_PL_FP32_BGR },
    { M2I_FORMAT_PL_FP16_RGB, M2I_FORMAT_PL_FP16_RGB },
    { M2I_FORMAT_PL_FP32_RGB, M2I_FORMAT_PL_FP32_RGB },
    { M2I_FORMAT_IL_RGB888, M2I_FORMAT_IL_FP16_RGB },
  };
  M2iNormParams np;
  fail_unless (m2i_norm_params_from_mean_std (&np, IMAGENET_MEAN, IMAGENET_STD, 1.0f / 255));
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    M2iFormat inf = cases[i].in, of = cases[i].out;
    TestImage in, got, want;
    test_image_alloc (&in, inf, 21, 13);
    test_image_fill (&in, 40 + i);
    run_element ("m2inorm profile=extended " IMAGENET_PROPS, &in, 0, of, 21, 13, &got);
    M2iOpList ops;
    m2i_op_list_init (&ops);
    if (m2i_format_dtype (inf) == M2I_DTYPE_U8)
      m2i_op_list_add_convert (&ops, m2i_format_dtype (of));
    if (m2i_format_layout (inf) != m2i_format_layout (of))
      m2i_op_list_add_permute (&ops);
    m2i_op_list_add_norm (&ops, &np);
    test_reference (&in, &ops, of, 21, 13, &want);
    /* The device may use (x - B) * (A / C) + D: one fp16 ulp of freedom. */
    gchar *what = g_strdup_printf ("norm %s -> %s", m2i_format_to_string (inf),
        m2i_format_to_string (of));
    test_assert_close (&got, &want, 1.0f, what);
    g_free (what);
    test_image_free (&got);
    test_image_free (&want);
    test_image_free (&in);
  }
}
GST_END_TEST;

static float
f16 (float v)
{
  return m2i_f16_to_f32 (m2i_f32_to_f16 (v));
}

GST_START_TEST (test_norm_hand_values)
{
  TestImage in, got;
  test_image_alloc (&in, M2I_FORMAT_IL_RGB888, 4, 1);
  static const guint8 px[12] = { 0, 0, 0, 255, 255, 255, 124, 116, 104, 10, 200, 77 };
  memcpy (in.img.data[0], px, 12);
  /* mean/std: out = (x / 255 - mean) / std, the device holding
   * B = fp16(mean * 255), C = fp16(std * 255). */
  run_element ("m2inorm " IMAGENET_PROPS, &in, 0, M2I_FORMAT_PL_FP16_RGB, 4, 1, &got);
  for (gint x = 0; x < 4; x++)
    for (int c = 0; c < 3; c++) {
      double v = px[x * 3 + c];
      double dev = (v - f16 (IMAGENET_MEAN[c] * 255)) / f16 (IMAGENET_STD[c] * 255);
      double exact = (v / 255 - IMAGENET_MEAN[c]) / IMAGENET_STD[c];
      float out = test_sample (&got, x, 0, c);
      fail_unless (fabs (out - dev) <= test_f16_ulp ((float) dev), "(%d,%d): %g vs %g", x, c,
          out, dev);
      fail_unless (fabs (out - exact) <= 5e-3 * fabs (exact) + 5e-3, "(%d,%d): %g vs %g", x,
          c, out, exact);
    }
  /* Worked by hand: pixel 0 is black, -mean/std = -2.1179, -2.0357, -1.8044. */
  fail_unless (fabs (test_sample (&got, 0, 0, 0) + 2.1179) < 4e-3);
  fail_unless (fabs (test_sample (&got, 0, 0, 2) + 1.8044) < 4e-3);
  test_image_free (&got);

  /* batch-norm: (x - mean) / sqrt(var + eps) * gamma + beta. */
  run_element ("m2inorm mode=batch-norm mean=\"<10, 20, 30>\" variance=\"<4, 16, 100>\" "
      "epsilon=0.5 gamma=\"<2, 0.5, -1>\" beta=\"<1, 0, 3>\"", &in, 0, M2I_FORMAT_PL_FP16_RGB,
      4, 1, &got);
  static const float mean[3] = { 10, 20, 30 }, var[3] = { 4, 16, 100 }, gamma[3] = { 2, 0.5f, -1 },
      beta[3] = { 1, 0, 3 };
  for (gint x = 0; x < 4; x++)
    for (int c = 0; c < 3; c++) {
      double v = px[x * 3 + c];
      double dev = (v - f16 (mean[c])) / f16 (sqrtf (var[c] + 0.5f)) * f16 (gamma[c]) + f16 (beta[c]);
      float out = test_sample (&got, x, 0, c);
      fail_unless (fabs (out - dev) <= test_f16_ulp ((float) dev), "bn (%d,%d): %g vs %g", x, c,
          out, dev);
    }
  /* pixel 1, channel 0: (255 - 10) / sqrt(4.5) * 2 + 1 = 231.98 */
  fail_unless (fabs (test_sample (&got, 1, 0, 0) - 231.98) < 0.2);
  test_image_free (&got);
  test_image_free (&in);
}
GST_END_TEST;

GST_START_TEST (test_norm_bad_std_refused)
{
  expect_refused ("m2inorm std=\"<1, 0, 1>\"", M2I_FORMAT_IL_RGB888, 8, 8,
      "other/tensors", "std must be positive");
}
GST_END_TEST;

GST_START_TEST (test_norm_bad_channel_count_refused)
{
  /* Two numbers are neither one for every channel nor one per channel: the
   * element refuses to start and says so (it once ran on with the old
   * numbers, a warning in the debug log only). */
  expect_refused ("m2inorm mean=\"<1, 2>\"", M2I_FORMAT_IL_RGB888, 8, 8, "other/tensors",
      "mean takes 1 number (every channel) or 3 (one per channel), as in mean=\"<1>\" or "
      "mean=\"<1, 2, 3>\"; mean=\"<1, 2>\" was refused");
  expect_refused ("m2inorm mode=batch-norm gamma=\"<1, 2, 3, 4>\"", M2I_FORMAT_IL_RGB888, 8,
      8, "other/tensors", "gamma=\"<1, 2, 3, 4>\" was refused");
  /* A good value set after a refused one replaces it: out = x - 100. */
  TestImage in, got;
  test_image_alloc (&in, M2I_FORMAT_IL_RGB888, 4, 2);
  test_image_fill (&in, 31);
  run_element ("m2inorm mean=\"<1, 2>\" mean=\"<100>\"", &in, 0, M2I_FORMAT_PL_FP16_RGB, 4, 2,
      &got);
  for (gint y = 0; y < 2; y++)
    for (gint x = 0; x < 4; x++)
      for (int c = 0; c < 3; c++)
        fail_unless_equals_float (test_sample (&got, x, y, c), test_sample (&in, x, y, c) - 100);
  test_image_free (&got);
  test_image_free (&in);
}
GST_END_TEST;

GST_START_TEST (test_caps_named_in_messages)
{
  /* A frame GStreamer cannot lay out: the message quotes the caps (it once
   * printed a pointer). */
  expect_refused ("m2iresize", M2I_FORMAT_IL_RGB888, 8, 8,
      "video/x-raw,format=RGB,width=65536,height=65536",
      "cannot read the video caps video/x-raw, format=(string)RGB, width=(int)65536, "
      "height=(int)65536");
}
GST_END_TEST;

/* ---- stream behaviour -------------------------------------------------------------- */

GST_START_TEST (test_renegotiation)
{
  /* A new input size mid-stream: the output follows, pixels stay right. */
  GstHarness *h = gst_harness_new_parse ("m2icolorconvert");
  gst_harness_set_sink_caps_str (h, "video/x-raw,format=RGBP");
  static const gint sizes[][2] = { { 64, 48 }, { 32, 16 }, { 64, 48 } };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++) {
    gint w = sizes[i][0], hh = sizes[i][1];
    gst_harness_set_src_caps (h, test_caps (M2I_FORMAT_SP_NV12_8, w, hh));
    TestImage in, got;
    test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, w, hh);
    test_image_fill (&in, 60 + i);
    push_pull (h, &in, 0, M2I_FORMAT_PL_RGB24, &got);
    assert_csc_reference (&in, &got, M2I_FORMAT_PL_RGB24, "after renegotiation");
    test_image_free (&in);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_flush_eos_state)
{
  GstHarness *h = harness_for ("m2iresize", M2I_FORMAT_IL_RGB888, 40, 30, M2I_FORMAT_IL_RGB888,
      20, 10);
  TestImage in, got, want;
  test_image_alloc (&in, M2I_FORMAT_IL_RGB888, 40, 30);
  test_image_fill (&in, 77);
  M2iResizeParams p;
  m2i_resize_params_init (&p, 20, 10);
  p.mode = M2I_RESIZE_LINEAR_ONNX;
  resize_reference (&in, &p, &want);

  push_pull (h, &in, 0, M2I_FORMAT_IL_RGB888, &got);
  test_assert_identical (&got, &want, "first frame");
  test_image_free (&got);

  /* flushing seek: flush-start/stop, new segment, go on */
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  push_pull (h, &in, 0, M2I_FORMAT_IL_RGB888, &got);
  test_assert_identical (&got, &want, "after flush");
  test_image_free (&got);

  /* EOS reaches downstream */
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  gboolean eos = FALSE;
  GstEvent *ev;
  while ((ev = gst_harness_try_pull_event (h))) {
    eos |= GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  fail_unless (eos);

  /* state changes down to NULL and back up, then the stream again */
  fail_unless (gst_element_set_state (h->element, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  gst_harness_play (h);
  fail_unless (gst_harness_push_event (h, gst_event_new_stream_start ("again")));
  gst_harness_set_src_caps (h, test_caps (M2I_FORMAT_IL_RGB888, 40, 30));
  push_pull (h, &in, 0, M2I_FORMAT_IL_RGB888, &got);
  test_assert_identical (&got, &want, "after NULL -> PLAYING");
  test_image_free (&got);
  test_image_free (&want);
  test_image_free (&in);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_short_buffer_is_an_error)
{
  /* A buffer smaller than its caps say fails cleanly with a message. */
  GstHarness *h = harness_for ("m2icolorconvert", M2I_FORMAT_SP_NV12_8, 64, 48,
      M2I_FORMAT_IL_RGB888, 64, 48);
  GstBus *bus = test_harness_bus (h);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_allocate (NULL, 100, NULL)),
      GST_FLOW_ERROR);
  gchar *msg = test_bus_error (bus);
  fail_unless (strstr (msg, "m2icolorconvert") != NULL, "%s", msg);
  g_free (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_property_change_mid_stream)
{
  /* A new resize mode takes effect on the next frame (the plan is redone). */
  GstHarness *h = harness_for ("m2iresize name=rs mode=nearest", M2I_FORMAT_PL_RGB24, 33, 21,
      M2I_FORMAT_PL_RGB24, 12, 9);
  GstElement *rs = gst_bin_get_by_name (GST_BIN (h->element), "rs");
  TestImage in;
  test_image_alloc (&in, M2I_FORMAT_PL_RGB24, 33, 21);
  test_image_fill (&in, 8);
  static const char *modes[] = { "nearest", "cubic", "bilinear-pillow" };
  static const M2iResizeMode mv[] = { M2I_RESIZE_NEAREST, M2I_RESIZE_CUBIC,
    M2I_RESIZE_BILINEAR_PILLOW };
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++) {
    gst_util_set_object_arg (G_OBJECT (rs), "mode", modes[i]);
    TestImage got, want;
    push_pull (h, &in, 0, M2I_FORMAT_PL_RGB24, &got);
    M2iResizeParams p;
    m2i_resize_params_init (&p, 12, 9);
    p.mode = mv[i];
    resize_reference (&in, &p, &want);
    test_assert_identical (&got, &want, modes[i]);
    test_image_free (&got);
    test_image_free (&want);
  }
  gst_object_unref (rs);
  test_image_free (&in);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_documentation_complete)
{
  /* What gst-inspect-1.0 shows: metadata, pad templates, and for every
   * property a nick and a description, enum values with nicks. */
  static const char *names[] = { "m2icolorconvert", "m2iresize", "m2inorm" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    guint own = test_assert_documented (names[i]);
    /* profile, n-threads, fusion, fused and the element's own */
    fail_unless (own >= 5, "%s: only %u m2i properties", names[i], own);
  }
}
GST_END_TEST;

static Suite *
m2i_elements_suite (void)
{
  Suite *s = suite_create ("m2i-elements");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_colorconvert_formats);
  tcase_add_test (tc, test_colorconvert_hand_values);
  tcase_add_test (tc, test_refusal_posted_once);
  tcase_add_test (tc, test_tensor_dims_spellings);
  tcase_add_test (tc, test_colorconvert_strides);
  tcase_add_test (tc, test_output_video_meta);
  tcase_add_test (tc, test_odd_nv12_refused);
  tcase_add_test (tc, test_profile_refuses_fp16_interleaved);
  tcase_add_test (tc, test_resize_formats_modes);
  tcase_add_test (tc, test_resize_hand_values);
  tcase_add_test (tc, test_resize_letterbox);
  tcase_add_test (tc, test_resize_passthrough);
  tcase_add_test (tc, test_norm_formats);
  tcase_add_test (tc, test_norm_hand_values);
  tcase_add_test (tc, test_norm_bad_std_refused);
  tcase_add_test (tc, test_norm_bad_channel_count_refused);
  tcase_add_test (tc, test_caps_named_in_messages);
  tcase_add_test (tc, test_renegotiation);
  tcase_add_test (tc, test_flush_eos_state);
  tcase_add_test (tc, test_short_buffer_is_an_error);
  tcase_add_test (tc, test_property_change_mid_stream);
  tcase_add_test (tc, test_documentation_complete);
  return s;
}

GST_CHECK_MAIN (m2i_elements);
