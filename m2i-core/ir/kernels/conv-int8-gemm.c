/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The GEMM path of the integer convolution (conv-int8.h): compiling a
 * layer (weights packed, zero-point term folded), the per-inference copy
 * of the input into channel quads, the tiled product with its plain-C
 * micro-kernel and scalar epilogue.
 */
#include "conv-int8.h"
#include <base/m2i-align.h>

#include <math.h>
#include <string.h>

#define MR M2I_K_I8_MR
#define NR M2I_K_I8_NR
#define MAX_PHASES M2I_K_I8_MAX_PHASES

struct _M2iKI8Gemm {
  M2iKConvGeom g;
  gint64 cin_g, cout_g;
  gint64 cq_g;                         /* channel quads per group */
  gint64 taps, k4;                     /* k4 = cq_g · taps steps of 4 products */
  gint64 row_blocks;                   /* MR-row blocks per group */
  gint8 *packed;                       /* [group][row block][k4][MR][4] */
  gint16 *packed16;                    /* the same as int16, for the AVX2 kernel */
  gint8 *packed_n;                     /* [group][block pair][k4][2·MR][4]: the narrow tile's */
  M2iKI8Narrow narrow;                 /* the whole grid within 16 columns */
  gint32 *ibias;                       /* per output channel, padded to MR: -zc·Σq */
  float *mul, *add;
  float *dmul, *dadd;                  /* codes straight from the sum, or NULL */
  M2iKI8Out *o;                        /* the epilogue */
  M2iKI8PadFix *pad_fix;               /* z between two codes, and padding */
  M2iKI8Quant q;                       /* the input's levels */
  gboolean codes_in;
  /* Source: per image, quads of phase planes hq × wq of 4-byte pixels. */
  gint n_phases;
  gint64 phase_row[MAX_PHASES], phase_col[MAX_PHASES];
  gint64 hq, wq, quad_px;              /* quad_px = n_phases · hq · wq */
  gint64 *off;                         /* k4 byte offsets of B rows */
  gsize src_bytes;                     /* one image's source, slack included */
  gsize fix_bytes;                     /* per slice: a tile's padding terms */
  gint slices;
  M2iKI8CopyRow copy_row;
  M2iKI8Micro micro;
  const char *kernel_name;
};

void
ir_k_i8_gemm_free (M2iKI8Gemm *m)
{
  if (!m)
    return;
  g_free (m->packed);
  g_free (m->packed16);
  g_free (m->packed_n);
  g_free (m->ibias);
  g_free (m->mul);
  g_free (m->add);
  g_free (m->dmul);
  g_free (m->dadd);
  g_free (m->off);
  ir_k_i8_out_free (m->o);
  ir_k_i8_pad_fix_free (m->pad_fix);
  g_free (m);
}

M2iKI8Gemm *
ir_k_i8_gemm_new (const M2iKConvInt8Params *p, gint slices)
{
  const M2iKConvGeom *g = &p->g;
  M2iKI8Gemm *m = g_new0 (M2iKI8Gemm, 1);
  m->g = *g;
  m->slices = slices;
  m->cin_g = g->c_in / g->groups;
  m->cout_g = g->c_out / g->groups;
  m->cq_g = (m->cin_g + 3) / 4;
  m->taps = g->kh * g->kw;
  m->k4 = m->cq_g * m->taps;
  m->row_blocks = (m->cout_g + MR - 1) / MR;
  m->o = ir_k_i8_out_new (p);
  m->codes_in = p->codes_in;
  double z = ir_k_i8_zero_point (p, 0);
  m->q = ir_k_i8_quantizer (p->levels, p->in_lo[0], p->in_hi[0], z);

  /* Phase planes: the padded input's pixels (ry + sh·i, rx + sw·j), one
   * plane per (row, column) phase some tap reads. */
  gint64 hp = g->h + g->pt + g->pb, wp = g->w + g->pl + g->pr;
  m->hq = (hp + g->sh - 1) / g->sh;
  m->wq = (wp + g->sw - 1) / g->sw;
  g_autofree gint64 *tap_off = g_new (gint64, m->taps);
  for (gint64 t = 0; t < m->taps; t++) {
    gint64 ky = t / g->kw * g->dh, kx = t % g->kw * g->dw;
    gint64 ry = ky % g->sh, rx = kx % g->sw;
    gint ph = 0;
    while (ph < m->n_phases && (m->phase_row[ph] != ry || m->phase_col[ph] != rx))
      ph++;
    if (ph == m->n_phases) {
      m->phase_row[ph] = ry;           /* at most sh · sw <= MAX_PHASES */
      m->phase_col[ph] = rx;
      m->n_phases++;
    }
    tap_off[t] = ph * m->hq * m->wq + (ky / g->sh) * m->wq + kx / g->sw;
  }
  m->quad_px = m->n_phases * m->hq * m->wq;
  m->off = g_new (gint64, m->k4);
  gint64 max_off = 0;
  for (gint64 q = 0; q < m->cq_g; q++)
    for (gint64 t = 0; t < m->taps; t++) {
      m->off[q * m->taps + t] = (q * m->quad_px + tap_off[t]) * 4;
      max_off = MAX (max_off, tap_off[t]);
    }
  /* The last panel reads up to NR grid columns past the grid, each at most
   * max_off further: slack after the last quad (those columns are dropped). */
  gint64 quads = g->groups * m->cq_g;
  m->src_bytes = m2i_align_up ((gsize) (quads * m->quad_px + max_off + 2 * NR) * 4, 64);

  /* Weights: [group][row block][k4][MR][4], step p = (quad, tap). */
  gsize block = (gsize) m->k4 * MR * 4;
  m->packed = g_new0 (gint8, block * g->groups * m->row_blocks);
  gint64 rows_pad = g->groups * m->row_blocks * MR;
  m->ibias = g_new0 (gint32, rows_pad);
  m->mul = g_new0 (float, rows_pad);
  m->add = g_new0 (float, rows_pad);
  double s_x = ((double) p->grid_hi[0] - p->grid_lo[0]) / (p->levels - 1);
  gboolean fix = !ir_k_i8_zero_is_code (z, m->q.z) && (g->pt || g->pl || g->pb || g->pr);
  g_autofree float *pad_coef = fix ? g_new (float, g->c_out) : NULL;
  g_autofree float *tap_sum = fix ? g_new0 (float, g->c_out * m->taps) : NULL;
  for (gint64 gi = 0; gi < g->groups; gi++)
    for (gint64 oc = 0; oc < m->cout_g; oc++) {
      gint64 o = gi * m->cout_g + oc;
      gint8 *dst = m->packed + (gi * m->row_blocks + oc / MR) * block + (oc % MR) * 4;
      const gint8 *w = p->weights + o * m->cin_g * m->taps;
      gint64 sum = 0;
      for (gint64 ci = 0; ci < m->cin_g; ci++)
        for (gint64 t = 0; t < m->taps; t++) {
          gint8 q = w[ci * m->taps + t];
          sum += q;
          dst[((ci / 4) * m->taps + t) * MR * 4 + ci % 4] = q;
        }
      double mm = s_x * p->w_scale[o];
      gint64 r = gi * m->row_blocks * MR + oc;
      m->ibias[r] = (gint32) (-m->q.z * sum);
      m->mul[r] = (float) mm;
      m->add[r] = (float) ((p->bias ? p->bias[o] : 0.0) - mm * (z - m->q.z) * sum);
      if (fix) {
        pad_coef[o] = (float) (mm * (z - m->q.z));
        for (gint64 ci = 0; ci < m->cin_g; ci++)
          for (gint64 t = 0; t < m->taps; t++)
            tap_sum[o * m->taps + t] += w[ci * m->taps + t];
      }
    }
  if (fix) {
    m->pad_fix = ir_k_i8_pad_fix_new (g, g->c_out, tap_sum, pad_coef);
    m->fix_bytes = 2 * MR * NR * sizeof (float);   /* the narrow tile's two blocks */
  }
  m->dmul = g_new0 (float, rows_pad);
  m->dadd = g_new0 (float, rows_pad);
  for (gint64 gi = 0; gi < g->groups; gi++)
    for (gint64 oc = 0; oc < m->cout_g && m->dmul; oc++) {
      gint64 r = gi * m->row_blocks * MR + oc;
      if (!ir_k_i8_direct (m->o, gi * m->cout_g + oc, m->mul[r], m->add[r], &m->dmul[r],
              &m->dadd[r])) {
        g_clear_pointer (&m->dmul, g_free);
        g_clear_pointer (&m->dadd, g_free);
      }
    }

  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  m->micro = ir_k_i8_micro_vnni (level);
  if (m->micro)
    m->kernel_name = "vnni";
  if (!m->micro && (m->micro = ir_k_i8_micro_avx2 (level))) {
    m->kernel_name = "avx2";
    gsize n = block * g->groups * m->row_blocks;
    m->packed16 = g_new (gint16, n);
    for (gsize i = 0; i < n; i++)
      m->packed16[i] = m->packed[i];
  }
  if (!m->micro)
    m->kernel_name = "c";
  /* a grid of at most 16 columns: the narrow tile, 16 channels a step */
  if (m->micro && g->oh * m->wq <= 16 && (m->narrow = ir_k_i8_narrow_vnni (level))) {
    m->kernel_name = "vnni-narrow";
    gint64 pairs = (m->row_blocks + 1) / 2;
    m->packed_n = g_new0 (gint8, (gsize) g->groups * pairs * m->k4 * 2 * MR * 4);
    for (gint64 gi = 0; gi < g->groups; gi++)
      for (gint64 rb = 0; rb < m->row_blocks; rb++)
        for (gint64 s = 0; s < m->k4; s++)
          memcpy (m->packed_n + (((gi * pairs + rb / 2) * m->k4 + s) * 2 + rb % 2) * MR * 4,
              m->packed + (gi * m->row_blocks + rb) * block + s * MR * 4, MR * 4);
  }
  m->copy_row = ir_k_i8_copy_row_avx512 (level, m->codes_in);
  if (!m->copy_row)
    m->copy_row = ir_k_i8_copy_row_avx2 (level, m->codes_in);
  if (!m->copy_row)
    m->copy_row = m->codes_in ? ir_k_i8_copy_row_codes_c : ir_k_i8_copy_row_c;
  return m;
}

gboolean
ir_k_conv_int8_gemm_fast (void)
{
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_INT8);
  return ir_k_i8_micro_vnni (level) || ir_k_i8_micro_avx2 (level);
}

gsize
ir_k_i8_gemm_scratch_bytes (const M2iKI8Gemm *m)
{
  return m->src_bytes + m->slices * m->fix_bytes;
}

const char *
ir_k_i8_gemm_kernel_name (const M2iKI8Gemm *m)
{
  return m->kernel_name;
}

/* ---- the plain-C micro-kernel and the scalar epilogue ------------------ */

void
ir_k_i8_store_row (const float *v, gint r, const M2iKI8Store *st)
{
  gint64 c = st->c0 + r;
  gsize es = st->o->codes ? 1 : sizeof (float);
  guint8 *row = (guint8 *) st->out + r * st->ldo * es;
  for (gint gi = 0; gi < NR / 16; gi++)
    for (gint q = st->run_start[gi]; q < st->run_start[gi + 1]; q++)
      for (gint l = 0; l < 16; l++) {
        if (!(st->run_mask[q] >> l & 1))
          continue;
        float x = v[gi * 16 + l];
        if (st->fix)
          x = x + st->fix[r * NR + gi * 16 + l];
        ir_k_i8_finish_row (st->o, c, &x, 1, row + (st->run_at[q] + l) * es);
      }
}

static void
micro_c (gint k4, const void *a8, const guint8 *b, const gint64 *off, const M2iKI8Store *st)
{
  const gint8 *a = a8;
  gint32 acc[MR][NR];
  for (gint r = 0; r < MR; r++)
    for (gint n = 0; n < NR; n++)
      acc[r][n] = st->ibias[r];
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

static inline void
copy_row (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill, gint64 x0,
    gint64 sw, gint64 w, gint64 n, guint8 *d, gboolean codes)
{
  for (gint j = 0; j < 4; j++)
    for (gint64 x = 0; x < n; x++) {
      gint64 ix = x0 + x * sw;
      d[x * 4 + j] = !rows[j] ? fill[j] : ix < 0 || ix >= w ? q->z :
          codes ? ((const guint8 *) rows[j])[ix] : ir_k_i8_quant (q, ((const float *) rows[j])[ix]);
    }
}

void
ir_k_i8_copy_row_c (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  copy_row (q, rows, fill, x0, sw, w, n, d, FALSE);
}

void
ir_k_i8_copy_row_codes_c (const M2iKI8Quant *q, gconstpointer const *rows, const guint8 *fill,
    gint64 x0, gint64 sw, gint64 w, gint64 n, guint8 *d)
{
  copy_row (q, rows, fill, x0, sw, w, n, d, TRUE);
}

typedef struct {
  const M2iKI8Gemm *m;
  const guint8 *in;                    /* one image, f32 or codes */
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
  const M2iKI8Gemm *m = job->m;
  const M2iKConvGeom *g = &m->g;
  gsize es = m->codes_in ? 1 : sizeof (float);
  for (gint q = begin; q < end; q++) {
    gint64 gi = q / m->cq_g, c0 = 4 * (q % m->cq_g);
    guint8 *quad = job->src + (gsize) q * m->quad_px * 4;
    guint8 fill[4];
    for (gint j = 0; j < 4; j++)
      fill[j] = c0 + j < m->cin_g ? m->q.z : 0;
    for (gint ph = 0; ph < m->n_phases; ph++)
      for (gint64 i = 0; i < m->hq; i++) {
        gint64 y = m->phase_row[ph] + g->sh * i - g->pt;
        gconstpointer rows[4];
        for (gint j = 0; j < 4; j++)
          rows[j] = c0 + j < m->cin_g && y >= 0 && y < g->h ?
              job->in + (((gi * m->cin_g + c0 + j) * g->h + y) * g->w) * es : NULL;
        m->copy_row (&m->q, rows, fill, m->phase_col[ph] - g->pl, g->sw, g->w, m->wq,
            quad + ((ph * m->hq + i) * m->wq) * 4);
      }
  }
}

/* ---- the product --------------------------------------------------------- */

typedef struct {
  const M2iKI8Gemm *m;
  const guint8 *src;
  guint8 *out;                         /* this image's output */
  gint64 panels;                       /* column panels per group */
  gint64 chunk_blocks;                 /* row blocks per task */
  gint64 chunks;                       /* tasks per (group, panel) */
  float *fix;                          /* per slice: MR × NR padding terms */
} GemmJob;

/* The runs of the panel at grid column @n0 (see M2iKI8Store). */
static void
panel_runs (const M2iKI8Gemm *m, gint64 n0, guint8 *run_start, guint16 *run_mask,
    gint32 *run_at)
{
  const M2iKConvGeom *g = &m->g;
  gint n = 0;
  if (m->wq == g->ow) {
    /* no dropped columns: a run per group, up to the plane's end */
    gint64 end = g->oh * g->ow;
    for (gint gi = 0; gi < NR / 16; gi++) {
      gint64 at = n0 + 16 * gi, k = CLAMP (end - at, 0, 16);
      run_start[gi] = (guint8) n;
      if (k > 0) {
        run_mask[n] = (guint16) ((1u << k) - 1);
        run_at[n++] = (gint32) at;
      }
    }
    run_start[NR / 16] = (guint8) n;
    return;
  }
  gint64 y = n0 / m->wq, x = n0 % m->wq;
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
      if (++x == m->wq) {
        x = 0;
        y++;
      }
    }
  }
  run_start[NR / 16] = (guint8) n;
}


/* Row blocks [rb0, rb1) (rb0 even) of group @gi with the narrow tile,
 * two at a time. */
static void
narrow_blocks (const GemmJob *j, gint64 gi, gint64 n0, gint64 rb0, gint64 rb1, float *fix,
    const guint8 *run_start, const guint16 *run_mask, const gint32 *run_at)
{
  const M2iKI8Gemm *m = j->m;
  const M2iKConvGeom *g = &m->g;
  gsize ohw = (gsize) g->oh * g->ow, es = m->o->codes ? 1 : sizeof (float);
  gint64 pairs = (m->row_blocks + 1) / 2, grid = g->oh * m->wq;
  const guint8 *b = j->src + (gsize) gi * m->cq_g * m->quad_px * 4 + n0 * 4;
  float *fix1 = fix ? fix + MR * NR : NULL;
  for (gint64 rb = rb0; rb < rb1; rb += 2) {
    M2iKI8Store st[2];
    for (gint h = 0; h < 2 && rb + h < rb1; h++) {
      gint64 oc = (rb + h) * MR, row = gi * m->row_blocks * MR + oc, c0 = gi * m->cout_g + oc;
      gint rows = (gint) MIN (MR, m->cout_g - oc);
      float *f = h ? fix1 : fix;
      if (f)
        ir_k_i8_pad_fix_panel (m->pad_fix, c0, rows, n0, m->wq, f);
      st[h] = (M2iKI8Store) { j->out + c0 * ohw * es, ohw, rows, c0, m->ibias + row,
        m->mul + row, m->add + row, m->dmul ? m->dmul + row : NULL,
        m->dadd ? m->dadd + row : NULL, f, m->o, run_start, run_mask, run_at };
    }
    m->narrow ((gint) m->k4, m->packed_n + (gsize) (gi * pairs + rb / 2) * m->k4 * 2 * MR * 4,
        b, m->off, (gint) MIN (grid - n0, 16), &st[0], rb + 1 < rb1 ? &st[1] : NULL);
  }
}

static void
gemm_slice (gint begin, gint end, gint slice, gpointer data)
{
  const GemmJob *j = data;
  const M2iKI8Gemm *m = j->m;
  const M2iKConvGeom *g = &m->g;
  gsize ohw = (gsize) g->oh * g->ow, block = (gsize) m->k4 * MR * 4;
  gsize es = m->o->codes ? 1 : sizeof (float);
  float *fix = m->pad_fix ? j->fix + (gsize) slice * 2 * MR * NR : NULL;
  guint8 run_start[NR / 16 + 1];
  guint16 run_mask[NR];
  gint32 run_at[NR];
  for (gint t = begin; t < end; t++) {
    gint64 chunk = t % j->chunks, rest = t / j->chunks;
    gint64 panel = rest % j->panels, gi = rest / j->panels;
    gint64 n0 = panel * NR;
    panel_runs (m, n0, run_start, run_mask, run_at);
    const guint8 *b = j->src + (gsize) gi * m->cq_g * m->quad_px * 4 + n0 * 4;
    gint64 rb_end = MIN ((chunk + 1) * j->chunk_blocks, m->row_blocks);
    if (m->narrow) {
      narrow_blocks (j, gi, n0, chunk * j->chunk_blocks, rb_end, fix, run_start, run_mask, run_at);
      continue;
    }
    for (gint64 rb = chunk * j->chunk_blocks; rb < rb_end; rb++) {
      gint64 oc = rb * MR, row = gi * m->row_blocks * MR + oc, c0 = gi * m->cout_g + oc;
      gint rows = (gint) MIN (MR, m->cout_g - oc);
      if (fix)
        ir_k_i8_pad_fix_panel (m->pad_fix, c0, rows, n0, m->wq, fix);
      M2iKI8Store st = { j->out + c0 * ohw * es, ohw, rows, c0, m->ibias + row, m->mul + row,
        m->add + row, m->dmul ? m->dmul + row : NULL, m->dadd ? m->dadd + row : NULL,
        fix, m->o, run_start, run_mask, run_at };
      gsize at = (gi * m->row_blocks + rb) * block;
      if (m->packed16)
        m->micro ((gint) m->k4, m->packed16 + at, b, m->off, &st);
      else
        (m->micro ? m->micro : micro_c) ((gint) m->k4, m->packed + at, b, m->off, &st);
    }
  }
}

void
ir_k_i8_gemm_run (const M2iKI8Gemm *m, gconstpointer in, gpointer out, gpointer scratch,
    gint slices)
{
  const M2iKConvGeom *g = &m->g;
  guint8 *src = scratch;
  gint64 quads = g->groups * m->cq_g;
  gint64 grid = g->oh * m->wq;
  gint64 panels = (grid + NR - 1) / NR;
  /* Panels are the tasks; when they are few and do not share out evenly,
   * the row blocks are cut into chunks as well. */
  gint64 tasks = g->groups * panels, chunks = 1;
  if (slices > 1 && tasks % slices && tasks < 8 * slices && m->row_blocks >= 2 * slices)
    chunks = slices;
  gint64 chunk_blocks = (m->row_blocks + chunks - 1) / chunks;
  if (m->narrow)
    chunk_blocks += chunk_blocks % 2;  /* the narrow tile takes blocks in pairs */
  chunks = (m->row_blocks + chunk_blocks - 1) / chunk_blocks;
  /* the slack past the last quad (read by dropped columns only) */
  gsize used = (gsize) quads * m->quad_px * 4;
  memset (src + used, m->q.z, m->src_bytes - used);
  gsize in_es = m->codes_in ? 1 : sizeof (float), out_es = m->o->codes ? 1 : sizeof (float);
  for (gint64 n = 0; n < g->batch; n++) {
    CopyJob cj = { m, (const guint8 *) in + n * g->c_in * g->h * g->w * in_es, src };
    ir_k_parallel_for ((gint) quads, slices, 1, copy_quads, &cj);
    GemmJob gj = { m, src, (guint8 *) out + n * g->c_out * g->oh * g->ow * out_es, panels,
      chunk_blocks, chunks, (float *) (src + m->src_bytes) };
    ir_k_parallel_for ((gint) (tasks * chunks), slices, 1, gemm_slice, &gj);
  }
}
