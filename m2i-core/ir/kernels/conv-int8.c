/* Convolution on integers (conv-int8.h): compiling a layer (weights packed,
 * zero-point term folded), the per-inference copy of the input into
 * quantized channel quads, the tiled product with its plain-C
 * micro-kernel, the padding correction for zero points between two codes,
 * and the op kernel the low-precision pass installs. Depthwise layers are
 * in conv-int8-dw.c, the VNNI, AVX2 and AVX-512 kernels in
 * conv-int8-x86.c.
 */
#include "conv-int8.h"
#include <base/m2i-align.h>

#include <math.h>
#include <string.h>

#define MR M2I_K_I8_MR
#define NR M2I_K_I8_NR
#define MAX_PHASES M2I_K_I8_MAX_PHASES

struct _M2iKConvInt8 {
  M2iKConvGeom g;
  M2iKI8Dw *dw;                        /* depthwise: everything is there */
  /* Padding correction (z between two codes): per output channel
   * mul·(z - zc) and Σ q per tap; NULL when z is a code. */
  float *pad_coef, *tap_sum;
  gint64 cin_g, cout_g;
  gint64 cq_g;                         /* channel quads per group */
  gint64 taps, k4;                     /* k4 = cq_g · taps steps of 4 products */
  gint64 row_blocks;                   /* MR-row blocks per group */
  gint8 *packed;                       /* [group][row block][k4][MR][4] */
  gint16 *packed16;                    /* the same as int16, for the AVX2 kernel */
  float *mul, *add;                    /* per output channel, padded to MR */
  gboolean relu;
  M2iKI8Quant q;                       /* the quantizer, as FakeQuantize's level */
  /* Source: per image, quads of phase planes hq × wq of 4-byte pixels. */
  gint n_phases;
  gint64 phase_row[MAX_PHASES], phase_col[MAX_PHASES];
  gint64 hq, wq, quad_px;              /* quad_px = n_phases · hq · wq */
  gint64 *off;                         /* k4 byte offsets of B rows */
  gint slices;                         /* threads it was made for */
  gsize src_bytes;                     /* one image's source, slack included */
  M2iKI8CopyRow copy_row;
  M2iKI8Micro micro;
  const char *kernel_name;
};

/* ---- compiling --------------------------------------------------------- */

/* The zero point of range @i: real 0 is code -out_lo / s_x. */
double
ir_k_i8_zero_point (const M2iKConvInt8Params *p, gint64 i)
{
  return -(double) p->out_lo[i] * (p->levels - 1) / ((double) p->out_hi[i] - p->out_lo[i]);
}

const char *
ir_k_conv_int8_unsupported (const M2iKConvInt8Params *p)
{
  const M2iKConvGeom *g = &p->g;
  if (p->levels < 2 || p->levels > 256)
    return "the quantizer has more than 256 levels";
  if (g->groups < 1 || g->c_in % g->groups || g->c_out % g->groups)
    return "the groups do not divide the channels";
  gint64 cin_g = g->c_in / g->groups;
  gboolean dw = cin_g == 1 && g->c_out == g->groups && g->groups > 1;
  if (g->groups > 1 && cin_g % 4 && !dw)
    return "grouped, with input channels per group neither 1 nor a multiple of 4";
  if (p->n_ranges != 1 && !(dw && p->n_ranges == g->c_in))
    return "one quantizer per channel on a layer that is not depthwise";
  for (gint64 i = 0; i < p->n_ranges; i++)
    if (!isfinite (p->in_lo[i]) || !isfinite (p->in_hi[i]) || !isfinite (p->out_lo[i]) ||
        !isfinite (p->out_hi[i]) || !(p->out_hi[i] > p->out_lo[i]))
      return "the quantizer's ranges are not finite or its output range is empty";
  /* |Σ q·k| <= K·128·255 must stay below 2^31 */
  if (cin_g * g->kh * g->kw > 65000)
    return "more products per output than an int32 sum holds exactly";
  if (g->sh * g->sw > MAX_PHASES || g->kh > 64 || g->kw > 64)
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
ir_k_i8_quantizer (const M2iKConvInt8Params *p, gint64 i, double *z)
{
  *z = ir_k_i8_zero_point (p, i);
  return (M2iKI8Quant) { p->in_lo[i], p->in_hi[i] - p->in_lo[i], (float) (p->levels - 1),
    MIN (p->in_lo[i], p->in_hi[i]), MAX (p->in_lo[i], p->in_hi[i]),
    (guint8) CLAMP (nearbyint (*z), 0, p->levels - 1) };
}

/* ---- padding correction ---------------------------------------------------- */

void
ir_k_i8_pad_fix (const M2iKConvGeom *g, gint64 channels, const float *tap_sum,
    const float *coef, float *out, gboolean relu)
{
  gint64 taps = g->kh * g->kw, ohw = g->oh * g->ow;
  /* columns whose taps all fall inside the image: [xa, xb) */
  gint64 xa = (g->pl + g->sw - 1) / g->sw;
  gint64 xb = g->w - 1 + g->pl - (g->kw - 1) * g->dw < 0 ? 0 :
      (g->w - 1 + g->pl - (g->kw - 1) * g->dw) / g->sw + 1;
  xb = MIN (xb, g->ow);
  xa = MIN (xa, xb);
  for (gint64 y = 0; y < g->oh; y++) {
    gboolean row_out = FALSE;
    for (gint64 ky = 0; ky < g->kh; ky++) {
      gint64 iy = y * g->sh - g->pt + ky * g->dh;
      row_out |= iy < 0 || iy >= g->h;
    }
    for (gint64 x = 0; x < g->ow; x++) {
      if (!row_out && x == xa)
        x = xb;
      if (x >= g->ow)
        break;
      for (gint64 c = 0; c < channels; c++) {
        if (coef[c] == 0.0f)
          continue;
        float sum = 0.0f;
        for (gint64 t = 0; t < taps; t++) {
          gint64 iy = y * g->sh - g->pt + t / g->kw * g->dh;
          gint64 ix = x * g->sw - g->pl + t % g->kw * g->dw;
          if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
            sum += tap_sum[c * taps + t];
        }
        out[c * ohw + y * g->ow + x] += coef[c] * sum;
      }
    }
  }
  if (relu)
    for (gint64 i = 0; i < channels * ohw; i++)
      out[i] = out[i] > 0.0f ? out[i] : 0.0f;
}

void
ir_k_conv_int8_free (M2iKConvInt8 *c)
{
  if (!c)
    return;
  g_free (c->packed);
  g_free (c->packed16);
  g_free (c->mul);
  g_free (c->add);
  g_free (c->off);
  g_free (c->pad_coef);
  g_free (c->tap_sum);
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
  const M2iKConvGeom *g = &p->g;
  M2iKConvInt8 *c = g_new0 (M2iKConvInt8, 1);
  c->g = *g;
  c->slices = CLAMP (n_threads, 1, 64);
  if (g->c_in == g->groups && g->c_out == g->groups && g->groups > 1) {
    c->dw = ir_k_i8_dw_new (p, c->slices);
    return c;
  }
  c->cin_g = g->c_in / g->groups;
  c->cout_g = g->c_out / g->groups;
  c->cq_g = (c->cin_g + 3) / 4;
  c->taps = g->kh * g->kw;
  c->k4 = c->cq_g * c->taps;
  c->row_blocks = (c->cout_g + MR - 1) / MR;
  c->relu = p->relu;
  double z;
  c->q = ir_k_i8_quantizer (p, 0, &z);

  /* Phase planes: the padded input's pixels (ry + sh·i, rx + sw·j), one
   * plane per (row, column) phase some tap reads. */
  gint64 hp = g->h + g->pt + g->pb, wp = g->w + g->pl + g->pr;
  c->hq = (hp + g->sh - 1) / g->sh;
  c->wq = (wp + g->sw - 1) / g->sw;
  gint64 *tap_off = g_new (gint64, c->taps);
  for (gint64 t = 0; t < c->taps; t++) {
    gint64 ky = t / g->kw * g->dh, kx = t % g->kw * g->dw;
    gint64 ry = ky % g->sh, rx = kx % g->sw;
    gint ph = 0;
    while (ph < c->n_phases && (c->phase_row[ph] != ry || c->phase_col[ph] != rx))
      ph++;
    if (ph == c->n_phases) {
      g_assert (ph < MAX_PHASES);      /* at most sh · sw <= 16: the pass checks */
      c->phase_row[ph] = ry;
      c->phase_col[ph] = rx;
      c->n_phases++;
    }
    tap_off[t] = ph * c->hq * c->wq + (ky / g->sh) * c->wq + kx / g->sw;
  }
  c->quad_px = c->n_phases * c->hq * c->wq;
  c->off = g_new (gint64, c->k4);
  gint64 max_off = 0;
  for (gint64 q = 0; q < c->cq_g; q++)
    for (gint64 t = 0; t < c->taps; t++) {
      c->off[q * c->taps + t] = (q * c->quad_px + tap_off[t]) * 4;
      max_off = MAX (max_off, tap_off[t]);
    }
  g_free (tap_off);
  /* The last panel reads up to NR grid columns past the grid, each at most
   * max_off further: slack after the last quad (those columns are dropped). */
  gint64 quads = g->groups * c->cq_g;
  c->src_bytes = m2i_align_up ((gsize) (quads * c->quad_px + max_off + 2 * NR) * 4, 64);

  /* Weights: [group][row block][k4][MR][4], step p = (quad, tap). */
  gsize block = (gsize) c->k4 * MR * 4;
  c->packed = g_new0 (gint8, block * g->groups * c->row_blocks);
  gint64 rows_pad = g->groups * c->row_blocks * MR;
  c->mul = g_new0 (float, rows_pad);
  c->add = g_new0 (float, rows_pad);
  double s_x = ((double) p->out_hi[0] - p->out_lo[0]) / (p->levels - 1);
  gboolean fix = z != c->q.z && (g->pt || g->pl || g->pb || g->pr);
  if (fix) {
    c->pad_coef = g_new (float, g->c_out);
    c->tap_sum = g_new0 (float, g->c_out * c->taps);
  }
  for (gint64 gi = 0; gi < g->groups; gi++)
    for (gint64 oc = 0; oc < c->cout_g; oc++) {
      gint64 o = gi * c->cout_g + oc;
      gint8 *dst = c->packed + (gi * c->row_blocks + oc / MR) * block + (oc % MR) * 4;
      const gint8 *w = p->weights + o * c->cin_g * c->taps;
      gint64 sum = 0;
      for (gint64 ci = 0; ci < c->cin_g; ci++)
        for (gint64 t = 0; t < c->taps; t++) {
          gint8 q = w[ci * c->taps + t];
          sum += q;
          dst[((ci / 4) * c->taps + t) * MR * 4 + ci % 4] = q;
        }
      double m = s_x * p->w_scale[o];
      gint64 r = gi * c->row_blocks * MR + oc;
      if (fix) {
        c->pad_coef[o] = (float) (m * (z - c->q.z));
        for (gint64 ci = 0; ci < c->cin_g; ci++)
          for (gint64 t = 0; t < c->taps; t++)
            c->tap_sum[o * c->taps + t] += w[ci * c->taps + t];
      }
      c->mul[r] = (float) m;
      c->add[r] = (float) ((p->bias ? p->bias[o] : 0.0) - m * z * sum);
    }

  M2iCpuFlags f = m2i_cpu_flags ();
  c->micro = NULL;
  if (f & M2I_CPU_AVX512VNNI) {
    c->micro = ir_k_i8_micro_vnni ();
    c->kernel_name = "vnni";
  }
  if (!c->micro && (f & M2I_CPU_AVX2)) {
    c->micro = ir_k_i8_micro_avx2 ();
    c->kernel_name = "avx2";
    gsize n = block * g->groups * c->row_blocks;
    c->packed16 = g_new (gint16, n);
    for (gsize i = 0; i < n; i++)
      c->packed16[i] = c->packed[i];
  }
  if (!c->micro)
    c->kernel_name = "c";
  c->copy_row = ir_k_i8_copy_row_avx512 ();
  if (!c->copy_row)
    c->copy_row = ir_k_i8_copy_row_c;
  return c;
}

gsize
ir_k_conv_int8_scratch_bytes (const M2iKConvInt8 *c)
{
  return c->dw ? ir_k_i8_dw_scratch_bytes (c->dw) : c->src_bytes;
}

const char *
ir_k_conv_int8_kernel_name (const M2iKConvInt8 *c)
{
  return c->dw ? ir_k_i8_dw_kernel_name (c->dw) : c->kernel_name;
}

/* ---- the plain-C micro-kernel and the scalar epilogue ------------------ */

void
ir_k_i8_store_row (const float *v, gint r, const M2iKI8Store *st)
{
  float *row = st->out + r * st->ldo;
  for (gint gi = 0; gi < NR / 16; gi++)
    for (gint q = st->run_start[gi]; q < st->run_start[gi + 1]; q++)
      for (gint l = 0; l < 16; l++) {
        if (!(st->run_mask[q] >> l & 1))
          continue;
        float x = v[gi * 16 + l];
        if (st->relu)
          x = x > 0.0f ? x : 0.0f;
        row[st->run_at[q] + l] = x;
      }
}

static void
micro_c (gint k4, const void *a8, const guint8 *b, const gint64 *off, const M2iKI8Store *st)
{
  const gint8 *a = a8;
  gint32 acc[MR][NR];
  memset (acc, 0, sizeof acc);
  for (gint p = 0; p < k4; p++) {
    const guint8 *bp = b + off[p];
    const gint8 *ap = a + (gsize) p * MR * 4;
    for (gint r = 0; r < MR; r++)
      for (gint n = 0; n < NR; n++) {
        gint32 s = 0;
        for (gint j = 0; j < 4; j++)
          s += (gint32) ap[r * 4 + j] * (gint32) bp[n * 4 + j];
        acc[r][n] += s;
      }
  }
  for (gint r = 0; r < st->rows; r++) {
    float v[NR];
    for (gint n = 0; n < NR; n++)
      v[n] = (float) acc[r][n] * st->mul[r] + st->add[r];
    ir_k_i8_store_row (v, r, st);
  }
}

/* ---- the source: quantized channel quads -------------------------------- */

/* The FakeQuantize level of @v, in f32 as fake-quantize.c computes it
 * (NaN: 0). */
static inline guint8
quant (const M2iKI8Quant *q, float v)
{
  float k = nearbyintf ((v - q->lo) / q->d * q->lm1);
  k = v <= q->mn ? 0.0f : v > q->mx ? q->lm1 : k >= 0.0f ? k : 0.0f;
  return (guint8) (gint32) k;
}

void
ir_k_i8_quant_row_c (const M2iKI8Quant *q, const float *x, gint64 n, guint8 *d)
{
  for (gint64 i = 0; i < n; i++)
    d[i] = quant (q, x[i]);
}

void
ir_k_i8_copy_row_c (const M2iKI8Quant *q, const float *const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  for (gint j = 0; j < 4; j++) {
    const float *row = rows[j];
    for (gint64 x = 0; x < n; x++) {
      gint64 ix = x0 + x * sw;
      d[x * 4 + j] = !row ? fill[j] : ix >= 0 && ix < w ? quant (q, row[ix]) : q->z;
    }
  }
}

typedef struct {
  const M2iKConvInt8 *c;
  const float *in;                     /* one image */
  guint8 *src;
} CopyJob;

/* Channel quads [begin, end) of one image: lane j of quad q is input
 * channel group·cin_g + 4·(q mod cq_g) + j (0 past the group's channels);
 * pixel (i, j) of phase (ry, rx) is padded pixel (ry + sh·i, rx + sw·j),
 * z outside the image. */
static void
copy_quads (gint begin, gint end, gint slice, gpointer data)
{
  const CopyJob *job = data;
  const M2iKConvInt8 *c = job->c;
  const M2iKConvGeom *g = &c->g;
  for (gint q = begin; q < end; q++) {
    gint64 gi = q / c->cq_g, c0 = 4 * (q % c->cq_g);
    guint8 *quad = job->src + (gsize) q * c->quad_px * 4;
    guint8 fill[4];
    for (gint j = 0; j < 4; j++)
      fill[j] = c0 + j < c->cin_g ? c->q.z : 0;
    for (gint ph = 0; ph < c->n_phases; ph++)
      for (gint64 i = 0; i < c->hq; i++) {
        gint64 y = c->phase_row[ph] + g->sh * i - g->pt;
        const float *rows[4];
        for (gint j = 0; j < 4; j++)
          rows[j] = c0 + j < c->cin_g && y >= 0 && y < g->h ?
              job->in + ((gi * c->cin_g + c0 + j) * g->h + y) * g->w : NULL;
        c->copy_row (&c->q, rows, fill, c->phase_col[ph] - g->pl, g->sw, g->w, c->wq,
            quad + ((ph * c->hq + i) * c->wq) * 4);
      }
  }
}

/* ---- the product --------------------------------------------------------- */

typedef struct {
  const M2iKConvInt8 *c;
  const guint8 *src;
  float *out;                          /* this image's output */
  gint64 panels;                       /* column panels per group */
  gint64 chunk_blocks;                 /* row blocks per task */
  gint64 chunks;                       /* tasks per (group, panel) */
} GemmJob;

/* The runs of the panel at grid column @n0 (see M2iKI8Store). */
static void
panel_runs (const M2iKConvInt8 *c, gint64 n0, guint8 *run_start, guint16 *run_mask,
    gint32 *run_at)
{
  const M2iKConvGeom *g = &c->g;
  gint n = 0;
  if (c->wq == g->ow) {
    /* no dropped columns: a run per group, up to the plane's end */
    gint64 end = g->oh * g->ow;
    for (gint gi = 0; gi < NR / 16; gi++) {
      gint64 at = n0 + 16 * gi, m = CLAMP (end - at, 0, 16);
      run_start[gi] = (guint8) n;
      if (m > 0) {
        run_mask[n] = (guint16) ((1u << m) - 1);
        run_at[n++] = (gint32) at;
      }
    }
    run_start[NR / 16] = (guint8) n;
    return;
  }
  gint64 y = n0 / c->wq, x = n0 % c->wq;
  for (gint gi = 0; gi < NR / 16; gi++) {
    run_start[gi] = (guint8) n;
    gint first = n;
    for (gint l = 0; l < 16; l++) {
      if (y < g->oh && x < g->ow) {
        gint32 at = (gint32) (y * g->ow + x - l);
        if (n == first || run_at[n - 1] != at) {
          run_mask[n] = 0;
          run_at[n++] = at;
        }
        run_mask[n - 1] |= (guint16) (1u << l);
      }
      if (++x == c->wq) {
        x = 0;
        y++;
      }
    }
  }
  run_start[NR / 16] = (guint8) n;
}

static void
gemm_slice (gint begin, gint end, gint slice, gpointer data)
{
  const GemmJob *j = data;
  const M2iKConvInt8 *c = j->c;
  const M2iKConvGeom *g = &c->g;
  gsize ohw = (gsize) g->oh * g->ow, block = (gsize) c->k4 * MR * 4;
  guint8 run_start[NR / 16 + 1];
  guint16 run_mask[NR];
  gint32 run_at[NR];
  for (gint t = begin; t < end; t++) {
    gint64 chunk = t % j->chunks, rest = t / j->chunks;
    gint64 panel = rest % j->panels, gi = rest / j->panels;
    gint64 n0 = panel * NR;
    panel_runs (c, n0, run_start, run_mask, run_at);
    const guint8 *b = j->src + (gsize) gi * c->cq_g * c->quad_px * 4 + n0 * 4;
    gint64 rb_end = MIN ((chunk + 1) * j->chunk_blocks, c->row_blocks);
    for (gint64 rb = chunk * j->chunk_blocks; rb < rb_end; rb++) {
      gint64 oc = rb * MR, row = gi * c->row_blocks * MR + oc;
      M2iKI8Store st = { j->out + (gi * c->cout_g + oc) * ohw, ohw,
        (gint) MIN (MR, c->cout_g - oc), c->mul + row, c->add + row,
        c->relu && !c->pad_coef, run_start, run_mask, run_at };
      gsize at = (gi * c->row_blocks + rb) * block;
      if (c->packed16)
        c->micro ((gint) c->k4, c->packed16 + at, b, c->off, &st);
      else
        (c->micro ? c->micro : micro_c) ((gint) c->k4, c->packed + at, b, c->off, &st);
    }
  }
}

void
ir_k_conv_int8_run (const M2iKConvInt8 *c, const float *in, float *out, gpointer scratch,
    gint slices)
{
  const M2iKConvGeom *g = &c->g;
  slices = CLAMP (slices, 1, c->slices);
  if (c->dw) {
    ir_k_i8_dw_run (c->dw, in, out, scratch, slices);
    return;
  }
  guint8 *src = scratch;
  gint64 quads = g->groups * c->cq_g;
  gint64 grid = g->oh * c->wq;
  gint64 panels = (grid + NR - 1) / NR;
  /* Panels are the tasks; when they are few and do not share out evenly,
   * the row blocks are cut into chunks as well. */
  gint64 tasks = g->groups * panels, chunks = 1;
  if (slices > 1 && tasks % slices && tasks < 8 * slices && c->row_blocks >= 2 * slices)
    chunks = slices;
  gint64 chunk_blocks = (c->row_blocks + chunks - 1) / chunks;
  chunks = (c->row_blocks + chunk_blocks - 1) / chunk_blocks;
  /* the slack past the last quad (read by dropped columns only) */
  gsize used = (gsize) quads * c->quad_px * 4;
  memset (src + used, c->q.z, c->src_bytes - used);
  for (gint64 n = 0; n < g->batch; n++) {
    CopyJob cj = { c, in + n * g->c_in * g->h * g->w, src };
    ir_k_parallel_for ((gint) quads, slices, 1, copy_quads, &cj);
    GemmJob gj = { c, src, out + n * g->c_out * g->oh * g->ow, panels, chunk_blocks, chunks };
    ir_k_parallel_for ((gint) (tasks * chunks), slices, 1, gemm_slice, &gj);
    if (c->pad_coef)
      ir_k_i8_pad_fix (g, g->c_out, c->tap_sum, c->pad_coef, gj.out, c->relu);
  }
}

/* ---- the op kernel ----------------------------------------------------- */

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
