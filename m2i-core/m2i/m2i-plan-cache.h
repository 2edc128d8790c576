/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-plan-cache.h — run an op chain per frame, planning only when it changes.
 *
 * Whoever ends a chain of M2I ops (an m2i element with real memory
 * downstream, the inference session writing a model's input) keeps one
 * M2iPlanCache and calls m2i_plan_cache_run() per frame with the source
 * image, the ops and its output image. The M2I plan is made on the first
 * frame and again only when the source geometry, the ops, the letterbox, the
 * output geometry or the options change; running it allocates nothing.
 *
 * A chain may letterbox: after its first ops the picture is placed into a
 * larger canvas (the output), the border filled with a pad value carried
 * through the ops that follow the padding (which must change values only:
 * convert, permute, norm).
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/m2i/m2i-format.h>
#include <m2i-core/m2i/m2i-ops.h>
#include <m2i-core/m2i/m2i-plan.h>

G_BEGIN_DECLS

/* Letterbox padding inside a chain: after the first @after_op ops the
 * picture (the size those ops produce) is placed at (@x, @y) in the canvas
 * (the chain's output, @width x @height), the rest filled with @value (in
 * the data's units at that point, 0..255 for pixel values) and carried
 * through the remaining ops. Inactive: the ops' output is the output. */
typedef struct {
  gboolean active;
  guint after_op;
  gint x, y;
  gint width, height;           /* the canvas */
  float value;
} M2iLetterbox;

typedef struct _M2iPlanCache M2iPlanCache;

/* An empty cache (no plan yet). Free with m2i_plan_cache_free(). */
M2I_API M2iPlanCache *m2i_plan_cache_new (void);
/* Frees the plan and the cache (NULL is ignored). */
M2I_API void m2i_plan_cache_free (M2iPlanCache *c);
/* Drops the plan: the next run plans again. */
M2I_API void m2i_plan_cache_reset (M2iPlanCache *c);

/*
 * Makes the plan for @ops (may be empty or NULL: a copy) from images of
 * @src's geometry (data pointers not used) into @out's (the canvas when
 * @letterbox is active; NULL or inactive: no padding), unless the cache
 * already holds it. *@replanned (if given) says whether it planned. FALSE
 * with @error (M2I_ERROR domain, the planner's message) when the request is
 * impossible; the cache is then empty.
 */
M2I_API gboolean m2i_plan_cache_prepare (M2iPlanCache *c, const M2iImage *src,
    const M2iOpList *ops, const M2iLetterbox *letterbox, const M2iImage *out,
    const M2iPlanOptions *opts, gboolean *replanned, GError **error);

/*
 * Runs @ops on @src (real pixels) into @out (data set, any strides), planning
 * first when the cache does not match (m2i_plan_cache_prepare). Letterbox
 * borders are filled with the pad value carried through the ops that follow
 * the padding. FALSE with @error and nothing written on a bad request; a
 * kernel failure may leave @out partly written. Allocates nothing unless it
 * plans.
 */
M2I_API gboolean m2i_plan_cache_run (M2iPlanCache *c, const M2iImage *src,
    const M2iOpList *ops, const M2iLetterbox *letterbox, M2iImage *out,
    const M2iPlanOptions *opts, gboolean *replanned, GError **error);

/* What the cached plan does, e.g. "csc(RGB) -> resize(224x224 linear_onnx
 * half_pixel) -> permute (1 device task)", "copy", with " + letterbox" when
 * it pads; "" before the first plan. Owned by the cache, valid until it
 * plans again. */
M2I_API const char *m2i_plan_cache_describe (const M2iPlanCache *c);

G_END_DECLS
