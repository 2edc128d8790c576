/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer harness over the plan loader: a split-plan folder
 * (graph_infos.json and the pieces' IR pairs) written from one input, then
 * loaded, run and written back.
 *
 * An input is a small archive of files, each a line "=== NAME" then its
 * bytes up to the next such line (the newline before it is not part of
 * the file). NAME is a relative path of letters, digits and "._-/"; a
 * NAME ending in "/" makes a folder, "=== NAME -> TARGET" a symbolic link
 * (TARGET as given: the loader must refuse it, never follow it). At most
 * 16 entries; the rest of the input is ignored.
 *
 * Every folder must load or fail with a GError, never crash, hang, leak or
 * follow a link; a plan that loads must run once on zeroed inputs (within a
 * small memory limit), save, and load back with the same pieces and
 * tensors. */
#include "test-support.h"

#include <split/m2i-split.h>

#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ENTRIES 16
#define MAX_RUN_MEMORY (32u << 20)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user_data)
{
}

/* Empties @dir (links removed, never followed). */
static void
clear_dir (const char *dir)
{
  test_remove_dir (dir);
  g_mkdir (dir, 0700);
}

static gboolean
name_ok (const char *name, gsize len)
{
  if (!len || len > 64 || name[0] == '/')
    return FALSE;
  for (gsize i = 0; i < len; i++)          /* (strchr finds a NUL too) */
    if (!g_ascii_isalnum (name[i]) && (!name[i] || !strchr ("._-/", name[i])))
      return FALSE;
  return !g_strstr_len (name, len, "..");
}

/* Writes the entries of @data into @dir. */
static void
unpack (const uint8_t *data, size_t size, const char *dir)
{
  const char *p = (const char *) data, *end = p + size;
  for (gint n = 0; n < MAX_ENTRIES && end - p >= 4 && !memcmp (p, "=== ", 4); n++) {
    const char *name = p + 4;
    const char *eol = memchr (name, '\n', end - name);
    const char *body = eol ? eol + 1 : end;
    if (!eol)
      eol = end;
    /* the body runs to the next "\n=== " */
    const char *next = body, *stop = end;
    while ((next = memchr (next, '\n', end - next))) {
      if (end - next >= 5 && !memcmp (next, "\n=== ", 5)) {
        stop = next;
        break;
      }
      next++;
    }
    const char *arrow = g_strstr_len (name, eol - name, " -> ");
    const char *name_end = arrow ? arrow : eol;
    if (name_ok (name, name_end - name)) {
      g_autofree gchar *rel = g_strndup (name, name_end - name);
      g_autofree gchar *path = g_build_filename (dir, rel, NULL);
      g_autofree gchar *parent = g_path_get_dirname (path);
      g_mkdir_with_parents (parent, 0755);
      if (arrow) {
        g_autofree gchar *target = g_strndup (arrow + 4, eol - arrow - 4);
        if (symlink (target, path) < 0) {
          /* taken already: the input decides nothing more here */
        }
      } else if (rel[strlen (rel) - 1] == '/')
        g_mkdir_with_parents (path, 0755);
      else
        g_file_set_contents (path, body, stop - body, NULL);
    }
    p = stop == end ? end : stop + 1;
  }
}

/* Runs @plan once on zeroed inputs when it is small enough. */
static void
run_once (M2iSplitPlan *plan)
{
  M2iSplitRunOptions ro = { .n_threads = 1, .max_memory = MAX_RUN_MEMORY };
  GError *error = NULL;
  M2iSplitRunner *r = m2i_split_runner_new (plan, &ro, &error);
  if (!r) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
    return;
  }
  if (!m2i_split_runner_run (r, &error)) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
  }
  m2i_split_runner_free (r);
}

static gchar *dir, *copy;

static void
remove_dirs (void)
{
  test_remove_dir (dir);
  test_remove_dir (copy);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!dir) {
    g_log_set_default_handler (quiet_log, NULL);
    dir = g_dir_make_tmp ("m2i-fuzz-plan-XXXXXX", NULL);
    copy = g_dir_make_tmp ("m2i-fuzz-plan-copy-XXXXXX", NULL);
    g_assert (dir && copy);
    atexit (remove_dirs);
  }
  clear_dir (dir);
  unpack (data, size, dir);
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_load (dir, &error);
  if (!plan) {
    g_assert (error != NULL && error->message != NULL);
    g_error_free (error);
    return 0;
  }
  run_once (plan);
  /* a plan that loads writes out and loads back to the same plan */
  clear_dir (copy);
  if (!m2i_split_plan_save (plan, copy, &error))
    g_error ("a loaded plan failed to save: %s", error->message);
  M2iSplitPlan *back = m2i_split_plan_load (copy, &error);
  if (!back)
    g_error ("a saved plan failed to load: %s", error->message);
  g_assert (m2i_split_plan_get_n_pieces (back) == m2i_split_plan_get_n_pieces (plan));
  g_assert (m2i_split_plan_get_n_tensors (back) == m2i_split_plan_get_n_tensors (plan));
  for (gint i = 0; i < m2i_split_plan_get_n_pieces (plan); i++) {
    M2iSplitPieceInfo a, b;
    g_assert (m2i_split_plan_get_piece (plan, i, &a) && m2i_split_plan_get_piece (back, i, &b));
    g_assert (a.engine == b.engine && a.n_inputs == b.n_inputs && a.n_outputs == b.n_outputs);
  }
  m2i_split_plan_unref (back);
  m2i_split_plan_unref (plan);
  return 0;
}
