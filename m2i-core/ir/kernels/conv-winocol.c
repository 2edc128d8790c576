/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Winograd F(4, 3) along the kernel of a 3×1 (down the columns) or 1×3
 * (along the rows) convolution (see conv-winocol.h).
 *
 *   Bᵀ = | 4  0 -5  0  1  0 |   G = |  1/4     0     0  |   Aᵀ = | 1  1  1  1  1  0 |
 *        | 0 -4 -4  1  1  0 |       | -1/6  -1/6  -1/6  |        | 0  1 -1  2 -2  0 |
 *        | 0  4 -4 -1  1  0 |       | -1/6   1/6  -1/6  |        | 0  1  1  4  4  0 |
 *        | 0 -2 -1  2  1  0 |       |  1/24  1/12  1/6  |        | 0  1 -1  8 -8  1 |
 *        | 0  2 -1 -2  1  0 |       |  1/24 -1/12  1/6  |
 *        | 0  4  0 -5  0  1 |       |  0     0     1    |
 */
#include "conv-winocol.h"
#include "conv-winograd.h"
#include "kernels-private.h"

#include <base/m2i-align.h>
#include <string.h>

/* Floats of one phase row (1×3): a block's tiles, rounded to a cache
 * line; the segment of input a run reads (4n + 2 floats) takes four. */
#define PHASE_FLOATS(arch) (m2i_align_up ((gsize) (arch)->nr + M2I_GEMM_TAIL_MAX + 1, 16))

/* -1 until first read from M2I_CONV_WINOCOL, then 0 or 1. */
static gint enabled = -1;

gboolean
ir_winocol_enabled (void)
{
  return ir_k_switch_on (&enabled, "M2I_CONV_WINOCOL");
}

void
ir_winocol_set_enabled (gboolean on)
{
  ir_k_switch_set (&enabled, on);
}

gboolean
ir_winocol_applies (gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 dh, gint64 dw,
    gint64 groups, gint64 pt, gint64 pb, gint64 pl, gint64 pr, gint64 h, gint64 w, gint64 oh,
    gint64 ow, gint64 c_in, gint64 c_out)
{
  /* Below 32 input channels (1×3: 64) the 6 products' K is too short
   * for the micro-kernel to run near its peak and the transforms cost
   * more than the multiply-adds saved (bench-conv, one thread, Zen 5:
   * license-plate-recognition's 3×1 layers 32×22×92 0.047 → 0.044 ms,
   * 64×11×90 0.091 → 0.066; its 1×3 layers 64×11×90 0.092 → 0.085, but
   * 32×22×92 0.047 → 0.062, the phases split and joined again). */
  gboolean down = kh == 3 && kw == 1 && pl == 0 && pr == 0 && ow == w && oh >= 4 &&
      c_in >= 32;
  gboolean across = kh == 1 && kw == 3 && pt == 0 && pb == 0 && oh == h && ow >= 4 &&
      pl <= 2 && pr <= 2 && c_in >= 64;
  return ir_winocol_enabled () && (down || across) && sh == 1 && sw == 1 && dh == 1 &&
      dw == 1 && groups == 1 && c_out >= 16 && c_in * c_out <= G_MAXINT / 8 &&
      (oh + 3) * (ow + 3) <= G_MAXINT / 4;
}

/* U = G g for one filter (3 taps down the column), in double, rounded once. */
static void
transform_filter (const float *g, float u[6])
{
  double g0 = g[0], g1 = g[1], g2 = g[2];
  u[0] = (float) (g0 / 4);
  u[1] = (float) (-(g0 + g1 + g2) / 6);
  u[2] = (float) (-(g0 - g1 + g2) / 6);
  u[3] = (float) (g0 / 24 + g1 / 12 + g2 / 6);
  u[4] = (float) (g0 / 24 - g1 / 12 + g2 / 6);
  u[5] = (float) g2;
}

IrWinoCol *
ir_winocol_new (const M2iGemmArch *arch, const float *weights, gint64 c_out, gint64 c_in,
    gint64 h, gint64 w, gint64 pt, gint64 pl, gint64 oh, gint64 ow, gboolean across,
    gint slices)
{
  IrWinoCol *wc = g_new0 (IrWinoCol, 1);
  wc->arch = arch;
  wc->across = across;
  wc->c_in = c_in;
  wc->c_out = c_out;
  wc->h = h;
  wc->w = w;
  wc->pt = pt;
  wc->pl = pl;
  wc->oh = oh;
  wc->ow = ow;
  /* tiles: down the columns th × w (tile row, column), across the rows
   * h × tw (row, tile column) */
  wc->tw = across ? (ow + 3) / 4 : w;
  wc->th = across ? h : (oh + 3) / 4;
  wc->tiles = wc->th * wc->tw;
  /* tile blocks and output-channel blocks as conv-winograd.c's */
  ir_winograd_blocks (arch, wc->tiles, c_out, slices, &wc->tail, &wc->blocks, &wc->block_start,
      &wc->mb);
  wc->m_blocks = (c_out + wc->mb - 1) / wc->mb;

  wc->u_stride = ir_gemm_packed_a_size (arch, (gint) c_out, (gint) c_in);
  wc->u = g_new (float, 6 * wc->u_stride);
  gsize n = (gsize) c_out * c_in;
  float *plain = g_new (float, 6 * n);
  for (gsize f = 0; f < n; f++) {
    float u[6];
    transform_filter (weights + 3 * f, u);
    for (gint xi = 0; xi < 6; xi++)
      plain[xi * n + f] = u[xi];
  }
  ir_winograd_pack_u (arch, plain, 6, c_out, c_in, wc->u, wc->u_stride);
  g_free (plain);
  wc->v_off = ir_winograd_v_layout (arch, wc->tail, c_in, wc->mb, &wc->vw, &wc->v_stride,
      &wc->m_stride);
  wc->slice_floats = 6 * wc->v_stride + 6 * wc->m_stride +
      m2i_align_up (ir_gemm_strip_size (arch), 16) + 4 * m2i_align_up (w, 16) +
      PHASE_FLOATS (arch) * 14;
  return wc;
}

void
ir_winocol_free (IrWinoCol *wc)
{
  if (!wc)
    return;
  g_free (wc->u);
  g_free (wc->block_start);
  g_free (wc->v_off);
  g_free (wc);
}

gsize
ir_winocol_scratch_bytes (const IrWinoCol *wc, gint slices)
{
  return MAX (slices, 1) * wc->slice_floats * sizeof (float);
}

/* ---- The transforms ---------------------------------------------------- */


/* d_k[t] = seg[4t + k] for t < n, k < 6: the six input columns of
 * tile t. */
M2I_K_INLINE void
deinterleave_body (gint64 n, const float *restrict seg, float *restrict d0,
    float *restrict d1, float *restrict d2, float *restrict d3, float *restrict d4,
    float *restrict d5)
{
  for (gint64 t = 0; t < n; t++) {
    d0[t] = seg[4 * t];
    d1[t] = seg[4 * t + 1];
    d2[t] = seg[4 * t + 2];
    d3[t] = seg[4 * t + 3];
    d4[t] = seg[4 * t + 4];
    d5[t] = seg[4 * t + 5];
  }
}
M2I_K_SIMD_CLONES (deinterleave, (gint64 n, const float *restrict seg, float *restrict d0,
        float *restrict d1, float *restrict d2, float *restrict d3, float *restrict d4,
        float *restrict d5), (n, seg, d0, d1, d2, d3, d4, d5))

/* dst[4t + j] = q_j[t] for t < n. */
M2I_K_INLINE void
interleave_body (gint64 n, const float *restrict q0, const float *restrict q1,
    const float *restrict q2, const float *restrict q3, float *restrict dst)
{
  for (gint64 t = 0; t < n; t++) {
    dst[4 * t] = q0[t];
    dst[4 * t + 1] = q1[t];
    dst[4 * t + 2] = q2[t];
    dst[4 * t + 3] = q3[t];
  }
}
M2I_K_SIMD_CLONES (interleave, (gint64 n, const float *restrict q0, const float *restrict q1,
        const float *restrict q2, const float *restrict q3, float *restrict dst),
    (n, q0, q1, q2, q3, dst))

/* V = Bᵀ d for @n tiles side by side: d0 .. d5 the six input rows,
 * v0 .. v5 the six rows of V. */
#define IN_PARAMS (gint64 n, const float *restrict d0, const float *restrict d1, \
    const float *restrict d2, const float *restrict d3, const float *restrict d4, \
    const float *restrict d5, float *restrict v0, float *restrict v1, float *restrict v2, \
    float *restrict v3, float *restrict v4, float *restrict v5)
#define IN_ARGS (n, d0, d1, d2, d3, d4, d5, v0, v1, v2, v3, v4, v5)
M2I_K_INLINE void
input_run_body IN_PARAMS
{
  for (gint64 i = 0; i < n; i++) {
    float a = d4[i] + d3[i], b = d1[i] + d2[i];
    float c = d4[i] - d3[i], e = d1[i] - d2[i];
    float f = d4[i] - d2[i], g = d3[i] - d1[i];
    v0[i] = (4.0f * d0[i] - 5.0f * d2[i]) + d4[i];
    v1[i] = a - 4.0f * b;
    v2[i] = c + 4.0f * e;
    v3[i] = f + 2.0f * g;
    v4[i] = f - 2.0f * g;
    v5[i] = (4.0f * d1[i] - 5.0f * d3[i]) + d5[i];
  }
}
M2I_K_SIMD_CLONES (input_run, IN_PARAMS, IN_ARGS)

/* y = Aᵀ m (+ bias with @has_bias, then max (·, 0) with @relu: the float
 * operations of the Add and ReLU layers) for @n tiles side by side: m0 ..
 * m5 the six rows of M, y0 .. y3 the output rows (of a last tile row past
 * the output, spare rows). */
#define OUT_PARAMS (gint64 n, const float *restrict m0, const float *restrict m1, \
    const float *restrict m2, const float *restrict m3, const float *restrict m4, \
    const float *restrict m5, float *restrict y0, float *restrict y1, float *restrict y2, \
    float *restrict y3, gboolean has_bias, float bias, gboolean relu)
#define OUT_ARGS (n, m0, m1, m2, m3, m4, m5, y0, y1, y2, y3, has_bias, bias, relu)
/* loops with the epilogue's branches taken out, or none is vectorized */
#define OUT_LOOP(FINISH) \
  for (gint64 i = 0; i < n; i++) { \
    float a = m1[i] + m2[i], b = m1[i] - m2[i]; \
    float c = m3[i] + m4[i], e = m3[i] - m4[i]; \
    y0[i] = FINISH ((m0[i] + a) + c); \
    y1[i] = FINISH (b + 2.0f * e); \
    y2[i] = FINISH (a + 4.0f * c); \
    y3[i] = FINISH ((b + 8.0f * e) + m5[i]); \
  }
#define BIAS_RELU(x) ((x) + bias > 0.0f ? (x) + bias : 0.0f)
#define BIAS(x) ((x) + bias)
#define RELU(x) ((x) > 0.0f ? (x) : 0.0f)
#define AS_IS(x) (x)
M2I_K_INLINE void
output_run_body OUT_PARAMS
{
  if (has_bias && relu) {
    OUT_LOOP (BIAS_RELU)
  } else if (has_bias) {
    OUT_LOOP (BIAS)
  } else if (relu) {
    OUT_LOOP (RELU)
  } else {
    OUT_LOOP (AS_IS)
  }
}
M2I_K_SIMD_CLONES (output_run, OUT_PARAMS, OUT_ARGS)

/* V of tile block @b: every input channel's runs of tiles along tile
 * rows; rows above and below the input read @zero. Columns past the
 * block up to a whole vector are zeroed (the GEMM reads whole vectors). */
/* Across the rows: the six input columns of the @n tiles from tile column
 * a on of row @row (input columns 4a − pl .. 4(a + n) + 1 − pl, zero
 * outside the row), by phase: d_k[i] = column 4(a + i) + k − pl at
 * d + k·pf + i, through @seg (4n + 2 floats). */
static void
phases_across (const IrWinoCol *wc, const float *row, gint64 a, gint64 n, float *d, float *seg)
{
  gint64 x0 = 4 * a - wc->pl, len = 4 * n + 2;
  gint64 lo = CLAMP (-x0, 0, len), hi = CLAMP (wc->w - x0, lo, len);
  const float *src = row + x0;
  if (lo > 0 || hi < len) {
    /* a run reaching past the row's ends: through a copy with the pads */
    memset (seg, 0, lo * sizeof (float));
    memcpy (seg + lo, row + x0 + lo, (hi - lo) * sizeof (float));
    memset (seg + hi, 0, (len - hi) * sizeof (float));
    src = seg;
  }
  gsize pf = PHASE_FLOATS (wc->arch);
  deinterleave (n, src, d, d + pf, d + 2 * pf, d + 3 * pf, d + 4 * pf, d + 5 * pf);
}

static void
input_block (const IrWinoCol *wc, const float *in, gint64 b, float *v, const float *zero,
    float *seg, float *ph)
{
  gint64 q0 = wc->block_start[b], nt = wc->block_start[b + 1] - q0;
  gint64 zero_to = m2i_align_up (nt, wc->arch->step);
  gsize xs = wc->v_stride, chan = (gsize) wc->h * wc->w;
  for (gint64 ci = 0; ci < wc->c_in; ci++) {
    const float *plane = in + ci * chan;
    float *vc = v + ci * wc->vw;
    /* across the rows: the block's tiles by phase, then one transform */
    for (gint64 q = q0; q < q0 + nt && wc->across;) {
      gint64 y = q / wc->tw, a = q % wc->tw, n = MIN (wc->tw - a, q0 + nt - q);
      phases_across (wc, plane + y * wc->w, a, n, ph + (q - q0), seg);
      q += n;
    }
    if (wc->across) {
      gsize pf = PHASE_FLOATS (wc->arch);
      input_run (nt, ph, ph + pf, ph + 2 * pf, ph + 3 * pf, ph + 4 * pf, ph + 5 * pf, vc, vc + xs,
          vc + 2 * xs, vc + 3 * xs, vc + 4 * xs, vc + 5 * xs);
    }
    for (gint64 q = q0; q < q0 + nt && !wc->across;) {
      gint64 ty = q / wc->w, x = q % wc->w, n = MIN (wc->w - x, q0 + nt - q);
      const float *d[6];
      for (gint k = 0; k < 6; k++) {
        gint64 iy = 4 * ty - wc->pt + k;
        d[k] = iy >= 0 && iy < wc->h ? plane + iy * wc->w + x : zero;
      }
      float *vq = vc + (q - q0);
      input_run (n, d[0], d[1], d[2], d[3], d[4], d[5], vq, vq + xs, vq + 2 * xs,
          vq + 3 * xs, vq + 4 * xs, vq + 5 * xs);
      q += n;
    }
    if (nt < zero_to)
      for (gint xi = 0; xi < 6; xi++)
        memset (vc + xi * xs + nt, 0, (zero_to - nt) * sizeof (float));
  }
}

/* Y of tile block @b for output channels [r0, r0 + rows) from m
 * ([ξ][mb][vw]); rows past the output go to the three rows at @spare
 * (w floats apart). */
static void
output_block (const IrWinoCol *wc, const float *m, gint64 b, gint64 r0, gint64 rows,
    float *out, const M2iKFusion *f, float *spare, float *ph)
{
  gint64 q0 = wc->block_start[b], nt = wc->block_start[b + 1] - q0;
  gsize xs = wc->m_stride, ohw = (gsize) wc->oh * wc->ow, pf = PHASE_FLOATS (wc->arch);
  for (gint64 r = 0; r < rows; r++) {
    const float *mr = m + r * wc->vw;
    float *plane = out + (r0 + r) * ohw;
    float bv = f->bias ? f->bias[r0 + r] : 0.0f;
    /* across the rows: the block's four outputs by phase, then
     * interleaved into the rows; a last tile past a row's end in part */
    if (wc->across)
      output_run (nt, mr, mr + xs, mr + 2 * xs, mr + 3 * xs, mr + 4 * xs, mr + 5 * xs, ph,
          ph + pf, ph + 2 * pf, ph + 3 * pf, f->bias != NULL, bv, f->relu);
    for (gint64 q = q0; q < q0 + nt && wc->across;) {
      gint64 y = q / wc->tw, a = q % wc->tw, n = MIN (wc->tw - a, q0 + nt - q), i = q - q0;
      float *o = plane + y * wc->ow + 4 * a;
      gint64 whole = MIN (n, (wc->ow - 4 * a) / 4);
      interleave (whole, ph + i, ph + pf + i, ph + 2 * pf + i, ph + 3 * pf + i, o);
      for (gint64 j = 0; whole < n && 4 * (a + whole) + j < wc->ow; j++)
        o[4 * whole + j] = ph[j * pf + i + whole];
      ir_k_fusion_swish (f, o, MIN (4 * n, wc->ow - 4 * a));
      q += n;
    }
    for (gint64 q = q0; q < q0 + nt && !wc->across;) {
      gint64 ty = q / wc->w, x = q % wc->w, n = MIN (wc->w - x, q0 + nt - q);
      gint kept = (gint) MIN (4, wc->oh - 4 * ty);
      float *y[4];
      for (gint j = 0; j < 4; j++)
        y[j] = j < kept ? plane + (4 * ty + j) * wc->w + x : spare + (j - 1) * wc->w;
      const float *mq = mr + (q - q0);
      output_run (n, mq, mq + xs, mq + 2 * xs, mq + 3 * xs, mq + 4 * xs, mq + 5 * xs, y[0],
          y[1], y[2], y[3], f->bias != NULL, bv, f->relu);
      if (f->swish)
        for (gint j = 0; j < kept; j++)
          ir_k_fusion_swish (f, y[j], n);
      q += n;
    }
  }
}

typedef struct {
  const IrWinoCol *wc;
  const float *in;
  const M2iKFusion *fused;
  float *out;
  float *scratch;
} WcJob;


static void
block_slice (gint begin, gint end, gint slice, gpointer data)
{
  const WcJob *j = data;
  const IrWinoCol *wc = j->wc;
  float *v = ir_k_slice_scratch (j->scratch + slice * wc->slice_floats,
      wc->slice_floats * sizeof (float));
  float *m = v + 6 * wc->v_stride;
  float *strip = m + 6 * wc->m_stride;
  float *zero = strip + m2i_align_up (ir_gemm_strip_size (wc->arch), 16);
  float *spare = zero + m2i_align_up (wc->w, 16);
  /* across the rows: an input segment, its six phases, the four output
   * phases */
  float *seg = spare + 3 * m2i_align_up (wc->w, 16), *d = seg + 4 * PHASE_FLOATS (wc->arch);
  float *ph = d + 6 * PHASE_FLOATS (wc->arch);
  memset (zero, 0, wc->w * sizeof (float));
  gint64 last_b = -1;
  for (gint t = begin; t < end; t++) {
    /* tile blocks outermost: a slice's consecutive tasks share the
     * block's V */
    gint64 b = t / wc->m_blocks, r0 = t % wc->m_blocks * wc->mb;
    gint64 rows = MIN (wc->mb, wc->c_out - r0);
    gint ncols = (gint) (wc->block_start[b + 1] - wc->block_start[b]);
    gint tail = b == wc->blocks - 1 ? (gint) wc->tail : 0;
    if (b != last_b) {
      input_block (wc, j->in, b, v, zero, seg, d);
      last_b = b;
    }
    ir_winograd_products (wc->arch, 6, wc->u, wc->u_stride, r0, rows, wc->c_in, v,
        wc->v_stride, wc->v_off, wc->vw, m, wc->m_stride, ncols, tail, strip);
    output_block (wc, m, b, r0, rows, j->out, j->fused, spare, ph);
  }
}

void
ir_winocol_run (const IrWinoCol *wc, const float *in, float *out, const M2iKFusion *fused,
    gint slices, float *scratch)
{
  WcJob j = { wc, in, fused, out, scratch };
  ir_k_parallel_for ((gint) (wc->blocks * wc->m_blocks), slices, 1, block_slice, &j);
}
