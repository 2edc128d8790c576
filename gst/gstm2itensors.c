/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itensors.c — other/tensors buffers into and out of an inference
 * session, see gstm2itensors.h. */
#include "gstm2itensors.h"

#include <m2i-core/base/m2i-error.h>
#include <string.h>

#define MAX_TENSORS GST_M2I_INFER_MAX_TENSORS

typedef struct {
  GstBufferPool parent;
  guint n;
  gsize sizes[MAX_TENSORS];
} GstM2iTensorsPool;

typedef struct {
  GstBufferPoolClass parent_class;
} GstM2iTensorsPoolClass;

static GType gst_m2i_tensors_pool_get_type (void);
G_DEFINE_TYPE (GstM2iTensorsPool, gst_m2i_tensors_pool, GST_TYPE_BUFFER_POOL);

static GstFlowReturn
tensors_pool_alloc (GstBufferPool *pool, GstBuffer **buffer, GstBufferPoolAcquireParams *params)
{
  GstM2iTensorsPool *self = (GstM2iTensorsPool *) pool;
  GstBuffer *buf = gst_buffer_new ();
  for (guint i = 0; i < self->n; i++)
    gst_buffer_append_memory (buf, gst_allocator_alloc (NULL, self->sizes[i], NULL));
  *buffer = buf;
  return GST_FLOW_OK;
}

static void
gst_m2i_tensors_pool_class_init (GstM2iTensorsPoolClass *klass)
{
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = tensors_pool_alloc;
}

static void
gst_m2i_tensors_pool_init (GstM2iTensorsPool *self)
{
}

static GstBufferPool *
tensors_pool_new (GstCaps *caps, guint n, const gsize *sizes, GError **error)
{
  if (n > MAX_TENSORS) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the model has %u outputs; output=tensors carries at most %d", n, MAX_TENSORS);
    return NULL;
  }
  GstM2iTensorsPool *pool = g_object_new (gst_m2i_tensors_pool_get_type (), NULL);
  gst_object_ref_sink (pool);
  gsize total = 0;
  pool->n = n;
  for (guint i = 0; i < n; i++) {
    pool->sizes[i] = sizes[i];
    total += sizes[i];
  }
  GstStructure *config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, caps, (guint) total, 2, 0);
  if (!gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config)
      || !gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), TRUE)) {
    gst_object_unref (pool);
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED, "cannot set up the output tensor pool");
    return NULL;
  }
  return GST_BUFFER_POOL (pool);
}

gboolean
gst_m2i_tensors_to_session (GstBuffer *buf, guint n, const M2iElementType *types,
    const gsize *bytes, M2iInferSession *session, GError **error)
{
  gboolean split = n > 1 && gst_buffer_n_memory (buf) == n;
  gsize total = 0, off = 0;
  for (guint i = 0; i < n; i++)
    total += bytes[i];
  GstMapInfo map;
  if (!split && !gst_buffer_map (buf, &map, GST_MAP_READ)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map the input buffer");
    return FALSE;
  }
  gboolean ok = split || map.size >= total;
  if (!ok)
    g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL, "the input buffer holds %"
        G_GSIZE_FORMAT " bytes, the caps describe %" G_GSIZE_FORMAT, map.size, total);
  for (guint i = 0; ok && i < n; i++) {
    GstMemory *mem = split ? gst_buffer_peek_memory (buf, i) : NULL;
    if (split && !gst_memory_map (mem, &map, GST_MAP_READ)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map tensor %u", i);
      return FALSE;
    }
    if (split && map.size < bytes[i]) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL, "tensor %u of the input "
          "buffer holds %" G_GSIZE_FORMAT " bytes, the caps describe %" G_GSIZE_FORMAT, i,
          map.size, bytes[i]);
      ok = FALSE;
    }
    M2iTensor t = { .type = types[i], .data = map.data + (split ? 0 : off) };
    ok = ok && m2i_infer_session_set_input (session, (gint) i, &t, error);
    off += bytes[i];
    if (split)
      gst_memory_unmap (mem, &map);
  }
  if (!split)
    gst_buffer_unmap (buf, &map);
  return ok;
}

GstFlowReturn
gst_m2i_tensors_from_session (M2iInferSession *session, GstCaps *caps, GstBufferPool **pool,
    GstBuffer **out, GError **error)
{
  guint n;
  const M2iTensor *outputs = m2i_infer_session_get_outputs (session, &n);
  if (!*pool) {
    gsize sizes[MAX_TENSORS];
    for (guint i = 0; i < n && i < MAX_TENSORS; i++)
      sizes[i] = m2i_tensor_nbytes (&outputs[i]);
    if (!(*pool = tensors_pool_new (caps, n, sizes, error)))
      return GST_FLOW_ERROR;
  }
  *out = NULL;
  if (gst_buffer_pool_acquire_buffer (*pool, out, NULL) != GST_FLOW_OK)
    return GST_FLOW_FLUSHING;
  for (guint i = 0; i < gst_buffer_n_memory (*out); i++) {
    GstMapInfo mi;
    gst_buffer_map_range (*out, i, 1, &mi, GST_MAP_WRITE);
    memcpy (mi.data, outputs[i].data, MIN (mi.size, m2i_tensor_nbytes (&outputs[i])));
    gst_buffer_unmap (*out, &mi);
  }
  return GST_FLOW_OK;
}
