/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-resize.c — resize parameters: Interpolate's defaults and the spec's
 * spelling of every attribute value. */
#include "resize-private.h"

const char *const m2i_resize_mode_names[] = {
  [M2I_RESIZE_NEAREST] = "nearest",
  [M2I_RESIZE_LINEAR] = "linear",
  [M2I_RESIZE_LINEAR_ONNX] = "linear_onnx",
  [M2I_RESIZE_CUBIC] = "cubic",
  [M2I_RESIZE_BILINEAR_PILLOW] = "bilinear_pillow",
  [M2I_RESIZE_BICUBIC_PILLOW] = "bicubic_pillow",
  NULL,
};

const char *const m2i_coord_mode_names[] = {
  [M2I_COORD_HALF_PIXEL] = "half_pixel",
  [M2I_COORD_PYTORCH_HALF_PIXEL] = "pytorch_half_pixel",
  [M2I_COORD_ASYMMETRIC] = "asymmetric",
  [M2I_COORD_TF_HALF_PIXEL_FOR_NN] = "tf_half_pixel_for_nn",
  [M2I_COORD_ALIGN_CORNERS] = "align_corners",
  NULL,
};

const char *const m2i_nearest_mode_names[] = {
  [M2I_NEAREST_ROUND_PREFER_FLOOR] = "round_prefer_floor",
  [M2I_NEAREST_ROUND_PREFER_CEIL] = "round_prefer_ceil",
  [M2I_NEAREST_FLOOR] = "floor",
  [M2I_NEAREST_CEIL] = "ceil",
  [M2I_NEAREST_SIMPLE] = "simple",
  NULL,
};

void
m2i_resize_params_init (M2iResizeParams *p, gint out_width, gint out_height)
{
  g_return_if_fail (p != NULL);
  /* The spec has no default mode (it is required); nearest is the cheapest
   * and exact. The other values are the spec's defaults. */
  p->mode = M2I_RESIZE_NEAREST;
  p->coord = M2I_COORD_HALF_PIXEL;
  p->nearest = M2I_NEAREST_ROUND_PREFER_FLOOR;
  p->antialias = FALSE;
  p->cube_coeff = -0.75f;
  p->out_width = out_width;
  p->out_height = out_height;
}

/* Case-insensitive lookup of @s in @names (NULL-terminated); -1 when absent. */
static gint
lookup (const char *const *names, const char *s)
{
  if (s == NULL)
    return -1;
  for (guint i = 0; names[i]; i++)
    if (g_ascii_strcasecmp (names[i], s) == 0)
      return (gint) i;
  return -1;
}

gboolean
m2i_resize_mode_from_string (const char *s, M2iResizeMode *out)
{
  gint v = lookup (m2i_resize_mode_names, s);
  if (v < 0)
    return FALSE;
  *out = (M2iResizeMode) v;
  return TRUE;
}

gboolean
m2i_coord_mode_from_string (const char *s, M2iCoordMode *out)
{
  gint v = lookup (m2i_coord_mode_names, s);
  if (v < 0)
    return FALSE;
  *out = (M2iCoordMode) v;
  return TRUE;
}

gboolean
m2i_nearest_mode_from_string (const char *s, M2iNearestMode *out)
{
  gint v = lookup (m2i_nearest_mode_names, s);
  if (v < 0)
    return FALSE;
  *out = (M2iNearestMode) v;
  return TRUE;
}

const char *
m2i_resize_mode_to_string (M2iResizeMode m)
{
  return (guint) m < G_N_ELEMENTS (m2i_resize_mode_names) - 1 ? m2i_resize_mode_names[m] : NULL;
}

const char *
m2i_coord_mode_to_string (M2iCoordMode m)
{
  return (guint) m < G_N_ELEMENTS (m2i_coord_mode_names) - 1 ? m2i_coord_mode_names[m] : NULL;
}

const char *
m2i_nearest_mode_to_string (M2iNearestMode m)
{
  return (guint) m < G_N_ELEMENTS (m2i_nearest_mode_names) - 1 ? m2i_nearest_mode_names[m] : NULL;
}
