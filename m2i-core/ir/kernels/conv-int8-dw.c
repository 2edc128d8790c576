/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Depthwise convolution on integers (conv-int8.h): one input and one
 * output channel per group, a quantizer per channel allowed. Each task
 * (image, channel) quantizes the channel's plane (or copies its codes)
 * into a padded plane of codes in its slice's scratch, then computes the
 * output row by row (ir_k_i8_dw_row_c here, the VNNI kernel in
 * conv-int8-x86.c, the AVX2 one in conv-int8-avx2.c), with the padding
 * terms of rows that reach into the padding when the zero point lies
 * between two codes.
 */
#include "conv-int8.h"
#include <base/m2i-align.h>

#include <math.h>
#include <string.h>

struct _M2iKI8Dw {
  M2iKConvGeom g;
  gint64 taps, ng;                     /* ng = ceil (kw / 4) groups of 4 taps */
  gint8 *w;                            /* [c][kh][ng][4], 0 past kw */
  gint32 *ibias;                       /* per channel: -zc·Σq */
  float *mul, *add;
  gboolean *direct;                    /* per channel: codes straight from the sum */
  float *dmul, *dadd;
  M2iKI8Quant *q;                      /* per channel */
  gboolean codes_in;
  M2iKI8PadFix *pad_fix;               /* zero points between codes, and padding */
  M2iKI8Out *o;                        /* the epilogue */
  gint64 hp, wpp;                      /* the padded plane: hp rows of wpp bytes */
  M2iKI8QuantRow quant_row;
  M2iKI8DwRowFunc row;
  const char *name;
  gint slices;                         /* planes in the scratch */
};

void
ir_k_i8_dw_row_c (const M2iKI8DwRow *r)
{
  for (gint64 x = 0; x < r->n; x++) {
    gint32 acc = r->ibias;
    for (gint ky = 0; ky < r->kh; ky++)
      for (gint g = 0; g < r->n_g; g++)
        for (gint j = 0; j < 4; j++)
          acc += (gint32) r->w[(ky * r->n_g + g) * 4 + j] *
              (gint32) r->rows[ky][x * r->sw + (4 * g + j) * r->dw];
    float v = (float) acc * r->mul + r->add;
    if (r->fix)
      v = v + r->fix[x];
    ir_k_i8_finish_row (r->o, r->c, &v, 1,
        r->o->codes ? (gpointer) ((guint8 *) r->out + x) : (gpointer) ((float *) r->out + x));
  }
}

gboolean
ir_k_conv_int8_dw_fast (const M2iKConvGeom *g)
{
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  return ir_k_i8_dw_row_vnni (level, g->sw, g->dw) || ir_k_i8_dw_row_avx2 (level, g->sw, g->dw);
}

void
ir_k_i8_dw_free (M2iKI8Dw *d)
{
  if (!d)
    return;
  g_free (d->w);
  g_free (d->ibias);
  g_free (d->mul);
  g_free (d->direct);
  g_free (d->dmul);
  g_free (d->dadd);
  g_free (d->add);
  g_free (d->q);
  ir_k_i8_pad_fix_free (d->pad_fix);
  ir_k_i8_out_free (d->o);
  g_free (d);
}

M2iKI8Dw *
ir_k_i8_dw_new (const M2iKConvInt8Params *p, gint slices)
{
  const M2iKConvGeom *g = &p->g;
  M2iKI8Dw *d = g_new0 (M2iKI8Dw, 1);
  gint64 c_n = g->c_out;
  d->g = *g;
  d->taps = g->kh * g->kw;
  d->ng = (g->kw + 3) / 4;
  d->o = ir_k_i8_out_new (p);
  d->codes_in = p->codes_in;
  d->w = g_new0 (gint8, c_n * g->kh * d->ng * 4);
  d->ibias = g_new (gint32, c_n);
  d->mul = g_new (float, c_n);
  d->add = g_new (float, c_n);
  d->q = g_new (M2iKI8Quant, c_n);
  gboolean padded = g->pt || g->pl || g->pb || g->pr;
  g_autofree float *pad_coef = g_new0 (float, c_n);
  gboolean fix = FALSE;
  for (gint64 c = 0; c < c_n; c++) {
    gint64 r = p->n_ranges == 1 ? 0 : c;
    double z = ir_k_i8_zero_point (p, r);
    d->q[c] = ir_k_i8_quantizer (p->levels, p->in_lo[r], p->in_hi[r], z);
    double m = ((double) p->grid_hi[r] - p->grid_lo[r]) / (p->levels - 1) * p->w_scale[c];
    const gint8 *wc = p->weights + c * d->taps;
    gint64 sum = 0;
    for (gint64 t = 0; t < d->taps; t++) {
      gint64 ky = t / g->kw, kx = t % g->kw;
      d->w[((c * g->kh + ky) * d->ng + kx / 4) * 4 + kx % 4] = wc[t];
      sum += wc[t];
    }
    d->ibias[c] = (gint32) (-d->q[c].z * sum);
    d->mul[c] = (float) m;
    d->add[c] = (float) ((p->bias ? p->bias[c] : 0.0) - m * (z - d->q[c].z) * sum);
    if (padded && !ir_k_i8_zero_is_code (z, d->q[c].z)) {
      pad_coef[c] = (float) (m * (z - d->q[c].z));
      fix = TRUE;
    }
  }
  d->direct = g_new (gboolean, c_n);
  d->dmul = g_new (float, c_n);
  d->dadd = g_new (float, c_n);
  for (gint64 c = 0; c < c_n; c++)
    d->direct[c] = ir_k_i8_direct (d->o, c, d->mul[c], d->add[c], &d->dmul[c], &d->dadd[c]);
  if (fix) {
    g_autofree float *tap_sum = g_new (float, c_n * d->taps);
    for (gint64 i = 0; i < c_n * d->taps; i++)
      tap_sum[i] = p->weights[i];
    d->pad_fix = ir_k_i8_pad_fix_new (g, c_n, tap_sum, pad_coef);
  }
  d->hp = g->h + g->pt + g->pb;
  /* the row kernels read 64 bytes from x·sw + 4g·dw for x < ow */
  gint64 reach = (g->ow + 16) * g->sw + 4 * d->ng * g->dw + 64;
  d->wpp = (gint64) m2i_align_up ((gsize) MAX (g->w + g->pl + g->pr, reach), 64);
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  d->quant_row = ir_k_i8_quant_row_avx512 (level);
  if (!d->quant_row)
    d->quant_row = ir_k_i8_quant_row_avx2 (level);
  if (!d->quant_row)
    d->quant_row = ir_k_i8_quant_row_c;
  d->name = "vnni-dw";
  if (!(d->row = ir_k_i8_dw_row_vnni (level, g->sw, g->dw))) {
    d->name = "avx2-dw";
    d->row = ir_k_i8_dw_row_avx2 (level, g->sw, g->dw);
  }
  if (!d->row) {
    d->name = "c-dw";
    d->row = ir_k_i8_dw_row_c;
  }
  d->slices = slices;
  return d;
}

gsize
ir_k_i8_dw_scratch_bytes (const M2iKI8Dw *d)
{
  /* a padded plane, and a row of padding terms */
  return (gsize) d->slices * (d->hp * d->wpp + m2i_align_up (d->g.ow * sizeof (float), 64));
}

const char *
ir_k_i8_dw_kernel_name (const M2iKI8Dw *d)
{
  return d->name;
}

typedef struct {
  const M2iKI8Dw *d;
  const guint8 *in;                    /* f32 or codes */
  guint8 *out;                         /* f32 or codes */
  guint8 *scratch;
} DwJob;

static void
dw_slice (gint begin, gint end, gint slice, gpointer data)
{
  const DwJob *j = data;
  const M2iKI8Dw *d = j->d;
  const M2iKConvGeom *g = &d->g;
  gsize per = d->hp * d->wpp + m2i_align_up (g->ow * sizeof (float), 64);
  guint8 *plane = j->scratch + (gsize) slice * per;
  float *fix = (float *) (plane + d->hp * d->wpp);
  gsize hw = (gsize) g->h * g->w, ohw = (gsize) g->oh * g->ow;
  gsize in_es = d->codes_in ? 1 : sizeof (float), out_es = d->o->codes ? 1 : sizeof (float);
  const guint8 *rows[64];
  for (gint t = begin; t < end; t++) {
    gint64 c = t % g->c_out;
    const M2iKI8Quant *q = &d->q[c];
    const guint8 *src = j->in + (gsize) t * hw * in_es;
    for (gint64 yp = 0; yp < d->hp; yp++) {
      guint8 *row = plane + yp * d->wpp;
      gint64 y = yp - g->pt;
      if (y < 0 || y >= g->h) {
        memset (row, q->z, d->wpp);
        continue;
      }
      memset (row, q->z, g->pl);
      if (d->codes_in)
        memcpy (row + g->pl, src + y * g->w, g->w);
      else
        d->quant_row (q, (const float *) src + y * g->w, g->w, row + g->pl);
      memset (row + g->pl + g->w, q->z, d->wpp - g->pl - g->w);
    }
    M2iKI8DwRow r = { rows, (gint) g->kh, (gint) d->ng, g->sw, g->dw,
      d->w + c * g->kh * d->ng * 4, d->ibias[c], d->mul[c], d->add[c], d->direct[c],
      d->dmul[c], d->dadd[c], NULL, d->o, c, NULL, g->ow };
    for (gint64 oy = 0; oy < g->oh; oy++) {
      for (gint64 ky = 0; ky < g->kh; ky++)
        rows[ky] = plane + (oy * g->sh + ky * g->dh) * d->wpp;
      r.fix = d->pad_fix && ir_k_i8_pad_fix_row (d->pad_fix, c, oy, fix) ? fix : NULL;
      r.out = j->out + ((gsize) t * ohw + oy * g->ow) * out_es;
      d->row (&r);
    }
  }
}

void
ir_k_i8_dw_run (const M2iKI8Dw *d, gconstpointer in, gpointer out, gpointer scratch,
    gint slices)
{
  const M2iKConvGeom *g = &d->g;
  DwJob j = { d, in, out, scratch };
  ir_k_parallel_for ((gint) (g->batch * g->c_out), slices, 1, dw_slice, &j);
}
