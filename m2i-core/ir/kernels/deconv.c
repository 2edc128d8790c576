/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ConvolutionBackpropData-1 and GroupConvolutionBackpropData-1 (transposed
 * convolution) on 1-D, 2-D and 3-D NC... tensors, f32.
 *
 * Every input pixel x scatters W[ci][co][k] · x into output pixel
 * x·stride + k·dilation - pads_begin (kept when inside the output). Per
 * group that is one matrix product and a scatter ("col2im"):
 *   col[(co, k)][pixel] = Σ_ci W[ci][co][k] · X[ci][pixel]
 * with Wᵀ as A (packed once in infer() when the weights are constant),
 * the input planes as B (read in place, one column panel of the GEMM at a
 * time), then each row of the panel's col added into its output channel
 * at the shifted positions. Tasks are (image, group, block of output
 * channels): a task owns its output channels, zeroes them and adds every
 * column panel into them while the panel is in cache, so threads never
 * write the same element and no buffer holds the whole col matrix.
 *
 * Output size: from output_shape (input 2) when given, else
 * stride·(in - 1) + dilation·(k - 1) + 1 - pads_begin - pads_end +
 * output_padding. Pads: explicit ones as given; valid, and same_* without
 * output_shape, none; same_upper/same_lower with output_shape split
 * stride·(in - 1) + dilation·(k - 1) + 1 - out + output_padding, the odd
 * one at the start for same_upper (as OpenVINO's shape inference does).
 */
#include "kernels-private.h"
#include "gemm.h"

#include <string.h>

#define SP 3                                /* spatial axes kept (unused: 1) */

typedef struct {
  const M2iGemmArch *arch;
  gint64 batch, groups, cin_g, cout_g;
  gint64 in[SP], out[SP], k[SP], s[SP], d[SP], pb[SP];
  gint64 in_pix, out_pix, kp;              /* pixels per plane, taps per kernel */
  gint64 cblk;                             /* output channels per task */
  gint64 blocks;                           /* channel blocks per group */
  gsize packed_block;                      /* floats of one packed A block */
  float *packed;                           /* [groups][blocks] packed A, or NULL */
  gint32 *row_off;                         /* p · in_pix, for B read in place */
  gsize bbuf_floats, strip_floats, col_floats;   /* per slice */
  gint slices;
} DeconvState;

static void
deconv_state_free (gpointer p)
{
  DeconvState *s = p;
  if (!s)
    return;
  g_free (s->packed);
  g_free (s->row_off);
  g_free (s);
}

/* Packs Wᵀ of channel block b of group g: row (co, tap) for co in the
 * block, column ci, from W laid out [G][C_in/G][C_out/G][taps]. */
static void
deconv_pack (const DeconvState *s, const float *w, float *dst)
{
  gint64 gw = s->cin_g * s->cout_g * s->kp;
  for (gint64 g = 0; g < s->groups; g++)
    for (gint64 b = 0; b < s->blocks; b++) {
      gint64 c0 = b * s->cblk, nc = MIN (s->cblk, s->cout_g - c0);
      ir_gemm_pack_a (s->arch, w + g * gw + c0 * s->kp, 1, s->cout_g * s->kp,
          (gint) (nc * s->kp), (gint) s->cin_g, dst + (g * s->blocks + b) * s->packed_block);
    }
}

static gboolean
deconv_infer_common (M2iOpContext *ctx, gboolean grouped, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 3, 1, 1, error) || !ir_k_check_f32 (ctx, 0, error) ||
      !ir_k_check_f32 (ctx, 1, error) || !ir_k_check_rank (ctx, 0, 3, 5, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape, *ws = &ctx->inputs[1].shape;
  gint n = in->rank - 2;
  gint want_rank = in->rank + (grouped ? 1 : 0);
  gint64 groups = grouped && ws->rank == want_rank ? ws->dims[0] : 1;
  gint64 cin_g = ws->rank == want_rank ? ws->dims[grouped ? 1 : 0] : -1;
  gint64 cout_g = ws->rank == want_rank ? ws->dims[grouped ? 2 : 1] : -1;
  if (ws->rank != want_rank || groups < 1 || cout_g < 1 || cin_g < 1 ||
      cin_g * groups != in->dims[1]) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "filter shape %s does not match input %s: expected %s with C_in%s = %" G_GINT64_FORMAT,
        ir_k_shape_str (ws, 0), ir_k_shape_str (in, 1),
        grouped ? "[G, C_in/G, C_out/G, kernel...]" : "[C_in, C_out, kernel...]",
        grouped ? "/G · G" : "", in->dims[1]);
    return FALSE;
  }
  M2iWindow win;
  if (!ir_k_window_attrs (ctx, n, TRUE, NULL, &win, error))
    return FALSE;
  gint64 opad[M2I_MAX_RANK] = { 0 };
  gint n_opad;
  if (!m2i_ir_node_attr_ints (ctx->node, "output_padding", opad, M2I_MAX_RANK, &n_opad, error))
    return FALSE;
  if (n_opad >= 0 && n_opad != n) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attribute output_padding has %d values; the input has %d spatial axes", n_opad, n);
    return FALSE;
  }
  gint64 oshape[M2I_MAX_RANK];
  gboolean have_oshape = ctx->n_inputs == 3;
  if (have_oshape) {
    gint m;
    if (!ir_k_const_ints (ctx, 2, oshape, M2I_MAX_RANK, &m, error))
      return FALSE;
    if (m != n) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "output_shape has %d values; the input has %d spatial axes", m, n);
      return FALSE;
    }
  }
  DeconvState *s = g_new0 (DeconvState, 1);
  s->arch = ir_gemm_arch ();
  s->batch = in->dims[0];
  s->groups = groups;
  s->cin_g = cin_g;
  s->cout_g = cout_g;
  s->in_pix = s->out_pix = s->kp = 1;
  for (gint i = 0; i < SP; i++) {
    gint a = i - (SP - n);                 /* the spatial axis, < 0: unused */
    s->in[i] = s->out[i] = s->k[i] = s->s[i] = s->d[i] = 1;
    s->pb[i] = 0;
    if (a < 0)
      continue;
    s->in[i] = in->dims[2 + a];
    s->k[i] = ws->dims[ws->rank - n + a];
    s->s[i] = win.strides[a];
    s->d[i] = win.dilations[a];
    if (opad[a] < 0 || opad[a] >= MAX (win.strides[a], win.dilations[a])) {
      deconv_state_free (s);
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "output_padding %" G_GINT64_FORMAT " must be in [0, max (stride, dilation))",
          opad[a]);
      return FALSE;
    }
    /* the extent the input covers: stride·(in - 1) + dilation·(k - 1) + 1 */
    gint64 span_in, span_k, full;        /* (strides reach 2^24, kernels 2^40) */
    if (!ir_mul_i64 (s->s[i], s->in[i] - 1, &span_in) ||
        !ir_mul_i64 (s->d[i], s->k[i] - 1, &span_k) || !ir_add_i64 (span_in, span_k, &full) ||
        full > G_MAXINT64 / 4) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "input %s with filter %s, strides and dilations is too large",
          ir_k_shape_str (in, 0), ir_k_shape_str (ws, 1));
      deconv_state_free (s);
      return FALSE;
    }
    full += 1;
    gint64 pe = 0;
    if (win.auto_pad == M2I_PAD_EXPLICIT) {
      s->pb[i] = win.pads_begin[a];
      pe = win.pads_end[a];
    }
    if (have_oshape) {
      s->out[i] = oshape[a];
      if (win.auto_pad == M2I_PAD_SAME_UPPER || win.auto_pad == M2I_PAD_SAME_LOWER) {
        gint64 total = MAX (full - oshape[a] + opad[a], 0);
        s->pb[i] = win.auto_pad == M2I_PAD_SAME_UPPER ? total - total / 2 : total / 2;
      }
    } else {
      s->out[i] = full - s->pb[i] - pe + opad[a];
    }
    if (s->in[i] < 1 || s->out[i] < 1) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "spatial axis %d: input %" G_GINT64_FORMAT ", kernel %" G_GINT64_FORMAT
          ", stride %" G_GINT64_FORMAT " and the pads give an output of %" G_GINT64_FORMAT,
          a, s->in[i], s->k[i], s->s[i], s->out[i]);
      deconv_state_free (s);
      return FALSE;
    }
    if (s->out[i] > G_MAXINT32 / 2 / s->out_pix || s->in[i] > G_MAXINT32 / 2 / s->in_pix ||
        s->k[i] > G_MAXINT32 / 2 / s->kp) {
      m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
          "input %s with filter %s is too large", ir_k_shape_str (in, 0),
          ir_k_shape_str (ws, 1));
      deconv_state_free (s);
      return FALSE;
    }
    s->in_pix *= s->in[i];
    s->out_pix *= s->out[i];
    s->kp *= s->k[i];
  }
  if (s->cin_g > G_MAXINT32 / 2 / s->in_pix || s->cout_g > G_MAXINT32 / 4 / s->kp) {
    deconv_state_free (s);
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "input %s with filter %s is too large", ir_k_shape_str (in, 0), ir_k_shape_str (ws, 1));
    return FALSE;
  }
  /* Blocks of output channels whose rows (channels × taps) fill about 128
   * rows of A: their packed weights stay in cache over a column panel. */
  s->cblk = CLAMP (128 / s->kp, 1, s->cout_g);
  s->blocks = (s->cout_g + s->cblk - 1) / s->cblk;
  s->packed_block = ir_gemm_packed_a_size (s->arch, (gint) (s->cblk * s->kp), (gint) s->cin_g);
  s->row_off = g_new (gint32, s->cin_g);
  for (gint64 p = 0; p < s->cin_g; p++)
    s->row_off[p] = (gint32) (p * s->in_pix);
  s->slices = ir_k_threads (ctx);
  s->bbuf_floats = ((gsize) s->arch->kc * s->arch->nr + 15) & ~(gsize) 15;
  s->strip_floats = (ir_gemm_strip_size (s->arch) + 15) & ~(gsize) 15;
  s->col_floats = ((gsize) s->cblk * s->kp * s->arch->nr + 15) & ~(gsize) 15;
  ctx->scratch_bytes = s->slices * (s->bbuf_floats + s->strip_floats + s->col_floats) *
      sizeof (float);
  if (ctx->inputs[1].data) {
    s->packed = g_new (float, s->packed_block * s->blocks * s->groups);
    deconv_pack (s, ctx->inputs[1].data, s->packed);
  } else {
    ctx->scratch_bytes += s->packed_block * s->blocks * s->groups * sizeof (float);
  }
  M2iTensor *out = &ctx->outputs[0];
  out->type = M2I_ET_F32;
  out->shape.rank = in->rank;
  out->shape.dims[0] = s->batch;
  out->shape.dims[1] = s->groups * s->cout_g;
  for (gint a = 0; a < n; a++)
    out->shape.dims[2 + a] = s->out[SP - n + a];
  ctx->state = s;
  return TRUE;
}

static gboolean
deconv_infer (M2iOpContext *ctx, GError **error)
{
  return deconv_infer_common (ctx, FALSE, error);
}

static gboolean
group_deconv_infer (M2iOpContext *ctx, GError **error)
{
  return deconv_infer_common (ctx, TRUE, error);
}

typedef struct {
  const DeconvState *s;
  const float *x;                          /* the group's first input plane */
  gint n0;                                 /* the panel's first input pixel */
} DeconvPanel;

/* Rows k0.. of B for the panel: the input planes read in place when the
 * panel is whole, else copied with zeros past the last pixel. The GEMM is
 * called with n0 = 0 (its columns go to the col strip), the true first
 * pixel is cp->n0. */
static const float *
deconv_b (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf, const gint32 **off)
{
  const DeconvPanel *cp = user;
  const DeconvState *s = cp->s;
  if (ncols == s->arch->nr) {
    *off = s->row_off;
    return cp->x + k0 * s->in_pix + cp->n0;
  }
  ir_gemm_pack_b_panel (s->arch, cp->x, s->in_pix, 1, k0, kc, cp->n0, ncols, buf);
  *off = ir_gemm_packed_offsets (s->arch);
  return buf;
}

/* Adds the panel's col rows (channels c0.. of the block, every tap) into
 * the output planes @out: input pixel p0 + j, tap (kz, ky, kx) lands on
 * (z·sz + kz·dz - pz, y·sy + ky·dy - py, x·sx + kx·dx - px). */
static void
col2im (const DeconvState *s, const float *col, gint64 nc, gint64 p0, gint ncols, gint nr,
    float *out)
{
  gint64 z0 = p0 / (s->in[1] * s->in[2]), y0 = p0 / s->in[2] % s->in[1], x0 = p0 % s->in[2];
  for (gint64 r = 0; r < nc * s->kp; r++) {
    gint64 co = r / s->kp, t = r % s->kp;
    gint64 kx = t % s->k[2], ky = t / s->k[2] % s->k[1], kz = t / (s->k[1] * s->k[2]);
    const float *c = col + r * nr;
    float *plane = out + co * s->out_pix;
    gint64 z = z0, y = y0, x = x0;
    for (gint j = 0; j < ncols;) {
      /* one input row (fixed z, y) at a time */
      gint run = (gint) MIN (ncols - j, s->in[2] - x);
      gint64 oz = z * s->s[0] + kz * s->d[0] - s->pb[0];
      gint64 oy = y * s->s[1] + ky * s->d[1] - s->pb[1];
      if (oz >= 0 && oz < s->out[0] && oy >= 0 && oy < s->out[1]) {
        float *orow = plane + (oz * s->out[1] + oy) * s->out[2];
        gint64 sx = s->s[2], base = kx * s->d[2] - s->pb[2];
        /* x in [x, x + run) with 0 <= x·sx + base < out[2] */
        gint64 lo = base >= 0 ? 0 : (-base + sx - 1) / sx;
        gint64 hi = s->out[2] - base <= 0 ? 0 : (s->out[2] - base + sx - 1) / sx;
        lo = MAX (lo, x);
        hi = MIN (hi, x + run);
        const float *cr = c + j + (lo - x);        /* col of input column lo */
        if (sx == 1) {
          float *o = orow + lo + base;
          for (gint64 i = 0; i < hi - lo; i++)
            o[i] += cr[i];
        } else {
          float *o = orow + lo * sx + base;
          for (gint64 i = 0; i < hi - lo; i++)
            o[i * sx] += cr[i];
        }
      }
      j += run;
      x = 0;
      if (++y == s->in[1]) {
        y = 0;
        z++;
      }
    }
  }
}

typedef struct {
  const DeconvState *s;
  const float *in, *packed;
  float *out, *scratch;
} DeconvJob;

static void
deconv_slice (gint begin, gint end, gint slice, gpointer data)
{
  const DeconvJob *j = data;
  const DeconvState *s = j->s;
  gint nr = s->arch->nr;
  float *bbuf = j->scratch + slice * (s->bbuf_floats + s->strip_floats + s->col_floats);
  float *strip = bbuf + s->bbuf_floats, *col = strip + s->strip_floats;
  for (gint t = begin; t < end; t++) {
    gint64 b = t % s->blocks, g = t / s->blocks % s->groups, n = t / (s->blocks * s->groups);
    gint64 c0 = b * s->cblk, nc = MIN (s->cblk, s->cout_g - c0);
    gint rows = (gint) (nc * s->kp);
    float *out = j->out + ((n * s->groups + g) * s->cout_g + c0) * s->out_pix;
    memset (out, 0, nc * s->out_pix * sizeof (float));
    const float *a = j->packed + (g * s->blocks + b) * s->packed_block;
    DeconvPanel cp = { s, j->in + (n * s->groups + g) * s->cin_g * s->in_pix, 0 };
    M2iGemmOut o = { col, nr };
    for (gint64 p0 = 0; p0 < s->in_pix; p0 += nr) {
      gint ncols = (gint) MIN (nr, s->in_pix - p0);
      cp.n0 = (gint) p0;
      if (ncols > M2I_GEMM_TAIL_MAX || !ir_gemm_tail_panel (s->arch, rows, (gint) s->cin_g, a,
              0, ncols, deconv_b, &cp, bbuf, &o))
        ir_gemm_column_panel (s->arch, rows, (gint) s->cin_g, a, s->arch->mr, 0, ncols,
            deconv_b, &cp, bbuf, strip, &o);
      col2im (s, col, nc, p0, ncols, nr, out);
    }
  }
}

static gboolean
deconv_execute (M2iOpContext *ctx, GError **error)
{
  const DeconvState *s = ctx->state;
  float *scratch = ctx->scratch;
  const float *packed = s->packed;
  if (!packed) {
    float *p = scratch + s->slices * (s->bbuf_floats + s->strip_floats + s->col_floats);
    deconv_pack (s, ctx->inputs[1].data, p);
    packed = p;
  }
  gint64 tasks = s->batch * s->groups * s->blocks;
  gint64 macs = tasks * s->cblk * s->kp * s->cin_g * s->in_pix;
  gint slices = MIN (ir_k_slices_for (ctx, macs), s->slices);
  DeconvJob j = { s, ctx->inputs[0].data, packed, ctx->outputs[0].data, scratch };
  ir_k_parallel_for ((gint) tasks, slices, 1, deconv_slice, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_convolution_backprop_data = {
  "ConvolutionBackpropData", "opset1", deconv_infer, deconv_execute, deconv_state_free,
};

const M2iOpKernel ir_kernel_group_convolution_backprop_data = {
  "GroupConvolutionBackpropData", "opset1", group_deconv_infer, deconv_execute,
  deconv_state_free,
};
