/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Convolution and fully-connected layers: compile (validate, pack weights,
 * fold biases, plan the padded buffer), run (pad, tile, requantize), the
 * plain-C kernels and the cost model. */
#include "npu-private.h"

#include <base/m2i-align.h>
#include <base/m2i-cpu.h>
#include <base/m2i-error.h>
#include <base/m2i-parallel.h>
#include <m2i/device-model.h>
#include <math.h>
#include <string.h>

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

#define NPU_MAX_CHANNELS 65536
#define NPU_MAX_SIZE 65536
#define NPU_MAX_KERNEL 64
#define NPU_MAX_STEP 64          /* stride, dilation */
#define NPU_MAX_PAD 1024
#define C_TILE_M 4               /* pixels per C-kernel call */

/* ---- geometry -------------------------------------------------------------- */

gboolean
m2i_npu_conv_geometry_check (const M2iNpuConvGeometry *g, gint *out_h,
    gint *out_w, GError **error)
{
  if (!g) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "conv: geometry is NULL");
    return FALSE;
  }
#define RANGE(v, lo, hi) \
  if ((v) < (lo) || (v) > (hi)) { \
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, \
        "conv: %s = %d is outside [%d, %d]", #v, (v), (lo), (hi)); \
    return FALSE; \
  }
  RANGE (g->in_channels, 1, NPU_MAX_CHANNELS);
  RANGE (g->out_channels, 1, NPU_MAX_CHANNELS);
  RANGE (g->groups, 1, NPU_MAX_CHANNELS);
  RANGE (g->in_h, 1, NPU_MAX_SIZE);
  RANGE (g->in_w, 1, NPU_MAX_SIZE);
  RANGE (g->kernel_h, 1, NPU_MAX_KERNEL);
  RANGE (g->kernel_w, 1, NPU_MAX_KERNEL);
  RANGE (g->stride_h, 1, NPU_MAX_STEP);
  RANGE (g->stride_w, 1, NPU_MAX_STEP);
  RANGE (g->dilation_h, 1, NPU_MAX_STEP);
  RANGE (g->dilation_w, 1, NPU_MAX_STEP);
  RANGE (g->pad_top, 0, NPU_MAX_PAD);
  RANGE (g->pad_left, 0, NPU_MAX_PAD);
  RANGE (g->pad_bottom, 0, NPU_MAX_PAD);
  RANGE (g->pad_right, 0, NPU_MAX_PAD);
#undef RANGE
  if (g->in_channels % g->groups || g->out_channels % g->groups) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "conv: groups = %d does not divide in_channels = %d and out_channels = %d",
        g->groups, g->in_channels, g->out_channels);
    return FALSE;
  }
  gint eh = (g->kernel_h - 1) * g->dilation_h + 1, ew = (g->kernel_w - 1) * g->dilation_w + 1;
  gint ph = g->in_h + g->pad_top + g->pad_bottom, pw = g->in_w + g->pad_left + g->pad_right;
  if (ph < eh || pw < ew) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "conv: the dilated %dx%d kernel does not fit the padded %dx%d input",
        eh, ew, ph, pw);
    return FALSE;
  }
  if (out_h)
    *out_h = (ph - eh) / g->stride_h + 1;
  if (out_w)
    *out_w = (pw - ew) / g->stride_w + 1;
  return TRUE;
}

/* ---- requantization (scalar) --------------------------------------------- */

/* @acc / 2^@shift, rounded with @round (the shift scheme). */
static gint32
round_shift (gint32 acc, gint shift, M2iMliRound round)
{
  if (shift == 0)
    return acc;
  gint32 fl = acc >> shift;
  guint32 rem = (guint32) acc & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (round == M2I_MLI_ROUND_HALF_UP || (fl & 1))))
    fl++;
  return fl;
}

gint32
npu_mbqm (gint32 x, gint32 multiplier, gint lshift, gint rshift)
{
  gint64 v = (gint64) x * ((gint64) 1 << lshift);
  v = CLAMP (v, G_MININT32, G_MAXINT32);
  /* SaturatingRoundingDoublingHighMul; its nudged, truncating division
   * equals floor((v*m + 2^30) / 2^31) — see docs/npu.md. */
  gint32 h = (gint32) (((v * multiplier) + ((gint64) 1 << 30)) >> 31);
  /* RoundingDivideByPOT: round half away from zero. */
  gint32 mask = (gint32) ((1u << rshift) - 1u);
  gint32 rem = h & mask, thr = (mask >> 1) + (h < 0 ? 1 : 0);
  return (h >> rshift) + (rem > thr ? 1 : 0);
}

/* The int8 output of accumulator @acc (bias included) of channel @o of
 * the arrays' first channel; PReLU takes the negative branch's parameters
 * for acc < 0. */
static inline gint8
requant_lane (const M2iNpuConv *c, gint32 acc, const gint32 *mult, const gint32 *lsh,
    const gint32 *rsh, const gint32 *nmult, const gint32 *nlsh, const gint32 *nrsh, gint o)
{
  gint32 q;
  if (c->scheme == M2I_NPU_REQUANT_SHIFT)
    q = round_shift (acc, rsh[o], c->round);
  else if (c->prelu && acc < 0)
    q = npu_mbqm (acc, nmult[o], nlsh[o], nrsh[o]);
  else
    q = npu_mbqm (acc, mult[o], lsh[o], rsh[o]);
  q = CLAMP (q, -512, 512) + c->out_zero;
  return (gint8) CLAMP (q, c->act_min, c->act_max);
}

static inline gint8
requant_tile (const NpuTileArgs *A, gint o, gint32 acc)
{
  return requant_lane (A->conv, acc, A->mult, A->lshift, A->rshift, A->nmult, A->nlshift,
      A->nrshift, o);
}

/* fp16 epilogue of output lane @o: PReLU, clamp, one rounding. */
static inline m2i_f16
finish_f16 (const NpuTileArgs *A, gint o, float v)
{
  const M2iNpuConv *c = A->conv;
  if (A->fslope && v < 0.0f)
    v = v * A->fslope[o];
  v = v < c->f_min ? c->f_min : v > c->f_max ? c->f_max : v;
  return m2i_f32_to_f16 (v);
}

/* ---- plain-C kernels ------------------------------------------------------ */

/* Modular int32 sums (the device's 32-bit accumulator). */
static void
c_tile_int8 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  guint32 acc[C_TILE_M][8] = { { 0 } };
  const gint16 *w = A->w;
  for (gint t = 0; t < c->taps; t++) {
    const guint8 *a = A->a + c->tap_off[t];
    for (gint cb = 0; cb < A->ncb; cb++, a += A->cb_pitch, w += 64) {
      const gint16 *x = (const gint16 *) a;
      for (gint p = 0; p < A->m; p++)
        for (gint i = 0; i < 8; i++) {
          gint32 xv = x[p * 8 + i];
          for (gint o = 0; o < 8; o++)
            acc[p][o] += (guint32) (xv * w[i * 8 + o]);
        }
    }
  }
  gint8 *out = (gint8 *) A->out;
  for (gint p = 0; p < A->m; p++)
    for (gint o = 0; o < 8; o++)
      out[p * 8 + o] = requant_tile (A, o, (gint32) (acc[p][o] + (guint32) A->bias[o]));
}

static void
c_tile_fp16 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  float acc[C_TILE_M][8] = { { 0 } };
  const float *w = A->w;
  for (gint t = 0; t < c->taps; t++) {
    const guint8 *a = A->a + c->tap_off[t];
    for (gint cb = 0; cb < A->ncb; cb++, a += A->cb_pitch, w += 64) {
      const float *x = (const float *) a;
      for (gint p = 0; p < A->m; p++)
        for (gint i = 0; i < 8; i++) {
          float xv = x[p * 8 + i];
          for (gint o = 0; o < 8; o++)
            acc[p][o] += xv * w[i * 8 + o];
        }
    }
  }
  m2i_f16 *out = (m2i_f16 *) A->out;
  for (gint p = 0; p < A->m; p++)
    for (gint o = 0; o < 8; o++)
      out[p * 8 + o] = finish_f16 (A, o, acc[p][o] + A->fbias[o]);
}

/* Depthwise: weights [tap][8 channels] (int32 for int8 layers); each lane
 * only meets its own channel, so the loop over lanes vectorizes with no
 * reduction. Any number of pixels. */
static void
dw_tile_int8 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  gint8 *out = (gint8 *) A->out;
  for (gint p = 0; p < A->m; p++) {
    guint32 acc[8] = { 0 };
    const gint32 *w = A->w;
    for (gint t = 0; t < c->taps; t++, w += 8) {
      const gint16 *x = (const gint16 *) (A->a + c->tap_off[t]) + p * 8;
      for (gint o = 0; o < 8; o++)
        acc[o] += (guint32) (x[o] * w[o]);
    }
    for (gint o = 0; o < 8; o++)
      out[p * 8 + o] = requant_tile (A, o, (gint32) (acc[o] + (guint32) A->bias[o]));
  }
}

static void
dw_tile_fp16 (const NpuTileArgs *A)
{
  const M2iNpuConv *c = A->conv;
  m2i_f16 *out = (m2i_f16 *) A->out;
  for (gint p = 0; p < A->m; p++) {
    float acc[8] = { 0 };
    const float *w = A->w;
    for (gint t = 0; t < c->taps; t++, w += 8) {
      const float *x = (const float *) (A->a + c->tap_off[t]) + p * 8;
      for (gint o = 0; o < 8; o++)
        acc[o] += x[o] * w[o];
    }
    for (gint o = 0; o < 8; o++)
      out[p * 8 + o] = finish_f16 (A, o, acc[o] + A->fbias[o]);
  }
}

/* ---- compile ----------------------------------------------------------------- */

static const char *const path_names[2][4] = {
  { "c", "c-depthwise", "avx2", "avx512-vnni" },
  { "c", "c-depthwise", "avx2-fma-f16c", "avx512-fma" },
};
static const char *const dw_names[2][4] = {
  { "c-depthwise", "", "avx2-depthwise", "avx512-depthwise" },
  { "c-depthwise", "", "avx2-fma-depthwise", "avx512-fma-depthwise" },
};

/* The instruction set a depthwise layer's kernels use. */
static NpuPath
choose_dw_isa (M2iNpuPrecision p)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  M2iCpuFlags need = p == M2I_NPU_FP16 ? (M2I_CPU_FMA | M2I_CPU_F16C) : 0;
  if ((f & need) == need && (f & M2I_CPU_AVX512F))
    return NPU_PATH_AVX512;
  if ((f & need) == need && (f & M2I_CPU_AVX2))
    return NPU_PATH_AVX2;
  return NPU_PATH_C;
}

static NpuPath
choose_path (M2iNpuPrecision p, gboolean depthwise)
{
  if (depthwise)
    return NPU_PATH_DEPTHWISE;
  M2iCpuFlags f = m2i_cpu_flags ();
  if (p == M2I_NPU_INT8) {
    if (f & M2I_CPU_AVX512VNNI)
      return NPU_PATH_AVX512;
    if (f & M2I_CPU_AVX2)
      return NPU_PATH_AVX2;
    return NPU_PATH_C;
  }
  M2iCpuFlags need = M2I_CPU_FMA | M2I_CPU_F16C;
  if ((f & need) == need && (f & M2I_CPU_AVX512F))
    return NPU_PATH_AVX512;
  if ((f & need) == need && (f & M2I_CPU_AVX2))
    return NPU_PATH_AVX2;
  return NPU_PATH_C;
}

/* Weight of output channel @o for absolute input channel @ci at tap @t,
 * from the caller's blocked layout; 0 outside the channel's group. */
typedef struct {
  const M2iNpuConv *c;
  const void *blocked;
} WeightSource;

/* The caller's weight (o, i, tap) with i counted inside the group. */
static double
blocked_weight (const WeightSource *s, gint o, gint local, gint tap)
{
  const M2iNpuConvGeometry *g = &s->c->g;
  gint ig = g->in_channels / g->groups;
  gsize idx = (((gsize) (o / 8) * CEIL8 (ig) + local / 8) * g->kernel_h * g->kernel_w
      + tap) * 64 + (local % 8) * 8 + o % 8;
  if (s->c->precision == M2I_NPU_INT8)
    return ((const gint8 *) s->blocked)[idx];
  return m2i_f16_to_f32 (((const m2i_f16 *) s->blocked)[idx]);
}

/* The weight the kernels see for output channel @o, (kernel-geometry)
 * input channel @ci and tap @t. */
static double
weight_at (const WeightSource *s, gint o, gint ci, gint t)
{
  const M2iNpuConv *c = s->c;
  if (o >= c->kg.out_channels || ci >= c->kg.in_channels)
    return 0;
  if (c->fold) {            /* ci = kx*C + channel, t = ky */
    gint C = c->g.in_channels;
    return blocked_weight (s, o, ci % C, t * c->g.kernel_w + ci / C);
  }
  gint grp = o / c->og, local = ci - grp * c->ig;
  if (local < 0 || local >= c->ig)
    return 0;
  return blocked_weight (s, o, local, t);
}

/* Packed-weight element per path. */
static gsize
packed_elem (const M2iNpuConv *c)
{
  if (c->precision == M2I_NPU_FP16 || c->path == NPU_PATH_DEPTHWISE)
    return 4;
  return c->path == NPU_PATH_AVX512 ? 1 : 2;
}

static void
put_packed (const M2iNpuConv *c, guint8 *dst, double v)
{
  if (c->precision == M2I_NPU_FP16)
    *(float *) dst = (float) v;
  else if (c->path == NPU_PATH_DEPTHWISE)
    *(gint32 *) dst = (gint32) v;
  else if (c->path == NPU_PATH_AVX512)
    *(gint8 *) dst = (gint8) v;
  else
    *(gint16 *) dst = (gint16) v;
}

/* Order the kernels read: tap, input block, group of `ipl` input lanes,
 * vector z, output lane, input within the group. Depthwise: tap, lane. */
static void
pack_tile (const M2iNpuConv *c, const NpuTile *T, const WeightSource *s,
    guint8 *dst)
{
  gsize es = packed_elem (c);
  if (c->path == NPU_PATH_DEPTHWISE) {
    for (gint t = 0; t < c->taps; t++)
      for (gint o = 0; o < 8; o++, dst += es) {
        gint oc = T->ob0 * 8 + o;
        put_packed (c, dst, weight_at (s, oc, oc, t));
      }
    return;
  }
  gint ipl = (c->precision == M2I_NPU_INT8 && c->path == NPU_PATH_AVX512) ? 4
      : (c->precision == M2I_NPU_INT8 && c->path == NPU_PATH_AVX2) ? 2 : 1;
  for (gint t = 0; t < c->taps; t++)
    for (gint cb = 0; cb < T->ncb; cb++)
      for (gint ig = 0; ig < 8 / ipl; ig++)
        for (gint z = 0; z < T->nz; z++)
          for (gint lane = 0; lane < c->lanes; lane++)
            for (gint j = 0; j < ipl; j++, dst += es)
              put_packed (c, dst, weight_at (s, T->ob0 * 8 + z * c->lanes + lane,
                      (T->cb0 + cb) * 8 + ig * ipl + j, t));
}

static gsize
tile_packed_bytes (const M2iNpuConv *c, const NpuTile *T)
{
  if (c->path == NPU_PATH_DEPTHWISE)
    return (gsize) c->taps * 8 * packed_elem (c);
  return (gsize) c->taps * T->ncb * 8 * T->nz * c->lanes * packed_elem (c);
}

/* Pixels per micro-tile: fewest wasted lanes plus a per-call overhead. */
static gint
choose_m (gint ow, gint max_m)
{
  gint best = 1;
  gint64 best_cost = G_MAXINT64;
  for (gint m = 1; m <= max_m; m++) {
    gint64 tiles = CEIL_DIV (ow, m), cost = tiles * (m + 3);
    if (cost <= best_cost) {
      best_cost = cost;
      best = m;
    }
  }
  return best;
}

/* Folding pays when the kernel's columns fit in fewer channel blocks than
 * the kernel has columns (3 channels × 3 columns: 2 blocks instead of 3). */
static void
choose_fold (M2iNpuConv *c)
{
  const M2iNpuConvGeometry *g = &c->g;
  c->kg = *g;
  c->fold = g->groups == 1 && g->in_channels < 8 && g->kernel_w > 1
      && CEIL8 (g->in_channels * g->kernel_w) < g->kernel_w;
  if (!c->fold)
    return;
  c->kg.in_channels = g->in_channels * g->kernel_w;
  c->kg.in_w = c->ow;
  c->kg.kernel_w = 1;
  c->kg.stride_w = 1;
  c->kg.dilation_w = 1;
  c->kg.pad_left = c->kg.pad_right = 0;
}

static gboolean
plan (M2iNpuConv *c, const void *weights, GError **error)
{
  choose_fold (c);
  const M2iNpuConvGeometry *g = &c->kg;
  c->ig = g->in_channels / g->groups;
  c->og = g->out_channels / g->groups;
  c->cb_in = CEIL8 (g->in_channels);
  c->cb_out = CEIL8 (g->out_channels);
  c->taps = g->kernel_h * g->kernel_w;
  gboolean depthwise = g->groups > 1 && c->ig == 1 && c->og == 1;
  c->path = choose_path (c->precision, depthwise);
  c->dw_isa = depthwise ? choose_dw_isa (c->precision) : NPU_PATH_C;
  c->pad_format = c->precision == M2I_NPU_FP16 ? NPU_PAD_F32
      : c->path == NPU_PATH_AVX512 ? NPU_PAD_U8 : NPU_PAD_S16;
  c->pad_elem = c->pad_format == NPU_PAD_F32 ? 4 : c->pad_format == NPU_PAD_S16 ? 2 : 1;

  gint tile_blocks, max_m;
  switch (c->path) {
    case NPU_PATH_AVX512: tile_blocks = 4; c->lanes = 16; max_m = NPU_AVX512_MAX_M; break;
    case NPU_PATH_AVX2: tile_blocks = 2; c->lanes = 8; max_m = NPU_AVX2_MAX_M; break;
    case NPU_PATH_DEPTHWISE: tile_blocks = 1; c->lanes = 8; max_m = 16; break;
    default: tile_blocks = 1; c->lanes = 8; max_m = C_TILE_M; break;
  }
  c->M = choose_m (c->ow, max_m);

  /* Tiles and the input blocks each one reads (its groups' channels). */
  c->n_tiles = CEIL_DIV (c->cb_out, tile_blocks);
  c->tiles = g_new0 (NpuTile, c->n_tiles);
  gsize off = 0;
  for (gint i = 0; i < c->n_tiles; i++) {
    NpuTile *T = &c->tiles[i];
    T->ob0 = i * tile_blocks;
    T->nb = MIN (tile_blocks, c->cb_out - T->ob0);
    T->nz = CEIL_DIV (T->nb * 8, c->lanes);
    gint o_lo = T->ob0 * 8, o_hi = MIN ((T->ob0 + T->nb) * 8, g->out_channels);
    gint c_lo = (o_lo / c->og) * c->ig, c_hi = ((o_hi - 1) / c->og + 1) * c->ig;
    T->cb0 = c_lo / 8;
    T->ncb = CEIL8 (c_hi) - T->cb0;
    if (c->path == NPU_PATH_DEPTHWISE) {
      T->cb0 = T->ob0;
      T->ncb = 1;
    }
    T->w_offset = off;
    off += tile_packed_bytes (c, T);
  }
  c->packed_bytes = off;
  c->packed = g_malloc (MAX (off, 1));
  WeightSource src = { c, weights };
  for (gint i = 0; i < c->n_tiles; i++)
    pack_tile (c, &c->tiles[i], &src, c->packed + c->tiles[i].w_offset);

  /* Padded buffer: stride-phase columns, enough slack for the last tile's
   * extra pixels (computed, never stored) and for the depthwise kernels'
   * pixel pairs (one more). */
  gint sx = g->stride_w;
  gint max_shift = ((g->kernel_w - 1) * g->dilation_w) / sx;
  c->ph = g->in_h + g->pad_top + g->pad_bottom;
  c->pws = MAX (CEIL_DIV (g->in_w + g->pad_left + g->pad_right, sx),
      c->ow + c->M + max_shift);
  c->pw = sx * c->pws;
  c->cb_pitch = (gint64) c->pw * 8;
  c->row_pitch = c->cb_in * c->cb_pitch;
  c->tap_off = g_new (gint64, c->taps);
  for (gint ky = 0; ky < g->kernel_h; ky++)
    for (gint kx = 0; kx < g->kernel_w; kx++) {
      gint x = kx * g->dilation_w;
      gint64 e = (gint64) ky * g->dilation_h * c->row_pitch
          + ((gint64) (x % sx) * c->pws + x / sx) * 8;
      c->tap_off[ky * g->kernel_w + kx] = e * (gint64) c->pad_elem;
    }
  c->scratch_bytes = (gsize) c->ph * c->row_pitch * c->pad_elem + 64;

  /* Waking a worker costs microseconds: give each slice at least ~64 KB
   * to copy, or ~4M multiply-adds (about 10 µs of VNNI work). */
  guint64 item_macs = 0;
  for (gint i = 0; i < c->n_tiles; i++)
    item_macs += (guint64) c->ow * c->tiles[i].nb * 8 * c->taps
        * (c->path == NPU_PATH_DEPTHWISE ? 1 : c->tiles[i].ncb * 8);
  item_macs = MAX (item_macs / c->n_tiles, 1);
  if (c->path == NPU_PATH_DEPTHWISE)     /* requantization dominates: ~8x a dense MAC */
    item_macs *= 8;
  c->conv_grain = (gint) CLAMP ((4u << 20) / item_macs, 1, G_MAXINT / 2);
  c->pad_grain = (gint) CLAMP ((64u << 10) / (c->cb_pitch * c->pad_elem), 1, G_MAXINT / 2);
  if (c->scratch_bytes > ((gsize) 1 << 34)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "conv: the padded input would need %" G_GSIZE_FORMAT " bytes",
        c->scratch_bytes);
    return FALSE;
  }
  return TRUE;
}

static M2iNpuConv *
conv_alloc (M2iNpuPrecision p, const M2iNpuConvGeometry *g, const void *weights,
    GError **error)
{
  gint oh, ow;
  if (!m2i_npu_conv_geometry_check (g, &oh, &ow, error))
    return NULL;
  if (!weights) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "conv: weights are NULL");
    return NULL;
  }
  M2iNpuConv *c = g_new0 (M2iNpuConv, 1);
  c->precision = p;
  c->g = *g;
  c->oh = oh;
  c->ow = ow;
  if (!plan (c, weights, error)) {
    m2i_npu_conv_free (c);
    return NULL;
  }
  gsize n = (gsize) c->n_tiles * (c->path == NPU_PATH_AVX512 ? 32 : c->path == NPU_PATH_AVX2 ? 16 : 8);
  if (p == M2I_NPU_INT8) {
    c->bias = g_new0 (gint32, n);
    c->mult = g_new0 (gint32, n);
    c->lshift = g_new0 (gint32, n);
    c->rshift = g_new0 (gint32, n);
    c->nmult = g_new0 (gint32, n);
    c->nlshift = g_new0 (gint32, n);
    c->nrshift = g_new0 (gint32, n);
  } else {
    c->fbias = g_new0 (float, n);
    c->fslope = g_new0 (float, n);
  }
  return c;
}

static gboolean
check_requant (const M2iNpuRequant *rq, gint out_channels, GError **error)
{
  const char *why = NULL;
  if (!rq)
    why = "requantization parameters are NULL";
  else if (rq->scheme != M2I_NPU_REQUANT_SHIFT && rq->scheme != M2I_NPU_REQUANT_MULTIPLIER)
    why = "unknown requantization scheme";
  else if (rq->n != 1 && rq->n != out_channels)
    why = "n must be 1 or out_channels";
  else if (!rq->shift || (rq->scheme == M2I_NPU_REQUANT_MULTIPLIER && !rq->multiplier))
    why = "shift (and, for MULTIPLIER, multiplier) arrays are required";
  else if (rq->round != M2I_MLI_ROUND_HALF_UP && rq->round != M2I_MLI_ROUND_HALF_EVEN)
    why = "unknown rounding mode";
  else if (rq->out_zero_point < -128 || rq->out_zero_point > 127)
    why = "out_zero_point must be in [-128, 127]";
  else if (rq->act_min < -128 || rq->act_max > 127 || rq->act_min > rq->act_max)
    why = "need -128 <= act_min <= act_max <= 127";
  else
    for (gint i = 0; i < rq->n && !why; i++) {
      if (rq->scheme == M2I_NPU_REQUANT_SHIFT && (rq->shift[i] < 0 || rq->shift[i] > 31))
        why = "SHIFT shifts must be in [0, 31]";
      if (rq->scheme == M2I_NPU_REQUANT_MULTIPLIER
          && (rq->shift[i] < -31 || rq->shift[i] > 30 || rq->multiplier[i] < 0))
        why = "MULTIPLIER needs multipliers >= 0 and shifts in [-31, 30]";
    }
  if (!why && (rq->neg_multiplier || rq->neg_shift)) {
    if (rq->scheme != M2I_NPU_REQUANT_MULTIPLIER)
      why = "PReLU's negative branch needs the MULTIPLIER scheme";
    else if (!rq->neg_multiplier || !rq->neg_shift)
      why = "PReLU needs both neg_multiplier and neg_shift";
    else
      for (gint i = 0; i < rq->n && !why; i++)
        if (rq->neg_shift[i] < -31 || rq->neg_shift[i] > 30 || rq->neg_multiplier[i] == G_MININT32)
          why = "PReLU needs neg_multiplier > -2^31 and neg_shift in [-31, 30]";
  }
  if (why) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "conv requantization: %s", why);
    return FALSE;
  }
  return TRUE;
}

M2iNpuConv *
m2i_npu_conv_new_int8 (const M2iNpuConvGeometry *g, const gint8 *weights,
    const gint32 *bias, gint32 in_zero_point, const M2iNpuRequant *rq,
    GError **error)
{
  if (in_zero_point < -128 || in_zero_point > 127) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "conv: in_zero_point = %d is outside [-128, 127]", in_zero_point);
    return NULL;
  }
  if (g && !check_requant (rq, g->out_channels, error))
    return NULL;
  M2iNpuConv *c = conv_alloc (M2I_NPU_INT8, g, weights, error);
  if (!c)
    return NULL;
  c->scheme = rq->scheme;
  c->round = rq->round;
  c->in_zero = in_zero_point;
  c->out_zero = rq->out_zero_point;
  c->act_min = rq->act_min;
  c->act_max = rq->act_max;
  WeightSource src = { c, weights };
  for (gint o = 0; o < g->out_channels; o++) {
    gint k = rq->n == 1 ? 0 : o;
    gint s = rq->shift[k];
    if (c->scheme == M2I_NPU_REQUANT_SHIFT)
      c->rshift[o] = s;
    else {
      c->mult[o] = rq->multiplier[k];
      c->lshift[o] = MAX (s, 0);
      c->any_lshift |= s > 0;
      c->rshift[o] = MAX (-s, 0);
    }
    if (rq->neg_multiplier) {
      gint ns = rq->neg_shift[k];
      c->prelu = TRUE;
      c->nmult[o] = rq->neg_multiplier[k];
      c->nlshift[o] = MAX (ns, 0);
      c->any_lshift |= ns > 0;
      c->nrshift[o] = MAX (-ns, 0);
    }
    guint32 b = bias ? (guint32) bias[o] : 0;
    if (c->path == NPU_PATH_AVX512) {
      /* vpdpbusd multiplies u8 = x + 128 by s8 weights: Σ(x+128)w −
       * (z+128)Σw = Σ(x−z)w, and padding (u8 z+128) cancels too. */
      gint64 wsum = 0;
      for (gint t = 0; t < c->taps; t++)
        for (gint ci = 0; ci < c->kg.in_channels; ci++)
          wsum += (gint64) weight_at (&src, o, ci, t);
      b -= (guint32) ((gint64) (in_zero_point + 128) * wsum);
    }
    c->bias[o] = (gint32) b;
  }
  return c;
}

M2iNpuConv *
m2i_npu_conv_new_fp16 (const M2iNpuConvGeometry *g, const m2i_f16 *weights,
    const float *bias, float act_min, float act_max, GError **error)
{
  if (isnan (act_min) || isnan (act_max) || act_min > act_max) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "conv: clamp [%g, %g] is not a range", act_min, act_max);
    return NULL;
  }
  M2iNpuConv *c = conv_alloc (M2I_NPU_FP16, g, weights, error);
  if (!c)
    return NULL;
  c->f_min = act_min;
  c->f_max = act_max;
  for (gint o = 0; o < g->out_channels; o++)
    c->fbias[o] = bias ? bias[o] : 0.0f;
  return c;
}

static M2iNpuConvGeometry
fc_geometry (gint in_features, gint out_features)
{
  M2iNpuConvGeometry g = { in_features, out_features, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
  return g;
}

M2iNpuConv *
m2i_npu_fc_new_int8 (gint in_features, gint out_features, const gint8 *weights,
    const gint32 *bias, gint32 in_zero_point, const M2iNpuRequant *rq,
    GError **error)
{
  M2iNpuConvGeometry g = fc_geometry (in_features, out_features);
  return m2i_npu_conv_new_int8 (&g, weights, bias, in_zero_point, rq, error);
}

M2iNpuConv *
m2i_npu_fc_new_fp16 (gint in_features, gint out_features, const m2i_f16 *weights,
    const float *bias, float act_min, float act_max, GError **error)
{
  M2iNpuConvGeometry g = fc_geometry (in_features, out_features);
  return m2i_npu_conv_new_fp16 (&g, weights, bias, act_min, act_max, error);
}

gboolean
m2i_npu_conv_set_prelu (M2iNpuConv *c, const float *slopes, gint n_slopes, GError **error)
{
  const char *why = NULL;
  if (!c)
    why = "layer is NULL";
  else if (c->precision != M2I_NPU_FP16)
    why = "an int8 layer takes PReLU's negative branch in its M2iNpuRequant";
  else if (!slopes || (n_slopes != 1 && n_slopes != c->g.out_channels))
    why = "slopes must be 1 or out_channels floats";
  for (gint i = 0; !why && i < n_slopes; i++)
    if (!isfinite (slopes[i]))
      why = "slopes must be finite";
  if (why) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "conv PReLU: %s", why);
    return FALSE;
  }
  for (gint o = 0; o < c->g.out_channels; o++)
    c->fslope[o] = slopes[n_slopes == 1 ? 0 : o];
  c->prelu = TRUE;
  return TRUE;
}

void
m2i_npu_conv_free (M2iNpuConv *c)
{
  if (!c)
    return;
  g_free (c->tiles);
  g_free (c->packed);
  g_free (c->bias);
  g_free (c->mult);
  g_free (c->lshift);
  g_free (c->rshift);
  g_free (c->nmult);
  g_free (c->nlshift);
  g_free (c->nrshift);
  g_free (c->fbias);
  g_free (c->fslope);
  g_free (c->tap_off);
  g_free (c->own_scratch);
  g_free (c);
}

M2iNpuPrecision
m2i_npu_conv_get_precision (const M2iNpuConv *c)
{
  return c->precision;
}

void
m2i_npu_conv_get_output_size (const M2iNpuConv *c, gint *out_h, gint *out_w)
{
  if (out_h)
    *out_h = c->oh;
  if (out_w)
    *out_w = c->ow;
}

const char *
m2i_npu_conv_get_path (const M2iNpuConv *c)
{
  if (c->path == NPU_PATH_DEPTHWISE)
    return dw_names[c->precision == M2I_NPU_FP16][c->dw_isa];
  return path_names[c->precision == M2I_NPU_FP16][c->path];
}

gsize
m2i_npu_conv_get_scratch_size (const M2iNpuConv *c)
{
  return c->scratch_bytes;
}

/* ---- run ------------------------------------------------------------------------ */

typedef struct {
  const M2iNpuConv *c;
  const guint8 *in;          /* batch item's first element */
  gint64 in_block, in_row;   /* elements */
  guint8 *out;
  gint64 out_block, out_row; /* bytes */
  guint8 *pad;
  NpuTileFunc fn[3];         /* by nz */
} RunJob;

static void
fill_pad (const M2iNpuConv *c, guint8 *d, gint64 n)
{
  if (c->pad_format == NPU_PAD_U8)
    memset (d, (guint8) (c->in_zero + 128), n);
  else
    memset (d, 0, n * c->pad_elem);    /* s16 x - z = 0; f32 +0.0 */
}

/* Converts @n pixels of 8 lanes, source pixels @step elements apart. */
static void
convert_pixels (const M2iNpuConv *c, guint8 *d, const guint8 *s, gint64 step,
    gint64 n, gint lanes)
{
  NpuConvertFunc fast = npu_x86_convert_func ();
  if (fast)
    fast (c, d, s, step, n);
  else switch (c->pad_format) {
    case NPU_PAD_U8:
      for (gint64 p = 0; p < n; p++)
        for (gint l = 0; l < 8; l++)
          d[p * 8 + l] = s[p * step + l] ^ 0x80;
      break;
    case NPU_PAD_S16: {
      gint16 *d16 = (gint16 *) d;
      const gint8 *s8 = (const gint8 *) s;
      for (gint64 p = 0; p < n; p++)
        for (gint l = 0; l < 8; l++)
          d16[p * 8 + l] = (gint16) (s8[p * step + l] - c->in_zero);
      break;
    }
    case NPU_PAD_F32: {
      float *df = (float *) d;
      const m2i_f16 *sh = (const m2i_f16 *) s;
      if (step == 8)
        m2i_f16_to_f32_n (sh, df, (gsize) n * 8);
      else
        for (gint64 p = 0; p < n; p++)
          m2i_f16_to_f32_n (sh + p * step, df + p * 8, 8);
      break;
    }
  }
  if (lanes < 8)                        /* channels beyond C read as padding */
    for (gint64 p = 0; p < n; p++)
      fill_pad (c, d + (p * 8 + lanes) * c->pad_elem, 8 - lanes);
}

/* The folded copy: lane l of virtual block cb at virtual column x is
 * channel k % C of input column x*sx + (k / C)*dx - pl, k = 8*cb + l.
 * Each lane is a strided walk over the input row, converted in place. */
static void
pad_rows_folded (gint begin, gint end, gint slice, gpointer data)
{
  const RunJob *j = data;
  const M2iNpuConv *c = j->c;
  const M2iNpuConvGeometry *g = &c->g;
  gsize ies = c->precision == M2I_NPU_FP16 ? 2 : 1;
  gint sx = g->stride_w;
  for (gint item = begin; item < end; item++) {
    gint py = item / c->cb_in, cb = item % c->cb_in;
    guint8 *d = j->pad + (py * c->row_pitch + cb * c->cb_pitch) * c->pad_elem;
    gint iy = py - g->pad_top;
    fill_pad (c, d, c->cb_pitch);
    if (iy < 0 || iy >= g->in_h)
      continue;
    const guint8 *s = j->in + iy * j->in_row * ies;
    for (gint l = 0; l < 8 && cb * 8 + l < c->kg.in_channels; l++) {
      gint k = cb * 8 + l, ch = k % g->in_channels;
      gint off = (k / g->in_channels) * g->dilation_w - g->pad_left;
      /* x with 0 <= x*sx + off < in_w */
      gint x0 = off >= 0 ? 0 : CEIL_DIV (-off, sx);
      gint x1 = MIN (c->ow, CEIL_DIV (g->in_w - off, sx));
      const guint8 *sp = s + ((gint64) (x0 * sx + off) * 8 + ch) * ies;
      gint64 step = (gint64) sx * 8;
      switch (c->pad_format) {
        case NPU_PAD_U8: {
          guint8 *dp = d + l;
          for (gint x = x0; x < x1; x++, sp += step)
            dp[x * 8] = *sp ^ 0x80;
          break;
        }
        case NPU_PAD_S16: {
          gint16 *dp = (gint16 *) d + l;
          for (gint x = x0; x < x1; x++, sp += step)
            dp[x * 8] = (gint16) (*(const gint8 *) sp - c->in_zero);
          break;
        }
        case NPU_PAD_F32: {
          /* gather, widen with F16C when present, scatter */
          enum { CHUNK = 256 };
          m2i_f16 h[CHUNK];
          float f[CHUNK];
          float *dp = (float *) d + l;
          const m2i_f16 *hp = (const m2i_f16 *) sp;
          for (gint xc = x0; xc < x1; xc += CHUNK) {
            gint n = MIN (CHUNK, x1 - xc);
            for (gint i = 0; i < n; i++)
              h[i] = hp[(gint64) (xc - x0 + i) * step];
            m2i_f16_to_f32_n (h, f, n);
            for (gint i = 0; i < n; i++)
              dp[(gint64) (xc + i) * 8] = f[i];
          }
          break;
        }
      }
    }
  }
}

static void
pad_rows (gint begin, gint end, gint slice, gpointer data)
{
  const RunJob *j = data;
  const M2iNpuConv *c = j->c;
  const M2iNpuConvGeometry *g = &c->kg;
  gsize ies = c->precision == M2I_NPU_FP16 ? 2 : 1;
  gint sx = g->stride_w;
  for (gint item = begin; item < end; item++) {
    gint py = item / c->cb_in, cb = item % c->cb_in;
    guint8 *d = j->pad + (py * c->row_pitch + cb * c->cb_pitch) * c->pad_elem;
    gint iy = py - g->pad_top;
    if (iy < 0 || iy >= g->in_h) {
      fill_pad (c, d, c->cb_pitch);
      continue;
    }
    const guint8 *s = j->in + (iy * j->in_row + cb * j->in_block) * ies;
    gint lanes = MIN (8, g->in_channels - cb * 8);
    for (gint ph = 0; ph < sx; ph++) {
      guint8 *dp = d + (gint64) ph * c->pws * 8 * c->pad_elem;
      /* stored column k holds padded x = k*sx + ph, input x - pad_left */
      gint k_lo = MAX (0, CEIL_DIV (g->pad_left - ph, sx));
      gint k_hi = MIN (c->pws, CEIL_DIV (g->pad_left + g->in_w - ph, sx));
      k_hi = MAX (k_hi, k_lo);
      fill_pad (c, dp, (gint64) k_lo * 8);
      gint ix0 = k_lo * sx + ph - g->pad_left;
      convert_pixels (c, dp + (gint64) k_lo * 8 * c->pad_elem, s + (gint64) ix0 * 8 * ies,
          (gint64) sx * 8, k_hi - k_lo, lanes);
      fill_pad (c, dp + (gint64) k_hi * 8 * c->pad_elem, (gint64) (c->pws - k_hi) * 8);
    }
  }
}

static void
conv_rows (gint begin, gint end, gint slice, gpointer data)
{
  const RunJob *j = data;
  const M2iNpuConv *c = j->c;
  gsize oes = c->precision == M2I_NPU_FP16 ? 2 : 1;
  for (gint item = begin; item < end; item++) {
    const NpuTile *T = &c->tiles[item / c->oh];
    gint oy = item % c->oh;
    NpuTileArgs A;
    A.conv = c;
    A.cb_pitch = c->cb_pitch * (gint64) c->pad_elem;
    A.ncb = T->ncb;
    A.w = c->packed + T->w_offset;
    gint ch0 = T->ob0 * 8;
    A.bias = A.mult = A.lshift = A.rshift = A.nmult = A.nlshift = A.nrshift = NULL;
    A.fbias = A.fslope = NULL;
    if (c->precision == M2I_NPU_INT8) {
      A.bias = c->bias + ch0;
      A.mult = c->mult + ch0;
      A.lshift = c->lshift + ch0;
      A.rshift = c->rshift + ch0;
      if (c->prelu) {
        A.nmult = c->nmult + ch0;
        A.nlshift = c->nlshift + ch0;
        A.nrshift = c->nrshift + ch0;
      }
    } else {
      A.fbias = c->fbias + ch0;
      if (c->prelu)
        A.fslope = c->fslope + ch0;
    }
    A.out_block = j->out_block;
    A.nb = T->nb;
    const guint8 *arow = j->pad
        + ((gint64) oy * c->g.stride_h * c->row_pitch + T->cb0 * c->cb_pitch) * c->pad_elem;
    guint8 *orow = j->out + oy * j->out_row + T->ob0 * j->out_block;
    for (gint ox0 = 0; ox0 < c->ow; ox0 += c->M) {
      A.a = arow + (gint64) ox0 * 8 * c->pad_elem;
      A.out = orow + (gint64) ox0 * 8 * oes;
      A.m = MIN (c->M, c->ow - ox0);
      j->fn[T->nz] (&A);
    }
  }
}

static gboolean
pick_kernels (M2iNpuConv *c, RunJob *j)
{
  switch (c->path) {
    case NPU_PATH_C:
      j->fn[1] = c->precision == M2I_NPU_INT8 ? c_tile_int8 : c_tile_fp16;
      return TRUE;
    case NPU_PATH_DEPTHWISE:
      j->fn[1] = npu_x86_dw_func (c->dw_isa, c->precision);
      if (!j->fn[1])
        j->fn[1] = c->precision == M2I_NPU_INT8 ? dw_tile_int8 : dw_tile_fp16;
      return TRUE;
    default:
      j->fn[1] = npu_x86_tile_func (c->path, c->precision, c->M, 1);
      j->fn[2] = npu_x86_tile_func (c->path, c->precision, c->M, 2);
      return j->fn[1] && j->fn[2];
  }
}

gboolean
m2i_npu_conv_run (M2iNpuConv *c, const M2iNpuTensor *in, M2iNpuTensor *out,
    gpointer scratch, gint n_threads, GError **error)
{
  if (!c) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "conv: layer is NULL");
    return FALSE;
  }
  const M2iNpuConvGeometry *g = &c->g;
  if (!npu_tensor_expect (in, "conv input", c->precision, -1, g->in_channels,
          g->in_h, g->in_w, error)
      || !npu_tensor_expect (out, "conv output", c->precision, in->n,
          g->out_channels, c->oh, c->ow, error))
    return FALSE;
  RunJob j = { c };
  if (!pick_kernels (c, &j)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED,
        "conv: no %s kernel for %d pixels per tile", m2i_npu_conv_get_path (c), c->M);
    return FALSE;
  }
  if (!scratch) {
    if (!c->own_scratch)
      c->own_scratch = g_malloc (c->scratch_bytes);
    scratch = c->own_scratch;
  }
  j.pad = m2i_align_pointer (scratch, 64);
  gsize es = npu_precision_size (c->precision);
  gint64 ib, ir, ibt, ob, orow, obt;
  npu_tensor_strides (in, &ib, &ir, &ibt);
  npu_tensor_strides (out, &ob, &orow, &obt);
  j.in_block = ib;
  j.in_row = ir;
  j.out_block = ob * (gint64) es;
  j.out_row = orow * (gint64) es;
  for (gint b = 0; b < in->n; b++) {
    j.in = (const guint8 *) in->data + b * ibt * (gint64) es;
    j.out = (guint8 *) out->data + b * obt * (gint64) es;
    m2i_parallel_for (c->ph * c->cb_in, n_threads, c->pad_grain,
        c->fold ? pad_rows_folded : pad_rows, &j);
    m2i_parallel_for (c->n_tiles * c->oh, n_threads, c->conv_grain, conv_rows, &j);
  }
  return TRUE;
}

/* ---- cost model ------------------------------------------------------------------ */

/* The simulated device (docs/npu.md; figures in m2i/device-model.h): the
 * MAC array or the DMA, whichever takes longer, plus the layer's setup.
 * Depthwise layers use one lane of eight along the input block. */

void
m2i_npu_conv_get_cost (const M2iNpuConv *c, gint batch, M2iNpuCost *cost)
{
  const M2iNpuConvGeometry *g = &c->g;
  gsize es = npu_precision_size (c->precision);
  guint64 pixels = (guint64) MAX (batch, 0) * c->oh * c->ow;
  guint64 blocks = 0;                  /* (out block, in block) pairs */
  for (gint i = 0; i < c->n_tiles; i++)
    blocks += (guint64) c->tiles[i].nb * (c->path == NPU_PATH_DEPTHWISE ? 1 : c->tiles[i].ncb);
  cost->macs = pixels * c->taps * blocks * (c->path == NPU_PATH_DEPTHWISE ? 8 : 64);
  cost->bytes_in = (guint64) MAX (batch, 0) * g->in_h * g->in_w * CEIL8 (g->in_channels) * 8 * es;
  cost->bytes_out = pixels * c->cb_out * 8 * es;
  cost->bytes_weights = m2i_npu_weights_blocked_count (g->out_channels,
      g->in_channels / g->groups, g->kernel_h, g->kernel_w) * es;
  guint64 rate = c->precision == M2I_NPU_INT8 ? DEVICE_NPU_INT8_MACS_PER_CYCLE
      : DEVICE_NPU_FP16_MACS_PER_CYCLE;
  if (c->path == NPU_PATH_DEPTHWISE)
    rate /= 8;
  guint64 compute = CEIL_DIV (cost->macs, rate);
  guint64 dma = CEIL_DIV (cost->bytes_in + cost->bytes_out + cost->bytes_weights,
      DEVICE_DMA_BYTES_PER_CYCLE);
  cost->cycles = MAX (compute, dma) + DEVICE_NPU_LAYER_SETUP_CYCLES;
}
