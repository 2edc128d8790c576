/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time and memory bounds of issue 14, measured on the programs a user
 * runs (slow suite; docs/reliability.md). Each case is a child process;
 * its wall time and peak resident memory (wait4's ru_maxrss) are printed
 * and checked:
 *
 *  - a model-level rt_info nested 1500 levels (Fashion-MNIST with a 40 KB
 *    <rt_info>): `m2i-split split` under 5 s and 300 MB (was 21 s, 1.15
 *    GB, 2.1 GB written), and m2iinfer device=AUTO running a frame
 *    (gst-launch-1.0) under 5 s and 300 MB (was 8.6 s, 1.16 GB);
 *  - ReLU chains: 40,000 layers loaded, compiled and run once by
 *    m2i-ir-run under 5 s, 200,000 under 30 s (the memory planner was
 *    quadratic: 25.9 s at 40,000, more than 120 s at 200,000).
 *
 * Environment: M2I_SPLIT, M2I_IR_RUN (the programs), GST_LAUNCH, and the
 * element tests' GStreamer variables.
 */
#include "test-support.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static gchar *tmp;

/* Runs @argv; its wall time in seconds and peak RSS in MiB. */
static void
measure (const char *const *argv, double *secs, double *mib)
{
  GError *error = NULL;
  GPid pid;
  gint64 t0 = g_get_monotonic_time ();
  if (!g_spawn_async (NULL, (gchar **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD |
          G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, &pid, &error))
    g_error ("%s: %s", argv[0], error->message);
  int status;
  struct rusage ru;
  g_assert_cmpint (wait4 (pid, &status, 0, &ru), ==, pid);
  *secs = (g_get_monotonic_time () - t0) / 1e6;
  *mib = ru.ru_maxrss / 1024.0;
  g_spawn_close_pid (pid);
  if (!WIFEXITED (status) || WEXITSTATUS (status))
    g_error ("%s %s ... failed (status %d)", argv[0], argv[1], status);
}

static void
check (const char *what, double secs, double mib, double max_secs, double max_mib)
{
  g_print ("bounds: %-58s %6.2f s %7.1f MiB   (bounds %.0f s, %.0f MiB)\n", what, secs, mib,
      max_secs, max_mib);
  g_assert_cmpfloat (secs, <, max_secs);
  g_assert_cmpfloat (mib, <, max_mib);
}

/* Fashion-MNIST with a model-level rt_info nested @n levels, written into
 * the temporary folder; returns the .xml path. */
static gchar *
deep_rt_model (gint n)
{
  g_autofree gchar *src = test_models_path ("fashion-mnist/fashion-mnist.xml");
  g_autofree gchar *src_bin = test_models_path ("fashion-mnist/fashion-mnist.bin");
  gchar *text;
  g_assert_true (g_file_get_contents (src, &text, NULL, NULL));
  GString *xml = g_string_new (text);
  g_free (text);
  GString *rt = g_string_new ("<rt_info>");
  for (gint i = 0; i < n; i++)
    g_string_append_printf (rt, "<k%d value=\"v\">", i % 10);
  for (gint i = n - 1; i >= 0; i--)
    g_string_append_printf (rt, "</k%d>", i % 10);
  g_string_append (rt, "</rt_info>\n</net>");
  g_string_replace (xml, "</net>", rt->str, 1);
  gchar *path = g_build_filename (tmp, "deep.xml", NULL);
  g_autofree gchar *bin = g_build_filename (tmp, "deep.bin", NULL);
  g_assert_true (g_file_set_contents (path, xml->str, xml->len, NULL));
  g_assert_cmpint (symlink (src_bin, bin), ==, 0);
  g_string_free (xml, TRUE);
  g_string_free (rt, TRUE);
  return path;
}

static void
test_deep_rt_info (void)
{
  g_autofree gchar *xml = deep_rt_model (1500);
  g_autofree gchar *out = g_build_filename (tmp, "plan", NULL);
  double secs, mib;
  const char *split[] = { g_getenv ("M2I_SPLIT"), "split", xml, "-o", out, NULL };
  measure (split, &secs, &mib);
  check ("m2i-split split, rt_info nested 1500 deep", secs, mib, 5, 300);

  g_autofree gchar *launch = g_strdup_printf ("model=%s", xml);
  const char *gst[] = { g_getenv ("GST_LAUNCH"), "-q", "videotestsrc", "num-buffers=1", "!",
    "video/x-raw,format=NV12,width=112,height=112", "!", "m2icolorconvert", "!", "m2iresize",
    "!", "m2inorm", "mean=<0.286>", "std=<0.353>", "input-scale=0.00392156862745098", "!",
    "m2iinfer", launch, "device=AUTO", "!", "fakesink", NULL };
  measure (gst, &secs, &mib);             /* the first run makes the registry */
  measure (gst, &secs, &mib);
  check ("m2iinfer device=AUTO, one frame, rt_info nested 1500 deep", secs, mib, 5, 300);
}

/* A ReLU chain of @n layers on [1,16], and its input, in the temporary
 * folder; returns the .xml path. */
static gchar *
chain_model (gint n, gchar **input)
{
  gsize len;
  g_autofree gchar *text = test_chain_xml ("ReLU", "", n, &len);
  g_autofree gchar *name = g_strdup_printf ("chain%d.xml", n);
  gchar *path = g_build_filename (tmp, name, NULL);
  g_assert_true (g_file_set_contents (path, text, len, NULL));
  float x[16];
  for (gint i = 0; i < 16; i++)
    x[i] = i - 8.0f;
  *input = g_build_filename (tmp, "chain-in.f32", NULL);
  g_assert_true (g_file_set_contents (*input, (const gchar *) x, sizeof x, NULL));
  return path;
}

static void
test_chains (void)
{
  static const struct {
    gint n;
    double max_secs;
  } cases[] = { { 40000, 5 }, { 200000, 30 } };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++) {
    g_autofree gchar *input = NULL;
    g_autofree gchar *xml = chain_model (cases[k].n, &input);
    const char *run[] = { g_getenv ("M2I_IR_RUN"), xml, "-i", input, "-q", NULL };
    double secs, mib;
    measure (run, &secs, &mib);
    g_autofree gchar *what = g_strdup_printf ("m2i-ir-run, a chain of %d ReLU layers", cases[k].n);
    check (what, secs, mib, cases[k].max_secs, 2048);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp = g_dir_make_tmp ("m2i-bounds-XXXXXX", NULL);
  g_test_add_func ("/bounds/deep-rt-info", test_deep_rt_info);
  g_test_add_func ("/bounds/chains", test_chains);
  int rc = g_test_run ();
  test_remove_dir (tmp);
  g_free (tmp);
  return rc;
}
