/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-private.h — how the M2I engine computes a resize (not installed).
 *
 * Every Interpolate mode the engine supports is separable over H and W, so a
 * resize is described by one filter table per axis: for each output index,
 * `taps` (source index, weight) pairs. Weights already include the mode's
 * normalisation (the spec's division by the sum of weights for "linear"
 * and antialias, pillow's normalisation), source indices are clamped to the
 * image, and taps of weight zero are left out (adding w·x = 0 changes no
 * finite sum), so evaluation is a plain weighted sum. docs/resize.md derives
 * each mode's table from the OpenVINO specification.
 *
 * Evaluation order is part of the contract, because fused and reference paths
 * must give bit-identical results: for each output value, first the
 * horizontal sums for each needed source row (taps in table order, fp32,
 * no FMA, starting from 0.0f: ((0 + w0*x0) + w1*x1) + w2*x2 ...), then the
 * vertical sum over those rows in the same way. The row kernels below do
 * exactly that; every SIMD variant vectorizes across output values, never
 * across taps, and is tested bit-exact against the plain C one.
 *
 * Output rounding follows OpenVINO's reference implementation
 * (src/core/reference, interpolate.hpp / interpolate_pil.hpp):
 *  - fp16 output: round to nearest half, ties to even (m2i_f32_to_f16).
 *  - u8 output, plan->u8_round says which rule (m2i_resize_round_u8_row):
 *    "linear" and the pillow modes round half away from zero
 *    (std::round / Pillow's round_up); "linear_onnx" and "cubic" truncate
 *    toward zero (OpenVINO's static_cast<T>(sum)); "nearest" copies, so any
 *    rule gives the same. Every rule clamps to [0,255] first (OpenVINO's cubic
 *    leaves overshoot to an undefined float→u8 cast; we saturate).
 *  - plan->round_intermediate (pillow modes): OpenVINO keeps the horizontal
 *    result in the data type, so on u8 data the horizontal sums are rounded
 *    half away from zero and clamped to [0,255], and on fp16 data rounded to
 *    the nearest half, before the vertical pass. hpass_u8 / hpass_f16 do
 *    this themselves (callers need not; rounding again is harmless).
 *
 * Changes from the first draft of this contract (compatible except where
 * marked): zero-weight taps are dropped; `u8_round` added and
 * m2i_resize_round_u8_row takes the plan (signature change: the rule
 * depends on the mode); intermediate rounding moved into the hpass kernels;
 * m2i_resize_image_rows() and m2i_resize_spec_image() added.
 */
#pragma once

#include "m2i-resize.h"
#include <base/m2i-cpu.h>

G_BEGIN_DECLS

/* Largest width or height a plan accepts (keeps index and coordinate
 * arithmetic exact in fp32 and tables small). */
#define M2I_RESIZE_MAX_SIZE (1 << 20)

typedef struct {
  gint in_size;
  gint out_size;
  gint taps;                     /* pairs per output index (same for all), >= 1 */
  gint32 *index;                 /* out_size * taps, each in [0, in_size) */
  float *weight;                 /* out_size * taps; unused taps weigh 0 */
  gint32 *first;                 /* out_size: smallest index used by output i */
  gint32 *last;                  /* out_size: largest index used by output i */
} M2iResizeAxis;

typedef enum {
  M2I_RESIZE_ROUND_HALF_AWAY,    /* clamp to [0,255], round half away from zero */
  M2I_RESIZE_ROUND_TRUNCATE,     /* clamp to [0,255], round toward zero */
} M2iResizeRound;

typedef struct _M2iResizeSimd M2iResizeSimd;

typedef struct {
  M2iResizeParams params;
  gint in_width, in_height;
  M2iResizeAxis x, y;
  gboolean round_intermediate;   /* see above; u8 and fp16 data */
  M2iResizeRound u8_round;       /* final rounding of u8 output */
  M2iResizeSimd *simd;           /* private to the kernels (lazily built tables) */
} M2iResizePlan;

/* The spec's spellings indexed by enum value, NULL-terminated (for attribute
 * parsers such as the IR reader's). */
extern const char *const m2i_resize_mode_names[];
extern const char *const m2i_coord_mode_names[];
extern const char *const m2i_nearest_mode_names[];

/* ---- Interpolate's one-axis formulas (resize-formulas.c) ------------------
 * Shared by the engine's tables and the IR runtime's Interpolate kernel. */

/* GetOriginalCoordinate: the source coordinate of output index @x on an
 * axis of @in_len values resized to @out_len with @scale (out / in, fp32). */
float m2i_resize_source_coord (M2iCoordMode mode, float x, float scale, float out_len,
    float in_len);
/* GetNearestPixel: the source index "nearest" picks for coordinate @c
 * (unclamped); @downsample when the axis shrinks (scale < 1). */
gint64 m2i_resize_nearest_index (M2iNearestMode mode, float c, gboolean downsample);
/* "linear": how far from round(coordinate) taps reach (@a is the
 * triangle's slope, the scale with antialias, else 1), and the triangle's
 * weight at distance @d: max(0, 1 - |a·d|). */
gint64 m2i_resize_linear_radius (float scale, float a);
float m2i_resize_triangle (float a, float d);
/* "cubic": the four weights of taps floor(c)-1 .. floor(c)+2 for the
 * fraction @s = c - floor(c), with cube_coeff @a (in double). */
void m2i_resize_cubic_coeffs (float s, float a, double coeff[4]);
/* Pillow's bilinear (triangle) or bicubic filter at @x, cube_coeff @a. */
double m2i_resize_pillow_filter (M2iResizeMode mode, double x, double a);

/* Pillow's window of output index i (precompute_coeffs): source indices
 * [first, first + count) clamped to the axis, the filter's centre, and
 * 1 / the filter's widening; tap k weighs
 * m2i_resize_pillow_filter ((first + k - center + 0.5) * inv_filterscale). */
typedef struct {
  gint64 first, count;
  double center, inv_filterscale;
} M2iResizePillowWindow;
/* Half the filter's width in source values (at most that + 1 taps each
 * side). */
double m2i_resize_pillow_support (M2iResizeMode mode, gint64 in, gint64 out);
void m2i_resize_pillow_window (M2iResizeMode mode, gint64 in, gint64 out, gint64 i,
    M2iResizePillowWindow *w);

/* Builds the filter tables for resizing an in_width × in_height image with
 * @p. Returns NULL and sets @error (M2I_ERROR_INVALID_ARGUMENT) for zero,
 * negative or too large (> M2I_RESIZE_MAX_SIZE) sizes, an enum value out of
 * range or a non-finite cube_coeff. Options a mode does not use are
 * ignored, as OpenVINO does (nearest_mode outside "nearest", antialias
 * outside "linear" — the pillow modes always filter — cube_coeff outside the
 * cubic modes, coordinate_transformation_mode in the pillow modes).
 * The plan is immutable and may be shared by threads. Free with
 * m2i_resize_plan_free() (NULL is allowed). */
M2iResizePlan *m2i_resize_plan_new (const M2iResizeParams *p, gint in_width,
    gint in_height, GError **error);
void m2i_resize_plan_free (M2iResizePlan *plan);

/* Row kernels. @channels interleaved values per pixel (1..4); a planar image
 * is resized plane by plane with channels = 1. They never fail for valid
 * arguments (a plan from m2i_resize_plan_new, 1 <= channels <= 4, buffers of
 * the sizes below); they run at the level m2i_cpu_kernel_level() names, all
 * giving the same bits.
 *
 * hpass: resizes one source row (plan->in_width * channels values) to
 * plan->x.out_size * channels fp32 sums in @dst (applying the intermediate
 * rounding described above when plan->round_intermediate). */
void m2i_resize_hpass_u8 (const M2iResizePlan *plan, const guint8 *src,
    gint channels, float *dst);
void m2i_resize_hpass_f16 (const M2iResizePlan *plan, const guint16 *src,
    gint channels, float *dst);
void m2i_resize_hpass_f32 (const M2iResizePlan *plan, const float *src,
    gint channels, float *dst);

/* vpass: output row @out_y from the horizontally resized rows, where
 * rows[t] is the hpass result of source row plan->y.index[out_y * taps + t]
 * (t < plan->y.taps); @n is out_width * channels. */
void m2i_resize_vpass (const M2iResizePlan *plan, gint out_y,
    const float *const *rows, gint n, float *dst);

/* Final rounding of fp32 sums to u8 by plan->u8_round, shared by every path. */
void m2i_resize_round_u8_row (const M2iResizePlan *plan, const float *src,
    guint8 *dst, gint n);
/* Final rounding to fp16 (nearest, ties to even); same as m2i_f32_to_f16_n. */
void m2i_resize_round_f16_row (const float *src, guint16 *dst, gint n);

/* Element types of whole-image helpers. */
typedef enum {
  M2I_RESIZE_DATA_U8,
  M2I_RESIZE_DATA_F16,
  M2I_RESIZE_DATA_F32,
} M2iResizeData;

/* Resizes output rows [y0, y1) of an interleaved image (channels 1..4; for a
 * planar image call once per plane with channels = 1) with the row kernels
 * above, so results are the engine's bits. Input and output have the same
 * element type; strides are in bytes and may include padding.
 * @scratch must hold m2i_resize_scratch_floats (plan, channels) floats, or be
 * NULL to allocate (and free) one per call. Different row ranges may run
 * on different threads at once, each with its own scratch.
 * Returns FALSE with @error for channels out of range, a stride smaller
 * than a row, or rows out of range. */
gsize m2i_resize_scratch_floats (const M2iResizePlan *plan, gint channels);
gboolean m2i_resize_image_rows (const M2iResizePlan *plan, M2iResizeData type,
    gint channels, const void *src, gsize src_stride, void *dst,
    gsize dst_stride, gint y0, gint y1, float *scratch, GError **error);

/* The independent reference: evaluates the OpenVINO Interpolate formulas
 * directly in 2-D per output value, in double precision, without the
 * separable tables (written for clarity, slow; for tests). Coordinates are
 * computed in fp32 as OpenVINO's reference does, since they decide which
 * pixels are picked. Integer outputs use the rounding rules above; the
 * result is bit-compatible with the tables except where fp32 and double
 * sums fall on different sides of a rounding boundary (docs/resize.md).
 * Same arguments and errors as m2i_resize_image_rows() for the whole image,
 * plus the parameters and input size (no plan). */
gboolean m2i_resize_spec_image (const M2iResizeParams *p, gint in_width,
    gint in_height, M2iResizeData type, gint channels, const void *src,
    gsize src_stride, void *dst, gsize dst_stride, GError **error);

/* Kernels of one instruction-set level, for tests and benchmarks that
 * compare levels in one process. @level is one of 0 (plain C),
 * M2I_CPU_AVX2, M2I_CPU_AVX512F; returns NULL when this CPU or build
 * cannot run that level. The public functions above use the level
 * m2i_cpu_kernel_level (M2I_KERNELS_RESIZE) names. */
typedef struct {
  const char *name;
  void (*hpass_u8) (const M2iResizePlan *plan, const guint8 *src, gint channels, float *dst);
  void (*hpass_f16) (const M2iResizePlan *plan, const guint16 *src, gint channels, float *dst);
  void (*hpass_f32) (const M2iResizePlan *plan, const float *src, gint channels, float *dst);
  void (*vpass) (const M2iResizePlan *plan, gint out_y, const float *const *rows, gint n, float *dst);
  void (*round_u8) (const M2iResizePlan *plan, const float *src, guint8 *dst, gint n);
} M2iResizeKernels;

const M2iResizeKernels *m2i_resize_kernels_for_level (M2iCpuFlags level);

G_END_DECLS
