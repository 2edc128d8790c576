/* resize-private.h — how the M2I engine computes a resize (not installed).
 *
 * Every Interpolate mode the engine supports is separable over H and W, so a
 * resize is described by one filter table per axis: for each output index,
 * `taps` (source index, weight) pairs. Weights already include the mode's
 * normalisation (the spec's division by the sum of weights for "linear"
 * and antialias, pillow's normalisation), and source indices are clamped to
 * the image, so evaluation is a plain weighted sum.
 *
 * Evaluation order is part of the contract, because fused and reference paths
 * must give bit-identical u8 results: for each output pixel, first the
 * horizontal sums for each needed source row (taps in table order, fp32,
 * starting from 0.0f: ((w0*x0 + w1*x1) + w2*x2) ...), then the vertical sum over
 * those rows in the same way. With u8 output the final sum is rounded half
 * away from zero and clamped to [0,255]; with fp16 output it is rounded to the
 * nearest half, ties to even. When `round_intermediate` is set (pillow modes
 * on u8 data, as Pillow and OpenVINO's reference do), the horizontal sums are
 * rounded and clamped to u8 before the vertical pass.
 */
#pragma once

#include "m2i-resize.h"

G_BEGIN_DECLS

typedef struct {
  gint in_size;
  gint out_size;
  gint taps;                     /* pairs per output index (same for all) */
  gint32 *index;                 /* out_size * taps, each in [0, in_size) */
  float *weight;                 /* out_size * taps; unused taps weigh 0 */
  gint32 *first;                 /* out_size: smallest index used by output i */
  gint32 *last;                  /* out_size: largest index used by output i */
} M2iResizeAxis;

typedef struct {
  M2iResizeParams params;
  gint in_width, in_height;
  M2iResizeAxis x, y;
  gboolean round_intermediate;   /* see above; applies to u8 data only */
} M2iResizePlan;

/* Builds the filter tables for resizing an in_width × in_height image with
 * @p. Returns NULL and sets @error (M2I_ERROR_INVALID_ARGUMENT or
 * M2I_ERROR_UNSUPPORTED) for zero or negative sizes, an unknown mode, or a
 * mode/option combination the spec does not define. Free with
 * m2i_resize_plan_free(). */
M2iResizePlan *m2i_resize_plan_new (const M2iResizeParams *p, gint in_width,
    gint in_height, GError **error);
void m2i_resize_plan_free (M2iResizePlan *plan);

/* Row kernels. @channels interleaved values per pixel (1..4); a planar image
 * is resized plane by plane with channels = 1.
 *
 * hpass: resizes one source row (in_width pixels) to out_width pixels of fp32
 * sums. If plan->round_intermediate and the source is u8, the caller rounds
 * (m2i_resize_round_u8_row) before the vertical pass. */
void m2i_resize_hpass_u8 (const M2iResizePlan *plan, const guint8 *src,
    gint channels, float *dst);
void m2i_resize_hpass_f16 (const M2iResizePlan *plan, const guint16 *src,
    gint channels, float *dst);
void m2i_resize_hpass_f32 (const M2iResizePlan *plan, const float *src,
    gint channels, float *dst);

/* vpass: output row @out_y from the horizontally resized rows, where
 * rows[t] is the hpass result of source row plan->y.index[out_y * taps + t];
 * @n is out_width * channels. */
void m2i_resize_vpass (const M2iResizePlan *plan, gint out_y,
    const float *const *rows, gint n, float *dst);

/* Final rounding of fp32 sums, shared by every path. */
void m2i_resize_round_u8_row (const float *src, guint8 *dst, gint n);

G_END_DECLS
