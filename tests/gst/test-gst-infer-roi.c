/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-roi.c — m2iinfer inference-region=roi-list (GstHarness).
 *
 * Fashion-MNIST images pasted into a 320x240 frame at known rectangles
 * (odd offsets and sizes, partly outside, 1x1), region metas attached here
 * as a detector would; each region's classification against the IR runtime
 * run directly on the same crop made by the reference path
 * (tests/infer/roi-reference.h: the crop rule of docs/m2iinfer.md, the crop
 * copied out of the frame, csc/convert/resize/permute/norm op by op).
 * object-class filtering; reclassify-interval with object ids (the number
 * of inferences counted from the element's messages, carried results
 * checked against the frame they were computed on); frames without regions;
 * a detector run on a region (person-detection-retail-0013 from ../shared,
 * skipped when absent) against the session run on the copied crop.
 */
#include "gst-infer-test-util.h"
#include "../infer/roi-reference.h"

#include <m2i-core/infer/m2i-infer.h>

#define W ROI_REF_W
#define H ROI_REF_H
#define pastes roi_ref_pastes

static const char *fm_names[] = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot" };

static gchar *
roi_launch (const char *extra)
{
  gchar *model = fm_model (), *labels = fm_labels ();
  gchar *l = g_strdup_printf ("m2iinfer name=inf model=%s labels=%s device=CPU "
      "inference-region=roi-list " FM_NORM " %s", model, labels, extra ? extra : "");
  g_free (model);
  g_free (labels);
  return l;
}

static gchar *
frame_caps (M2iFormat f)
{
  return g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
      gst_video_format_to_string (test_video_format (f)), W, H);
}

/* Adds a region meta (label @label, id @id) with a "detection" structure
 * for x, y, w, h (clamped at 0 as a detector's are), and an object_id
 * structure when @object_id > 0. */
static GstVideoRegionOfInterestMeta *
add_region (GstBuffer *buf, const char *label, gint id, gint x, gint y, gint w, gint h,
    gint object_id)
{
  gint x0 = MAX (x, 0), y0 = MAX (y, 0);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf, label,
      (guint) x0, (guint) y0, (guint) (x + w - x0), (guint) (y + h - y0));
  roi->id = id;
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
          "x_min", G_TYPE_DOUBLE, (double) x0 / W, "x_max", G_TYPE_DOUBLE, (double) (x + w) / W,
          "y_min", G_TYPE_DOUBLE, (double) y0 / H, "y_max", G_TYPE_DOUBLE, (double) (y + h) / H,
          "confidence", G_TYPE_DOUBLE, 0.9, "label_id", G_TYPE_INT, 1,
          "label", G_TYPE_STRING, label, NULL));
  if (object_id > 0)
    gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id",
            "id", G_TYPE_INT, object_id, "predicted", G_TYPE_BOOLEAN, FALSE, NULL));
  return roi;
}

/* The classification structure of @roi, or NULL. */
static GstStructure *
classification (GstVideoRegionOfInterestMeta *roi)
{
  for (GList *l = roi->params; l; l = l->next)
    if (g_str_has_prefix (gst_structure_get_name (l->data), "classification_layer_name:"))
      return l->data;
  return NULL;
}

/* @roi's classification equals the model's on @frame's crop of the
 * region x, y, w, h (reference path + IR runtime). */
static void
check_classified (Direct *d, const TestImage *frame, GstVideoRegionOfInterestMeta *roi,
    gint x, gint y, gint w, gint h)
{
  gint rect[4] = { 0 };
  fail_unless (roi_ref_crop_rect (frame->img.format, W, H, x, y, w, h, rect));
  TestImage crop;
  roi_ref_copy (frame, rect, &crop);
  const float *ref = roi_ref_classify (d, &crop);
  test_image_free (&crop);
  GstStructure *s = classification (roi);
  fail_unless (s != NULL, "region %d has no classification", roi->id);
  fail_unless_equals_string (gst_structure_get_name (s), "classification_layer_name:prob");
  gint id;
  gdouble conf;
  fail_unless (gst_structure_get_int (s, "label_id", &id));
  fail_unless (gst_structure_get_double (s, "confidence", &conf));
  guint best = argmax (ref, 10);
  fail_unless_equals_int (id, best);
  fail_unless (fabs (conf - ref[best]) <= 2e-3, "confidence %g, reference %g", conf, ref[best]);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), fm_names[best]);
  fail_unless_equals_string (gst_structure_get_string (s, "layer_name"), "prob");
  fail_unless_equals_string (gst_structure_get_string (s, "model_name"), "fashion-mnist");
}

static TestImage
make_frame (M2iFormat f, const RoiPaste *p, guint n)
{
  TestImage t;
  roi_ref_pasted_frame (&t, p, n, f, 0, TRUE);
  return t;
}

/* Every region of an NV12, I420 or RGB frame classified as the reference
 * classifies its crop; a region outside the frame and a frame's other
 * metas untouched; a 1x1 region classified; no tensor meta; "fused" says
 * what ran. */
GST_START_TEST (test_classify_regions)
{
  static const M2iFormat formats[] = { M2I_FORMAT_SP_NV12_8, M2I_FORMAT_PL_YUV420_8,
    M2I_FORMAT_IL_RGB888 };
  gchar *model = fm_model ();
  Direct d;
  direct_open (&d, model);
  for (guint fi = 0; fi < G_N_ELEMENTS (formats); fi++) {
    TestImage frame = make_frame (formats[fi], pastes, G_N_ELEMENTS (pastes));
    gchar *launch = roi_launch (NULL), *caps = frame_caps (formats[fi]);
    GstHarness *h = harness (launch, caps);
    GstBuffer *buf = test_image_to_buffer (&frame, 0);
    for (guint i = 0; i < G_N_ELEMENTS (pastes); i++)
      add_region (buf, "garment", (gint) i, pastes[i].x, pastes[i].y, pastes[i].w, pastes[i].h,
          0);
    add_region (buf, "garment", 7, 31, 33, 1, 1, 0);
    /* outside the frame (a detector's box would never be; a region meta can) */
    GstVideoRegionOfInterestMeta *out_roi = gst_buffer_add_video_region_of_interest_meta (buf,
        "garment", 400, 10, 20, 20);
    out_roi->id = 8;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    GstBuffer *o = gst_harness_pull (h);
    fail_unless_equals_int (n_rois (o), G_N_ELEMENTS (pastes) + 2);
    for (guint i = 0; i < G_N_ELEMENTS (pastes); i++)
      check_classified (&d, &frame, nth_roi (o, i), pastes[i].x, pastes[i].y, pastes[i].w,
          pastes[i].h);
    check_classified (&d, &frame, nth_roi (o, G_N_ELEMENTS (pastes)), 31, 33, 1, 1);
    fail_unless (classification (nth_roi (o, G_N_ELEMENTS (pastes) + 1)) == NULL);
    fail_unless (gst_buffer_get_m2i_tensor_meta (o) == NULL);
    gchar *fused = test_harness_fused (h, "inf");
    assert_contains (fused, m2i_format_is_yuv (formats[fi])
        ? "inf: per region: crop -> csc(RGB) -> convertU8F16 -> resize(28x28"
        : "inf: per region: crop -> convertU8F16 -> resize(28x28");
    assert_contains (fused, "model on CPU");
    g_free (fused);
    gst_buffer_unref (o);

    /* a frame without regions passes as it came */
    buf = test_image_to_buffer (&frame, 0);
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    o = gst_harness_pull (h);
    fail_unless_equals_int (n_rois (o), 0);
    fail_unless (gst_buffer_get_m2i_tensor_meta (o) == NULL);
    gst_buffer_unref (o);
    gst_harness_teardown (h);
    g_free (launch);
    g_free (caps);
    test_image_free (&frame);
  }
  direct_close (&d);
  g_free (model);
}
GST_END_TEST;

/* object-class: only regions whose label is listed run the model. */
GST_START_TEST (test_object_class)
{
  TestImage frame = make_frame (M2I_FORMAT_SP_NV12_8, pastes, 4);
  static const char *labels[] = { "shirt", "person", "bag", "shirt" };
  gchar *launch = roi_launch ("object-class=\"shirt, bag\""), *caps = frame_caps (
      M2I_FORMAT_SP_NV12_8);
  GstHarness *h = harness (launch, caps);
  GstBuffer *buf = test_image_to_buffer (&frame, 0);
  for (guint i = 0; i < 4; i++)
    add_region (buf, labels[i], (gint) i, pastes[i].x, pastes[i].y, pastes[i].w, pastes[i].h, 0);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  gchar *model = fm_model ();
  Direct d;
  direct_open (&d, model);
  for (guint i = 0; i < 4; i++) {
    GstVideoRegionOfInterestMeta *roi = nth_roi (o, i);
    if (!strcmp (labels[i], "person"))
      fail_unless (classification (roi) == NULL, "region %u classified", i);
    else
      check_classified (&d, &frame, roi, pastes[i].x, pastes[i].y, pastes[i].w, pastes[i].h);
  }
  direct_close (&d);
  gst_buffer_unref (o);
  gst_harness_teardown (h);
  g_free (launch);
  g_free (caps);
  g_free (model);
  test_image_free (&frame);
}
GST_END_TEST;

/* The regions the "m2iinfer" message of the next frame lists (the
 * inferences made on it). */
static guint
inferred_regions (GstBus *bus)
{
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (m != NULL, "no m2iinfer message");
  const GstStructure *s = gst_message_get_structure (m);
  fail_unless (gst_structure_has_name (s, "m2iinfer"));
  guint n;
  fail_unless (gst_structure_get_uint (s, "n_regions", &n));
  const GValue *list = gst_structure_get_value (s, "regions");
  fail_unless (list != NULL);
  fail_unless_equals_int (gst_value_list_get_size (list), n);
  gst_message_unref (m);
  return n;
}

/* reclassify-interval=3 with objects 1 and 2 (tracked) and one without an
 * id, each showing another image on every frame: object 1 runs on frames
 * 0, 3, 6 and carries that frame's classification on the frames between;
 * object 2 leaves after frame 1 and comes back on frame 4, where it runs
 * again (forgotten); the untracked region runs on every frame. With 0,
 * object 1 runs once. */
GST_START_TEST (test_reclassify_interval)
{
  gchar *model = fm_model ();
  Direct d;
  direct_open (&d, model);
  for (guint interval = 0; interval <= 3; interval += 3) {
    gchar *extra = g_strdup_printf ("reclassify-interval=%u post-messages=true", interval);
    gchar *launch = roi_launch (extra), *caps = frame_caps (M2I_FORMAT_SP_NV12_8);
    GstHarness *h = harness (launch, caps);
    GstBus *bus = test_harness_bus (h);
    TestImage frames[8];
    guint last_run[3] = { 0 };
    for (guint f = 0; f < 8; f++) {
      RoiPaste p[3] = { { 13, 7, 56, 56, f }, { 101, 33, 85, 85, 10 + f },
        { 200, 120, 29, 31, 20 + f } };
      frames[f] = make_frame (M2I_FORMAT_SP_NV12_8, p, 3);
      gboolean two = f < 2 || f >= 4;
      GstBuffer *buf = test_image_to_buffer (&frames[f], 0);
      add_region (buf, "garment", 0, p[0].x, p[0].y, p[0].w, p[0].h, 1);
      if (two)
        add_region (buf, "garment", 1, p[1].x, p[1].y, p[1].w, p[1].h, 2);
      add_region (buf, "garment", 2, p[2].x, p[2].y, p[2].w, p[2].h, 0);
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
      GstBuffer *o = gst_harness_pull (h);
      /* which ran: object 1 per the interval, object 2 on its first frames
       * back, the untracked one always */
      gboolean run1 = interval == 0 ? f == 0 : f % 3 == 0;
      gboolean run2 = two && (interval == 0 ? f == 0 || f == 4 : f == 0 || f == 4 || f == 7);
      if (run1)
        last_run[0] = f;
      if (run2)
        last_run[1] = f;
      fail_unless_equals_int (inferred_regions (bus), run1 + run2 + 1);
      guint k = 0;
      const RoiPaste *q[3] = { &p[0], &p[1], &p[2] };
      for (guint r = 0; r < 3; r++) {
        if (r == 1 && !two)
          continue;
        guint src = r == 2 ? f : last_run[r];
        RoiPaste was = *q[r];
        check_classified (&d, &frames[src], nth_roi (o, k++), was.x, was.y, was.w, was.h);
      }
      gst_buffer_unref (o);
    }
    for (guint f = 0; f < 8; f++)
      test_image_free (&frames[f]);
    teardown_with_bus (h, bus);
    g_free (launch);
    g_free (caps);
    g_free (extra);
  }
  direct_close (&d);
  g_free (model);
}
GST_END_TEST;

/* roi-list needs output=meta and a model that takes images of any size;
 * it refuses what it cannot crop (deferred frames: the chain upstream
 * computes its frames) through caps. */
GST_START_TEST (test_roi_errors)
{
  gchar *model = fm_model ();
  gchar *launch = g_strdup_printf ("videotestsrc num-buffers=1 ! video/x-raw,format=NV12,"
      "width=64,height=64 ! m2iinfer model=%s inference-region=roi-list output=tensors ! "
      "fakesink", model);
  gchar *err = paused_error (launch);
  assert_contains (err, "inference-region=roi-list attaches each region's results to its "
      "region meta: set output=meta");
  g_free (err);
  g_free (launch);
  g_free (model);
  model = test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  launch = g_strdup_printf ("videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=28,"
      "height=28 ! m2iinfer model=%s device=CPU inference-region=roi-list ! fakesink", model);
  err = paused_error (launch);
  assert_contains (err, "regions of interest need a model that takes an image of any size");
  g_free (err);
  g_free (launch);
  g_free (model);

  /* an m2i element upstream computes real frames: no deferred caps */
  model = fm_model ();
  launch = g_strdup_printf ("m2icolorconvert ! m2iinfer name=inf model=%s device=CPU "
      "inference-region=roi-list", model);
  GstHarness *h = harness (launch, "video/x-raw,format=NV12,width=64,height=48,framerate=1/1");
  TestImage t;
  test_image_alloc (&t, M2I_FORMAT_SP_NV12_8, 64, 48);
  GstBuffer *buf = test_image_to_buffer (&t, 0);
  add_region (buf, "x", 0, 4, 4, 20, 20, 0);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);
  GstElement *inf = gst_bin_get_by_name (GST_BIN (h->element), "inf");
  GstPad *pad = gst_element_get_static_pad (inf, "sink");
  GstCaps *caps = gst_pad_get_current_caps (pad);
  fail_unless (caps != NULL);
  fail_if (gst_caps_features_contains (gst_caps_get_features (caps, 0), "memory:M2I"));
  fail_unless (gst_structure_has_name (gst_caps_get_structure (caps, 0), "video/x-raw"));
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (inf);
  gst_buffer_unref (o);
  gst_harness_teardown (h);
  test_image_free (&t);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* A detector on a region: person-detection-retail-0013 run on the region
 * around the person in a larger frame finds her; its boxes are new regions
 * in frame pixels, children of the region (parent_id), equal to the
 * session's detections on the crop copied out, moved by the crop's
 * origin. */
GST_START_TEST (test_detector_on_region)
{
  Photo ph;
  gchar *model = person_model_and_photo (&ph);
  if (!model)
    return;
  /* the photo at (101, 37) in a 480x288 RGB frame; the region: its part
   * from x = 20 on, the person inside */
  TestImage frame;
  test_image_alloc (&frame, M2I_FORMAT_IL_RGB888, 480, 288);
  for (gint y = 0; y < ph.height; y++)
    memcpy (frame.img.data[0] + (gsize) (37 + y) * frame.img.stride[0] + 101 * 3,
        ph.rgb.img.data[0] + (gsize) y * ph.rgb.img.stride[0], (gsize) ph.width * 3);
  gint rx = 101 + 20, ry = 37, rw = 220, rh = 160;
  gchar *launch = g_strdup_printf ("m2iinfer model=%s channel-order=bgr threshold=0.5 "
      "device=CPU inference-region=roi-list", model);
  GstHarness *h = harness (launch, "video/x-raw,format=RGB,width=480,height=288,framerate=1/1");
  GstBuffer *buf = test_image_to_buffer (&frame, 0);
  GstVideoRegionOfInterestMeta *parent = gst_buffer_add_video_region_of_interest_meta (buf,
      "area", rx, ry, rw, rh);
  parent->id = 5;
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  GstBuffer *o = gst_harness_pull (h);

  /* the reference: the session on the crop copied out */
  TestImage crop;
  gint rect[4] = { rx, ry, rw, rh };
  roi_ref_copy (&frame, rect, &crop);
  M2iInferModelOptions mo;
  GError *err = NULL;
  m2i_infer_model_options_init (&mo);
  mo.device = "CPU";
  mo.decoder.confidence_threshold = 0.5f;
  M2iInferModel *m = m2i_infer_model_load (model, &mo, &err);
  M2iInferSession *s = m2i_infer_session_new (m, &err);
  m2i_infer_model_unref (m);
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  pp.channel_order = M2I_ORDER_BGR;
  fail_unless (m2i_infer_session_set_preprocess (s, &pp, &err));
  fail_unless (m2i_infer_session_run (s, &crop.img, NULL, NULL, &err), "%s",
      err ? err->message : "");
  const M2iInferResult *r = m2i_infer_session_get_result (s);
  fail_unless (r->n_detections >= 1, "no person in the crop");
  fail_unless_equals_int (n_rois (o), 1 + r->n_detections);
  for (guint i = 0; i < r->n_detections; i++) {
    GstVideoRegionOfInterestMeta *c = nth_roi (o, 1 + i);
    const M2iInferDetection *det = &r->detections[i];
    fail_unless_equals_int (c->parent_id, 5);
    fail_unless_equals_int (c->id, 6 + (gint) i);
    /* the crop's pixels moved by its origin, rounded as m2iinfer rounds */
    fail_unless (abs ((gint) c->x - (gint) floor (rx + det->x_min + 0.5)) <= 1, "x %u", c->x);
    fail_unless (abs ((gint) c->y - (gint) floor (ry + det->y_min + 0.5)) <= 1, "y %u", c->y);
    fail_unless (abs ((gint) (c->x + c->w) - (gint) floor (rx + det->x_max + 0.5)) <= 1);
    fail_unless (abs ((gint) (c->y + c->h) - (gint) floor (ry + det->y_max + 0.5)) <= 1);
    GstStructure *ds = gst_video_region_of_interest_meta_get_param (c, "detection");
    fail_unless (ds != NULL);
    gdouble conf;
    fail_unless (gst_structure_get_double (ds, "confidence", &conf));
    fail_unless (fabs (conf - det->confidence) < 1e-3, "confidence %g vs %g", conf,
        det->confidence);
  }
  m2i_infer_session_free (s);
  test_image_free (&crop);
  test_image_free (&frame);
  test_image_free (&ph.rgb);
  gst_buffer_unref (o);
  gst_harness_teardown (h);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

static Suite *
m2i_infer_roi_suite (void)
{
  Suite *s = suite_create ("m2i-infer-roi");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_classify_regions);
  tcase_add_test (tc, test_object_class);
  tcase_add_test (tc, test_reclassify_interval);
  tcase_add_test (tc, test_roi_errors);
  tcase_add_test (tc, test_detector_on_region);
  return s;
}

GST_CHECK_MAIN (m2i_infer_roi);
