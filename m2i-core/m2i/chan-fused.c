/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chan-fused.c — the one-pass kernel for pixel chains (chan-private.h):
 * [dropAlpha | gray] [convert] [resize] [permute] [norm] on u8 RGB, 4-byte
 * or gray pixels (gray also on NV12/I420's Y plane).
 *
 * Without resize, each output row is its source row split into channel
 * rows, converted, normalised and stored. With resize, output rows are
 * sliced over threads; each slice keeps a ring of horizontally resized
 * source rows (as many as the widest vertical window), every needed source
 * row split and resized once, then one vertical pass per output row and the
 * finishing steps (round to the type the resize ran in, norm, store planar
 * or interleaved). The sums are the resize module's row kernels, in the
 * reference path's order, so results equal it (u8 exactly, fp16 within the
 * fast norm's ulp).
 *
 * Interleaved or one-plane pixels resized in fp16 or fp32 to planes of that
 * type (the YOLO and ImageNet inputs from 4-byte camera frames) take the
 * SIMD row kernels of chan-fetch.h instead: the ring holds the horizontal
 * sums each source row's needed pixels give directly (no split rows), and
 * one sweep per output row does the vertical pass, norm and store. Same
 * order of evaluation, same results.
 */
#include "chan-private.h"
#include "chan-fetch.h"
#include "engine-private.h"

#include <base/m2i-fp16.h>
#include <base/m2i-parallel.h>
#include <string.h>

typedef struct {
  guint8 *split;               /* channel rows of one source row */
  m2i_f16 *h16;                /* one channel row as fp16 (pillow rounding on fp16) */
  float *h32;                  /* one channel row as fp32 */
  float *ring;                 /* ring_n slots of n_ch * out_w sums */
  gint *tags;                  /* source row held by each slot, -1: none */
  const float **rows;
  float *vrow;                 /* n_ch * out_w */
  guint8 *o8;
  m2i_f16 *o16;
} Slice;

struct ChanFused {
  ChanReader rd;
  guint n_ch;
  gint in_w, in_h, out_w, out_h;
  M2iDataType resize_dt, out_dt;
  gboolean has_resize, has_norm, out_planar;
  float sub[3], mul[3], add[3];
  M2iResizePlan *rplan;
  ChanFetch *fetch;            /* the SIMD row kernels (chan-fetch.h), NULL: the split rows */
  gint rstride;                /* floats per channel of a ring slot */
  gint ring_n;
  gint n_slices;
  Slice *slices;
  const M2iImage *in;          /* per run */
  M2iImage *out;
};

/* Rank of each op kind in the kernel's order (gray shares dropAlpha's). */
static gint
stage_of (M2iOpKind k)
{
  switch (k) {
    case M2I_OP_DROP_ALPHA:
    case M2I_OP_GRAY: return 0;
    case M2I_OP_CONVERT: return 1;
    case M2I_OP_RESIZE: return 2;
    case M2I_OP_PERMUTE: return 3;
    case M2I_OP_NORM: return 4;
    default: return -1;
  }
}

gboolean
m2i_chan_fused_supported (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out)
{
  if (n_ops == 0 || m2i_format_dtype (in->format) != M2I_DTYPE_U8)
    return FALSE;
  gboolean head = ops[0].kind == M2I_OP_DROP_ALPHA || ops[0].kind == M2I_OP_GRAY;
  if (n_ops < 2 && !head)
    return FALSE;
  if (m2i_format_is_yuv (in->format) && ops[0].kind != M2I_OP_GRAY)
    return FALSE;
  gint last = -1;
  for (guint i = 0; i < n_ops; i++) {
    gint st = stage_of (ops[i].kind);
    if (st <= last || (st == 0 && i > 0))
      return FALSE;
    last = st;
  }
  return !(m2i_format_layout (out->format) == M2I_LAYOUT_INTERLEAVED
      && m2i_format_dtype (out->format) != M2I_DTYPE_U8);
}

static void
slice_free (Slice *s)
{
  g_free (s->split);
  g_free (s->h16);
  g_free (s->h32);
  g_free (s->ring);
  g_free (s->tags);
  g_free (s->rows);
  g_free (s->vrow);
  g_free (s->o8);
  g_free (s->o16);
}

/* The SIMD row kernels where they run the chain: a resize without
 * intermediate rounding on fp16 or fp32 data, stored planar in that type,
 * from interleaved pixels or one u8 plane. NULL otherwise. */
static ChanFetch *
fetch_new (ChanFused *f)
{
  if (!f->has_resize || !m2i_chan_fetch_supported (f->rplan) || !f->out_planar
      || f->resize_dt == M2I_DTYPE_U8 || f->out_dt != f->resize_dt)
    return NULL;
  guint px, coff[3] = { 0, 0, 0 };
  if (f->rd.kind == CHAN_SPLIT) {
    px = f->rd.px;
    for (guint c = 0; c < 3; c++)
      coff[c] = f->rd.off + c;
  } else if (f->rd.kind == CHAN_LUMA_PLANE || (f->rd.kind == CHAN_PLANES && f->n_ch == 1)) {
    px = 1;
  } else {
    return NULL;
  }
  gboolean n = f->has_norm;
  return m2i_chan_fetch_new (f->rplan, px, f->n_ch, coff, f->resize_dt == M2I_DTYPE_F16,
      f->out_dt == M2I_DTYPE_F16, n ? f->sub : NULL, n ? f->mul : NULL, n ? f->add : NULL);
}

void
m2i_chan_fused_free (ChanFused *f)
{
  if (!f)
    return;
  for (gint i = 0; f->slices && i < f->n_slices; i++)
    slice_free (&f->slices[i]);
  g_free (f->slices);
  m2i_chan_fetch_free (f->fetch);
  if (f->rplan)
    m2i_resize_plan_free (f->rplan);
  g_free (f);
}

ChanFused *
m2i_chan_fused_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gint n_threads, GError **error)
{
  g_return_val_if_fail (m2i_chan_fused_supported (in, ops, n_ops, out), NULL);
  ChanFused *f = g_new0 (ChanFused, 1);
  if (!m2i_chan_reader_init (&f->rd, in->format, ops[0].kind == M2I_OP_GRAY)) {
    g_free (f);
    g_return_val_if_reached (NULL);
  }
  f->n_ch = f->rd.n_out;
  f->in_w = in->width;
  f->in_h = in->height;
  f->out_w = out->width;
  f->out_h = out->height;
  f->out_dt = m2i_format_dtype (out->format);
  f->out_planar = m2i_format_layout (out->format) == M2I_LAYOUT_PLANAR;
  M2iDataType dt = M2I_DTYPE_U8;
  f->resize_dt = M2I_DTYPE_U8;
  for (guint i = 0; i < n_ops; i++) {
    const M2iOp *op = &ops[i];
    if (op->kind == M2I_OP_CONVERT)
      dt = op->u.convert.to;
    if (op->kind == M2I_OP_RESIZE) {
      f->has_resize = TRUE;
      f->resize_dt = dt;
      f->rplan = m2i_resize_plan_new (&op->u.resize, in->width, in->height, error);
      if (!f->rplan) {
        m2i_chan_fused_free (f);
        return NULL;
      }
    }
    if (op->kind == M2I_OP_NORM) {
      f->has_norm = TRUE;
      for (guint c = 0; c < f->n_ch; c++)
        m2i_norm_fast_coeffs (&op->u.norm, (int) c, &f->sub[c], &f->mul[c], &f->add[c]);
    }
  }
  /* Without resize, the values reach finish_row as the exact fp32 of u8
   * pixels (a convert to fp16 rounds nothing). */
  if (!f->has_resize)
    f->resize_dt = M2I_DTYPE_F32;
  f->fetch = fetch_new (f);
  f->rstride = f->fetch ? f->fetch->np : f->out_w;
  f->n_slices = n_threads > 0 ? n_threads : m2i_parallel_n_cores ();
  f->slices = g_new0 (Slice, f->n_slices);
  gsize n = (gsize) f->out_w * f->n_ch;
  gint taps = 1;
  if (f->has_resize) {
    const M2iResizeAxis *ay = &f->rplan->y;
    f->ring_n = 1;
    for (gint i = 0; i < ay->out_size; i++)
      f->ring_n = MAX (f->ring_n, ay->last[i] - ay->first[i] + 1);
    taps = ay->taps;
  }
  for (gint s = 0; s < f->n_slices; s++) {
    Slice *sl = &f->slices[s];
    if (f->has_resize) {
      sl->ring = g_new0 (float, (gsize) f->rstride * f->n_ch * f->ring_n);
      sl->tags = g_new (gint, f->ring_n);
      sl->rows = g_new0 (const float *, taps);
    }
    if (f->fetch)
      continue;                 /* the row kernels need no split rows */
    sl->split = g_new0 (guint8, (gsize) f->in_w * 3);
    sl->vrow = g_new0 (float, n);
    sl->o8 = g_new0 (guint8, n);
    sl->o16 = g_new0 (m2i_f16, n);
    if (!f->has_resize)
      continue;
    if (f->resize_dt == M2I_DTYPE_F16 && f->rplan->round_intermediate)
      sl->h16 = g_new0 (m2i_f16, f->in_w);
    if (f->resize_dt == M2I_DTYPE_F32)
      sl->h32 = g_new0 (float, f->in_w);
  }
  return f;
}

/* Stores @n_ch channel rows of out_w values (@bps bytes each, one after the
 * other in @vals) as output row @oy: planes, or interleaved (u8). */
static void
store_row (ChanFused *f, gint oy, const void *vals, gsize bps)
{
  const M2iImage *out = f->out;
  gsize w = (gsize) f->out_w;
  const guint8 *v = vals;
  if (f->out_planar) {
    for (guint c = 0; c < f->n_ch; c++)
      memcpy (out->data[c] + (gsize) oy * out->stride[c], v + c * w * bps, w * bps);
    return;
  }
  guint8 *d = out->data[0] + (gsize) oy * out->stride[0];
  for (gsize i = 0; i < w; i++)
    for (guint c = 0; c < 3; c++)
      d[3 * i + c] = v[c * w + i];
}

/* Rounds the vertical sums in sl->vrow to the type the resize ran in,
 * normalises and stores output row @oy. */
static void
finish_row (ChanFused *f, Slice *sl, gint oy, float *x)
{
  gsize w = (gsize) f->out_w, n = w * f->n_ch;
  if (f->resize_dt == M2I_DTYPE_U8 && f->out_dt == M2I_DTYPE_U8) {
    m2i_resize_round_u8_row (f->rplan, x, sl->o8, (gint) n);
    store_row (f, oy, sl->o8, 1);
    return;
  }
  if (f->resize_dt == M2I_DTYPE_F16) {
    m2i_f32_to_f16_n (x, sl->o16, n);
    if (!f->has_norm) {
      store_row (f, oy, sl->o16, 2);
      return;
    }
    m2i_f16_to_f32_n (sl->o16, x, n);
  }
  if (f->has_norm)
    for (guint c = 0; c < f->n_ch; c++) {
      float *r = x + c * w, s = f->sub[c], m = f->mul[c], a = f->add[c];
      for (gsize i = 0; i < w; i++)
        r[i] = (r[i] - s) * m + a;
    }
  if (f->out_dt == M2I_DTYPE_F16) {
    m2i_f32_to_f16_n (x, sl->o16, n);
    store_row (f, oy, sl->o16, 2);
  } else {
    store_row (f, oy, x, 4);
  }
}

/* ---- without resize ---------------------------------------------------------- */

static void
run_rows (gint begin, gint end, gint slice, gpointer data)
{
  ChanFused *f = data;
  Slice *sl = &f->slices[slice];
  gsize w = (gsize) f->out_w;
  for (gint y = begin; y < end; y++) {
    const guint8 *rows[3];
    m2i_chan_read_row (&f->rd, f->in, y, 0, f->in_w, sl->split, rows);
    if (f->out_dt == M2I_DTYPE_U8) {
      for (guint c = 0; c < f->n_ch; c++)
        memcpy (sl->o8 + c * w, rows[c], w);
      store_row (f, y, sl->o8, 1);
      continue;
    }
    for (guint c = 0; c < f->n_ch; c++)
      for (gsize i = 0; i < w; i++)
        sl->vrow[c * w + i] = rows[c][i];
    finish_row (f, sl, y, sl->vrow);
  }
}

/* ---- with resize -------------------------------------------------------------- */

static const float *
source_row (ChanFused *f, Slice *sl, gint r)
{
  gint slot = r % f->ring_n;
  gsize w = (gsize) f->rstride;
  float *dst = sl->ring + (gsize) slot * w * f->n_ch;
  if (sl->tags[slot] == r)
    return dst;
  if (f->fetch) {
    f->fetch->k->hrow (f->fetch, f->in->data[0] + (gsize) r * f->in->stride[0], dst);
    sl->tags[slot] = r;
    return dst;
  }
  const guint8 *rows[3];
  const M2iResizePlan *rp = f->rplan;
  m2i_chan_read_row (&f->rd, f->in, r, 0, f->in_w, sl->split, rows);
  for (guint c = 0; c < f->n_ch; c++) {
    float *d = dst + c * w;
    /* fp16 or fp32 data holding u8 values: the u8 kernel reads the same
     * fp32 values (no conversion), unless pillow rounds the intermediate to
     * the data type, which differs between u8, fp16 and fp32 */
    if (f->resize_dt == M2I_DTYPE_F32 && rp->round_intermediate) {
      for (gint i = 0; i < f->in_w; i++)
        sl->h32[i] = rows[c][i];
      m2i_resize_hpass_f32 (rp, sl->h32, 1, d);
    } else if (f->resize_dt == M2I_DTYPE_F16 && rp->round_intermediate) {
      for (gint i = 0; i < f->in_w; i++)
        sl->h16[i] = m2i_f32_to_f16 ((float) rows[c][i]);
      m2i_resize_hpass_f16 (rp, sl->h16, 1, d);
    } else {
      m2i_resize_hpass_u8 (rp, rows[c], 1, d);
    }
  }
  sl->tags[slot] = r;
  return dst;
}

static void
run_resize (gint begin, gint end, gint slice, gpointer data)
{
  ChanFused *f = data;
  Slice *sl = &f->slices[slice];
  const M2iResizeAxis *ay = &f->rplan->y;
  for (gint i = 0; i < f->ring_n; i++)
    sl->tags[i] = -1;
  for (gint oy = begin; oy < end; oy++) {
    for (gint t = 0; t < ay->taps; t++)
      sl->rows[t] = source_row (f, sl, ay->index[oy * ay->taps + t]);
    if (f->fetch) {
      guint8 *dst[3];
      for (guint c = 0; c < f->n_ch; c++)
        dst[c] = f->out->data[c] + (gsize) oy * f->out->stride[c];
      f->fetch->k->vrow (f->fetch, sl->rows, ay->weight + (gsize) oy * ay->taps, ay->taps, dst);
      continue;
    }
    m2i_resize_vpass (f->rplan, oy, sl->rows, f->out_w * (gint) f->n_ch, sl->vrow);
    finish_row (f, sl, oy, sl->vrow);
  }
}

const char *
m2i_chan_fused_kernel (const ChanFused *f)
{
  return f->fetch ? f->fetch->k->name : NULL;
}

void
m2i_chan_fused_run (ChanFused *f, const M2iImage *in, M2iImage *out)
{
  f->in = in;
  f->out = out;
  if (f->has_resize)
    m2i_parallel_for (f->out_h, f->n_slices, 4, run_resize, f);
  else
    m2i_parallel_for (f->out_h, f->n_slices, 8, run_rows, f);
  f->in = NULL;
  f->out = NULL;
}
