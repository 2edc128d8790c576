/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs the fuzz harness once on every file of a folder (the seed corpus and
 * the regression inputs the fuzzer found), without libFuzzer: a plain test
 * in every build. Usage: fuzz-replay DIR */
#include <glib.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
main (int argc, char **argv)
{
  if (argc != 2) {
    g_printerr ("usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  GError *error = NULL;
  GDir *dir = g_dir_open (argv[1], 0, &error);
  if (!dir) {
    g_printerr ("%s\n", error->message);
    g_error_free (error);
    return 1;
  }
  gint n = 0;
  for (const char *name; (name = g_dir_read_name (dir));) {
    g_autofree gchar *path = g_build_filename (argv[1], name, NULL);
    gchar *data;
    gsize len;
    if (!g_file_get_contents (path, &data, &len, NULL))
      continue;
    g_print ("%s\n", name);
    LLVMFuzzerTestOneInput ((const uint8_t *) data, len);
    g_free (data);
    n++;
  }
  g_dir_close (dir);
  g_print ("%d inputs replayed\n", n);
  return n > 0 ? 0 : 1;
}
