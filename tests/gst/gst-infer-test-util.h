/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gst-infer-test-util.h — what the m2iinfer tests share: data paths, the
 * IR runtime run directly (the independent reference for the model's
 * outputs), the reference path's model input, reading tensor and region
 * metas, harnesses. */
#pragma once

#include "gst-test-util.h"
#include "gstm2itensormeta.h"
#include "../infer/infer-reference.h"

#include <m2i-core/base/m2i-error.h>
#include <gst/video/gstvideometa.h>
#include <m2i-core/ir/m2i-ir.h>
#include <m2i-core/split/m2i-split.h>
#include <glib/gstdio.h>

#define FM_SIDE 28
#define FM_SCALE 4
#define FM_W (FM_SIDE * FM_SCALE)
#define FM_NORM "mean=\"<0.286>\" std=\"<0.353>\" input-scale=0.00392156862745098"
#define NV12_CAPS "video/x-raw,format=NV12,width=112,height=112,framerate=30/1"
#define F32_28_CAPS "other/tensors,format=static,num_tensors=1,types=float32," \
  "dimensions=28:28:3:1,framerate=30/1"

static inline gchar *
fm_model (void)
{
  return test_models_path ("fashion-mnist/fashion-mnist.xml");
}

static inline gchar *
fm_labels (void)
{
  return test_models_path ("fashion-mnist/labels.txt");
}

/* The model input the element must have fed for an NV12 frame @in: the
 * reference path's planar fp16 result of @ops, widened to f32, planes in
 * channel order @swap ? BGR : as computed. */
static inline void
reference_input (const TestImage *in, const M2iOpList *ops, gint w, gint h, gboolean swap,
    float *dst)
{
  TestImage ref;
  test_reference (in, ops, M2I_FORMAT_PL_FP16_RGB, w, h, &ref);
  gsize plane = (gsize) w * h;
  for (int c = 0; c < 3; c++)
    m2i_f16_to_f32_n ((const m2i_f16 *) ref.img.data[swap ? 2 - c : c], dst + c * plane, plane);
  test_image_free (&ref);
}

static inline const GstM2iTensor *
output_tensor (GstBuffer *buf, const char *name)
{
  GstM2iTensorMeta *m = gst_buffer_get_m2i_tensor_meta (buf);
  fail_unless (m != NULL, "no tensor meta");
  const GstM2iTensor *t = gst_m2i_tensor_meta_find (m, name);
  fail_unless (t != NULL, "no tensor \"%s\"", name);
  return t;
}

static inline guint
argmax (const float *v, guint n)
{
  guint best = 0;
  for (guint i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

/* Checks the full-frame classification region of @buf: @w x @h, label
 * @label, label_id @id, confidence @conf (exact: a float widened). */
static inline void
check_classification (GstBuffer *buf, gint w, gint h, const char *label, gint id, float conf)
{
  fail_unless_equals_int (n_rois (buf), 1);
  GstVideoRegionOfInterestMeta *roi = nth_roi (buf, 0);
  fail_unless_equals_int (roi->x, 0);
  fail_unless_equals_int (roi->y, 0);
  fail_unless_equals_int (roi->w, w);
  fail_unless_equals_int (roi->h, h);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), label);
  fail_unless_equals_int (g_list_length (roi->params), 1);
  GstStructure *s = roi->params->data;
  fail_unless (g_str_has_prefix (gst_structure_get_name (s), "classification_layer_name:"),
      "%s", gst_structure_get_name (s));
  gint got_id;
  gdouble got_conf;
  fail_unless (gst_structure_get_int (s, "label_id", &got_id));
  fail_unless (gst_structure_get_double (s, "confidence", &got_conf));
  fail_unless_equals_int (got_id, id);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), label);
  fail_unless (got_conf == (double) conf, "confidence %.9g, want %.9g", got_conf, conf);
  fail_unless (gst_structure_get_string (s, "model_name") != NULL);
  fail_unless (gst_structure_get_string (s, "layer_name") != NULL);
}

static inline GstHarness *
harness (const char *launch, const char *src_caps)
{
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, src_caps);
  return h;
}

/* harness() with a test bus on the element before its caps are set, so the
 * refusal of those caps lands there (the element posts each refusal once). */
static inline GstHarness *
harness_with_bus (const char *launch, const char *src_caps, GstBus **bus)
{
  GstHarness *h = gst_harness_new_parse (launch);
  *bus = test_harness_bus (h);
  gst_harness_set_src_caps_str (h, src_caps);
  return h;
}

/* Tears down @h and its test bus: the queued messages (which hold the
 * element) are dropped first, or element and bus would keep each other. */
static inline void
teardown_with_bus (GstHarness *h, GstBus *bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

static inline void
remove_dir (gchar *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name (d))) {
    gchar *p = g_build_filename (dir, n, NULL);
    g_unlink (p);
    g_free (p);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
  g_free (dir);
}

static inline void
assert_contains (const char *text, const char *needle)
{
  fail_unless (strstr (text, needle) != NULL, "\"%s\" lacks \"%s\"", text, needle);
}

/* The file @relative under M2I_SHARED_MODELS (a reference output, ...);
 * fails the test when it cannot be read. */
static inline GBytes *
test_read_shared (const char *relative)
{
  gchar *path = test_shared_path (relative), *data = NULL;
  gsize len = 0;
  GError *err = NULL;
  fail_unless (path && g_file_get_contents (path, &data, &len, &err), "%s: %s", relative,
      err ? err->message : "no M2I_SHARED_MODELS");
  g_free (path);
  return g_bytes_new_take (data, len);
}

/* A "detection" structure's corners (normalised) in pixels of a @w x @h
 * frame. */
static inline void
gst_m2i_test_box (const GstStructure *det, gint w, gint h, double box[4])
{
  double x0, y0, x1, y1;
  fail_unless (gst_structure_get_double (det, "x_min", &x0)
      && gst_structure_get_double (det, "y_min", &y0)
      && gst_structure_get_double (det, "x_max", &x1)
      && gst_structure_get_double (det, "y_max", &y1));
  box[0] = x0 * w;
  box[1] = y0 * h;
  box[2] = x1 * w;
  box[3] = y1 * h;
}
