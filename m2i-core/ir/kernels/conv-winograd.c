/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Winograd F(2×2, 3×3) convolution (see conv-winograd.h).
 *
 *   Bᵀ = | 1  0 -1  0 |    G = | 1    0    0   |    Aᵀ = | 1  1  1  0 |
 *        | 0  1  1  0 |        | 1/2  1/2  1/2 |         | 0  1 -1 -1 |
 *        | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
 *        | 0  1  0 -1 |        | 0    0    1   |
 */
#include "conv-winograd.h"
#include "kernels-private.h"

#include <base/m2i-align.h>
#include <string.h>

/* Output channels per GEMM block: the block's 16 result matrices (16 ×
 * 64 × 48 floats, 192 KiB) stay in L2 between the products and the
 * output transform. */
#define MAX_MB 64

/* A last few tiles past whole vectors (49 tiles: 48 + 1) are multiplied on
 * their own, output channels along the vector (ir_gemm_tail_panel(), with
 * AVX-512): a vector of columns for one tile would be 15/16 zeros. */
#define TAIL_MAX M2I_GEMM_TAIL_MAX

/* -1 until first read from M2I_CONV_WINOGRAD, then 0 or 1. */
static gint enabled = -1;

/* Fewer tiles than this run as the direct product: the 16 products are
 * then nearly matrix-vector products, streaming 16/9 times the weights'
 * bytes for little arithmetic. Measured with bench-conv on one thread
 * (AMD EPYC, Zen 5): 1 tile (256→512, 2×2 output) 0.32 ms against 0.18
 * direct, 4 tiles 0.095 / 0.076 and 0.060 / 0.023, 9 tiles 0.032 / 0.029,
 * 16 tiles 0.033 / 0.047 and 0.036 / 0.038, 25 tiles 0.093 / 0.134. */
static gint min_tiles = 16;

gboolean
ir_winograd_enabled (void)
{
  return ir_k_switch_on (&enabled, "M2I_CONV_WINOGRAD");
}

void
ir_winograd_set_enabled (gboolean on)
{
  ir_k_switch_set (&enabled, on);
}

void
ir_winograd_set_level (M2iWinograd *wg, M2iCpuFlags level)
{
  wg->avx512 = (level & m2i_cpu_flags () & M2I_CPU_AVX512F) != 0;
}

gint
ir_winograd_set_min_tiles (gint tiles)
{
  return g_atomic_int_exchange (&min_tiles, tiles);
}

gboolean
ir_winograd_applies (gint64 kh, gint64 kw, gint64 sh, gint64 sw, gint64 dh, gint64 dw,
    gint64 groups, gint64 c_in, gint64 c_out, gint64 oh, gint64 ow)
{
  /* Below 8 input channels the 16 products are too short (K = C_in) to
   * pay for the transforms; the direct product's K is 9·C_in. */
  return ir_winograd_enabled () && kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 &&
      dw == 1 && groups == 1 && c_in >= 8 && c_out >= 8 && oh >= 2 && ow >= 2 &&
      (oh + 1) / 2 * ((ow + 1) / 2) >= g_atomic_int_get (&min_tiles) &&
      c_in * c_out <= G_MAXINT / 32 && (oh + 3) * (ow + 3) <= G_MAXINT / 4 &&
      c_in * (oh + 3) * (ow + 3) <= G_MAXINT / 4;
}

/* U = G g Gᵀ for one 3×3 filter g, in double (then rounded once). */
static void
transform_filter (const float *g, double u[16])
{
  double t[4][3];
  for (gint c = 0; c < 3; c++) {
    double a = g[c], b = g[3 + c], d = g[6 + c];
    t[0][c] = a;
    t[1][c] = 0.5 * (a + b + d);
    t[2][c] = 0.5 * (a - b + d);
    t[3][c] = d;
  }
  for (gint r = 0; r < 4; r++) {
    double a = t[r][0], b = t[r][1], d = t[r][2];
    u[4 * r + 0] = a;
    u[4 * r + 1] = 0.5 * (a + b + d);
    u[4 * r + 2] = 0.5 * (a - b + d);
    u[4 * r + 3] = d;
  }
}

/* Floats of a slice's zero-bordered copy of the input. */
static gsize
plane_floats (const M2iWinograd *wg)
{
  return m2i_align_up (wg->c_in * wg->hp * wg->wp, 16);
}

/* Task @t's tile block and output-channel block: tile blocks outermost
 * (a slice's consecutive tasks share the block's transformed input), or
 * with @channel_major output-channel blocks outermost. */
static void
winograd_task (const M2iWinograd *wg, gboolean channel_major, gint64 t, gint64 *b, gint64 *r0)
{
  if (channel_major) {
    *b = t % wg->blocks;
    *r0 = t / wg->blocks * wg->mb;
  } else {
    *b = t / wg->m_blocks;
    *r0 = t % wg->m_blocks * wg->mb;
  }
}

/* Work of the busiest of @slices slices taking the tasks in that order
 * (ir_k_parallel_for's even ranges of tasks), in multiply-adds of the
 * 16 products per input channel plus the input transforms, 128 per tile
 * and channel (measured: a 64→64 layer on 18×18, 81 tiles, took 111k
 * cycles a slice with 32 rows, 75k and 119k with 64 rows and 32 and 49
 * tiles: its transforms, a few cycles per tile and channel, were a
 * seventh of the work). */
static gint64
winograd_slice_cost (const M2iWinograd *wg, gint slices, gboolean channel_major)
{
  gint64 n = wg->blocks * wg->m_blocks, worst = 0;
  for (gint s = 0; s < slices; s++) {
    gint64 cost = 0, last_b = -1;
    for (gint64 t = n * s / slices; t < n * (s + 1) / slices; t++) {
      gint64 b, r0;
      winograd_task (wg, channel_major, t, &b, &r0);
      gint64 nt = wg->block_start[b + 1] - wg->block_start[b];
      cost += 16 * MIN (wg->mb, wg->c_out - r0) * nt + (b != last_b ? 128 * nt : 0);
      last_b = b;
    }
    worst = MAX (worst, cost);
  }
  return worst;
}

gint64
ir_winograd_blocks (const M2iGemmArch *arch, gint64 tiles, gint64 c_out, gint slices,
    gint64 *tail, gint64 *blocks, gint64 **block_start, gint64 *mb)
{
  /* Tile blocks of whole vectors, at most a column panel each, shared out
   * evenly (the narrow kernels are the slow ones); up to TAIL_MAX tiles
   * past the last whole vector join the last block as its tail. */
  gint64 full = tiles / arch->step, rem = tiles % arch->step;
  *tail = full > 0 && rem <= TAIL_MAX && arch->tail ? rem : 0;
  gint64 vectors = full + (rem > *tail ? 1 : 0), per = arch->nr / arch->step;
  *blocks = (vectors + per - 1) / per;
  *block_start = g_new (gint64, *blocks + 1);
  for (gint64 b = 0; b < *blocks; b++)
    (*block_start)[b] = MIN (tiles, vectors * b / *blocks * arch->step);
  (*block_start)[*blocks] = tiles;
  /* Output-channel blocks of at most MAX_MB rows; with few tasks, as many
   * as make the tasks share out evenly over the slices (a 14×14 output is
   * one tile block: 192 channels as 4 blocks of 48 on two threads, not
   * 3 of 64), each task transforming its tile block's input again. */
  gint64 mr = arch->mr, panels = (c_out + mr - 1) / mr;
  gint64 m_blocks = (panels + MAX_MB / mr - 1) / (MAX_MB / mr);
  if (slices > 1 && *blocks * m_blocks < 16 * slices)
    while ((*blocks * m_blocks) % slices && m_blocks < panels)
      m_blocks++;
  *mb = (panels + m_blocks - 1) / m_blocks * mr;
  return m_blocks;
}

M2iWinograd *
ir_winograd_new (const M2iGemmArch *arch, const float *weights, gint64 c_out, gint64 c_in,
    gint64 h, gint64 w, gint64 pt, gint64 pl, gint64 oh, gint64 ow, gint slices)
{
  M2iWinograd *wg = g_new0 (M2iWinograd, 1);
  wg->arch = arch;
  ir_winograd_set_level (wg, ir_k_level (M2I_KERNELS_WINOGRAD));
  wg->c_in = c_in;
  wg->c_out = c_out;
  wg->h = h;
  wg->w = w;
  wg->pt = pt;
  wg->pl = pl;
  wg->oh = oh;
  wg->ow = ow;
  wg->th = (oh + 1) / 2;
  wg->tw = (ow + 1) / 2;
  wg->tiles = wg->th * wg->tw;
  /* Tile (ty, tx) reads rows 2·ty .. 2·ty + 3 of the bordered copy; its
   * size also covers the input and its pads (oh = h + pt + pb - 2). */
  wg->hp = 2 * wg->th + 2;
  wg->wp = 2 * wg->tw + 2;
  gint64 m_blocks = ir_winograd_blocks (arch, wg->tiles, c_out, slices, &wg->tail, &wg->blocks,
      &wg->block_start, &wg->mb);
  wg->m_blocks = (c_out + wg->mb - 1) / wg->mb;
  gint64 mr = arch->mr, panels = (c_out + mr - 1) / mr;
  /* Tile blocks of unequal size (an 18×18 output: 81 tiles as 32 and 49)
   * do not share out evenly as whole tasks: two slices took 32 and 49
   * tiles of every channel, the second 1.6 times as long. Output-channel
   * blocks outermost instead, as many as slices, give each slice every
   * tile of its channels (each slice then transforms the whole input,
   * and reads only its channels' weights), where that evens the
   * slices' work out. */
  if (slices > 1) {
    gint64 tile_major = winograd_slice_cost (wg, slices, FALSE);
    gint64 mb = wg->mb, m_blocks_was = wg->m_blocks;
    gint64 mc = MIN ((m_blocks + slices - 1) / slices * slices, panels);
    wg->mb = (panels + mc - 1) / mc * mr;
    wg->m_blocks = (c_out + wg->mb - 1) / wg->mb;
    if (winograd_slice_cost (wg, slices, TRUE) < tile_major) {
      wg->channel_major = TRUE;
    } else {
      wg->mb = mb;
      wg->m_blocks = m_blocks_was;
    }
  }
  wg->u_stride = ir_gemm_packed_a_size (arch, (gint) c_out, (gint) c_in);
  wg->u = g_new (float, 16 * wg->u_stride);

  gsize n = (gsize) c_out * c_in;
  float *plain = g_new (float, 16 * n);
  for (gsize f = 0; f < n; f++) {
    double u[16];
    transform_filter (weights + 9 * f, u);
    for (gint xi = 0; xi < 16; xi++)
      plain[xi * n + f] = (float) u[xi];
  }
  ir_winograd_pack_u (arch, plain, 16, c_out, c_in, wg->u, wg->u_stride);
  g_free (plain);
  wg->v_off = ir_winograd_v_layout (arch, wg->tail, c_in, wg->mb, &wg->vw, &wg->v_stride,
      &wg->m_stride);
  wg->slice_floats = plane_floats (wg) + 16 * wg->v_stride + 16 * wg->m_stride +
      m2i_align_up (ir_gemm_strip_size (arch), 16) + m2i_align_up (wg->wp, 16);
  return wg;
}

void
ir_winograd_free (M2iWinograd *wg)
{
  if (!wg)
    return;
  g_free (wg->u);
  g_free (wg->block_start);
  g_free (wg->v_off);
  g_free (wg);
}

gsize
ir_winograd_scratch_bytes (const M2iWinograd *wg, gint slices)
{
  return MAX (slices, 1) * wg->slice_floats * sizeof (float);
}

/* ---- The transforms ---------------------------------------------------- */

/* V for @n tiles along a row: tile t reads the 4×4 block at p + 2·t (rows
 * wp apart) and its 16 values go to v[ξ·xs + t]. The reference form; the
 * AVX-512 one below does the same operations on 16 tiles at a time. */
static void
input_run_c (const float *p, gint64 wp, gint n, float *v, gsize xs)
{
  for (gint t = 0; t < n; t++) {
    const float *d = p + 2 * t;
    float e[4][4];
    for (gint i = 0; i < 4; i++) {
      const float *r = d + i * wp;
      e[i][0] = r[0] - r[2];
      e[i][1] = r[1] + r[2];
      e[i][2] = r[2] - r[1];
      e[i][3] = r[1] - r[3];
    }
    for (gint c = 0; c < 4; c++) {
      v[(0 + c) * xs + t] = e[0][c] - e[2][c];
      v[(4 + c) * xs + t] = e[1][c] + e[2][c];
      v[(8 + c) * xs + t] = e[2][c] - e[1][c];
      v[(12 + c) * xs + t] = e[1][c] - e[3][c];
    }
  }
}

/* Y for @n tiles along a row from m[ξ·xs + t]: pixels (0, 2t), (0, 2t+1)
 * to o0, (1, ·) to o1, each + bias (when @has_bias) then max (·, 0) (when
 * @relu) — the fused Add and ReLU, in their order. */
static void
output_run_c (const float *m, gsize xs, gint n, float *o0, float *o1, gboolean has_bias,
    float bias, gboolean relu)
{
  for (gint t = 0; t < n; t++) {
    float s[2][4], y[2][2];
    for (gint c = 0; c < 4; c++) {
      float m0 = m[(0 + c) * xs + t], m1 = m[(4 + c) * xs + t];
      float m2 = m[(8 + c) * xs + t], m3 = m[(12 + c) * xs + t];
      s[0][c] = m0 + m1 + m2;
      s[1][c] = m1 - m2 - m3;
    }
    for (gint i = 0; i < 2; i++) {
      y[i][0] = s[i][0] + s[i][1] + s[i][2];
      y[i][1] = s[i][1] - s[i][2] - s[i][3];
      for (gint j = 0; j < 2; j++) {
        if (has_bias)
          y[i][j] = y[i][j] + bias;
        if (relu)
          y[i][j] = y[i][j] > 0.0f ? y[i][j] : 0.0f;
      }
    }
    o0[2 * t] = y[0][0];
    o0[2 * t + 1] = y[0][1];
    o1[2 * t] = y[1][0];
    o1[2 * t + 1] = y[1][1];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "row-x86.h"
#define AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,fma")))

/* Mask of the first @n of 16 lanes (n may be outside 0 .. 16). */
AVX512 static inline __mmask16
lanes (gint n)
{
  return n >= 16 ? (__mmask16) 0xffff : n <= 0 ? 0 : (__mmask16) ((1u << n) - 1);
}

/* Rows [y0, y1) of one channel's zero-bordered plane (pad_rows), 16
 * columns a step, the row's part loaded masked: per row two or three
 * stores, where memset, memcpy and memset calls were most of the copy of
 * an 18-pixel row (a 64×18×18 layer's copy took a twelfth of the layer). */
AVX512 static void
pad_plane_avx512 (const M2iWinograd *wg, const float *src, float *dst, gint64 y0, gint64 y1)
{
  const __m512 zero = _mm512_setzero_ps ();
  dst += y0 * wg->wp;
  for (gint64 y = y0; y < y1; y++, dst += wg->wp) {
    gint64 iy = y - wg->pt;
    const float *row = src + iy * wg->w;
    for (gint64 j = 0; j < wg->wp; j += 16) {
      __mmask16 m = lanes ((gint) (wg->wp - j)), ok;
      __m512 v = iy >= 0 && iy < wg->h ?
          ir_k_load_row16 (row, j - wg->pl, 1, wg->w, FALSE, m, &ok) : zero;
      _mm512_mask_storeu_ps (dst + j, m, v);
    }
  }
}

AVX512 static void
input_run_avx512 (const float *p, gint64 wp, gint n, float *v, gsize xs)
{
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
      28, 30);
  const __m512i odd = _mm512_add_epi32 (even, _mm512_set1_epi32 (1));
  for (gint t = 0; t < n; t += 16) {
    /* Columns 2t' + j of 16 tiles t': evens and odds of the 32 floats from
     * column 2t (j = 0, 1) and from 2t + 2 (j = 2, 3); a last short group
     * reads only its 2·left + 2 columns. */
    gint left = MIN (16, n - t);
    __mmask16 m0 = lanes (2 * left), m1 = lanes (2 * left - 16);
    __m512 e[4][4];
    for (gint i = 0; i < 4; i++) {
      const float *r = p + i * wp + 2 * t;
      __m512 a0 = _mm512_maskz_loadu_ps (m0, r), a1 = _mm512_maskz_loadu_ps (m1, r + 16);
      __m512 b0 = _mm512_maskz_loadu_ps (m0, r + 2), b1 = _mm512_maskz_loadu_ps (m1, r + 18);
      __m512 d0 = _mm512_permutex2var_ps (a0, even, a1), d1 = _mm512_permutex2var_ps (a0, odd, a1);
      __m512 d2 = _mm512_permutex2var_ps (b0, even, b1), d3 = _mm512_permutex2var_ps (b0, odd, b1);
      e[i][0] = _mm512_sub_ps (d0, d2);
      e[i][1] = _mm512_add_ps (d1, d2);
      e[i][2] = _mm512_sub_ps (d2, d1);
      e[i][3] = _mm512_sub_ps (d1, d3);
    }
    __mmask16 mt = lanes (left);
    for (gint c = 0; c < 4; c++) {
      _mm512_mask_storeu_ps (v + (0 + c) * xs + t, mt, _mm512_sub_ps (e[0][c], e[2][c]));
      _mm512_mask_storeu_ps (v + (4 + c) * xs + t, mt, _mm512_add_ps (e[1][c], e[2][c]));
      _mm512_mask_storeu_ps (v + (8 + c) * xs + t, mt, _mm512_sub_ps (e[2][c], e[1][c]));
      _mm512_mask_storeu_ps (v + (12 + c) * xs + t, mt, _mm512_sub_ps (e[1][c], e[3][c]));
    }
  }
}

AVX512 static void
output_run_avx512 (const float *m, gsize xs, gint n, float *o0, float *o1, gboolean has_bias,
    float bias, gboolean relu)
{
  /* Lanes 0-15 of (y0 | y1) interleaved: y0[0] y1[0] y0[1] y1[1] ... */
  const __m512i lo = _mm512_setr_epi32 (0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_add_epi32 (lo, _mm512_set1_epi32 (8));
  const __m512 b = _mm512_set1_ps (bias), zero = _mm512_setzero_ps ();
  for (gint t = 0; t < n; t += 16) {
    gint left = MIN (16, n - t);
    __mmask16 mt = lanes (left), m0 = lanes (2 * left), m1 = lanes (2 * left - 16);
    __m512 s[2][4];
    for (gint c = 0; c < 4; c++) {
      __m512 q0 = _mm512_maskz_loadu_ps (mt, m + (0 + c) * xs + t);
      __m512 q1 = _mm512_maskz_loadu_ps (mt, m + (4 + c) * xs + t);
      __m512 q2 = _mm512_maskz_loadu_ps (mt, m + (8 + c) * xs + t);
      __m512 q3 = _mm512_maskz_loadu_ps (mt, m + (12 + c) * xs + t);
      s[0][c] = _mm512_add_ps (_mm512_add_ps (q0, q1), q2);
      s[1][c] = _mm512_sub_ps (_mm512_sub_ps (q1, q2), q3);
    }
    for (gint i = 0; i < 2; i++) {
      __m512 y0 = _mm512_add_ps (_mm512_add_ps (s[i][0], s[i][1]), s[i][2]);
      __m512 y1 = _mm512_sub_ps (_mm512_sub_ps (s[i][1], s[i][2]), s[i][3]);
      if (has_bias) {
        y0 = _mm512_add_ps (y0, b);
        y1 = _mm512_add_ps (y1, b);
      }
      if (relu) {
        /* max (NaN, 0) = 0, as x > 0 ? x : 0 */
        y0 = _mm512_max_ps (y0, zero);
        y1 = _mm512_max_ps (y1, zero);
      }
      float *o = (i ? o1 : o0) + 2 * t;
      _mm512_mask_storeu_ps (o, m0, _mm512_permutex2var_ps (y0, lo, y1));
      _mm512_mask_storeu_ps (o + 16, m1, _mm512_permutex2var_ps (y0, hi, y1));
    }
  }
}
#endif

static void
input_run (const M2iWinograd *wg, const float *p, gint64 wp, gint n, float *v, gsize xs)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (wg->avx512) {
    input_run_avx512 (p, wp, n, v, xs);
    return;
  }
#endif
  input_run_c (p, wp, n, v, xs);
}

static void
output_run (const M2iWinograd *wg, const float *m, gsize xs, gint n, float *o0, float *o1,
    gboolean has_bias, float bias, gboolean relu)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (wg->avx512) {
    output_run_avx512 (m, xs, n, o0, o1, has_bias, bias, relu);
    return;
  }
#endif
  output_run_c (m, xs, n, o0, o1, has_bias, bias, relu);
}

/* ---- Driver ------------------------------------------------------------- */

typedef struct {
  const M2iWinograd *wg;
  const float *in;
  const M2iKFusion *fused;
  float *out, *scratch;
  gboolean channel_major;              /* the task order (winograd_task) */
} WgJob;

/* Rows [y0, y1) of every channel's zero-bordered plane. */
static void
pad_rows (const M2iWinograd *wg, const float *in, float *plane, gint64 y0, gint64 y1)
{
  for (gint64 c = 0; c < wg->c_in; c++) {
    const float *src = in + c * wg->h * wg->w;
    float *dst = plane + c * wg->hp * wg->wp;
#if defined(__x86_64__) && defined(__GNUC__)
    if (wg->avx512) {
      pad_plane_avx512 (wg, src, dst, y0, y1);
      continue;
    }
#endif
    for (gint64 y = y0; y < y1; y++) {
      float *d = dst + y * wg->wp;
      gint64 iy = y - wg->pt;
      if (iy < 0 || iy >= wg->h) {
        memset (d, 0, wg->wp * sizeof (float));
        continue;
      }
      memset (d, 0, wg->pl * sizeof (float));
      memcpy (d + wg->pl, src + iy * wg->w, wg->w * sizeof (float));
      memset (d + wg->pl + wg->w, 0, (wg->wp - wg->pl - wg->w) * sizeof (float));
    }
  }
}

/* V of tile block @b: [ξ][C_in][vw], the columns up to the GEMM's last
 * vector past the last tile zero. */
static void
input_block (const M2iWinograd *wg, const float *plane, gint64 b, float *v)
{
  gint64 q0 = wg->block_start[b], nt = wg->block_start[b + 1] - q0;
  gint64 step = wg->arch->step, zero_to = m2i_align_up (nt, step);
  gsize xs = wg->v_stride, chan = (gsize) wg->hp * wg->wp;
  for (gint64 ci = 0; ci < wg->c_in; ci++) {
    float *vc = v + ci * wg->vw;
    for (gint64 q = q0; q < q0 + nt;) {
      gint64 ty = q / wg->tw, tx = q % wg->tw;
      gint n = (gint) MIN (wg->tw - tx, q0 + nt - q);
      input_run (wg, plane + ci * chan + 2 * ty * wg->wp + 2 * tx, wg->wp, n, vc + (q - q0), xs);
      q += n;
    }
    if (nt < zero_to)
      for (gint xi = 0; xi < 16; xi++)
        memset (vc + xi * xs + nt, 0, (zero_to - nt) * sizeof (float));
  }
}

/* The fused Swish over the pixels of tiles [q0, q0 + nt) of one output
 * plane, just stored: per tile row two row segments, merged where they
 * touch (whole rows), so a block is a few calls, not one per tile run. */
static void
swish_block (const M2iWinograd *wg, const M2iKFusion *f, float *plane, gint64 q0, gint64 nt)
{
  gint64 pend0 = 0, pend1 = 0;         /* a run of pixels not yet passed */
  for (gint64 ty = q0 / wg->tw; ty <= (q0 + nt - 1) / wg->tw; ty++) {
    gint64 ta = MAX (q0 - ty * wg->tw, 0), tb = MIN (q0 + nt - ty * wg->tw, wg->tw);
    for (gint64 y = 2 * ty; y < MIN (2 * ty + 2, wg->oh); y++) {
      gint64 a = y * wg->ow + 2 * ta, b = y * wg->ow + MIN (2 * tb, wg->ow);
      if (a != pend1) {
        ir_k_fusion_swish (f, plane + pend0, pend1 - pend0);
        pend0 = a;
      }
      pend1 = b;
    }
  }
  ir_k_fusion_swish (f, plane + pend0, pend1 - pend0);
}

/* Y of tile block @b for output channels [r0, r0 + rows) from m ([ξ][mb][vw]). */
static void
output_block (const M2iWinograd *wg, const float *m, gint64 b, gint64 r0, gint64 rows,
    float *out, const M2iKFusion *f, float *spare)
{
  const float *bias = f->bias;
  gboolean relu = f->relu;
  gint64 q0 = wg->block_start[b], nt = wg->block_start[b + 1] - q0;
  gsize xs = wg->m_stride, ohw = (gsize) wg->oh * wg->ow;
  gint64 full = wg->ow / 2;            /* tiles of a row with both columns inside */
  for (gint64 r = 0; r < rows; r++) {
    const float *mr = m + r * wg->vw;
    float *plane = out + (r0 + r) * ohw;
    float bv = bias ? bias[r0 + r] : 0.0f;
    for (gint64 q = q0; q < q0 + nt;) {
      gint64 ty = q / wg->tw, tx = q % wg->tw;
      gint64 end = MIN (wg->tw, tx + (q0 + nt - q));
      float *o0 = plane + 2 * ty * wg->ow;
      /* A last odd row writes its second row to the spare one. */
      float *o1 = 2 * ty + 1 < wg->oh ? o0 + wg->ow : spare;
      gint64 n = MIN (end, full) - tx;
      if (n > 0)
        output_run (wg, mr + (q - q0), xs, (gint) n, o0 + 2 * tx, o1 + 2 * tx, bias != NULL, bv,
            relu);
      if (end > full) {
        /* The last tile of an odd-width row: its first column only,
         * through the spare row. */
        float y0[2], y1[2];
        output_run (wg, mr + (q - q0) + (full - tx), xs, 1, y0, y1, bias != NULL, bv, relu);
        o0[2 * full] = y0[0];
        o1[2 * full] = y1[0];
      }
      q += end - tx;
    }
    if (f->swish)
      swish_block (wg, f, plane, q0, nt);
  }
}

typedef struct {
  const float *v;
  const gint32 *v_off;
  gsize vw;
} WgPanel;

static const float *
panel_b (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf, const gint32 **off)
{
  const WgPanel *p = user;
  *off = p->v_off;
  return p->v + (gsize) k0 * p->vw + n0;
}

void
ir_winograd_pack_u (const M2iGemmArch *arch, const float *plain, gint n_xi, gint64 c_out,
    gint64 c_in, float *u, gsize u_stride)
{
  gsize n = (gsize) c_out * c_in;
  for (gint xi = 0; xi < n_xi; xi++)
    ir_gemm_pack_a (arch, plain + xi * n, c_in, 1, (gint) c_out, (gint) c_in, u + xi * u_stride);
}

gint32 *
ir_winograd_v_layout (const M2iGemmArch *arch, gint64 tail, gint64 c_in, gint64 mb, gint64 *vw,
    gsize *v_stride, gsize *m_stride)
{
  /* Rows of V and M: a column panel, and room for a tail. The matrices
   * of V and of M, one cache line more than their size apart: at a
   * multiple of 4 KiB, the rows the transforms read together would share
   * an L1 set. */
  *vw = arch->nr + (tail ? arch->step : 0);
  *v_stride = m2i_align_up (c_in * *vw, 16) + 16;
  *m_stride = m2i_align_up (mb * *vw, 16) + 16;
  gint32 *v_off = g_new (gint32, c_in);
  for (gint64 p = 0; p < c_in; p++)
    v_off[p] = (gint32) (p * *vw);
  return v_off;
}

void
ir_winograd_products (const M2iGemmArch *arch, gint n_xi, const float *u, gsize u_stride,
    gint64 r0, gint64 rows, gint64 c_in, const float *v, gsize v_stride, const gint32 *v_off,
    gint64 vw, float *m, gsize m_stride, gint ncols, gint tail, float *strip)
{
  for (gint xi = 0; xi < n_xi; xi++) {
    const float *uxi = u + xi * u_stride + r0 * c_in;
    WgPanel p = { v + xi * v_stride, v_off, (gsize) vw };
    M2iGemmOut o = { m + xi * m_stride, (gsize) vw, NULL, NULL, NULL, NULL, NULL, FALSE };
    ir_gemm_column_panel (arch, (gint) rows, (gint) c_in, uxi, arch->mr, 0, ncols - tail,
        panel_b, &p, NULL, strip, &o);
    if (tail)
      ir_gemm_tail_panel (arch, (gint) rows, (gint) c_in, uxi, ncols - tail, tail, panel_b, &p,
          NULL, &o);
  }
}

static void
block_slice (gint begin, gint end, gint slice, gpointer data)
{
  const WgJob *j = data;
  const M2iWinograd *wg = j->wg;
  float *plane = ir_k_slice_scratch (j->scratch + slice * wg->slice_floats,
      wg->slice_floats * sizeof (float));
  float *v = plane + plane_floats (wg);
  float *m = v + 16 * wg->v_stride;
  float *strip = m + 16 * wg->m_stride;
  float *spare = strip + m2i_align_up (ir_gemm_strip_size (wg->arch), 16);
  /* The bordered input rows this slice's tiles read, made by the slice
   * itself in its own area: on two threads, each core then reads only
   * what it wrote (a copy shared out over the cores was read by both, and
   * its lines written by one core after the other had read them, layer
   * after layer). */
  gint64 q0 = wg->tiles, q1 = 0, last_b = -1;
  for (gint t = begin; t < end; t++) {
    gint64 b, r0;
    winograd_task (wg, j->channel_major, t, &b, &r0);
    q0 = MIN (q0, wg->block_start[b]);
    q1 = MAX (q1, wg->block_start[b + 1]);
  }
  if (q1 > q0)
    pad_rows (wg, j->in, plane, 2 * (q0 / wg->tw), MIN (wg->hp, 2 * ((q1 - 1) / wg->tw) + 4));
  for (gint t = begin; t < end; t++) {
    /* Tasks: tile blocks, then output-channel blocks, so a slice's
     * consecutive tasks share the block's V (or channel blocks first:
     * winograd_task). */
    gint64 b, r0;
    winograd_task (wg, j->channel_major, t, &b, &r0);
    gint64 rows = MIN (wg->mb, wg->c_out - r0);
    gint ncols = (gint) (wg->block_start[b + 1] - wg->block_start[b]);
    gint tail = b == wg->blocks - 1 ? (gint) wg->tail : 0;
    if (b != last_b) {
      input_block (wg, plane, b, v);
      last_b = b;
    }
    ir_winograd_products (wg->arch, 16, wg->u, wg->u_stride, r0, rows, wg->c_in, v,
        wg->v_stride, wg->v_off, wg->vw, m, wg->m_stride, ncols, tail, strip);
    output_block (wg, m, b, r0, rows, j->out, j->fused, spare);
  }
}

void
ir_winograd_run (const M2iWinograd *wg, const float *in, float *out, const M2iKFusion *fused,
    gint slices, float *scratch)
{
  /* One slice takes the tasks with the tile blocks outermost: each
   * block's input transformed once. */
  WgJob j = { wg, in, fused, out, scratch, wg->channel_major && slices > 1 };
  ir_k_parallel_for ((gint) (wg->blocks * wg->m_blocks), slices, 1, block_slice, &j);
}
