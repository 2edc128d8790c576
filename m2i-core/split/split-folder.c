/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-folder.c — the files of a plan folder, opened so that the folder
 * cannot make the loader read anything outside it.
 *
 * The names graph_infos.json gives are relative paths; each component is
 * opened with openat() and O_NOFOLLOW from the folder's descriptor, so a
 * symbolic link anywhere on the way (`root -> /`, `graph_1.xml ->
 * /elsewhere/model.xml`) is refused with a message saying so, and nothing
 * can be swapped for a link between a check and the open. The last
 * component must be a regular file (a FIFO or a device would block or never
 * end). The folder given by the user may itself be reached through a link:
 * that is the user's choice, not the folder's.
 */
#include "split-private.h"
#include <base/m2i-error.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gboolean
split_folder_open (SplitFolder *f, const char *dir, GError **error)
{
  f->path = g_strdup (dir);
  f->fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f->fd < 0) {
    gint err = errno;
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "%s is no folder%s%s", dir,
        err == ENOTDIR || err == ENOENT ? "" : ": ", err == ENOTDIR || err == ENOENT ? "" :
        g_strerror (err));
    g_clear_pointer (&f->path, g_free);
    return FALSE;
  }
  return TRUE;
}

void
split_folder_close (SplitFolder *f)
{
  if (f->fd >= 0)
    close (f->fd);
  f->fd = -1;
  g_clear_pointer (&f->path, g_free);
}

/* Opens component @name (no '/') in @dirfd without following a link: a
 * descriptor, or -1 with @error saying why (@shown is the path so far). */
static int
open_component (int dirfd, const char *name, gboolean last, const char *shown, GError **error)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "%s is a symbolic link: the files of a plan "
        "folder are opened without following links, so that a folder cannot point outside "
        "itself (copy the file into the folder instead)", shown);
    return -1;
  }
  int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
  int fd = openat (dirfd, name, flags);
  if (fd < 0) {
    gint err = errno;
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, err == ENOENT ? "%s is missing" :
        err == ELOOP ? "%s is a symbolic link: the files of a plan folder are opened without "
        "following links" : "cannot open %s: %s", shown, g_strerror (err));
    return -1;
  }
  return fd;
}

int
split_folder_open_file (SplitFolder *f, const char *name, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (name, "/", -1);
  gint n = g_strv_length (parts);
  GString *shown = g_string_new (f->path);
  int dirfd = f->fd, fd = -1;
  for (gint i = 0; i < n; i++) {
    if (!*parts[i] || !strcmp (parts[i], ".") || !strcmp (parts[i], "..")) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED, "\"%s\" must be a file name inside "
          "the folder", name);
      break;
    }
    g_string_append_printf (shown, "/%s", parts[i]);
    fd = open_component (dirfd, parts[i], i == n - 1, shown->str, error);
    if (dirfd != f->fd)
      close (dirfd);
    dirfd = -1;
    if (fd < 0)
      break;
    if (i < n - 1) {
      dirfd = fd;
      fd = -1;
    }
  }
  if (dirfd >= 0 && dirfd != f->fd)
    close (dirfd);
  struct stat st;
  if (fd >= 0 && (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "%s is not a regular file", shown->str);
    close (fd);
    fd = -1;
  }
  if (fd >= 0)
    fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
  g_string_free (shown, TRUE);
  return fd;
}

GBytes *
split_folder_read (SplitFolder *f, const char *name, gsize max_bytes, GError **error)
{
  int fd = split_folder_open_file (f, name, error);
  if (fd < 0)
    return NULL;
  struct stat st;
  GBytes *bytes = NULL;
  if (fstat (fd, &st) == 0 && (guint64) st.st_size > max_bytes) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_LIMIT, "%s/%s is %" G_GUINT64_FORMAT " bytes, "
        "more than the %" G_GSIZE_FORMAT " such a file may have", f->path, name,
        (guint64) st.st_size, max_bytes);
  } else {
    /* read to the end (the size may have changed since fstat) */
    GByteArray *buf = g_byte_array_new ();
    guint8 chunk[65536];
    gboolean ok = TRUE;
    for (;;) {
      gssize got = read (fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot read %s/%s: %s", f->path, name,
            g_strerror (errno));
        ok = FALSE;
        break;
      }
      if (got == 0)
        break;
      if (buf->len + (gsize) got > max_bytes) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_LIMIT, "%s/%s is more than the %"
            G_GSIZE_FORMAT " bytes such a file may have", f->path, name, max_bytes);
        ok = FALSE;
        break;
      }
      g_byte_array_append (buf, chunk, got);
    }
    bytes = ok ? g_byte_array_free_to_bytes (buf) : (g_byte_array_unref (buf), NULL);
  }
  close (fd);
  return bytes;
}

GBytes *
split_folder_map (SplitFolder *f, const char *name, GError **error)
{
  int fd = split_folder_open_file (f, name, error);
  if (fd < 0)
    return NULL;
  GError *e = NULL;
  GMappedFile *m = g_mapped_file_new_from_fd (fd, FALSE, &e);
  close (fd);
  if (!m) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot map %s/%s: %s", f->path, name,
        e->message);
    g_error_free (e);
    return NULL;
  }
  GBytes *bytes = g_mapped_file_get_bytes (m);
  g_mapped_file_unref (m);
  return bytes;
}
