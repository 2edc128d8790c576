/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ir-test-util.h"
#include <test-tiny-ssd.h>

#include <glib/gstdio.h>
#include <string.h>

typedef struct {
  gint id;
  M2iElementType type;
  M2iShape shape;
  gint out_port;
} LayerOut;

struct _TestIr {
  gint version;
  GString *layers, *edges;
  GByteArray *bin;
  GArray *outs;                  /* LayerOut */
  gchar *xml;
  GBytes *weights;
};

TestIr *
test_ir_new (gint version)
{
  TestIr *b = g_new0 (TestIr, 1);
  b->version = version;
  b->layers = g_string_new (NULL);
  b->edges = g_string_new (NULL);
  b->bin = g_byte_array_new ();
  b->outs = g_array_new (FALSE, FALSE, sizeof (LayerOut));
  return b;
}

void
test_ir_free (TestIr *b)
{
  g_string_free (b->layers, TRUE);
  g_string_free (b->edges, TRUE);
  g_byte_array_unref (b->bin);
  g_array_free (b->outs, TRUE);
  g_free (b->xml);
  if (b->weights)
    g_bytes_unref (b->weights);
  g_free (b);
}

static void
append_dims (GString *s, const M2iShape *shape)
{
  for (gint i = 0; i < shape->rank; i++)
    g_string_append_printf (s, "<dim>%" G_GINT64_FORMAT "</dim>", shape->dims[i]);
}

static gchar *
shape_attr (const M2iShape *shape)
{
  GString *s = g_string_new (NULL);
  for (gint i = 0; i < shape->rank; i++)
    g_string_append_printf (s, i ? ",%" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, shape->dims[i]);
  return g_string_free (s, FALSE);
}

static const LayerOut *
find_out (TestIr *b, gint id)
{
  for (guint i = 0; i < b->outs->len; i++)
    if (g_array_index (b->outs, LayerOut, i).id == id)
      return &g_array_index (b->outs, LayerOut, i);
  g_error ("test IR: no layer %d", id);
}

static gint
add_layer (TestIr *b, const char *type, const char *opset, const char *attrs, gint n_inputs,
    const gint *inputs, M2iElementType out_type, const M2iShape *out_shape, gboolean has_output)
{
  gint id = b->outs->len;
  g_string_append_printf (b->layers, "    <layer id=\"%d\" name=\"%s_%d\" type=\"%s\" version=\"%s\">\n",
      id, type, id, type, opset);
  if (attrs)
    g_string_append_printf (b->layers, "      <data %s/>\n", attrs);
  if (n_inputs) {
    g_string_append (b->layers, "      <input>\n");
    for (gint i = 0; i < n_inputs; i++) {
      const LayerOut *src = find_out (b, inputs[i]);
      g_string_append_printf (b->layers, "        <port id=\"%d\">", i);
      append_dims (b->layers, &src->shape);
      g_string_append (b->layers, "</port>\n");
      g_string_append_printf (b->edges, "    <edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n",
          src->id, src->out_port, id, i);
    }
    g_string_append (b->layers, "      </input>\n");
  }
  if (has_output) {
    const char *prec = m2i_element_type_to_string (out_type);
    g_autofree gchar *upper = NULL;
    if (b->version == 10) {
      static const char *v10[][2] = { { "f32", "FP32" }, { "f16", "FP16" }, { "f64", "FP64" },
        { "boolean", "BOOL" }, { "bf16", "BF16" } };
      upper = g_ascii_strup (prec, -1);
      for (guint i = 0; i < G_N_ELEMENTS (v10); i++)
        if (!strcmp (prec, v10[i][0]))
          prec = v10[i][1];
      if (prec == m2i_element_type_to_string (out_type))
        prec = upper;
    }
    /* v11 names tensors; v10 has no names attribute */
    g_autofree gchar *names = b->version == 11 ? g_strdup_printf (" names=\"t%d\"", id) : g_strdup ("");
    g_string_append_printf (b->layers, "      <output>\n        <port id=\"%d\" precision=\"%s\"%s>",
        n_inputs, prec, names);
    append_dims (b->layers, out_shape);
    g_string_append (b->layers, "</port>\n      </output>\n");
  }
  g_string_append (b->layers, "    </layer>\n");
  LayerOut o = { id, out_type, out_shape ? *out_shape : (M2iShape) { 0 }, n_inputs };
  g_array_append_val (b->outs, o);
  return id;
}

gint
test_ir_parameter (TestIr *b, const char *name, M2iElementType type, const M2iShape *shape)
{
  g_autofree gchar *s = shape_attr (shape);
  g_autofree gchar *attrs = g_strdup_printf ("shape=\"%s\" element_type=\"%s\"", s,
      m2i_element_type_to_string (type));
  gint id = add_layer (b, "Parameter", "opset1", attrs, 0, NULL, type, shape, TRUE);
  /* tests name their inputs */
  g_autofree gchar *old = g_strdup_printf ("name=\"Parameter_%d\"", id);
  g_autofree gchar *new = g_strdup_printf ("name=\"%s\"", name);
  g_string_replace (b->layers, old, new, 1);
  return id;
}

gint
test_ir_const (TestIr *b, M2iElementType type, const M2iShape *shape, gconstpointer data)
{
  gsize size = m2i_shape_numel (shape) * m2i_element_type_size (type);
  /* keep every constant aligned as the model converter does */
  while (b->bin->len % 8)
    g_byte_array_append (b->bin, (const guint8 *) "", 1);
  gsize offset = b->bin->len;
  g_byte_array_append (b->bin, data, size);
  g_autofree gchar *s = shape_attr (shape);
  g_autofree gchar *attrs = g_strdup_printf ("element_type=\"%s\" shape=\"%s\" offset=\"%"
      G_GSIZE_FORMAT "\" size=\"%" G_GSIZE_FORMAT "\"", m2i_element_type_to_string (type), s,
      offset, size);
  return add_layer (b, "Const", "opset1", attrs, 0, NULL, type, shape, TRUE);
}

gint
test_ir_op (TestIr *b, const char *type, const char *opset, const char *attrs, gint n_inputs,
    const gint *inputs, M2iElementType out_type, const M2iShape *out_shape)
{
  return add_layer (b, type, opset, attrs, n_inputs, inputs, out_type, out_shape, TRUE);
}

gint
test_ir_result (TestIr *b, gint input)
{
  return add_layer (b, "Result", "opset1", NULL, 1, &input, M2I_ET_UNDEFINED, NULL, FALSE);
}

const char *
test_ir_xml (TestIr *b)
{
  g_free (b->xml);
  b->xml = g_strdup_printf ("<?xml version=\"1.0\"?>\n<net name=\"test\" version=\"%d\">\n"
      "  <layers>\n%s  </layers>\n  <edges>\n%s  </edges>\n</net>\n", b->version,
      b->layers->str, b->edges->str);
  return b->xml;
}

GBytes *
test_ir_weights (TestIr *b)
{
  if (b->weights)
    g_bytes_unref (b->weights);
  b->weights = g_bytes_new (b->bin->data, b->bin->len);
  return b->weights;
}

M2iIrModel *
test_ir_load (TestIr *b, GError **error)
{
  const char *xml = test_ir_xml (b);
  return m2i_ir_model_load_from_memory (xml, strlen (xml), test_ir_weights (b), "test.xml", error);
}

gchar *
test_ir_write_files (const char *xml, GBytes *bin)
{
  return test_write_model_files (xml, bin);
}

void
test_ir_remove_files (gchar *xml_path)
{
  test_remove_model_files (xml_path);
}

/* Concat's input ports are listed 4 then 2: ordinal 0 is port 4 (the
 * Const), so the output is [w; x] — the order OpenVINO gives them. */
const char test_ir_v10_model[] =
  "<?xml version=\"1.0\"?>\n"
  "<net name=\"demo10\" version=\"10\">\n"
  "  <layers>\n"
  "    <layer id=\"7\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
  "      <data shape=\"1, 2, 3\" element_type=\"f32\"/>\n"
  "      <output><port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim><dim>3</dim></port></output>\n"
  "    </layer>\n"
  "    <layer id=\"3\" name=\"w\" type=\"Const\" version=\"opset1\">\n"
  "      <data element_type=\"f32\" shape=\"1,1,3\" offset=\"4\" size=\"12\"/>\n"
  "      <output><port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>3</dim></port></output>\n"
  "    </layer>\n"
  "    <layer id=\"5\" name=\"cat\" type=\"Concat\" version=\"opset1\">\n"
  "      <data axis=\"1\"/>\n"
  "      <rt_info><attribute name=\"fused_names\" version=\"0\" value=\"cat,cat2\"/></rt_info>\n"
  "      <input>\n"
  "        <port id=\"4\"><dim>1</dim><dim>1</dim><dim>3</dim></port>\n"
  "        <port id=\"2\"><dim>1</dim><dim>2</dim><dim>3</dim></port>\n"
  "      </input>\n"
  "      <output><port id=\"9\" precision=\"FP32\"><dim>1</dim><dim>3</dim><dim>3</dim></port></output>\n"
  "    </layer>\n"
  "    <layer id=\"1\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
  "      <input><port id=\"0\"><dim>1</dim><dim>3</dim><dim>3</dim></port></input>\n"
  "    </layer>\n"
  "  </layers>\n"
  "  <edges>\n"
  "    <edge from-layer=\"7\" from-port=\"0\" to-layer=\"5\" to-port=\"2\"/>\n"
  "    <edge from-layer=\"3\" from-port=\"1\" to-layer=\"5\" to-port=\"4\"/>\n"
  "    <edge from-layer=\"5\" from-port=\"9\" to-layer=\"1\" to-port=\"0\"/>\n"
  "  </edges>\n"
  "  <meta_data><MO_version value=\"2021.1\"/><cli_parameters><data_type value=\"FP32\"/></cli_parameters></meta_data>\n"
  "</net>\n";
