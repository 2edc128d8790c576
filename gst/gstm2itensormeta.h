/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itensormeta.h — GstM2iTensorMeta: the output tensors of an inference,
 * riding on the buffer that was inferred.
 *
 * m2iinfer attaches one GstM2iTensorMeta to every buffer it ran the model on
 * (see docs/m2iinfer.md). It holds every output of the model, in the model's
 * output order: name, element type, dims (outermost first, as the model
 * declares them: [1,10] for a classifier, [1,1,200,7] for an SSD detector)
 * and the data (dense, row-major, little-endian). The meta owns one block of
 * memory holding all of it; everything it points to lives as long as the
 * meta (the buffer).
 *
 *   GstM2iTensorMeta *m = gst_buffer_get_m2i_tensor_meta (buf);
 *   const GstM2iTensor *prob = gst_m2i_tensor_meta_find (m, "prob");
 *   const float *p = prob->data;          // prob->type == M2I_ET_F32
 *
 * A buffer copy copies the meta (its data included).
 */
#pragma once

#include <gst/gst.h>
#include <m2i-core/ir/m2i-ir-types.h>

G_BEGIN_DECLS

typedef struct {
  const gchar *name;             /* the model's output name, e.g. "prob" */
  M2iElementType type;           /* M2I_ET_F32 for float models */
  guint n_dims;                  /* rank; 0 for a scalar */
  gint64 dims[M2I_MAX_RANK];     /* outermost first */
  gsize size;                    /* bytes of data */
  gconstpointer data;            /* size bytes, aligned to 64 */
} GstM2iTensor;

typedef struct {
  GstMeta meta;
  const gchar *model;            /* the model's <net name> */
  guint n_tensors;
  const GstM2iTensor *tensors;   /* n_tensors entries */
  /* private */
  gpointer block;
} GstM2iTensorMeta;

/* In the plugin: registering the meta and adding it (m2iinfer does). */
GType gst_m2i_tensor_meta_api_get_type (void);
#define GST_M2I_TENSOR_META_API_TYPE (gst_m2i_tensor_meta_api_get_type ())
const GstMetaInfo *gst_m2i_tensor_meta_get_info (void);
#define GST_M2I_TENSOR_META_INFO (gst_m2i_tensor_meta_get_info ())

/*
 * Adds a tensor meta to @buf (which must be writable) holding copies of the
 * @n tensors @tensors (type, shape, data; a tensor with NULL data is stored
 * with zeroed bytes) named @names[i], for model @model. One allocation holds
 * names and data. Returns the meta (owned by the buffer), or NULL when a
 * tensor's size cannot be computed (an undefined type or a negative dim).
 */
GstM2iTensorMeta *gst_buffer_add_m2i_tensor_meta (GstBuffer *buf, const gchar *model,
    guint n, const M2iTensor *tensors, const gchar *const *names);

/* Reading the meta needs no link to the plugin: the helpers below are
 * inline and find the meta by its API type's name ("GstM2iTensorMetaAPI",
 * registered by the plugin when m2iinfer is created). */

/* The first tensor meta of @buf, or NULL. Owned by the buffer. */
static inline GstM2iTensorMeta *
gst_buffer_get_m2i_tensor_meta (GstBuffer *buf)
{
  GType api = g_type_from_name ("GstM2iTensorMetaAPI");
  return api ? (GstM2iTensorMeta *) gst_buffer_get_meta (buf, api) : NULL;
}

/* The tensor called @name in @meta, or NULL. */
static inline const GstM2iTensor *
gst_m2i_tensor_meta_find (const GstM2iTensorMeta *meta, const gchar *name)
{
  for (guint i = 0; meta && name && i < meta->n_tensors; i++)
    if (g_str_equal (meta->tensors[i].name, name))
      return &meta->tensors[i];
  return NULL;
}

/* Number of elements of @t (1 for a scalar). */
static inline gsize
gst_m2i_tensor_numel (const GstM2iTensor *t)
{
  gsize n = 1;
  for (guint i = 0; i < t->n_dims; i++)
    n *= (gsize) t->dims[i];
  return n;
}

G_END_DECLS
