/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-fusion.c — fusion across m2i elements (gst_harness_new_parse):
 * the fused chain, the same chain with fusion off and the chain broken by
 * non-m2i elements give identical bytes; the fused chain runs as one device
 * task per frame (device counters) and says so in its `fused` properties;
 * letterboxing, renegotiation and ghost pads inside fused chains; the
 * placeholder memory of a deferred frame materialises when mapped.
 */
#include "gst-test-util.h"

#define NORM_PROPS "mean=\"<0.485, 0.456, 0.406>\" std=\"<0.229, 0.224, 0.225>\" " \
  "input-scale=0.00392156862745098"

typedef struct {
  GstHarness *h;
  M2iDeviceCounters counters;     /* what the frames cost */
} Chain;

/* Runs @n frames of NV12 @w x @h (seeds 1..n) through @launch with sink
 * caps @sink_caps; returns the outputs unpacked as @out_f in @out. The
 * harness stays in @c for inspection (gst_harness_teardown it). */
static void
run_chain (Chain *c, const char *launch, const char *sink_caps, gint w, gint h, guint n,
    M2iFormat out_f, TestImage *out)
{
  M2iDevice *dev = m2i_device_get_default ();
  c->h = gst_harness_new_parse (launch);
  gst_harness_set_sink_caps_str (c->h, sink_caps);
  gst_harness_set_src_caps (c->h, test_caps (M2I_FORMAT_SP_NV12_8, w, h));
  m2i_device_reset_counters (dev);
  for (guint i = 0; i < n; i++) {
    TestImage in;
    test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, w, h);
    test_image_fill (&in, i + 1);
    fail_unless_equals_int (gst_harness_push (c->h, test_image_to_buffer (&in, 0)), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (c->h);
    GstCaps *caps = gst_pad_get_current_caps (c->h->sinkpad);
    test_image_from_buffer (&out[i], o, caps, out_f);
    gst_caps_unref (caps);
    gst_buffer_unref (o);
    test_image_free (&in);
  }
  m2i_device_get_counters (dev, &c->counters);
}

static void
assert_fused_contains (Chain *c, const char *name, const char *needle)
{
  gchar *s = test_harness_fused (c->h, name);
  GST_INFO ("%s: fused = %s", name, s);
  fail_unless (strstr (s, needle) != NULL, "%s.fused = \"%s\" lacks \"%s\"", name, s, needle);
  g_free (s);
}

/* Whether the link out of element @name carries deferred frames. */
static gboolean
link_is_deferred (Chain *c, const char *name)
{
  GstElement *el = gst_bin_get_by_name (GST_BIN (c->h->element), name);
  GstPad *pad = gst_element_get_static_pad (el, "src");
  GstCaps *caps = gst_pad_get_current_caps (pad);
  fail_unless (caps != NULL);
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  gboolean d = f && gst_caps_features_contains (f, "memory:M2I");
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (el);
  return d;
}

static void
free_images (TestImage *t, guint n)
{
  for (guint i = 0; i < n; i++)
    test_image_free (&t[i]);
}

#define N_FRAMES 3

/* The three-element chain in profile @profile: fused, fusion off, and
 * broken by identity and by queue. */
static void
check_chain_variants (const char *profile, guint64 device_tasks_per_frame)
{
  const char *sink = "other/tensors,format=static,num_tensors=1,types=float16,"
      "dimensions=64:64:3:1";
  gchar *fused = g_strdup_printf ("m2icolorconvert name=cc profile=%s ! m2iresize name=rs "
      "profile=%s ! m2inorm name=nm profile=%s " NORM_PROPS, profile, profile, profile);
  gchar *off = g_strdup_printf ("m2icolorconvert name=cc fusion=false profile=%s ! m2iresize "
      "name=rs fusion=false profile=%s ! m2inorm name=nm fusion=false profile=%s " NORM_PROPS,
      profile, profile, profile);
  gchar *ident = g_strdup_printf ("m2icolorconvert name=cc profile=%s ! identity ! m2iresize "
      "name=rs profile=%s ! m2inorm name=nm profile=%s " NORM_PROPS, profile, profile, profile);
  gchar *queue = g_strdup_printf ("m2icolorconvert name=cc profile=%s ! m2iresize name=rs "
      "profile=%s ! queue ! m2inorm name=nm profile=%s " NORM_PROPS, profile, profile, profile);
  TestImage a[N_FRAMES], b[N_FRAMES], c[N_FRAMES], d[N_FRAMES];
  Chain ca, cb, cc, cd;

  run_chain (&ca, fused, sink, 320, 240, N_FRAMES, M2I_FORMAT_PL_FP16_RGB, a);
  run_chain (&cb, off, sink, 320, 240, N_FRAMES, M2I_FORMAT_PL_FP16_RGB, b);
  run_chain (&cc, ident, sink, 320, 240, N_FRAMES, M2I_FORMAT_PL_FP16_RGB, c);
  run_chain (&cd, queue, sink, 320, 240, N_FRAMES, M2I_FORMAT_PL_FP16_RGB, d);
  for (guint i = 0; i < N_FRAMES; i++) {
    test_assert_identical (&a[i], &b[i], "fused vs fusion off");
    test_assert_identical (&a[i], &c[i], "fused vs broken by identity");
    test_assert_identical (&a[i], &d[i], "fused vs broken by queue");
  }

  /* Fused: one plan run per frame, on the device only. */
  fail_unless_equals_uint64 (ca.counters.runs, N_FRAMES);
  fail_unless_equals_uint64 (ca.counters.tasks_device, N_FRAMES * device_tasks_per_frame);
  fail_unless_equals_uint64 (ca.counters.tasks_cpu, 0);
  fail_unless (link_is_deferred (&ca, "cc") && link_is_deferred (&ca, "rs"));
  assert_fused_contains (&ca, "cc", "csc(RGB) -> convertU8F16 -> permute: deferred to rs");
  assert_fused_contains (&ca, "rs", "resize(64x64 linear_onnx half_pixel): deferred to nm");
  assert_fused_contains (&ca, "nm", "cc + rs + nm: csc(RGB) -> convertU8F16 -> permute -> resize");
  assert_fused_contains (&ca, "nm", device_tasks_per_frame == 1 ? "(1 device task)"
      : "(2 device tasks)");

  /* Off: each element ran its own plan. */
  fail_unless_equals_uint64 (cb.counters.runs, 3 * N_FRAMES);
  fail_unless (!link_is_deferred (&cb, "cc") && !link_is_deferred (&cb, "rs"));
  assert_fused_contains (&cb, "cc", "csc(RGB) -> convertU8F16 -> permute (1 device task)");
  assert_fused_contains (&cb, "rs", "resize(64x64 linear_onnx half_pixel) (1 device task)");

  /* identity breaks cc|rs, rs and nm still fuse; queue breaks rs|nm. */
  fail_unless (!link_is_deferred (&cc, "cc") && link_is_deferred (&cc, "rs"));
  assert_fused_contains (&cc, "cc", "(1 device task)");
  assert_fused_contains (&cc, "nm", "rs + nm: resize");
  fail_unless (link_is_deferred (&cd, "cc") && !link_is_deferred (&cd, "rs"));
  assert_fused_contains (&cd, "rs", "cc + rs: csc(RGB)");

  /* And the fused bytes are the chain's reference (one fp16 ulp: the norm
   * may be computed as (x - B) * (A / C) + D). */
  M2iOpList ops;
  M2iNormParams np;
  M2iResizeParams rp;
  static const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&ops, M2I_DTYPE_F16);
  m2i_op_list_add_permute (&ops);
  m2i_resize_params_init (&rp, 64, 64);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;
  m2i_op_list_add_resize (&ops, &rp);
  fail_unless (m2i_norm_params_from_mean_std (&np, mean, std, 1.0f / 255));
  m2i_op_list_add_norm (&ops, &np);
  for (guint i = 0; i < N_FRAMES; i++) {
    TestImage in, want;
    test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 320, 240);
    test_image_fill (&in, i + 1);
    test_reference (&in, &ops, M2I_FORMAT_PL_FP16_RGB, 64, 64, &want);
    test_assert_close (&a[i], &want, 1.0f, "fused vs reference");
    test_image_free (&want);
    test_image_free (&in);
  }

  free_images (a, N_FRAMES);
  free_images (b, N_FRAMES);
  free_images (c, N_FRAMES);
  free_images (d, N_FRAMES);
  gst_harness_teardown (ca.h);
  gst_harness_teardown (cb.h);
  gst_harness_teardown (cc.h);
  gst_harness_teardown (cd.h);
  g_free (fused);
  g_free (off);
  g_free (ident);
  g_free (queue);
}

GST_START_TEST (test_fused_chain_extended)
{
  /* The extended profile fuses norm too: one device task. */
  check_chain_variants ("extended", 1);
}
GST_END_TEST;

GST_START_TEST (test_fused_chain_default)
{
  /* The seed's block fuses csc->convert->resize->permute; norm is a task of
   * its own. */
  check_chain_variants ("default", 2);
}
GST_END_TEST;

GST_START_TEST (test_fused_letterbox)
{
  /* 320x240 into 64x64 keeping the aspect ratio: a 64x48 picture at y = 8;
   * the border is the pad value run through the norm. */
  const char *sink = "other/tensors,types=float16,dimensions=64:64:3:1";
  const char *fused = "m2icolorconvert profile=extended ! m2iresize profile=extended "
      "keep-aspect-ratio=true pad-value=114 ! m2inorm profile=extended " NORM_PROPS;
  const char *off = "m2icolorconvert fusion=false profile=extended ! m2iresize fusion=false "
      "profile=extended keep-aspect-ratio=true pad-value=114 ! m2inorm fusion=false "
      "profile=extended " NORM_PROPS;
  const char *ident = "m2icolorconvert profile=extended ! m2iresize profile=extended "
      "keep-aspect-ratio=true pad-value=114 ! identity ! m2inorm profile=extended " NORM_PROPS;
  TestImage a[1], b[1], c[1];
  Chain ca, cb, cc;
  run_chain (&ca, fused, sink, 320, 240, 1, M2I_FORMAT_PL_FP16_RGB, a);
  run_chain (&cb, off, sink, 320, 240, 1, M2I_FORMAT_PL_FP16_RGB, b);
  run_chain (&cc, ident, sink, 320, 240, 1, M2I_FORMAT_PL_FP16_RGB, c);
  test_assert_identical (&a[0], &b[0], "letterbox fused vs off");
  test_assert_identical (&a[0], &c[0], "letterbox fused vs identity");
  static const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  for (int ch = 0; ch < 3; ch++) {
    float want = (114.0f / 255 - mean[ch]) / std[ch];
    for (gint y = 0; y < 64; y++) {
      if (y >= 8 && y < 56)
        continue;
      float got = test_sample (&a[0], 17, y, ch);
      fail_unless (fabsf (got - want) < 4e-3f, "border (17,%d) ch %d: %g vs %g", y, ch, got,
          want);
    }
  }
  /* the picture's first row is not border */
  fail_unless (test_sample (&a[0], 0, 8, 0) != test_sample (&a[0], 0, 7, 0)
      || test_sample (&a[0], 1, 8, 1) != test_sample (&a[0], 1, 7, 1));
  free_images (a, 1);
  free_images (b, 1);
  free_images (c, 1);
  gst_harness_teardown (ca.h);
  gst_harness_teardown (cb.h);
  gst_harness_teardown (cc.h);
}
GST_END_TEST;

GST_START_TEST (test_fused_video_chain)
{
  /* Two elements to BGR video: fused == off == reference, one task. */
  const char *sink = "video/x-raw,format=BGR,width=100,height=60";
  TestImage a[2], b[2];
  Chain ca, cb;
  run_chain (&ca, "m2icolorconvert name=cc ! m2iresize name=rs mode=cubic", sink, 320, 240, 2,
      M2I_FORMAT_IL_BGR888, a);
  run_chain (&cb, "m2icolorconvert fusion=false ! m2iresize mode=cubic", sink, 320, 240, 2,
      M2I_FORMAT_IL_BGR888, b);
  fail_unless_equals_uint64 (ca.counters.runs, 2);
  fail_unless_equals_uint64 (ca.counters.tasks_device, 2);
  assert_fused_contains (&ca, "rs", "cc + rs: csc(BGR) -> resize(100x60 cubic");
  M2iOpList ops;
  M2iResizeParams rp;
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, M2I_ORDER_BGR);
  m2i_resize_params_init (&rp, 100, 60);
  rp.mode = M2I_RESIZE_CUBIC;
  m2i_op_list_add_resize (&ops, &rp);
  for (guint i = 0; i < 2; i++) {
    TestImage in, want;
    test_assert_identical (&a[i], &b[i], "video chain fused vs off");
    test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 320, 240);
    test_image_fill (&in, i + 1);
    test_reference (&in, &ops, M2I_FORMAT_IL_BGR888, 100, 60, &want);
    test_assert_identical (&a[i], &want, "video chain vs reference");
    test_image_free (&want);
    test_image_free (&in);
  }
  free_images (a, 2);
  free_images (b, 2);
  gst_harness_teardown (ca.h);
  gst_harness_teardown (cb.h);
}
GST_END_TEST;

GST_START_TEST (test_fused_through_ghost_pads)
{
  /* The neighbour is found through ghost pads of a bin. */
  TestImage a[1], b[1];
  Chain ca, cb;
  const char *sink = "other/tensors,types=float16,dimensions=32:32:3:1";
  run_chain (&ca, "m2icolorconvert name=cc ! ( m2iresize name=rs ! m2inorm name=nm "
      NORM_PROPS " )", sink, 64, 48, 1, M2I_FORMAT_PL_FP16_RGB, a);
  run_chain (&cb, "m2icolorconvert fusion=false ! m2iresize fusion=false ! m2inorm "
      NORM_PROPS, sink, 64, 48, 1, M2I_FORMAT_PL_FP16_RGB, b);
  assert_fused_contains (&ca, "cc", "deferred to rs");
  assert_fused_contains (&ca, "nm", "cc + rs + nm");
  test_assert_identical (&a[0], &b[0], "through a bin vs off");
  free_images (a, 1);
  free_images (b, 1);
  gst_harness_teardown (ca.h);
  gst_harness_teardown (cb.h);
}
GST_END_TEST;

GST_START_TEST (test_fused_renegotiation)
{
  /* A new input size mid-stream: the chain replans and stays exact. */
  const char *sink = "video/x-raw,format=RGBP,width=48,height=40";
  GstHarness *hf = gst_harness_new_parse ("m2icolorconvert ! m2iresize name=rs");
  GstHarness *ho = gst_harness_new_parse ("m2icolorconvert fusion=false ! m2iresize fusion=false");
  gst_harness_set_sink_caps_str (hf, sink);
  gst_harness_set_sink_caps_str (ho, sink);
  static const gint sizes[][2] = { { 320, 240 }, { 160, 128 }, { 96, 40 } };
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
    GstHarness *hs[2] = { hf, ho };
    TestImage out[2], in;
    test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, sizes[s][0], sizes[s][1]);
    test_image_fill (&in, 9 + s);
    for (int k = 0; k < 2; k++) {
      gst_harness_set_src_caps (hs[k], test_caps (M2I_FORMAT_SP_NV12_8, sizes[s][0], sizes[s][1]));
      fail_unless_equals_int (gst_harness_push (hs[k], test_image_to_buffer (&in, 0)), GST_FLOW_OK);
      GstBuffer *o = gst_harness_pull (hs[k]);
      GstCaps *caps = gst_pad_get_current_caps (hs[k]->sinkpad);
      test_image_from_buffer (&out[k], o, caps, M2I_FORMAT_PL_RGB24);
      gst_caps_unref (caps);
      gst_buffer_unref (o);
    }
    test_assert_identical (&out[0], &out[1], "fused vs off after renegotiation");
    gchar *f = test_harness_fused (hf, "rs");
    fail_unless (strstr (f, "resize(48x40") != NULL && strstr (f, "(1 device task)") != NULL,
        "%s", f);
    g_free (f);
    test_image_free (&out[0]);
    test_image_free (&out[1]);
    test_image_free (&in);
  }
  gst_harness_teardown (hf);
  gst_harness_teardown (ho);
}
GST_END_TEST;

static GstPadProbeReturn
grab_buffer (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  GstBuffer **slot = user_data;
  if (!*slot)
    *slot = gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER (info));
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_deferred_buffer_maps_to_pixels)
{
  /* A deferred frame caught between two fused elements: its meta says what
   * it is, its memory is a placeholder, and mapping it computes the pixels
   * the unfused element would have produced. */
  const char *sink = "video/x-raw,format=RGB,width=80,height=40";
  GstBuffer *caught = NULL;
  GstHarness *h = gst_harness_new_parse ("m2icolorconvert name=cc ! m2iresize name=rs");
  GstElement *rs = gst_bin_get_by_name (GST_BIN (h->element), "rs");
  GstPad *sinkpad = gst_element_get_static_pad (rs, "sink");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, grab_buffer, &caught, NULL);
  gst_harness_set_sink_caps_str (h, sink);
  gst_harness_set_src_caps (h, test_caps (M2I_FORMAT_SP_NV12_8, 64, 48));
  TestImage in, want, got;
  test_image_alloc (&in, M2I_FORMAT_SP_NV12_8, 64, 48);
  test_image_fill (&in, 4);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&in, 0)), GST_FLOW_OK);
  gst_buffer_unref (gst_harness_pull (h));
  fail_unless (caught != NULL);
  fail_unless (gst_buffer_get_meta (caught, g_type_from_name ("GstM2iDeferredMetaAPI")) != NULL);
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (caught, 0), "M2IDeferred"));
  GstCaps *caps = gst_pad_get_current_caps (sinkpad);
  fail_unless (gst_caps_features_contains (gst_caps_get_features (caps, 0), "memory:M2I"));
  test_image_from_buffer (&got, caught, caps, M2I_FORMAT_IL_RGB888);
  M2iOpList ops;
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, M2I_ORDER_RGB);
  test_reference (&in, &ops, M2I_FORMAT_IL_RGB888, 64, 48, &want);
  test_assert_identical (&got, &want, "materialised deferred frame");
  gst_caps_unref (caps);
  gst_buffer_unref (caught);
  gst_object_unref (sinkpad);
  gst_object_unref (rs);
  test_image_free (&got);
  test_image_free (&want);
  test_image_free (&in);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_fusion_off_on_last_element)
{
  /* nm refuses deferred frames: rs runs cc's and its own ops, nm its own. */
  TestImage a[1], b[1];
  Chain ca, cb;
  const char *sink = "other/tensors,types=float16,dimensions=32:24:3:1";
  run_chain (&ca, "m2icolorconvert name=cc ! m2iresize name=rs ! m2inorm name=nm fusion=false "
      NORM_PROPS, sink, 64, 48, 1, M2I_FORMAT_PL_FP16_RGB, a);
  run_chain (&cb, "m2icolorconvert fusion=false ! m2iresize fusion=false ! m2inorm "
      "fusion=false " NORM_PROPS, sink, 64, 48, 1, M2I_FORMAT_PL_FP16_RGB, b);
  assert_fused_contains (&ca, "rs", "cc + rs: csc(RGB)");
  assert_fused_contains (&ca, "nm", "norm(");
  fail_unless_equals_uint64 (ca.counters.runs, 2);
  test_assert_identical (&a[0], &b[0], "partly fused vs off");
  free_images (a, 1);
  free_images (b, 1);
  gst_harness_teardown (ca.h);
  gst_harness_teardown (cb.h);
}
GST_END_TEST;

GST_START_TEST (test_long_chain_splits)
{
  /* csc, convert, permute and seven norms do not fit one op list (8 ops):
   * the element whose ops overflow it computes the chain so far first. The
   * result still equals the unfused chain. */
  GString *fused = g_string_new ("m2icolorconvert");
  GString *off = g_string_new ("m2icolorconvert fusion=false");
  for (int i = 0; i < 7; i++) {
    g_string_append_printf (fused, " ! m2inorm name=n%d mean=\"<%d>\" std=\"<%d>\"", i, i + 1,
        i + 2);
    g_string_append_printf (off, " ! m2inorm fusion=false mean=\"<%d>\" std=\"<%d>\"", i + 1,
        i + 2);
  }
  const char *sink = "other/tensors,types=float16,dimensions=32:16:3:1";
  TestImage a[2], b[2];
  Chain ca, cb;
  run_chain (&ca, fused->str, sink, 32, 16, 2, M2I_FORMAT_PL_FP16_RGB, a);
  run_chain (&cb, off->str, sink, 32, 16, 2, M2I_FORMAT_PL_FP16_RGB, b);
  for (int i = 0; i < 2; i++)
    test_assert_identical (&a[i], &b[i], "split chain vs off");
  assert_fused_contains (&ca, "n6", "(split)");
  free_images (a, 2);
  free_images (b, 2);
  gst_harness_teardown (ca.h);
  gst_harness_teardown (cb.h);
  g_string_free (fused, TRUE);
  g_string_free (off, TRUE);
}
GST_END_TEST;

static Suite *
m2i_fusion_suite (void)
{
  Suite *s = suite_create ("m2i-fusion");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_fused_chain_extended);
  tcase_add_test (tc, test_fused_chain_default);
  tcase_add_test (tc, test_fused_letterbox);
  tcase_add_test (tc, test_fused_video_chain);
  tcase_add_test (tc, test_fused_through_ghost_pads);
  tcase_add_test (tc, test_fused_renegotiation);
  tcase_add_test (tc, test_deferred_buffer_maps_to_pixels);
  tcase_add_test (tc, test_fusion_off_on_last_element);
  tcase_add_test (tc, test_long_chain_splits);
  return s;
}

GST_CHECK_MAIN (m2i_fusion);
