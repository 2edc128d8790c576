/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Convolution on integers (conv-int8.h): what a layer may be, the
 * quantizer and epilogue every path shares (the scalar reference of the
 * vector code), the padding correction for zero points between two codes,
 * and the op kernel the low-precision pass installs. The GEMM path is in
 * conv-int8-gemm.c, depthwise layers in conv-int8-dw.c, the VNNI and
 * AVX-512 kernels in conv-int8-x86.c, the AVX2 ones in conv-int8-avx2.c.
 */
#include "conv-int8.h"
#include "vmath.h"

#include <math.h>
#include <string.h>

struct _M2iKConvInt8 {
  M2iKConvGeom g;
  M2iKI8Gemm *gemm;                    /* one of the two */
  M2iKI8Dw *dw;
  gint slices;                         /* threads it was made for */
};

/* ---- what can run ------------------------------------------------------ */

double
ir_k_i8_zero_point (const M2iKConvInt8Params *p, gint64 i)
{
  return -(double) p->grid_lo[i] * (p->levels - 1) / ((double) p->grid_hi[i] - p->grid_lo[i]);
}

gboolean
ir_k_i8_zero_is_code (double z, guint8 code)
{
  return fabs (z - code) < 1e-4;
}

static gboolean
is_depthwise (const M2iKConvGeom *g)
{
  return g->groups > 1 && g->c_in == g->groups && g->c_out == g->groups;
}

const char *
ir_k_conv_int8_unsupported (const M2iKConvInt8Params *p)
{
  const M2iKConvGeom *g = &p->g;
  if (p->levels < 2 || p->levels > 256 || ((p->codes_out || p->grid_out) && (p->out_levels < 2 ||
      p->out_levels > 256)))
    return "a quantizer has more than 256 levels";
  if (g->groups < 1 || g->c_in % g->groups || g->c_out % g->groups)
    return "the groups do not divide the channels";
  gint64 cin_g = g->c_in / g->groups;
  if (g->groups > 1 && cin_g % 4 && !is_depthwise (g))
    return "grouped, with input channels per group neither 1 nor a multiple of 4";
  if (p->n_ranges != 1 && !(is_depthwise (g) && p->n_ranges == g->c_in))
    return "one quantizer per channel on a layer that is not depthwise";
  for (gint64 i = 0; i < p->n_ranges; i++)
    if (!isfinite (p->in_lo[i]) || !isfinite (p->in_hi[i]) || !isfinite (p->grid_lo[i]) ||
        !isfinite (p->grid_hi[i]) || !(p->grid_hi[i] > p->grid_lo[i]))
      return "the quantizer's ranges are not finite or its output range is empty";
  gboolean quantized = p->codes_out || p->grid_out;
  if (p->codes_out && p->grid_out)
    return "codes and values out at once";
  if (quantized && p->n_out_ranges != 1 && p->n_out_ranges != g->c_out)
    return "the output quantizer has neither one range nor one per channel";
  for (gint64 i = 0; quantized && i < p->n_out_ranges; i++)
    if (!isfinite (p->out_lo[i]) || !isfinite (p->out_hi[i]) || (p->grid_out &&
        (!isfinite (p->grid_out_lo[i]) || !isfinite (p->grid_out_hi[i]))))
      return "the output quantizer's range is not finite";
  if (p->act == M2I_K_I8_ACT_PRELU && (!p->slope || (p->n_slope != 1 &&
      p->n_slope != g->c_out)))
    return "PReLU wants one slope or one per channel";
  /* the accumulator starts at -zc·Σq and adds Σ q·k: each at most
   * K·128·255 in size, so their sum stays below 2^31 */
  if (cin_g * g->kh * g->kw > 32000)
    return "more products per output than an int32 sum holds exactly";
  if (g->sh * g->sw > M2I_K_I8_MAX_PHASES || g->kh > 64 || g->kw > 64)
    return "strides or kernel too large";
  if (g->oh * g->ow > G_MAXINT / 8 || g->c_in * (g->h + g->pt + g->pb + g->sh) *
      (g->w + g->pl + g->pr + g->sw + 64) > G_MAXINT / 8)
    return "the input is too large";
  for (gint64 o = 0; o < g->c_out; o++)
    if (!isfinite (p->w_scale[o]) || (p->bias && !isfinite (p->bias[o])))
      return "a weight scale or bias is not finite";
  return NULL;
}

M2iKI8Quant
ir_k_i8_quantizer (gint levels, float lo, float hi, double z)
{
  return (M2iKI8Quant) { lo, hi - lo, (float) (levels - 1), MIN (lo, hi), MAX (lo, hi),
    (guint8) CLAMP (nearbyint (z), 0, levels - 1) };
}

M2iKI8Out *
ir_k_i8_out_new (const M2iKConvInt8Params *p)
{
  M2iKI8Out *o = g_new0 (M2iKI8Out, 1);
  o->act = p->act;
  o->beta = p->swish_beta;
  if (p->act == M2I_K_I8_ACT_PRELU) {
    float *slope = g_new (float, p->g.c_out);
    for (gint64 c = 0; c < p->g.c_out; c++)
      slope[c] = p->slope[p->n_slope == 1 ? 0 : c];
    o->slope = slope;
  }
  o->codes = p->codes_out;
  o->grid = p->grid_out;
  if (p->codes_out || p->grid_out) {
    M2iKI8Quant *oq = g_new (M2iKI8Quant, p->g.c_out);
    float *glo = p->grid_out ? g_new (float, p->g.c_out) : NULL;
    float *ghi = p->grid_out ? g_new (float, p->g.c_out) : NULL;
    for (gint64 c = 0; c < p->g.c_out; c++) {
      gint64 r = p->n_out_ranges == 1 ? 0 : c;
      oq[c] = ir_k_i8_quantizer (p->out_levels, p->out_lo[r], p->out_hi[r], 0);
      if (glo) {
        glo[c] = p->grid_out_lo[r];
        ghi[c] = p->grid_out_hi[r];
      }
    }
    o->oq = oq;
    o->glo = glo;
    o->ghi = ghi;
  }
  return o;
}

void
ir_k_i8_out_free (M2iKI8Out *o)
{
  if (!o)
    return;
  g_free ((gpointer) o->slope);
  g_free ((gpointer) o->oq);
  g_free ((gpointer) o->glo);
  g_free ((gpointer) o->ghi);
  g_free (o);
}

/* ---- the scalar reference of quantizer and epilogue ------------------------ */

guint8
ir_k_i8_quant (const M2iKI8Quant *q, float v)
{
  float k = nearbyintf ((v - q->lo) / q->d * q->lm1);
  k = v <= q->mn ? 0.0f : v > q->mx ? q->lm1 : k >= 0.0f ? k : 0.0f;
  return (guint8) (gint32) k;
}

void
ir_k_i8_quant_row_c (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d)
{
  for (gint64 i = 0; i < n; i++)
    d[i] = ir_k_i8_quant (q, x[i]);
}

float
ir_k_i8_activate (const M2iKI8Out *o, gint64 c, float y)
{
  switch (o->act) {
    case M2I_K_I8_ACT_RELU:
      return y > 0.0f ? y : 0.0f;
    case M2I_K_I8_ACT_PRELU:
      return y < 0.0f ? y * o->slope[c] : y;
    case M2I_K_I8_ACT_SWISH:
      return ir_vm_swish (y, o->beta);
    default:
      return y;
  }
}

gboolean
ir_k_i8_direct (const M2iKI8Out *o, gint64 c, float mul, float add, float *dmul, float *dadd)
{
  if (!o->codes || !(o->act == M2I_K_I8_ACT_NONE || (o->act == M2I_K_I8_ACT_RELU &&
      o->oq[c].lo >= 0.0f)) || !(o->oq[c].d > 0.0f))
    return FALSE;
  double inv = (double) o->oq[c].lm1 / o->oq[c].d;
  *dmul = (float) (mul * inv);
  *dadd = (float) (((double) add - o->oq[c].lo) * inv);
  return TRUE;
}

void
ir_k_i8_finish_row (const M2iKI8Out *o, gint64 c, const float *v, gint64 n, gpointer out)
{
  for (gint64 x = 0; x < n; x++) {
    float y = ir_k_i8_activate (o, c, v[x]);
    if (o->codes) {
      ((guint8 *) out)[x] = ir_k_i8_quant (&o->oq[c], y);
    } else if (o->grid) {
      /* the FakeQuantize kernel's expression, operation for operation */
      const M2iKI8Quant *q = &o->oq[c];
      float lo = o->glo[c], hi = o->ghi[c];
      ((float *) out)[x] = y <= q->mn ? lo : y > q->mx ? hi :
          nearbyintf ((y - q->lo) / q->d * q->lm1) / q->lm1 * (hi - lo) + lo;
    } else {
      ((float *) out)[x] = y;
    }
  }
}

/* ---- padding correction ---------------------------------------------------- */

struct _M2iKI8PadFix {
  M2iKConvGeom g;
  gint64 channels;
  /* Columns whose taps all fall inside the image: [xa, xb); the nb = xa
   * + ow - xb others are edge columns. Rows whose taps all fall inside
   * need the term only in their edge columns, and the same in each such
   * row: fix[c][0][1 + j] for edge column j. The other rows (a few at the
   * top and bottom) are border rows, bi = 0 .. n_border - 1: fix[c][1 +
   * bi][0] for their inside columns, fix[c][1 + bi][1 + j] for edge column
   * j. coef included. */
  gint64 xa, xb, nb;
  gint64 n_border;
  gint64 *row_class;                   /* per y: 0 inside, else 1 + bi */
  float *fix;                          /* [channel][1 + n_border][1 + nb] */
};

/* Σ tap_sum[t] over the taps t of output (y, x) outside the image. */
static float
padded_sum (const M2iKConvGeom *g, const float *tap_sum, gint64 y, gint64 x)
{
  float sum = 0.0f;
  for (gint64 t = 0; t < g->kh * g->kw; t++) {
    gint64 iy = y * g->sh - g->pt + t / g->kw * g->dh;
    gint64 ix = x * g->sw - g->pl + t % g->kw * g->dw;
    if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
      sum += tap_sum[t];
  }
  return sum;
}

static gboolean
row_inside (const M2iKConvGeom *g, gint64 y)
{
  for (gint64 ky = 0; ky < g->kh; ky++) {
    gint64 iy = y * g->sh - g->pt + ky * g->dh;
    if (iy < 0 || iy >= g->h)
      return FALSE;
  }
  return TRUE;
}

M2iKI8PadFix *
ir_k_i8_pad_fix_new (const M2iKConvGeom *g, gint64 channels, const float *tap_sum,
    const float *coef)
{
  M2iKI8PadFix *f = g_new0 (M2iKI8PadFix, 1);
  f->g = *g;
  f->channels = channels;
  gint64 taps = g->kh * g->kw;
  gint64 last = g->w - 1 + g->pl - (g->kw - 1) * g->dw;
  f->xb = MIN (last < 0 ? 0 : last / g->sw + 1, g->ow);
  f->xa = MIN ((g->pl + g->sw - 1) / g->sw, f->xb);
  f->nb = f->xa + g->ow - f->xb;
  f->row_class = g_new (gint64, g->oh);
  g_autofree gint64 *border_row = g_new (gint64, g->oh);
  gint64 y_in = -1;
  for (gint64 y = 0; y < g->oh; y++) {
    if (row_inside (g, y)) {
      f->row_class[y] = 0;
      y_in = y;
    } else {
      border_row[f->n_border] = y;
      f->row_class[y] = 1 + f->n_border++;
    }
  }
  gint64 per = (1 + f->n_border) * (1 + f->nb);
  f->fix = g_new0 (float, channels * per);
  for (gint64 c = 0; c < channels; c++) {
    const float *ts = tap_sum + c * taps;
    float *fc = f->fix + c * per;
    for (gint64 k = 0; k <= f->n_border; k++) {
      gint64 y = k ? border_row[k - 1] : y_in;
      if (y < 0)
        continue;                      /* no inside row */
      if (f->xa < f->xb)
        fc[k * (1 + f->nb)] = coef[c] * padded_sum (g, ts, y, f->xa);
      for (gint64 j = 0; j < f->nb; j++)
        fc[k * (1 + f->nb) + 1 + j] = coef[c] *
            padded_sum (g, ts, y, j < f->xa ? j : f->xb + j - f->xa);
    }
  }
  return f;
}

void
ir_k_i8_pad_fix_free (M2iKI8PadFix *f)
{
  if (!f)
    return;
  g_free (f->row_class);
  g_free (f->fix);
  g_free (f);
}

gboolean
ir_k_i8_pad_fix_row (const M2iKI8PadFix *f, gint64 c, gint64 y, float *v)
{
  const M2iKConvGeom *g = &f->g;
  gint64 k = f->row_class[y];
  if (!k && !f->nb)
    return FALSE;
  const float *fix = f->fix + (c * (1 + f->n_border) + k) * (1 + f->nb);
  for (gint64 x = f->xa; x < f->xb; x++)
    v[x] = k ? fix[0] : 0.0f;
  for (gint64 j = 0; j < f->nb; j++)
    v[j < f->xa ? j : f->xb + j - f->xa] = fix[1 + j];
  (void) g;
  return TRUE;
}

void
ir_k_i8_pad_fix_panel (const M2iKI8PadFix *f, gint64 c0, gint rows, gint64 n0, gint64 wq,
    float *fix)
{
  const M2iKConvGeom *g = &f->g;
  gint64 per = (1 + f->n_border) * (1 + f->nb);
  gint64 at[M2I_K_I8_NR];                 /* the column's entry, or -1 */
  gboolean any = FALSE;
  gint64 y = n0 / wq, x = n0 % wq;
  for (gint n = 0; n < M2I_K_I8_NR; n++) {
    at[n] = -1;
    if (y < g->oh && x < g->ow) {
      gint64 k = f->row_class[y], j = x < f->xa ? x : x >= f->xb ? f->xa + x - f->xb : -1;
      if (j >= 0 || k)
        at[n] = k * (1 + f->nb) + 1 + j;
    }
    any |= at[n] >= 0;
    if (++x == wq) {
      x = 0;
      y++;
    }
  }
  for (gint r = 0; r < rows; r++) {
    const float *fc = f->fix + (c0 + r) * per;
    for (gint n = 0; n < M2I_K_I8_NR; n++)
      fix[r * M2I_K_I8_NR + n] = any && at[n] >= 0 ? fc[at[n]] : 0.0f;
  }
}

/* ---- the layer ------------------------------------------------------------- */

void
ir_k_conv_int8_free (M2iKConvInt8 *c)
{
  if (!c)
    return;
  ir_k_i8_gemm_free (c->gemm);
  ir_k_i8_dw_free (c->dw);
  g_free (c);
}

M2iKConvInt8 *
ir_k_conv_int8_new (const M2iKConvInt8Params *p, gint n_threads, const char **why)
{
  const char *no = ir_k_conv_int8_unsupported (p);
  if (no) {
    *why = no;
    return NULL;
  }
  M2iKConvInt8 *c = g_new0 (M2iKConvInt8, 1);
  c->g = p->g;
  c->slices = CLAMP (n_threads, 1, 64);
  if (is_depthwise (&p->g))
    c->dw = ir_k_i8_dw_new (p, c->slices);
  else
    c->gemm = ir_k_i8_gemm_new (p, c->slices);
  return c;
}

gsize
ir_k_conv_int8_scratch_bytes (const M2iKConvInt8 *c)
{
  return c->dw ? ir_k_i8_dw_scratch_bytes (c->dw) : ir_k_i8_gemm_scratch_bytes (c->gemm);
}

const char *
ir_k_conv_int8_kernel_name (const M2iKConvInt8 *c)
{
  return c->dw ? ir_k_i8_dw_kernel_name (c->dw) : ir_k_i8_gemm_kernel_name (c->gemm);
}

void
ir_k_conv_int8_run (const M2iKConvInt8 *c, gconstpointer in, gpointer out, gpointer scratch,
    gint slices)
{
  slices = CLAMP (slices, 1, c->slices);
  if (c->dw)
    ir_k_i8_dw_run (c->dw, in, out, scratch, slices);
  else
    ir_k_i8_gemm_run (c->gemm, in, out, scratch, slices);
}

/* ---- the op kernel --------------------------------------------------------- */

static gboolean
int8_infer (M2iOpContext *ctx, GError **error)
{
  m2i_ir_node_set_error (error, M2I_ERROR_FAILED, ctx->node,
      "an integer convolution is made by the low-precision pass, not inferred");
  return FALSE;
}

static gboolean
int8_execute (M2iOpContext *ctx, GError **error)
{
  const M2iKConvInt8 *c = ctx->state;
  const M2iKConvGeom *g = &c->g;
  gint64 macs = g->batch * g->c_out * g->oh * g->ow * (g->c_in / g->groups) * g->kh * g->kw;
  /* integer products are about 4 times cheaper than the f32 ones the
   * thresholds were set for */
  gint slices = ir_k_slices_for (ctx, macs / 4);
  ir_k_conv_int8_run (c, ctx->inputs[0].data, ctx->outputs[0].data, ctx->scratch, slices);
  return TRUE;
}

static void
int8_free (gpointer state)
{
  ir_k_conv_int8_free (state);
}

const M2iOpKernel ir_kernel_conv_int8 = {
  "Convolution", "opset1", int8_infer, int8_execute, int8_free,
};
