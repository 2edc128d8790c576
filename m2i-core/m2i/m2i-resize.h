/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-resize.h — parameters of the resize operation.
 *
 * Resize follows OpenVINO's Interpolate-4 and Interpolate-11 with
 * shape_calculation_mode = sizes, applied to the two spatial axes (H, W) of
 * an image. The enums spell the specification's attribute values; helpers
 * convert to and from those strings (used by element properties and by the IR
 * reader).
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

typedef enum {
  M2I_RESIZE_NEAREST,
  M2I_RESIZE_LINEAR,             /* Interpolate's "linear": triangle filter, N-d */
  M2I_RESIZE_LINEAR_ONNX,        /* bilinear on the 2x2 neighbourhood */
  M2I_RESIZE_CUBIC,
  M2I_RESIZE_BILINEAR_PILLOW,    /* Interpolate-11 only */
  M2I_RESIZE_BICUBIC_PILLOW,     /* Interpolate-11 only */
} M2iResizeMode;

typedef enum {
  M2I_COORD_HALF_PIXEL,
  M2I_COORD_PYTORCH_HALF_PIXEL,
  M2I_COORD_ASYMMETRIC,
  M2I_COORD_TF_HALF_PIXEL_FOR_NN,
  M2I_COORD_ALIGN_CORNERS,
} M2iCoordMode;

typedef enum {
  M2I_NEAREST_ROUND_PREFER_FLOOR,
  M2I_NEAREST_ROUND_PREFER_CEIL,
  M2I_NEAREST_FLOOR,
  M2I_NEAREST_CEIL,
  M2I_NEAREST_SIMPLE,
} M2iNearestMode;

typedef struct {
  M2iResizeMode mode;
  M2iCoordMode coord;
  M2iNearestMode nearest;
  gboolean antialias;
  float cube_coeff;
  gint out_width;                /* sizes: output W and H, > 0 */
  gint out_height;
} M2iResizeParams;

/* Fills @p with the spec's defaults — coordinate_transformation_mode
 * half_pixel, nearest_mode round_prefer_floor, antialias false, cube_coeff
 * -0.75 — mode nearest (the spec has no default mode) and the given output
 * size. Sizes are checked when a plan is made, not here. */
M2I_API void m2i_resize_params_init (M2iResizeParams *p, gint out_width, gint out_height);

/* Spec spelling ("linear_onnx", "half_pixel", "round_prefer_floor", ...,
 * ASCII case ignored) to enum; return FALSE for an unknown or NULL string and
 * leave *out alone. */
M2I_API gboolean m2i_resize_mode_from_string (const char *s, M2iResizeMode *out);
M2I_API gboolean m2i_coord_mode_from_string (const char *s, M2iCoordMode *out);
M2I_API gboolean m2i_nearest_mode_from_string (const char *s, M2iNearestMode *out);

/* Enum to spec spelling; static strings, NULL for an out-of-range value. */
M2I_API const char *m2i_resize_mode_to_string (M2iResizeMode m);
M2I_API const char *m2i_coord_mode_to_string (M2iCoordMode m);
M2I_API const char *m2i_nearest_mode_to_string (M2iNearestMode m);

G_END_DECLS
