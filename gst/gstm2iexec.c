/* gstm2iexec.c — plan cache and chain execution, see gstm2iexec.h. */
#include "gstm2iexec.h"

#include <m2i-core/base/m2i-error.h>
#include <m2i-core/base/m2i-fp16.h>
#include <string.h>

void
gst_m2i_plan_cache_init (GstM2iPlanCache *c)
{
  memset (c, 0, sizeof *c);
}

void
gst_m2i_plan_cache_clear (GstM2iPlanCache *c)
{
  m2i_plan_free (c->plan);
  g_free (c->description);
  gst_m2i_plan_cache_init (c);
}

gboolean
gst_m2i_ops_output (M2iFormat in_format, gint in_w, gint in_h, const M2iOp *ops, guint n,
    M2iFormat *format, gint *width, gint *height)
{
  M2iFormat f = in_format;
  gint w = in_w, h = in_h;
  for (guint i = 0; i < n; i++) {
    const M2iOp *op = &ops[i];
    gboolean yuv = m2i_format_is_yuv (f);
    if (yuv != (op->kind == M2I_OP_CSC))
      return FALSE;
    M2iLayout layout = m2i_format_layout (f);
    M2iDataType dt = m2i_format_dtype (f);
    M2iChannelOrder order = m2i_format_order (f);
    switch (op->kind) {
      case M2I_OP_CSC:
        layout = M2I_LAYOUT_INTERLEAVED;
        dt = M2I_DTYPE_U8;
        order = op->u.csc.order;
        break;
      case M2I_OP_CONVERT:
        dt = op->u.convert.to;
        break;
      case M2I_OP_RESIZE:
        w = op->u.resize.out_width;
        h = op->u.resize.out_height;
        break;
      case M2I_OP_PERMUTE:
        layout = M2I_LAYOUT_PLANAR;
        break;
      case M2I_OP_NORM:
        break;
    }
    f = m2i_format_compose (layout, dt, order);
    if (f == M2I_FORMAT_UNKNOWN)
      return FALSE;
  }
  *format = f;
  *width = w;
  *height = h;
  return TRUE;
}

/* ---- small image helpers --------------------------------------------------- */

static gsize
sample_bytes (M2iFormat f)
{
  return m2i_format_bytes_per_sample (f);
}

/* Moves @img's data pointers to pixel (@x, @y) and shrinks it to @w x @h. */
static void
image_view (M2iImage *img, gint x, gint y, gint w, gint h)
{
  gsize bps = sample_bytes (img->format);
  gboolean planar = m2i_format_layout (img->format) == M2I_LAYOUT_PLANAR;
  for (guint p = 0; p < m2i_format_n_planes (img->format); p++) {
    gsize off = (gsize) y * img->stride[p] + (gsize) x * bps * (planar ? 1 : 3);
    if (off > img->size[p]) {
      img->size[p] = 0;
    } else {
      img->data[p] += off;
      img->size[p] -= off;
    }
  }
  img->width = w;
  img->height = h;
}

static gboolean
copy_image (const M2iImage *src, const M2iImage *dst, GError **error)
{
  if (src->format != dst->format || src->width != dst->width || src->height != dst->height) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "nothing to compute, but the input (%s %dx%d) differs from the output (%s %dx%d)",
        m2i_format_to_string (src->format), src->width, src->height,
        m2i_format_to_string (dst->format), dst->width, dst->height);
    return FALSE;
  }
  if (!m2i_image_check (src, "input", TRUE, error) || !m2i_image_check (dst, "output", TRUE, error))
    return FALSE;
  for (guint p = 0; p < m2i_format_n_planes (src->format); p++) {
    gsize row;
    gint rows;
    m2i_format_plane_geometry (src->format, src->width, src->height, p, &row, &rows);
    for (gint y = 0; y < rows; y++)
      memcpy (dst->data[p] + (gsize) y * dst->stride[p], src->data[p] + (gsize) y * src->stride[p],
          row);
  }
  return TRUE;
}

/* Channel @c of the single pixel of a 1x1 image. */
static guint8 *
pixel_sample (const M2iImage *img, int c)
{
  gsize bps = sample_bytes (img->format);
  if (m2i_format_layout (img->format) == M2I_LAYOUT_PLANAR)
    return img->data[c];
  return img->data[0] + (gsize) c * bps;
}

static void
store_value (M2iFormat f, guint8 *dst, float v)
{
  switch (m2i_format_dtype (f)) {
    case M2I_DTYPE_U8: {
      float r = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v + 0.5f;
      *dst = (guint8) r;
      break;
    }
    case M2I_DTYPE_F16: {
      m2i_f16 h = m2i_f32_to_f16 (v);
      memcpy (dst, &h, sizeof h);
      break;
    }
    default:
      memcpy (dst, &v, sizeof v);
      break;
  }
}

/* The border sample per channel: the pad value as a pixel of the format the
 * chain has at the padding, run through the ops that follow it by the same
 * planner that runs the frame (so the border equals what an unfused chain
 * computes from padded pixels). */
static gboolean
compute_border (GstM2iPlanCache *c, const GstM2iDeferredFrame *frame, M2iFormat out_format,
    const M2iPlanOptions *opts, GError **error)
{
  const GstM2iLetterbox *lb = &frame->letterbox;
  M2iFormat at;
  gint w, h;
  if (lb->after_op > frame->ops.n_ops
      || !gst_m2i_ops_output (frame->source_image.format, frame->source_image.width,
          frame->source_image.height, frame->ops.ops, lb->after_op, &at, &w, &h)
      || m2i_format_is_yuv (at)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "letterbox padding after op %u of a %u-op chain is not on RGB data", lb->after_op,
        frame->ops.n_ops);
    return FALSE;
  }
  guint8 in_px[16], out_px[16];
  M2iImage a, b;
  m2i_image_wrap (&a, at, 1, 1, in_px, sizeof in_px, 0, NULL);
  for (int ch = 0; ch < 3; ch++)
    store_value (at, pixel_sample (&a, ch), lb->value);
  const M2iImage *px = &a;
  if (lb->after_op < frame->ops.n_ops) {
    M2iOpList rest;
    m2i_op_list_init (&rest);
    for (guint i = lb->after_op; i < frame->ops.n_ops; i++) {
      M2iOpKind k = frame->ops.ops[i].kind;
      if (k == M2I_OP_CSC || k == M2I_OP_RESIZE) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "a %s follows letterbox padding in one chain; the chain must be split there",
            m2i_op_kind_to_string (k));
        return FALSE;
      }
      rest.ops[rest.n_ops++] = frame->ops.ops[i];
    }
    if (!m2i_image_wrap (&b, out_format, 1, 1, out_px, sizeof out_px, 0, error))
      return FALSE;
    M2iPlan *p = m2i_plan_new (&a, &rest, &b, opts, error);
    if (!p)
      return FALSE;
    gboolean ok = m2i_plan_run (p, &a, &b, error);
    m2i_plan_free (p);
    if (!ok)
      return FALSE;
    px = &b;
  } else if (at != out_format) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "letterbox padding yields %s, but the output is %s", m2i_format_to_string (at),
        m2i_format_to_string (out_format));
    return FALSE;
  }
  gsize bps = sample_bytes (out_format);
  for (int ch = 0; ch < 3; ch++)
    memcpy (c->border[ch], pixel_sample (px, ch), bps);
  return TRUE;
}

/* Repeats @n pixels of the border pattern at @dst (one plane of @img). */
static void
fill_pixels (const GstM2iPlanCache *c, const M2iImage *img, int plane, guint8 *dst, gint n)
{
  gsize bps = sample_bytes (img->format);
  if (m2i_format_layout (img->format) == M2I_LAYOUT_PLANAR) {
    for (gint i = 0; i < n; i++)
      memcpy (dst + (gsize) i * bps, c->border[plane], bps);
    return;
  }
  for (gint i = 0; i < n; i++)
    for (int ch = 0; ch < 3; ch++)
      memcpy (dst + ((gsize) i * 3 + ch) * bps, c->border[ch], bps);
}

/* Fills everything of @out outside the @w x @h picture at (@x, @y). */
static void
fill_border (const GstM2iPlanCache *c, const M2iImage *out, gint x, gint y, gint w, gint h)
{
  gsize px = sample_bytes (out->format)
      * (m2i_format_layout (out->format) == M2I_LAYOUT_PLANAR ? 1 : 3);
  for (guint p = 0; p < m2i_format_n_planes (out->format); p++) {
    for (gint row = 0; row < out->height; row++) {
      guint8 *r = out->data[p] + (gsize) row * out->stride[p];
      if (row < y || row >= y + h) {
        fill_pixels (c, out, p, r, out->width);
      } else {
        fill_pixels (c, out, p, r, x);
        fill_pixels (c, out, p, r + (gsize) (x + w) * px, out->width - x - w);
      }
    }
  }
}

/* ---- the cache ---------------------------------------------------------- */

static gboolean
cache_matches (const GstM2iPlanCache *c, const M2iImage *src, const M2iImage *dst,
    const GstM2iDeferredFrame *frame, const M2iPlanOptions *opts)
{
  const GstM2iLetterbox *a = &c->letterbox, *b = &frame->letterbox;
  return c->valid && m2i_image_same_geometry (&c->src, src)
      && m2i_image_same_geometry (&c->dst, dst)
      && m2i_op_list_equal (&c->ops, &frame->ops)
      && a->active == b->active && a->after_op == b->after_op && a->x == b->x
      && a->y == b->y && a->value == b->value
      && c->opts.profile == opts->profile && c->opts.n_threads == opts->n_threads;
}

static void
describe (GstM2iPlanCache *c, const GstM2iDeferredFrame *frame)
{
  g_free (c->description);
  c->n_device_tasks = c->n_cpu_tasks = 0;
  gchar *ops = m2i_op_list_to_string (&frame->ops);
  if (c->plan) {
    for (guint i = 0; i < m2i_plan_n_tasks (c->plan); i++) {
      M2iTaskInfo t;
      m2i_plan_get_task (c->plan, i, &t);
      if (t.target == M2I_TASK_DEVICE)
        c->n_device_tasks++;
      else
        c->n_cpu_tasks++;
    }
  }
  GString *s = g_string_new (c->plan ? ops : "copy");
  if (frame->letterbox.active)
    g_string_append (s, " + letterbox");
  if (c->plan) {
    g_string_append_printf (s, " (%u device task%s", c->n_device_tasks,
        c->n_device_tasks == 1 ? "" : "s");
    if (c->n_cpu_tasks)
      g_string_append_printf (s, ", %u CPU task%s", c->n_cpu_tasks,
          c->n_cpu_tasks == 1 ? "" : "s");
    g_string_append_c (s, ')');
  }
  c->description = g_string_free (s, FALSE);
  g_free (ops);
}

static gboolean
replan (GstM2iPlanCache *c, const M2iImage *src, const M2iImage *view, const M2iImage *out,
    const GstM2iDeferredFrame *frame, const M2iPlanOptions *opts, GError **error)
{
  gst_m2i_plan_cache_clear (c);
  if (frame->ops.n_ops > 0) {
    c->plan = m2i_plan_new (src, &frame->ops, view, opts, error);
    if (!c->plan)
      return FALSE;
  }
  if (frame->letterbox.active && !compute_border (c, frame, out->format, opts, error)) {
    gst_m2i_plan_cache_clear (c);
    return FALSE;
  }
  c->src = *src;
  c->dst = *view;
  c->ops = frame->ops;
  c->letterbox = frame->letterbox;
  c->opts = *opts;
  c->valid = TRUE;
  describe (c, frame);
  return TRUE;
}

gboolean
gst_m2i_plan_cache_run (GstM2iPlanCache *c, const GstM2iDeferredFrame *frame, M2iImage *out,
    const M2iPlanOptions *opts, gboolean *replanned, GError **error)
{
  if (replanned)
    *replanned = FALSE;
  M2iFormat of;
  gint ow, oh;
  if (!frame->source || !gst_m2i_ops_output (frame->source_image.format,
          frame->source_image.width, frame->source_image.height, frame->ops.ops,
          frame->ops.n_ops, &of, &ow, &oh)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the deferred frame has no source or its ops do not apply to a %s source",
        m2i_format_to_string (frame->source_image.format));
    return FALSE;
  }
  const GstM2iLetterbox *lb = &frame->letterbox;
  M2iImage view = *out;
  if (lb->active) {
    if (!m2i_image_check (out, "output", TRUE, error))
      return FALSE;
    if (lb->x < 0 || lb->y < 0 || lb->x + ow > out->width || lb->y + oh > out->height) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "the %dx%d picture at (%d,%d) does not fit the %dx%d letterbox canvas", ow, oh,
          lb->x, lb->y, out->width, out->height);
      return FALSE;
    }
    image_view (&view, lb->x, lb->y, ow, oh);
  }
  if (of != out->format || view.width != ow || view.height != oh) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the ops produce %s %dx%d, but the output is %s %dx%d", m2i_format_to_string (of),
        ow, oh, m2i_format_to_string (out->format), view.width, view.height);
    return FALSE;
  }
  GstMapInfo map;
  M2iImage src;
  if (!gst_m2i_deferred_frame_map_source (frame, &map, &src, error))
    return FALSE;
  gboolean ok = TRUE;
  if (!cache_matches (c, &src, &view, frame, opts)) {
    ok = replan (c, &src, &view, out, frame, opts, error);
    if (ok && replanned)
      *replanned = TRUE;
  }
  if (ok) {
    if (c->plan)
      ok = m2i_plan_run (c->plan, &src, &view, error);
    else
      ok = copy_image (&src, &view, error);
  }
  if (ok && lb->active)
    fill_border (c, out, lb->x, lb->y, ow, oh);
  gst_buffer_unmap (frame->source, &map);
  return ok;
}
