/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itensormeta.c — the output-tensor meta of m2iinfer, see
 * gstm2itensormeta.h. */
#include "gstm2itensormeta.h"

#include <m2i-core/base/m2i-align.h>
#include <string.h>

#define DATA_ALIGN 64

GType
gst_m2i_tensor_meta_api_get_type (void)
{
  static GType type = 0;
  /* No tags: the tensors are results about the frame, valid whatever
   * happens to its memory or geometry later, so every transform keeps them. */
  static const gchar *tags[] = { NULL };
  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register ("GstM2iTensorMetaAPI", tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

static gboolean
tensor_meta_init (GstMeta *meta, gpointer params, GstBuffer *buffer)
{
  GstM2iTensorMeta *m = (GstM2iTensorMeta *) meta;
  m->model = NULL;
  m->n_tensors = 0;
  m->tensors = NULL;
  m->block = NULL;
  return TRUE;
}

static void
tensor_meta_free (GstMeta *meta, GstBuffer *buffer)
{
  GstM2iTensorMeta *m = (GstM2iTensorMeta *) meta;
  g_free (m->block);
  m->block = NULL;
}

/* Lays out one block: the tensor array, the data of each tensor (aligned),
 * then the model name and the tensor names. Fills @m. @sizes[i] are the
 * data sizes; data is copied from @data[i] (NULL: zeros). */
static gboolean
fill_meta (GstM2iTensorMeta *m, const gchar *model, guint n, const M2iElementType *types,
    const guint *ranks, const gint64 (*dims)[M2I_MAX_RANK], const gsize *sizes,
    const gconstpointer *data, const gchar *const *names)
{
  gsize off = m2i_align_up (n * sizeof (GstM2iTensor), DATA_ALIGN);
  gsize data_off = off;
  for (guint i = 0; i < n; i++)
    off = m2i_align_up (off + sizes[i], DATA_ALIGN);
  gsize names_off = off;
  off += strlen (model ? model : "") + 1;
  for (guint i = 0; i < n; i++)
    off += strlen (names[i] ? names[i] : "") + 1;
  /* g_malloc aligns to 16; over-allocate to place the block on 64. */
  guint8 *raw = g_malloc (off + DATA_ALIGN);
  guint8 *base = m2i_align_pointer (raw, DATA_ALIGN);
  GstM2iTensor *t = (GstM2iTensor *) base;
  gchar *str = (gchar *) base + names_off;
  gsize d = data_off;
  g_strlcpy (str, model ? model : "", strlen (model ? model : "") + 1);
  m->model = str;
  str += strlen (str) + 1;
  for (guint i = 0; i < n; i++) {
    const gchar *nm = names[i] ? names[i] : "";
    memcpy (str, nm, strlen (nm) + 1);
    t[i].name = str;
    str += strlen (nm) + 1;
    t[i].type = types[i];
    t[i].n_dims = ranks[i];
    memset (t[i].dims, 0, sizeof t[i].dims);
    memcpy (t[i].dims, dims[i], ranks[i] * sizeof (gint64));
    t[i].size = sizes[i];
    t[i].data = base + d;
    if (data[i])
      memcpy (base + d, data[i], sizes[i]);
    else
      memset (base + d, 0, sizes[i]);
    d = m2i_align_up (d + sizes[i], DATA_ALIGN);
  }
  m->block = raw;
  m->tensors = t;
  m->n_tensors = n;
  return TRUE;
}

/* Copies @src's tensors into the empty meta @dst. */
static gboolean
copy_meta (GstM2iTensorMeta *dst, const GstM2iTensorMeta *src)
{
  guint n = src->n_tensors;
  M2iElementType types[n ? n : 1];
  guint ranks[n ? n : 1];
  gint64 dims[n ? n : 1][M2I_MAX_RANK];
  gsize sizes[n ? n : 1];
  gconstpointer data[n ? n : 1];
  const gchar *names[n ? n : 1];
  for (guint i = 0; i < n; i++) {
    const GstM2iTensor *t = &src->tensors[i];
    types[i] = t->type;
    ranks[i] = t->n_dims;
    memcpy (dims[i], t->dims, sizeof dims[i]);
    sizes[i] = t->size;
    data[i] = t->data;
    names[i] = t->name;
  }
  return fill_meta (dst, src->model, n, types, ranks, (const gint64 (*)[M2I_MAX_RANK]) dims,
      sizes, data, names);
}

static gboolean
tensor_meta_transform (GstBuffer *dest, GstMeta *meta, GstBuffer *buffer, GQuark type,
    gpointer data)
{
  GstM2iTensorMeta *m = (GstM2iTensorMeta *) gst_buffer_add_meta (dest,
      gst_m2i_tensor_meta_get_info (), NULL);
  if (!m)
    return FALSE;
  return copy_meta (m, (const GstM2iTensorMeta *) meta);
}

const GstMetaInfo *
gst_m2i_tensor_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter ((GstMetaInfo **) &info)) {
    const GstMetaInfo *mi = gst_meta_register (GST_M2I_TENSOR_META_API_TYPE,
        "GstM2iTensorMeta", sizeof (GstM2iTensorMeta), tensor_meta_init, tensor_meta_free,
        tensor_meta_transform);
    g_once_init_leave ((GstMetaInfo **) &info, (GstMetaInfo *) mi);
  }
  return info;
}

GstM2iTensorMeta *
gst_buffer_add_m2i_tensor_meta (GstBuffer *buf, const gchar *model, guint n,
    const M2iTensor *tensors, const gchar *const *names)
{
  g_return_val_if_fail (GST_IS_BUFFER (buf) && gst_buffer_is_writable (buf), NULL);
  g_return_val_if_fail (n == 0 || (tensors && names), NULL);
  if (n > 64)
    return NULL;
  M2iElementType types[n ? n : 1];
  guint ranks[n ? n : 1];
  gint64 dims[n ? n : 1][M2I_MAX_RANK];
  gsize sizes[n ? n : 1];
  gconstpointer data[n ? n : 1];
  for (guint i = 0; i < n; i++) {
    const M2iTensor *t = &tensors[i];
    gsize es = m2i_element_type_size (t->type);
    gint64 numel = m2i_shape_numel (&t->shape);
    if (es == 0 || numel < 0 || t->shape.rank < 0 || t->shape.rank > M2I_MAX_RANK
        || (guint64) numel > G_MAXSIZE / 2 / es)
      return NULL;
    types[i] = t->type;
    ranks[i] = (guint) t->shape.rank;
    memset (dims[i], 0, sizeof dims[i]);
    memcpy (dims[i], t->shape.dims, (gsize) t->shape.rank * sizeof (gint64));
    sizes[i] = (gsize) numel * es;
    data[i] = t->data;
  }
  GstM2iTensorMeta *m = (GstM2iTensorMeta *) gst_buffer_add_meta (buf,
      gst_m2i_tensor_meta_get_info (), NULL);
  if (!m)
    return NULL;
  fill_meta (m, model, n, types, ranks, (const gint64 (*)[M2I_MAX_RANK]) dims, sizes, data,
      names);
  return m;
}
