/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-inputs.c — m2iinfer (GstHarness): every video input
 * format and model input kind. Tiny models written here copy their input
 * to an output (Convert to f32), so the tensor meta shows what the element
 * fed the model; it must equal the core's reference path (plain C, one op
 * at a time) on the same frame — exactly: the same ops give the same
 * values, fp16 widened — then written in the model's layout and type by
 * arithmetic here.
 *
 * Also: a model's other inputs (extra-inputs), the gray Fashion-MNIST model
 * from a PNG through pngdec ! videoconvert (negotiation with no property,
 * torch's class), refusals naming the model input and what to put in
 * front, where each setting came from (fused).
 */
#include "gst-infer-test-util.h"

#define IW 40             /* frames: a multiple of 4, so rows are tight */
#define IH 30
#define MW 16             /* the tiny models' input */
#define MH 12

/* ---- tiny models -------------------------------------------------------------- */

static const char *
ir_type (M2iElementType t)
{
  switch (t) {
    case M2I_ET_F16: return "f16";
    case M2I_ET_U8: return "u8";
    case M2I_ET_I8: return "i8";
    default: return "f32";
  }
}

static const char *
ir_precision (M2iElementType t)
{
  switch (t) {
    case M2I_ET_F16: return "FP16";
    case M2I_ET_U8: return "U8";
    case M2I_ET_I8: return "I8";
    default: return "FP32";
  }
}

static gchar *
dims4 (const gint d[4])
{
  return g_strdup_printf ("<dim>%d</dim><dim>%d</dim><dim>%d</dim><dim>%d</dim>", d[0], d[1],
      d[2], d[3]);
}

/* A model "copy" whose input "image" (@type, shape @d) is converted to f32
 * and returned as output "copy"; with @extra a second input "k" f32 [1,3]
 * returned as "kout". Written into @dir; the .xml path (g_free). */
static gchar *
write_copy_model (const char *dir, const char *name, const gint d[4], M2iElementType type,
    gboolean extra)
{
  gchar *dd = dims4 (d);
  GString *x = g_string_new ("<?xml version=\"1.0\"?>\n");
  g_string_append_printf (x, "<net name=\"%s\" version=\"11\"><layers>\n", name);
  g_string_append_printf (x, "<layer id=\"0\" name=\"image\" type=\"Parameter\" "
      "version=\"opset1\"><data shape=\"%d,%d,%d,%d\" element_type=\"%s\"/><output>"
      "<port id=\"0\" precision=\"%s\">%s</port></output></layer>\n", d[0], d[1], d[2], d[3],
      ir_type (type), ir_precision (type), dd);
  g_string_append_printf (x, "<layer id=\"1\" name=\"cvt\" type=\"Convert\" version=\"opset1\">"
      "<data destination_type=\"f32\"/><input><port id=\"0\">%s</port></input><output>"
      "<port id=\"1\" precision=\"FP32\" names=\"copy\">%s</port></output></layer>\n", dd, dd);
  g_string_append_printf (x, "<layer id=\"2\" name=\"copy\" type=\"Result\" "
      "version=\"opset1\"><input><port id=\"0\">%s</port></input></layer>\n", dd);
  if (extra)
    g_string_append (x, "<layer id=\"3\" name=\"k\" type=\"Parameter\" version=\"opset1\">"
        "<data shape=\"1,3\" element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\">"
        "<dim>1</dim><dim>3</dim></port></output></layer>\n"
        "<layer id=\"4\" name=\"kcvt\" type=\"Convert\" version=\"opset1\">"
        "<data destination_type=\"f32\"/><input><port id=\"0\"><dim>1</dim><dim>3</dim></port>"
        "</input><output><port id=\"1\" precision=\"FP32\" names=\"kout\"><dim>1</dim>"
        "<dim>3</dim></port></output></layer>\n"
        "<layer id=\"5\" name=\"kout\" type=\"Result\" version=\"opset1\"><input>"
        "<port id=\"0\"><dim>1</dim><dim>3</dim></port></input></layer>\n");
  g_string_append (x, "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" "
      "to-port=\"0\"/><edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>");
  if (extra)
    g_string_append (x, "<edge from-layer=\"3\" from-port=\"0\" to-layer=\"4\" to-port=\"0\"/>"
        "<edge from-layer=\"4\" from-port=\"1\" to-layer=\"5\" to-port=\"0\"/>");
  g_string_append (x, "</edges></net>\n");
  gchar *file = g_strdup_printf ("%s.xml", name);
  gchar *path = g_build_filename (dir, file, NULL);
  fail_unless (g_file_set_contents (path, x->str, -1, NULL));
  g_string_free (x, TRUE);
  g_free (dd);
  g_free (file);
  return path;
}

/* ---- frames --------------------------------------------------------------------- */

/* A random @w x @h frame of @f (GStreamer's tight layout for these sizes). */
static GstBuffer *
random_frame (M2iFormat f, gint w, gint h, guint32 seed, TestImage *img)
{
  test_image_alloc (img, f, w, h);
  test_image_fill (img, seed);
  return gst_buffer_new_memdup (img->mem, img->size);
}

/* ---- the cases -------------------------------------------------------------------- */

typedef enum { L_NCHW, L_NHWC } Layout;

typedef struct {
  const char *gst_format;      /* caps format */
  M2iFormat format;            /* its engine format */
  gint channels;               /* the model's */
  Layout layout;
  M2iElementType type;
  M2iProfile profile;
} Case;

/* What the model's input must hold: the reference path's planar result
 * (fp16 or fp32 by the profile, u8 for a u8 model) in the model's layout,
 * one gray plane repeated into three channels, i8 rounded and saturated
 * after the mean of 128. */
static float *
expected_input (const Case *c, const TestImage *frame)
{
  M2iOpList ops;
  m2i_op_list_init (&ops);
  gboolean yuv = m2i_format_is_yuv (c->format);
  gboolean x4 = !yuv && m2i_format_pixel_stride (c->format) == 4;
  guint in_ch = m2i_format_n_channels (c->format);
  if (c->channels == 1 && in_ch == 3)
    fail_unless (m2i_op_list_add_gray (&ops));
  else if (yuv)
    fail_unless (m2i_op_list_add_csc (&ops, M2I_ORDER_RGB));
  else if (x4)
    fail_unless (m2i_op_list_add_drop_alpha (&ops));
  guint ch = c->channels == 1 ? 1 : in_ch;
  M2iDataType dt = c->type == M2I_ET_U8 ? M2I_DTYPE_U8 : c->type == M2I_ET_F16
      || c->profile == M2I_PROFILE_DEFAULT ? M2I_DTYPE_F16 : M2I_DTYPE_F32;
  if (dt != M2I_DTYPE_U8)
    fail_unless (m2i_op_list_add_convert (&ops, dt));
  M2iResizeParams rp;
  m2i_resize_params_init (&rp, MW, MH);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;
  fail_unless (m2i_op_list_add_resize (&ops, &rp));
  if (ch == 3 && m2i_format_layout (c->format) != M2I_LAYOUT_PLANAR)
    fail_unless (m2i_op_list_add_permute (&ops));
  if (c->type == M2I_ET_I8) {
    const float mean[3] = { 128, 128, 128 }, std[3] = { 1, 1, 1 };
    M2iNormParams n;
    fail_unless (m2i_norm_params_from_mean_std (&n, mean, std, 1.0f));
    fail_unless (m2i_op_list_add_norm (&ops, &n));
  }
  M2iFormat out = m2i_format_compose (M2I_LAYOUT_PLANAR, dt,
      ch == 1 ? M2I_ORDER_GRAY : m2i_format_order (yuv ? M2I_FORMAT_IL_RGB888 : c->format));
  TestImage ref;
  test_reference (frame, &ops, out, MW, MH, &ref);
  gboolean bgr = ch == 3 && m2i_format_order (out) == M2I_ORDER_BGR;
  gsize plane = (gsize) MW * MH;
  float *v = g_new (float, plane * c->channels);
  for (gint k = 0; k < c->channels; k++) {
    gint p = ch == 1 ? 0 : bgr ? 2 - k : k;       /* the model takes RGB */
    for (gint y = 0; y < MH; y++)
      for (gint x = 0; x < MW; x++) {
        float s = test_sample (&ref, x, y, p);
        if (c->type == M2I_ET_I8)
          s = CLAMP (rintf (s), -128.0f, 127.0f);
        else if (c->type == M2I_ET_F16)
          s = m2i_f16_to_f32 (m2i_f32_to_f16 (s));
        gsize at = c->layout == L_NHWC ? ((gsize) y * MW + x) * c->channels + k
            : (gsize) k * plane + (gsize) y * MW + x;
        v[at] = s;
      }
  }
  test_image_free (&ref);
  return v;
}

/* The shape of @c's model input with @batch frames. */
static void
case_dims (const Case *c, gint batch, gint d[4])
{
  d[0] = batch;
  d[1] = c->layout == L_NHWC ? MH : c->channels;
  d[2] = c->layout == L_NHWC ? MW : MH;
  d[3] = c->layout == L_NHWC ? c->channels : MW;
}

static void
run_case (const char *dir, const Case *c, guint idx)
{
  gint d[4];
  case_dims (c, 1, d);
  gchar *name = g_strdup_printf ("copy%u", idx);
  gchar *model = write_copy_model (dir, name, d, c->type, FALSE);
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU profile=%s%s", model,
      m2i_profile_to_string (c->profile), c->type == M2I_ET_I8 ? " mean=\"<128>\"" : "");
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=1/1",
      c->gst_format, IW, IH);
  GstHarness *h = harness (launch, caps);
  TestImage frame;
  GstBuffer *in = random_frame (c->format, IW, IH, 77 + idx, &frame);
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  const GstM2iTensor *t = output_tensor (out, "copy");
  gsize n = (gsize) MW * MH * c->channels;
  fail_unless_equals_uint64 (t->size, n * sizeof (float));
  float *want = expected_input (c, &frame);
  gchar *fused = test_harness_fused (h, "inf");
  for (gsize i = 0; i < n; i++)
    fail_unless (((const float *) t->data)[i] == want[i], "%s into %s %s %d-channel (%s): "
        "value %" G_GSIZE_FORMAT " is %g, the reference path gives %g; %s", c->gst_format,
        m2i_element_type_to_string (c->type), c->layout == L_NHWC ? "NHWC" : "NCHW",
        c->channels, m2i_profile_to_string (c->profile), i, ((const float *) t->data)[i],
        want[i], fused);
  g_free (want);
  g_free (fused);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  test_image_free (&frame);
  g_free (caps);
  g_free (launch);
  g_free (model);
  g_free (name);
}

GST_START_TEST (test_inputs_equal_reference)
{
  static const Case cases[] = {
    /* 4-byte video into an f32 NCHW model, both profiles */
    { "BGRx", M2I_FORMAT_IL_BGRX8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "RGBx", M2I_FORMAT_IL_RGBX8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    { "xRGB", M2I_FORMAT_IL_XRGB8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "xBGR", M2I_FORMAT_IL_XBGR8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    { "BGRA", M2I_FORMAT_IL_BGRX8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    { "RGBA", M2I_FORMAT_IL_RGBX8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "ARGB", M2I_FORMAT_IL_XRGB8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "ABGR", M2I_FORMAT_IL_XBGR8888, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    /* gray: into a 1-channel model, and repeated into a 3-channel one */
    { "GRAY8", M2I_FORMAT_PL_GRAY8, 1, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "GRAY8", M2I_FORMAT_PL_GRAY8, 1, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    { "GRAY8", M2I_FORMAT_PL_GRAY8, 3, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    /* a 1-channel model from colour video: NV12's Y plane, RGB's luma */
    { "NV12", M2I_FORMAT_SP_NV12_8, 1, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "I420", M2I_FORMAT_PL_YUV420_8, 1, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    { "RGB", M2I_FORMAT_IL_RGB888, 1, L_NCHW, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "BGRx", M2I_FORMAT_IL_BGRX8888, 1, L_NCHW, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    /* NHWC (TensorFlow's layout), f16, u8 and i8 inputs */
    { "NV12", M2I_FORMAT_SP_NV12_8, 3, L_NHWC, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "BGR", M2I_FORMAT_IL_BGR888, 3, L_NHWC, M2I_ET_F32, M2I_PROFILE_EXTENDED },
    { "GRAY8", M2I_FORMAT_PL_GRAY8, 1, L_NHWC, M2I_ET_F32, M2I_PROFILE_DEFAULT },
    { "RGBx", M2I_FORMAT_IL_RGBX8888, 3, L_NCHW, M2I_ET_F16, M2I_PROFILE_DEFAULT },
    { "BGRx", M2I_FORMAT_IL_BGRX8888, 3, L_NCHW, M2I_ET_U8, M2I_PROFILE_DEFAULT },
    { "NV12", M2I_FORMAT_SP_NV12_8, 3, L_NHWC, M2I_ET_U8, M2I_PROFILE_EXTENDED },
    { "GRAY8", M2I_FORMAT_PL_GRAY8, 1, L_NCHW, M2I_ET_U8, M2I_PROFILE_DEFAULT },
    { "RGB", M2I_FORMAT_IL_RGB888, 3, L_NCHW, M2I_ET_I8, M2I_PROFILE_EXTENDED },
  };
  gchar *dir = g_dir_make_tmp ("m2i-inputs-XXXXXX", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    run_case (dir, &cases[i], i);
  remove_dir (dir);
}
GST_END_TEST;

/* A model of batch 2 in another layout and type than the default (u8
 * NHWC, f16 NCHW) with batch-size=2: each frame's slice of the input is
 * what the reference path gives that frame, on its own buffer. */
GST_START_TEST (test_batched_inputs_equal_reference)
{
  static const Case cases[] = {
    { "NV12", M2I_FORMAT_SP_NV12_8, 3, L_NHWC, M2I_ET_U8, M2I_PROFILE_EXTENDED },
    { "BGRx", M2I_FORMAT_IL_BGRX8888, 3, L_NCHW, M2I_ET_F16, M2I_PROFILE_DEFAULT },
  };
  gchar *dir = g_dir_make_tmp ("m2i-inputs-XXXXXX", NULL);
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++) {
    const Case *c = &cases[k];
    gint d[4];
    case_dims (c, 2, d);
    gchar *name = g_strdup_printf ("batch%u", k);
    gchar *model = write_copy_model (dir, name, d, c->type, FALSE);
    gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU profile=%s "
        "batch-size=2 batch-timeout=10000", model, m2i_profile_to_string (c->profile));
    gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=1/1",
        c->gst_format, IW, IH);
    GstHarness *h = harness (launch, caps);
    TestImage frame[2];
    for (guint f = 0; f < 2; f++)
      fail_unless_equals_int (gst_harness_push (h, random_frame (c->format, IW, IH, 300 + f,
                  &frame[f])), GST_FLOW_OK);
    gsize n = (gsize) MW * MH * c->channels;
    for (guint f = 0; f < 2; f++) {
      GstBuffer *out = gst_harness_pull (h);
      const GstM2iTensor *t = output_tensor (out, "copy");
      fail_unless_equals_uint64 (t->size, n * sizeof (float));
      float *want = expected_input (c, &frame[f]);
      for (gsize i = 0; i < n; i++)
        fail_unless (((const float *) t->data)[i] == want[i], "batch of 2, %s into %s %s, "
            "frame %u: value %" G_GSIZE_FORMAT " is %g, the reference path gives %g",
            c->gst_format, m2i_element_type_to_string (c->type), c->layout == L_NHWC ? "NHWC"
            : "NCHW", f, i, ((const float *) t->data)[i], want[i]);
      g_free (want);
      gst_buffer_unref (out);
      test_image_free (&frame[f]);
    }
    gst_harness_teardown (h);
    g_free (caps);
    g_free (launch);
    g_free (model);
    g_free (name);
  }
  remove_dir (dir);
}
GST_END_TEST;

/* The extended profile runs a 4-byte frame's whole chain as one device
 * task: dropAlpha fused with the resize and the rest. */
GST_START_TEST (test_pixel_chain_fused)
{
  gchar *dir = g_dir_make_tmp ("m2i-inputs-XXXXXX", NULL);
  const gint d[4] = { 1, 3, MH, MW };
  gchar *model = write_copy_model (dir, "fused", d, M2I_ET_F32, FALSE);
  gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU profile=extended "
      "mean=\"<10, 20, 30>\"", model);
  GstHarness *h = harness (launch, "video/x-raw,format=BGRA,width=40,height=30,framerate=1/1");
  TestImage frame;
  M2iDeviceCounters before, after;
  m2i_device_get_counters (m2i_device_get_default (), &before);
  fail_unless_equals_int (gst_harness_push (h, random_frame (M2I_FORMAT_IL_BGRX8888, IW, IH, 5,
              &frame)), GST_FLOW_OK);
  gst_buffer_unref (gst_harness_pull (h));
  m2i_device_get_counters (m2i_device_get_default (), &after);
  fail_unless_equals_uint64 (after.tasks_device - before.tasks_device, 1);
  fail_unless_equals_uint64 (after.tasks_cpu - before.tasks_cpu, 0);
  gchar *fused = test_harness_fused (h, "inf");
  assert_contains (fused, "dropAlpha -> convertU8F32 -> resize(16x12");
  assert_contains (fused, "(1 device task)");
  assert_contains (fused, "mean = <10, 20, 30> (set)");
  g_free (fused);
  gst_harness_teardown (h);
  test_image_free (&frame);
  g_free (launch);
  g_free (model);
  remove_dir (dir);
}
GST_END_TEST;

/* ---- the model's other inputs --------------------------------------------------- */

GST_START_TEST (test_extra_inputs)
{
  gchar *dir = g_dir_make_tmp ("m2i-inputs-XXXXXX", NULL);
  const gint d[4] = { 1, 3, MH, MW };
  gchar *model = write_copy_model (dir, "two", d, M2I_ET_F32, TRUE);
  /* numbers, one per element; then one for all; then a raw file */
  const float file_values[3] = { -1.5f, 0.25f, 1e6f };
  gchar *file = g_build_filename (dir, "k.f32", NULL);
  fail_unless (g_file_set_contents (file, (const char *) file_values, sizeof file_values, NULL));
  struct {
    const char *spec;
    float want[3];
  } ok[] = { { "k=1,2.5,-3", { 1, 2.5f, -3 } }, { "k=7", { 7, 7, 7 } }, { NULL, { 0 } } };
  for (guint i = 0; i < G_N_ELEMENTS (ok); i++) {
    gchar *spec = ok[i].spec ? g_strdup (ok[i].spec) : g_strdup_printf ("k=@%s", file);
    const float *want = ok[i].spec ? ok[i].want : file_values;
    gchar *launch = g_strdup_printf ("m2iinfer model=%s device=CPU extra-inputs=\"%s\"", model,
        spec);
    GstHarness *h = harness (launch, "video/x-raw,format=RGB,width=40,height=30,framerate=1/1");
    TestImage frame;
    fail_unless_equals_int (gst_harness_push (h, random_frame (M2I_FORMAT_IL_RGB888, IW, IH, 9,
                &frame)), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    const GstM2iTensor *k = output_tensor (out, "kout");
    for (int j = 0; j < 3; j++)
      fail_unless (((const float *) k->data)[j] == want[j], "%s: k[%d] = %g", spec, j,
          ((const float *) k->data)[j]);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
    test_image_free (&frame);
    g_free (launch);
    g_free (spec);
  }
  /* refusals, naming the input and what to do */
  struct {
    const char *props, *needle;
  } bad[] = {
    { "", "model input 'k' f32 [1,3] has no value (the image goes into 'image'): give it "
          "with extra-inputs=\"k=v1,v2,...\"" },
    { "extra-inputs=\"k=1,2\"", "input 'k' [1,3] holds 3 values; give one (for all) or 3, "
          "not 2" },
    { "extra-inputs=\"q=1\"", "the model has no input 'q' (its inputs: \"image\" f32 "
          "[1,3,12,16], \"k\" f32 [1,3])" },
    { "extra-inputs=\"k=1,x,3\"", "input 'k': \"x,3\" is not a number" },
    { "extra-inputs=\"k=@/nonexistent.bin\"", "needs a file of exactly 12 bytes" },
    /* the requests of an asynchronous queue are taken per frame: nothing
     * would keep the other inputs' values */
    { "extra-inputs=\"k=1\" nireq=2", "the model has inputs other than the image "
          "(\"image\" f32 [1,3,12,16], \"k\" f32 [1,3]): asynchronous, batched and shared "
          "inference fill only the image input" },
    { "extra-inputs=\"k=1\" model-instance-id=two", "unset nireq, batch-size, no-block "
          "and model-instance-id" },
    /* regions run synchronously, as one batch */
    { "extra-inputs=\"k=1\" inference-region=roi-list nireq=2", "inference-region=roi-list "
          "runs a frame's regions as one batch in the streaming thread: unset nireq" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    gchar *launch = g_strdup_printf ("fakesrc ! m2iinfer model=%s %s ! fakesink", model,
        bad[i].props);
    gchar *e = paused_error (launch);
    assert_contains (e, bad[i].needle);
    g_free (e);
    g_free (launch);
  }
  /* a model whose only input is the image: extra-inputs has nowhere to go
   * asynchronously */
  gchar *one = write_copy_model (dir, "one", d, M2I_ET_F32, FALSE);
  gchar *launch = g_strdup_printf ("fakesrc ! m2iinfer model=%s extra-inputs=\"k=1\" nireq=2 "
      "! fakesink", one);
  gchar *e = paused_error (launch);
  assert_contains (e, "extra-inputs: the model's only input is the image");
  g_free (e);
  g_free (launch);
  g_free (one);
  g_free (file);
  g_free (model);
  remove_dir (dir);
}
GST_END_TEST;

/* ---- negotiation and refusals ------------------------------------------------------ */

/* A gray PNG through pngdec ! videoconvert into the gray Fashion-MNIST
 * model with no property: the caps negotiate (GRAY8), the model's metadata
 * gives labels and normalisation, the class is torch's. */
GST_START_TEST (test_png_gray_model)
{
  gchar *png = test_data_path ("fashion-mnist/t10k-0.png");
  gchar *model = test_models_path ("fashion-mnist-gray/fashion-mnist-gray.xml");
  GBytes *probs = test_read_data ("fashion-mnist/first64.prob.f32");
  GstElementFactory *pngdec = gst_element_factory_find ("pngdec");
  if (!pngdec) {
    GST_INFO ("no pngdec: skipped");
    goto done;
  }
  gst_object_unref (pngdec);
  gchar *launch = g_strdup_printf ("filesrc location=%s ! pngdec ! videoconvert ! "
      "m2iinfer name=inf model=%s ! appsink name=out", png, model);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (launch, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "out");
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PLAYING), GST_STATE_CHANGE_ASYNC);
  GstSample *sample = NULL;
  g_signal_emit_by_name (sink, "pull-sample", &sample);
  fail_unless (sample != NULL, "no frame came out (negotiation?)");
  GstCaps *caps = gst_sample_get_caps (sample);
  fail_unless_equals_string (gst_structure_get_string (gst_caps_get_structure (caps, 0),
          "format"), "GRAY8");
  GstBuffer *buf = gst_sample_get_buffer (sample);
  const float *torch = g_bytes_get_data (probs, NULL);
  const GstM2iTensor *t = output_tensor (buf, "prob");
  /* torch's input is (p/255 - 0.286)/0.353; the model says mean 72.93,
   * scale 90.015 (pixel units), held as fp16 */
  for (int i = 0; i < 10; i++)
    fail_unless (fabsf (((const float *) t->data)[i] - torch[i]) < 2e-3, "class %d: %g vs "
        "torch %g", i, ((const float *) t->data)[i], torch[i]);
  fail_unless_equals_int (n_rois (buf), 1);
  fail_unless_equals_string (g_quark_to_string (nth_roi (buf, 0)->roi_type), "Ankle_boot");
  GstElement *inf = gst_bin_get_by_name (GST_BIN (p), "inf");
  gchar *fused = test_get_string (inf, "fused");
  assert_contains (fused, "mean = <72.93> (model_info/mean_values)");
  assert_contains (fused, "std = <90.015> (model_info/scale_values)");
  assert_contains (fused, "(gray)");
  g_free (fused);
  gst_object_unref (inf);
  gst_sample_unref (sample);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (launch);
done:
  g_bytes_unref (probs);
  g_free (png);
  g_free (model);
}
GST_END_TEST;

/* What a model cannot take is refused with the model input, what it
 * needs and what to put in front — not a bare not-negotiated. */
GST_START_TEST (test_refusals_say_what_to_do)
{
  gchar *gray = test_models_path ("fashion-mnist-gray/fashion-mnist-gray.xml");
  /* a source that can only give YUY2: refused at its caps query */
  gchar *launch = g_strdup_printf ("videotestsrc num-buffers=1 ! video/x-raw,format=YUY2 ! "
      "m2iinfer model=%s ! fakesink", gray);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (launch, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  GstBus *bus = gst_element_get_bus (p);
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  assert_contains (err->message, "model input \"input\" f32 [1,1,28,28] needs video (GRAY8, "
      "NV12, I420, RGB");
  assert_contains (err->message, "got video/x-raw,format=YUY2: put videoconvert in front");
  fail_unless (GST_MESSAGE_SRC (m) != NULL && g_str_has_prefix (GST_OBJECT_NAME
          (GST_MESSAGE_SRC (m)), "m2iinfer"), "the first error is not m2iinfer's");
  g_clear_error (&err);
  gst_message_unref (m);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  g_free (launch);
  /* caps that arrive (a harness sets them without asking) */
  GstHarness *h = gst_harness_new_parse (launch = g_strdup_printf ("m2iinfer model=%s", gray));
  GstBus *hb = test_harness_bus (h);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=UYVY,width=8,height=8,framerate=1/1");
  gchar *e = test_bus_error (hb);
  assert_contains (e, "got video/x-raw,format=UYVY,width=8,height=8: put videoconvert in front");
  g_free (e);
  teardown_with_bus (h, hb);
  g_free (launch);
  /* a batch of 2 with batch-size=1: no image model here, and the refusal says why */
  gchar *dir = g_dir_make_tmp ("m2i-inputs-XXXXXX", NULL);
  const gint d[4] = { 2, 3, MH, MW };
  gchar *model = write_copy_model (dir, "batch", d, M2I_ET_F32, FALSE);
  h = gst_harness_new_parse (launch = g_strdup_printf ("m2iinfer model=%s", model));
  hb = test_harness_bus (h);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=NV12,width=16,height=12,framerate=1/1");
  e = test_bus_error (hb);
  assert_contains (e, "model input \"image\" f32 [2,3,12,16] needs other/tensors");
  assert_contains (e, "takes 2 frames per inference");
  assert_contains (e, "set batch-size=2");
  assert_contains (e, "convert the frames to tensors upstream");
  g_free (e);
  teardown_with_bus (h, hb);
  g_free (launch);
  g_free (model);
  remove_dir (dir);
  g_free (gray);
}
GST_END_TEST;

static Suite *
m2i_infer_inputs_suite (void)
{
  Suite *s = suite_create ("m2i-infer-inputs");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_inputs_equal_reference);
  tcase_add_test (tc, test_batched_inputs_equal_reference);
  tcase_add_test (tc, test_pixel_chain_fused);
  tcase_add_test (tc, test_extra_inputs);
  tcase_add_test (tc, test_png_gray_model);
  tcase_add_test (tc, test_refusals_say_what_to_do);
  return s;
}

GST_CHECK_MAIN (m2i_infer_inputs);
