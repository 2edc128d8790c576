/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-test-util.c — see decode-test-util.h. */
#include "decode-test-util.h"

#include <string.h>

/* Port precisions are spelled as element types ("f32", "i64"): the reader
 * takes both spellings. */
static void
append_dims (GString *s, const M2iShape *sh)
{
  for (gint i = 0; i < sh->rank; i++)
    g_string_append_printf (s, "<dim>%" G_GINT64_FORMAT "</dim>", sh->dims[i]);
}

M2iIrModel *
test_model_new (const TestOutput *outputs, guint n, const char *rt_info)
{
  GString *layers = g_string_new (NULL), *edges = g_string_new (NULL);
  for (guint i = 0; i < n; i++) {
    const TestOutput *o = &outputs[i];
    M2iShape in = o->in_shape.rank ? o->in_shape : TEST_SHAPE (1, 3, 8, 8);
    gint p = 3 * (gint) i, op = p + 1, res = p + 2;
    g_autofree gchar *ins = m2i_shape_to_string (&in);
    /* "[1,3,8,8]" without the brackets */
    ins[strlen (ins) - 1] = '\0';
    g_string_append_printf (layers, "<layer id=\"%d\" name=\"in%u\" type=\"Parameter\" "
        "version=\"opset1\"><data shape=\"%s\" element_type=\"f32\"/><output><port id=\"0\" "
        "precision=\"FP32\" names=\"in%u\">", p, i, ins + 1, i);
    append_dims (layers, &in);
    g_string_append (layers, "</port></output></layer>\n");
    g_string_append_printf (layers, "<layer id=\"%d\" name=\"%s\" type=\"%s\" version=\"opset1\">"
        "<data %s/><input><port id=\"0\" precision=\"FP32\">", op, o->name, o->type,
        o->attrs ? o->attrs : "");
    append_dims (layers, &in);
    g_string_append_printf (layers, "</port></input><output><port id=\"1\" precision=\"%s\" "
        "names=\"%s\">", m2i_element_type_to_string (o->et), o->name);
    append_dims (layers, &o->shape);
    g_string_append_printf (layers, "</port></output></layer>\n<layer id=\"%d\" name=\"%s/sink\" "
        "type=\"Result\" version=\"opset1\"><input><port id=\"0\" precision=\"%s\">", res,
        o->name, m2i_element_type_to_string (o->et));
    append_dims (layers, &o->shape);
    g_string_append (layers, "</port></input></layer>\n");
    g_string_append_printf (edges, "<edge from-layer=\"%d\" from-port=\"0\" to-layer=\"%d\" "
        "to-port=\"0\"/>\n<edge from-layer=\"%d\" from-port=\"1\" to-layer=\"%d\" "
        "to-port=\"0\"/>\n", p, op, op, res);
  }
  g_autofree gchar *xml = g_strdup_printf ("<?xml version=\"1.0\"?>\n<net name=\"test\" "
      "version=\"11\">\n<layers>\n%s</layers>\n<edges>\n%s</edges>\n%s%s%s</net>\n", layers->str,
      edges->str, rt_info ? "<rt_info>\n" : "", rt_info ? rt_info : "",
      rt_info ? "</rt_info>\n" : "");
  g_string_free (layers, TRUE);
  g_string_free (edges, TRUE);
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load_from_memory (xml, strlen (xml), NULL, "test.xml", &error);
  g_assert_no_error (error);
  return m;
}

static M2iIrModel *
load_path (const char *path)
{
  if (!path || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return NULL;
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (path, NULL, &error);
  g_assert_no_error (error);
  return m;
}

M2iIrModel *
test_load_shared_model (const char *relative)
{
  g_autofree gchar *path = test_shared_model (relative);
  return load_path (path);
}

M2iIrModel *
test_load_project_model (const char *relative)
{
  g_autofree gchar *path = test_models_path (relative);
  M2iIrModel *m = load_path (path);
  g_assert_nonnull (m);
  return m;
}

void
test_options_init (M2iDecoderOptions *o)
{
  m2i_decoder_options_init (o);
}

TestDecoder *
test_decoder_new (const InferDecoderClass *klass, M2iIrModel *model,
    const M2iDecoderOptions *opts, GError **error)
{
  M2iDecoderOptions o = *opts;
  o.type = klass->type;
  M2iDecoder *dec = m2i_decoder_new (model, &o, error);
  if (!dec)
    return NULL;
  g_assert_cmpint (m2i_decoder_get_model_type (dec), ==, klass->type);
  TestDecoder *d = g_new0 (TestDecoder, 1);
  d->dec = dec;
  d->opts = o;
  d->size = &dec->capacity;
  d->describe = m2i_decoder_describe (dec);
  g_test_message ("%s", d->describe);
  d->result = m2i_decoder_new_result (dec);
  return d;
}

gboolean
test_decoder_decode (TestDecoder *d, const M2iTensor *outputs, guint n, const M2iInferGeometry *g,
    GError **error)
{
  M2iInferGeometry square = test_geometry (64, 64, 64, 64, 1, 1, 0, 0);
  m2i_decoder_set_options (d->dec, &d->opts);
  return m2i_decoder_decode (d->dec, outputs, n, g ? g : &square, d->result, error);
}

void
test_decoder_free (TestDecoder *d)
{
  if (!d)
    return;
  m2i_infer_result_free (d->result);
  m2i_decoder_free (d->dec);
  g_free (d);
}

M2iInferGeometry
test_geometry (gint src_w, gint src_h, gint model_w, gint model_h, double scale_x,
    double scale_y, double pad_x, double pad_y)
{
  return (M2iInferGeometry) { .model_width = model_w, .model_height = model_h,
    .source_width = src_w, .source_height = src_h, .scale_x = scale_x, .scale_y = scale_y,
    .pad_x = pad_x, .pad_y = pad_y };
}

float *
test_shared_f32 (const char *relative, gsize numel)
{
  g_autofree gchar *path = test_shared_path (relative);
  if (!path || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return NULL;
  gchar *data = NULL;
  gsize len = 0;
  GError *error = NULL;
  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (len, ==, numel * sizeof (float));
  return (float *) data;
}

double
test_iou (double ax1, double ay1, double ax2, double ay2, double bx1, double by1, double bx2,
    double by2)
{
  double w = MIN (ax2, bx2) - MAX (ax1, bx1), h = MIN (ay2, by2) - MAX (ay1, by1);
  if (w <= 0 || h <= 0)
    return 0;
  double i = w * h;
  return i / ((ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - i);
}
