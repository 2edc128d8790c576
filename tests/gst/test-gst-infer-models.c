/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-infer-models.c — m2iinfer on real models with no property but
 * the model (the model's metadata gives labels, channel order, scale,
 * letterbox and pad): the photos of tests/data/photos (scikit-image's
 * astronaut.png and chelsea.png) through filesrc ! pngdec ! videoconvert,
 * against the reference outputs and decodes of
 * ../shared/models/external/reference (made by ONNX Runtime from the same
 * photos, letterboxed as Ultralytics does; see its README):
 *
 *  - yolov8n-int8, yolov5n: the same detections — class, score within
 *    0.01, IoU >= 0.9 in photo pixels;
 *  - yolov8n-pose-int8: the person and its 17 keypoints (within 4.8 photo
 *    pixels, visibility within 0.03), in the region's DL Streamer
 *    "keypoints" structure and in the message;
 *  - human-pose-estimation-0001 (two outputs, f16 input, BGR, fit to the
 *    window at the top left): the heatmap peaks of its reference as raw
 *    tensors, and decoded as OpenPose with no property: the person's
 *    keypoints within one heatmap cell of those peaks;
 *  - models/tiny-seg (the project's segmentation model): the mask equals
 *    torch's argmax on >= 99.5 % of the pixels;
 *  - a multi-head model written here: one structure per head (classifier,
 *    multi-label, regression) against softmax and sigmoid computed here.
 *
 * The shared models skip when ../shared is absent, and while the IR
 * runtime lacks an op they use (Swish, VariadicSplit, Mod, Slice-8, Elu:
 * the IR kernels of issue 15), saying so.
 */
#include "gst-infer-test-util.h"

#include <m2i-core/infer/m2i-infer.h>

/* The shared model @rel, or NULL (skip) when it is absent or cannot run
 * here yet (an op without a kernel: the message is printed). */
static gchar *
runnable_model (const char *rel)
{
  gchar *p = test_shared_model (rel);
  if (!p) {
    GST_INFO ("%s not found under M2I_SHARED_MODELS: skipped", rel);
    return NULL;
  }
  GError *err = NULL;
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = "CPU";
  M2iInferModel *m = m2i_infer_model_load (p, &mo, &err);
  if (!m) {
    fail_unless (strstr (err->message, "no kernel") != NULL, "%s: %s", rel, err->message);
    g_printerr ("SKIP %s: the IR runtime cannot run it yet: %s\n", rel, err->message);
    g_error_free (err);
    g_free (p);
    return NULL;
  }
  m2i_infer_model_unref (m);
  return p;
}

/* One frame of the photo @photo (tests/data/photos) through
 * filesrc ! pngdec ! videoconvert ! m2iinfer name=inf @props ! appsink:
 * the buffer (with its metas) and the last "m2iinfer" message. */
typedef struct {
  GstBuffer *buf;
  GstStructure *msg;
  gchar *fused;
  gint width, height;
} Run;

static void
run_photo (const char *photo, const char *model, const char *props, Run *r)
{
  gchar *png = g_strdup_printf ("%s/photos/%s", g_getenv ("M2I_TEST_DATA"), photo);
  gchar *launch = g_strdup_printf ("filesrc location=%s ! pngdec ! videoconvert ! "
      "m2iinfer name=inf model=%s %s ! appsink name=out", png, model, props);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (launch, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "out");
  GstBus *bus = gst_element_get_bus (p);
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstSample *sample = NULL;
  g_signal_emit_by_name (sink, "pull-sample", &sample);
  if (!sample) {
    gchar *e = test_bus_error (bus);
    fail ("%s: no frame: %s", photo, e);
  }
  r->buf = gst_buffer_ref (gst_sample_get_buffer (sample));
  GstVideoInfo vi;
  fail_unless (gst_video_info_from_caps (&vi, gst_sample_get_caps (sample)));
  r->width = GST_VIDEO_INFO_WIDTH (&vi);
  r->height = GST_VIDEO_INFO_HEIGHT (&vi);
  gst_sample_unref (sample);
  r->msg = NULL;
  GstMessage *m;
  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    const GstStructure *s = gst_message_get_structure (m);
    if (gst_structure_has_name (s, "m2iinfer")) {
      if (r->msg)
        gst_structure_free (r->msg);
      r->msg = gst_structure_copy (s);
    }
    gst_message_unref (m);
  }
  fail_unless (r->msg != NULL, "no m2iinfer message");
  GstElement *inf = gst_bin_get_by_name (GST_BIN (p), "inf");
  r->fused = test_get_string (inf, "fused");
  gst_object_unref (inf);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (launch);
  g_free (png);
}

static void
run_clear (Run *r)
{
  gst_buffer_unref (r->buf);
  gst_structure_free (r->msg);
  g_free (r->fused);
}

/* ---- reference detections ------------------------------------------------------ */

typedef struct {
  gint class_id;
  gchar name[32];
  double score, box[4];          /* photo pixels, clamped to the photo */
} RefDet;

/* Ultralytics' LetterBox of a @w x @h photo into @s x @s: scale, left, top
 * (the rule reference/README.md gives). */
static void
letterbox (gint w, gint h, gint s, double *r, double *left, double *top)
{
  *r = MIN ((double) s / h, (double) s / w);
  gint nw = (gint) floor (w * *r + 0.5), nh = (gint) floor (h * *r + 0.5);
  *left = floor ((s - nw) / 2.0 - 0.1 + 0.5);
  *top = floor ((s - nh) / 2.0 - 0.1 + 0.5);
}

/* The detections of reference file @file (input pixels of the @s x @s
 * letterbox of a @w x @h photo) in photo pixels. */
static guint
read_detections (const char *file, gint w, gint h, gint s, RefDet *out, guint max)
{
  GBytes *b = test_read_shared (file);
  gchar **lines = g_strsplit (g_bytes_get_data (b, NULL), "\n", -1);
  double r, left, top;
  letterbox (w, h, s, &r, &left, &top);
  guint n = 0;
  for (gchar **l = lines; *l && n < max; l++) {
    double v[5];
    RefDet *d = &out[n];
    if (**l == '#' || sscanf (*l, "%d %31s %lf %lf %lf %lf %lf", &d->class_id, d->name, &v[0],
            &v[1], &v[2], &v[3], &v[4]) != 7)
      continue;
    d->score = v[0];
    d->box[0] = CLAMP ((v[1] - left) / r, 0, w);
    d->box[1] = CLAMP ((v[2] - top) / r, 0, h);
    d->box[2] = CLAMP ((v[3] - left) / r, 0, w);
    d->box[3] = CLAMP ((v[4] - top) / r, 0, h);
    n++;
  }
  g_strfreev (lines);
  g_bytes_unref (b);
  return n;
}

static double
iou (const double a[4], const double b[4])
{
  double iw = MIN (a[2], b[2]) - MAX (a[0], b[0]), ih = MIN (a[3], b[3]) - MAX (a[1], b[1]);
  double inter = iw > 0 && ih > 0 ? iw * ih : 0;
  double u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return u > 0 ? inter / u : 0;
}

/* The detection regions of @r equal @ref (in order: best first). */
static void
check_detections (const Run *r, const RefDet *ref, guint n_ref, const char *what)
{
  fail_unless_equals_int (n_rois (r->buf), n_ref);
  guint n_msg = 0;
  fail_unless (gst_structure_get_uint (r->msg, "n_objects", &n_msg));
  fail_unless_equals_int (n_msg, n_ref);
  for (guint i = 0; i < n_ref; i++) {
    GstVideoRegionOfInterestMeta *roi = nth_roi (r->buf, i);
    GstStructure *det = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (det != NULL);
    gint id;
    double conf, box[4];
    fail_unless (gst_structure_get_int (det, "label_id", &id));
    fail_unless (gst_structure_get_double (det, "confidence", &conf));
    gst_m2i_test_box (det, r->width, r->height, box);
    double o = iou (box, ref[i].box);
    g_printerr ("%s: %s %.4f (reference %.4f), box %.1f %.1f %.1f %.1f (reference %.1f %.1f "
        "%.1f %.1f), IoU %.4f\n", what, gst_structure_get_string (det, "label"), conf,
        ref[i].score, box[0], box[1], box[2], box[3], ref[i].box[0], ref[i].box[1],
        ref[i].box[2], ref[i].box[3], o);
    fail_unless_equals_int (id, ref[i].class_id);
    /* labels from the model (Ultralytics writes "traffic light" as traffic_light) */
    gchar *want = g_strdelimit (g_strdup (ref[i].name), " ", '_');
    fail_unless_equals_string (gst_structure_get_string (det, "label"), want);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), want);
    g_free (want);
    fail_unless (fabs (conf - ref[i].score) <= 0.01, "%s: score %.4f, reference %.4f", what,
        conf, ref[i].score);
    fail_unless (o >= 0.9, "%s: IoU %.4f", what, o);
  }
}

/* @photo (@w x @h) through @model with @props: the detections of the
 * reference file @ref (decoded from the @size x @size letterbox); the
 * run, for more checks. */
static void
yolo_case (const char *model, const char *photo, const char *ref, gint w, gint h, gint size,
    const char *props, Run *r)
{
  RefDet dets[8];
  guint n = read_detections (ref, w, h, size, dets, G_N_ELEMENTS (dets));
  fail_unless (n >= 1);
  run_photo (photo, model, props, r);
  fail_unless_equals_int (r->width, w);
  check_detections (r, dets, n, photo);
  if (w != h)
    assert_contains (r->fused, "+ letterbox");
}

GST_START_TEST (test_yolov8_detections)
{
  gchar *model = runnable_model ("yolov8n-int8/yolov8n.xml");
  if (!model)
    return;
  Run r;
  yolo_case (model, "astronaut.png", "reference/yolov8n-int8.astronaut.detections.txt", 512,
      512, 640, "device=CPU", &r);
  run_clear (&r);
  yolo_case (model, "chelsea.png", "reference/yolov8n-int8.chelsea.detections.txt", 451, 300,
      640, "device=CPU", &r);
  /* every setting from the model's model_info */
  assert_contains (r.fused, "channel order = RGB (model_info/reverse_input_channels)");
  assert_contains (r.fused, "std = <255, 255, 255> (model_info/scale_values)");
  assert_contains (r.fused, "resize type = fit_to_window_letterbox (model_info/resize_type)");
  assert_contains (r.fused, "pad value = 114 (model_info/pad_value)");
  assert_contains (r.fused, "IoU threshold = 0.7 (model_info/iou_threshold)");
  assert_contains (r.fused, "labels = 80 (person, ...) (model_info/labels)");
  run_clear (&r);
  g_free (model);
}
GST_END_TEST;

/* YOLOv5n has no model_info: Ultralytics' framework metadata makes it an
 * Ultralytics export (RGB, / 255, letterbox 114); labels from
 * framework/names; the reference's NMS IoU for YOLOv5 is 0.45. */
GST_START_TEST (test_yolov5_detections)
{
  gchar *model = runnable_model ("yolov5n/yolov5n.xml");
  if (!model)
    return;
  Run r;
  yolo_case (model, "chelsea.png", "reference/yolov5n.chelsea.detections.txt", 451, 300, 416,
      "device=CPU iou-threshold=0.45", &r);
  assert_contains (r.fused, "(framework/stride: an Ultralytics export)");
  assert_contains (r.fused, "IoU threshold = 0.45 (set)");
  assert_contains (r.fused, "(framework/names)");
  run_clear (&r);
  yolo_case (model, "astronaut.png", "reference/yolov5n.astronaut.detections.txt", 512, 512,
      416, "device=CPU iou-threshold=0.45", &r);
  run_clear (&r);
  g_free (model);
}
GST_END_TEST;

/* YOLOv8n-pose: the person and its keypoints, in the region's DL Streamer
 * "keypoints" structure (positions relative to the box) and in the
 * message (frame pixels). */
GST_START_TEST (test_yolov8_pose_keypoints)
{
  gchar *model = runnable_model ("yolov8n-pose-int8/yolov8n-pose.xml");
  if (!model)
    return;
  GBytes *b = test_read_shared ("reference/yolov8n-pose-int8.astronaut.keypoints.txt");
  gchar **lines = g_strsplit (g_bytes_get_data (b, NULL), "\n", -1);
  double score = 0, rbox[4] = { 0 }, kx[17], ky[17], kv[17];
  guint nk = 0;
  for (gchar **l = lines; *l; l++) {
    char name[32];
    double x, y, v;
    if (sscanf (*l, "person %lf box %lf %lf %lf %lf", &score, &rbox[0], &rbox[1], &rbox[2],
            &rbox[3]) == 5)
      continue;
    if (nk < 17 && sscanf (*l, " %31s %lf %lf %lf", name, &x, &y, &v) == 4) {
      /* input pixels of the 640x640 letterbox of the 512x512 photo: / 1.25 */
      kx[nk] = x / 1.25;
      ky[nk] = y / 1.25;
      kv[nk] = v;
      nk++;
    }
  }
  g_strfreev (lines);
  g_bytes_unref (b);
  fail_unless_equals_int (nk, 17);
  for (int i = 0; i < 4; i++)
    rbox[i] = CLAMP (rbox[i] / 1.25, 0, 512);
  Run r;
  run_photo ("astronaut.png", model, "device=CPU", &r);
  fail_unless_equals_int (n_rois (r.buf), 1);
  GstVideoRegionOfInterestMeta *roi = nth_roi (r.buf, 0);
  GstStructure *det = gst_video_region_of_interest_meta_get_param (roi, "detection");
  GstStructure *kp = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
  fail_unless (det && kp);
  double conf, box[4];
  fail_unless (gst_structure_get_double (det, "confidence", &conf));
  gst_m2i_test_box (det, 512, 512, box);
  fail_unless (fabs (conf - score) <= 0.01, "score %.4f vs %.4f", conf, score);
  fail_unless (iou (box, rbox) >= 0.9, "IoU %.4f", iou (box, rbox));
  /* DL Streamer's keypoints tensor */
  fail_unless_equals_string (gst_structure_get_string (kp, "format"), "body-pose/coco-17");
  fail_unless_equals_string (gst_structure_get_string (kp, "type"), "keypoints");
  const GValue *dims = gst_structure_get_value (kp, "dims");
  fail_unless (dims && gst_value_array_get_size (dims) == 2);
  fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value (dims, 0)), 17);
  fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value (dims, 1)), 2);
  GVariant *var = g_value_get_variant (gst_structure_get_value (kp, "data_buffer"));
  gsize size;
  const float *rel = g_variant_get_fixed_array (var, &size, 1);
  fail_unless_equals_uint64 (size, 17 * 2 * sizeof (float));
  const GValue *confs = gst_structure_get_value (kp, "confidence");
  const GValue *names = gst_structure_get_value (kp, "point_names");
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value (names, 0)), "nose");
  /* the message's pixels */
  const GValue *objs = gst_structure_get_value (r.msg, "objects");
  const GstStructure *o = gst_value_get_structure (gst_value_list_get_value (objs, 0));
  const GValue *mx = gst_structure_get_value (o, "keypoints_x");
  const GValue *my = gst_structure_get_value (o, "keypoints_y");
  /* visible keypoints within 4.8 photo pixels (6 of the model's input, as
   * test-ir-int8): the float emulation of this INT8 graph, whose only
   * difference to ONNX Runtime is float rounding, is 2.9 px off at the
   * right wrist (keypoint 10), the integer kernels (one level apart here
   * and there) 3.1 px */
  double worst = 0;
  for (guint k = 0; k < 17; k++) {
    double x = g_value_get_double (gst_value_array_get_value (mx, k));
    double y = g_value_get_double (gst_value_array_get_value (my, k));
    double v = g_value_get_float (gst_value_array_get_value (confs, k));
    /* the region's relative positions give the same point */
    double ax = box[0] + rel[2 * k] * (box[2] - box[0]);
    double ay = box[1] + rel[2 * k + 1] * (box[3] - box[1]);
    fail_unless (fabs (ax - x) < 0.05 && fabs (ay - y) < 0.05, "keypoint %u: region %.2f,%.2f "
        "vs message %.2f,%.2f", k, ax, ay, x, y);
    fail_unless (fabs (v - kv[k]) <= 0.03, "keypoint %u: visibility %.4f vs %.4f", k, v, kv[k]);
    if (kv[k] < 0.5)
      continue;
    worst = MAX (worst, MAX (fabs (x - kx[k]), fabs (y - ky[k])));
    fail_unless (fabs (x - kx[k]) <= 4.8 && fabs (y - ky[k]) <= 4.8, "keypoint %u at %.1f,%.1f, "
        "reference %.1f,%.1f", k, x, y, kx[k], ky[k]);
  }
  g_printerr ("yolov8n-pose-int8 astronaut: visible keypoints within %.2f photo px\n", worst);
  run_clear (&r);
  g_free (model);
}
GST_END_TEST;

/* human-pose-estimation-0001: two outputs, an f16 input, BGR, the photo
 * fitted into 456x256 at the top left (as OMZ's OpenPose wrapper and the
 * reference do, with PIL's bilinear: resize-mode=bilinear-pillow); as raw
 * tensors (model-type=raw), the tensor meta carries them: every heatmap
 * peak of the reference (>= 0.3) is at the same cell. */
GST_START_TEST (test_human_pose_two_outputs)
{
  gchar *model = runnable_model ("human-pose-estimation-0001/human-pose-estimation-0001.xml");
  if (!model)
    return;
  Run r;
  run_photo ("astronaut.png", model, "device=CPU model-type=raw channel-order=bgr "
      "resize-type=fit-to-window resize-mode=bilinear-pillow", &r);
  GstM2iTensorMeta *m = gst_buffer_get_m2i_tensor_meta (r.buf);
  fail_unless (m != NULL && m->n_tensors == 2);
  const GstM2iTensor *heat = output_tensor (r.buf, "Mconv7_stage2_L2");
  fail_unless_equals_int (heat->n_dims, 4);
  fail_unless (heat->dims[1] == 19 && heat->dims[2] == 32 && heat->dims[3] == 57);
  GBytes *ref = test_read_shared ("reference/human-pose-estimation-0001.astronaut.output.1.f32");
  const float *want = g_bytes_get_data (ref, NULL);
  const float *got = heat->data;
  double worst = 0;
  for (gsize i = 0; i < 19 * 32 * 57; i++)
    worst = MAX (worst, fabs ((double) got[i] - want[i]));
  g_printerr ("human-pose-estimation-0001 heatmaps: max |diff| %.4f\n", worst);
  for (int k = 0; k < 18; k++) {
    const float *a = got + k * 32 * 57, *b = want + k * 32 * 57;
    guint ga = argmax (a, 32 * 57), gb = argmax (b, 32 * 57);
    if (b[gb] >= 0.3)
      fail_unless (ga == gb, "keypoint %d: peak at cell %u, reference %u", k, ga, gb);
  }
  fail_unless (worst < 0.1, "heatmaps differ by %.4f", worst);
  assert_contains (r.fused, "mean/scale inside the graph");
  g_bytes_unref (ref);
  run_clear (&r);
  g_free (model);
}
GST_END_TEST;

/* human-pose-estimation-0001 with no property but the model: recognised
 * as OpenPose (which makes it BGR, fitted at the top left), decoded into
 * one "person" region whose "keypoints" structure (COCO-18: positions
 * relative to the box) and message (frame pixels) agree with the
 * reference's heatmap maxima (its "photo px" column: cell * 8 + 3.5 input
 * pixels, / 0.5) for every keypoint whose reference peak is >= 0.1, and
 * mark those under 0.05 missing (confidence -1). With the reference's own
 * resize (resize-mode=bilinear-pillow) each is within one heatmap cell (8
 * input = 16 photo pixels); with the default resize (linear, not
 * antialiased, as Model API's cv2.resize) the strong ones (>= 0.3) are,
 * and a weak one may peak in the neighbouring cell: within 1.25 cells (the
 * quarter-cell refinement) + the half-pixel centre convention = 21 photo
 * pixels. */
static void
check_human_pose_people (const char *model, const char *props, const double *px,
    const double *py, const double *pv)
{
  Run r;
  run_photo ("astronaut.png", model, props, &r);
  assert_contains (r.fused, "channel order = BGR (openpose: as Model API's OpenPose wrapper)");
  assert_contains (r.fused, "resize type = fit_to_window (openpose");
  gboolean pillow = strstr (props, "bilinear-pillow") != NULL;
  fail_unless_equals_int (n_rois (r.buf), 1);
  GstVideoRegionOfInterestMeta *roi = nth_roi (r.buf, 0);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "person");
  GstStructure *det = gst_video_region_of_interest_meta_get_param (roi, "detection");
  GstStructure *kp = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
  fail_unless (det && kp);
  fail_unless_equals_string (gst_structure_get_string (det, "label"), "person");
  double box[4];
  gst_m2i_test_box (det, 512, 512, box);
  fail_unless_equals_string (gst_structure_get_string (kp, "format"), "body-pose/coco-18");
  const GValue *names = gst_structure_get_value (kp, "point_names");
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value (names, 1)), "neck");
  GVariant *var = g_value_get_variant (gst_structure_get_value (kp, "data_buffer"));
  gsize size;
  const float *rel = g_variant_get_fixed_array (var, &size, 1);
  fail_unless_equals_uint64 (size, 18 * 2 * sizeof (float));
  const GValue *confs = gst_structure_get_value (kp, "confidence");
  const GValue *objs = gst_structure_get_value (r.msg, "objects");
  const GstStructure *o = gst_value_get_structure (gst_value_list_get_value (objs, 0));
  const GValue *mx = gst_structure_get_value (o, "keypoints_x");
  const GValue *my = gst_structure_get_value (o, "keypoints_y");
  double worst = 0;
  for (guint k = 0; k < 18; k++) {
    double c = g_value_get_float (gst_value_array_get_value (confs, k));
    if (pv[k] < 0.05) {
      fail_unless (c < 0, "keypoint %u: found (%.3f), reference peak %.4f", k, c, pv[k]);
      continue;
    }
    if (pv[k] < 0.1)
      continue;
    double x = g_value_get_double (gst_value_array_get_value (mx, k));
    double y = g_value_get_double (gst_value_array_get_value (my, k));
    double ax = box[0] + rel[2 * k] * (box[2] - box[0]);
    double ay = box[1] + rel[2 * k + 1] * (box[3] - box[1]);
    fail_unless (fabs (ax - x) < 0.05 && fabs (ay - y) < 0.05, "keypoint %u: region %.2f,%.2f "
        "vs message %.2f,%.2f", k, ax, ay, x, y);
    double e = MAX (fabs (x - px[k]), fabs (y - py[k]));
    double tol = pillow || pv[k] >= 0.3 ? 16 : 21;
    fail_unless (c >= 0 && fabs (c - pv[k]) < 0.05 && e <= tol, "%s: keypoint %u at %.1f,%.1f "
        "(%.3f), reference %.1f,%.1f (%.3f)", props, k, x, y, c, px[k], py[k], pv[k]);
    worst = MAX (worst, e);
  }
  g_printerr ("human-pose-estimation-0001 (%s): worst keypoint %.1f photo px from the "
      "reference's peak\n", props, worst);
  run_clear (&r);
}

GST_START_TEST (test_human_pose_people)
{
  gchar *model = runnable_model ("human-pose-estimation-0001/human-pose-estimation-0001.xml");
  if (!model)
    return;
  GBytes *b = test_read_shared ("reference/human-pose-estimation-0001.astronaut.peaks.txt");
  gchar **lines = g_strsplit (g_bytes_get_data (b, NULL), "\n", -1);
  double px[18], py[18], pv[18];
  guint nk = 0;
  for (gchar **l = lines; *l; l++) {
    char name[32];
    int cx, cy;
    double ix, iy;
    if (**l != '#' && nk < 18 && sscanf (*l, "%31s %lf %d %d | %lf %lf | %lf %lf", name, &pv[nk],
            &cx, &cy, &ix, &iy, &px[nk], &py[nk]) == 8)
      nk++;
  }
  g_strfreev (lines);
  g_bytes_unref (b);
  fail_unless_equals_int (nk, 18);
  check_human_pose_people (model, "device=CPU", px, py, pv);
  check_human_pose_people (model, "device=CPU resize-mode=bilinear-pillow", px, py, pv);
  g_free (model);
}
GST_END_TEST;

/* ---- segmentation: models/tiny-seg ------------------------------------------------- */

#define SEG_W 128
#define SEG_H 96

/* torch's input picture (0..1 RGB, NCHW) as an RGB frame. */
static TestImage
seg_frame (const float *input)
{
  TestImage t;
  test_image_alloc (&t, M2I_FORMAT_IL_RGB888, SEG_W, SEG_H);
  for (gint y = 0; y < SEG_H; y++)
    for (gint x = 0; x < SEG_W; x++)
      for (int c = 0; c < 3; c++)
        t.img.data[0][y * t.img.stride[0] + x * 3 + c] =
            (guint8) CLAMP (floor (input[(c * SEG_H + y) * SEG_W + x] * 255 + 0.5), 0, 255);
  return t;
}

/* The frame, its pixels rounded to u8 (the only difference from torch's
 * input), through m2iinfer with no property: the "semantic_mask" on the
 * full-frame region equals torch's argmax on >= 99.5 % of the cells; the
 * message summarises the classes. */
GST_START_TEST (test_segmentation_mask)
{
  gchar *model = test_models_path ("tiny-seg/tiny-seg.xml");
  static const char *const cases[] = { "synth0", "synth1", "astronaut" };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *inf = g_strdup_printf ("infer/tiny-seg.%s.input.f32.gz", cases[c]);
    gchar *af = g_strdup_printf ("infer/tiny-seg.%s.argmax.u8.gz", cases[c]);
    GBytes *input = test_read_data (inf), *argmax_b = test_read_data (af);
    TestImage frame = seg_frame (g_bytes_get_data (input, NULL));
    gchar *launch = g_strdup_printf ("m2iinfer name=inf model=%s device=CPU", model);
    GstHarness *h = harness (launch, "video/x-raw,format=RGB,width=128,height=96,"
        "framerate=1/1");
    GstBus *bus = test_harness_bus (h);
    fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&frame, 0)), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    fail_unless_equals_int (n_rois (out), 1);
    GstVideoRegionOfInterestMeta *roi = nth_roi (out, 0);
    fail_unless (roi->x == 0 && roi->y == 0 && roi->w == SEG_W && roi->h == SEG_H);
    GstStructure *ms = gst_video_region_of_interest_meta_get_param (roi, "semantic_mask");
    fail_unless (ms != NULL);
    guint mw, mh, nc;
    fail_unless (gst_structure_get_uint (ms, "width", &mw) && mw == 64);
    fail_unless (gst_structure_get_uint (ms, "height", &mh) && mh == 48);
    fail_unless (gst_structure_get_uint (ms, "n_classes", &nc) && nc == 4);
    gsize size;
    const guint16 *map = g_variant_get_fixed_array (g_value_get_variant (
            gst_structure_get_value (ms, "data_buffer")), &size, 1);
    fail_unless_equals_uint64 (size, 64 * 48 * 2);
    const guint8 *want = g_bytes_get_data (argmax_b, NULL);
    guint same = 0;
    for (guint i = 0; i < 64 * 48; i++)
      same += map[i] == want[i];
    g_printerr ("tiny-seg %s: mask = torch's argmax on %u of %u cells (%.2f %%)\n", cases[c],
        same, 64 * 48, 100.0 * same / (64 * 48));
    fail_unless (same >= 0.995 * 64 * 48, "%s: %u of %u cells", cases[c], same, 64 * 48);
    /* the message: classes present, their shares summing to 1 */
    GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL);
    const GValue *classes = gst_structure_get_value (gst_message_get_structure (m),
        "mask_classes");
    fail_unless (classes != NULL && gst_value_list_get_size (classes) >= 1);
    double sum = 0;
    for (guint i = 0; i < gst_value_list_get_size (classes); i++) {
      double f;
      fail_unless (gst_structure_get_double (gst_value_get_structure (
                  gst_value_list_get_value (classes, i)), "fraction", &f));
      sum += f;
    }
    fail_unless (fabs (sum - 1) < 1e-9);
    gst_message_unref (m);
    gchar *fused = test_harness_fused (h, "inf");
    assert_contains (fused, "channel order = RGB (model_info/reverse_input_channels)");
    assert_contains (fused, "std = <255, 255, 255> (model_info/scale_values)");
    g_free (fused);
    gst_buffer_unref (out);
    teardown_with_bus (h, bus);
    test_image_free (&frame);
    g_free (launch);
    g_bytes_unref (input);
    g_bytes_unref (argmax_b);
    g_free (inf);
    g_free (af);
  }
  g_free (model);
}
GST_END_TEST;

/* A letterboxed frame: the mask region covers the frame only, and the
 * mask holds the cells of the picture, not of the padding. 128x48 into
 * 128x96: picture rows 24..71 of the input, cells 12..35 of 48. */
GST_START_TEST (test_segmentation_letterbox)
{
  gchar *model = test_models_path ("tiny-seg/tiny-seg.xml");
  gchar *launch = g_strdup_printf ("m2iinfer model=%s device=CPU resize-type=letterbox", model);
  GstHarness *h = harness (launch, "video/x-raw,format=RGB,width=128,height=48,framerate=1/1");
  TestImage frame;
  test_image_alloc (&frame, M2I_FORMAT_IL_RGB888, 128, 48);
  test_image_fill (&frame, 3);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&frame, 0)), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  GstVideoRegionOfInterestMeta *roi = nth_roi (out, 0);
  fail_unless (roi->x == 0 && roi->y == 0 && roi->w == 128 && roi->h == 48, "%u,%u %ux%u",
      roi->x, roi->y, roi->w, roi->h);
  GstStructure *ms = gst_video_region_of_interest_meta_get_param (roi, "semantic_mask");
  guint mw, mh;
  fail_unless (gst_structure_get_uint (ms, "width", &mw) && mw == 64);
  fail_unless (gst_structure_get_uint (ms, "height", &mh) && mh == 24, "height %u", mh);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  test_image_free (&frame);
  g_free (launch);
  g_free (model);
}
GST_END_TEST;

/* ---- a multi-head model ------------------------------------------------------- */

#define V3 "<dim>1</dim><dim>3</dim>"
#define IMG "<dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim>"

/* image f32 [1,3,4,4] -> ReduceMean over H, W = m [1,3] ("age": a
 * regression head); SoftMax (m) ("gender": a classifier); Sigmoid (m)
 * ("attrs": multi-label). */
static gchar *
write_heads_model (const char *dir)
{
  const char *xml = "<?xml version=\"1.0\"?>\n<net name=\"heads\" version=\"11\"><layers>"
      "<layer id=\"0\" name=\"image\" type=\"Parameter\" version=\"opset1\"><data "
      "shape=\"1,3,4,4\" element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\">"
      IMG "</port></output></layer>"
      "<layer id=\"1\" name=\"axes\" type=\"Const\" version=\"opset1\"><data "
      "element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"/><output><port id=\"0\" "
      "precision=\"I64\"><dim>2</dim></port></output></layer>"
      "<layer id=\"2\" name=\"mean\" type=\"ReduceMean\" version=\"opset1\"><data "
      "keep_dims=\"false\"/><input><port id=\"0\">" IMG "</port><port id=\"1\"><dim>2</dim>"
      "</port></input><output><port id=\"2\" precision=\"FP32\" names=\"age\">" V3
      "</port></output></layer>"
      "<layer id=\"3\" name=\"sm\" type=\"SoftMax\" version=\"opset8\"><data axis=\"1\"/>"
      "<input><port id=\"0\">" V3 "</port></input><output><port id=\"1\" precision=\"FP32\" "
      "names=\"gender\">" V3 "</port></output></layer>"
      "<layer id=\"4\" name=\"sig\" type=\"Sigmoid\" version=\"opset1\">"
      "<input><port id=\"0\">" V3 "</port></input><output><port id=\"1\" precision=\"FP32\" "
      "names=\"attrs\">" V3 "</port></output></layer>"
      "<layer id=\"5\" name=\"age\" type=\"Result\" version=\"opset1\"><input><port "
      "id=\"0\">" V3 "</port></input></layer>"
      "<layer id=\"6\" name=\"gender\" type=\"Result\" version=\"opset1\"><input><port "
      "id=\"0\">" V3 "</port></input></layer>"
      "<layer id=\"7\" name=\"attrs\" type=\"Result\" version=\"opset1\"><input><port "
      "id=\"0\">" V3 "</port></input></layer>"
      "</layers><edges>"
      "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
      "<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
      "<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>"
      "<edge from-layer=\"2\" from-port=\"2\" to-layer=\"4\" to-port=\"0\"/>"
      "<edge from-layer=\"2\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>"
      "<edge from-layer=\"3\" from-port=\"1\" to-layer=\"6\" to-port=\"0\"/>"
      "<edge from-layer=\"4\" from-port=\"1\" to-layer=\"7\" to-port=\"0\"/>"
      "</edges></net>\n";
  const gint64 axes[2] = { 2, 3 };
  gchar *path = g_build_filename (dir, "heads.xml", NULL), *bin = g_build_filename (dir,
      "heads.bin", NULL);
  fail_unless (g_file_set_contents (path, xml, -1, NULL));
  fail_unless (g_file_set_contents (bin, (const char *) axes, sizeof axes, NULL));
  g_free (bin);
  return path;
}

/* One structure per head on the full-frame region, each with its own
 * kind: the classifier's best class and its softmax, the multi-label
 * head's classes above the threshold joined by spaces, the regression
 * head's values — computed here from the frame: every pixel (2, 2, 2)
 * minus mean <1, 3, 1.75> gives m = (1, -1, 0.25). */
GST_START_TEST (test_multi_head_results)
{
  gchar *dir = g_dir_make_tmp ("m2i-heads-XXXXXX", NULL);
  gchar *model = write_heads_model (dir);
  gchar *launch = g_strdup_printf ("m2iinfer model=%s device=CPU mean=\"<1, 3, 1.75>\" "
      "labels=\"[a, b, c]\" top-k=2", model);
  GstHarness *h = harness (launch, "video/x-raw,format=RGB,width=4,height=4,framerate=1/1");
  GstBus *bus = test_harness_bus (h);
  TestImage frame;
  test_image_alloc (&frame, M2I_FORMAT_IL_RGB888, 4, 4);
  memset (frame.mem, 2, frame.size);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&frame, 0)), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  fail_unless_equals_int (n_rois (out), 1);
  GstVideoRegionOfInterestMeta *roi = nth_roi (out, 0);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "a");
  fail_unless_equals_int (g_list_length (roi->params), 3);
  const double m[3] = { 1, -1, 0.25 };
  double z = exp (m[0]) + exp (m[1]) + exp (m[2]);
  GstStructure *g = gst_video_region_of_interest_meta_get_param (roi,
      "classification_layer_name:gender");
  GstStructure *a = gst_video_region_of_interest_meta_get_param (roi,
      "classification_layer_name:attrs");
  GstStructure *r = gst_video_region_of_interest_meta_get_param (roi,
      "classification_layer_name:age");
  fail_unless (g && a && r);
  gint id;
  double conf;
  /* classifier: class 0 (a), then c (top-k 2) */
  fail_unless_equals_string (gst_structure_get_string (g, "label"), "a");
  fail_unless (gst_structure_get_int (g, "label_id", &id) && id == 0);
  fail_unless (gst_structure_get_double (g, "confidence", &conf));
  fail_unless (fabs (conf - exp (m[0]) / z) < 1e-6, "softmax %g", conf);
  const GValue *top = gst_structure_get_value (g, "top_labels");
  fail_unless (top && gst_value_array_get_size (top) == 2);
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value (top, 1)), "c");
  /* multi-label: sigmoid (1) = 0.73 and sigmoid (0.25) = 0.56 above 0.5 */
  fail_unless_equals_string (gst_structure_get_string (a, "label"), "a c");
  fail_unless (gst_structure_get_double (a, "confidence", &conf));
  fail_unless (fabs (conf - 1 / (1 + exp (-m[0]))) < 1e-6);
  gboolean ml = FALSE;
  fail_unless (gst_structure_get_boolean (a, "multi_label", &ml) && ml);
  /* regression: the values */
  fail_unless_equals_string (gst_structure_get_string (r, "label"), "1.00, -1.00, 0.25");
  const GValue *vals = gst_structure_get_value (r, "values");
  fail_unless (vals && gst_value_array_get_size (vals) == 3);
  for (guint i = 0; i < 3; i++)
    fail_unless (fabs (g_value_get_double (gst_value_array_get_value (vals, i)) - m[i]) < 1e-6);
  /* the message lists the heads */
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL);
  const GValue *heads = gst_structure_get_value (gst_message_get_structure (msg), "heads");
  fail_unless (heads && gst_value_list_get_size (heads) == 3);
  gst_message_unref (msg);
  gst_buffer_unref (out);
  teardown_with_bus (h, bus);
  test_image_free (&frame);
  g_free (launch);
  g_free (model);
  remove_dir (dir);
}
GST_END_TEST;

static Suite *
m2i_infer_models_suite (void)
{
  Suite *s = suite_create ("m2i-infer-models");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_yolov8_detections);
  tcase_add_test (tc, test_yolov5_detections);
  tcase_add_test (tc, test_yolov8_pose_keypoints);
  tcase_add_test (tc, test_human_pose_two_outputs);
  tcase_add_test (tc, test_human_pose_people);
  tcase_add_test (tc, test_segmentation_mask);
  tcase_add_test (tc, test_segmentation_letterbox);
  tcase_add_test (tc, test_multi_head_results);
  return s;
}

GST_CHECK_MAIN (m2i_infer_models);
