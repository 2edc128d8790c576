/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-util.c — what the detection, segmentation and head decoders share
 * (decode-private.h): output lookups and checks, tensor element reads,
 * number lists, the messages of a match that does not fit. */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

M2iIrNode *
infer_output_producer (M2iIrModel *model, gint i)
{
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
  M2iIrNode *src = NULL;
  if (io && io->node)
    m2i_ir_node_get_input_source (io->node, 0, &src, NULL);
  return src;
}

gboolean
infer_output_is_auxiliary (const char *name)
{
  return name && (strstr (name, "feature_vector") || strstr (name, "saliency_map"));
}

M2iInferDetection *
infer_result_add_box (M2iInferResult *r, const M2iInferGeometry *g, const InferBox *b)
{
  M2iInferDetection *d = &r->detections[r->n_detections++];
  *d = (M2iInferDetection) { .class_id = b->class_id, .confidence = b->score };
  infer_geometry_map_box (g, b->x1, b->y1, b->x2, b->y2, d);
  return d;
}

gchar *
infer_output_shape_string (M2iIrModel *model, gint i)
{
  const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
  return io ? m2i_shape_to_string (&io->shape) : g_strdup ("(none)");
}

gboolean
infer_check_output (const M2iTensor *outputs, guint n_outputs, guint index, const char *name,
    M2iElementType type, const M2iShape *shape, GError **error)
{
  if (index >= n_outputs || !outputs) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "decoder: output %u ('%s') is missing: %u output%s given", index, name, n_outputs,
        n_outputs == 1 ? "" : "s");
    return FALSE;
  }
  const M2iTensor *t = &outputs[index];
  gboolean type_ok = type == M2I_ET_UNDEFINED ? (t->type != M2I_ET_UNDEFINED && t->type != M2I_ET_BF16)
      : t->type == type;
  if (!type_ok || !m2i_shape_equal (&t->shape, shape) || !t->data) {
    gchar *want = m2i_shape_to_string (shape), *got = m2i_shape_to_string (&t->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "decoder: output %u ('%s') is %s %s%s, the decoder was made for %s %s", index, name,
        m2i_element_type_to_string (t->type), got, t->data ? "" : " without data",
        type == M2I_ET_UNDEFINED ? "a number" : m2i_element_type_to_string (type), want);
    g_free (want);
    g_free (got);
    return FALSE;
  }
  return TRUE;
}

double
infer_tensor_get (const M2iTensor *t, gsize i)
{
  switch (t->type) {
    case M2I_ET_F32: return ((const float *) t->data)[i];
    case M2I_ET_F64: return ((const double *) t->data)[i];
    case M2I_ET_I64: return (double) ((const gint64 *) t->data)[i];
    case M2I_ET_I32: return ((const gint32 *) t->data)[i];
    case M2I_ET_I16: return ((const gint16 *) t->data)[i];
    case M2I_ET_I8: return ((const gint8 *) t->data)[i];
    case M2I_ET_U64: return (double) ((const guint64 *) t->data)[i];
    case M2I_ET_U32: return ((const guint32 *) t->data)[i];
    case M2I_ET_U16: return ((const guint16 *) t->data)[i];
    case M2I_ET_U8:
    case M2I_ET_BOOLEAN: return ((const guint8 *) t->data)[i];
    case M2I_ET_F16: return m2i_f16_to_f32 (((const m2i_f16 *) t->data)[i]);
    default: return NAN;
  }
}

gboolean
infer_check_geometry (const M2iInferGeometry *g, GError **error)
{
  if (!g || !(g->scale_x > 0.0 && g->scale_y > 0.0 && isfinite (g->scale_x)
          && isfinite (g->scale_y) && isfinite (g->pad_x) && isfinite (g->pad_y)
          && isfinite (g->crop_x) && isfinite (g->crop_y)) || g->source_width <= 0
      || g->source_height <= 0) {
    g_set_error_literal (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "decoder: the geometry does not map model pixels to a source frame (scales must be "
        "positive and finite, the source size positive): fill it with m2i_infer_geometry_init()");
    return FALSE;
  }
  return TRUE;
}

guint
infer_max_detections (const M2iDecoderOptions *opts, guint available)
{
  return opts->max_detections && opts->max_detections < available ? opts->max_detections
      : available;
}

static gboolean
parse_double (const char *s, double *out)
{
  while (g_ascii_isspace (*s))
    s++;
  if (!*s)
    return FALSE;
  char *end;
  double v = g_ascii_strtod (s, &end);
  while (g_ascii_isspace (*end))
    end++;
  if (*end || end == s || !isfinite (v))
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
infer_parse_numbers (const char *s, double *out, guint max, guint *n)
{
  gsize len = strnlen (s, 4096);
  if (s[len])
    return FALSE;
  const char *b = s, *e = s + len;
  const char *open = strpbrk (s, "[(");
  if (open) {
    for (const char *q = s; q < open; q++)
      if (!(g_ascii_isalnum (*q) || *q == '_' || *q == '.' || *q == '/' || *q == ':'
              || *q == '-' || g_ascii_isspace (*q)))
        return FALSE;
    b = open + 1;
    const char *close = strchr (b, *open == '[' ? ']' : ')');
    if (!close)
      return FALSE;
    e = close;
  }
  *n = 0;
  gchar *body = g_strndup (b, e - b);
  gchar **tok = g_strsplit_set (body, " \t\r\n,;", -1);
  gboolean ok = TRUE;
  for (gchar **t = tok; *t && ok; t++) {
    if (!**t)
      continue;
    double v;
    if (*n >= max || !parse_double (*t, &v))
      ok = FALSE;
    else
      out[(*n)++] = v;
  }
  g_strfreev (tok);
  g_free (body);
  return ok;
}


gboolean
infer_no_match (gboolean named, GError **error, const char *fmt, ...)
{
  if (!named)
    return FALSE;
  va_list ap;
  va_start (ap, fmt);
  gchar *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, msg);
  g_free (msg);
  return FALSE;
}
