/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-track.c — m2itrack (GstHarness).
 *
 * Region metas are attached here the way m2iinfer attaches them (a
 * "detection" structure with normalised corners); the expected ids and boxes
 * are worked out by hand from the objects' known motion. With the person
 * detector of ../shared, m2iinfer inference-interval=2 ! m2itrack on a
 * panning photo: ids on the inferred frames, predicted regions on the
 * skipped ones (auto mode, told apart by m2iinfer's tensor meta).
 */
#include "gst-test-util.h"

#include <gst/video/gstvideometa.h>

#define W 320
#define H 240
#define CAPS "video/x-raw,format=RGB,width=320,height=240,framerate=30/1"

typedef struct {
  double x, y, w, h;            /* pixels */
  gint label_id;
  const char *label;
} Obj;

static GstBuffer *
frame_with (const Obj *objs, guint n)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);
  gst_buffer_memset (buf, 0, 0, W * H * 3);
  for (guint i = 0; i < n; i++) {
    const Obj *o = &objs[i];
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        o->label, (guint) o->x, (guint) o->y, (guint) o->w, (guint) o->h);
    roi->id = (gint) i;
    gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
            "x_min", G_TYPE_DOUBLE, o->x / W, "x_max", G_TYPE_DOUBLE, (o->x + o->w) / W,
            "y_min", G_TYPE_DOUBLE, o->y / H, "y_max", G_TYPE_DOUBLE, (o->y + o->h) / H,
            "confidence", G_TYPE_DOUBLE, 0.8, "label_id", G_TYPE_INT, o->label_id,
            "label", G_TYPE_STRING, o->label, NULL));
  }
  return buf;
}

/* The object id of @roi (0: none) and whether it was predicted. */
static gint
roi_id (GstVideoRegionOfInterestMeta *roi, gboolean *predicted)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "object_id");
  gint id = 0;
  gboolean p = FALSE;
  if (s) {
    fail_unless (gst_structure_get_int (s, "id", &id));
    fail_unless (gst_structure_get_boolean (s, "predicted", &p));
  }
  if (predicted)
    *predicted = p;
  return id;
}

/* Pushes @in, pulls the output (the same frame). */
static GstBuffer *
run (GstHarness *h, GstBuffer *in)
{
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  return gst_harness_pull (h);
}

static GstHarness *
harness (const char *launch)
{
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, CAPS);
  return h;
}

/* One object walking 6 px/frame keeps id 1 on every frame. */
GST_START_TEST (test_moving_object)
{
  GstHarness *h = harness ("m2itrack");
  for (int f = 0; f < 12; f++) {
    Obj o = { 20 + 6.0 * f, 60, 40, 80, 1, "person" };
    GstBuffer *out = run (h, frame_with (&o, 1));
    fail_unless_equals_int (n_rois (out), 1);
    gboolean pred;
    fail_unless_equals_int (roi_id (nth_roi (out, 0), &pred), 1);
    fail_if (pred);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Frames 0-3 detected, then one in three (the detector's
 * inference-interval=3): on the skipped frames (no region, no tensor meta:
 * auto mode) m2itrack adds the object at its predicted place, id 1,
 * predicted = TRUE, with the detection's label; the object walks 6 px/frame
 * from x = 20, so on frame f it is at 20 + 6 f. With zero-term the skipped
 * frames stay empty and the detections keep id 1. */
GST_START_TEST (test_skipped_frames)
{
  for (int zero_term = 0; zero_term < 2; zero_term++) {
    GstHarness *h = harness (zero_term ? "m2itrack tracking-type=zero-term" : "m2itrack");
    for (int f = 0; f < 16; f++) {
      gboolean detected = f < 4 || f % 3 == 0;
      Obj o = { 20 + 6.0 * f, 60, 40, 80, 1, "person" };
      GstBuffer *out = run (h, frame_with (&o, detected ? 1 : 0));
      if (!detected && zero_term) {
        fail_unless_equals_int (n_rois (out), 0);
        gst_buffer_unref (out);
        continue;
      }
      fail_unless_equals_int (n_rois (out), 1);
      GstVideoRegionOfInterestMeta *roi = nth_roi (out, 0);
      gboolean pred;
      fail_unless_equals_int (roi_id (roi, &pred), 1);
      fail_unless_equals_int (pred, !detected);
      if (!detected) {
        /* the prediction lags while the velocity is learnt */
        double tol = f < 8 ? 8.0 : 3.0;
        fail_unless (fabs (roi->x - (20 + 6.0 * f)) <= tol, "frame %d: x %u, object at %g", f,
            roi->x, 20 + 6.0 * f);
        fail_unless (abs ((gint) roi->y - 60) <= 1 && abs ((gint) roi->w - 40) <= 2
            && abs ((gint) roi->h - 80) <= 2, "frame %d: %u,%u %ux%u", f, roi->x, roi->y,
            roi->w, roi->h);
        fail_unless_equals_string (g_quark_to_string (roi->roi_type), "person");
        GstStructure *det = gst_video_region_of_interest_meta_get_param (roi, "detection");
        fail_unless (det != NULL);
        gint label_id;
        gdouble conf, x_min;
        fail_unless (gst_structure_get_int (det, "label_id", &label_id));
        fail_unless_equals_int (label_id, 1);
        fail_unless_equals_string (gst_structure_get_string (det, "label"), "person");
        fail_unless (gst_structure_get_double (det, "confidence", &conf));
        fail_unless (fabs (conf - 0.8) < 1e-6);
        fail_unless (gst_structure_get_double (det, "x_min", &x_min));
        fail_unless (fabs (x_min * W - roi->x) <= 0.5 + 1e-9);
      }
      gst_buffer_unref (out);
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* inference-interval=2 says which frames the detector ran on: frame 4 is a
 * detection frame without the object (missed), so the track is lost and
 * frame 5 gets no prediction; frame 6 finds it again: id 1. */
GST_START_TEST (test_explicit_interval)
{
  GstHarness *h = harness ("m2itrack inference-interval=2");
  for (int f = 0; f < 8; f++) {
    Obj o = { 100, 60, 40, 80, 1, "person" };
    gboolean present = f % 2 == 0 && f != 4;
    GstBuffer *out = run (h, frame_with (&o, present ? 1 : 0));
    guint want = present || f == 1 || f == 3 || f == 7 ? 1 : 0;
    fail_unless_equals_int (n_rois (out), want);
    if (want) {
      gboolean pred;
      fail_unless_equals_int (roi_id (nth_roi (out, 0), &pred), 1);
      fail_unless_equals_int (pred, !present);
    }
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* New objects get new ids (1, 2, 3 in order of confirmation); with
 * min-hits=3 an object gets its id on its third frame; ids follow their
 * objects whatever the order of the metas. */
GST_START_TEST (test_new_objects)
{
  GstHarness *h = harness ("m2itrack min-hits=3 inference-interval=1");
  for (int f = 0; f < 10; f++) {
    Obj objs[3] = {
      { 10 + 2.0 * f, 10, 50, 100, 1, "person" },
      { 200 - 2.0 * f, 10, 50, 100, 1, "person" },
      { 120, 150, 60, 40, 2, "bag" },
    };
    guint n = f < 4 ? 2 : 3;
    if (f % 2) {                    /* reversed order of the metas */
      Obj t = objs[0];
      objs[0] = objs[1];
      objs[1] = t;
    }
    GstBuffer *out = run (h, frame_with (objs, n));
    fail_unless_equals_int (n_rois (out), n);
    for (guint i = 0; i < n; i++) {
      GstVideoRegionOfInterestMeta *roi = nth_roi (out, i);
      gint want;
      if (roi->y == 150)
        want = f < 6 ? 0 : 3;       /* the bag: frames 4, 5, 6 */
      else if (roi->x == (guint) (10 + 2 * f))
        want = f < 2 ? 0 : 1;
      else
        want = f < 2 ? 0 : 2;
      fail_unless_equals_int (roi_id (roi, NULL), want);
    }
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* max-age=3: an object (a, id 2: b came first) missing on 4 detection
 * frames is deleted (at the 4th); when it
 * comes back it gets a new id (2), never its old one; the object present
 * all along keeps its id. A flush (seek) forgets the tracks: new ids
 * again. */
GST_START_TEST (test_ids_freed)
{
  GstHarness *h = harness ("m2itrack max-age=3 inference-interval=1");
  Obj a = { 20, 20, 60, 120, 1, "person" }, b = { 200, 20, 60, 120, 1, "person" };
  gint want_a[] = { 2, 2, -1, -1, -1, -1, 3, 3 };      /* -1: not in the frame */
  for (int f = 0; f < 8; f++) {
    Obj objs[2] = { b, a };
    guint n = want_a[f] < 0 ? 1 : 2;
    GstBuffer *out = run (h, frame_with (objs, n));
    fail_unless_equals_int (n_rois (out), n);
    fail_unless_equals_int (roi_id (nth_roi (out, 0), NULL), 1);
    if (n == 2)
      fail_unless_equals_int (roi_id (nth_roi (out, 1), NULL), want_a[f]);
    gst_buffer_unref (out);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  GstBuffer *out = run (h, frame_with (&a, 1));
  fail_unless_equals_int (roi_id (nth_roi (out, 0), NULL), 4);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Detections whose boxes are not finite, have no area or lack corners get
 * no id and crash nothing; the good one next to them gets id 1. */
GST_START_TEST (test_bad_boxes)
{
  GstHarness *h = harness ("m2itrack");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);
  double bad[][4] = { { NAN, 0.1, 0.2, 0.3 }, { 0.1, 0.1, INFINITY, 0.3 },
    { 0.5, 0.5, 0.4, 0.6 }, { 0.2, 0.2, 0.2, 0.4 }, { 0.1, 0.1, 0.3, 0.4 } };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        "person", 0, 0, 10, 10);
    gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
            "x_min", G_TYPE_DOUBLE, bad[i][0], "y_min", G_TYPE_DOUBLE, bad[i][1],
            "x_max", G_TYPE_DOUBLE, bad[i][2], "y_max", G_TYPE_DOUBLE, bad[i][3], NULL));
  }
  /* a detection structure without corners: the meta's own x, y, w, h (0 x 0) */
  GstVideoRegionOfInterestMeta *empty = gst_buffer_add_video_region_of_interest_meta (buf,
      "person", 4, 4, 0, 0);
  gst_video_region_of_interest_meta_add_param (empty, gst_structure_new_empty ("detection"));
  GstBuffer *out = run (h, buf);
  fail_unless_equals_int (n_rois (out), 6);
  for (guint i = 0; i < 6; i++)
    fail_unless_equals_int (roi_id (nth_roi (out, i), NULL), i == 4 ? 1 : 0);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* The photo moved 4 px right per frame (a pan), its left edge filled with
 * grey. */
static GstBuffer *
panned (const Photo *ph, gint shift)
{
  TestImage t;
  test_image_alloc (&t, M2I_FORMAT_IL_RGB888, ph->width, ph->height);
  memset (t.mem, 128, t.size);
  for (gint y = 0; y < ph->height; y++)
    memcpy (t.img.data[0] + (gsize) y * t.img.stride[0] + shift * 3,
        ph->rgb.img.data[0] + (gsize) y * ph->rgb.img.stride[0], (gsize) (ph->width - shift) * 3);
  GstBuffer *buf = test_image_to_buffer (&t, 0);
  test_image_free (&t);
  return buf;
}

/* m2iinfer (person-detection-retail-0013, inference-interval=2) !
 * m2itrack on the photo panning 4 px/frame: the inferred frames (0, 2, 4,
 * 6) carry the detector's region with id 1; the skipped ones one region
 * each, predicted, id 1, between the boxes of the frames around it. */
GST_START_TEST (test_with_m2iinfer)
{
  Photo ph;
  gchar *model = person_model_and_photo (&ph);
  if (!model)
    return;
  gchar *launch = g_strdup_printf ("m2iinfer model=%s channel-order=bgr device=CPU "
      "inference-interval=2 threshold=0.5 ! m2itrack", model);
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=%d,height=%d,framerate=10/1",
      ph.width, ph.height);
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, caps);
  guint x[7];
  gboolean pred[7];
  for (int f = 0; f < 7; f++) {
    GstBuffer *out = run (h, panned (&ph, 4 * f));
    fail_unless_equals_int (n_rois (out), 1);
    GstVideoRegionOfInterestMeta *roi = nth_roi (out, 0);
    fail_unless_equals_int (roi_id (roi, &pred[f]), 1);
    fail_unless_equals_int (pred[f], f % 2);
    x[f] = roi->x;
    gst_buffer_unref (out);
  }
  for (int f = 1; f < 7; f += 2)
    fail_unless (x[f] + 2 >= x[f - 1] && x[f] <= x[f + 1] + 2, "frame %d: x %u between %u "
        "and %u", f, x[f], x[f - 1], x[f + 1]);
  /* the detections follow the pan */
  fail_unless (x[6] >= x[0] + 18 && x[6] <= x[0] + 30, "x %u -> %u", x[0], x[6]);
  gst_harness_teardown (h);
  test_image_free (&ph.rgb);
  g_free (launch);
  g_free (caps);
  g_free (model);
}
GST_END_TEST;

/* gst-inspect shows a description for each of its 7 properties. */
GST_START_TEST (test_documented)
{
  fail_unless_equals_int (test_assert_documented ("m2itrack"), 7);
}
GST_END_TEST;

static Suite *
m2i_track_suite (void)
{
  Suite *s = suite_create ("m2i-track");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_moving_object);
  tcase_add_test (tc, test_skipped_frames);
  tcase_add_test (tc, test_explicit_interval);
  tcase_add_test (tc, test_new_objects);
  tcase_add_test (tc, test_ids_freed);
  tcase_add_test (tc, test_bad_boxes);
  tcase_add_test (tc, test_with_m2iinfer);
  tcase_add_test (tc, test_documented);
  return s;
}

GST_CHECK_MAIN (m2i_track);
