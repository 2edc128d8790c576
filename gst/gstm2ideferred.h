/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ideferred.h — deferred frames: how adjacent m2i elements fuse.
 *
 * This is the small API another element (m2iinfer) uses to take part in an
 * m2i chain. See docs/elements.md, "Fusion".
 *
 * A link between two m2i elements whose caps carry the feature memory:M2I
 * ("video/x-raw(memory:M2I), format=RGBP, ..." or "other/tensors(memory:M2I),
 * ...") transports deferred frames: buffers whose pixels were not computed.
 * Such a buffer carries a GstM2iDeferredMeta holding the source frame (a
 * reference to a real buffer and its geometry) and the M2I ops still to apply
 * to it; the caps describe what those ops produce. An element receiving a
 * deferred frame appends its own ops and either passes a new deferred frame on
 * (its downstream neighbour is an m2i element too) or plans and runs the whole
 * chain as one M2I plan into real memory (it is the last of the chain). The
 * buffer's single memory is a placeholder whose map() materialises the pixels
 * (a slow safety net for anything that maps it; the negotiation rules below
 * keep deferred frames away from other elements).
 *
 * Who is an m2i neighbour: an element offers memory:M2I on its source pad
 * only when its direct peer (through ghost pads, not through other elements)
 * is a sink pad that answers the custom query made by
 * gst_m2i_neighbour_query_new() by putting itself in the answer
 * (gst_m2i_neighbour_query_answer). Elements that forward unknown queries
 * (identity, queue, tee, capsfilter) forward it to an m2i pad further
 * downstream, which answers with its own pad: not the direct peer, so no
 * deferral — the chain breaks there and the element in between gets real
 * pixels.
 */
#pragma once

#include <gst/gst.h>
#include <m2i-core/m2i/m2i.h>
#include <m2i-core/m2i/m2i-plan-cache.h>
#include "gstm2icaps.h"

G_BEGIN_DECLS

/* The caps feature of a link that carries deferred frames. */
#define GST_CAPS_FEATURE_MEMORY_M2I "memory:M2I"

typedef struct {
  /* The source frame: real pixels (a reference is held), its geometry (data
   * pointers NULL) and the byte offset of each plane from the start of the
   * buffer as gst_buffer_map() shows it. */
  GstBuffer *source;
  M2iImage source_image;
  gsize source_offset[M2I_MAX_PLANES];
  /* The ops still to apply, in order; may be empty. */
  M2iOpList ops;
  /* Letterbox padding inside the ops (its canvas is the result's size). */
  M2iLetterbox letterbox;
  /* What the frame is once computed: format (with the real channel order),
   * size (the canvas, when letterboxed) and the buffer layout a map() of the
   * placeholder memory shows (the caps' default layout): strides here, plane
   * offsets and total size below. */
  M2iImage result;
  gsize result_offset[M2I_MAX_PLANES];
  gsize result_size;
  /* Names of the elements whose ops the frame carries, " + "-separated. */
  gchar chain[160];
} GstM2iDeferredFrame;

typedef struct {
  GstMeta meta;
  GstM2iDeferredFrame frame;
} GstM2iDeferredMeta;

GType gst_m2i_deferred_meta_api_get_type (void);
#define GST_M2I_DEFERRED_META_API_TYPE (gst_m2i_deferred_meta_api_get_type ())
const GstMetaInfo *gst_m2i_deferred_meta_get_info (void);

/* The deferred meta of @buf, or NULL. The meta stays owned by the buffer. */
GstM2iDeferredMeta *gst_buffer_get_m2i_deferred_meta (GstBuffer *buf);

/* Empties @f (no source, no ops). */
void gst_m2i_deferred_frame_init (GstM2iDeferredFrame *f);
/* Drops @f's reference to its source and empties it. */
void gst_m2i_deferred_frame_clear (GstM2iDeferredFrame *f);
/* Copies @src into @dst (which must be empty or cleared), taking a new
 * reference to the source buffer. */
void gst_m2i_deferred_frame_copy (GstM2iDeferredFrame *dst, const GstM2iDeferredFrame *src);

/* Format and size the frame's ops produce from its source (before any
 * letterbox canvas). FALSE if the op list is not a valid chain for the
 * source (the engine's planner gives the reason). */
gboolean gst_m2i_deferred_frame_ops_output (const GstM2iDeferredFrame *f,
    M2iFormat *format, gint *width, gint *height);

/*
 * Runs @f's ops on its source (mapped for the run) into @out, whose format
 * and size must be @f's result (the canvas when letterboxed; any strides,
 * data set by the caller), through @cache: the M2I plan is made on the first
 * frame and again only when the source geometry, the ops, the letterbox,
 * the output geometry or the options change. *@replanned (if given) says
 * whether it planned (m2i_plan_cache_describe() is then new). FALSE with
 * @error (M2I_ERROR domain) and nothing written on a bad request.
 */
gboolean gst_m2i_deferred_frame_run (const GstM2iDeferredFrame *f, M2iPlanCache *cache,
    M2iImage *out, const M2iPlanOptions *opts, gboolean *replanned, GError **error);

/* Fills @f with what @buf (of the negotiated caps @info) stands for, borrowing:
 * no reference is taken, so @f is valid while @buf is. Deferred caps: the
 * frame the buffer's GstM2iDeferredMeta carries. Plain caps: a frame whose
 * source is @buf itself (geometry from its GstVideoMeta or the caps, data
 * pointers NULL), no ops, result = source. FALSE with @error when a deferred
 * buffer carries no frame, @buf cannot be mapped or its video meta does not
 * describe @info's frame. */
gboolean gst_m2i_deferred_frame_borrow (GstM2iDeferredFrame *f, const GstM2iCapsInfo *info,
    GstBuffer *buf, GError **error);

/* Maps @f's source for reading into @map and fills @img (geometry from @f,
 * data pointers into the mapping, plane sizes what the mapping holds). FALSE
 * with @error if the source cannot be mapped. Unmap with
 * gst_buffer_unmap (f->source, map). */
gboolean gst_m2i_deferred_frame_map_source (const GstM2iDeferredFrame *f,
    GstMapInfo *map, M2iImage *img, GError **error);

/* The source buffer of @f, which @inbuf (a deferred buffer, taken) carries,
 * made writable with @inbuf's timestamps and offsets; @f is emptied. No copy
 * when nothing else holds the source. */
GstBuffer *gst_m2i_deferred_frame_take_source (GstM2iDeferredFrame *f, GstBuffer *inbuf);

/* The caps of the video a fused chain above @sinkpad started from: the
 * caps of the nearest link upstream that carries real frames, looking
 * through ghost pads and bins. Source pads are asked: while a caps event
 * travels down the chain, the sink pads it passed have not stored it yet,
 * the source pads have. NULL when there is none. */
GstCaps *gst_m2i_chain_source_caps (GstPad *sinkpad);

/* ---- neighbour query ------------------------------------------------------ */

/* A new custom query asking "is this pad an m2i sink pad, and does it take
 * deferred frames?". Unref when done. */
GstQuery *gst_m2i_neighbour_query_new (void);
/* TRUE if @query is one made by gst_m2i_neighbour_query_new(). */
gboolean gst_m2i_query_is_neighbour (GstQuery *query);
/* Answers @query from @sinkpad (an m2i element's sink pad, which it names):
 * @accepts_deferred says whether that element takes memory:M2I input now
 * (its fusion property). The pad handler then returns TRUE without
 * forwarding the query. */
void gst_m2i_neighbour_query_answer (GstQuery *query, GstPad *sinkpad,
    gboolean accepts_deferred);

/* Whether the direct peer of @srcpad (looking through ghost pads only) is an
 * m2i sink pad that takes deferred frames. When @peer_name is not NULL it
 * receives the peer element's name (g_free) on TRUE. */
gboolean gst_m2i_pad_peer_takes_deferred (GstPad *srcpad, gchar **peer_name);

/* ---- deferred buffers ------------------------------------------------------ */

/* A new buffer pool (the caller owns the reference) whose buffers are
 * deferred frames: one placeholder memory of the configured size and one
 * (pooled) GstM2iDeferredMeta; a buffer coming back drops its source frame.
 * Configure it with the deferred caps like any pool. */
GstBufferPool *gst_m2i_deferred_pool_new (void);

/* Stores @frame (copied, with a new source reference) in @buf, a buffer of a
 * deferred pool: into its meta and its placeholder memory. FALSE if @buf is
 * not such a buffer. */
gboolean gst_m2i_deferred_buffer_set_frame (GstBuffer *buf, const GstM2iDeferredFrame *frame);

G_END_DECLS
