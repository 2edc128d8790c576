/* gstm2iexec.h — running a deferred frame: plan once, run per frame.
 *
 * Part of the small API other elements (m2iinfer) use with deferred frames
 * (gstm2ideferred.h): the element that ends an m2i chain keeps one
 * GstM2iPlanCache and calls gst_m2i_plan_cache_run() per frame with the
 * frame's source and ops and its own output image (for m2iinfer, the model's
 * input tensor). The M2I plan is made on the first frame and again only when
 * the source geometry, the ops, the letterbox, the output geometry or the
 * options change; running it allocates nothing.
 */
#pragma once

#include "gstm2ideferred.h"

G_BEGIN_DECLS

typedef struct {
  gboolean valid;
  M2iPlan *plan;                 /* NULL when the frame has no ops (a copy) */
  /* what the plan was made for */
  M2iImage src, dst;             /* geometry only */
  M2iOpList ops;
  GstM2iLetterbox letterbox;
  M2iPlanOptions opts;
  /* letterbox border: one sample per channel in the output type */
  guint8 border[3][4];
  /* e.g. "csc(RGB) -> resize(224x224 linear_onnx half_pixel) -> permute (1 device task)" */
  gchar *description;
  guint n_device_tasks, n_cpu_tasks;
} GstM2iPlanCache;

void gst_m2i_plan_cache_init (GstM2iPlanCache *c);
/* Frees the plan and description; @c can be used again. */
void gst_m2i_plan_cache_clear (GstM2iPlanCache *c);

/*
 * Runs @frame's ops on its source into @out, whose format and size must be
 * @frame's result (the canvas when letterboxed; any strides, data set by the
 * caller). Letterbox borders are filled with the pad value carried through
 * the ops that follow the padding. Plans when the cache does not match (then
 * *@replanned is TRUE, if given, and @c->description is new). Returns FALSE
 * with @error (M2I_ERROR domain, message from the engine when planning or
 * running fails) and writes nothing on a bad request.
 */
gboolean gst_m2i_plan_cache_run (GstM2iPlanCache *c, const GstM2iDeferredFrame *frame,
    M2iImage *out, const M2iPlanOptions *opts, gboolean *replanned, GError **error);

/* Format and size @n ops turn @in_format @in_w x @in_h into (the rules of the
 * engine's planner, without its checks of sizes and parameters). FALSE for an
 * op that cannot apply (for example resize on YUV). */
gboolean gst_m2i_ops_output (M2iFormat in_format, gint in_w, gint in_h, const M2iOp *ops,
    guint n, M2iFormat *format, gint *width, gint *height);

G_END_DECLS
