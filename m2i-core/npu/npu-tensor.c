/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Blocked tensors: checks, channel views, NCHW ↔ blocked converters,
 * weight blocking and the TFLite multiplier helper. */
#include "npu-private.h"

#include <mli/mli-private.h>

#include <base/m2i-error.h>
#include <base/m2i-parallel.h>
#include <math.h>
#include <string.h>


gsize
npu_precision_size (M2iNpuPrecision p)
{
  return p == M2I_NPU_FP16 ? 2 : 1;
}

gsize
m2i_npu_tensor_bytes (M2iNpuPrecision p, gint n, gint c, gint h, gint w)
{
  if (n < 1 || c < 1 || h < 1 || w < 1)
    return 0;
  return (gsize) n * h * CEIL8 (c) * w * 8 * npu_precision_size (p);
}

void
m2i_npu_tensor_init (M2iNpuTensor *t, M2iNpuPrecision p, gint n, gint c,
    gint h, gint w, gpointer data, gsize capacity)
{
  memset (t, 0, sizeof *t);
  t->precision = p;
  t->n = n;
  t->c = c;
  t->h = h;
  t->w = w;
  t->data = data;
  t->capacity = capacity;
}

void
npu_tensor_strides (const M2iNpuTensor *t, gint64 *block, gint64 *row,
    gint64 *batch)
{
  *block = t->block_stride ? t->block_stride : (gint64) t->w * 8;
  *row = t->row_stride ? t->row_stride : (gint64) CEIL8 (t->c) * *block;
  *batch = t->batch_stride ? t->batch_stride : (gint64) t->h * *row;
}

/* Largest dimension and stride accepted; together they keep every offset
 * far inside gint64. */
#define NPU_MAX_DIM (1 << 20)
#define NPU_MAX_STRIDE ((gint64) 1 << 40)

gboolean
m2i_npu_tensor_check (const M2iNpuTensor *t, GError **error)
{
  if (!t || !t->data) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: %s is NULL", t ? "data" : "tensor");
    return FALSE;
  }
  if (t->precision != M2I_NPU_INT8 && t->precision != M2I_NPU_FP16) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: unknown precision %d", t->precision);
    return FALSE;
  }
  if ((guintptr) t->data % npu_precision_size (t->precision)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: fp16 data at an odd address");
    return FALSE;
  }
  if (t->n < 1 || t->c < 1 || t->h < 1 || t->w < 1 || t->n > NPU_MAX_DIM
      || t->c > NPU_MAX_DIM || t->h > NPU_MAX_DIM || t->w > NPU_MAX_DIM) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: dimensions %dx%dx%dx%d must each be in [1, %d]",
        t->n, t->c, t->h, t->w, NPU_MAX_DIM);
    return FALSE;
  }
  if ((gint64) t->n * t->h * CEIL8 (t->c) > G_MAXINT) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: %dx%dx%dx%d has more than 2^31 rows of blocks",
        t->n, t->c, t->h, t->w);
    return FALSE;
  }
  gint64 block, row, batch;
  npu_tensor_strides (t, &block, &row, &batch);
  if (block > NPU_MAX_STRIDE || row > NPU_MAX_STRIDE || batch > NPU_MAX_STRIDE) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: strides above 2^40 elements");
    return FALSE;
  }
  if (block < (gint64) t->w * 8 || row < CEIL8 (t->c) * block || batch < t->h * row) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "blocked tensor: strides (block %" G_GINT64_FORMAT ", row %" G_GINT64_FORMAT
        ", batch %" G_GINT64_FORMAT ") do not nest for %dx%dx%dx%d",
        block, row, batch, t->n, t->c, t->h, t->w);
    return FALSE;
  }
  gint64 last = (t->n - 1) * batch + (t->h - 1) * row + (CEIL8 (t->c) - 1) * block
      + (gint64) (t->w - 1) * 8 + 7;
  guint64 need = (guint64) (last + 1) * npu_precision_size (t->precision);
  if (need > t->capacity) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_BUFFER_TOO_SMALL,
        "blocked tensor: %dx%dx%dx%d needs %" G_GUINT64_FORMAT
        " bytes, capacity is %" G_GSIZE_FORMAT, t->n, t->c, t->h, t->w, need,
        t->capacity);
    return FALSE;
  }
  return TRUE;
}

gboolean
npu_tensor_expect (const M2iNpuTensor *t, const char *what, M2iNpuPrecision p,
    gint n, gint c, gint h, gint w, GError **error)
{
  GError *e = NULL;
  if (!m2i_npu_tensor_check (t, &e)) {
    g_set_error (error, e->domain, e->code, "%s: %s", what, e->message);
    g_error_free (e);
    return FALSE;
  }
  if (t->precision != p) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s: precision is %s, the layer computes in %s", what,
        t->precision == M2I_NPU_INT8 ? "int8" : "fp16",
        p == M2I_NPU_INT8 ? "int8" : "fp16");
    return FALSE;
  }
  if ((n >= 0 && t->n != n) || t->c != c || t->h != h || t->w != w) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%s: shape %dx%dx%dx%d, expected %dx%dx%dx%d", what, t->n, t->c,
        t->h, t->w, n >= 0 ? n : t->n, c, h, w);
    return FALSE;
  }
  return TRUE;
}

gboolean
m2i_npu_tensor_channel_view (const M2iNpuTensor *t, gint c0, gint nc,
    M2iNpuTensor *view, GError **error)
{
  if (!m2i_npu_tensor_check (t, error))
    return FALSE;
  if (!view || c0 < 0 || nc < 1 || c0 > t->c - nc || c0 % 8 != 0
      || ((c0 + nc) % 8 != 0 && c0 + nc != t->c)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "channel view [%d, %d) of a %d-channel blocked tensor: it must start "
        "on a multiple of 8 and end on one or at the last channel", c0,
        c0 + nc, t->c);
    return FALSE;
  }
  gint64 block, row, batch;
  npu_tensor_strides (t, &block, &row, &batch);
  gsize off = (gsize) (c0 / 8) * block * npu_precision_size (t->precision);
  *view = *t;
  view->data = (guint8 *) t->data + off;
  view->capacity = t->capacity - off;
  view->c = nc;
  view->block_stride = block;
  view->row_stride = row;
  view->batch_stride = batch;
  return TRUE;
}

/* ---- NCHW ↔ blocked ----------------------------------------------------- */

void
npu_layout_row_tail (const NpuLayoutRow *r, gint x0)
{
  for (gint x = x0; x < r->w; x++)
    for (gint l = 0; l < 8; l++) {
      m2i_f16 *b = r->blocked + (gint64) x * 8 + l;
      gint64 e = l * r->plane + x;
      if (r->to_blocked)
        *b = l >= r->lanes ? 0 : r->f32 ? m2i_f32_to_f16 (((const float *) r->nchw)[e])
            : ((const m2i_f16 *) r->nchw)[e];
      else if (l < r->lanes && r->f32)
        ((float *) r->nchw)[e] = m2i_f16_to_f32 (*b);
      else if (l < r->lanes)
        ((m2i_f16 *) r->nchw)[e] = *b;
    }
}

/* Each (image, channel block) is a rank-3 [lanes, H, W] view on both sides —
 * strides {1, row, 8} in the blocked tensor — converted by m2i_mli_convert,
 * so layout and type change in one pass with MLI's rounding and saturation. */
typedef struct {
  const M2iMliTensor *nchw;
  const M2iNpuTensor *blocked;
  M2iMliType type;          /* of the blocked elements */
  M2iMliQuant q;            /* of the blocked elements */
  M2iMliRound round;
  gboolean to_blocked;
  gint64 ms[4];             /* NCHW strides, elements */
  gint64 block, row, batch; /* blocked strides, elements */
  gint status;              /* first failure (atomic), M2I_MLI_OK */
  /* fp16 blocked ↔ f32/f16 NCHW with contiguous rows: row by row, the
   * values exactly as m2i_mli_convert makes them (f32 → f16 to nearest
   * even, the rest exact) */
  gboolean fast;
  NpuLayoutRowFunc row_fn;
} LayoutJob;

static void
layout_items (gint begin, gint end, gint slice, gpointer data)
{
  LayoutJob *j = data;
  const M2iNpuTensor *b = j->blocked;
  const M2iMliTensor *m = j->nchw;
  gint cbs = CEIL8 (b->c);
  gsize bes = npu_precision_size (b->precision);
  for (gint item = begin; item < end; item++) {
    gint cb = item % cbs, n = item / cbs, lanes = MIN (8, b->c - cb * 8);
    gsize boff = (gsize) (n * j->batch + cb * j->block) * bes;
    if (j->fast) {
      gsize ms = m->type == M2I_MLI_FP32 ? 4 : 2;
      NpuLayoutRow r = { j->to_blocked, m->type == M2I_MLI_FP32, NULL, j->ms[1], NULL, lanes, b->w };
      for (gint y = 0; y < b->h; y++) {
        r.nchw = (guint8 *) m->data + (n * j->ms[0] + (gint64) cb * 8 * j->ms[1] + y * j->ms[2]) * ms;
        r.blocked = (m2i_f16 *) ((guint8 *) b->data + boff) + y * j->row;
        if (j->row_fn)
          j->row_fn (&r);
        else
          npu_layout_row_tail (&r, 0);
      }
      continue;
    }
    guint32 shape[3] = { lanes, b->h, b->w };
    M2iMliTensor bv, mv;
    m2i_mli_tensor_init (&bv, j->type, (guint8 *) b->data + boff, b->capacity - boff, 3, shape);
    bv.q = j->q;
    bv.mem_stride[0] = 1;
    bv.mem_stride[1] = (gint32) j->row;
    bv.mem_stride[2] = 8;
    /* the sub-tensor carries per-axis parameters along */
    M2iMliSubTensorCfg cfg = { { n, cb * 8, 0, 0 }, { 1, lanes, b->h, b->w }, 3 };
    M2iMliStatus st = m2i_mli_subtensor (m, &cfg, &mv);
    if (st == M2I_MLI_OK)
      st = j->to_blocked ? m2i_mli_convert (&mv, &bv, j->round)
          : m2i_mli_convert (&bv, &mv, j->round);
    if (st != M2I_MLI_OK) {
      g_atomic_int_compare_and_exchange (&j->status, M2I_MLI_OK, st);
      continue;
    }
    if (j->to_blocked && lanes < 8) {     /* padding lanes: the code of 0 */
      guint8 *base = (guint8 *) b->data + boff;
      gint8 zero = j->type == M2I_MLI_SA8 ? (gint8) CLAMP (j->q.zero_point, -128, 127) : 0;
      for (gint y = 0; y < b->h; y++)
        for (gint x = 0; x < b->w; x++)
          for (gint l = lanes; l < 8; l++) {
            gsize e = (gsize) (y * j->row + x * 8 + l);
            if (bes == 1)
              base[e] = (guint8) zero;
            else
              ((m2i_f16 *) base)[e] = 0;
          }
    }
  }
}

static gboolean
layout_convert (const M2iMliTensor *nchw, const M2iNpuTensor *blocked,
    M2iMliType type, const M2iMliQuant *q, M2iMliRound round,
    gboolean to_blocked, gint n_threads, GError **error)
{
  if (!m2i_npu_tensor_check (blocked, error))
    return FALSE;
  if (!m2i_mli_set_error (m2i_mli_tensor_check (nchw), error, "NCHW tensor"))
    return FALSE;
  gboolean int8 = type == M2I_MLI_SA8 || type == M2I_MLI_FX8;
  if (!q || (blocked->precision == M2I_NPU_INT8 ? !int8 : type != M2I_MLI_FP16)
      || (type == M2I_MLI_SA8 && q->axis >= 0)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "layout conversion: an %s blocked tensor holds %s elements with "
        "per-tensor quantization, not %s", blocked->precision == M2I_NPU_INT8
        ? "int8" : "fp16", blocked->precision == M2I_NPU_INT8 ? "sa8 or fx8"
        : "fp16", m2i_mli_type_to_string (type));
    return FALSE;
  }
  if (nchw->rank != 4 || (gint64) nchw->shape[0] != blocked->n
      || (gint64) nchw->shape[1] != blocked->c || (gint64) nchw->shape[2] != blocked->h
      || (gint64) nchw->shape[3] != blocked->w) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "layout conversion: the NCHW tensor (rank %u, %ux%ux%ux%u) does not "
        "match the blocked %dx%dx%dx%d", nchw->rank, nchw->shape[0],
        nchw->shape[1], nchw->shape[2], nchw->shape[3], blocked->n, blocked->c,
        blocked->h, blocked->w);
    return FALSE;
  }
  LayoutJob j = { nchw, blocked, type, *q, round, to_blocked };
  mli_effective_strides (nchw, j.ms);
  npu_tensor_strides (blocked, &j.block, &j.row, &j.batch);
  if (j.row > G_MAXINT32 || j.ms[1] > G_MAXINT32 || j.ms[2] > G_MAXINT32 || j.ms[3] > G_MAXINT32) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "layout conversion: a row or plane above 2^31 elements");
    return FALSE;
  }
  j.status = M2I_MLI_OK;
  j.fast = blocked->precision == M2I_NPU_FP16 && (nchw->type == M2I_MLI_FP32 ||
      nchw->type == M2I_MLI_FP16) && j.ms[3] == 1;
  j.row_fn = j.fast ? npu_x86_layout_row_func () : NULL;
  m2i_parallel_for (blocked->n * CEIL8 (blocked->c), n_threads, 4, layout_items, &j);
  return m2i_mli_set_error (j.status, error, to_blocked ? "conversion to blocked"
      : "conversion from blocked");
}

gboolean
m2i_npu_convert_to_blocked (const M2iMliTensor *nchw, M2iMliType type,
    const M2iMliQuant *q, M2iNpuTensor *blocked, M2iMliRound round,
    gint n_threads, GError **error)
{
  return layout_convert (nchw, blocked, type, q, round, TRUE, n_threads, error);
}

gboolean
m2i_npu_convert_from_blocked (const M2iNpuTensor *blocked, M2iMliType type,
    const M2iMliQuant *q, M2iMliTensor *nchw, M2iMliRound round,
    gint n_threads, GError **error)
{
  return layout_convert (nchw, blocked, type, q, round, FALSE, n_threads, error);
}

gboolean
m2i_npu_to_blocked (const M2iMliTensor *nchw, M2iNpuTensor *blocked,
    gint n_threads, GError **error)
{
  return layout_convert (nchw, blocked, nchw ? nchw->type : M2I_MLI_FP32,
      nchw ? &nchw->q : NULL, M2I_MLI_ROUND_HALF_UP, TRUE, n_threads, error);
}

gboolean
m2i_npu_from_blocked (const M2iNpuTensor *blocked, M2iMliTensor *nchw,
    gint n_threads, GError **error)
{
  return layout_convert (nchw, blocked, nchw ? nchw->type : M2I_MLI_FP32,
      nchw ? &nchw->q : NULL, M2I_MLI_ROUND_HALF_UP, FALSE, n_threads, error);
}

/* ---- weights -------------------------------------------------------------- */

gsize
m2i_npu_weights_blocked_count (gint out_channels, gint in_per_group, gint kh,
    gint kw)
{
  if (out_channels < 1 || in_per_group < 1 || kh < 1 || kw < 1)
    return 0;
  return (gsize) CEIL8 (out_channels) * CEIL8 (in_per_group) * kh * kw * 64;
}

void
m2i_npu_weights_to_blocked (const void *oiyx, gsize es, gint O, gint Ig,
    gint kh, gint kw, void *blocked)
{
  if (!oiyx || !blocked || (es != 1 && es != 2)
      || m2i_npu_weights_blocked_count (O, Ig, kh, kw) == 0)
    return;
  const guint8 *s = oiyx;
  guint8 *d = blocked;
  static const guint8 zero[2] = { 0, 0 };
  for (gint ob = 0; ob < CEIL8 (O); ob++)
    for (gint ib = 0; ib < CEIL8 (Ig); ib++)
      for (gint ky = 0; ky < kh; ky++)
        for (gint kx = 0; kx < kw; kx++)
          for (gint i = 0; i < 8; i++)
            for (gint o = 0; o < 8; o++, d += es) {
              gint oc = ob * 8 + o, ic = ib * 8 + i;
              const guint8 *v = (oc < O && ic < Ig)
                  ? s + ((((gsize) oc * Ig + ic) * kh + ky) * kw + kx) * es : zero;
              memcpy (d, v, es);
            }
}

gboolean
m2i_npu_quantize_multiplier (double real, gint32 *multiplier, gint8 *shift)
{
  if (!(real >= 0) || isinf (real))
    return FALSE;
  if (real == 0) {
    *multiplier = 0;
    *shift = 0;
    return TRUE;
  }
  int e;
  double f = frexp (real, &e);           /* real = f * 2^e, f in [0.5, 1) */
  gint64 q = (gint64) llround (f * 2147483648.0);
  if (q == ((gint64) 1 << 31)) {
    q /= 2;
    e++;
  }
  if (e < -31 || e > 30)
    return FALSE;
  *multiplier = (gint32) q;
  *shift = (gint8) e;
  return TRUE;
}

gboolean
m2i_npu_requant_from_scales (double in_scale, const double *w_scales, gint n_w,
    double out_scale, gint32 out_zero_point, gboolean relu, gint32 *mult,
    gint8 *shift, M2iNpuRequant *rq, GError **error)
{
  gboolean ok = w_scales && mult && shift && rq && n_w >= 1
      && in_scale > 0 && out_scale > 0 && !isinf (in_scale) && !isinf (out_scale)
      && out_zero_point >= -128 && out_zero_point <= 127;
  for (gint i = 0; ok && i < n_w; i++)
    ok = w_scales[i] > 0 && !isinf (w_scales[i])
        && m2i_npu_quantize_multiplier (in_scale * w_scales[i] / out_scale,
            &mult[i], &shift[i]);
  if (!ok) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "requantization from scales: scales must be positive and finite, the "
        "zero point in [-128, 127], and in·w/out between 2^-32 and 2^30");
    return FALSE;
  }
  M2iNpuRequant r = { M2I_NPU_REQUANT_MULTIPLIER, n_w, mult, shift,
    M2I_MLI_ROUND_HALF_UP, out_zero_point, relu ? out_zero_point : -128, 127 };
  *rq = r;
  return TRUE;
}

gboolean
npu_quantize_signed (double real, gint32 *multiplier, gint8 *shift)
{
  if (!isfinite (real))
    return FALSE;
  if (fabs (real) < ldexp (1, -32)) {    /* |acc·real| < 1/2 for any int32 acc */
    *multiplier = 0;
    *shift = 0;
    return TRUE;
  }
  if (!m2i_npu_quantize_multiplier (fabs (real), multiplier, shift))
    return FALSE;
  if (real < 0)
    *multiplier = -*multiplier;
  return TRUE;
}

gboolean
m2i_npu_requant_set_prelu (M2iNpuRequant *rq, double in_scale, const double *w_scales,
    double out_scale, const float *slopes, gint n_slopes, gint32 *neg_mult,
    gint8 *neg_shift, GError **error)
{
  gboolean ok = rq && rq->scheme == M2I_NPU_REQUANT_MULTIPLIER && rq->n >= 1 && w_scales &&
      slopes && neg_mult && neg_shift && (n_slopes == 1 || n_slopes == rq->n) &&
      in_scale > 0 && out_scale > 0 && isfinite (in_scale) && isfinite (out_scale);
  for (gint i = 0; ok && i < rq->n; i++)
    ok = w_scales[i] > 0 && isfinite (w_scales[i]) &&
        npu_quantize_signed (slopes[n_slopes == 1 ? 0 : i] * in_scale * w_scales[i] / out_scale,
            &neg_mult[i], &neg_shift[i]);
  if (!ok) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "PReLU requantization: needs a MULTIPLIER requantization, positive finite scales, "
        "1 or n finite slopes, and |slope·in·w/out| below 2^30");
    return FALSE;
  }
  rq->neg_multiplier = neg_mult;
  rq->neg_shift = neg_shift;
  return TRUE;
}
