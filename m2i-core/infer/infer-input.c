/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-input.c — which model input takes the image and how (layout,
 * channels, element type), the step from the pre-processing's planar
 * output into that input when the M2I plan cannot write it directly, and
 * the values of the model's other inputs; see infer-private.h. */
#include "infer-private.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the image input --------------------------------------------------------- */

static gboolean
image_type (M2iElementType t)
{
  return t == M2I_ET_F32 || t == M2I_ET_F16 || t == M2I_ET_U8 || t == M2I_ET_I8;
}

static gboolean
channels_ok (gint64 c)
{
  return c == 1 || c == 3;
}

static gboolean
size_ok (gint64 v)
{
  return v > 0 && v <= 65536;
}

/* The layout the model's metadata names for input @name ("NHWC",
 * "images:NHWC", "x[NHWC],y[NCHW]"): 1 NHWC, 0 NCHW, -1 says nothing. */
static gint
layout_hint (const M2iModelInfo *info, const char *name)
{
  const char *l = info ? info->layout : NULL;
  if (!l)
    return -1;
  const char *at = name && *name ? strstr (l, name) : NULL;
  const char *from = at ? at + strlen (name) : l;
  const char *nhwc = strstr (from, "NHWC"), *nchw = strstr (from, "NCHW");
  if (nhwc && (!nchw || nhwc < nchw))
    return 1;
  return nchw ? 0 : -1;
}

gboolean
infer_input_find_image (M2iIrModel *ir, const M2iModelInfo *info, guint want_batch,
    M2iInferImageInput *img, gint *width, gint *height, gint *batch, gchar **why)
{
  gint n = m2i_ir_model_get_n_inputs (ir);
  gchar *batched = NULL;
  *why = NULL;
  for (gint i = 0; i < n; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, i);
    const M2iShape *s = &io->shape;
    if (s->rank != 4 || !image_type (io->type))
      continue;
    gint hint = layout_hint (info, io->name);
    gboolean nchw = channels_ok (s->dims[1]) && size_ok (s->dims[2]) && size_ok (s->dims[3]);
    gboolean nhwc = channels_ok (s->dims[3]) && size_ok (s->dims[1]) && size_ok (s->dims[2]);
    if (nchw && nhwc)
      nhwc = hint == 1;           /* [1,3,3,3]: NCHW unless the metadata says */
    else if (hint == 0)
      nhwc = FALSE;
    if (!nchw && !nhwc)
      continue;
    if (s->dims[0] < 1 || s->dims[0] > INFER_MAX_BATCH
        || (want_batch && s->dims[0] != (gint64) want_batch)) {
      if (!batched) {
        gchar *shape = m2i_shape_to_string (s);
        if (s->dims[0] >= 1 && s->dims[0] <= INFER_MAX_BATCH)
          batched = g_strdup_printf ("model input '%s' %s takes %" G_GINT64_FORMAT " frame%s "
              "per inference and %u %s asked (m2iinfer's batch-size): set batch-size=%"
              G_GINT64_FORMAT " (frames gathered into batches), or give other/tensors",
              io->name, shape, s->dims[0], s->dims[0] == 1 ? "" : "s", want_batch,
              want_batch == 1 ? "was" : "were", s->dims[0]);
        else
          batched = g_strdup_printf ("model input '%s' %s takes %" G_GINT64_FORMAT " frames "
              "per inference, more than the %d a batch may hold: give other/tensors",
              io->name, shape, s->dims[0], INFER_MAX_BATCH);
        g_free (shape);
      }
      continue;
    }
    img->index = i;
    *batch = (gint) s->dims[0];
    img->nhwc = nhwc;
    img->channels = (gint) (nhwc ? s->dims[3] : s->dims[1]);
    img->type = io->type;
    *height = (gint) (nhwc ? s->dims[1] : s->dims[2]);
    *width = (gint) (nhwc ? s->dims[2] : s->dims[3]);
    g_free (batched);
    return TRUE;
  }
  *why = batched ? batched : g_strdup ("no model input is an image: [1,C,H,W] or [1,H,W,C] "
      "with C = 1 or 3, of f32, f16, u8 or i8 (give other/tensors)");
  return FALSE;
}

/* ---- writing the input -------------------------------------------------------- */

/* Value @v rounded to nearest (ties to even) and saturated to @lo..@hi. */
static inline float
saturate (float v, float lo, float hi)
{
  v = rintf (v);
  return v < lo ? lo : v > hi ? hi : v;
}

/* One row of @n values of plane @p of @src as fp32 into @dst. */
static void
plane_row_f32 (const M2iImage *src, guint p, gint y, gint n, float *dst)
{
  const guint8 *row = src->data[p] + (gsize) y * src->stride[p];
  switch (m2i_format_dtype (src->format)) {
    case M2I_DTYPE_U8:
      for (gint i = 0; i < n; i++)
        dst[i] = row[i];
      break;
    case M2I_DTYPE_F16:
      m2i_f16_to_f32_n ((const m2i_f16 *) row, dst, (gsize) n);
      break;
    default:
      memcpy (dst, row, (gsize) n * sizeof (float));
      break;
  }
}

/* Stores @n values of @v at @dst, @step elements apart, as @type. */
static void
store_values (M2iElementType type, const float *v, gint n, guint8 *dst, gsize step)
{
  switch (type) {
    case M2I_ET_F32:
      for (gint i = 0; i < n; i++)
        ((float *) dst)[i * step] = v[i];
      break;
    case M2I_ET_F16:
      for (gint i = 0; i < n; i++)
        ((m2i_f16 *) dst)[i * step] = m2i_f32_to_f16 (v[i]);
      break;
    case M2I_ET_U8:
      for (gint i = 0; i < n; i++)
        dst[i * step] = (guint8) saturate (v[i], 0.0f, 255.0f);
      break;
    default:                          /* i8 */
      for (gint i = 0; i < n; i++)
        ((gint8 *) dst)[i * step] = (gint8) saturate (v[i], -128.0f, 127.0f);
      break;
  }
}

void
infer_input_write (const M2iInferImageInput *img, const M2iImage *src, M2iTensor *t, float *row)
{
  gint w = src->width, h = src->height, C = img->channels;
  guint n_src = m2i_format_n_planes (src->format);
  gsize es = m2i_element_type_size (img->type);
  for (gint c = 0; c < C; c++) {
    guint p = n_src == 1 ? 0 : (guint) c;       /* one plane: repeated */
    for (gint y = 0; y < h; y++) {
      plane_row_f32 (src, p, y, w, row);
      guint8 *dst = img->nhwc
          ? (guint8 *) t->data + (((gsize) y * w) * C + c) * es
          : (guint8 *) t->data + (((gsize) c * h + y) * w) * es;
      store_values (img->type, row, w, dst, img->nhwc ? (gsize) C : 1);
    }
  }
}

/* ---- the other inputs --------------------------------------------------------- */

/* Parses @text (numbers separated by commas or blanks) into @v (room for
 * @max); their count, or -1 with @error. */
static gssize
parse_numbers (const char *name, const char *text, double *v, gsize max, GError **error)
{
  gsize n = 0;
  const char *p = text;
  while (*p) {
    while (*p == ',' || g_ascii_isspace (*p))
      p++;
    if (!*p)
      break;
    char *end = NULL;
    errno = 0;
    double d = g_ascii_strtod (p, &end);
    if (end == p || errno || !isfinite (d)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: input '%s': "
          "\"%.32s\" is not a number", name, p);
      return -1;
    }
    if (n == max) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: input '%s' "
          "holds %" G_GSIZE_FORMAT " values; more are given", name, max);
      return -1;
    }
    v[n++] = d;
    p = end;
  }
  return (gssize) n;
}

/* Sets input @i of the session from the number list @text (one value for
 * every element, or one per element). */
static gboolean
set_from_numbers (M2iInferSession *s, gint i, const M2iIrIoInfo *io, const char *text,
    GError **error)
{
  gsize n = (gsize) m2i_shape_numel (&io->shape);
  double *v = g_new (double, MAX (n, 1));
  gssize got = parse_numbers (io->name, text, v, n, error);
  gboolean ok = got >= 0;
  if (ok && got != 1 && (gsize) got != n) {
    gchar *shape = m2i_shape_to_string (&io->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: input '%s' %s "
        "holds %" G_GSIZE_FORMAT " values; give one (for all) or %" G_GSIZE_FORMAT ", not %"
        G_GSSIZE_FORMAT, io->name, shape, n, n, got);
    g_free (shape);
    ok = FALSE;
  }
  if (ok) {
    M2iTensor src = { 0 };
    src.type = M2I_ET_F32;
    src.shape = io->shape;
    float *f = g_new (float, MAX (n, 1));
    for (gsize k = 0; k < n; k++)
      f[k] = (float) v[got == 1 ? 0 : k];
    if (io->type == M2I_ET_F32 || io->type == M2I_ET_F16) {
      src.data = f;
      ok = m2i_infer_session_set_input (s, i, &src, error);
    } else {
      /* integer inputs: the numbers as the input's type, saturated */
      gsize es = m2i_element_type_size (io->type);
      guint8 *raw = g_malloc0 (MAX (n * es, 1));
      for (gsize k = 0; k < n && ok; k++) {
        double d = rint (f[k]);
        switch (io->type) {
          case M2I_ET_U8: raw[k] = (guint8) CLAMP (d, 0, 255); break;
          case M2I_ET_I8: ((gint8 *) raw)[k] = (gint8) CLAMP (d, -128, 127); break;
          case M2I_ET_I32: ((gint32 *) raw)[k] = (gint32) CLAMP (d, G_MININT32, G_MAXINT32); break;
          case M2I_ET_I64: ((gint64 *) raw)[k] = (gint64) CLAMP (d, -9.2e18, 9.2e18); break;
          default:
            g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED, "extra-inputs: input '%s' "
                "is %s; numbers go into f32, f16, u8, i8, i32 and i64 inputs (give a file "
                "with @path)", io->name, m2i_element_type_to_string (io->type));
            ok = FALSE;
            break;
        }
      }
      src.type = io->type;
      src.data = raw;
      ok = ok && m2i_infer_session_set_input (s, i, &src, error);
      g_free (raw);
    }
    g_free (f);
  }
  g_free (v);
  return ok;
}

/* Sets input @i from the raw file @path: exactly the input's bytes, in its
 * element type, little-endian, row-major. */
static gboolean
set_from_file (M2iInferSession *s, gint i, const M2iIrIoInfo *io, const char *path,
    GError **error)
{
  gsize need = (gsize) m2i_shape_numel (&io->shape) * m2i_element_type_size (io->type);
  GStatBuf st;
  if (g_stat (path, &st) != 0 || !S_ISREG (st.st_mode) || (guint64) st.st_size != need) {
    gchar *shape = m2i_shape_to_string (&io->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "extra-inputs: input '%s' %s %s needs a file "
        "of exactly %" G_GSIZE_FORMAT " bytes (raw, little-endian); \"%s\" %s", io->name,
        m2i_element_type_to_string (io->type), shape, need, path,
        g_stat (path, &st) != 0 ? "cannot be read" : "has another size");
    g_free (shape);
    return FALSE;
  }
  gchar *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, error)) {
    g_prefix_error (error, "extra-inputs: input '%s': ", io->name);
    return FALSE;
  }
  gboolean ok = len == need;
  if (ok) {
    M2iTensor src = { 0 };
    src.type = io->type;
    src.shape = io->shape;
    src.data = data;
    ok = m2i_infer_session_set_input (s, i, &src, error);
  } else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "extra-inputs: \"%s\" changed while read",
        path);
  }
  g_free (data);
  return ok;
}

gboolean
m2i_infer_session_set_extra_inputs (M2iInferSession *s, const char *spec, GError **error)
{
  M2iIrModel *ir = m2i_infer_model_get_ir (m2i_infer_session_get_model (s));
  if (!spec)
    return TRUE;
  if (strlen (spec) > 1 << 20) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: longer than 1 "
        "MiB; give large inputs as files (name=@path)");
    return FALSE;
  }
  gchar **items = g_strsplit (spec, ";", -1);
  gboolean ok = TRUE;
  for (gchar **it = items; ok && *it; it++) {
    gchar *item = g_strstrip (*it);
    if (!*item)
      continue;
    gchar *eq = strchr (item, '=');
    if (!eq) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: \"%s\" is not "
          "name=values or name=@file", item);
      ok = FALSE;
      break;
    }
    *eq = '\0';
    gchar *name = g_strstrip (item), *value = g_strstrip (eq + 1);
    gint i = m2i_ir_model_find_input (ir, name);
    const M2iIrIoInfo *io = i >= 0 ? m2i_ir_model_get_input (ir, i) : NULL;
    if (!io) {
      gchar *names = m2i_infer_model_describe_inputs (m2i_infer_session_get_model (s));
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "extra-inputs: the model has "
          "no input '%s' (its inputs: %s)", name, names);
      g_free (names);
      ok = FALSE;
    } else if (value[0] == '@') {
      ok = set_from_file (s, i, io, value + 1, error);
    } else {
      ok = set_from_numbers (s, i, io, value, error);
    }
  }
  g_strfreev (items);
  return ok;
}

gchar *
m2i_infer_model_describe_inputs (const M2iInferModel *m)
{
  M2iIrModel *ir = m2i_infer_model_get_ir (m);
  GString *s = g_string_new (NULL);
  for (gint i = 0; i < m2i_ir_model_get_n_inputs (ir); i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, i);
    gchar *shape = m2i_shape_to_string (&io->shape);
    g_string_append_printf (s, "%s\"%s\" %s %s", i ? ", " : "", io->name,
        m2i_element_type_to_string (io->type), shape);
    g_free (shape);
  }
  return g_string_free (s, FALSE);
}
