/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demo-analytics.c — `m2i-infer-demo analytics` (`.ci/demo analytics`): a
 * whole analytics pipeline on a few seconds of video made from the
 * repository's test photo.
 *
 * The photo (scikit-image's astronaut, tests/data/ir/astronaut-272x160.ppm)
 * is panned and zoomed into --frames NV12 frames of 640x360 at 12 frames
 * per second (bilinear sampling of the photo, grey outside it, BT.601
 * limited range), generated here and pushed through
 *
 *   appsrc ! m2iinfer (person-detection-retail-0013, every 3rd frame)
 *     ! m2itrack inference-interval=3 (ids; predicted boxes on the others)
 *     ! m2iinfer inference-region=roi-list object-class=person
 *         reclassify-interval=6 (the classifier on each person)
 *     ! m2imetapublish (JSON lines) ! m2ioverlay
 *     ! tee ! videoconvert ! jpegenc ! avimux ! filesink   (MJPEG in AVI)
 *           ! appsink                                     (objects counted)
 *
 * and writes analytics.avi, analytics.jsonl and one annotated frame as
 * analytics-frame.png (--png to put it elsewhere, e.g. docs/). The
 * classifier is models/torso-colour (the project's own: the colour of a
 * person's upper body; see its script) unless --classifier names another
 * image classifier. person-detection-retail-0013 comes from ../shared (or
 * $M2I_SHARED_MODELS); without it the demo says so and exits 0.
 */
#include "demo-analytics.h"
#include "demo-util.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/gstvideometa.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef M2I_DEMO_OUTDIR
#define M2I_DEMO_OUTDIR "."
#endif

#define W 640
#define H 360
#define FPS 12
#define DETECT_INTERVAL 3
#define RECLASSIFY 6

static gint opt_frames = 48;
static gchar *opt_classifier;
static gchar *opt_classifier_labels;
static gchar *opt_outdir;
static gchar *opt_png;

GOptionEntry demo_analytics_entries[] = {
  { "frames", 0, 0, G_OPTION_ARG_INT, &opt_frames, "analytics: frames of video (default 48, "
    "4 s)", "N" },
  { "classifier", 0, 0, G_OPTION_ARG_FILENAME, &opt_classifier, "analytics: the classifier "
    "run on each person (default models/torso-colour/torso-colour.xml)", "XML" },
  { "classifier-labels", 0, 0, G_OPTION_ARG_FILENAME, &opt_classifier_labels, "analytics: its "
    "labels file", "FILE" },
  { "out-dir", 0, 0, G_OPTION_ARG_FILENAME, &opt_outdir, "analytics: where the video, the JSON "
    "lines and the frame go (default the build's gst/tools)", "DIR" },
  { "png", 0, 0, G_OPTION_ARG_FILENAME, &opt_png, "analytics: where the annotated frame goes "
    "(default OUT-DIR/analytics-frame.png)", "FILE" },
  { NULL }
};

/* ---- the video ------------------------------------------------------------------ */

/* Frame @f of @n as RGB: the photo seen by a camera that zooms from 2.0 to
 * 3.0 output pixels per photo pixel while its centre moves from photo
 * pixel (95, 88) to (145, 80). */
static void
render (const DemoPicture *pic, gint f, gint n, guint8 *rgb)
{
  double t = n > 1 ? (double) f / (n - 1) : 0.0;
  double zoom = 2.0 + 1.0 * t, cx = 95 + 50 * t, cy = 88 - 8 * t;
  for (gint y = 0; y < H; y++)
    for (gint x = 0; x < W; x++) {
      double sx = cx + (x + 0.5 - W / 2.0) / zoom - 0.5, sy = cy + (y + 0.5 - H / 2.0) / zoom - 0.5;
      gint x0 = (gint) floor (sx), y0 = (gint) floor (sy);
      double ax = sx - x0, ay = sy - y0;
      for (int c = 0; c < 3; c++) {
        double v = 0;
        for (int k = 0; k < 4; k++) {
          gint px = x0 + (k & 1), py = y0 + (k >> 1);
          double w = ((k & 1) ? ax : 1 - ax) * ((k >> 1) ? ay : 1 - ay);
          gboolean in = px >= 0 && py >= 0 && px < pic->width && py < pic->height;
          v += w * (in ? pic->rgb[((gsize) py * pic->width + px) * 3 + c] : 128);
        }
        rgb[((gsize) y * W + x) * 3 + c] = (guint8) CLAMP (v + 0.5, 0, 255);
      }
    }
}

/* RGB to NV12, BT.601 limited range (chroma from the top-left pixel of
 * each 2x2 block's average). */
static void
rgb_to_nv12 (const guint8 *rgb, guint8 *nv12)
{
  guint8 *uv = nv12 + (gsize) W * H;
  for (gint y = 0; y < H; y++)
    for (gint x = 0; x < W; x++) {
      const guint8 *p = rgb + ((gsize) y * W + x) * 3;
      double Y = 16 + (65.481 * p[0] + 128.553 * p[1] + 24.966 * p[2]) / 255;
      nv12[(gsize) y * W + x] = (guint8) CLAMP (Y + 0.5, 0, 255);
      if (x % 2 || y % 2)
        continue;
      double r = 0, g = 0, b = 0;
      for (int k = 0; k < 4; k++) {
        const guint8 *q = rgb + ((gsize) (y + k / 2) * W + x + k % 2) * 3;
        r += q[0] / 4.0;
        g += q[1] / 4.0;
        b += q[2] / 4.0;
      }
      double U = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255;
      double V = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255;
      uv[(gsize) (y / 2) * W + x] = (guint8) CLAMP (U + 0.5, 0, 255);
      uv[(gsize) (y / 2) * W + x + 1] = (guint8) CLAMP (V + 0.5, 0, 255);
    }
}

/* ---- what comes out ---------------------------------------------------------------- */

typedef struct {
  guint frames, objects, classified;
  gint64 first_us, last_us;
  guint keep;                     /* the frame index kept for the PNG */
  GstBuffer *kept;
  GString *log;                   /* a line per second of video */
} Output;

/* The label of @roi's first classification, or NULL. */
static const char *
classification_of (GstVideoRegionOfInterestMeta *roi, double *conf)
{
  for (GList *l = roi->params; l; l = l->next)
    if (g_str_has_prefix (gst_structure_get_name (l->data), "classification_layer_name:")) {
      gst_structure_get_double (l->data, "confidence", conf);
      return gst_structure_get_string (l->data, "label");
    }
  return NULL;
}

static GstFlowReturn
on_sample (GstAppSink *sink, gpointer data)
{
  Output *o = data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  if (!sample)
    return GST_FLOW_EOS;
  GstBuffer *buf = gst_sample_get_buffer (sample);
  gint64 now = g_get_monotonic_time ();
  guint f = o->frames++;
  if (f == 0)
    o->first_us = now;
  o->last_us = now;
  gpointer state = NULL;
  GstMeta *m;
  if (f % FPS == 0)
    g_string_append_printf (o->log, "  %4.1f s:", (double) f / FPS);
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    double conf = 0;
    const char *label = classification_of (roi, &conf);
    o->objects++;
    o->classified += label != NULL;
    if (f % FPS)
      continue;
    GstStructure *ids = gst_video_region_of_interest_meta_get_param (roi, "object_id");
    gint id = 0;
    gboolean predicted = FALSE;
    if (ids) {
      gst_structure_get_int (ids, "id", &id);
      gst_structure_get_boolean (ids, "predicted", &predicted);
    }
    g_string_append_printf (o->log, "  [id %d %s %ux%u at (%u,%u)%s%s%s]", id,
        g_quark_to_string (roi->roi_type), roi->w, roi->h, roi->x, roi->y,
        predicted ? " predicted" : "", label ? ", " : "", label ? label : "");
  }
  if (f % FPS == 0)
    g_string_append_c (o->log, '\n');
  if (f == o->keep)
    o->kept = gst_buffer_ref (buf);
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

/* Writes the NV12 frame @buf as a PNG. */
static gboolean
write_png (GstBuffer *buf, const char *path, GError **error)
{
  gchar *launch = g_strdup_printf ("appsrc name=src format=time caps=video/x-raw,format=NV12,"
      "width=%d,height=%d,framerate=%d/1 ! videoconvert ! pngenc ! filesink location=\"%s\"", W,
      H, FPS, path);
  GstElement *p = gst_parse_launch (launch, error);
  g_free (launch);
  if (!p)
    return FALSE;
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBuffer *copy = gst_buffer_copy_deep (buf);
  GST_BUFFER_PTS (copy) = 0;
  gst_app_src_push_buffer (GST_APP_SRC (src), copy);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gboolean ok = demo_wait_eos (p, error);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (p);
  return ok;
}

static guint
count_lines (const char *path)
{
  gchar *text = NULL;
  guint n = 0;
  if (g_file_get_contents (path, &text, NULL, NULL))
    for (const char *c = text; *c; c++)
      n += *c == '\n';
  g_free (text);
  return n;
}

int
demo_analytics_run (const char *device)
{
  GError *error = NULL;
  int ret = 1;
  gchar *detector = demo_shared_path ("person-detection-retail-0013/"
      "person-detection-retail-0013.xml");
  if (!g_file_test (detector, G_FILE_TEST_EXISTS)) {
    printf ("m2i analytics demo: SKIPPED — %s is not there (the external models live in "
        "../shared/models/external; set M2I_SHARED_MODELS to their folder)\n", detector);
    g_free (detector);
    return 0;
  }
  gchar *det_labels = demo_source_path ("gst/tools/person-detection-labels.txt");
  gchar *cls = opt_classifier ? g_strdup (opt_classifier)
      : demo_source_path ("models/torso-colour/torso-colour.xml");
  gchar *cls_labels = opt_classifier_labels ? g_strdup (opt_classifier_labels)
      : opt_classifier ? NULL : demo_source_path ("models/torso-colour/labels.txt");
  gchar *photo_path = demo_source_path ("tests/data/ir/astronaut-272x160.ppm");
  gchar *outdir = g_strdup (opt_outdir ? opt_outdir : M2I_DEMO_OUTDIR);
  gchar *avi = g_build_filename (outdir, "analytics.avi", NULL);
  gchar *jsonl = g_build_filename (outdir, "analytics.jsonl", NULL);
  gchar *png = opt_png ? g_strdup (opt_png) : g_build_filename (outdir, "analytics-frame.png",
      NULL);
  gchar *labels_prop = cls_labels ? g_strdup_printf (" labels=%s", cls_labels) : g_strdup ("");
  gchar *dev = device ? g_strdup_printf (" device=%s", device) : g_strdup ("");
  gint n = CLAMP (opt_frames, 2, 10000);
  DemoPicture pic = { 0 };
  Output o = { .keep = (guint) (n * 2 / 3), .log = g_string_new (NULL) };
  gchar *launch = NULL;
  GstElement *pipeline = NULL, *src = NULL;
  if (!demo_read_ppm (photo_path, &pic, &error)
      || g_mkdir_with_parents (outdir, 0755) != 0) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error ? error->message : "cannot make the "
        "output folder");
    goto done;
  }
  launch = g_strdup_printf ("appsrc name=src format=time block=true max-bytes=%d "
      "caps=video/x-raw,format=NV12,width=%d,height=%d,framerate=%d/1 ! "
      "m2iinfer name=detect model=%s labels=%s channel-order=bgr threshold=0.5 "
      "inference-interval=%d post-messages=false%s ! "
      "m2itrack inference-interval=%d ! "
      "m2iinfer name=classify inference-region=roi-list model=%s%s object-class=person "
      "reclassify-interval=%d post-messages=false%s ! "
      "m2imetapublish file-path=%s source=astronaut-pan-zoom ! "
      "m2ioverlay ! tee name=t "
      "t. ! queue ! videoconvert ! jpegenc quality=85 ! avimux ! filesink location=%s "
      "t. ! queue ! appsink name=sink sync=false", 4 * W * H * 3 / 2, W, H, FPS, detector,
      det_labels, DETECT_INTERVAL, dev, DETECT_INTERVAL, cls, labels_prop, RECLASSIFY, dev, jsonl,
      avi);
  pipeline = gst_parse_launch (launch, &error);
  if (!pipeline) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    goto done;
  }
  {
    /* one element a line up to the tee, one branch a line after it */
    gchar *shown = demo_shown_pipeline (strstr (launch, "m2iinfer name=detect"));
    gchar *tee = strstr (shown, " ! m2ioverlay");
    *tee = '\0';
    gchar **steps = g_strsplit (shown, " ! ", -1), **branches = g_strsplit (tee + 3, " t. ! ", -1);
    gchar *head = g_strjoinv (" !\n    ", steps), *tail = g_strjoinv ("\n      t. ! ", branches);
    printf ("m2i analytics demo: %s panned and zoomed into %d NV12 frames of %dx%d at %d "
        "frames/s (%.1f s)\n\npipeline:\n  appsrc (NV12) !\n    %s !\n    %s\n\n",
        photo_path + strlen (photo_path) - strlen ("tests/data/ir/astronaut-272x160.ppm"), n, W,
        H, FPS, (double) n / FPS, head, tail);
    g_free (head);
    g_free (tail);
    g_strfreev (steps);
    g_strfreev (branches);
    g_free (shown);
  }
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstAppSinkCallbacks cb = { .new_sample = on_sample };
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, &o, NULL);
  gst_object_unref (sink);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    demo_wait_eos (pipeline, &error);
    fprintf (stderr, "m2i-infer-demo: cannot start the pipeline: %s\n",
        error ? error->message : "?");
    goto done;
  }
  guint8 *rgb = g_malloc ((gsize) W * H * 3);
  gint64 t0 = g_get_monotonic_time ();
  for (gint f = 0; f < n; f++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, (gsize) W * H * 3 / 2, NULL);
    GstMapInfo map;
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    render (&pic, f, n, rgb);
    rgb_to_nv12 (rgb, map.data);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale (f, GST_SECOND, FPS);
    GST_BUFFER_DURATION (buf) = gst_util_uint64_scale (1, GST_SECOND, FPS);
    if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK)
      break;
  }
  g_free (rgb);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gboolean ok = demo_wait_eos (pipeline, &error);
  gint64 t1 = g_get_monotonic_time ();
  gchar *fused_d = demo_get_fused (pipeline, "detect"), *fused_c = demo_get_fused (pipeline,
      "classify");
  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (!ok) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    g_free (fused_d);
    g_free (fused_c);
    goto done;
  }
  printf ("detector   fused = %s\nclassifier fused = %s\n\nonce a second (id, label, box, "
      "classification):\n%s\n", fused_d, fused_c, o.log->str);
  g_free (fused_d);
  g_free (fused_c);
  double span = (o.last_us - o.first_us) / 1e6;
  printf ("%u frames, %u objects (%u classified) in %.2f s from start to EOS: %.1f frames/s, "
      "%.1f objects/s between the first and the last frame\n", o.frames, o.objects,
      o.classified, (t1 - t0) / 1e6, o.frames > 1 ? (o.frames - 1) / span : 0.0,
      o.frames > 1 ? o.objects * (o.frames - 1.0) / o.frames / span : 0.0);
  guint lines = count_lines (jsonl);
  gchar *files = demo_shown_pipeline (avi), *jfile = demo_shown_pipeline (jsonl);
  printf ("wrote %s (MJPEG in AVI), %s (%u JSON lines)", files, jfile, lines);
  g_free (files);
  g_free (jfile);
  if (o.kept && write_png (o.kept, png, &error)) {
    gchar *pfile = demo_shown_pipeline (png);
    printf (", %s (frame %u)", pfile, o.keep);
    g_free (pfile);
  }
  else if (o.kept)
    fprintf (stderr, "\nm2i-infer-demo: %s", error->message);
  printf ("\n");
  ret = o.frames == (guint) n && lines == (guint) n && o.classified > 0 ? 0 : 1;
  printf ("%s\n", ret == 0 ? "PASS" : "FAIL (frames, JSON lines or classifications missing)");

done:
  if (o.kept)
    gst_buffer_unref (o.kept);
  g_string_free (o.log, TRUE);
  if (src)
    gst_object_unref (src);
  if (pipeline)
    gst_object_unref (pipeline);
  g_clear_error (&error);
  g_free (pic.rgb);
  g_free (launch);
  g_free (detector);
  g_free (det_labels);
  g_free (cls);
  g_free (cls_labels);
  g_free (photo_path);
  g_free (outdir);
  g_free (avi);
  g_free (jsonl);
  g_free (png);
  g_free (labels_prop);
  g_free (dev);
  return ret;
}
