/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2imetapublish.c — m2imetapublish: one JSON object per frame with the
 * frame's objects (region metas), written as JSON lines (or one JSON array)
 * to a file or stdout. The buffers pass through untouched.
 *
 * The JSON is DL Streamer's gvametaconvert schema (its jsonconverter.cpp),
 * documented in docs/analytics.md and as a JSON Schema in
 * docs/m2imetapublish.schema.json:
 *
 *   {"timestamp": <stream time, ns>, "resolution": {"width", "height"},
 *    "source": <source>, "tags": {<tags>},
 *    "objects": [{"x", "y", "w", "h" (pixels), "region_id", "parent_id",
 *                 "id" (tracked), "predicted", "roi_type",
 *                 "detection": {"bounding_box": {"x_min", "y_min", "x_max", "y_max"},
 *                               "confidence", "label_id", "label"},
 *                 "<classification name>": {"label", "label_id", "confidence",
 *                                           "model": {"name"}},
 *                 "keypoints": {"format", "points": [{"name", "x", "y", "confidence"}],
 *                               "connections": [[a, b]]}}],
 *    "tensors": [{"name", "layer_name", "model_name", "precision", "dims", "data"}]}
 *
 * json-glib builds each frame's tree (its nodes are allocated per frame, as
 * gvametaconvert's); the text goes into one reused GString.
 */
#include "gstm2ianalytics.h"
#include "gstm2ienums.h"
#include "gstm2iregions.h"
#include "gstm2itensormeta.h"

#include <m2i-core/base/m2i-fp16.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_m2i_metapublish_debug);
#define GST_CAT_DEFAULT gst_m2i_metapublish_debug

#define DEFAULT_FILE_PATH "stdout"
#define DEFAULT_FILE_FORMAT GST_M2I_FILE_FORMAT_JSON_LINES
#define DEFAULT_ADD_EMPTY_RESULTS TRUE
#define DEFAULT_ADD_TENSOR_DATA FALSE

enum {
  PROP_0,
  PROP_FILE_PATH,
  PROP_FILE_FORMAT,
  PROP_ADD_EMPTY_RESULTS,
  PROP_ADD_TENSOR_DATA,
  PROP_SOURCE,
  PROP_TAGS,
};

typedef struct {
  GstBaseTransform parent;

  /* properties (object lock) */
  gchar *file_path, *source, *tags;
  GstM2iFileFormat file_format;
  gboolean add_empty, add_tensors;

  /* from start to stop (streaming thread) */
  FILE *file;
  gboolean own_file;            /* not stdout */
  gchar *path;                  /* as opened, for messages */
  GstM2iFileFormat format;
  JsonNode *tags_node;
  gchar *source_str;
  JsonGenerator *gen;
  GString *text;
  guint64 written;
  gint width, height;
} GstM2iMetaPublish;

typedef struct {
  GstBaseTransformClass parent_class;
} GstM2iMetaPublishClass;

GType gst_m2i_metapublish_get_type (void);
G_DEFINE_TYPE (GstM2iMetaPublish, gst_m2i_metapublish, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (m2imetapublish, "m2imetapublish", GST_RANK_NONE,
    gst_m2i_metapublish_get_type ());

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));

/* ---- the file --------------------------------------------------------------------- */

static gboolean
write_text (GstM2iMetaPublish *self, const char *s, gsize len)
{
  if (fwrite (s, 1, len, self->file) != len || fflush (self->file) != 0) {
    int err = errno;
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, ("m2imetapublish cannot write to %s: %s",
            self->path, g_strerror (err)), ("check the disk space and the file-path property"));
    return FALSE;
  }
  return TRUE;
}

static gboolean
gst_m2i_metapublish_start (GstBaseTransform *trans)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) trans;
  GST_OBJECT_LOCK (self);
  gchar *path = g_strdup (self->file_path ? self->file_path : DEFAULT_FILE_PATH);
  gchar *tags = g_strdup (self->tags);
  self->source_str = g_strdup (self->source);
  self->format = self->file_format;
  GST_OBJECT_UNLOCK (self);

  if (tags) {
    JsonParser *parser = json_parser_new ();
    GError *error = NULL;
    if (!json_parser_load_from_data (parser, tags, -1, &error)
        || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser))) {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("m2imetapublish: the tags property is not "
              "a JSON object: %s", error ? error->message : tags),
          ("write it as tags='{\"camera\": \"door\"}'"));
      g_clear_error (&error);
      g_object_unref (parser);
      g_free (tags);
      g_free (path);
      return FALSE;
    }
    self->tags_node = json_node_copy (json_parser_get_root (parser));
    g_object_unref (parser);
    g_free (tags);
  }

  if (!strcmp (path, "stdout")) {
    self->file = stdout;
    self->own_file = FALSE;
  } else {
    self->file = g_fopen (path, "w");
    if (!self->file) {
      int err = errno;
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE, ("m2imetapublish cannot open %s for "
              "writing: %s", path, g_strerror (err)), ("set file-path to a writable file, or "
              "to \"stdout\""));
      g_free (path);
      return FALSE;
    }
    self->own_file = TRUE;
  }
  self->path = path;
  self->gen = json_generator_new ();
  self->text = g_string_sized_new (4096);
  self->written = 0;
  self->width = self->height = 0;
  if (self->format == GST_M2I_FILE_FORMAT_JSON)
    return write_text (self, "[", 1);
  return TRUE;
}

static gboolean
gst_m2i_metapublish_stop (GstBaseTransform *trans)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) trans;
  gboolean ok = TRUE;
  if (self->file && self->format == GST_M2I_FILE_FORMAT_JSON)
    ok = write_text (self, "\n]\n", 3);
  if (self->file && self->own_file && fclose (self->file) != 0 && ok) {
    int err = errno;
    GST_ELEMENT_ERROR (self, RESOURCE, CLOSE, ("m2imetapublish cannot close %s: %s",
            self->path, g_strerror (err)), (NULL));
    ok = FALSE;
  }
  self->file = NULL;
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->source_str, g_free);
  g_clear_pointer (&self->tags_node, json_node_unref);
  g_clear_object (&self->gen);
  if (self->text)
    g_string_free (self->text, TRUE);
  self->text = NULL;
  return ok;
}

static gboolean
gst_m2i_metapublish_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) trans;
  return gst_m2i_caps_frame_size (GST_ELEMENT (self), incaps, &self->width, &self->height);
}

/* ---- JSON ------------------------------------------------------------------------- */

/* @s, or when it is not valid UTF-8 a copy in *@tmp (free it) with the
 * invalid bytes made U+FFFD, so that every line stays JSON. */
static const char *
valid_utf8 (const char *s, gchar **tmp)
{
  *tmp = g_utf8_validate (s, -1, NULL) ? NULL : g_utf8_make_valid (s, -1);
  return *tmp ? *tmp : s;
}

/* A string value from a meta (valid_utf8). */
static void
add_string (JsonBuilder *b, const char *s)
{
  gchar *tmp;
  json_builder_add_string_value (b, valid_utf8 (s, &tmp));
  g_free (tmp);
}

/* DL Streamer's precision spelling. */
static const char *
precision_name (M2iElementType t)
{
  switch (t) {
    case M2I_ET_F32: return "FP32";
    case M2I_ET_F16: return "FP16";
    case M2I_ET_F64: return "FP64";
    case M2I_ET_BF16: return "BF16";
    case M2I_ET_U8: return "U8";
    case M2I_ET_I8: return "I8";
    case M2I_ET_U16: return "U16";
    case M2I_ET_I16: return "I16";
    case M2I_ET_U32: return "U32";
    case M2I_ET_I32: return "I32";
    case M2I_ET_U64: return "U64";
    case M2I_ET_I64: return "I64";
    case M2I_ET_BOOLEAN: return "BOOL";
    default: return "UNSPECIFIED";
  }
}

/* A JSON number, or null for NaN and infinities (JSON has none). */
static void
add_double (JsonBuilder *b, double v)
{
  if (isfinite (v))
    json_builder_add_double_value (b, v);
  else
    json_builder_add_null_value (b);
}

/* Element @i of @t as a JSON number. */
static void
add_element (JsonBuilder *b, const GstM2iTensor *t, gsize i)
{
  const guint8 *d = t->data;
  gsize sz = m2i_element_type_size (t->type);
  union { float f; double d; gint8 i8; guint8 u8; gint16 i16; guint16 u16; gint32 i32;
    guint32 u32; gint64 i64; guint64 u64; } v;
  memcpy (&v, d + i * sz, sz);
  switch (t->type) {
    case M2I_ET_F32: add_double (b, v.f); break;
    case M2I_ET_F64: add_double (b, v.d); break;
    case M2I_ET_F16: add_double (b, m2i_f16_to_f32 (v.u16)); break;
    case M2I_ET_BF16: add_double (b, m2i_f32_from_bits ((guint32) v.u16 << 16)); break;
    case M2I_ET_BOOLEAN:
    case M2I_ET_U8: json_builder_add_int_value (b, v.u8); break;
    case M2I_ET_I8: json_builder_add_int_value (b, v.i8); break;
    case M2I_ET_U16: json_builder_add_int_value (b, v.u16); break;
    case M2I_ET_I16: json_builder_add_int_value (b, v.i16); break;
    case M2I_ET_U32: json_builder_add_int_value (b, v.u32); break;
    case M2I_ET_I32: json_builder_add_int_value (b, v.i32); break;
    case M2I_ET_U64: json_builder_add_int_value (b, (gint64) MIN (v.u64, (guint64) G_MAXINT64)); break;
    case M2I_ET_I64: json_builder_add_int_value (b, v.i64); break;
    default: json_builder_add_null_value (b); break;
  }
}

/* The frame's model outputs (m2iinfer's tensor meta) as "tensors". */
static void
add_tensors (JsonBuilder *b, GstBuffer *buf)
{
  GstM2iTensorMeta *tm = gst_buffer_get_m2i_tensor_meta (buf);
  if (!tm || tm->n_tensors == 0)
    return;
  json_builder_set_member_name (b, "tensors");
  json_builder_begin_array (b);
  for (guint i = 0; i < tm->n_tensors; i++) {
    const GstM2iTensor *t = &tm->tensors[i];
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    add_string (b, t->name);
    json_builder_set_member_name (b, "layer_name");
    add_string (b, t->name);
    if (tm->model) {
      json_builder_set_member_name (b, "model_name");
      add_string (b, tm->model);
    }
    json_builder_set_member_name (b, "precision");
    json_builder_add_string_value (b, precision_name (t->type));
    json_builder_set_member_name (b, "dims");
    json_builder_begin_array (b);
    for (guint d = 0; d < t->n_dims; d++)
      json_builder_add_int_value (b, t->dims[d]);
    json_builder_end_array (b);
    json_builder_set_member_name (b, "data");
    json_builder_begin_array (b);
    gsize sz = m2i_element_type_size (t->type);
    gsize n = sz ? MIN (gst_m2i_tensor_numel (t), t->size / sz) : 0;
    for (gsize e = 0; e < n; e++)
      add_element (b, t, e);
    json_builder_end_array (b);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
}

/* @s's "confidence" and "label_id", those it has. */
static void
add_score (JsonBuilder *b, const GstStructure *s)
{
  gdouble conf;
  gint label_id;
  if (gst_structure_get_double (s, "confidence", &conf) && isfinite (conf)) {
    json_builder_set_member_name (b, "confidence");
    json_builder_add_double_value (b, conf);
  }
  if (gst_structure_get_int (s, "label_id", &label_id)) {
    json_builder_set_member_name (b, "label_id");
    json_builder_add_int_value (b, label_id);
  }
}

static void
add_detection (JsonBuilder *b, GstVideoRegionOfInterestMeta *roi, const GstStructure *det)
{
  double c[4];
  static const char *const names[4] = { "x_min", "y_min", "x_max", "y_max" };
  for (int i = 0; i < 4; i++)
    if (!gst_structure_get_double (det, names[i], &c[i]) || !isfinite (c[i]))
      return;
  json_builder_set_member_name (b, "detection");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "bounding_box");
  json_builder_begin_object (b);
  for (int i = 0; i < 4; i++) {
    json_builder_set_member_name (b, names[i]);
    json_builder_add_double_value (b, c[i]);
  }
  json_builder_end_object (b);
  add_score (b, det);
  const gchar *label = gst_structure_get_string (det, "label");
  if (!label && roi->roi_type)
    label = g_quark_to_string (roi->roi_type);
  if (label && *label) {
    json_builder_set_member_name (b, "label");
    add_string (b, label);
  }
  json_builder_end_object (b);
}

static void
add_classification (JsonBuilder *b, const GstStructure *s)
{
  const gchar *key = gst_structure_get_string (s, "attribute_name");
  gchar *tmp;
  json_builder_set_member_name (b, valid_utf8 (key ? key : gst_structure_get_name (s), &tmp));
  g_free (tmp);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "label");
  add_string (b, gst_structure_get_string (s, "label"));
  add_score (b, s);
  json_builder_set_member_name (b, "model");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  add_string (b, gst_structure_get_string (s, "model_name"));
  json_builder_end_object (b);
  json_builder_end_object (b);
}

/* Keypoint positions are written to 1/KEYPOINT_STEPS of a pixel. */
#define KEYPOINT_STEPS 16.0

/* A pose model's keypoints (the region's "keypoints" structure) in frame
 * pixels: {"format", "points": [{"name", "x", "y", "confidence"}],
 * "connections": [[a, b], ...]}; x and y null for a keypoint not found,
 * confidence -1 where there is none. */
static void
add_keypoints (JsonBuilder *b, GstVideoRegionOfInterestMeta *roi, const GstM2iKeypointsView *v,
    gint width, gint height)
{
  double box[4];
  gst_m2i_region_box (roi, width, height, box);
  json_builder_set_member_name (b, "keypoints");
  json_builder_begin_object (b);
  if (v->format) {
    json_builder_set_member_name (b, "format");
    add_string (b, v->format);
  }
  json_builder_set_member_name (b, "points");
  json_builder_begin_array (b);
  for (guint k = 0; k < v->n; k++) {
    double x = NAN, y = NAN;
    float conf;
    gst_m2i_keypoint_get (v, k, box, &x, &y, &conf);
    /* To 1/16 pixel: positions come back from floats relative to the box,
     * and JSON would print that float noise to 17 digits (228.00000715);
     * a binary fraction prints short and exact (228.0, 106.6875). */
    x = round (x * KEYPOINT_STEPS) / KEYPOINT_STEPS;
    y = round (y * KEYPOINT_STEPS) / KEYPOINT_STEPS;
    json_builder_begin_object (b);
    if (v->names) {
      json_builder_set_member_name (b, "name");
      add_string (b, g_value_get_string (gst_value_array_get_value (v->names, k)));
    }
    json_builder_set_member_name (b, "x");
    add_double (b, x);
    json_builder_set_member_name (b, "y");
    add_double (b, y);
    json_builder_set_member_name (b, "confidence");
    add_double (b, conf);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  guint n_pairs = gst_m2i_keypoints_n_pairs (v);
  if (n_pairs) {
    json_builder_set_member_name (b, "connections");
    json_builder_begin_array (b);
    for (guint i = 0; i < n_pairs; i++) {
      guint a, c;
      if (!gst_m2i_keypoints_pair (v, i, &a, &c))
        continue;
      json_builder_begin_array (b);
      json_builder_add_int_value (b, a);
      json_builder_add_int_value (b, c);
      json_builder_end_array (b);
    }
    json_builder_end_array (b);
  }
  json_builder_end_object (b);
}

static void
add_object (JsonBuilder *b, GstVideoRegionOfInterestMeta *roi, gint width, gint height)
{
  json_builder_begin_object (b);
  static const char *const xywh[4] = { "x", "y", "w", "h" };
  guint v[4] = { roi->x, roi->y, roi->w, roi->h };
  for (int i = 0; i < 4; i++) {
    json_builder_set_member_name (b, xywh[i]);
    json_builder_add_int_value (b, v[i]);
  }
  json_builder_set_member_name (b, "region_id");
  json_builder_add_int_value (b, roi->id);
  if (roi->parent_id >= 0) {
    json_builder_set_member_name (b, "parent_id");
    json_builder_add_int_value (b, roi->parent_id);
  }
  gint id;
  if (gst_m2i_region_get_object_id (roi, &id)) {
    gboolean predicted = FALSE;
    gst_structure_get_boolean (gst_video_region_of_interest_meta_get_param (roi, "object_id"),
        "predicted", &predicted);
    json_builder_set_member_name (b, "id");
    json_builder_add_int_value (b, id);
    json_builder_set_member_name (b, "predicted");
    json_builder_add_boolean_value (b, predicted);
  }
  const gchar *roi_type = roi->roi_type ? g_quark_to_string (roi->roi_type) : NULL;
  if (roi_type && *roi_type) {
    json_builder_set_member_name (b, "roi_type");
    add_string (b, roi_type);
  }
  for (GList *l = roi->params; l; l = l->next) {
    const GstStructure *s = l->data;
    GstM2iKeypointsView kv;
    if (gst_structure_has_name (s, "detection"))
      add_detection (b, roi, s);
    else if (gst_m2i_structure_is_classification (s))
      add_classification (b, s);
    else if (gst_m2i_keypoints_structure_parse (s, &kv))
      add_keypoints (b, roi, &kv, width, height);
  }
  json_builder_end_object (b);
}

static GstFlowReturn
gst_m2i_metapublish_transform_ip (GstBaseTransform *trans, GstBuffer *buf)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) trans;
  GST_OBJECT_LOCK (self);
  gboolean add_empty = self->add_empty, add_tensors_data = self->add_tensors;
  GST_OBJECT_UNLOCK (self);

  guint n = gst_buffer_get_n_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  gboolean tensors = add_tensors_data && gst_buffer_get_m2i_tensor_meta (buf) != NULL;
  if (n == 0 && !tensors && !add_empty)
    return GST_FLOW_OK;

  JsonBuilder *b = json_builder_new ();
  json_builder_begin_object (b);
  guint64 ts = GST_BUFFER_PTS_IS_VALID (buf) ? gst_segment_to_stream_time (&trans->segment,
      GST_FORMAT_TIME, GST_BUFFER_PTS (buf)) : GST_CLOCK_TIME_NONE;
  if (ts != GST_CLOCK_TIME_NONE) {
    json_builder_set_member_name (b, "timestamp");
    json_builder_add_int_value (b, (gint64) ts);
  }
  json_builder_set_member_name (b, "resolution");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "width");
  json_builder_add_int_value (b, self->width);
  json_builder_set_member_name (b, "height");
  json_builder_add_int_value (b, self->height);
  json_builder_end_object (b);
  if (self->source_str) {
    json_builder_set_member_name (b, "source");
    add_string (b, self->source_str);
  }
  if (self->tags_node) {
    json_builder_set_member_name (b, "tags");
    json_builder_add_value (b, json_node_copy (self->tags_node));
  }
  json_builder_set_member_name (b, "objects");
  json_builder_begin_array (b);
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    add_object (b, (GstVideoRegionOfInterestMeta *) m, self->width, self->height);
  json_builder_end_array (b);
  if (tensors)
    add_tensors (b, buf);
  json_builder_end_object (b);

  JsonNode *root = json_builder_get_root (b);
  json_generator_set_root (self->gen, root);
  g_string_truncate (self->text, 0);
  if (self->format == GST_M2I_FILE_FORMAT_JSON)
    g_string_append (self->text, self->written ? ",\n" : "\n");
  json_generator_to_gstring (self->gen, self->text);
  if (self->format == GST_M2I_FILE_FORMAT_JSON_LINES)
    g_string_append_c (self->text, '\n');
  json_generator_set_root (self->gen, NULL);
  json_node_unref (root);
  g_object_unref (b);
  if (!write_text (self, self->text->str, self->text->len))
    return GST_FLOW_ERROR;
  self->written++;
  return GST_FLOW_OK;
}

/* ---- properties ------------------------------------------------------------------ */

static void
gst_m2i_metapublish_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FILE_PATH:
      g_free (self->file_path);
      self->file_path = g_value_dup_string (value);
      break;
    case PROP_FILE_FORMAT:
      self->file_format = g_value_get_enum (value);
      break;
    case PROP_ADD_EMPTY_RESULTS:
      self->add_empty = g_value_get_boolean (value);
      break;
    case PROP_ADD_TENSOR_DATA:
      self->add_tensors = g_value_get_boolean (value);
      break;
    case PROP_SOURCE:
      g_free (self->source);
      self->source = g_value_dup_string (value);
      break;
    case PROP_TAGS:
      g_free (self->tags);
      self->tags = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_metapublish_get_property (GObject *object, guint prop_id, GValue *value,
    GParamSpec *pspec)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FILE_PATH:
      g_value_set_string (value, self->file_path);
      break;
    case PROP_FILE_FORMAT:
      g_value_set_enum (value, self->file_format);
      break;
    case PROP_ADD_EMPTY_RESULTS:
      g_value_set_boolean (value, self->add_empty);
      break;
    case PROP_ADD_TENSOR_DATA:
      g_value_set_boolean (value, self->add_tensors);
      break;
    case PROP_SOURCE:
      g_value_set_string (value, self->source);
      break;
    case PROP_TAGS:
      g_value_set_string (value, self->tags);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_metapublish_finalize (GObject *object)
{
  GstM2iMetaPublish *self = (GstM2iMetaPublish *) object;
  g_free (self->file_path);
  g_free (self->source);
  g_free (self->tags);
  G_OBJECT_CLASS (gst_m2i_metapublish_parent_class)->finalize (object);
}

static void
gst_m2i_metapublish_class_init (GstM2iMetaPublishClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  GParamFlags at_once = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  GST_DEBUG_CATEGORY_INIT (gst_m2i_metapublish_debug, "m2imetapublish", 0,
      "m2i metadata publisher");
  gobject_class->set_property = gst_m2i_metapublish_set_property;
  gobject_class->get_property = gst_m2i_metapublish_get_property;
  gobject_class->finalize = gst_m2i_metapublish_finalize;

  g_object_class_install_property (gobject_class, PROP_FILE_PATH,
      g_param_spec_string ("file-path", "File path", "File the JSON is written to (created "
          "or truncated at READY->PAUSED), or \"stdout\". Applies from the next "
          "READY->PAUSED", DEFAULT_FILE_PATH, ready));
  g_object_class_install_property (gobject_class, PROP_FILE_FORMAT,
      g_param_spec_enum ("file-format", "File format", "json-lines: one JSON object per "
          "line, one line per frame; json: the file is one JSON array of the frames' objects "
          "(closed at PAUSED->READY). Applies from the next READY->PAUSED",
          GST_TYPE_M2I_FILE_FORMAT, DEFAULT_FILE_FORMAT, ready));
  g_object_class_install_property (gobject_class, PROP_ADD_EMPTY_RESULTS,
      g_param_spec_boolean ("add-empty-results", "Add empty results", "Write frames without "
          "any object too (\"objects\": []); false skips them, as gvametaconvert's default",
          DEFAULT_ADD_EMPTY_RESULTS, at_once));
  g_object_class_install_property (gobject_class, PROP_ADD_TENSOR_DATA,
      g_param_spec_boolean ("add-tensor-data", "Add tensor data", "Add the model outputs "
          "m2iinfer attached to the frame (its tensor meta) as \"tensors\": name, precision, "
          "dims and every value", DEFAULT_ADD_TENSOR_DATA, at_once));
  g_object_class_install_property (gobject_class, PROP_SOURCE,
      g_param_spec_string ("source", "Source", "A URI or name of the media source, written "
          "as \"source\" in every frame's object. Applies from the next READY->PAUSED", NULL,
          ready));
  g_object_class_install_property (gobject_class, PROP_TAGS,
      g_param_spec_string ("tags", "Tags", "A JSON object of your own (e.g. "
          "'{\"camera\": \"door\"}'), written as \"tags\" in every frame's object; checked at "
          "READY->PAUSED", NULL, ready));

  gst_element_class_set_static_metadata (element_class, "M2I metadata publisher",
      "Filter/Analyzer/Video", "Writes each frame's objects (region-of-interest metas: "
      "boxes, ids, detections, classifications) as JSON lines in DL Streamer's gvametaconvert "
      "schema to a file or stdout; the video passes through untouched", "m2i");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_FILE_FORMAT, 0);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_m2i_metapublish_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_m2i_metapublish_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_m2i_metapublish_set_caps);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_m2i_metapublish_transform_ip);
}

static void
gst_m2i_metapublish_init (GstM2iMetaPublish *self)
{
  self->file_path = g_strdup (DEFAULT_FILE_PATH);
  self->file_format = DEFAULT_FILE_FORMAT;
  self->add_empty = DEFAULT_ADD_EMPTY_RESULTS;
  self->add_tensors = DEFAULT_ADD_TENSOR_DATA;
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
