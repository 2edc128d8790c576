/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-detect.c — m2iinfer (GstHarness): detection: person-
 * detection-retail-0013 (from ../shared, skipped when absent) region metas
 * and messages against the IR runtime's rows on the reference path's input;
 * a letterboxing chain mapped back to the source frame.
 *
 * Expected values come from outside the element: torch's outputs and
 * predictions (tests/data/fashion-mnist), reference data (tests/data/ppp),
 * the IR runtime run directly on the input the core's reference path
 * makes, and arithmetic written here.
 */
#include "gst-infer-test-util.h"

/* Expected pixel rectangle of a detection row, the way the docs define it:
 * corners (clamped to [0,1]) times the frame size, rounded to nearest. */
static void
expected_rect (const float *row, gint w, gint h, guint r[4])
{
  double c[4] = { row[3], row[4], row[5], row[6] };
  for (int i = 0; i < 4; i++)
    c[i] = c[i] < 0 ? 0 : c[i] > 1 ? 1 : c[i];
  double x0 = floor (c[0] * w + 0.5), y0 = floor (c[1] * h + 0.5);
  r[0] = (guint) x0;
  r[1] = (guint) y0;
  r[2] = (guint) (floor (c[2] * w + 0.5) - x0);
  r[3] = (guint) (floor (c[3] * h + 0.5) - y0);
}

/* RGB -> NV12 with the inverse of the BT.601 limited-range csc (test data,
 * any reasonable conversion will do). */
static void
rgb_to_nv12 (const TestImage *rgb, TestImage *nv)
{
  gint w = rgb->img.width, h = rgb->img.height;
  test_image_alloc (nv, M2I_FORMAT_SP_NV12_8, w, h);
  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++) {
      const guint8 *p = rgb->img.data[0] + (gsize) y * rgb->img.stride[0] + x * 3;
      double Y = 16 + 0.257 * p[0] + 0.504 * p[1] + 0.098 * p[2];
      nv->img.data[0][(gsize) y * nv->img.stride[0] + x] = (guint8) CLAMP (Y + 0.5, 0, 255);
      if (y % 2 == 0 && x % 2 == 0) {
        double U = 128 - 0.148 * p[0] - 0.291 * p[1] + 0.439 * p[2];
        double V = 128 + 0.439 * p[0] - 0.368 * p[1] - 0.071 * p[2];
        guint8 *uv = nv->img.data[1] + (gsize) (y / 2) * nv->img.stride[1] + x;
        uv[0] = (guint8) CLAMP (U + 0.5, 0, 255);
        uv[1] = (guint8) CLAMP (V + 0.5, 0, 255);
      }
    }
}

/* The first region of the frame @nv through @launch (whose m2iinfer is
 * called "inf"); @fused receives its fused property. */
static void
first_box (const char *launch, const TestImage *nv, guint box[4], gchar **fused)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=NV12,width=%d,height=%d,framerate=1/1",
      nv->img.width, nv->img.height);
  GstHarness *h = harness (launch, caps);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (nv, 0)), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  fail_unless (n_rois (o) >= 1, "no detection");
  GstVideoRegionOfInterestMeta *roi = nth_roi (o, 0);
  box[0] = roi->x;
  box[1] = roi->y;
  box[2] = roi->w;
  box[3] = roi->h;
  *fused = test_harness_fused (h, "inf");
  gst_buffer_unref (o);
  gst_harness_teardown (h);
  g_free (caps);
}

/* person-detection-retail-0013 on the photo as RGB video, m2iinfer doing
 * the pre-processing (BGR, 544x320): one region per detection >= threshold
 * scaled to the 272x160 frame, equal to the runtime's rows on the reference
 * path's input; the person is where the photo put her. */
GST_START_TEST (test_detection_regions)
{
  Photo ph;
  gchar *model = person_model_and_photo (&ph);
  if (!model)
    return;
  gchar *launch = g_strdup_printf ("m2iinfer model=%s channel-order=bgr threshold=0.3 device=CPU", model);
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=%d,height=%d,framerate=1/1",
      ph.width, ph.height);
  GstHarness *h = harness (launch, caps);
  GstBus *bus = test_harness_bus (h);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&ph.rgb, 0)), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);

  Direct d;
  direct_open (&d, model);
  M2iOpList ops;
  reference_ops (&ops, M2I_ORDER_RGB, FALSE, 544, 320, FALSE);
  reference_input (&ph.rgb, &ops, 544, 320, TRUE, m2i_ir_infer_request_get_input (d.req, 0)->data);
  const M2iTensor *ref = direct_run (&d);
  const GstM2iTensor *t = output_tensor (o, "detection_out");
  fail_unless_equals_int (t->n_dims, 4);
  fail_unless_equals_int (t->dims[2], 200);
  fail_unless_equals_int (t->dims[3], 7);
  const float *rows = ref->data, *got = t->data;
  guint n = 0;
  for (guint i = 0; i < 200 && rows[i * 7] >= 0; i++) {
    for (int k = 0; k < 7; k++)
      fail_unless (fabsf (got[i * 7 + k] - rows[i * 7 + k]) <= 1e-3f, "row %u col %d: %g vs %g",
          i, k, got[i * 7 + k], rows[i * 7 + k]);
    if (rows[i * 7 + 2] < 0.3f)
      continue;
    guint want[4];
    expected_rect (got + i * 7, ph.width, ph.height, want);
    GstVideoRegionOfInterestMeta *roi = nth_roi (o, n);
    fail_unless_equals_int (roi->x, want[0]);
    fail_unless_equals_int (roi->y, want[1]);
    fail_unless_equals_int (roi->w, want[2]);
    fail_unless_equals_int (roi->h, want[3]);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), "class-1");
    GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (s != NULL);
    gdouble conf, xmin, ymax;
    gint id;
    gst_structure_get_double (s, "confidence", &conf);
    gst_structure_get_double (s, "x_min", &xmin);
    gst_structure_get_double (s, "y_max", &ymax);
    gst_structure_get_int (s, "label_id", &id);
    fail_unless (conf == (double) got[i * 7 + 2]);
    fail_unless (fabs (xmin - got[i * 7 + 3]) < 1e-6 && fabs (ymax - got[i * 7 + 6]) < 1e-6);
    fail_unless_equals_int (id, (gint) got[i * 7 + 1]);
    n++;
  }
  fail_unless_equals_int (n_rois (o), n);
  fail_unless (n >= 1, "no person found");
  /* The photo's person: a 100x100 square at (86, 30); the box starts at
   * her head and lies across the square (a pedestrian detector draws the
   * whole body, so its bottom may go below the picture's). */
  GstVideoRegionOfInterestMeta *best = nth_roi (o, 0);
  fail_unless (best->x >= 76 && best->x + best->w <= 196 && best->y >= 20 && best->y <= 50
      && best->w >= 40 && best->h >= 80, "box %u,%u %ux%u", best->x, best->y, best->w, best->h);
  /* The message lists the same objects, with pixel boxes. */
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (m != NULL);
  const GstStructure *ms = gst_message_get_structure (m);
  guint n_obj;
  fail_unless (gst_structure_get_uint (ms, "n_objects", &n_obj));
  fail_unless_equals_int (n_obj, n);
  const GValue *objs = gst_structure_get_value (ms, "objects");
  const GstStructure *o0 = gst_value_get_structure (gst_value_list_get_value (objs, 0));
  guint x, w;
  gst_structure_get_uint (o0, "x", &x);
  gst_structure_get_uint (o0, "width", &w);
  fail_unless_equals_int (x, best->x);
  fail_unless_equals_int (w, best->w);
  gst_message_unref (m);

  direct_close (&d);
  gst_buffer_unref (o);
  teardown_with_bus (h, bus);
  test_image_free (&ph.rgb);
  g_free (caps);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* A letterboxing chain (m2iresize keep-aspect-ratio=true) fused into
 * m2iinfer: the boxes come back in the source frame's pixels. The photo is
 * put on a taller canvas (272x240) so the bars are real: 272x240 becomes a
 * 363x320 picture at x = 90 of 544x320. The box must land where the same
 * chain without letterbox (the frame stretched to 544x320) puts it, within
 * what two different resizes change; not unmapping the letterbox would
 * move it by 40 pixels. */
GST_START_TEST (test_detection_letterbox)
{
  Photo ph;
  gchar *model = person_model_and_photo (&ph);
  if (!model)
    return;
  TestImage tall, nv;
  test_image_alloc (&tall, M2I_FORMAT_IL_RGB888, ph.width, 240);
  memset (tall.mem, 128, tall.size);
  for (gint y = 0; y < ph.height; y++)
    memcpy (tall.img.data[0] + (gsize) (y + 40) * tall.img.stride[0],
        ph.rgb.img.data[0] + (gsize) y * ph.rgb.img.stride[0], (gsize) ph.width * 3);
  rgb_to_nv12 (&tall, &nv);
  gchar *boxed = g_strdup_printf ("m2icolorconvert channel-order=bgr ! m2iresize "
      "keep-aspect-ratio=true pad-value=128 ! m2iinfer name=inf model=%s channel-order=bgr device=CPU",
      model);
  gchar *stretched = g_strdup_printf ("m2icolorconvert channel-order=bgr ! m2iresize ! "
      "m2iinfer name=inf model=%s channel-order=bgr device=CPU", model);
  guint a[4], b[4];
  gchar *fa, *fb;
  first_box (boxed, &nv, a, &fa);
  first_box (stretched, &nv, b, &fb);
  fail_unless (strstr (fa, "letterbox") != NULL && strstr (fa, " + inf: ") != NULL,
      "%s", fa);
  fail_unless (strstr (fb, "letterbox") == NULL, "%s", fb);
  for (int i = 0; i < 4; i++)
    fail_unless (abs ((gint) a[i] - (gint) b[i]) <= 6, "letterboxed %u,%u %ux%u vs stretched "
        "%u,%u %ux%u", a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
  /* and on the person: her square is at (86, 70) in this frame */
  fail_unless (a[0] >= 76 && a[0] + a[2] <= 196 && a[1] >= 60 && a[1] <= 90,
      "box %u,%u %ux%u", a[0], a[1], a[2], a[3]);
  g_free (fa);
  g_free (fb);
  test_image_free (&tall);
  test_image_free (&nv);
  test_image_free (&ph.rgb);
  g_free (boxed);
  g_free (stretched);
  g_free (model);
}
GST_END_TEST;

static Suite *
m2i_infer_detect_suite (void)
{
  Suite *s = suite_create ("m2i-infer-detect");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_detection_regions);
  tcase_add_test (tc, test_detection_letterbox);
  return s;
}

GST_CHECK_MAIN (m2i_infer_detect);
