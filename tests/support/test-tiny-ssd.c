/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-tiny-ssd.c — the tiny SSD detector of test-tiny-ssd.h, written as IR
 * v10 text and weights. */
#include "test-tiny-ssd.h"

#include <glib/gstdio.h>
#include <string.h>

#define SIDE 8
#define KEEP 10

static void
dims (GString *s, const gint64 *d, gint n)
{
  for (gint i = 0; i < n; i++)
    g_string_append_printf (s, "<dim>%" G_GINT64_FORMAT "</dim>", d[i]);
}

/* One layer: its inputs' shapes (port i) and one output (port n_in). */
static void
layer (GString *s, gint id, const char *type, const char *data, gint n_in,
    const gint64 (*in)[4], const gint *in_rank, const char *prec, const gint64 *out,
    gint out_rank)
{
  g_string_append_printf (s, "    <layer id=\"%d\" name=\"%s%d\" type=\"%s\" version=\"opset1\">\n",
      id, type, id, type);
  if (data)
    g_string_append_printf (s, "      <data %s/>\n", data);
  if (n_in) {
    g_string_append (s, "      <input>\n");
    for (gint i = 0; i < n_in; i++) {
      g_string_append_printf (s, "        <port id=\"%d\">", i);
      dims (s, in[i], in_rank[i]);
      g_string_append (s, "</port>\n");
    }
    g_string_append (s, "      </input>\n");
  }
  if (out) {
    g_string_append_printf (s, "      <output><port id=\"%d\" precision=\"%s\">", n_in, prec);
    dims (s, out, out_rank);
    g_string_append (s, "</port></output>\n");
  }
  g_string_append (s, "    </layer>\n");
}

static void
edge (GString *s, gint from, gint from_port, gint to, gint to_port)
{
  g_string_append_printf (s, "    <edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" "
      "to-port=\"%d\"/>\n", from, from_port, to, to_port);
}

/* A Const of @n elements of @size bytes at the end of @bin (8-byte aligned). */
static gchar *
const_data (GByteArray *bin, const char *type, const char *shape, gconstpointer v, gsize n,
    gsize size)
{
  while (bin->len % 8)
    g_byte_array_append (bin, (const guint8 *) "", 1);
  gsize offset = bin->len;
  g_byte_array_append (bin, v, (guint) (n * size));
  return g_strdup_printf ("element_type=\"%s\" offset=\"%" G_GSIZE_FORMAT "\" shape=\"%s\" "
      "size=\"%" G_GSIZE_FORMAT "\"", type, offset, shape, n * size);
}

gchar *
test_tiny_ssd_write (gint B)
{
  g_assert (B >= 1 && B <= 64);
  GString *l = g_string_new (NULL), *e = g_string_new (NULL);
  GByteArray *bin = g_byte_array_new ();
  /* box offsets from the colour (BGR order, 0..255): small, varied */
  static const float loc_w[4][3] = {
    { 0.0020f, -0.0010f, 0.0005f }, { -0.0010f, 0.0015f, 0.0010f },
    { 0.0010f, 0.0005f, -0.0015f }, { -0.0005f, -0.0010f, 0.0020f },
  };
  /* background vs "object": the object wins where red exceeds blue */
  static const float conf_w[2][3] = { { 0.03f, 0.0f, -0.03f }, { -0.03f, 0.0f, 0.03f } };
  static const gint64 perm[4] = { 0, 2, 3, 1 }, flat[2] = { 0, -1 }, split[3] = { 0, -1, 2 };
  float priors[2][SIDE * SIDE * 4];
  for (gint y = 0; y < SIDE; y++)
    for (gint x = 0; x < SIDE; x++) {
      float *p = priors[0] + (y * SIDE + x) * 4, *v = priors[1] + (y * SIDE + x) * 4;
      float cx = (x + 0.5f) / SIDE, cy = (y + 0.5f) / SIDE;
      p[0] = cx - 0.125f;
      p[1] = cy - 0.125f;
      p[2] = cx + 0.125f;
      p[3] = cy + 0.125f;
      v[0] = v[1] = 0.1f;
      v[2] = v[3] = 0.2f;
    }
  const gint64 img[4] = { B, 3, SIDE, SIDE }, w4[4] = { 4, 3, 1, 1 }, w2[4] = { 2, 3, 1, 1 };
  const gint64 loc4[4] = { B, 4, SIDE, SIDE }, conf4[4] = { B, 2, SIDE, SIDE };
  const gint64 locp[4] = { B, SIDE, SIDE, 4 }, confp[4] = { B, SIDE, SIDE, 2 };
  const gint64 locf[2] = { B, SIDE * SIDE * 4 }, conf3[3] = { B, SIDE * SIDE, 2 };
  const gint64 conff[2] = { B, SIDE * SIDE * 2 }, pri[3] = { 1, 2, SIDE * SIDE * 4 };
  const gint64 det[4] = { 1, 1, (gint64) B * KEEP, 7 };
  const gint64 v4[1] = { 4 }, v2[1] = { 2 }, v3[1] = { 3 };
  g_autofree gchar *pshape = g_strdup_printf ("shape=\"%d,3,%d,%d\" element_type=\"f32\"", B,
      SIDE, SIDE);
  g_autofree gchar *c_locw = const_data (bin, "f32", "4,3,1,1", loc_w, 12, 4);
  g_autofree gchar *c_confw = const_data (bin, "f32", "2,3,1,1", conf_w, 6, 4);
  g_autofree gchar *c_perm = const_data (bin, "i64", "4", perm, 4, 8);
  g_autofree gchar *c_flat = const_data (bin, "i64", "2", flat, 2, 8);
  g_autofree gchar *c_split = const_data (bin, "i64", "3", split, 3, 8);
  g_autofree gchar *c_pri = const_data (bin, "f32", "1,2,256", priors, 2 * SIDE * SIDE * 4, 4);
  const char *conv = "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" "
      "auto_pad=\"explicit\"";
  const char *do_attrs = "num_classes=\"2\" background_label_id=\"0\" top_k=\"20\" "
      "keep_top_k=\"10\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" "
      "share_location=\"1\" nms_threshold=\"0.45\" confidence_threshold=\"0.3\" "
      "normalized=\"1\" input_height=\"1\" input_width=\"1\" "
      "variance_encoded_in_target=\"0\"";
  gint r4[3] = { 4, 4, 4 }, r41[2] = { 4, 1 }, r31[2] = { 3, 1 };
  gint r3 = 3, rdet[3] = { 2, 2, 3 };
  layer (l, 0, "Parameter", pshape, 0, NULL, NULL, "FP32", img, 4);
  layer (l, 1, "Const", c_locw, 0, NULL, NULL, "FP32", w4, 4);
  layer (l, 2, "Convolution", conv, 2, (const gint64[][4]) { { B, 3, SIDE, SIDE }, { 4, 3, 1, 1 } },
      r4, "FP32", loc4, 4);
  layer (l, 3, "Const", c_perm, 0, NULL, NULL, "I64", v4, 1);
  layer (l, 4, "Transpose", NULL, 2, (const gint64[][4]) { { B, 4, SIDE, SIDE }, { 4 } }, r41,
      "FP32", locp, 4);
  layer (l, 5, "Const", c_flat, 0, NULL, NULL, "I64", v2, 1);
  layer (l, 6, "Reshape", "special_zero=\"True\"", 2, (const gint64[][4]) { { B, SIDE, SIDE, 4 },
      { 2 } }, r41, "FP32", locf, 2);
  layer (l, 7, "Const", c_confw, 0, NULL, NULL, "FP32", w2, 4);
  layer (l, 8, "Convolution", conv, 2, (const gint64[][4]) { { B, 3, SIDE, SIDE }, { 2, 3, 1, 1 } },
      r4, "FP32", conf4, 4);
  layer (l, 9, "Transpose", NULL, 2, (const gint64[][4]) { { B, 2, SIDE, SIDE }, { 4 } }, r41,
      "FP32", confp, 4);
  layer (l, 10, "Const", c_split, 0, NULL, NULL, "I64", v3, 1);
  layer (l, 11, "Reshape", "special_zero=\"True\"", 2, (const gint64[][4]) { { B, SIDE, SIDE, 2 },
      { 3 } }, r41, "FP32", conf3, 3);
  layer (l, 12, "SoftMax", "axis=\"2\"", 1, (const gint64[][4]) { { B, SIDE * SIDE, 2 } }, &r3,
      "FP32", conf3, 3);
  layer (l, 13, "Reshape", "special_zero=\"True\"", 2, (const gint64[][4]) { { B, SIDE * SIDE, 2 },
      { 2 } }, r31, "FP32", conff, 2);
  layer (l, 14, "Const", c_pri, 0, NULL, NULL, "FP32", pri, 3);
  layer (l, 15, "DetectionOutput", do_attrs, 3, (const gint64[][4]) { { B, SIDE * SIDE * 4 },
      { B, SIDE * SIDE * 2 }, { 1, 2, SIDE * SIDE * 4 } }, rdet, "FP32", det, 4);
  layer (l, 16, "Result", NULL, 1, (const gint64[][4]) { { 1, 1, (gint64) B * KEEP, 7 } }, &r4[0],
      NULL, NULL, 0);
  edge (e, 0, 0, 2, 0);
  edge (e, 1, 0, 2, 1);
  edge (e, 2, 2, 4, 0);
  edge (e, 3, 0, 4, 1);
  edge (e, 4, 2, 6, 0);
  edge (e, 5, 0, 6, 1);
  edge (e, 0, 0, 8, 0);
  edge (e, 7, 0, 8, 1);
  edge (e, 8, 2, 9, 0);
  edge (e, 3, 0, 9, 1);
  edge (e, 9, 2, 11, 0);
  edge (e, 10, 0, 11, 1);
  edge (e, 11, 2, 12, 0);
  edge (e, 12, 1, 13, 0);
  edge (e, 5, 0, 13, 1);
  edge (e, 6, 2, 15, 0);
  edge (e, 13, 2, 15, 1);
  edge (e, 14, 0, 15, 2);
  edge (e, 15, 3, 16, 0);
  g_autofree gchar *xml = g_strdup_printf ("<?xml version=\"1.0\"?>\n<net name=\"tiny-ssd\" "
      "version=\"10\">\n  <layers>\n%s  </layers>\n  <edges>\n%s  </edges>\n</net>\n", l->str,
      e->str);
  g_string_free (l, TRUE);
  g_string_free (e, TRUE);
  GBytes *b = g_byte_array_free_to_bytes (bin);
  gchar *path = test_write_model_files (xml, b);
  g_bytes_unref (b);
  return path;
}

void
test_tiny_ssd_frame (TestImage *t, gint w, gint h, guint i)
{
  test_image_alloc (t, M2I_FORMAT_SP_NV12_8, w, h);
  guint8 *y = t->img.data[0], *uv = t->img.data[1];
  for (gint r = 0; r < h; r++)
    for (gint c = 0; c < w; c++)
      y[r * t->img.stride[0] + c] = (guint8) (60 + (r * 5 + c * 3 + i * 17) % 120);
  for (gint r = 0; r < h / 2; r++)
    for (gint c = 0; c < w / 2; c++) {
      gboolean hot = ((c + (gint) i) / 3 + r / 2) % 3 == 0;
      uv[r * t->img.stride[1] + 2 * c] = hot ? 70 : 170;         /* U: blue */
      uv[r * t->img.stride[1] + 2 * c + 1] = hot ? 200 : 90;     /* V: red */
    }
}

gchar *
test_write_model_files (const char *xml, GBytes *bin)
{
  gchar *dir = g_dir_make_tmp ("m2i-model-XXXXXX", NULL);
  g_assert_nonnull (dir);
  gchar *xml_path = g_build_filename (dir, "model.xml", NULL);
  g_assert_true (g_file_set_contents (xml_path, xml, -1, NULL));
  if (bin) {
    g_autofree gchar *bin_path = g_build_filename (dir, "model.bin", NULL);
    gsize len;
    const gchar *d = g_bytes_get_data (bin, &len);
    g_assert_true (g_file_set_contents (bin_path, d ? d : "", len, NULL));
  }
  g_free (dir);
  return xml_path;
}

void
test_remove_model_files (gchar *xml_path)
{
  g_autofree gchar *dir = g_path_get_dirname (xml_path);
  g_autofree gchar *bin_path = g_build_filename (dir, "model.bin", NULL);
  g_unlink (xml_path);
  g_unlink (bin_path);
  g_rmdir (dir);
  g_free (xml_path);
}
