/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fused.c — the one-pass kernel for csc-headed chains.
 *
 * Covers csc, then in this order: [convert] [resize] [permute] [norm], where
 * convert may also come after resize, permute may sit anywhere after csc, and
 * norm follows the fp conversion (and the resize, if any). Without resize,
 * each pair of luma rows shares its chroma terms (kept in registers by the
 * pair kernels) and every output row is written straight from the csc
 * registers. With resize, only the source rows and columns the filter tables
 * use are converted: each needed source row is colour-converted (on the
 * listed columns when that is much narrower than the frame; see
 * plan_columns), resized horizontally into a small ring of rows, and every
 * output row is one vertical pass over the ring — the evaluation order of
 * resize-private.h, so results equal the reference bit for bit. Output rows
 * are sliced over threads, each slice with its own scratch.
 */
#include "engine-private.h"

#include <base/m2i-error.h>
#include <base/m2i-parallel.h>
#include <math.h>
#include <string.h>

typedef struct {
  gint16 *terms;
  guint8 *cy, *cu, *cv;        /* compacted source columns */
  guint8 *crow;                /* compacted csc output, interleaved u8, or
                                  expanded: three planes of K values */
  guint8 *frow8;               /* full-width source rows for hpass: needed */
  m2i_f16 *frow16;             /* columns filled, the rest stays zero */
  float *frow32;
  float *ring;                 /* ring_n rows of out_w * 3 hpass sums */
  gint *tags;                  /* source row held by each ring slot, -1: none */
  gint terms_row;              /* chroma row whose terms `terms` holds, -1: none */
  const float **rows;
  float *vrow;
  guint8 *orow8;
  m2i_f16 *orow16;
  float *orowf;
} Slice;

struct Fused {
  const CscKernels *k;
  M2iFormat src_format;
  M2iChannelOrder order;
  gint in_w, in_h, out_w, out_h;
  M2iDataType out_dt, resize_dt;
  M2iLayout out_layout;
  gboolean has_resize, has_norm;
  float sub[3], mul[3], add[3];        /* norm, per channel in memory order */
  float *nsub, *nmul, *nadd;           /* the same repeated along a resized row */
  CscOutSpec spec;                     /* non-resize output */
  int plane_of[3];                     /* plane index of R, G, B */
  /* resize */
  M2iResizePlan *rplan;
  gboolean compact;
  gboolean expanded;                   /* columns listed tap by tap (see below) */
  gint n_cols;                         /* K: columns converted per source row */
  gint32 *xs;                          /* the K source columns */
  float *wt;                           /* expanded: weights in the same order */
  gboolean pairs;                      /* expanded, 2 taps on adjacent columns */
  FPairTable *fp;                      /* float pair path (k->fpair_rows) */
  gboolean vfinish;                    /* vertical pass + finishing by k->vfinish_f16 */
  gboolean direct;                     /* ... or all of it by k->fpair_out, no ring */
  gint pf_lo, pf_hi;                   /* luma columns read, for prefetching */
  gboolean planar_rows;                /* ring rows hold R..., G..., B... (expanded) */
  gint ring_n, rows_needed;
  gsize ts;
  gint n_slices;
  Slice *slices;
  const M2iImage *in;                  /* per run */
  M2iImage *out;
};

gboolean
m2i_fused_supported (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out)
{
  if (!m2i_format_is_yuv (in->format) || n_ops == 0 || ops[0].kind != M2I_OP_CSC)
    return FALSE;
  int n_conv = 0, n_resize = 0, n_perm = 0, n_norm = 0;
  for (guint i = 1; i < n_ops; i++) {
    switch (ops[i].kind) {
      case M2I_OP_CONVERT: n_conv++; break;
      case M2I_OP_RESIZE:
        if (n_norm)
          return FALSE;          /* norm before resize: op by op */
        n_resize++;
        break;
      case M2I_OP_PERMUTE: n_perm++; break;
      case M2I_OP_NORM: n_norm++; break;
      default: return FALSE;
    }
  }
  if (n_conv > 1 || n_resize > 1 || n_perm > 1 || n_norm > 1)
    return FALSE;
  /* The device never writes interleaved fp data; neither does this kernel. */
  if (m2i_format_layout (out->format) == M2I_LAYOUT_INTERLEAVED
      && m2i_format_dtype (out->format) != M2I_DTYPE_U8)
    return FALSE;
  return TRUE;
}

static void
slice_free (Slice *s)
{
  g_free (s->terms);
  g_free (s->cy);
  g_free (s->cu);
  g_free (s->cv);
  g_free (s->crow);
  g_free (s->frow8);
  g_free (s->frow16);
  g_free (s->frow32);
  g_free (s->ring);
  g_free (s->tags);
  g_free (s->rows);
  g_free (s->vrow);
  g_free (s->orow8);
  g_free (s->orow16);
  g_free (s->orowf);
}

void
m2i_fused_free (Fused *f)
{
  if (!f)
    return;
  for (gint i = 0; f->slices && i < f->n_slices; i++)
    slice_free (&f->slices[i]);
  g_free (f->slices);
  if (f->rplan)
    m2i_resize_plan_free (f->rplan);
  g_free (f->xs);
  g_free (f->wt);
  m2i_fpair_table_free (f->fp);
  g_free (f->nsub);
  g_free (f->nmul);
  g_free (f->nadd);
  g_free (f);
}

/* Chooses the source columns to convert.
 * - expanded (out_size * taps <= in_size, no intermediate rounding): the
 *   column list is the x table itself, one block per tap (xs[t*n + i] = index[i*taps + t];
 *   a column used by two outputs appears twice). The horizontal pass over
 *   it is then a regular, gather-free loop (CscKernels.hpass_expanded)
 *   evaluating exactly the contract's sums (taps in table order, fp32 from
 *   0.0f, no FMA) into planar rows; no scatter and no gathering hpass. Two
 *   taps on adjacent columns (linear downscales) gather both at once.
 * - compact: the distinct columns the table names, scattered back into a
 *   zeroed full-width row for the resize module's hpass (pillow modes, whose
 *   intermediate rounding belongs to the module).
 * - otherwise whole rows. */
static void
plan_columns (Fused *f)
{
  const M2iResizeAxis *ax = &f->rplan->x;
  gint n_taps = ax->out_size * ax->taps;
  if (!f->rplan->round_intermediate && n_taps <= ax->in_size) {
    gint n = ax->out_size, T = ax->taps;
    f->expanded = TRUE;
    f->planar_rows = TRUE;
    f->n_cols = n_taps;
    f->xs = g_new (gint32, n_taps);
    f->wt = g_new (float, n_taps);
    for (gint i = 0; i < n; i++)
      for (gint t = 0; t < T; t++) {
        f->xs[t * n + i] = ax->index[i * T + t];
        f->wt[t * n + i] = ax->weight[i * T + t];
      }
    f->pairs = T == 2;
    for (gint i = 0; i < n && f->pairs; i++)
      f->pairs = f->xs[n + i] == f->xs[i] + 1;
    return;
  }
  guint8 *used = g_new0 (guint8, ax->in_size);
  for (gint i = 0; i < n_taps; i++)
    used[ax->index[i]] = 1;
  gint K = 0;
  for (gint i = 0; i < ax->in_size; i++)
    K += used[i];
  if (K * 2 > ax->in_size) {
    f->compact = FALSE;
    f->n_cols = ax->in_size;
  } else {
    f->compact = TRUE;
    f->n_cols = K;
    f->xs = g_new (gint32, K);
    K = 0;
    for (gint i = 0; i < ax->in_size; i++)
      if (used[i])
        f->xs[K++] = i;
  }
  g_free (used);
}

static gboolean
weights_not_negative (const float *w, gint n)
{
  for (gint i = 0; i < n; i++)
    if (signbit (w[i]))
      return FALSE;
  return TRUE;
}

/* The float pair path (engine-private.h, FPairTable) for two-tap expanded
 * columns, when the CPU has it and no weight is negative (the contract's
 * "0.0f + w·x" then equals w·x, which the kernels compute). The fused
 * vertical pass + fp16 finishing needs two vertical taps of the same kind
 * and planar fp16 output from an fp16 resize. */
static void
plan_float_pairs (Fused *f, const M2iImage *in)
{
  const M2iResizeAxis *ax = &f->rplan->x, *ay = &f->rplan->y;
  gint n = f->out_w;
  f->pf_lo = 0;
  f->pf_hi = in->width;
  if (!f->pairs || !f->k->fpair_rows || !weights_not_negative (f->wt, 2 * n))
    return;
  f->fp = m2i_fpair_table_new (f->xs, f->wt, f->wt + n, n, in->width,
      in->format == M2I_FORMAT_SP_NV12_8, f->order == M2I_ORDER_BGR, f->k->fpair_fetch);
  f->pf_lo = ax->index[0];
  f->pf_hi = ax->index[ax->out_size * ax->taps - 1] + 2;
  for (gint i = 0; i < ax->out_size * ax->taps; i++) {
    f->pf_lo = MIN (f->pf_lo, ax->index[i]);
    f->pf_hi = MAX (f->pf_hi, ax->index[i] + 2);
  }
  f->pf_hi = MIN (f->pf_hi, in->width);
  gboolean f16_planar = ay->taps == 2 && weights_not_negative (ay->weight, ay->out_size * 2)
      && f->resize_dt == M2I_DTYPE_F16 && f->out_dt == M2I_DTYPE_F16
      && f->out_layout == M2I_LAYOUT_PLANAR;
  f->vfinish = f16_planar && f->k->vfinish_f16;
  /* One sweep per output row (no ring) when output rows hardly share source
   * rows (downscales by 2 or more): each row is then converted about once
   * either way. */
  f->direct = f16_planar && f->k->fpair_out && 2 * ay->out_size * 4 <= 5 * f->rows_needed;
}

static void
plan_rows (Fused *f)
{
  const M2iResizeAxis *ay = &f->rplan->y;
  guint8 *used = g_new0 (guint8, ay->in_size);
  gint ring = 1;
  for (gint i = 0; i < ay->out_size; i++) {
    ring = MAX (ring, ay->last[i] - ay->first[i] + 1);
    for (gint t = 0; t < ay->taps; t++)
      used[ay->index[i * ay->taps + t]] = 1;
  }
  f->rows_needed = 0;
  for (gint i = 0; i < ay->in_size; i++)
    f->rows_needed += used[i];
  f->ring_n = ring;
  g_free (used);
}

Fused *
m2i_fused_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gint n_threads, GError **error)
{
  g_return_val_if_fail (m2i_fused_supported (in, ops, n_ops, out), NULL);
  Fused *f = g_new0 (Fused, 1);
  f->k = m2i_csc_kernels ();
  f->src_format = in->format;
  f->order = ops[0].u.csc.order;
  f->in_w = in->width;
  f->in_h = in->height;
  f->out_w = out->width;
  f->out_h = out->height;
  f->out_dt = m2i_format_dtype (out->format);
  f->out_layout = m2i_format_layout (out->format);
  f->resize_dt = M2I_DTYPE_U8;
  M2iDataType dt = M2I_DTYPE_U8;
  for (guint i = 1; i < n_ops; i++) {
    const M2iOp *op = &ops[i];
    if (op->kind == M2I_OP_CONVERT)
      dt = op->u.convert.to;
    if (op->kind == M2I_OP_RESIZE) {
      f->has_resize = TRUE;
      f->resize_dt = dt;
      f->rplan = m2i_resize_plan_new (&op->u.resize, in->width, in->height, error);
      if (!f->rplan) {
        m2i_fused_free (f);
        return NULL;
      }
    }
    if (op->kind == M2I_OP_NORM) {
      f->has_norm = TRUE;
      for (int c = 0; c < 3; c++)
        m2i_norm_fast_coeffs (&op->u.norm, c, &f->sub[c], &f->mul[c], &f->add[c]);
    }
  }
  gboolean bgr = f->order == M2I_ORDER_BGR;
  f->plane_of[0] = bgr ? 2 : 0;
  f->plane_of[1] = 1;
  f->plane_of[2] = bgr ? 0 : 2;

  f->n_slices = n_threads > 0 ? n_threads : m2i_parallel_n_cores ();
  f->slices = g_new0 (Slice, f->n_slices);
  if (!f->has_resize) {
    f->spec.bgr = bgr;
    f->spec.norm = f->has_norm;
    for (int c = 0; c < 3; c++) {         /* kernel channel c is R, G or B */
      int p = f->plane_of[c];
      f->spec.sub[c] = f->sub[p];
      f->spec.mul[c] = f->mul[p];
      f->spec.add[c] = f->add[p];
    }
    if (f->out_layout == M2I_LAYOUT_INTERLEAVED)
      f->spec.mode = CSC_OUT_IL_U8;
    else
      f->spec.mode = f->out_dt == M2I_DTYPE_U8 ? CSC_OUT_PL_U8
          : f->out_dt == M2I_DTYPE_F16 ? CSC_OUT_PL_F16 : CSC_OUT_PL_F32;
    return f;                          /* the pair kernels need no scratch */
  }

  plan_columns (f);
  plan_rows (f);
  plan_float_pairs (f, in);
  gint K = f->n_cols;
  gsize n = (gsize) f->out_w * 3;
  f->ts = m2i_csc_terms_stride (f->k, K);
  f->nsub = g_new (float, n);
  f->nmul = g_new (float, n);
  f->nadd = g_new (float, n);
  for (gsize i = 0; i < n; i++) {
    gsize c = f->planar_rows ? i / (gsize) f->out_w : i % 3;
    f->nsub[i] = f->sub[c];
    f->nmul[i] = f->mul[c];
    f->nadd[i] = f->add[c];
  }
  for (gint s = 0; s < f->n_slices; s++) {
    Slice *sl = &f->slices[s];
    sl->terms = g_new0 (gint16, f->ts * CSC_N_TERMS);
    if (f->compact || f->expanded) {
      sl->cy = g_new0 (guint8, K);
      sl->cu = g_new0 (guint8, K);
      sl->cv = g_new0 (guint8, K);
    }
    gsize wn = (gsize) f->in_w * 3;
    sl->crow = g_new0 (guint8, (gsize) K * 3);
    sl->frow8 = g_new0 (guint8, wn);
    if (f->resize_dt == M2I_DTYPE_F16 && f->rplan->round_intermediate)
      sl->frow16 = g_new0 (m2i_f16, wn);
    if (f->resize_dt == M2I_DTYPE_F32)
      sl->frow32 = g_new0 (float, wn);
    sl->ring = g_new0 (float, n * (gsize) f->ring_n);
    sl->tags = g_new (gint, f->ring_n);
    sl->rows = g_new0 (const float *, f->rplan->y.taps);
    sl->vrow = g_new0 (float, n);
    sl->orow8 = g_new0 (guint8, n);
    sl->orow16 = g_new0 (m2i_f16, n);
    sl->orowf = g_new0 (float, n);
  }
  return f;
}

void
m2i_fused_source_extent (const Fused *f, gint *rows, gint *cols)
{
  *rows = f->has_resize ? f->rows_needed : f->in_h;
  *cols = f->has_resize ? f->n_cols : f->in_w;
}

/* ---- without resize ----------------------------------------------------- */

static void
run_pairs (gint begin, gint end, gint slice, gpointer data)
{
  Fused *f = data;
  const M2iImage *in = f->in;
  const M2iImage *out = f->out;
  gboolean nv12 = in->format == M2I_FORMAT_SP_NV12_8;
  for (gint p = begin; p < end; p++) {
    guint8 *dst[2][3] = { { NULL } };
    for (gint r = 0; r < 2; r++) {
      gint y = 2 * p + r;
      if (f->spec.mode == CSC_OUT_IL_U8)
        dst[r][0] = out->data[0] + (gsize) y * out->stride[0];
      else
        for (int c = 0; c < 3; c++)
          dst[r][c] = out->data[f->plane_of[c]] + (gsize) y * out->stride[f->plane_of[c]];
    }
    const guint8 *c1 = in->data[1] + (gsize) p * in->stride[1];
    const guint8 *c2 = nv12 ? NULL : in->data[2] + (gsize) p * in->stride[2];
    f->k->pair (in->data[0] + (gsize) (2 * p) * in->stride[0],
        in->data[0] + (gsize) (2 * p + 1) * in->stride[0], c1, c2, in->width,
        dst[0], dst[1], &f->spec);
  }
}

/* ---- with resize -------------------------------------------------------- */

static const float *
source_row (Fused *f, Slice *sl, gint r)
{
  gint slot = r % f->ring_n;
  float *dst = sl->ring + (gsize) slot * f->out_w * 3;
  if (sl->tags[slot] == r)
    return dst;
  const M2iImage *in = f->in;
  const guint8 *yrow = in->data[0] + (gsize) r * in->stride[0];
  const guint8 *c1 = in->data[1] + (gsize) (r / 2) * in->stride[1];
  CscOutSpec il = { .mode = CSC_OUT_IL_U8, .bgr = f->order == M2I_ORDER_BGR };
  gint K = f->n_cols;
  const gint32 *xs = f->xs;
  if (f->compact || f->expanded) {
    guint8 *const crow[3] = { sl->crow, NULL, NULL };
    /* The chroma terms depend only on the chroma row: rows 2j and 2j+1 share
     * them (the tag is reset at every run, the frame changes). */
    gboolean need_chroma = sl->terms_row != r / 2;
    const guint8 *c2 = in->format == M2I_FORMAT_SP_NV12_8 ? NULL
        : in->data[2] + (gsize) (r / 2) * in->stride[2];
    gint wc = c2 ? in->width / 2 : in->width;
    if (f->pairs)
      f->k->gather_pairs (yrow, in->width, need_chroma ? c1 : NULL, c2, wc, xs, K / 2,
          sl->cy, sl->cu, sl->cv);
    else
      f->k->gather (yrow, in->width, need_chroma ? c1 : NULL, c2, wc, xs, K,
          sl->cy, sl->cu, sl->cv);
    if (need_chroma) {
      f->k->prep_444 (sl->cu, sl->cv, K, sl->terms, f->ts);
      sl->terms_row = r / 2;
    }
    if (f->expanded) {
      CscOutSpec pl = { .mode = CSC_OUT_PL_U8 };
      gboolean bgr = f->order == M2I_ORDER_BGR;
      guint8 *const planes[3] = { sl->crow + (bgr ? 2 : 0) * (gsize) K,
        sl->crow + (gsize) K, sl->crow + (bgr ? 0 : 2) * (gsize) K };
      f->k->row (sl->cy, sl->terms, f->ts, K, planes, &pl);
      f->k->hpass_expanded (f->wt, f->rplan->x.taps, f->out_w, sl->crow, K, dst);
      sl->tags[slot] = r;
      return dst;
    }
    f->k->row (sl->cy, sl->terms, f->ts, K, crow, &il);
  } else {
    guint8 *const frow[3] = { sl->frow8, NULL, NULL };
    const guint8 *c2 = in->format == M2I_FORMAT_SP_NV12_8 ? NULL
        : in->data[2] + (gsize) (r / 2) * in->stride[2];
    f->k->pair (yrow, NULL, c1, c2, K, frow, NULL, &il);
  }
  const M2iResizePlan *rp = f->rplan;
  const guint8 *c8 = sl->crow;
  /* fp16 data holding u8 values: the module's u8 and fp16 kernels read the
   * same fp32 values, so the u8 one (narrower loads, no conversion) gives the
   * same sums — except when pillow modes round the intermediate to the data
   * type, which differs between u8 and fp16. */
  M2iDataType hdt = f->resize_dt;
  if (hdt == M2I_DTYPE_F16 && !rp->round_intermediate)
    hdt = M2I_DTYPE_U8;
  switch (hdt) {
    case M2I_DTYPE_U8:
      if (f->compact)
        for (gint k = 0; k < K; k++)
          memcpy (sl->frow8 + 3 * (gsize) xs[k], c8 + 3 * k, 3);
      m2i_resize_hpass_u8 (rp, sl->frow8, 3, dst);
      break;
    case M2I_DTYPE_F16:
      if (f->compact) {
        /* convert the compacted values, then scatter them */
        m2i_f16 tmp[3 * 64];
        for (gint k0 = 0; k0 < K; k0 += 64) {
          gint m = MIN (64, K - k0);
          f->k->u8_to_f16 (c8 + 3 * k0, tmp, 3 * m);
          for (gint k = 0; k < m; k++)
            memcpy (sl->frow16 + 3 * (gsize) xs[k0 + k], tmp + 3 * k, 3 * sizeof (m2i_f16));
        }
      } else {
        f->k->u8_to_f16 (sl->frow8, sl->frow16, f->in_w * 3);
      }
      m2i_resize_hpass_f16 (rp, sl->frow16, 3, dst);
      break;
    default:
      if (f->compact) {
        for (gint k = 0; k < K; k++)
          for (int c = 0; c < 3; c++)
            sl->frow32[3 * (gsize) xs[k] + c] = c8[3 * k + c];
      } else {
        for (gint i = 0; i < f->in_w * 3; i++)
          sl->frow32[i] = sl->frow8[i];
      }
      m2i_resize_hpass_f32 (rp, sl->frow32, 3, dst);
      break;
  }
  sl->tags[slot] = r;
  return dst;
}

/* Writes one row of values (@bps bytes each; interleaved, or three planes
 * of out_w if f->planar_rows) to output row @oy. */
static void
write_row (Fused *f, gint oy, const void *vals, guint bps)
{
  const M2iImage *out = f->out;
  gint w = f->out_w;
  const guint8 *v = vals;
  if (f->out_layout == M2I_LAYOUT_INTERLEAVED && !f->planar_rows) {
    memcpy (out->data[0] + (gsize) oy * out->stride[0], vals, (gsize) w * 3 * bps);
    return;
  }
  if (f->out_layout == M2I_LAYOUT_PLANAR && f->planar_rows) {
    for (int c = 0; c < 3; c++)
      memcpy (out->data[c] + (gsize) oy * out->stride[c], v + (gsize) c * w * bps,
          (gsize) w * bps);
    return;
  }
  /* interleaved <-> planar: value i of channel c moves from src[si] to dst[di] */
  gboolean to_planar = f->out_layout == M2I_LAYOUT_PLANAR;
  for (int c = 0; c < 3; c++) {
    guint8 *d = out->data[to_planar ? c : 0] + (gsize) oy * out->stride[to_planar ? c : 0];
    gsize s_step = to_planar ? 3 : 1, s_off = to_planar ? (gsize) c : (gsize) c * w;
    gsize d_step = to_planar ? 1 : 3, d_off = to_planar ? 0 : (gsize) c;
    if (bps == 1)
      for (gint i = 0; i < w; i++)
        d[d_off + i * d_step] = v[s_off + i * s_step];
    else if (bps == 2)
      for (gint i = 0; i < w; i++)
        ((m2i_f16 *) d)[d_off + i * d_step] = ((const m2i_f16 *) v)[s_off + i * s_step];
    else
      for (gint i = 0; i < w; i++)
        ((float *) d)[d_off + i * d_step] = ((const float *) v)[s_off + i * s_step];
  }
}

/* One output row from the vertical sums (interleaved, memory order): round
 * to the type the resize ran in, then convert / norm / store. */
static void
finish_row (Fused *f, Slice *sl, gint oy)
{
  gint n = f->out_w * 3;
  float *x = sl->orowf;
  switch (f->resize_dt) {
    case M2I_DTYPE_U8:
      m2i_resize_round_u8_row (f->rplan, sl->vrow, sl->orow8, n);
      if (f->out_dt == M2I_DTYPE_U8) {
        write_row (f, oy, sl->orow8, 1);
        return;
      }
      for (gint i = 0; i < n; i++)
        x[i] = sl->orow8[i];
      break;
    case M2I_DTYPE_F16:
      if (f->has_norm && f->out_dt == M2I_DTYPE_F16) {
        f->k->finish_f16_norm (sl->vrow, f->nsub, f->nmul, f->nadd, n, sl->orow16);
        write_row (f, oy, sl->orow16, 2);
        return;
      }
      m2i_f32_to_f16_n (sl->vrow, sl->orow16, (gsize) n);
      if (!f->has_norm) {
        write_row (f, oy, sl->orow16, 2);
        return;
      }
      m2i_f16_to_f32_n (sl->orow16, x, (gsize) n);
      break;
    default:
      x = sl->vrow;
      break;
  }
  if (f->has_norm) {
    const float *sub = f->nsub, *mul = f->nmul, *add = f->nadd;
    for (gint i = 0; i < n; i++)
      x[i] = (x[i] - sub[i]) * mul[i] + add[i];
  }
  if (f->out_dt == M2I_DTYPE_F16) {
    m2i_f32_to_f16_n (x, sl->orow16, (gsize) n);
    write_row (f, oy, sl->orow16, 2);
  } else {
    write_row (f, oy, x, 4);
  }
}

static void
run_resize (gint begin, gint end, gint slice, gpointer data)
{
  Fused *f = data;
  Slice *sl = &f->slices[slice];
  const M2iResizeAxis *ay = &f->rplan->y;
  for (gint i = 0; i < f->ring_n; i++)
    sl->tags[i] = -1;
  sl->terms_row = -1;
  for (gint oy = begin; oy < end; oy++) {
    for (gint t = 0; t < ay->taps; t++)
      sl->rows[t] = source_row (f, sl, ay->index[oy * ay->taps + t]);
    m2i_resize_vpass (f->rplan, oy, sl->rows, f->out_w * 3, sl->vrow);
    finish_row (f, sl, oy);
  }
}

/* ---- with resize, float pair path ----------------------------------------- */

/* The ring row that holds (or is to hold) source row r; *have: it holds r. */
static float *
ring_row (Fused *f, Slice *sl, gint r, gboolean *have)
{
  gint slot = r % f->ring_n;
  *have = sl->tags[slot] == r;
  return sl->ring + (gsize) slot * f->out_w * 3;
}

/* Asks the cache for the source rows of output row @oy (two at once when
 * they share a chroma row). */
static void
fpair_source_rows (Fused *f, Slice *sl, gint oy)
{
  const M2iResizeAxis *ay = &f->rplan->y;
  const M2iImage *in = f->in;
  gboolean nv12 = in->format == M2I_FORMAT_SP_NV12_8;
  gint T = ay->taps;
  for (gint t = 0; t < T; t++) {
    gint r = ay->index[oy * T + t];
    gboolean have, have2 = TRUE;
    float *h = ring_row (f, sl, r, &have), *h2 = NULL;
    if (have)
      continue;
    /* the other row of its chroma row, if this output needs it too */
    gint r2 = r ^ 1;
    if (f->ring_n >= 2)
      for (gint u = t + 1; u < T; u++)
        if (ay->index[oy * T + u] == r2)
          h2 = ring_row (f, sl, r2, &have2);
    if (have2)
      h2 = NULL;
    gint r0 = h2 && r2 < r ? r2 : r;
    const guint8 *y0 = in->data[0] + (gsize) r0 * in->stride[0];
    const guint8 *y1 = h2 ? y0 + in->stride[0] : NULL;
    const guint8 *c1 = in->data[1] + (gsize) (r / 2) * in->stride[1];
    const guint8 *c2 = nv12 ? NULL : in->data[2] + (gsize) (r / 2) * in->stride[2];
    if (h2 && r2 < r)
      f->k->fpair_rows (f->fp, y0, y1, c1, c2, h2, h);
    else
      f->k->fpair_rows (f->fp, y0, y1, c1, c2, h, h2);
    sl->tags[r % f->ring_n] = r;
    if (h2)
      sl->tags[r2 % f->ring_n] = r2;
  }
}

/* Hints the cache to fetch the source rows of output row @oy: a frame
 * from memory arrives while the previous row is computed. */
static void
prefetch_rows (Fused *f, gint oy)
{
  const M2iResizeAxis *ay = &f->rplan->y;
  const M2iImage *in = f->in;
  gboolean nv12 = in->format == M2I_FORMAT_SP_NV12_8;
  gint lo = f->pf_lo & ~63, hi = f->pf_hi;
  for (gint t = 0; t < ay->taps; t++) {
    gint r = ay->index[oy * ay->taps + t];
    const guint8 *y = in->data[0] + (gsize) r * in->stride[0];
    for (gint x = lo; x < hi; x += 64)
      __builtin_prefetch (y + x);
    if (t > 0 && ay->index[oy * ay->taps + t - 1] / 2 == r / 2)
      continue;
    const guint8 *c = in->data[1] + (gsize) (r / 2) * in->stride[1];
    if (nv12) {
      for (gint x = lo; x < hi; x += 64)
        __builtin_prefetch (c + x);
    } else {
      const guint8 *v = in->data[2] + (gsize) (r / 2) * in->stride[2];
      for (gint x = lo / 2; x < (hi + 1) / 2; x += 64) {
        __builtin_prefetch (c + x);
        __builtin_prefetch (v + x);
      }
    }
  }
}

/* Output row @oy in one sweep (f->direct). */
static void
fpair_out_row (Fused *f, gint oy)
{
  const M2iImage *in = f->in, *out = f->out;
  const M2iResizeAxis *ay = &f->rplan->y;
  gboolean nv12 = in->format == M2I_FORMAT_SP_NV12_8;
  const guint8 *y[2], *c1[2], *c2[2];
  for (int t = 0; t < 2; t++) {
    gint r = ay->index[2 * oy + t];
    y[t] = in->data[0] + (gsize) r * in->stride[0];
    c1[t] = in->data[1] + (gsize) (r / 2) * in->stride[1];
    c2[t] = nv12 ? NULL : in->data[2] + (gsize) (r / 2) * in->stride[2];
  }
  m2i_f16 *const o[3] = {
    (m2i_f16 *) (out->data[0] + (gsize) oy * out->stride[0]),
    (m2i_f16 *) (out->data[1] + (gsize) oy * out->stride[1]),
    (m2i_f16 *) (out->data[2] + (gsize) oy * out->stride[2]) };
  const float *w = ay->weight + 2 * oy;
  f->k->fpair_out (f->fp, y[0], c1[0], c2[0], y[1], c1[1], c2[1], w[0], w[1],
      f->has_norm ? f->sub : NULL, f->mul, f->add, o);
}

static void
run_resize_fpair (gint begin, gint end, gint slice, gpointer data)
{
  Fused *f = data;
  Slice *sl = &f->slices[slice];
  const M2iResizeAxis *ay = &f->rplan->y;
  const M2iImage *out = f->out;
  for (gint i = 0; i < f->ring_n; i++)
    sl->tags[i] = -1;
  if (begin < end)
    prefetch_rows (f, begin);
  for (gint oy = begin; oy < end; oy++) {
    if (oy + 1 < end)
      prefetch_rows (f, oy + 1);
    if (f->direct) {
      fpair_out_row (f, oy);
      continue;
    }
    fpair_source_rows (f, sl, oy);
    for (gint t = 0; t < ay->taps; t++) {
      gboolean have;
      sl->rows[t] = ring_row (f, sl, ay->index[oy * ay->taps + t], &have);
    }
    if (f->vfinish) {
      m2i_f16 *const o[3] = {
        (m2i_f16 *) (out->data[0] + (gsize) oy * out->stride[0]),
        (m2i_f16 *) (out->data[1] + (gsize) oy * out->stride[1]),
        (m2i_f16 *) (out->data[2] + (gsize) oy * out->stride[2]) };
      const float *w = ay->weight + 2 * oy;
      f->k->vfinish_f16 (sl->rows[0], sl->rows[1], w[0], w[1], f->out_w,
          f->has_norm ? f->sub : NULL, f->mul, f->add, o);
    } else {
      m2i_resize_vpass (f->rplan, oy, sl->rows, f->out_w * 3, sl->vrow);
      finish_row (f, sl, oy);
    }
  }
}

void
m2i_fused_run (Fused *f, const M2iImage *in, M2iImage *out)
{
  f->in = in;
  f->out = out;
  if (f->fp)
    m2i_parallel_for (f->out_h, f->n_slices, 4, run_resize_fpair, f);
  else if (f->has_resize)
    m2i_parallel_for (f->out_h, f->n_slices, 4, run_resize, f);
  else
    m2i_parallel_for (f->in_h / 2, f->n_slices, 8, run_pairs, f);
  f->in = NULL;
  f->out = NULL;
}
