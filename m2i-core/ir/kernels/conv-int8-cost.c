/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a layer costs on integers and in f32 (conv-int8.h): the estimates
 * the low-precision pass (ir-lowp.c) weighs per layer, with the
 * FakeQuantize passes each choice keeps or removes.
 *
 * Each estimate is a sum of counted work times a rate: products (padded
 * as the kernel pads them: 4 input channels, 8 output channels, the
 * phase grid's columns), input values quantized or copied, output values
 * by what is written (f32, codes, a FakeQuantize's values), plus a fixed
 * cost per layer. The rates are per kernel level and were fitted by
 * least squares to the per-layer medians of the INT8 model set
 * (bench-ir-layers, one thread, both modes: docs/int8.md, "Which layers
 * the pass takes"), on an AMD EPYC Zen 5; they are ratios that matter,
 * not the absolute times.
 */
#include "conv-int8.h"

/* ns per unit of each counted work: f32 layers and passes (by the GEMM
 * family's level), integer layers (by the int8 family's). */
typedef struct {
  /* f32 Convolution: products by kernel, values read and written by GEMM
   * and by Winograd layers (their transforms), weights, fixed */
  double f_gemm, f_wino, f_dw, f_in, f_out, f_wino_in, f_wino_out, f_w, f_fixed;
  double f_big;                        /* per byte in and out beyond 1 MiB each */
  gint f_mr;                           /* the f32 GEMM tile's rows: output channels padded to */
  /* a FakeQuantize pass, an activation left as its own pass: per value,
   * fixed */
  double fq, fq_fixed, act, act_fixed;
} F32Rates;

typedef struct {
  /* GEMM layer: padded products, quad bytes written from f32 values /
   * from codes, output values by kind; depthwise layer: padded products,
   * plane bytes from f32 values / from codes; weights, fixed */
  double i_gemm, i_quant, i_copy, i_out_f32, i_out_codes, i_out_values;
  double i_dw, i_dw_quant, i_dw_copy, i_w, i_fixed;
} I8Rates;

/* Fitted 2026-11-26 (least squares weighted by 1/sqrt(time), the fixed
 * costs pinned to the smallest layers' times) to the per-layer medians of
 * 677 layers of ten INT8 models run both ways (bench-ir-layers, one
 * thread, Zen 5). AVX-512 f32 kernels with the VNNI tile: 80 % of the
 * layers within -30 % .. +20 % (f32) and -45 % .. +20 % (integers) of the
 * fit; AVX2 f32 kernels with the AVX2 tile: -35 % .. +40 % and -45 % ..
 * +25 %. */
static const F32Rates f32_avx512 = {
  .f_gemm = 0.00836, .f_wino = 0.00384, .f_dw = 0.0186, .f_in = 0.0, .f_out = 0.00586,
  .f_wino_in = 0.515, .f_wino_out = 0.227, .f_w = 0.0945, .f_fixed = 2500, .f_big = 0.0235,
  .f_mr = 8, .fq = 0.0994, .fq_fixed = 967, .act = 0.0394, .act_fixed = 204,
};

static const F32Rates f32_avx2 = {
  .f_gemm = 0.0207, .f_wino = 0.00811, .f_dw = 0.0274, .f_in = 0.0, .f_out = 0.0,
  .f_wino_in = 1.186, .f_wino_out = 1.472, .f_w = 0.120, .f_fixed = 2500, .f_big = 0.0373,
  .f_mr = 4, .fq = 0.188, .fq_fixed = 1115, .act = 0.0425, .act_fixed = 487,
};

static const I8Rates i8_vnni = {
  .i_gemm = 0.00207, .i_quant = 0.261, .i_copy = 0.102, .i_out_f32 = 0.130,
  .i_out_codes = 0.174, .i_out_values = 0.343,
  .i_dw = 0.0353, .i_dw_quant = 0.187, .i_dw_copy = 0.0193, .i_w = 0.0150, .i_fixed = 2000,
};

static const I8Rates i8_avx2 = {
  .i_gemm = 0.0138, .i_quant = 0.355, .i_copy = 0.110, .i_out_f32 = 0.0328,
  .i_out_codes = 0.233, .i_out_values = 0.504,
  .i_dw = 0.0624, .i_dw_quant = 0.150, .i_dw_copy = 0.0, .i_w = 0.0, .i_fixed = 2000,
};

/* (AVX-512 CPUs without VNNI: AVX-512 f32 against the AVX2 tile.) */
static const F32Rates *
f32_rates (void)
{
  return ir_k_level (M2I_KERNELS_GEMM) & M2I_CPU_AVX512F ? &f32_avx512 : &f32_avx2;
}

static const I8Rates *
i8_rates (void)
{
  return ir_k_i8_micro_vnni (ir_k_level (M2I_KERNELS_INT8)) ? &i8_vnni : &i8_avx2;
}

static gboolean
depthwise (const M2iKConvGeom *g)
{
  return g->groups > 1 && g->c_in == g->groups && g->c_out == g->groups;
}

void
ir_k_conv_int8_work (const M2iKConvGeom *g, M2iKI8Work *w)
{
  gint64 cin_g = g->c_in / g->groups, cout_g = g->c_out / g->groups;
  w->macs = (double) g->batch * g->c_out * g->oh * g->ow * cin_g * g->kh * g->kw;
  w->in = (double) g->batch * g->c_in * g->h * g->w;
  w->out = (double) g->batch * g->c_out * g->oh * g->ow;
  w->weights = (double) g->c_out * cin_g * g->kh * g->kw;
  if (depthwise (g)) {
    w->padded_macs = (double) g->batch * g->c_out * g->oh * g->ow * g->kh * ((g->kw + 3) / 4 * 4);
    w->quad_bytes = (double) g->batch * g->c_in * (g->h + g->pt + g->pb) *
        (g->w + g->pl + g->pr);
    return;
  }
  /* the phase grid: hq × wq pixels per phase, as many phases as taps read */
  gint64 hp = g->h + g->pt + g->pb, wp = g->w + g->pl + g->pr;
  gint64 hq = (hp + g->sh - 1) / g->sh, wq = (wp + g->sw - 1) / g->sw;
  gint64 phases = MIN (g->sh, g->kh) * MIN (g->sw, g->kw);
  gint64 cq = (cin_g + 3) / 4;
  /* the tile's columns: panels of 48, or with the narrow tile (a grid of
   * up to 16) the power of two it computes, 16 channels a step */
  gint64 grid = g->oh * wq, cols = (grid + M2I_K_I8_NR - 1) / M2I_K_I8_NR * M2I_K_I8_NR;
  gint64 rows = M2I_K_I8_MR;
  if (grid <= 16 && ir_k_i8_narrow_vnni (ir_k_level (M2I_KERNELS_INT8))) {
    for (cols = 1; cols < grid; cols *= 2)
      ;
    rows = 2 * M2I_K_I8_MR;
  }
  w->padded_macs = (double) g->batch * g->groups * ((cout_g + rows - 1) / rows) * rows *
      cols * cq * 4 * g->kh * g->kw;
  w->quad_bytes = (double) g->batch * g->groups * cq * 4 * phases * hq * wq;
}

double
ir_k_conv_int8_cost (const M2iKConvGeom *g, gboolean codes_in, M2iKI8OutKind out)
{
  const I8Rates *r = i8_rates ();
  M2iKI8Work w;
  ir_k_conv_int8_work (g, &w);
  double t = w.weights * r->i_w + r->i_fixed;
  if (depthwise (g))
    return t + w.padded_macs * r->i_dw + w.quad_bytes * (codes_in ? r->i_dw_copy : r->i_dw_quant);
  double out_rate = out == M2I_K_I8_OUT_CODES ? r->i_out_codes :
      out == M2I_K_I8_OUT_VALUES ? r->i_out_values : r->i_out_f32;
  return t + w.padded_macs * r->i_gemm + w.quad_bytes * (codes_in ? r->i_copy : r->i_quant) +
      w.out * out_rate;
}

double
ir_k_conv_f32_cost (const M2iKConvGeom *g, M2iKF32ConvMode mode)
{
  const F32Rates *r = f32_rates ();
  M2iKI8Work w;
  ir_k_conv_int8_work (g, &w);
  double t = w.weights * r->f_w + r->f_fixed + r->f_big * (MAX (4 * w.in - (1 << 20), 0) +
      MAX (4 * w.out - (1 << 20), 0));
  if (mode == M2I_K_F32_CONV_DIRECT)
    return t + w.macs * r->f_dw;
  /* the GEMM's products, output channels padded to its tile's rows (a
   * layer of 1 or 3 output channels computes 4 or 8) */
  gint64 cout_g = g->c_out / g->groups;
  double macs = w.macs / cout_g * ((cout_g + r->f_mr - 1) / r->f_mr * r->f_mr);
  if (mode == M2I_K_F32_CONV_WINOGRAD)
    return t + macs * r->f_wino + w.in * r->f_wino_in + w.out * r->f_wino_out;
  return t + macs * r->f_gemm + w.in * r->f_in + w.out * r->f_out;
}

double
ir_k_fq_pass_cost (gint64 numel)
{
  return numel * f32_rates ()->fq + f32_rates ()->fq_fixed;
}

double
ir_k_act_pass_cost (gint64 numel)
{
  return numel * f32_rates ()->act + f32_rates ()->act_fixed;
}
