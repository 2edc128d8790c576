/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resize-image.c — whole-image resize with the row kernels: the engine's
 * numbers for a standalone resize, and the way tests drive the kernels.
 *
 * Horizontally resized source rows are kept in a small cache of y.taps rows,
 * so consecutive output rows that share source rows compute them once.
 */
#include "resize-internal.h"

#include <base/m2i-align.h>
#include <base/m2i-error.h>

static gsize
elem_size (M2iResizeData type)
{
  return type == M2I_RESIZE_DATA_U8 ? 1 : type == M2I_RESIZE_DATA_F16 ? 2 : 4;
}

static gsize
bookkeeping_floats (gint taps)
{
  gsize bytes = (gsize) taps * (sizeof (const float *) + sizeof (gint32));
  return m2i_align_up (bytes / sizeof (float), 16);
}

gsize
m2i_resize_scratch_floats (const M2iResizePlan *plan, gint channels)
{
  /* Bookkeeping (row pointers and row numbers of the cache, rounded up to
   * 16 floats), y.taps cached rows, and one output row of sums. */
  return bookkeeping_floats (plan->y.taps)
      + (gsize) (plan->y.taps + 1) * plan->x.out_size * channels;
}

gboolean
m2i_resize_image_args_check (gint in_w, gint in_h, gint out_w, gint out_h,
    M2iResizeData type, gint channels, const void *src, gsize src_stride,
    void *dst, gsize dst_stride, GError **error)
{
  gsize es = elem_size (type);
  if ((guint) type > M2I_RESIZE_DATA_F32) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: unknown element type %d", (int) type);
    return FALSE;
  }
  if (channels < 1 || channels > 4) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: %d interleaved channels; 1 to 4 are supported "
        "(resize planar images plane by plane)", channels);
    return FALSE;
  }
  if (src == NULL || dst == NULL) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: no %s image given", src == NULL ? "source" : "destination");
    return FALSE;
  }
  if (src_stride < (gsize) in_w * channels * es || dst_stride < (gsize) out_w * channels * es) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: row stride too small (source %" G_GSIZE_FORMAT " bytes for %d pixels, "
        "destination %" G_GSIZE_FORMAT " bytes for %d pixels, %d channels of %d bytes)",
        src_stride, in_w, dst_stride, out_w, channels, (int) es);
    return FALSE;
  }
  if (((guintptr) src | (guintptr) dst | src_stride | dst_stride) % es != 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: buffers and strides must be aligned to the %d-byte element",
        (int) es);
    return FALSE;
  }
  (void) in_h;
  (void) out_h;
  return TRUE;
}

static void
hpass_any (const M2iResizeKernels *k, const M2iResizePlan *plan, M2iResizeData type,
    const void *row, gint channels, float *dst)
{
  switch (type) {
    case M2I_RESIZE_DATA_U8:
      k->hpass_u8 (plan, row, channels, dst);
      break;
    case M2I_RESIZE_DATA_F16:
      k->hpass_f16 (plan, row, channels, dst);
      break;
    case M2I_RESIZE_DATA_F32:
      k->hpass_f32 (plan, row, channels, dst);
      break;
  }
}

gboolean
m2i_resize_image_rows (const M2iResizePlan *plan, M2iResizeData type,
    gint channels, const void *src, gsize src_stride, void *dst,
    gsize dst_stride, gint y0, gint y1, float *scratch, GError **error)
{
  return m2i_resize_image_rows_k (m2i_resize_kernels_best (), plan, type, channels,
      src, src_stride, dst, dst_stride, y0, y1, scratch, error);
}

gboolean
m2i_resize_image_rows_k (const M2iResizeKernels *k, const M2iResizePlan *plan,
    M2iResizeData type, gint channels, const void *src, gsize src_stride, void *dst,
    gsize dst_stride, gint y0, gint y1, float *scratch, GError **error)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  if (!m2i_resize_image_args_check (plan->in_width, plan->in_height,
          plan->x.out_size, plan->y.out_size, type, channels, src, src_stride,
          dst, dst_stride, error))
    return FALSE;
  if (y0 < 0 || y1 > plan->y.out_size || y0 > y1) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "resize: output rows [%d, %d) are outside the %d-row output", y0, y1,
        plan->y.out_size);
    return FALSE;
  }

  gint T = plan->y.taps;
  gint n = plan->x.out_size * channels;
  float *own = NULL;
  if (scratch == NULL)
    scratch = own = g_new (float, m2i_resize_scratch_floats (plan, channels));

  const float **rows = (const float **) scratch;
  gint32 *slot_row = (gint32 *) (rows + T);
  float *cache = scratch + bookkeeping_floats (T);
  float *sums = cache + (gsize) T * n;
  for (gint s = 0; s < T; s++)
    slot_row[s] = -1;

  for (gint y = y0; y < y1; y++) {
    const gint32 *need = plan->y.index + (gsize) y * T;
    for (gint t = 0; t < T; t++) {
      gint s;
      for (s = 0; s < T && slot_row[s] != need[t]; s++);
      if (s == T) {
        /* Reuse a slot whose row this output row does not need. */
        for (s = 0; s < T; s++) {
          gboolean needed = FALSE;
          for (gint u = 0; u < T; u++)
            needed |= slot_row[s] == need[u];
          if (!needed)
            break;
        }
        g_assert (s < T);
        slot_row[s] = need[t];
        hpass_any (k, plan, type, (const guint8 *) src + (gsize) need[t] * src_stride,
            channels, cache + (gsize) s * n);
      }
      rows[t] = cache + (gsize) s * n;
    }

    guint8 *out = (guint8 *) dst + (gsize) y * dst_stride;
    switch (type) {
      case M2I_RESIZE_DATA_U8:
        k->vpass (plan, y, rows, n, sums);
        k->round_u8 (plan, sums, out, n);
        break;
      case M2I_RESIZE_DATA_F16:
        k->vpass (plan, y, rows, n, sums);
        m2i_resize_round_f16_row (sums, (guint16 *) out, n);
        break;
      case M2I_RESIZE_DATA_F32:
        k->vpass (plan, y, rows, n, (float *) out);
        break;
    }
  }
  g_free (own);
  return TRUE;
}
