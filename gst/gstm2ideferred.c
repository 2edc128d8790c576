/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ideferred.c — deferred frames: meta, placeholder memory, pool and
 * the neighbour query. See gstm2ideferred.h. */
#include "gstm2ideferred.h"

#include <m2i-core/base/m2i-error.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (m2i_deferred_debug);
#define GST_CAT_DEFAULT m2i_deferred_debug

static void
ensure_debug (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (m2i_deferred_debug, "m2ideferred", 0, "m2i deferred frames");
    g_once_init_leave (&once, 1);
  }
}

/* ---- frames --------------------------------------------------------------- */

void
gst_m2i_deferred_frame_init (GstM2iDeferredFrame *f)
{
  memset (f, 0, sizeof *f);
  m2i_op_list_init (&f->ops);
}

void
gst_m2i_deferred_frame_clear (GstM2iDeferredFrame *f)
{
  gst_clear_buffer (&f->source);
  gst_m2i_deferred_frame_init (f);
}

void
gst_m2i_deferred_frame_copy (GstM2iDeferredFrame *dst, const GstM2iDeferredFrame *src)
{
  GstBuffer *old = dst->source;
  *dst = *src;
  if (dst->source)
    gst_buffer_ref (dst->source);
  if (old)
    gst_buffer_unref (old);
}

gboolean
gst_m2i_deferred_frame_ops_output (const GstM2iDeferredFrame *f, M2iFormat *format,
    gint *width, gint *height)
{
  return m2i_op_list_result (&f->ops, f->source_image.format, f->source_image.width,
      f->source_image.height, format, width, height, NULL);
}

gboolean
gst_m2i_deferred_frame_run (const GstM2iDeferredFrame *f, M2iPlanCache *cache, M2iImage *out,
    const M2iPlanOptions *opts, gboolean *replanned, GError **error)
{
  GstMapInfo map;
  M2iImage src;
  if (replanned)
    *replanned = FALSE;
  if (!gst_m2i_deferred_frame_map_source (f, &map, &src, error))
    return FALSE;
  gboolean ok = m2i_plan_cache_run (cache, &src, &f->ops, &f->letterbox, out, opts, replanned,
      error);
  gst_buffer_unmap (f->source, &map);
  return ok;
}

gboolean
gst_m2i_deferred_frame_map_source (const GstM2iDeferredFrame *f, GstMapInfo *map,
    M2iImage *img, GError **error)
{
  if (!f->source || !gst_buffer_map (f->source, map, GST_MAP_READ)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the deferred frame's source buffer %s", f->source ? "cannot be mapped" : "is missing");
    return FALSE;
  }
  *img = f->source_image;
  gst_m2i_image_set_planes (img, map, f->source_offset);
  return TRUE;
}

gboolean
gst_m2i_deferred_frame_borrow (GstM2iDeferredFrame *f, const GstM2iCapsInfo *info,
    GstBuffer *buf, GError **error)
{
  gst_m2i_deferred_frame_init (f);
  if (info->deferred) {
    GstM2iDeferredMeta *meta = gst_buffer_get_m2i_deferred_meta (buf);
    if (!meta || !meta->frame.source) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "the input caps say memory:M2I, but the buffer carries no deferred frame");
      return FALSE;
    }
    *f = meta->frame;           /* borrowed: @buf holds the source */
    return TRUE;
  }
  GstMapInfo map;
  M2iImage img;
  /* Only the geometry is kept; whoever runs the frame maps the buffer again. */
  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map the input buffer");
    return FALSE;
  }
  gboolean ok = gst_m2i_image_from_buffer (info, buf, &map, M2I_ORDER_RGB, &img,
      f->source_offset, error);
  gst_buffer_unmap (buf, &map);
  if (!ok)
    return FALSE;
  for (guint p = 0; p < M2I_MAX_PLANES; p++) {
    img.data[p] = NULL;
    img.size[p] = 0;
  }
  f->source = buf;
  f->source_image = img;
  f->result = img;
  return TRUE;
}

/* ---- meta ------------------------------------------------------------------ */

GType
gst_m2i_deferred_meta_api_get_type (void)
{
  static GType type = 0;
  /* "memory": the meta describes the buffer's (placeholder) memory, so
   * elements that make new memory (GstBaseTransform's default) drop it. */
  static const gchar *tags[] = { GST_META_TAG_MEMORY_STR, NULL };
  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register ("GstM2iDeferredMetaAPI", tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

static gboolean
deferred_meta_init (GstMeta *meta, gpointer params, GstBuffer *buffer)
{
  gst_m2i_deferred_frame_init (&((GstM2iDeferredMeta *) meta)->frame);
  return TRUE;
}

static void
deferred_meta_free (GstMeta *meta, GstBuffer *buffer)
{
  gst_m2i_deferred_frame_clear (&((GstM2iDeferredMeta *) meta)->frame);
}

static gboolean
deferred_meta_transform (GstBuffer *dest, GstMeta *meta, GstBuffer *buffer, GQuark type,
    gpointer data)
{
  if (!GST_META_TRANSFORM_IS_COPY (type))
    return FALSE;
  GstM2iDeferredMeta *m = (GstM2iDeferredMeta *) gst_buffer_add_meta (dest,
      gst_m2i_deferred_meta_get_info (), NULL);
  if (!m)
    return FALSE;
  gst_m2i_deferred_frame_copy (&m->frame, &((GstM2iDeferredMeta *) meta)->frame);
  return TRUE;
}

const GstMetaInfo *
gst_m2i_deferred_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter ((GstMetaInfo **) &info)) {
    const GstMetaInfo *mi = gst_meta_register (GST_M2I_DEFERRED_META_API_TYPE,
        "GstM2iDeferredMeta", sizeof (GstM2iDeferredMeta), deferred_meta_init,
        deferred_meta_free, deferred_meta_transform);
    g_once_init_leave ((GstMetaInfo **) &info, (GstMetaInfo *) mi);
  }
  return info;
}

GstM2iDeferredMeta *
gst_buffer_get_m2i_deferred_meta (GstBuffer *buf)
{
  return (GstM2iDeferredMeta *) gst_buffer_get_meta (buf, GST_M2I_DEFERRED_META_API_TYPE);
}

GstBuffer *
gst_m2i_deferred_frame_take_source (GstM2iDeferredFrame *f, GstBuffer *inbuf)
{
  GstClockTime pts = GST_BUFFER_PTS (inbuf), dts = GST_BUFFER_DTS (inbuf);
  GstClockTime dur = GST_BUFFER_DURATION (inbuf);
  guint64 off = GST_BUFFER_OFFSET (inbuf), off_end = GST_BUFFER_OFFSET_END (inbuf);
  GstBuffer *out = gst_buffer_ref (f->source);
  /* Dropping the deferred buffer drops its reference to the source, which
   * is then usually ours alone: writable without a copy. */
  gst_m2i_deferred_frame_init (f);
  gst_buffer_unref (inbuf);
  out = gst_buffer_make_writable (out);
  GST_BUFFER_PTS (out) = pts;
  GST_BUFFER_DTS (out) = dts;
  GST_BUFFER_DURATION (out) = dur;
  GST_BUFFER_OFFSET (out) = off;
  GST_BUFFER_OFFSET_END (out) = off_end;
  return out;
}

GstCaps *
gst_m2i_chain_source_caps (GstPad *sinkpad)
{
  GstPad *pad = gst_object_ref (sinkpad);
  for (int depth = 0; depth < 64 && pad; depth++) {
    GstPad *peer = gst_pad_get_peer (pad);
    gst_object_unref (pad);
    pad = NULL;
    if (!peer)
      break;
    GstCaps *caps = gst_pad_get_current_caps (peer);
    if (caps && !gst_m2i_caps_is_deferred (caps, 0)) {
      gst_object_unref (peer);
      return caps;
    }
    gst_clear_caps (&caps);
    /* Out of a bin: its ghost source pad's target inside. */
    while (peer && GST_IS_GHOST_PAD (peer)) {
      GstPad *t = gst_ghost_pad_get_target (GST_GHOST_PAD (peer));
      gst_object_unref (peer);
      peer = t;
    }
    if (!peer)
      break;
    if (GST_IS_PROXY_PAD (peer)) {
      /* Leaving a bin upstream: the internal pad of its ghost sink pad. */
      pad = GST_PAD (gst_proxy_pad_get_internal (GST_PROXY_PAD (peer)));
      gst_object_unref (peer);
      continue;
    }
    GstElement *el = gst_pad_get_parent_element (peer);
    gst_object_unref (peer);
    if (!el)
      break;
    pad = gst_element_get_static_pad (el, "sink");
    gst_object_unref (el);
  }
  if (pad)
    gst_object_unref (pad);
  return NULL;
}

/* ---- neighbour query ----------------------------------------------------- */

#define NEIGHBOUR_QUERY_NAME "GstM2iNeighbourQuery"

GstQuery *
gst_m2i_neighbour_query_new (void)
{
  return gst_query_new_custom (GST_QUERY_CUSTOM, gst_structure_new_empty (NEIGHBOUR_QUERY_NAME));
}

gboolean
gst_m2i_query_is_neighbour (GstQuery *query)
{
  if (GST_QUERY_TYPE (query) != GST_QUERY_CUSTOM)
    return FALSE;
  const GstStructure *s = gst_query_get_structure (query);
  return s && gst_structure_has_name (s, NEIGHBOUR_QUERY_NAME);
}

void
gst_m2i_neighbour_query_answer (GstQuery *query, GstPad *sinkpad, gboolean accepts_deferred)
{
  GstStructure *s = gst_query_writable_structure (query);
  GstObject *parent = gst_pad_get_parent (sinkpad);
  gst_structure_set (s, "pad", G_TYPE_POINTER, sinkpad,
      "element", G_TYPE_STRING, parent ? GST_OBJECT_NAME (parent) : "",
      "accepts-deferred", G_TYPE_BOOLEAN, accepts_deferred, NULL);
  if (parent)
    gst_object_unref (parent);
}

/* The pad data from @srcpad really reaches first: its peer, looking through
 * ghost pads (into a bin through a ghost sink pad, out of a bin through the
 * internal pad of a ghost source pad). Returns a reference or NULL. */
static GstPad *
resolve_peer (GstPad *srcpad)
{
  GstPad *pad = gst_pad_get_peer (srcpad);
  for (int depth = 0; pad && depth < 32; depth++) {
    GstPad *next;
    if (GST_IS_GHOST_PAD (pad)) {
      next = gst_ghost_pad_get_target (GST_GHOST_PAD (pad));
    } else if (GST_IS_PROXY_PAD (pad)) {
      GstProxyPad *ghost = gst_proxy_pad_get_internal (GST_PROXY_PAD (pad));
      next = ghost ? gst_pad_get_peer (GST_PAD (ghost)) : NULL;
      if (ghost)
        gst_object_unref (ghost);
    } else {
      return pad;
    }
    gst_object_unref (pad);
    pad = next;
  }
  if (pad)
    gst_object_unref (pad);
  return NULL;
}

gboolean
gst_m2i_pad_peer_takes_deferred (GstPad *srcpad, gchar **peer_name)
{
  ensure_debug ();
  GstPad *peer = resolve_peer (srcpad);
  if (!peer)
    return FALSE;
  gboolean yes = FALSE;
  if (GST_PAD_IS_SINK (peer)) {
    GstQuery *q = gst_m2i_neighbour_query_new ();
    if (gst_pad_query (peer, q)) {
      const GstStructure *s = gst_query_get_structure (q);
      gpointer answered = NULL;
      gboolean accepts = FALSE;
      if (gst_structure_get (s, "pad", G_TYPE_POINTER, &answered,
              "accepts-deferred", G_TYPE_BOOLEAN, &accepts, NULL)
          && answered == (gpointer) peer) {
        yes = accepts;
        if (yes && peer_name)
          *peer_name = g_strdup (gst_structure_get_string (s, "element"));
      } else if (answered) {
        GST_LOG_OBJECT (srcpad, "an m2i pad further downstream answered, not the peer "
            "%" GST_PTR_FORMAT ": no fusion across it", peer);
      }
    }
    gst_query_unref (q);
  }
  gst_object_unref (peer);
  return yes;
}

/* ---- placeholder memory -------------------------------------------------- */

typedef struct {
  GstMemory mem;
  GMutex lock;
  GstM2iDeferredFrame frame;
  guint8 *pixels;            /* materialised on the first map, else NULL */
} DeferredMemory;

typedef struct {
  GstAllocator parent;
} GstM2iDeferredAllocator;

typedef struct {
  GstAllocatorClass parent_class;
} GstM2iDeferredAllocatorClass;

static GType gst_m2i_deferred_allocator_get_type (void);
G_DEFINE_TYPE (GstM2iDeferredAllocator, gst_m2i_deferred_allocator, GST_TYPE_ALLOCATOR);

#define DEFERRED_MEMORY_TYPE "M2IDeferred"

static GstMemory *
deferred_alloc (GstAllocator *allocator, gsize size, GstAllocationParams *params)
{
  /* Placeholders are made by the deferred pool only. */
  return NULL;
}

static void
deferred_free (GstAllocator *allocator, GstMemory *mem)
{
  DeferredMemory *dm = (DeferredMemory *) mem;
  gst_m2i_deferred_frame_clear (&dm->frame);
  g_free (dm->pixels);
  g_mutex_clear (&dm->lock);
  g_free (dm);
}

/* The safety net: something that is not an m2i element maps a deferred
 * frame. Compute it now, in the caps' default layout, with a one-off plan. */
static gpointer
deferred_map (GstMemory *mem, gsize maxsize, GstMapFlags flags)
{
  DeferredMemory *dm = (DeferredMemory *) mem;
  g_mutex_lock (&dm->lock);
  if (!dm->pixels && dm->frame.source) {
    GstM2iDeferredFrame *f = &dm->frame;
    guint8 *px = g_malloc0 (mem->maxsize);
    M2iImage out = f->result;
    for (guint p = 0; p < m2i_format_n_planes (out.format); p++) {
      gsize off = MIN (f->result_offset[p], mem->maxsize);
      out.data[p] = px + off;
      out.size[p] = mem->maxsize - off;
    }
    M2iPlanCache *cache = m2i_plan_cache_new ();
    GError *err = NULL;
    if (gst_m2i_deferred_frame_run (f, cache, &out, NULL, NULL, &err)) {
      GST_INFO ("materialised a deferred frame for a mapper: %s",
          m2i_plan_cache_describe (cache));
      dm->pixels = px;
    } else {
      GST_ERROR ("cannot materialise a deferred frame: %s", err->message);
      g_clear_error (&err);
      g_free (px);
    }
    m2i_plan_cache_free (cache);
  }
  gpointer ret = dm->pixels;
  g_mutex_unlock (&dm->lock);
  return ret;
}

static void
deferred_unmap (GstMemory *mem)
{
}

static GstMemory *
deferred_share (GstMemory *mem, gssize offset, gssize size)
{
  return NULL;                /* GST_MEMORY_FLAG_NO_SHARE: copies are made instead */
}

static void
gst_m2i_deferred_allocator_class_init (GstM2iDeferredAllocatorClass *klass)
{
  GstAllocatorClass *ac = GST_ALLOCATOR_CLASS (klass);
  ac->alloc = deferred_alloc;
  ac->free = deferred_free;
}

static void
gst_m2i_deferred_allocator_init (GstM2iDeferredAllocator *self)
{
  GstAllocator *a = GST_ALLOCATOR (self);
  a->mem_type = DEFERRED_MEMORY_TYPE;
  a->mem_map = deferred_map;
  a->mem_unmap = deferred_unmap;
  a->mem_share = deferred_share;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

static GstAllocator *
deferred_allocator (void)
{
  static GstAllocator *alloc = NULL;
  if (g_once_init_enter (&alloc)) {
    GstAllocator *a = g_object_new (gst_m2i_deferred_allocator_get_type (), NULL);
    gst_object_ref_sink (a);
    GST_OBJECT_FLAG_SET (a, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave (&alloc, a);
  }
  return alloc;
}

static GstMemory *
deferred_memory_new (gsize size)
{
  DeferredMemory *dm = g_new0 (DeferredMemory, 1);
  g_mutex_init (&dm->lock);
  gst_m2i_deferred_frame_init (&dm->frame);
  gst_memory_init (GST_MEMORY_CAST (dm), GST_MEMORY_FLAG_NO_SHARE, deferred_allocator (),
      NULL, MAX (size, 1), 0, 0, MAX (size, 1));
  return GST_MEMORY_CAST (dm);
}

static DeferredMemory *
buffer_deferred_memory (GstBuffer *buf)
{
  if (gst_buffer_n_memory (buf) != 1)
    return NULL;
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  if (!gst_memory_is_type (mem, DEFERRED_MEMORY_TYPE))
    return NULL;
  return (DeferredMemory *) mem;
}

static void
deferred_memory_reset (DeferredMemory *dm)
{
  g_mutex_lock (&dm->lock);
  gst_m2i_deferred_frame_clear (&dm->frame);
  g_clear_pointer (&dm->pixels, g_free);
  g_mutex_unlock (&dm->lock);
}

gboolean
gst_m2i_deferred_buffer_set_frame (GstBuffer *buf, const GstM2iDeferredFrame *frame)
{
  GstM2iDeferredMeta *meta = gst_buffer_get_m2i_deferred_meta (buf);
  DeferredMemory *dm = buffer_deferred_memory (buf);
  if (!meta || !dm)
    return FALSE;
  gst_m2i_deferred_frame_copy (&meta->frame, frame);
  deferred_memory_reset (dm);
  g_mutex_lock (&dm->lock);
  gst_m2i_deferred_frame_copy (&dm->frame, frame);
  g_mutex_unlock (&dm->lock);
  return TRUE;
}

/* ---- pool ------------------------------------------------------------------ */

typedef struct {
  GstBufferPool parent;
  gsize size;
} GstM2iDeferredPool;

typedef struct {
  GstBufferPoolClass parent_class;
} GstM2iDeferredPoolClass;

static GType gst_m2i_deferred_pool_get_type (void);
G_DEFINE_TYPE (GstM2iDeferredPool, gst_m2i_deferred_pool, GST_TYPE_BUFFER_POOL);

static gboolean
deferred_pool_set_config (GstBufferPool *pool, GstStructure *config)
{
  GstM2iDeferredPool *self = (GstM2iDeferredPool *) pool;
  GstCaps *caps;
  guint size, min, max;
  if (!gst_buffer_pool_config_get_params (config, &caps, &size, &min, &max))
    return FALSE;
  self->size = size;
  return GST_BUFFER_POOL_CLASS (gst_m2i_deferred_pool_parent_class)->set_config (pool, config);
}

static GstFlowReturn
deferred_pool_alloc (GstBufferPool *pool, GstBuffer **buffer, GstBufferPoolAcquireParams *params)
{
  GstM2iDeferredPool *self = (GstM2iDeferredPool *) pool;
  GstBuffer *buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, deferred_memory_new (self->size));
  GstMeta *meta = gst_buffer_add_meta (buf, gst_m2i_deferred_meta_get_info (), NULL);
  GST_META_FLAG_SET (meta, GST_META_FLAG_POOLED);
  *buffer = buf;
  return GST_FLOW_OK;
}

static void
deferred_pool_reset (GstBufferPool *pool, GstBuffer *buffer)
{
  /* Let go of the source frame as soon as the buffer comes back. */
  GstM2iDeferredMeta *meta = gst_buffer_get_m2i_deferred_meta (buffer);
  if (meta)
    gst_m2i_deferred_frame_clear (&meta->frame);
  DeferredMemory *dm = buffer_deferred_memory (buffer);
  if (dm)
    deferred_memory_reset (dm);
  GST_BUFFER_POOL_CLASS (gst_m2i_deferred_pool_parent_class)->reset_buffer (pool, buffer);
}

static void
gst_m2i_deferred_pool_class_init (GstM2iDeferredPoolClass *klass)
{
  GstBufferPoolClass *pc = GST_BUFFER_POOL_CLASS (klass);
  pc->set_config = deferred_pool_set_config;
  pc->alloc_buffer = deferred_pool_alloc;
  pc->reset_buffer = deferred_pool_reset;
}

static void
gst_m2i_deferred_pool_init (GstM2iDeferredPool *self)
{
}

GstBufferPool *
gst_m2i_deferred_pool_new (void)
{
  ensure_debug ();
  GstBufferPool *pool = g_object_new (gst_m2i_deferred_pool_get_type (), NULL);
  gst_object_ref_sink (pool);
  return pool;
}
