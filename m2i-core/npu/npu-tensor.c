/* Blocked tensors: checks, channel views, NCHW ↔ blocked converters,
 * weight blocking and the TFLite multiplier helper. */
#include "npu-private.h"

#include <mli/mli-private.h>

#include <base/m2i-error.h>
#include <base/m2i-parallel.h>
#include <math.h>
#include <string.h>

#define CEIL8(x) (((x) + 7) / 8)

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

typedef struct {
  const M2iMliTensor *nchw;
  const M2iNpuTensor *blocked;
  gint64 ms[4];             /* NCHW strides, bytes */
  gint64 block, row, batch; /* blocked strides, bytes */
  gsize es;
  guint16 pad;              /* padding-lane value (low byte for int8) */
  gboolean to_blocked;
} LayoutJob;

static inline void
put_elem (guint8 *d, const guint8 *s, gsize es)
{
  d[0] = s[0];
  if (es == 2)
    d[1] = s[1];
}

/* One (n, y, channel block) row of W pixels. */
static void
layout_rows (gint begin, gint end, gint slice, gpointer data)
{
  const LayoutJob *j = data;
  const M2iNpuTensor *b = j->blocked;
  gint cbs = CEIL8 (b->c);
  guint8 pad[2] = { (guint8) j->pad, (guint8) (j->pad >> 8) };
  for (gint item = begin; item < end; item++) {
    gint cb = item % cbs, y = (item / cbs) % b->h, n = item / cbs / b->h;
    guint8 *brow = (guint8 *) b->data + n * j->batch + y * j->row + cb * j->block;
    guint8 *mbase = (guint8 *) j->nchw->data + n * j->ms[0] + y * j->ms[2];
    for (gint l = 0; l < 8; l++) {
      gint c = cb * 8 + l;
      guint8 *bp = brow + l * j->es;
      if (c >= b->c) {
        if (j->to_blocked)
          for (gint x = 0; x < b->w; x++)
            put_elem (bp + x * 8 * j->es, pad, j->es);
        continue;
      }
      guint8 *mp = mbase + c * j->ms[1];
      if (j->to_blocked)
        for (gint x = 0; x < b->w; x++)
          put_elem (bp + x * 8 * j->es, mp + x * j->ms[3], j->es);
      else
        for (gint x = 0; x < b->w; x++)
          put_elem (mp + x * j->ms[3], bp + x * 8 * j->es, j->es);
    }
  }
}

static gboolean
layout_convert (const M2iMliTensor *nchw, const M2iNpuTensor *blocked,
    gboolean to_blocked, gint n_threads, GError **error)
{
  if (!m2i_npu_tensor_check (blocked, error))
    return FALSE;
  if (!m2i_mli_set_error (m2i_mli_tensor_check (nchw), error, "NCHW tensor"))
    return FALSE;
  gboolean int8 = nchw->type == M2I_MLI_SA8 || nchw->type == M2I_MLI_FX8;
  if (nchw->rank != 4 || (blocked->precision == M2I_NPU_INT8 ? !int8 : nchw->type != M2I_MLI_FP16)
      || (nchw->type == M2I_MLI_SA8 && nchw->q.axis >= 0)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "layout conversion needs a rank-4 NCHW %s tensor (per-tensor "
        "quantization), got rank %u %s", blocked->precision == M2I_NPU_INT8
        ? "sa8 or fx8" : "fp16", nchw->rank, m2i_mli_type_to_string (nchw->type));
    return FALSE;
  }
  if ((gint64) nchw->shape[0] != blocked->n || (gint64) nchw->shape[1] != blocked->c
      || (gint64) nchw->shape[2] != blocked->h || (gint64) nchw->shape[3] != blocked->w) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "layout conversion: NCHW shape %ux%ux%ux%u differs from the blocked "
        "%dx%dx%dx%d", nchw->shape[0], nchw->shape[1], nchw->shape[2],
        nchw->shape[3], blocked->n, blocked->c, blocked->h, blocked->w);
    return FALSE;
  }
  LayoutJob j = { nchw, blocked };
  j.es = npu_precision_size (blocked->precision);
  j.to_blocked = to_blocked;
  j.pad = nchw->type == M2I_MLI_SA8 ? (guint16) (guint8) (gint8) CLAMP (nchw->q.zero_point, -128, 127) : 0;
  gint64 ms[4];
  m2i_mli_effective_strides (nchw, ms);
  for (int i = 0; i < 4; i++)
    j.ms[i] = ms[i] * (gint64) j.es;
  npu_tensor_strides (blocked, &j.block, &j.row, &j.batch);
  j.block *= j.es;
  j.row *= j.es;
  j.batch *= j.es;
  gint items = blocked->n * blocked->h * CEIL8 (blocked->c);
  m2i_parallel_for (items, n_threads, 4, layout_rows, &j);
  return TRUE;
}

gboolean
m2i_npu_to_blocked (const M2iMliTensor *nchw, M2iNpuTensor *blocked,
    gint n_threads, GError **error)
{
  return layout_convert (nchw, blocked, TRUE, n_threads, error);
}

gboolean
m2i_npu_from_blocked (const M2iNpuTensor *blocked, M2iMliTensor *nchw,
    gint n_threads, GError **error)
{
  return layout_convert (nchw, blocked, FALSE, n_threads, error);
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
              put_elem (d, v, es);
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
