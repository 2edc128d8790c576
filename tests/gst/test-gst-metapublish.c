/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-gst-metapublish.c — m2imetapublish (GstHarness).
 *
 * Every line written is validated against the documented schema,
 * docs/m2imetapublish.schema.json, by a small JSON Schema (draft-07)
 * validator written here — it knows the keywords the schema uses and fails
 * on any other, so no part of the schema is skipped silently — and its
 * values are compared with the metas the test attached (boxes, ids, labels,
 * confidences, classifications) and, for tensor data, with the tensor meta
 * m2iinfer attached (Fashion-MNIST model of the repository).
 */
#include "gst-test-util.h"
#include "gstm2itensormeta.h"

#include <glib/gstdio.h>
#include <gst/video/gstvideometa.h>
#include <json-glib/json-glib.h>

#define W 640
#define H 480
#define CAPS "video/x-raw,format=GRAY8,width=640,height=480,framerate=25/1"

/* ---- a JSON Schema validator (the keywords the schema uses) ------------------------ */

static JsonObject *schema_root;
static JsonNode *schema_node;

static gboolean validate (JsonNode *schema, JsonNode *v, const char *path, GString *err);

static gboolean
type_ok (const char *type, JsonNode *v)
{
  if (!strcmp (type, "null"))
    return JSON_NODE_HOLDS_NULL (v);
  if (!strcmp (type, "object"))
    return JSON_NODE_HOLDS_OBJECT (v);
  if (!strcmp (type, "array"))
    return JSON_NODE_HOLDS_ARRAY (v);
  if (!JSON_NODE_HOLDS_VALUE (v))
    return FALSE;
  GType t = json_node_get_value_type (v);
  if (!strcmp (type, "string"))
    return t == G_TYPE_STRING;
  if (!strcmp (type, "boolean"))
    return t == G_TYPE_BOOLEAN;
  if (!strcmp (type, "integer"))
    return t == G_TYPE_INT64 || (t == G_TYPE_DOUBLE
        && json_node_get_double (v) == floor (json_node_get_double (v)));
  if (!strcmp (type, "number"))
    return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
  fail ("schema: unknown type %s", type);
  return FALSE;
}

static double
number (JsonNode *v)
{
  return json_node_get_value_type (v) == G_TYPE_INT64 ? (double) json_node_get_int (v)
      : json_node_get_double (v);
}

static gboolean
validate (JsonNode *schema_node, JsonNode *v, const char *path, GString *err)
{
  fail_unless (JSON_NODE_HOLDS_OBJECT (schema_node), "schema at %s is no object", path);
  JsonObject *s = json_node_get_object (schema_node);
  if (json_object_has_member (s, "$ref")) {
    const char *ref = json_object_get_string_member (s, "$ref");
    fail_unless (g_str_has_prefix (ref, "#/definitions/"), "schema: $ref %s", ref);
    JsonObject *defs = json_object_get_object_member (schema_root, "definitions");
    JsonNode *target = json_object_get_member (defs, ref + strlen ("#/definitions/"));
    fail_unless (target != NULL, "schema: no %s", ref);
    return validate (target, v, path, err);
  }
  GList *keys = json_object_get_members (s);
  gboolean ok = TRUE;
  for (GList *k = keys; k && ok; k = k->next) {
    const char *kw = k->data;
    JsonNode *arg = json_object_get_member (s, kw);
    if (!strcmp (kw, "$schema") || !strcmp (kw, "$id") || !strcmp (kw, "title")
        || !strcmp (kw, "description") || !strcmp (kw, "definitions"))
      continue;
    if (!strcmp (kw, "type")) {
      gboolean any = FALSE;
      if (JSON_NODE_HOLDS_ARRAY (arg)) {
        JsonArray *a = json_node_get_array (arg);
        for (guint i = 0; i < json_array_get_length (a); i++)
          any |= type_ok (json_array_get_string_element (a, i), v);
      } else {
        any = type_ok (json_node_get_string (arg), v);
      }
      if (!any)
        ok = FALSE, g_string_append_printf (err, "%s: wrong type", path);
    } else if (!strcmp (kw, "minimum")) {
      if (number (v) < number (arg))
        ok = FALSE, g_string_append_printf (err, "%s: below the minimum", path);
    } else if (!strcmp (kw, "maximum")) {
      if (number (v) > number (arg))
        ok = FALSE, g_string_append_printf (err, "%s: above the maximum", path);
    } else if (!strcmp (kw, "required")) {
      JsonArray *a = json_node_get_array (arg);
      for (guint i = 0; i < json_array_get_length (a) && ok; i++)
        if (!json_object_has_member (json_node_get_object (v), json_array_get_string_element (a, i)))
          ok = FALSE, g_string_append_printf (err, "%s: no %s", path,
              json_array_get_string_element (a, i));
    } else if (!strcmp (kw, "dependencies")) {
      JsonObject *deps = json_node_get_object (arg), *o = json_node_get_object (v);
      GList *dk = json_object_get_members (deps);
      for (GList *d = dk; d && ok; d = d->next) {
        if (!json_object_has_member (o, d->data))
          continue;
        JsonArray *a = json_object_get_array_member (deps, d->data);
        for (guint i = 0; i < json_array_get_length (a) && ok; i++)
          if (!json_object_has_member (o, json_array_get_string_element (a, i)))
            ok = FALSE, g_string_append_printf (err, "%s: %s without %s", path,
                (const char *) d->data, json_array_get_string_element (a, i));
      }
      g_list_free (dk);
    } else if (!strcmp (kw, "properties") || !strcmp (kw, "additionalProperties")) {
      if (!strcmp (kw, "additionalProperties") && json_object_has_member (s, "properties"))
        continue;               /* handled with properties */
      JsonObject *props = json_object_has_member (s, "properties")
          ? json_object_get_object_member (s, "properties") : NULL;
      JsonNode *extra = json_object_get_member (s, "additionalProperties");
      JsonObject *o = json_node_get_object (v);
      GList *members = json_object_get_members (o);
      for (GList *m = members; m && ok; m = m->next) {
        gchar *sub = g_strdup_printf ("%s.%s", path, (const char *) m->data);
        JsonNode *child = json_object_get_member (o, m->data);
        if (props && json_object_has_member (props, m->data))
          ok = validate (json_object_get_member (props, m->data), child, sub, err);
        else if (extra && JSON_NODE_HOLDS_VALUE (extra) && !json_node_get_boolean (extra))
          ok = FALSE, g_string_append_printf (err, "%s: not allowed", sub);
        else if (extra && JSON_NODE_HOLDS_OBJECT (extra))
          ok = validate (extra, child, sub, err);
        g_free (sub);
      }
      g_list_free (members);
    } else if (!strcmp (kw, "items")) {
      JsonArray *a = json_node_get_array (v);
      for (guint i = 0; i < json_array_get_length (a) && ok; i++) {
        gchar *sub = g_strdup_printf ("%s[%u]", path, i);
        ok = validate (arg, json_array_get_element (a, i), sub, err);
        g_free (sub);
      }
    } else {
      fail ("the validator does not know the keyword %s (at %s)", kw, path);
    }
  }
  g_list_free (keys);
  return ok;
}

static JsonParser *
load_schema (void)
{
  gchar *data = test_data_path ("");
  gchar *path = g_build_filename (data, "..", "..", "docs", "m2imetapublish.schema.json", NULL);
  JsonParser *p = json_parser_new ();
  GError *error = NULL;
  fail_unless (json_parser_load_from_file (p, path, &error), "%s: %s", path,
      error ? error->message : "");
  schema_node = json_parser_get_root (p);
  schema_root = json_node_get_object (schema_node);
  g_free (path);
  g_free (data);
  return p;
}

/* Whether @text is JSON valid under the schema (the reason in @err). */
static gboolean
text_valid (const char *text, GString *err)
{
  JsonParser *p = json_parser_new ();
  gboolean ok = json_parser_load_from_data (p, text, -1, NULL)
      && validate (schema_node, json_parser_get_root (p), "$", err);
  g_object_unref (p);
  return ok;
}

/* Parses one frame's JSON, failing unless it is valid under the schema. */
static JsonParser *
parse_valid (const char *text)
{
  JsonParser *p = json_parser_new ();
  GError *error = NULL;
  fail_unless (json_parser_load_from_data (p, text, -1, &error), "not JSON (%s): %s",
      error ? error->message : "", text);
  GString *err = g_string_new (NULL);
  gboolean ok = validate (schema_node, json_parser_get_root (p), "$", err);
  fail_unless (ok, "schema violation: %s in %s", err->str, text);
  g_string_free (err, TRUE);
  return p;
}

/* ---- frames ----------------------------------------------------------------------- */

static GstVideoRegionOfInterestMeta *
add_region (GstBuffer *buf, const char *label, guint x, guint y, guint w, guint h, gint id)
{
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf, label,
      x, y, w, h);
  roi->id = id;
  return roi;
}

static void
add_detection (GstVideoRegionOfInterestMeta *roi, double x0, double y0, double x1, double y1,
    double conf, gint label_id, const char *label)
{
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
          "x_min", G_TYPE_DOUBLE, x0, "x_max", G_TYPE_DOUBLE, x1, "y_min", G_TYPE_DOUBLE, y0,
          "y_max", G_TYPE_DOUBLE, y1, "confidence", G_TYPE_DOUBLE, conf,
          "label_id", G_TYPE_INT, label_id, "label", G_TYPE_STRING, label, NULL));
}

static GstBuffer *
frame (GstClockTime pts)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H, NULL);
  gst_buffer_memset (buf, 0, 16, W * H);
  GST_BUFFER_PTS (buf) = pts;
  return buf;
}

/* frame 0: a tracked person with a colour classification, a car with an
 * attribute_name classification; frame 1: nothing; frame 2: a full-frame
 * scene classification; frame 3 (no timestamp): the person predicted. */
static GstBuffer *
scene_frame (int i)
{
  GstBuffer *buf = frame (i == 3 ? GST_CLOCK_TIME_NONE : (GstClockTime) i * 40 * GST_MSECOND);
  GstVideoRegionOfInterestMeta *roi;
  switch (i) {
    case 0:
      roi = add_region (buf, "person", 64, 48, 128, 192, 0);
      add_detection (roi, 0.1, 0.1, 0.3, 0.5, 0.75, 1, "person");
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id",
              "id", G_TYPE_INT, 3, "predicted", G_TYPE_BOOLEAN, FALSE, NULL));
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new (
              "classification_layer_name:color", "label", G_TYPE_STRING, "red",
              "label_id", G_TYPE_INT, 2, "confidence", G_TYPE_DOUBLE, 0.5,
              "layer_name", G_TYPE_STRING, "color", "model_name", G_TYPE_STRING, "attrs", NULL));
      roi = add_region (buf, "car", 320, 240, 64, 48, 1);
      add_detection (roi, 0.5, 0.5, 0.6, 0.6, 0.5, 2, "car");
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("classification",
              "label", G_TYPE_STRING, "sedan", "attribute_name", G_TYPE_STRING, "type",
              "model_name", G_TYPE_STRING, "vehicle-attributes", NULL));
      break;
    case 2:
      roi = add_region (buf, "indoor", 0, 0, W, H, 0);
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new (
              "classification_layer_name:prob", "label", G_TYPE_STRING, "indoor",
              "label_id", G_TYPE_INT, 5, "confidence", G_TYPE_DOUBLE, 0.875,
              "layer_name", G_TYPE_STRING, "prob", "model_name", G_TYPE_STRING, "scene", NULL));
      break;
    case 3:
      roi = add_region (buf, "person", 70, 48, 128, 192, 0);
      add_detection (roi, 0.109375, 0.1, 0.309375, 0.5, 0.75, 1, "person");
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id",
              "id", G_TYPE_INT, 3, "predicted", G_TYPE_BOOLEAN, TRUE, NULL));
      break;
    default:
      break;
  }
  return buf;
}

/* Runs the scene through @props into a file; its contents. */
static gchar *
publish (const char *props, guint n_frames)
{
  gchar *dir = g_dir_make_tmp ("m2i-metapublish-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "out.json", NULL);
  gchar *launch = g_strdup_printf ("m2imetapublish file-path=%s %s", path, props);
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, CAPS);
  for (guint i = 0; i < n_frames; i++) {
    GstBuffer *in = scene_frame ((int) i);
    GstBuffer *keep = gst_buffer_ref (in);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    fail_unless (out == keep, "the buffer does not pass through untouched");
    gst_buffer_unref (out);
    gst_buffer_unref (keep);
  }
  gst_harness_teardown (h);
  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  g_unlink (path);
  g_rmdir (dir);
  g_free (launch);
  g_free (path);
  g_free (dir);
  return text;
}

static JsonObject *
member_object (JsonObject *o, const char *name)
{
  fail_unless (json_object_has_member (o, name), "no %s", name);
  return json_object_get_object_member (o, name);
}

static void
assert_close (double got, double want)
{
  fail_unless (fabs (got - want) < 1e-9, "%.12g, want %.12g", got, want);
}

/* The values of the scene's four frames. */
static void
check_frame (JsonObject *f, int i)
{
  JsonObject *res = member_object (f, "resolution");
  fail_unless_equals_int (json_object_get_int_member (res, "width"), W);
  fail_unless_equals_int (json_object_get_int_member (res, "height"), H);
  if (i == 3)
    fail_if (json_object_has_member (f, "timestamp"));
  else
    fail_unless_equals_int64 (json_object_get_int_member (f, "timestamp"), i * 40 * GST_MSECOND);
  JsonArray *objs = json_object_get_array_member (f, "objects");
  guint want_n[] = { 2, 0, 1, 1 };
  fail_unless_equals_int (json_array_get_length (objs), want_n[i]);
  if (i == 0) {
    JsonObject *p = json_array_get_object_element (objs, 0);
    fail_unless_equals_int (json_object_get_int_member (p, "x"), 64);
    fail_unless_equals_int (json_object_get_int_member (p, "y"), 48);
    fail_unless_equals_int (json_object_get_int_member (p, "w"), 128);
    fail_unless_equals_int (json_object_get_int_member (p, "h"), 192);
    fail_unless_equals_int (json_object_get_int_member (p, "region_id"), 0);
    fail_unless_equals_int (json_object_get_int_member (p, "id"), 3);
    fail_if (json_object_get_boolean_member (p, "predicted"));
    fail_unless_equals_string (json_object_get_string_member (p, "roi_type"), "person");
    JsonObject *det = member_object (p, "detection"), *bb = member_object (det, "bounding_box");
    assert_close (json_object_get_double_member (bb, "x_min"), 0.1);
    assert_close (json_object_get_double_member (bb, "y_min"), 0.1);
    assert_close (json_object_get_double_member (bb, "x_max"), 0.3);
    assert_close (json_object_get_double_member (bb, "y_max"), 0.5);
    assert_close (json_object_get_double_member (det, "confidence"), 0.75);
    fail_unless_equals_int (json_object_get_int_member (det, "label_id"), 1);
    fail_unless_equals_string (json_object_get_string_member (det, "label"), "person");
    JsonObject *cls = member_object (p, "classification_layer_name:color");
    fail_unless_equals_string (json_object_get_string_member (cls, "label"), "red");
    fail_unless_equals_int (json_object_get_int_member (cls, "label_id"), 2);
    assert_close (json_object_get_double_member (cls, "confidence"), 0.5);
    fail_unless_equals_string (json_object_get_string_member (member_object (cls, "model"),
            "name"), "attrs");
    JsonObject *c = json_array_get_object_element (objs, 1);
    fail_unless_equals_int (json_object_get_int_member (c, "region_id"), 1);
    fail_if (json_object_has_member (c, "id"));
    JsonObject *type = member_object (c, "type");
    fail_unless_equals_string (json_object_get_string_member (type, "label"), "sedan");
    fail_unless_equals_string (json_object_get_string_member (member_object (type, "model"),
            "name"), "vehicle-attributes");
  } else if (i == 2) {
    JsonObject *s = json_array_get_object_element (objs, 0);
    fail_unless_equals_int (json_object_get_int_member (s, "w"), W);
    fail_if (json_object_has_member (s, "detection"));
    JsonObject *cls = member_object (s, "classification_layer_name:prob");
    fail_unless_equals_string (json_object_get_string_member (cls, "label"), "indoor");
    assert_close (json_object_get_double_member (cls, "confidence"), 0.875);
  } else if (i == 3) {
    JsonObject *p = json_array_get_object_element (objs, 0);
    fail_unless_equals_int (json_object_get_int_member (p, "x"), 70);
    fail_unless_equals_int (json_object_get_int_member (p, "id"), 3);
    fail_unless (json_object_get_boolean_member (p, "predicted"));
  }
}

/* ---- tests ------------------------------------------------------------------------- */

/* The validator and the schema reject what is wrong. */
GST_START_TEST (test_schema_rejects)
{
  JsonParser *sp = load_schema ();
  const char *good = "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[{\"x\":0,"
      "\"y\":0,\"w\":1,\"h\":1,\"region_id\":0}]}";
  const char *bad[] = {
    "{\"objects\":[]}",                                           /* no resolution */
    "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[],\"extra\":1}",
    "{\"resolution\":{\"width\":0,\"height\":2},\"objects\":[]}",
    "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[{\"x\":\"0\",\"y\":0,\"w\":1,"
        "\"h\":1,\"region_id\":0}]}",
    "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[{\"x\":0,\"y\":0,\"w\":1,"
        "\"h\":1,\"region_id\":0,\"id\":4}]}",                  /* id without predicted */
    "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[{\"x\":0,\"y\":0,\"w\":1,"
        "\"h\":1,\"region_id\":0,\"detection\":{\"bounding_box\":{\"x_min\":0,\"y_min\":0,"
        "\"x_max\":1}}}]}",                                        /* no y_max */
    "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[{\"x\":0,\"y\":0,\"w\":1,"
        "\"h\":1,\"region_id\":0,\"cls\":{\"label\":\"a\"}}]}",   /* classification without model */
    "{\"resolution\":{\"width\":2,\"height\":2},\"objects\":[],\"timestamp\":1.5}",
  };
  GString *err = g_string_new (NULL);
  fail_unless (text_valid (good, err), "%s", err->str);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_string_truncate (err, 0);
    fail_if (text_valid (bad[i], err), "accepted %s", bad[i]);
  }
  g_string_free (err, TRUE);
  g_object_unref (sp);
}
GST_END_TEST;

/* JSON lines: one valid line per frame, with the metas' values; the
 * source and tags properties on every line. */
GST_START_TEST (test_json_lines)
{
  JsonParser *sp = load_schema ();
  gchar *text = publish ("source=cam0 tags={\\\"site\\\":\\\"door\\\",\\\"n\\\":2}", 4);
  gchar **lines = g_strsplit (text, "\n", -1);
  fail_unless_equals_int (g_strv_length (lines), 5);      /* 4 lines and "" after the last \n */
  fail_unless_equals_string (lines[4], "");
  for (int i = 0; i < 4; i++) {
    JsonParser *p = parse_valid (lines[i]);
    JsonObject *f = json_node_get_object (json_parser_get_root (p));
    check_frame (f, i);
    fail_unless_equals_string (json_object_get_string_member (f, "source"), "cam0");
    JsonObject *tags = member_object (f, "tags");
    fail_unless_equals_string (json_object_get_string_member (tags, "site"), "door");
    fail_unless_equals_int (json_object_get_int_member (tags, "n"), 2);
    g_object_unref (p);
  }
  g_strfreev (lines);
  g_free (text);
  g_object_unref (sp);
}
GST_END_TEST;

/* file-format=json: one array of the frames; add-empty-results=false drops
 * the empty frame. */
GST_START_TEST (test_json_array)
{
  JsonParser *sp = load_schema ();
  gchar *text = publish ("file-format=json add-empty-results=false", 4);
  JsonParser *p = json_parser_new ();
  fail_unless (json_parser_load_from_data (p, text, -1, NULL), "%s", text);
  JsonArray *frames = json_node_get_array (json_parser_get_root (p));
  fail_unless_equals_int (json_array_get_length (frames), 3);
  int which[] = { 0, 2, 3 };
  for (guint i = 0; i < 3; i++) {
    JsonNode *n = json_array_get_element (frames, i);
    GString *err = g_string_new (NULL);
    fail_unless (validate (schema_node, n, "$", err), "%s", err->str);
    g_string_free (err, TRUE);
    check_frame (json_node_get_object (n), which[i]);
  }
  g_object_unref (p);
  g_free (text);
  g_object_unref (sp);
}
GST_END_TEST;

/* add-tensor-data: m2iinfer's outputs (the repository's Fashion-MNIST
 * classifier on a frame) with their values; the full-frame classification
 * region as an object. */
GST_START_TEST (test_tensor_data)
{
  JsonParser *sp = load_schema ();
  gchar *model = test_models_path ("fashion-mnist/fashion-mnist.xml");
  gchar *dir = g_dir_make_tmp ("m2i-metapublish-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "out.json", NULL);
  gchar *launch = g_strdup_printf ("m2iinfer model=%s device=CPU ! m2imetapublish "
      "add-tensor-data=true file-path=%s", model, path);
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=28,height=28,framerate=1/1");
  TestImage img;
  test_image_alloc (&img, M2I_FORMAT_IL_RGB888, 28, 28);
  test_image_fill (&img, 9);
  fail_unless_equals_int (gst_harness_push (h, test_image_to_buffer (&img, 0)), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  gst_harness_teardown (h);
  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  JsonParser *p = parse_valid (text);
  JsonObject *f = json_node_get_object (json_parser_get_root (p));
  GstM2iTensorMeta *tm = gst_buffer_get_m2i_tensor_meta (out);
  fail_unless (tm != NULL && tm->n_tensors == 1);
  const GstM2iTensor *t = &tm->tensors[0];
  JsonArray *tensors = json_object_get_array_member (f, "tensors");
  fail_unless_equals_int (json_array_get_length (tensors), 1);
  JsonObject *jt = json_array_get_object_element (tensors, 0);
  fail_unless_equals_string (json_object_get_string_member (jt, "name"), t->name);
  fail_unless_equals_string (json_object_get_string_member (jt, "model_name"), tm->model);
  fail_unless_equals_string (json_object_get_string_member (jt, "precision"), "FP32");
  JsonArray *dims = json_object_get_array_member (jt, "dims"), *data =
      json_object_get_array_member (jt, "data");
  fail_unless_equals_int (json_array_get_length (dims), t->n_dims);
  for (guint d = 0; d < t->n_dims; d++)
    fail_unless_equals_int64 (json_array_get_int_element (dims, d), t->dims[d]);
  fail_unless_equals_int (json_array_get_length (data), gst_m2i_tensor_numel (t));
  for (guint e = 0; e < json_array_get_length (data); e++)
    fail_unless (json_array_get_double_element (data, e) == ((const float *) t->data)[e]);
  /* the classification region */
  JsonArray *objs = json_object_get_array_member (f, "objects");
  fail_unless_equals_int (json_array_get_length (objs), 1);
  JsonObject *o = json_array_get_object_element (objs, 0);
  fail_unless_equals_int (json_object_get_int_member (o, "w"), 28);
  gchar *key = g_strdup_printf ("classification_layer_name:%s", t->name);
  JsonObject *cls = member_object (o, key);
  fail_unless_equals_string (json_object_get_string_member (member_object (cls, "model"), "name"),
      tm->model);
  gint64 best = json_object_get_int_member (cls, "label_id");
  for (guint e = 0; e < json_array_get_length (data); e++)
    fail_unless (((const float *) t->data)[e] <= ((const float *) t->data)[best]);
  g_free (key);
  gst_buffer_unref (out);
  g_object_unref (p);
  g_free (text);
  test_image_free (&img);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (launch);
  g_free (model);
  g_object_unref (sp);
}
GST_END_TEST;

/* Errors name the file or the property and say what to do. */
GST_START_TEST (test_errors)
{
  struct { const char *props; const char *want; } cases[] = {
    { "file-path=/nonexistent-dir/out.json", "cannot open /nonexistent-dir/out.json" },
    { "tags=not-json", "tags property is not a JSON object" },
    { "tags=[1,2]", "tags property is not a JSON object" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *launch = g_strdup_printf ("fakesrc ! m2imetapublish %s ! fakesink", cases[i].props);
    gchar *err = paused_error (launch);
    fail_unless (strstr (err, cases[i].want) != NULL, "%s: %s", cases[i].props, err);
    g_free (err);
    g_free (launch);
  }
  /* a full disk */
  if (g_file_test ("/dev/full", G_FILE_TEST_EXISTS)) {
    GstHarness *h = gst_harness_new_parse ("m2imetapublish file-path=/dev/full");
    GstBus *bus = test_harness_bus (h);
    gst_harness_set_src_caps_str (h, CAPS);
    fail_unless_equals_int (gst_harness_push (h, frame (0)), GST_FLOW_ERROR);
    gchar *err = test_bus_error (bus);
    fail_unless (strstr (err, "cannot write to /dev/full") != NULL, "%s", err);
    g_free (err);
    gst_bus_set_flushing (bus, TRUE);
    gst_element_set_bus (h->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* @buf (taken) through m2imetapublish into a file; the file's text (g_free). */
static gchar *
publish_buffer (GstBuffer *buf)
{
  gchar *dir = g_dir_make_tmp ("m2i-metapublish-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "out.json", NULL);
  gchar *launch = g_strdup_printf ("m2imetapublish file-path=%s", path);
  GstHarness *h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, CAPS);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  gst_buffer_unref (gst_harness_pull (h));
  gst_harness_teardown (h);
  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (launch);
  return text;
}

/* A region label (a quark: any bytes; structures refuse non-UTF-8
 * strings) that is not UTF-8 still makes valid JSON, the bad bytes
 * U+FFFD; a NaN confidence is left out. */
GST_START_TEST (test_odd_values)
{
  JsonParser *sp = load_schema ();
  GstBuffer *buf = frame (0);
  GstVideoRegionOfInterestMeta *roi = add_region (buf, "bad\xff", 1, 2, 3, 4, 0);
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection",
          "x_min", G_TYPE_DOUBLE, 0.1, "x_max", G_TYPE_DOUBLE, 0.2, "y_min", G_TYPE_DOUBLE, 0.1,
          "y_max", G_TYPE_DOUBLE, 0.2, "confidence", G_TYPE_DOUBLE, NAN, NULL));
  gchar *text = publish_buffer (buf);
  fail_unless (g_utf8_validate (text, -1, NULL));
  JsonParser *p = parse_valid (text);
  JsonObject *o = json_array_get_object_element (json_object_get_array_member (
          json_node_get_object (json_parser_get_root (p)), "objects"), 0);
  fail_unless_equals_string (json_object_get_string_member (o, "roi_type"), "bad\xef\xbf\xbd");
  /* the detection's label is the region's when it has none */
  fail_unless_equals_string (json_object_get_string_member (json_object_get_object_member (o,
              "detection"), "label"), "bad\xef\xbf\xbd");
  /* JSON has no NaN: the confidence is left out */
  fail_if (json_object_has_member (json_object_get_object_member (o, "detection"), "confidence"));
  g_object_unref (p);
  g_free (text);
  g_object_unref (sp);
}
GST_END_TEST;

/* A "keypoints" structure as m2iinfer writes a pose model's (positions
 * relative to the detection's box, NaN for one not found) comes out in
 * frame pixels: box corner + relative position x box size, null where not
 * found, with names, confidences and the skeleton; an inconsistent one
 * (data shorter than its dims say) is left out. */
GST_START_TEST (test_keypoints)
{
  JsonParser *sp = load_schema ();
  GstBuffer *buf = frame (0);
  /* box (64, 48)-(192, 240) in the 640x480 frame */
  GstVideoRegionOfInterestMeta *roi = add_region (buf, "person", 64, 48, 128, 192, 0);
  add_detection (roi, 0.1, 0.1, 0.3, 0.5, 0.8, 0, "person");
  /* the neck's x, 64 + 128/3 px, is not a binary fraction */
  const float rel[6] = { 0.5f, 0.0f, 1.0f / 3, 0.75f, NAN, NAN };
  const float conf[3] = { 0.9f, 0.5f, -1.0f };
  const char *names[3] = { "nose", "neck", "shoulder_r" };
  const guint pairs[4] = { 1, 0, 1, 2 };
  gst_video_region_of_interest_meta_add_param (roi, test_keypoints_structure (3, rel,
          sizeof rel, conf, names, pairs, 2));
  /* data shorter than its dims */
  roi = add_region (buf, "other", 0, 0, 10, 10, 1);
  gst_video_region_of_interest_meta_add_param (roi, test_keypoints_structure (3, rel,
          5 * sizeof (float), conf, names, pairs, 2));
  gchar *text = publish_buffer (buf);
  JsonParser *p = parse_valid (text);
  JsonArray *objs = json_object_get_array_member (json_node_get_object (
          json_parser_get_root (p)), "objects");
  fail_unless_equals_int (json_array_get_length (objs), 2);
  fail_if (json_object_has_member (json_array_get_object_element (objs, 1), "keypoints"));
  JsonObject *k = member_object (json_array_get_object_element (objs, 0), "keypoints");
  fail_unless_equals_string (json_object_get_string_member (k, "format"), "keypoints");
  JsonArray *pts = json_object_get_array_member (k, "points");
  fail_unless_equals_int (json_array_get_length (pts), 3);
  const double bx = 0.1 * W, by = 0.1 * H, bw = 0.2 * W, bh = 0.4 * H;
  for (guint i = 0; i < 3; i++) {
    JsonObject *pt = json_array_get_object_element (pts, i);
    fail_unless_equals_string (json_object_get_string_member (pt, "name"), names[i]);
    assert_close (json_object_get_double_member (pt, "confidence"), conf[i]);
    if (i == 2) {
      fail_unless (json_object_get_null_member (pt, "x") && json_object_get_null_member (pt, "y"));
      continue;
    }
    /* to 1/16 pixel, half a step at most from the exact position */
    double x = json_object_get_double_member (pt, "x"), y = json_object_get_double_member (pt,
        "y");
    fail_unless (fabs (x - (bx + rel[2 * i] * bw)) <= 1.0 / 32);
    fail_unless (fabs (y - (by + rel[2 * i + 1] * bh)) <= 1.0 / 32);
    fail_unless_equals_float (x * 16, round (x * 16));
    fail_unless_equals_float (y * 16, round (y * 16));
  }
  /* nose (0.5, 0) of the box: (128, 48); neck (1/3, 0.75): (106.67, 192),
   * printed short, without the float's noise */
  JsonObject *nose = json_array_get_object_element (pts, 0);
  assert_close (json_object_get_double_member (nose, "x"), 128);
  assert_close (json_object_get_double_member (nose, "y"), 48);
  fail_unless (strstr (text, "\"x\":106.6875,\"y\":192.0,"), "%s", text);
  JsonArray *c = json_object_get_array_member (k, "connections");
  fail_unless_equals_int (json_array_get_length (c), 2);
  for (guint i = 0; i < 2; i++) {
    JsonArray *pair = json_array_get_array_element (c, i);
    fail_unless_equals_int (json_array_get_int_element (pair, 0), pairs[2 * i]);
    fail_unless_equals_int (json_array_get_int_element (pair, 1), pairs[2 * i + 1]);
  }
  g_object_unref (p);
  g_free (text);
  g_object_unref (sp);
}
GST_END_TEST;

GST_START_TEST (test_documented)
{
  fail_unless_equals_int (test_assert_documented ("m2imetapublish"), 6);
}
GST_END_TEST;

static Suite *
m2i_metapublish_suite (void)
{
  Suite *s = suite_create ("m2i-metapublish");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_schema_rejects);
  tcase_add_test (tc, test_json_lines);
  tcase_add_test (tc, test_json_array);
  tcase_add_test (tc, test_tensor_data);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_odd_values);
  tcase_add_test (tc, test_keypoints);
  tcase_add_test (tc, test_documented);
  return s;
}

GST_CHECK_MAIN (m2i_metapublish);
