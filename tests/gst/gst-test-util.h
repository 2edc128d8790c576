/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gst-test-util.h — helpers of the m2i element tests: tight test images,
 * packing them into buffers the way GStreamer lays frames out (or with
 * padded strides and a GstVideoMeta), unpacking element output through
 * GStreamer's own GstVideoFrame, caps strings and comparisons.
 *
 * Expected values always come from the core's reference path
 * (m2i_reference_run, plain C one op at a time) or from arithmetic written
 * here, never from the elements.
 */
#pragma once

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <m2i-core/m2i/m2i.h>
#include <test-image.h>
#include <test-support.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Deterministic pseudo-random samples: bytes for u8 images, integral values
 * 0..255 for float images (what a csc or u8 source would give). */
static inline void
test_image_fill (TestImage *t, guint32 seed)
{
  guint32 x = seed * 2654435761u + 1;
  M2iDataType dt = m2i_format_dtype (t->img.format);
  gsize n = t->size / m2i_format_bytes_per_sample (t->img.format);
  for (gsize i = 0; i < n; i++) {
    guint8 v = (guint8) (test_xorshift32 (&x) >> 24);
    if (dt == M2I_DTYPE_U8)
      t->mem[i] = v;
    else if (dt == M2I_DTYPE_F16)
      ((m2i_f16 *) t->mem)[i] = m2i_f32_to_f16 ((float) v);
    else
      ((float *) t->mem)[i] = (float) v;
  }
}

static inline GstVideoFormat
test_video_format (M2iFormat f)
{
  switch (f) {
    case M2I_FORMAT_SP_NV12_8: return GST_VIDEO_FORMAT_NV12;
    case M2I_FORMAT_PL_YUV420_8: return GST_VIDEO_FORMAT_I420;
    case M2I_FORMAT_IL_RGB888: return GST_VIDEO_FORMAT_RGB;
    case M2I_FORMAT_IL_BGR888: return GST_VIDEO_FORMAT_BGR;
    case M2I_FORMAT_PL_RGB24: return GST_VIDEO_FORMAT_RGBP;
    case M2I_FORMAT_PL_BGR24: return GST_VIDEO_FORMAT_BGRP;
    default: return GST_VIDEO_FORMAT_UNKNOWN;
  }
}

/* Caps string for a frame of @f: video/x-raw for u8 formats, NNStreamer
 * tensors (planar "W:H:3:1", interleaved "3:W:H:1") for float ones. */
static inline gchar *
test_caps_string (M2iFormat f, gint w, gint h)
{
  GstVideoFormat vf = test_video_format (f);
  if (vf != GST_VIDEO_FORMAT_UNKNOWN)
    return g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
        gst_video_format_to_string (vf), w, h);
  gboolean planar = m2i_format_layout (f) == M2I_LAYOUT_PLANAR;
  const char *type = m2i_format_dtype (f) == M2I_DTYPE_F16 ? "float16" : "float32";
  if (planar)
    return g_strdup_printf ("other/tensors,format=static,num_tensors=1,types=%s,"
        "dimensions=%d:%d:3:1,framerate=30/1", type, w, h);
  return g_strdup_printf ("other/tensors,format=static,num_tensors=1,types=%s,"
      "dimensions=3:%d:%d:1,framerate=30/1", type, w, h);
}

static inline GstCaps *
test_caps (M2iFormat f, gint w, gint h)
{
  gchar *s = test_caps_string (f, w, h);
  GstCaps *c = gst_caps_from_string (s);
  g_free (s);
  return c;
}

/* Packs @t into a new buffer: GStreamer's default layout for the caps, or,
 * when @pad is not 0, every plane row @pad bytes longer, planes 64 bytes
 * apart, described by a GstVideoMeta. Tensors are tight. */
static inline GstBuffer *
test_image_to_buffer (const TestImage *t, gsize pad)
{
  const M2iImage *im = &t->img;
  GstVideoFormat vf = test_video_format (im->format);
  if (vf == GST_VIDEO_FORMAT_UNKNOWN)
    return gst_buffer_new_memdup (t->mem, t->size);
  GstVideoInfo info;
  gst_video_info_set_format (&info, vf, im->width, im->height);
  guint n = GST_VIDEO_INFO_N_PLANES (&info);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
  gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
  gsize total = 0;
  for (guint p = 0; p < n; p++) {
    gsize row;
    gint rows;
    fail_unless (m2i_format_plane_geometry (im->format, im->width, im->height, p, &row, &rows));
    if (pad) {
      stride[p] = (gint) (row + pad);
      offset[p] = total;
      total += (gsize) stride[p] * rows + 64;
    } else {
      stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p);
      offset[p] = GST_VIDEO_INFO_PLANE_OFFSET (&info, p);
      total = GST_VIDEO_INFO_SIZE (&info);
    }
  }
  GstBuffer *buf = gst_buffer_new_allocate (NULL, total, NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  memset (map.data, 0xA5, map.size);      /* padding is garbage, never read */
  for (guint p = 0; p < n; p++) {
    gsize row;
    gint rows;
    m2i_format_plane_geometry (im->format, im->width, im->height, p, &row, &rows);
    for (gint y = 0; y < rows; y++)
      memcpy (map.data + offset[p] + (gsize) y * stride[p], im->data[p] + (gsize) y * im->stride[p], row);
  }
  gst_buffer_unmap (buf, &map);
  if (pad)
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, vf, im->width, im->height,
        n, offset, stride);
  return buf;
}

/* Unpacks a buffer of caps @caps holding a frame of format @f into the
 * tight image @t (allocated here), through GstVideoFrame for video (so the
 * buffer's GstVideoMeta is honoured) or as a tight tensor. */
static inline void
test_image_from_buffer (TestImage *t, GstBuffer *buf, GstCaps *caps, M2iFormat f)
{
  GstVideoInfo info;
  GstStructure *s = gst_caps_get_structure (caps, 0);
  if (gst_structure_has_name (s, "other/tensors")) {
    const char *dims = gst_structure_get_string (s, "dimensions");
    gint d0, d1, d2;
    fail_unless (dims && sscanf (dims, "%d:%d:%d", &d0, &d1, &d2) == 3);
    gboolean planar = m2i_format_layout (f) == M2I_LAYOUT_PLANAR;
    test_image_alloc (t, f, planar ? d0 : d1, planar ? d1 : d2);
    fail_unless_equals_uint64 (gst_buffer_get_size (buf), t->size);
    gst_buffer_extract (buf, 0, t->mem, t->size);
    return;
  }
  fail_unless (gst_video_info_from_caps (&info, caps));
  test_image_alloc (t, f, GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info));
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    gsize row;
    gint rows;
    m2i_format_plane_geometry (f, t->img.width, t->img.height, p, &row, &rows);
    const guint8 *src = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    for (gint y = 0; y < rows; y++)
      memcpy (t->img.data[p] + (gsize) y * t->img.stride[p], src + (gsize) y * stride, row);
  }
  gst_video_frame_unmap (&frame);
}

/* Runs the core's reference path: @ops on @in into a new tight @out. */
static inline void
test_reference (const TestImage *in, const M2iOpList *ops, M2iFormat f, gint w, gint h,
    TestImage *out)
{
  GError *err = NULL;
  test_image_alloc (out, f, w, h);
  if (!m2i_reference_run (&in->img, ops, &out->img, &err))
    fail ("reference run failed: %s", err->message);
}

static inline float
test_sample (const TestImage *t, gint x, gint y, int c)
{
  const M2iImage *im = &t->img;
  gsize bps = m2i_format_bytes_per_sample (im->format);
  const guint8 *p = m2i_format_layout (im->format) == M2I_LAYOUT_PLANAR
      ? im->data[c] + (gsize) y * im->stride[c] + (gsize) x * bps
      : im->data[0] + (gsize) y * im->stride[0] + ((gsize) x * 3 + c) * bps;
  switch (m2i_format_dtype (im->format)) {
    case M2I_DTYPE_U8: return *p;
    case M2I_DTYPE_F16: return m2i_f16_to_f32 (*(const m2i_f16 *) p);
    default: return *(const float *) p;
  }
}

/* Byte-for-byte equality; the first difference is reported. */
static inline void
test_assert_identical (const TestImage *a, const TestImage *b, const char *what)
{
  fail_unless (a->img.format == b->img.format && a->img.width == b->img.width
      && a->img.height == b->img.height, "%s: %s %dx%d vs %s %dx%d", what,
      m2i_format_to_string (a->img.format), a->img.width, a->img.height,
      m2i_format_to_string (b->img.format), b->img.width, b->img.height);
  for (gsize i = 0; i < a->size; i++)
    if (a->mem[i] != b->mem[i])
      fail ("%s: byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " differs: %u vs %u", what, i,
          a->size, a->mem[i], b->mem[i]);
}

/* One fp16 unit in the last place at @v. */
static inline float
test_f16_ulp (float v)
{
  int e;
  frexpf (fabsf (v), &e);
  return e - 11 < -24 ? ldexpf (1.0f, -24) : ldexpf (1.0f, e - 11);
}

/* Every sample within @tol_ulps fp16 ulps (fp16) or the relative @tol_rel
 * (fp32); u8 exact. */
static inline void
test_assert_close (const TestImage *a, const TestImage *b, float tol_ulps, const char *what)
{
  fail_unless (a->img.format == b->img.format && a->img.width == b->img.width
      && a->img.height == b->img.height, "%s: geometry differs", what);
  M2iDataType dt = m2i_format_dtype (a->img.format);
  for (gint y = 0; y < a->img.height; y++)
    for (gint x = 0; x < a->img.width; x++)
      for (int c = 0; c < 3; c++) {
        float u = test_sample (a, x, y, c), v = test_sample (b, x, y, c);
        float tol = dt == M2I_DTYPE_U8 ? 0.0f : dt == M2I_DTYPE_F16
            ? tol_ulps * test_f16_ulp (v) : 1e-5f * fabsf (v) + 1e-6f;
        if (fabsf (u - v) > tol)
          fail ("%s: (%d,%d) channel %d: %g vs %g", what, x, y, c, u, v);
      }
}

/* A bus on @h's element, to read error messages from. */
static inline GstBus *
test_harness_bus (GstHarness *h)
{
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  return bus;
}

/* The text and debug details of the first error on @bus ("" if none). */
static inline gchar *
test_bus_error (GstBus *bus)
{
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  if (!m)
    return g_strdup ("");
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error (m, &err, &dbg);
  gchar *s = g_strdup_printf ("%s | %s", err->message, dbg ? dbg : "");
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (m);
  return s;
}

/* Plays @launch, whose element named @name refuses its caps, until the
 * source gives up (one error of its own) and half a second more; returns
 * how many errors @name posted, each checked to say @needle. A source
 * retries refused caps at every reconfiguration: the element should say
 * why once, not once per retry. */
static inline gint
test_pipeline_refusals (const char *launch, const char *name, const char *needle)
{
  GError *perr = NULL;
  GstElement *p = gst_parse_launch (launch, &perr);
  fail_unless (p != NULL, "%s", perr ? perr->message : "");
  GstElement *el = gst_bin_get_by_name (GST_BIN (p), name);
  GstBus *bus = gst_element_get_bus (p);
  gst_element_set_state (p, GST_STATE_PLAYING);
  gint from_element = 0, from_others = 0;
  GstMessage *m;
  while ((m = gst_bus_timed_pop_filtered (bus, from_others ? GST_SECOND / 2 : 10 * GST_SECOND,
              GST_MESSAGE_ERROR))) {
    if (GST_MESSAGE_SRC (m) == GST_OBJECT (el)) {
      GError *err = NULL;
      gst_message_parse_error (m, &err, NULL);
      fail_unless (strstr (err->message, needle) != NULL, "\"%s\" does not say \"%s\"",
          err->message, needle);
      g_error_free (err);
      from_element++;
    } else {
      from_others++;
    }
    gst_message_unref (m);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  fail_unless_equals_int (from_others, 1);
  gst_object_unref (bus);
  gst_object_unref (el);
  gst_object_unref (p);
  return from_element;
}

/* Sets a pipeline with @launch to PAUSED and returns the error text (the
 * state change must fail). */
static inline gchar *
paused_error (const char *launch)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (launch, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  GstBus *bus = gst_element_get_bus (p);
  GstStateChangeReturn r = gst_element_set_state (p, GST_STATE_PAUSED);
  if (r == GST_STATE_CHANGE_ASYNC)
    r = gst_element_get_state (p, NULL, NULL, 10 * GST_SECOND);
  fail_unless_equals_int (r, GST_STATE_CHANGE_FAILURE);
  gchar *text = test_bus_error (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  return text;
}

/* The string property @name of @el. */
static inline gchar *
test_get_string (GstElement *el, const char *name)
{
  gchar *s = NULL;
  g_object_get (el, name, &s, NULL);
  return s ? s : g_strdup ("");
}

/* The "fused" property of the element named @name inside @h's bin (caller
 * frees; "" when unset). Fails the test when there is no such element. */
static inline gchar *
test_harness_fused (GstHarness *h, const char *name)
{
  GstElement *el = gst_bin_get_by_name (GST_BIN (h->element), name);
  fail_unless (el != NULL, "no element %s", name);
  gchar *s = test_get_string (el, "fused");
  gst_object_unref (el);
  return s;
}

/* Asserts that what gst-inspect-1.0 shows of element @factory_name is
 * complete: long name, class, description and author; two pad templates;
 * for every property of its own a description longer than 20 characters
 * and, for enums, a nick for every value. Returns how many properties are
 * its own (not GstObject's, GstElement's or GstBaseTransform's). */
static inline guint
test_assert_documented (const char *factory_name)
{
  GstElementFactory *f = gst_element_factory_find (factory_name);
  fail_unless (f != NULL, "%s not registered", factory_name);
  for (const char *const *k = (const char *const[]) { GST_ELEMENT_METADATA_LONGNAME,
          GST_ELEMENT_METADATA_KLASS, GST_ELEMENT_METADATA_DESCRIPTION,
          GST_ELEMENT_METADATA_AUTHOR, NULL }; *k; k++) {
    const char *v = gst_element_factory_get_metadata (f, *k);
    fail_unless (v && *v, "%s has no %s", factory_name, *k);
  }
  fail_unless_equals_int (gst_element_factory_get_num_pad_templates (f), 2);
  GstElement *el = gst_element_factory_create (f, NULL);
  fail_unless (el != NULL, "cannot make %s", factory_name);
  guint n;
  GParamSpec **props = g_object_class_list_properties (G_OBJECT_GET_CLASS (el), &n);
  guint own = 0;
  for (guint p = 0; p < n; p++) {
    if (props[p]->owner_type == GST_TYPE_ELEMENT || props[p]->owner_type == GST_TYPE_OBJECT
        || props[p]->owner_type == GST_TYPE_BASE_TRANSFORM)
      continue;
    own++;
    const char *blurb = g_param_spec_get_blurb (props[p]);
    fail_unless (blurb && strlen (blurb) > 20, "%s::%s has no description", factory_name,
        props[p]->name);
    if (G_IS_PARAM_SPEC_ENUM (props[p])) {
      GEnumClass *ec = G_PARAM_SPEC_ENUM (props[p])->enum_class;
      for (guint v = 0; v < ec->n_values; v++)
        fail_unless (ec->values[v].value_nick && *ec->values[v].value_nick,
            "%s::%s: value %u has no nick", factory_name, props[p]->name, v);
    }
  }
  g_free (props);
  gst_object_unref (el);
  gst_object_unref (f);
  return own;
}

/* The number of region-of-interest metas of @buf. */
static inline guint
n_rois (GstBuffer *buf)
{
  return gst_buffer_get_n_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
}

/* The @n-th region-of-interest meta of @buf (fails the test when missing). */
static inline GstVideoRegionOfInterestMeta *
nth_roi (GstBuffer *buf, guint n)
{
  gpointer state = NULL;
  GstMeta *m = NULL;
  for (guint i = 0; i <= n; i++)
    m = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  fail_unless (m != NULL, "no region meta %u", n);
  return (GstVideoRegionOfInterestMeta *) m;
}

/* A "keypoints" region param as m2iinfer writes a pose model's
 * (gst/gstm2iregions.h): @n points at @rel (x, y pairs relative to the
 * region's box), @conf, @names (may be NULL), and @n_pairs skeleton pairs
 * @pairs; @data_bytes the data_buffer's length (n * 8 when consistent). */
static inline GstStructure *
test_keypoints_structure (guint n, const float *rel, gsize data_bytes, const float *conf,
    const char *const *names, const guint *pairs, guint n_pairs)
{
  GstStructure *kp = gst_structure_new ("keypoints", "type", G_TYPE_STRING, "keypoints",
      "format", G_TYPE_STRING, "keypoints", "data_buffer", G_TYPE_VARIANT,
      g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, rel, data_bytes, 1), NULL);
  GValue arr = G_VALUE_INIT, item = G_VALUE_INIT;
  const guint dims[2] = { n, 2 };
  g_value_init (&item, G_TYPE_UINT);
  gst_value_array_init (&arr, 2);
  for (guint i = 0; i < 2; i++) {
    g_value_set_uint (&item, dims[i]);
    gst_value_array_append_value (&arr, &item);
  }
  gst_structure_take_value (kp, "dims", &arr);
  gst_value_array_init (&arr, 2 * n_pairs);
  for (guint i = 0; i < 2 * n_pairs; i++) {
    g_value_set_uint (&item, pairs[i]);
    gst_value_array_append_value (&arr, &item);
  }
  gst_structure_take_value (kp, "point_connections", &arr);
  g_value_unset (&item);
  g_value_init (&item, G_TYPE_FLOAT);
  gst_value_array_init (&arr, n);
  for (guint i = 0; i < n; i++) {
    g_value_set_float (&item, conf[i]);
    gst_value_array_append_value (&arr, &item);
  }
  gst_structure_take_value (kp, "confidence", &arr);
  g_value_unset (&item);
  if (names) {
    g_value_init (&item, G_TYPE_STRING);
    gst_value_array_init (&arr, n);
    for (guint i = 0; i < n; i++) {
      g_value_set_string (&item, names[i]);
      gst_value_array_append_value (&arr, &item);
    }
    gst_structure_take_value (kp, "point_names", &arr);
    g_value_unset (&item);
  }
  return kp;
}

/* ---- test data and models --------------------------------------------------- */

/* Paths and data: test-support.h (test_read_data, test_models_path, ...). */

/* The test photo, tests/data/ir/astronaut-272x160.ppm. */
typedef struct {
  gint width, height;
  TestImage rgb;             /* IL_RGB888 */
} Photo;

static inline void
read_photo (Photo *ph)
{
  GBytes *b = test_read_data ("ir/astronaut-272x160.ppm");
  gsize len;
  const char *d = g_bytes_get_data (b, &len);
  gint used = 0, max = 0;
  fail_unless (sscanf (d, "P6 %d %d %d%n", &ph->width, &ph->height, &max, &used) == 3);
  test_image_alloc (&ph->rgb, M2I_FORMAT_IL_RGB888, ph->width, ph->height);
  fail_unless ((gsize) used + 1 + ph->rgb.size <= len);
  memcpy (ph->rgb.mem, d + used + 1, ph->rgb.size);
  g_bytes_unref (b);
}

/* The path of person-detection-retail-0013 (caller frees), with the photo
 * read into @ph; NULL, with nothing read, when M2I_SHARED_MODELS does not
 * hold the model (the detection tests then pass without checking). */
static inline gchar *
person_model_and_photo (Photo *ph)
{
  gchar *p = test_shared_model ("person-detection-retail-0013/person-detection-retail-0013.xml");
  if (!p) {
    GST_INFO ("person-detection-retail-0013 not found under M2I_SHARED_MODELS: skipped");
    return NULL;
  }
  read_photo (ph);
  return p;
}
