/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-infer-demo — the README's demo: m2iinfer in a real pipeline.
 *
 *   m2i-infer-demo [fashion-mnist] [-n COUNT] [--no-fusion] [--device DEV]
 *
 * turns the 10,000 Fashion-MNIST test images (Debian's dataset-fashion-mnist,
 * /usr/share/datasets/fashion-mnist, or $M2I_FASHION_MNIST_DIR) into an NV12
 * stream — each 28x28 grey image drawn 4x larger (112x112, nearest), Y =
 * round(16 + p*219/255) (BT.601 limited range), U = V = 128 — and runs
 *
 *   appsrc ! m2icolorconvert ! m2iresize ! m2inorm mean=0.286 std=0.353
 *     input-scale=1/255 ! m2iinfer model=models/fashion-mnist/fashion-mnist.xml
 *     labels=models/fashion-mnist/labels.txt ! appsink
 *
 * (the three m2i elements and m2iinfer fuse into one M2I plan writing the
 * model's input). It reads each frame's class from its region-of-interest
 * meta, prints the pipeline, a per-class summary next to torch's own
 * predictions (tests/data/fashion-mnist/t10k.torch-pred.u8), the accuracy
 * against the model's test accuracy (92.25 %), and frames per second. Exit
 * status 1 when the accuracy is more than 0.5 % away from the model's.
 *
 *   m2i-infer-demo person [--image FILE.ppm] [--model XML] [-o OUT.ppm]
 *
 * runs person-detection-retail-0013 (from ../shared/models/external, or
 * $M2I_SHARED_MODELS) on a photo (default tests/data/ir/astronaut-272x160.ppm)
 * through videoconvert (to NV12) ! m2icolorconvert ! m2iresize ! m2iinfer,
 * prints the boxes and draws them into a PPM.
 *
 *   m2i-infer-demo analytics [--frames N] [--classifier XML] [--png FILE]
 *
 * the test photo panned and zoomed into video through detector ! m2itrack
 * ! m2iinfer inference-region=roi-list ! m2imetapublish ! m2ioverlay into
 * an AVI, JSON lines and a PNG (demo-analytics.c).
 */
#include "demo-analytics.h"
#include "demo-util.h"
#include "m2i-data.h"

#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/gstvideometa.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M2I_GST_PLUGIN_DIR
#define M2I_GST_PLUGIN_DIR "build/gst"
#endif
#ifndef M2I_DEMO_OUTDIR
#define M2I_DEMO_OUTDIR "."
#endif

#define SIDE 28
#define N_CLASSES 10
#define MODEL_ACCURACY 92.25     /* models/fashion-mnist/README.md (torch) */
#define LIMIT 0.5

static gint opt_count = 10000;
static gint opt_scale = 4;
static gboolean opt_no_fusion;
static gchar *opt_device;
static gchar *opt_image;
static gchar *opt_model;
static gchar *opt_out;
static gdouble opt_threshold = 0.5;

static GOptionEntry entries[] = {
  { "count", 'n', 0, G_OPTION_ARG_INT, &opt_count, "fashion-mnist: images to run (default all 10000)", "N" },
  { "scale", 's', 0, G_OPTION_ARG_INT, &opt_scale, "fashion-mnist: draw each image S times larger (default 4: 112x112)", "S" },
  { "no-fusion", 0, 0, G_OPTION_ARG_NONE, &opt_no_fusion, "fashion-mnist: fusion=false on every m2i element", NULL },
  { "device", 'd', 0, G_OPTION_ARG_STRING, &opt_device, "m2iinfer device (default AUTO)", "DEV" },
  { "image", 'i', 0, G_OPTION_ARG_FILENAME, &opt_image, "person: the photo (binary PPM)", "FILE" },
  { "model", 'm', 0, G_OPTION_ARG_FILENAME, &opt_model, "the model .xml", "XML" },
  { "out", 'o', 0, G_OPTION_ARG_FILENAME, &opt_out, "person: where to write the photo with boxes", "FILE" },
  { "threshold", 't', 0, G_OPTION_ARG_DOUBLE, &opt_threshold, "person: smallest confidence (default 0.5)", "P" },
  { NULL }
};

/* ---- data ------------------------------------------------------------------ */

/* The samples of the (gzipped) idx file @path of @n_dims dimensions. */
static GBytes *
read_idx (const char *path, guint n_dims, GError **error)
{
  guint32 dims[3];
  GBytes *file = m2i_data_read (path, error);
  if (!file)
    return NULL;
  GBytes *samples = m2i_data_idx_samples (file, n_dims, dims, path, error);
  g_bytes_unref (file);
  return samples;
}

/* ---- fashion-mnist ------------------------------------------------------------- */

typedef struct {
  guint8 *pred;                /* per image: class read from the ROI meta, 255 = none */
  guint received;
  gint64 first_us, last_us;
} Results;

static GstFlowReturn
on_sample (GstAppSink *sink, gpointer data)
{
  Results *r = data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  if (!sample)
    return GST_FLOW_EOS;
  GstBuffer *buf = gst_sample_get_buffer (sample);
  gint64 now = g_get_monotonic_time ();
  if (r->received++ == 0)
    r->first_us = now;
  r->last_us = now;
  guint64 index = GST_BUFFER_OFFSET (buf);
  gpointer state = NULL;
  GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)
      gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  /* The classification structure on the full-frame region, DL Streamer's
   * convention: "classification_layer_name:prob" with label_id. */
  for (GList *l = roi ? roi->params : NULL; l; l = l->next) {
    gint id;
    if (g_str_has_prefix (gst_structure_get_name (l->data), "classification_layer_name:")
        && gst_structure_get_int (l->data, "label_id", &id) && index < (guint64) opt_count)
      r->pred[index] = (guint8) id;
  }
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

static int
run_fashion_mnist (void)
{
  GError *error = NULL;
  const char *dir = g_getenv ("M2I_FASHION_MNIST_DIR");
  if (!dir)
    dir = "/usr/share/datasets/fashion-mnist";
  gchar *img_path = g_build_filename (dir, "t10k-images-idx3-ubyte.gz", NULL);
  gchar *lbl_path = g_build_filename (dir, "t10k-labels-idx1-ubyte.gz", NULL);
  gchar *torch_path = demo_source_path ("tests/data/fashion-mnist/t10k.torch-pred.u8");
  gchar *model = opt_model ? g_strdup (opt_model) : demo_source_path ("models/fashion-mnist/fashion-mnist.xml");
  gchar *labels_path = demo_source_path ("models/fashion-mnist/labels.txt");
  GBytes *images = read_idx (img_path, 3, &error);
  GBytes *labels = images ? read_idx (lbl_path, 1, &error) : NULL;
  GBytes *torch = labels ? m2i_data_read (torch_path, &error) : NULL;
  gchar **names = NULL;
  gchar *text = NULL;
  if (torch && g_file_get_contents (labels_path, &text, NULL, &error))
    names = g_strsplit (text, "\n", -1);
  g_free (text);
  if (!names) {
    fprintf (stderr, "m2i-infer-demo: %s\n(install Debian's dataset-fashion-mnist, or set "
        "M2I_FASHION_MNIST_DIR)\n", error->message);
    return 2;
  }
  gsize n_img = g_bytes_get_size (images) / (SIDE * SIDE);
  if (opt_count <= 0 || (gsize) opt_count > n_img)
    opt_count = (gint) n_img;
  if (opt_scale < 1 || opt_scale > 64)
    opt_scale = 4;
  const guint8 *pix = g_bytes_get_data (images, NULL);
  const guint8 *truth = g_bytes_get_data (labels, NULL);
  const guint8 *tpred = g_bytes_get_data (torch, NULL);
  gint w = SIDE * opt_scale;

  const char *nf = opt_no_fusion ? " fusion=false" : "";
  gchar *launch = g_strdup_printf ("appsrc name=src format=time is-live=false block=true "
      "max-bytes=%d caps=video/x-raw,format=NV12,width=%d,height=%d,framerate=1000/1 ! "
      "m2icolorconvert%s ! m2iresize%s ! "
      "m2inorm mean=\"<0.286>\" std=\"<0.353>\" input-scale=0.00392156862745098%s ! "
      "m2iinfer name=infer model=%s labels=%s post-messages=false%s%s%s ! "
      "appsink name=sink sync=false max-buffers=8", 8 * w * w * 3 / 2, w, w, nf, nf, nf, model,
      labels_path, nf, opt_device ? " device=" : "", opt_device ? opt_device : "");
  GstElement *pipeline = gst_parse_launch (launch, &error);
  if (!pipeline) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    return 2;
  }
  printf ("m2i demo: the %d Fashion-MNIST test images as an NV12 stream (%dx%d, each 28x28 "
      "image drawn %dx larger)\n\n", opt_count, w, w, opt_scale);
  {
    gchar *shown = demo_shown_pipeline (launch);
    gchar *p = strstr (shown, " ! m2icolorconvert");
    printf ("pipeline:\n  appsrc (NV12 %dx%d)%s\n\n", w, w, p ? p : shown);
    g_free (shown);
  }

  Results r = { g_malloc (opt_count), 0, 0, 0 };
  memset (r.pred, 255, opt_count);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstAppSinkCallbacks cb = { .new_sample = on_sample };
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, &r, NULL);
  gst_object_unref (sink);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");

  gint64 t0 = g_get_monotonic_time ();
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    demo_wait_eos (pipeline, &error);
    fprintf (stderr, "m2i-infer-demo: cannot start the pipeline: %s\n",
        error ? error->message : "?");
    return 2;
  }
  /* Frames come from a pool: the source allocates nothing per frame either. */
  gsize frame_size = (gsize) w * w * 3 / 2;
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, NULL, (guint) frame_size, 4, 0);
  gst_buffer_pool_set_config (pool, config);
  gst_buffer_pool_set_active (pool, TRUE);
  for (gint i = 0; i < opt_count; i++) {
    GstBuffer *buf;
    if (gst_buffer_pool_acquire_buffer (pool, &buf, NULL) != GST_FLOW_OK)
      break;
    GstMapInfo map;
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    m2i_data_grey_to_nv12 (pix + (gsize) i * SIDE * SIDE, SIDE, opt_scale, map.data);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = (GstClockTime) i * GST_MSECOND;
    GST_BUFFER_DURATION (buf) = GST_MSECOND;
    GST_BUFFER_OFFSET (buf) = (guint64) i;
    if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK)
      break;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gboolean ok = demo_wait_eos (pipeline, &error);
  gint64 t1 = g_get_monotonic_time ();
  gchar *fused = demo_get_fused (pipeline, "infer");
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  if (!ok) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    return 2;
  }
  printf ("m2iinfer fused = %s\n\n", fused);
  g_free (fused);

  guint total[N_CLASSES] = { 0 }, right[N_CLASSES] = { 0 }, torch_right[N_CLASSES] = { 0 };
  guint correct = 0, torch_correct = 0, agree = 0, missing = 0;
  for (gint i = 0; i < opt_count; i++) {
    guint t = truth[i] < N_CLASSES ? truth[i] : 0;
    total[t]++;
    right[t] += r.pred[i] == truth[i];
    torch_right[t] += tpred[i] == truth[i];
    correct += r.pred[i] == truth[i];
    torch_correct += tpred[i] == truth[i];
    agree += r.pred[i] == tpred[i];
    missing += r.pred[i] == 255;
  }
  printf ("%-12s %7s %8s %9s %9s\n", "class", "images", "correct", "m2i", "torch");
  for (int c = 0; c < N_CLASSES; c++)
    printf ("%-12s %7u %8u %8.1f%% %8.1f%%\n", names[c] ? names[c] : "?", total[c], right[c],
        total[c] ? 100.0 * right[c] / total[c] : 0.0,
        total[c] ? 100.0 * torch_right[c] / total[c] : 0.0);
  double acc = 100.0 * correct / opt_count, tacc = 100.0 * torch_correct / opt_count;
  printf ("%-12s %7d %8u %8.2f%% %8.2f%%\n\n", "all", opt_count, correct, acc, tacc);
  printf ("accuracy %.2f %% (%u/%d); the model's own test accuracy (torch, all 10000 images) "
      "%.2f %%: difference %+.2f %% (limit %.1f %%)\n", acc, correct, opt_count, MODEL_ACCURACY,
      acc - MODEL_ACCURACY, LIMIT);
  printf ("same class as torch on %u of %d images (%.2f %%)%s\n", agree, opt_count,
      100.0 * agree / opt_count, missing ? "; some frames had no result!" : "");
  double span = (r.last_us - r.first_us) / 1e6;
  printf ("%u frames in %.2f s from start to EOS; %.0f frames/s between the first and the last "
      "result\n", r.received, (t1 - t0) / 1e6, r.received > 1 ? (r.received - 1) / span : 0.0);
  gboolean pass = missing == 0 && (opt_count < (gint) n_img || fabs (acc - MODEL_ACCURACY) <= LIMIT);
  printf ("%s\n", pass ? "PASS" : "FAIL");
  g_free (r.pred);
  g_strfreev (names);
  g_bytes_unref (images);
  g_bytes_unref (labels);
  g_bytes_unref (torch);
  g_free (launch);
  g_free (img_path);
  g_free (lbl_path);
  g_free (torch_path);
  g_free (model);
  g_free (labels_path);
  return pass ? 0 : 1;
}

/* ---- person detection ------------------------------------------------------------- */

static void
draw_box (DemoPicture *pic, guint x, guint y, guint w, guint h)
{
  static const guint8 colour[3] = { 255, 32, 32 };
  for (guint t = 0; t < 2; t++) {
    for (guint i = x; i < x + w && i < (guint) pic->width; i++)
      for (guint e = 0; e < 2; e++) {
        guint yy = e ? y + h - 1 - t : y + t;
        if (yy < (guint) pic->height)
          memcpy (pic->rgb + ((gsize) yy * pic->width + i) * 3, colour, 3);
      }
    for (guint j = y; j < y + h && j < (guint) pic->height; j++)
      for (guint e = 0; e < 2; e++) {
        guint xx = e ? x + w - 1 - t : x + t;
        if (xx < (guint) pic->width)
          memcpy (pic->rgb + ((gsize) j * pic->width + xx) * 3, colour, 3);
      }
  }
}

static int
run_person (void)
{
  GError *error = NULL;
  gchar *model = opt_model ? g_strdup (opt_model)
      : demo_shared_path ("person-detection-retail-0013/person-detection-retail-0013.xml");
  gchar *image = opt_image ? g_strdup (opt_image) : demo_source_path ("tests/data/ir/astronaut-272x160.ppm");
  gchar *labels = demo_source_path ("gst/tools/person-detection-labels.txt");
  gchar *out = opt_out ? g_strdup (opt_out) : g_build_filename (M2I_DEMO_OUTDIR,
      "person-boxes.ppm", NULL);
  DemoPicture pic;
  if (!g_file_test (model, G_FILE_TEST_EXISTS)) {
    fprintf (stderr, "m2i-infer-demo: %s not found (the external models live in "
        "../shared/models/external; set M2I_SHARED_MODELS or --model)\n", model);
    return 2;
  }
  if (!demo_read_ppm (image, &pic, &error)) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    return 2;
  }
  gchar *launch = g_strdup_printf ("appsrc name=src format=time caps=video/x-raw,format=RGB,"
      "width=%d,height=%d,framerate=1/1 ! videoconvert ! video/x-raw,format=NV12 ! "
      "m2icolorconvert channel-order=bgr ! m2iresize ! m2iinfer name=infer model=%s "
      "labels=%s channel-order=bgr threshold=%g%s%s ! appsink name=sink sync=false",
      pic.width, pic.height, model, labels, opt_threshold, opt_device ? " device=" : "",
      opt_device ? opt_device : "");
  GstElement *pipeline = gst_parse_launch (launch, &error);
  if (!pipeline) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    return 2;
  }
  gchar *shown = demo_shown_pipeline (strstr (launch, "videoconvert"));
  printf ("m2i demo: person detection on %s (%dx%d)\n\npipeline:\n  appsrc (RGB) ! %s\n\n",
      image, pic.width, pic.height, shown);
  g_free (shown);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  gsize size = (gsize) pic.width * pic.height * 3;
  GstBuffer *buf = gst_buffer_new_memdup (pic.rgb, size);
  GST_BUFFER_PTS (buf) = 0;
  gst_app_src_push_buffer (GST_APP_SRC (src), buf);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  GstSample *sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
  gboolean ok = sample != NULL && demo_wait_eos (pipeline, &error);
  gchar *fused = demo_get_fused (pipeline, "infer");
  guint n = 0;
  if (sample) {
    printf ("m2iinfer fused = %s\n\n", fused);
    GstBuffer *res = gst_sample_get_buffer (sample);
    gpointer state = NULL;
    GstMeta *m;
    printf ("detections (confidence >= %.2f), pixels of the %dx%d photo:\n", opt_threshold,
        pic.width, pic.height);
    while ((m = gst_buffer_iterate_meta_filtered (res, &state,
                GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
      GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
      GstStructure *det = gst_video_region_of_interest_meta_get_param (roi, "detection");
      gdouble conf = 0;
      if (det)
        gst_structure_get_double (det, "confidence", &conf);
      printf ("  %-8s %.3f  x=%u y=%u w=%u h=%u\n", g_quark_to_string (roi->roi_type), conf,
          roi->x, roi->y, roi->w, roi->h);
      draw_box (&pic, roi->x, roi->y, roi->w, roi->h);
      n++;
    }
    gst_sample_unref (sample);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  if (!ok) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error ? error->message : "no output");
    return 2;
  }
  GString *ppm = g_string_new (NULL);
  g_string_printf (ppm, "P6\n%d %d\n255\n", pic.width, pic.height);
  g_string_append_len (ppm, (const char *) pic.rgb, (gssize) size);
  if (g_file_set_contents (out, ppm->str, (gssize) ppm->len, &error))
    printf ("\n%u box%s drawn into %s\n", n, n == 1 ? "" : "es", out);
  else
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
  g_string_free (ppm, TRUE);
  g_free (pic.rgb);
  g_free (fused);
  g_free (launch);
  g_free (model);
  g_free (image);
  g_free (labels);
  g_free (out);
  return n > 0 ? 0 : 1;
}

int
main (int argc, char **argv)
{
  /* The plugin of this build tree, unless the user points elsewhere. */
  if (!g_getenv ("GST_PLUGIN_PATH"))
    g_setenv ("GST_PLUGIN_PATH", M2I_GST_PLUGIN_DIR, TRUE);
  GOptionContext *octx = g_option_context_new ("[fashion-mnist | person | analytics]");
  g_option_context_set_summary (octx, "The m2iinfer demo: Fashion-MNIST classification of "
      "the 10,000 test images through m2icolorconvert ! m2iresize ! m2inorm ! m2iinfer "
      "(default), person detection on a photo, or a whole analytics pipeline (detect, track, "
      "classify each person, draw, publish) on video made from it.");
  g_option_context_add_main_entries (octx, entries, NULL);
  g_option_context_add_main_entries (octx, demo_analytics_entries, NULL);
  g_option_context_add_group (octx, gst_init_get_option_group ());
  GError *error = NULL;
  if (!g_option_context_parse (octx, &argc, &argv, &error)) {
    fprintf (stderr, "m2i-infer-demo: %s\n", error->message);
    return 2;
  }
  g_option_context_free (octx);
  const char *what = argc > 1 ? argv[1] : "fashion-mnist";
  int ret;
  if (!strcmp (what, "fashion-mnist"))
    ret = run_fashion_mnist ();
  else if (!strcmp (what, "person"))
    ret = run_person ();
  else if (!strcmp (what, "analytics"))
    ret = demo_analytics_run (opt_device);
  else {
    fprintf (stderr, "m2i-infer-demo: unknown demo \"%s\" (fashion-mnist, person or "
        "analytics)\n", what);
    ret = 2;
  }
  gst_deinit ();
  return ret;
}
