/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-support.c — see test-support.h. */
#include "test-support.h"
#include <m2i-data.h>

#include <glib/gstdio.h>
#include <stdarg.h>
#include <sys/stat.h>

gchar *
test_env_path (const char *var, const char *relative)
{
  const char *base = g_getenv (var);
  return base ? g_build_filename (base, relative, NULL) : NULL;
}

gchar *test_shared_path (const char *relative) { return test_env_path ("M2I_SHARED_MODELS", relative); }
gchar *test_models_path (const char *relative) { return test_env_path ("M2I_MODELS_DIR", relative); }
gchar *test_data_path (const char *relative) { return test_env_path ("M2I_TEST_DATA", relative); }

gchar *
test_shared_model (const char *relative)
{
  gchar *path = test_shared_path (relative);
  if (path && g_file_test (path, G_FILE_TEST_EXISTS))
    return path;
  g_free (path);
  if (g_test_initialized ())
    g_test_skip ("$M2I_SHARED_MODELS (../shared/models/external) is not here");
  return NULL;
}

GBytes *
test_read_data (const char *relative)
{
  g_autofree gchar *path = test_data_path (relative);
  if (!path)
    g_error ("M2I_TEST_DATA is not set (run the test through meson test)");
  GError *error = NULL;
  GBytes *b = m2i_data_read (path, &error);
  g_assert_no_error (error);
  return b;
}

gchar *
test_run_program (const char *program, gint *status, gchar **err, ...)
{
  g_assert_nonnull (program);
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) program);
  va_list ap;
  va_start (ap, err);
  for (const char *a; (a = va_arg (ap, const char *));)
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  gchar *out = NULL;
  GError *error = NULL;
  g_assert_true (g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
      &out, err, status, &error));
  g_assert_no_error (error);
  g_ptr_array_free (argv, TRUE);
  return out;
}

gint
test_argmax (const float *p, gint n)
{
  gint best = 0;
  for (gint i = 1; i < n; i++)
    if (p[i] > p[best])
      best = i;
  return best;
}

void
test_top_k (const float *p, gint n, gint k, gint *out)
{
  for (gint j = 0; j < k; j++) {
    out[j] = -1;
    for (gint i = 0; i < n; i++) {
      gboolean taken = FALSE;
      for (gint t = 0; t < j; t++)
        taken |= out[t] == i;
      if (!taken && (out[j] < 0 || p[i] > p[out[j]]))
        out[j] = i;
    }
  }
}

gchar *
test_fashion_mnist_path (const char *file)
{
  gchar *path = test_env_path ("M2I_FASHION_MNIST_DIR", file);
  if (path && !g_file_test (path, G_FILE_TEST_EXISTS))
    g_clear_pointer (&path, g_free);
  return path;
}

GBytes *
test_fashion_mnist_t10k (void)
{
  g_autofree gchar *path = test_fashion_mnist_path ("t10k-images-idx3-ubyte.gz");
  if (!path)
    return NULL;
  GError *error = NULL;
  g_autoptr (GBytes) file = m2i_data_read (path, &error);
  g_assert_no_error (error);
  guint32 dims[3];
  GBytes *images = m2i_data_idx_samples (file, 3, dims, path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (dims[0], ==, TEST_FM_T10K);
  g_assert_cmpuint (dims[1], ==, TEST_FM_SIDE);
  g_assert_cmpuint (dims[2], ==, TEST_FM_SIDE);
  return images;
}

void
test_person_photo_bgr (float *dst)
{
  g_autoptr (GBytes) b = test_read_data ("ir/astronaut-272x160.ppm");
  gsize len;
  const guint8 *d = g_bytes_get_data (b, &len);
  const char header[] = "P6\n272 160\n255\n";
  g_assert_cmpuint (len, ==, sizeof header - 1 + 272 * 160 * 3);
  g_assert_cmpmem (d, sizeof header - 1, header, sizeof header - 1);
  const guint8 *rgb = d + sizeof header - 1;
  for (gint c = 0; c < 3; c++)
    for (gint y = 0; y < 320; y++)
      for (gint x = 0; x < 544; x++)
        dst[(c * 320 + y) * 544 + x] = rgb[((y / 2) * 272 + x / 2) * 3 + (2 - c)];
}

void
test_fashion_mnist_input (const guint8 *image, float *x)
{
  for (gint i = 0; i < TEST_FM_PIXELS; i++) {
    float v = ((float) image[i] / 255.0f - 0.2860f) / 0.3530f;
    x[i] = x[TEST_FM_PIXELS + i] = x[2 * TEST_FM_PIXELS + i] = v;
  }
}

void
test_remove_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return;
  for (const char *name; (name = g_dir_read_name (d));) {
    g_autofree gchar *p = g_build_filename (dir, name, NULL);
    GStatBuf st;
    if (g_lstat (p, &st) == 0 && S_ISDIR (st.st_mode))
      test_remove_dir (p);
    else
      g_unlink (p);
  }
  g_dir_close (d);
  g_rmdir (dir);
}

gchar *
test_chain_xml (const char *op, const char *data, gint n, gsize *len)
{
  GString *s = g_string_new ("<?xml version=\"1.0\"?>\n<net name=\"chain\" version=\"11\">\n"
      "<layers>\n<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\"><data "
      "shape=\"1,16\" element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\"><dim>1"
      "</dim><dim>16</dim></port></output></layer>\n");
  for (gint i = 1; i <= n; i++)
    g_string_append_printf (s, "<layer id=\"%d\" name=\"l%d\" type=\"%s\" version=\"opset1\">%s"
        "<input><port id=\"0\"><dim>1</dim><dim>16</dim></port></input><output><port id=\"1\" "
        "precision=\"FP32\"><dim>1</dim><dim>16</dim></port></output></layer>\n", i, i, op, data);
  g_string_append_printf (s, "<layer id=\"%d\" name=\"out\" type=\"Result\" version=\"opset1\">"
      "<input><port id=\"0\"><dim>1</dim><dim>16</dim></port></input></layer>\n</layers>\n"
      "<edges>\n", n + 1);
  for (gint i = 1; i <= n + 1; i++)
    g_string_append_printf (s, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" "
        "to-port=\"0\"/>\n", i - 1, i == 1 ? 0 : 1, i);
  g_string_append (s, "</edges>\n</net>\n");
  *len = s->len;
  return g_string_free (s, FALSE);
}
