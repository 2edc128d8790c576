/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-cache.c — plan once, run per frame, letterbox borders; see
 * m2i-plan-cache.h. */
#include "m2i-plan-cache.h"

#include <m2i-core/base/m2i-error.h>
#include <m2i-core/base/m2i-fp16.h>
#include <string.h>

struct _M2iPlanCache {
  gboolean valid;
  M2iPlan *plan;                 /* NULL when there are no ops (a copy) */
  /* what the plan was made for */
  M2iImage src, dst;             /* geometry only; dst is the picture inside the canvas */
  M2iOpList ops;
  M2iLetterbox letterbox;
  M2iPlanOptions opts;
  /* letterbox border: one sample per channel in the output type */
  guint8 border[3][4];
  gchar *description;
};

M2iPlanCache *
m2i_plan_cache_new (void)
{
  M2iPlanCache *c = g_new0 (M2iPlanCache, 1);
  c->description = g_strdup ("");
  return c;
}

void
m2i_plan_cache_reset (M2iPlanCache *c)
{
  m2i_plan_free (c->plan);
  c->plan = NULL;
  c->valid = FALSE;
  g_free (c->description);
  c->description = g_strdup ("");
}

void
m2i_plan_cache_free (M2iPlanCache *c)
{
  if (!c)
    return;
  m2i_plan_free (c->plan);
  g_free (c->description);
  g_free (c);
}

const char *
m2i_plan_cache_describe (const M2iPlanCache *c)
{
  return c->description;
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
  gsize px = m2i_format_pixel_stride (img->format);
  for (guint p = 0; p < m2i_format_n_planes (img->format); p++) {
    gsize off = (gsize) y * img->stride[p] + (gsize) x * px;
    if (!img->data[p])
      continue;                 /* geometry only */
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
  return img->data[0] + m2i_format_channel_offset (img->format) + (gsize) c * bps;
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

/* The first @n ops of @ops. */
static void
op_prefix (const M2iOpList *ops, guint n, M2iOpList *out)
{
  m2i_op_list_init (out);
  for (guint i = 0; i < n && i < ops->n_ops; i++)
    out->ops[out->n_ops++] = ops->ops[i];
}

/* The border sample per channel: the pad value as a pixel of the format the
 * chain has at the padding, run through the ops that follow it by the same
 * planner that runs the frame (so the border equals what an unfused chain
 * computes from padded pixels). */
static gboolean
compute_border (M2iPlanCache *c, const M2iImage *src, const M2iOpList *ops,
    const M2iLetterbox *lb, M2iFormat out_format, const M2iPlanOptions *opts, GError **error)
{
  M2iFormat at;
  gint w, h;
  M2iOpList head;
  op_prefix (ops, lb->after_op, &head);
  if (lb->after_op > ops->n_ops
      || !m2i_op_list_result (&head, src->format, src->width, src->height, &at, &w, &h, NULL)
      || m2i_format_is_yuv (at)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "letterbox padding after op %u of a %u-op chain is not on RGB data", lb->after_op,
        ops->n_ops);
    return FALSE;
  }
  guint8 in_px[16], out_px[16];
  M2iImage a, b;
  m2i_image_wrap (&a, at, 1, 1, in_px, sizeof in_px, 0, NULL);
  for (guint ch = 0; ch < m2i_format_n_channels (at); ch++)
    store_value (at, pixel_sample (&a, (int) ch), lb->value);
  const M2iImage *px = &a;
  if (lb->after_op < ops->n_ops) {
    M2iOpList rest;
    m2i_op_list_init (&rest);
    for (guint i = lb->after_op; i < ops->n_ops; i++) {
      M2iOpKind k = ops->ops[i].kind;
      if (k == M2I_OP_CSC || k == M2I_OP_RESIZE) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "a %s follows letterbox padding in one chain; the chain must be split there",
            m2i_op_kind_to_string (k));
        return FALSE;
      }
      rest.ops[rest.n_ops++] = ops->ops[i];
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
  for (guint ch = 0; ch < m2i_format_n_channels (out_format); ch++)
    memcpy (c->border[ch], pixel_sample (px, (int) ch), bps);
  return TRUE;
}

/* Repeats @n pixels of the border pattern at @dst (one plane of @img). */
static void
fill_pixels (const M2iPlanCache *c, const M2iImage *img, int plane, guint8 *dst, gint n)
{
  gsize bps = sample_bytes (img->format);
  if (m2i_format_layout (img->format) == M2I_LAYOUT_PLANAR) {
    for (gint i = 0; i < n; i++)
      memcpy (dst + (gsize) i * bps, c->border[plane], bps);
    return;
  }
  gsize px = m2i_format_pixel_stride (img->format), off = m2i_format_channel_offset (img->format);
  for (gint i = 0; i < n; i++)
    for (int ch = 0; ch < 3; ch++)
      memcpy (dst + (gsize) i * px + off + (gsize) ch * bps, c->border[ch], bps);
}

/* Fills everything of @out outside the @w x @h picture at (@x, @y). */
static void
fill_border (const M2iPlanCache *c, const M2iImage *out, gint x, gint y, gint w, gint h)
{
  gsize px = m2i_format_pixel_stride (out->format);
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
letterbox_equal (const M2iLetterbox *a, const M2iLetterbox *b)
{
  if (!a->active || !b->active)
    return a->active == b->active;
  return a->after_op == b->after_op && a->x == b->x && a->y == b->y && a->width == b->width
      && a->height == b->height && a->value == b->value;
}

static gboolean
cache_matches (const M2iPlanCache *c, const M2iImage *src, const M2iImage *dst,
    const M2iOpList *ops, const M2iLetterbox *lb, const M2iPlanOptions *opts)
{
  return c->valid && m2i_image_same_geometry (&c->src, src)
      && m2i_image_same_geometry (&c->dst, dst)
      && m2i_op_list_equal (&c->ops, ops) && letterbox_equal (&c->letterbox, lb)
      && c->opts.profile == opts->profile && c->opts.n_threads == opts->n_threads;
}

static void
describe (M2iPlanCache *c, const M2iOpList *ops, gboolean letterbox)
{
  g_free (c->description);
  guint n_device = 0, n_cpu = 0;
  if (c->plan) {
    for (guint i = 0; i < m2i_plan_n_tasks (c->plan); i++) {
      M2iTaskInfo t;
      m2i_plan_get_task (c->plan, i, &t);
      if (t.target == M2I_TASK_DEVICE)
        n_device++;
      else
        n_cpu++;
    }
  }
  gchar *text = m2i_op_list_to_string (ops);
  GString *s = g_string_new (c->plan ? text : "copy");
  if (letterbox)
    g_string_append (s, " + letterbox");
  if (c->plan) {
    g_string_append_printf (s, " (%u device task%s", n_device, n_device == 1 ? "" : "s");
    if (n_cpu)
      g_string_append_printf (s, ", %u CPU task%s", n_cpu, n_cpu == 1 ? "" : "s");
    g_string_append_c (s, ')');
  }
  c->description = g_string_free (s, FALSE);
  g_free (text);
}

/* The picture of @out that @ops write (the canvas less the letterbox
 * border), after checking that @ops applied to @src give it. */
static gboolean
target_view (const M2iImage *src, const M2iOpList *ops, const M2iLetterbox *lb,
    const M2iImage *out, M2iImage *view, GError **error)
{
  M2iFormat of = src->format;
  gint ow = src->width, oh = src->height;
  GError *why = NULL;
  if (!m2i_op_list_result (ops, src->format, src->width, src->height, &of, &ow, &oh, &why)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the ops do not apply to a %s %dx%d source: %s", m2i_format_to_string (src->format),
        src->width, src->height, why->message);
    g_error_free (why);
    return FALSE;
  }
  *view = *out;
  if (lb->active) {
    if (!m2i_image_check (out, "output", FALSE, error))
      return FALSE;
    if (lb->x < 0 || lb->y < 0 || lb->x + ow > out->width || lb->y + oh > out->height
        || (lb->width && (lb->width != out->width || lb->height != out->height))) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "the %dx%d picture at (%d,%d) does not fit the %dx%d letterbox canvas", ow, oh,
          lb->x, lb->y, out->width, out->height);
      return FALSE;
    }
    image_view (view, lb->x, lb->y, ow, oh);
  }
  if (of != out->format || view->width != ow || view->height != oh) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the ops produce %s %dx%d, but the output is %s %dx%d", m2i_format_to_string (of),
        ow, oh, m2i_format_to_string (out->format), view->width, view->height);
    return FALSE;
  }
  return TRUE;
}

static gboolean
prepare_view (M2iPlanCache *c, const M2iImage *src, const M2iOpList *ops,
    const M2iLetterbox *lb, const M2iImage *out, const M2iImage *view,
    const M2iPlanOptions *opts, gboolean *replanned, GError **error)
{
  if (replanned)
    *replanned = FALSE;
  if (cache_matches (c, src, view, ops, lb, opts))
    return TRUE;
  m2i_plan_cache_reset (c);
  if (ops->n_ops > 0) {
    c->plan = m2i_plan_new (src, ops, view, opts, error);
    if (!c->plan)
      return FALSE;
  } else if (src->format != view->format || src->width != view->width
      || src->height != view->height) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "nothing to compute, but the input (%s %dx%d) differs from the output (%s %dx%d)",
        m2i_format_to_string (src->format), src->width, src->height,
        m2i_format_to_string (view->format), view->width, view->height);
    return FALSE;
  }
  if (lb->active && !compute_border (c, src, ops, lb, out->format, opts, error)) {
    m2i_plan_cache_reset (c);
    return FALSE;
  }
  c->src = *src;
  c->dst = *view;
  c->ops = *ops;
  c->letterbox = *lb;
  c->opts = *opts;
  c->valid = TRUE;
  describe (c, ops, lb->active);
  if (replanned)
    *replanned = TRUE;
  return TRUE;
}

/* What NULL arguments stand for: no ops, no letterbox, default options. */
typedef struct {
  M2iOpList none;
  M2iPlanOptions opts;
} Defaults;

static const M2iLetterbox no_letterbox;

static void
fill_defaults (Defaults *d, const M2iOpList **ops, const M2iLetterbox **letterbox,
    const M2iPlanOptions **opts)
{
  if (!*ops) {
    m2i_op_list_init (&d->none);
    *ops = &d->none;
  }
  if (!*letterbox)
    *letterbox = &no_letterbox;
  if (!*opts) {
    m2i_plan_options_init (&d->opts);
    *opts = &d->opts;
  }
}

gboolean
m2i_plan_cache_prepare (M2iPlanCache *c, const M2iImage *src, const M2iOpList *ops,
    const M2iLetterbox *letterbox, const M2iImage *out, const M2iPlanOptions *opts,
    gboolean *replanned, GError **error)
{
  Defaults d;
  M2iImage view;
  fill_defaults (&d, &ops, &letterbox, &opts);
  return target_view (src, ops, letterbox, out, &view, error)
      && prepare_view (c, src, ops, letterbox, out, &view, opts, replanned, error);
}

gboolean
m2i_plan_cache_run (M2iPlanCache *c, const M2iImage *src, const M2iOpList *ops,
    const M2iLetterbox *letterbox, M2iImage *out, const M2iPlanOptions *opts,
    gboolean *replanned, GError **error)
{
  Defaults d;
  M2iImage view;
  fill_defaults (&d, &ops, &letterbox, &opts);
  if (letterbox->active && !m2i_image_check (out, "output", TRUE, error))
    return FALSE;
  if (!target_view (src, ops, letterbox, out, &view, error)
      || !prepare_view (c, src, ops, letterbox, out, &view, opts, replanned, error))
    return FALSE;
  gboolean ok = c->plan ? m2i_plan_run (c->plan, src, &view, error)
      : copy_image (src, &view, error);
  if (ok && letterbox->active)
    fill_border (c, out, letterbox->x, letterbox->y, view.width, view.height);
  return ok;
}
