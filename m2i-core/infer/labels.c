/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* labels.c — class labels from the spellings they come in (see
 * m2i-model-info.h): lines, JSON/Python lists and dicts, YAML-like lists and
 * maps, Model API's space-separated words. Bounded: at most M2I_LABELS_MAX
 * labels of M2I_LABEL_MAX_BYTES each, from at most LABELS_MAX_TEXT bytes. */
#include <infer/m2i-model-info.h>
#include <base/m2i-error.h>

#include <string.h>

#define LABELS_MAX_TEXT (16u << 20)

typedef struct {
  const char *start, *p, *end;
  guint first_line;               /* the line number of start */
  GPtrArray *labels;              /* gchar *, NULL where a dict left a gap */
  GError **error;
} Parser;

static guint
line_at (const Parser *ps, const char *at)
{
  guint line = ps->first_line;
  for (const char *q = ps->start; q < at && q < ps->end; q++)
    line += *q == '\n';
  return line;
}

/* The start of the line after the one @at is on (or the end). */
static const char *
next_line (const Parser *ps, const char *at)
{
  const char *nl = memchr (at, '\n', ps->end - at);
  return nl ? nl + 1 : ps->end;
}

static gboolean G_GNUC_PRINTF (3, 4)
fail (Parser *ps, const char *at, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gchar *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (ps->error, M2I_ERROR, M2I_ERROR_MALFORMED, "labels, line %u: %s", line_at (ps, at),
      msg);
  g_free (msg);
  return FALSE;
}

/* Stores @s (@n bytes) as label @index (G_MAXUINT: appended). */
static gboolean
put_label (Parser *ps, const char *at, guint index, const char *s, gsize n)
{
  if (n > M2I_LABEL_MAX_BYTES)
    return fail (ps, at, "a label of %" G_GSIZE_FORMAT " bytes (at most %d)", n,
        M2I_LABEL_MAX_BYTES);
  if (index == G_MAXUINT)
    index = ps->labels->len;
  if (index >= M2I_LABELS_MAX)
    return fail (ps, at, "more than %d labels", M2I_LABELS_MAX);
  if (index >= ps->labels->len)
    g_ptr_array_set_size (ps->labels, index + 1);
  if (g_ptr_array_index (ps->labels, index))
    return fail (ps, at, "class %u is named twice", index);
  g_ptr_array_index (ps->labels, index) = g_utf8_make_valid (s, (gssize) n);
  return TRUE;
}

static void
skip_space (Parser *ps)
{
  while (ps->p < ps->end && g_ascii_isspace (*ps->p))
    ps->p++;
}

static gint
hex_value (const char *p, const char *end, guint digits)
{
  gint v = 0;
  if ((gsize) (end - p) < digits)
    return -1;
  for (guint i = 0; i < digits; i++) {
    gint d = g_ascii_xdigit_value (p[i]);
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

/* A quoted string at ps->p (' or "), with JSON's and Python's escapes. */
static gboolean
read_quoted (Parser *ps, GString *s)
{
  const char *open = ps->p;
  char q = *ps->p++;
  g_string_truncate (s, 0);
  while (ps->p < ps->end) {
    char c = *ps->p++;
    if (c == q)
      return TRUE;
    if (c == '\n')
      break;
    if (s->len > M2I_LABEL_MAX_BYTES)
      return fail (ps, open, "a label longer than %d bytes", M2I_LABEL_MAX_BYTES);
    if (c != '\\') {
      g_string_append_c (s, c);
      continue;
    }
    if (ps->p >= ps->end)
      break;
    char e = *ps->p++;
    switch (e) {
      case 'n': g_string_append_c (s, '\n'); break;
      case 't': g_string_append_c (s, '\t'); break;
      case 'r': g_string_append_c (s, '\r'); break;
      case 'b': g_string_append_c (s, '\b'); break;
      case 'f': g_string_append_c (s, '\f'); break;
      case 'x': {
        gint v = hex_value (ps->p, ps->end, 2);
        if (v < 0)
          return fail (ps, ps->p, "\\x needs two hex digits");
        ps->p += 2;
        g_string_append_unichar (s, (gunichar) v);
        break;
      }
      case 'u': {
        gint v = hex_value (ps->p, ps->end, 4);
        if (v < 0)
          return fail (ps, ps->p, "\\u needs four hex digits");
        ps->p += 4;
        gunichar u = (gunichar) v;
        if (u >= 0xD800 && u < 0xDC00 && ps->p + 1 < ps->end && ps->p[0] == '\\'
            && ps->p[1] == 'u') {
          gint lo = hex_value (ps->p + 2, ps->end, 4);
          if (lo >= 0xDC00 && lo < 0xE000) {
            u = 0x10000 + ((u - 0xD800) << 10) + (gunichar) (lo - 0xDC00);
            ps->p += 6;
          }
        }
        g_string_append_unichar (s, g_unichar_validate (u) ? u : 0xFFFD);
        break;
      }
      case '\\': case '\'': case '"': case '/':
        g_string_append_c (s, e);
        break;
      default:                    /* Python keeps unknown escapes */
        g_string_append_c (s, '\\');
        g_string_append_c (s, e);
    }
  }
  return fail (ps, open, "a string opened with %c is not closed on its line", q);
}

/* An item of a list or dict: quoted, or bare up to one of @stops or the
 * line's end (blanks around it dropped). *@empty when there was nothing. */
static gboolean
read_item (Parser *ps, GString *s, const char *stops, gboolean *empty)
{
  skip_space (ps);
  *empty = FALSE;
  if (ps->p < ps->end && (*ps->p == '\'' || *ps->p == '"')) {
    if (!read_quoted (ps, s))
      return FALSE;
    skip_space (ps);
    return TRUE;
  }
  const char *b = ps->p;
  while (ps->p < ps->end && !strchr (stops, *ps->p) && *ps->p != '\n')
    ps->p++;
  const char *e = ps->p;
  while (e > b && g_ascii_isspace (e[-1]))
    e--;
  g_string_truncate (s, 0);
  g_string_append_len (s, b, e - b);
  *empty = e == b;
  skip_space (ps);
  return TRUE;
}

static gboolean
expect_end (Parser *ps)
{
  skip_space (ps);
  if (ps->p < ps->end)
    return fail (ps, ps->p, "text after the closing bracket");
  return TRUE;
}

/* [a, 'b', "c"] */
static gboolean
parse_list (Parser *ps)
{
  GString *s = g_string_new (NULL);
  gboolean ok = FALSE, empty;
  ps->p++;
  skip_space (ps);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    ok = expect_end (ps);
    goto out;
  }
  for (;;) {
    const char *at = ps->p;
    if (ps->p < ps->end && (*ps->p == '[' || *ps->p == '{')) {
      fail (ps, at, "a nested list: labels are a flat list of names");
      goto out;
    }
    if (!read_item (ps, s, ",]", &empty))
      goto out;
    if (ps->p >= ps->end) {
      fail (ps, at, "the list is not closed with ]");
      goto out;
    }
    char c = *ps->p++;
    if (empty && c == ']' && ps->labels->len > 0) {   /* a trailing comma */
      ok = expect_end (ps);
      goto out;
    }
    if (empty) {
      fail (ps, at, "an empty item");
      goto out;
    }
    if (!put_label (ps, at, G_MAXUINT, s->str, s->len))
      goto out;
    if (c == ']') {
      ok = expect_end (ps);
      goto out;
    }
    if (c != ',') {
      fail (ps, ps->p - 1, "'%c' where , or ] was expected", c);
      goto out;
    }
    skip_space (ps);
  }
out:
  g_string_free (s, TRUE);
  return ok;
}

static gboolean
parse_class_id (Parser *ps, const char *at, const char *s, guint *id)
{
  guint64 v;
  if (!g_ascii_string_to_unsigned (s, 10, 0, M2I_LABELS_MAX - 1, &v, NULL))
    return fail (ps, at, "class id \"%.32s\" is not a number 0..%d", s, M2I_LABELS_MAX - 1);
  *id = (guint) v;
  return TRUE;
}

/* {0: 'person', "1": "bicycle"} */
static gboolean
parse_dict (Parser *ps)
{
  GString *k = g_string_new (NULL), *v = g_string_new (NULL);
  gboolean ok = FALSE, empty;
  ps->p++;
  skip_space (ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    ok = expect_end (ps);
    goto out;
  }
  for (;;) {
    const char *at = ps->p;
    guint id = 0;
    if (!read_item (ps, k, ":,}", &empty))
      goto out;
    if (empty && ps->p < ps->end && *ps->p == '}' && ps->labels->len > 0) {  /* trailing comma */
      ps->p++;
      ok = expect_end (ps);
      goto out;
    }
    if (ps->p >= ps->end || *ps->p != ':') {
      fail (ps, at, "a dict entry without ':' (class id: name)");
      goto out;
    }
    ps->p++;
    if (!parse_class_id (ps, at, k->str, &id))
      goto out;
    const char *vat = ps->p;
    if (!read_item (ps, v, ",}", &empty))
      goto out;
    if (empty) {
      fail (ps, vat, "class %u has no name", id);
      goto out;
    }
    if (!put_label (ps, vat, id, v->str, v->len))
      goto out;
    if (ps->p >= ps->end) {
      fail (ps, at, "the dict is not closed with }");
      goto out;
    }
    char c = *ps->p++;
    if (c == '}') {
      ok = expect_end (ps);
      goto out;
    }
    if (c != ',') {
      fail (ps, ps->p - 1, "'%c' where , or } was expected", c);
      goto out;
    }
    skip_space (ps);
  }
out:
  g_string_free (k, TRUE);
  g_string_free (v, TRUE);
  return ok;
}

/* The lines of the text without their line ends; a last empty piece after
 * a final newline is dropped. */
static gchar **
split_lines (const char *text, gsize len)
{
  gchar *copy = g_strndup (text, len);
  gchar **lines = g_strsplit (copy, "\n", -1);
  g_free (copy);
  for (gchar **l = lines; *l; l++)
    g_strchomp (*l);
  return lines;
}

static gboolean
is_comment_or_blank (const char *l)
{
  while (g_ascii_isspace (*l))
    l++;
  return *l == '\0' || *l == '#';
}

/* Is every non-blank, non-comment line "- x" (list) or "N: x" (map)? */
static gboolean
all_lines_are (gchar **lines, gboolean map)
{
  gboolean any = FALSE;
  for (gchar **l = lines; *l; l++) {
    if (is_comment_or_blank (*l))
      continue;
    const char *p = *l;
    while (g_ascii_isspace (*p))
      p++;
    if (map) {
      if (!g_ascii_isdigit (*p))
        return FALSE;
      while (g_ascii_isdigit (*p))
        p++;
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p != ':')
        return FALSE;
    } else if (!(p[0] == '-' && (p[1] == ' ' || p[1] == '\t' || p[1] == '\0'))) {
      return FALSE;
    }
    any = TRUE;
  }
  return any;
}

/* A YAML scalar: quoted ('...' or "..."), or the text as it is. */
static gboolean
put_scalar (Parser *ps, const char *at, guint index, const char *text)
{
  while (g_ascii_isspace (*text))
    text++;
  if (*text == '\'' || *text == '"') {
    Parser sub = { .start = text, .p = text, .end = text + strlen (text),
      .first_line = line_at (ps, at), .labels = NULL, .error = ps->error };
    GString *s = g_string_new (NULL);
    gboolean ok = read_quoted (&sub, s);
    if (ok && (skip_space (&sub), sub.p < sub.end))
      ok = fail (ps, at, "text after the closing quote");
    ok = ok && put_label (ps, at, index, s->str, s->len);
    g_string_free (s, TRUE);
    return ok;
  }
  return put_label (ps, at, index, text, strlen (text));
}

static gboolean
parse_yaml (Parser *ps, gchar **lines, gboolean map)
{
  const char *at = ps->start;
  for (gchar **l = lines; *l; at = next_line (ps, at), l++) {
    if (is_comment_or_blank (*l))
      continue;
    const char *p = *l;
    while (g_ascii_isspace (*p))
      p++;
    if (!map) {
      if (!put_scalar (ps, at, G_MAXUINT, p + 1))
        return FALSE;
      continue;
    }
    const char *colon = strchr (p, ':');
    gchar *key = g_strndup (p, colon - p);
    guint id = 0;
    gboolean ok = parse_class_id (ps, at, g_strstrip (key), &id) && put_scalar (ps, at, id, colon + 1);
    g_free (key);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

static gboolean
parse_lines (Parser *ps, gchar **lines)
{
  guint n = g_strv_length (lines);
  while (n > 0 && lines[n - 1][0] == '\0')
    n--;
  const char *at = ps->start;
  for (guint i = 0; i < n; at = next_line (ps, at), i++) {
    if (!put_label (ps, at, G_MAXUINT, lines[i], strlen (lines[i])))
      return FALSE;
  }
  return TRUE;
}

static gboolean
parse_words (Parser *ps)
{
  while (ps->p < ps->end) {
    skip_space (ps);
    const char *b = ps->p;
    while (ps->p < ps->end && !g_ascii_isspace (*ps->p))
      ps->p++;
    if (ps->p > b && !put_label (ps, b, G_MAXUINT, b, ps->p - b))
      return FALSE;
  }
  return TRUE;
}

gchar **
m2i_labels_parse (const char *text, gssize len, M2iLabelsFormat format, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (!text) {
    g_set_error_literal (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "labels: no text");
    return NULL;
  }
  gsize n = len < 0 ? strnlen (text, LABELS_MAX_TEXT + 1) : (gsize) len;
  if (n > LABELS_MAX_TEXT) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
        "labels: %" G_GSIZE_FORMAT " bytes or more (at most %u MiB)", n, LABELS_MAX_TEXT >> 20);
    return NULL;
  }
  /* A NUL inside counted text ends it, as it would a file's text. */
  n = strnlen (text, n);
  if (n >= 3 && !memcmp (text, "\xEF\xBB\xBF", 3)) {
    text += 3;
    n -= 3;
  }
  Parser ps = { .start = text, .p = text, .end = text + n, .first_line = 1,
    .labels = g_ptr_array_new (), .error = error };
  skip_space (&ps);
  gboolean ok;
  char first = ps.p < ps.end ? *ps.p : '\0';
  if (format != M2I_LABELS_LINES && first == '[')
    ok = parse_list (&ps);
  else if (format != M2I_LABELS_LINES && first == '{')
    ok = parse_dict (&ps);
  else if (format == M2I_LABELS_WORDS)
    ok = parse_words (&ps);
  else {
    gchar **lines = split_lines (text, n);
    if (format == M2I_LABELS_AUTO && all_lines_are (lines, FALSE))
      ok = parse_yaml (&ps, lines, FALSE);
    else if (format == M2I_LABELS_AUTO && all_lines_are (lines, TRUE))
      ok = parse_yaml (&ps, lines, TRUE);
    else
      ok = parse_lines (&ps, lines);
    g_strfreev (lines);
  }
  if (ok && ps.labels->len == 0)
    ok = fail (&ps, ps.end, "the text holds no label (one label a line, line 1 = class 0, or a "
        "JSON list)");
  if (!ok) {
    for (guint i = 0; i < ps.labels->len; i++)
      g_free (g_ptr_array_index (ps.labels, i));
    g_ptr_array_free (ps.labels, TRUE);
    return NULL;
  }
  /* A dict's gaps are named by their class id. */
  for (guint i = 0; i < ps.labels->len; i++)
    if (!g_ptr_array_index (ps.labels, i))
      g_ptr_array_index (ps.labels, i) = g_strdup_printf ("%u", i);
  g_ptr_array_add (ps.labels, NULL);
  return (gchar **) g_ptr_array_free (ps.labels, FALSE);
}

gchar **
m2i_labels_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  GError *io = NULL;
  GMappedFile *f = g_mapped_file_new (path, FALSE, &io);
  if (!f) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "labels file: %s; set labels= to a text file "
        "with one label a line (or a JSON or YAML-like list)", io->message);
    g_error_free (io);
    return NULL;
  }
  gsize size = g_mapped_file_get_length (f);
  gchar **labels = NULL;
  if (size > LABELS_MAX_TEXT)
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
        "labels file \"%s\" has %" G_GSIZE_FORMAT " bytes (at most %u MiB)", path, size,
        LABELS_MAX_TEXT >> 20);
  else if (size == 0)
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
        "labels file \"%s\" is empty: it holds no label (one label a line, line 1 = class 0, "
        "or a JSON list)", path);
  else {
    labels = m2i_labels_parse (g_mapped_file_get_contents (f), (gssize) size, M2I_LABELS_AUTO,
        error);
    if (!labels)
      g_prefix_error (error, "\"%s\": ", path);
  }
  g_mapped_file_unref (f);
  return labels;
}
