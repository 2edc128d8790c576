/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ir-private.h"
#include <base/m2i-error.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  M2iElementType type;
  gsize size;
  const char *name;            /* IR v10/v11 element_type spelling */
  const char *alt;             /* precision spelling of older files */
} element_types[] = {
  { M2I_ET_UNDEFINED, 0, "undefined", "UNSPECIFIED" },
  { M2I_ET_BOOLEAN, 1, "boolean", "BOOL" },
  { M2I_ET_U8, 1, "u8", "U8" },
  { M2I_ET_I8, 1, "i8", "I8" },
  { M2I_ET_U16, 2, "u16", "U16" },
  { M2I_ET_I16, 2, "i16", "I16" },
  { M2I_ET_U32, 4, "u32", "U32" },
  { M2I_ET_I32, 4, "i32", "I32" },
  { M2I_ET_U64, 8, "u64", "U64" },
  { M2I_ET_I64, 8, "i64", "I64" },
  { M2I_ET_F16, 2, "f16", "FP16" },
  { M2I_ET_BF16, 2, "bf16", "BF16" },
  { M2I_ET_F32, 4, "f32", "FP32" },
  { M2I_ET_F64, 8, "f64", "FP64" },
};

gsize
m2i_element_type_size (M2iElementType t)
{
  return (guint) t < G_N_ELEMENTS (element_types) ? element_types[t].size : 0;
}

const char *
m2i_element_type_to_string (M2iElementType t)
{
  return (guint) t < G_N_ELEMENTS (element_types) ? element_types[t].name : "invalid";
}

gboolean
m2i_element_type_from_string (const char *s, M2iElementType *out)
{
  if (!s)
    return FALSE;
  for (guint i = 1; i < G_N_ELEMENTS (element_types); i++) {
    if (!g_ascii_strcasecmp (s, element_types[i].name) ||
        !g_ascii_strcasecmp (s, element_types[i].alt)) {
      *out = element_types[i].type;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean
m2i_element_type_is_float (M2iElementType t)
{
  return t == M2I_ET_F16 || t == M2I_ET_BF16 || t == M2I_ET_F32 || t == M2I_ET_F64;
}

gint64
m2i_shape_numel (const M2iShape *s)
{
  gint64 n = 1;
  for (gint i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0)
      return -1;
    if (s->dims[i] != 0 && n > G_MAXINT64 / s->dims[i])
      return -1;
    n *= s->dims[i];
  }
  return n;
}

gboolean
m2i_shape_equal (const M2iShape *a, const M2iShape *b)
{
  if (a->rank != b->rank)
    return FALSE;
  for (gint i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return FALSE;
  return TRUE;
}

gboolean
m2i_shape_is_static (const M2iShape *s)
{
  for (gint i = 0; i < s->rank; i++)
    if (s->dims[i] < 0)
      return FALSE;
  return TRUE;
}

gboolean
ir_shape_fits (const M2iShape *declared, const M2iShape *s)
{
  if (declared->rank != s->rank)
    return FALSE;
  for (gint i = 0; i < s->rank; i++)
    if (declared->dims[i] != M2I_DIM_DYNAMIC && s->dims[i] != M2I_DIM_DYNAMIC &&
        declared->dims[i] != s->dims[i])
      return FALSE;
  return TRUE;
}

gchar *
m2i_shape_to_string (const M2iShape *s)
{
  GString *str = g_string_new ("[");
  for (gint i = 0; i < s->rank; i++) {
    if (i)
      g_string_append_c (str, ',');
    if (s->dims[i] == M2I_DIM_DYNAMIC)
      g_string_append_c (str, '?');
    else
      g_string_append_printf (str, "%" G_GINT64_FORMAT, s->dims[i]);
  }
  g_string_append_c (str, ']');
  return g_string_free (str, FALSE);
}

static gboolean
parse_shape (const char *s, gboolean dynamic, M2iShape *out, GError **error)
{
  M2iShape shape = { 0 };
  const char *p = s ? s : "";
  while (g_ascii_isspace (*p))
    p++;
  while (*p) {
    if (shape.rank == M2I_MAX_RANK) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "shape \"%s\" has more than %d dimensions", s, M2I_MAX_RANK);
      return FALSE;
    }
    char *end;
    errno = 0;
    /* OpenVINO's spellings of dynamic dimensions and ranges ("?", "-1",
     * "1..8", "..8", "1.."): a range is as dynamic as "?" here */
    gint64 d;
    if (*p == '?') {
      d = M2I_DIM_DYNAMIC;
      end = (char *) p + 1;
    } else if (g_str_has_prefix (p, "..")) {
      d = M2I_DIM_DYNAMIC;
      end = (char *) p + 2;
      g_ascii_strtoll (end, &end, 10);
    } else {
      d = g_ascii_strtoll (p, &end, 10);
      if (end != p && g_str_has_prefix (end, "..")) {
        d = M2I_DIM_DYNAMIC;
        end += 2;
        g_ascii_strtoll (end, &end, 10);
      }
    }
    if (d == M2I_DIM_DYNAMIC && !dynamic) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "shape \"%s\": dynamic dimensions are not supported here (only static shapes)", s);
      return FALSE;
    }
    if (end == p || errno) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
          "shape \"%s\": \"%s\" is not a dimension", s, p);
      return FALSE;
    }
    if (d < 0 && d != M2I_DIM_DYNAMIC) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "shape \"%s\": dynamic or negative dimension %" G_GINT64_FORMAT
          " is not supported (only static shapes)", s, d);
      return FALSE;
    }
    shape.dims[shape.rank++] = d;
    p = end;
    while (g_ascii_isspace (*p))
      p++;
    if (*p == ',') {
      p++;
      while (g_ascii_isspace (*p))
        p++;
      if (!*p) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
            "shape \"%s\" ends with a comma", s);
        return FALSE;
      }
    } else if (*p) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
          "shape \"%s\": unexpected \"%s\"", s, p);
      return FALSE;
    }
  }
  if (m2i_shape_is_static (&shape) && m2i_shape_numel (&shape) < 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "shape \"%s\" has too many elements", s);
    return FALSE;
  }
  *out = shape;
  return TRUE;
}

gboolean
m2i_shape_broadcast (const M2iShape *a, const M2iShape *b, M2iShape *out,
    GError **error)
{
  M2iShape r = { MAX (a->rank, b->rank) };
  for (gint i = 0; i < r.rank; i++) {
    gint ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
    gint64 da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      g_autofree gchar *sa = m2i_shape_to_string (a);
      g_autofree gchar *sb = m2i_shape_to_string (b);
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "shapes %s and %s do not broadcast (axis %d: %" G_GINT64_FORMAT
          " vs %" G_GINT64_FORMAT ")", sa, sb, i, da, db);
      return FALSE;
    }
    r.dims[i] = da == 1 ? db : da;
  }
  *out = r;
  return TRUE;
}

gsize
m2i_tensor_nbytes (const M2iTensor *t)
{
  gint64 n = m2i_shape_numel (&t->shape);
  return n < 0 ? 0 : (gsize) n * m2i_element_type_size (t->type);
}

gboolean
m2i_shape_parse (const char *s, M2iShape *out, GError **error)
{
  return parse_shape (s, FALSE, out, error);
}

gboolean
ir_shape_parse_dynamic (const char *s, M2iShape *out, GError **error)
{
  return parse_shape (s, TRUE, out, error);
}
