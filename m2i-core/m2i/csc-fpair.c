/* csc-fpair.c — plan-time tables of the float pair path (FPairTable) and
 * its scalar fill for blocks the SIMD loads cannot take.
 */
#include "csc-kernels.h"


void
m2i_fpair_table_free (FPairTable *t)
{
  if (!t)
    return;
  g_free (t->xs);
  g_free (t->w0);
  g_free (t->w1);
  g_free (t->load);
  g_free (t->ybase);
  g_free (t->cbase);
  g_free (t->yidx);
  g_free (t->cidx);
  g_free (t);
}


/* Permute windows of block b (outputs 8b .. 8b+7): 128 bytes of the luma
 * row; chroma: 128 bytes of the NV12 UV row, or 64 bytes of the I420 U row
 * and the same 64 of the V row (so one permute fetches U and V there too).
 * FALSE if the block's bytes do not fit. */
static gboolean
fpair_block_windows (FPairTable *t, gint b)
{
  const gint32 *x = t->xs + 8 * b;
  gint ylo = G_MAXINT, yhi = 0, clo = G_MAXINT, chi = 0;
  for (int j = 0; j < 8; j++) {
    ylo = MIN (ylo, x[j]);
    yhi = MAX (yhi, x[j] + 1);
    clo = MIN (clo, fpair_coff (x[j], t->nv12));
    chi = MAX (chi, fpair_coff (x[j] + 1, t->nv12) + (t->nv12 ? 1 : 0));
  }
  gint cwin = t->nv12 ? 128 : 64;
  if (t->wy < 128 || t->wc < cwin || yhi - ylo >= 128 || chi - clo >= cwin)
    return FALSE;
  gint yb = MIN (ylo, t->wy - 128), cb = MIN (clo, t->wc - cwin);
  t->ybase[b] = yb;
  t->cbase[b] = cb;
  /* block b fills dword lanes 8 (b % 2) .. +7 of its 16-output group: luma
   * bytes Y(x), Y(x + 1); chroma U(x), V(x), U(x + 1), V(x + 1) (V: the byte
   * after U in NV12, the second table for I420) */
  guint8 *yi = t->yidx + 64 * b, *ci = t->cidx + 64 * b;
  memset (yi, 0, 64);
  memset (ci, 0, 64);
  for (int j = 0; j < 8; j++) {
    gint k = 8 * (b % 2) + j;
    yi[4 * k] = (guint8) (x[j] - yb);
    yi[4 * k + 1] = (guint8) (x[j] + 1 - yb);
    for (int tap = 0; tap < 2; tap++) {
      gint co = fpair_coff (x[j] + tap, t->nv12) - cb;
      ci[4 * k + 2 * tap] = (guint8) co;
      ci[4 * k + 2 * tap + 1] = (guint8) (t->nv12 ? co + 1 : 64 + co);
    }
  }
  return TRUE;
}

FPairTable *
m2i_fpair_table_new (const gint32 *xs, const float *w0, const float *w1, gint n, gint wy,
    gboolean nv12, gboolean bgr, gboolean vbmi)
{
  FPairTable *t = g_new0 (FPairTable, 1);
  gint np = n + 16, nb16 = (n + 15) / 16;
  t->n = n;
  t->nv12 = nv12;
  t->wy = wy;
  t->wc = nv12 ? wy : wy / 2;
  t->plane_of[0] = bgr ? 2 : 0;
  t->plane_of[1] = 1;
  t->plane_of[2] = bgr ? 0 : 2;
  t->xs = g_new (gint32, np);
  t->w0 = g_new0 (float, np);
  t->w1 = g_new0 (float, np);
  for (gint i = 0; i < np; i++)
    t->xs[i] = xs[MIN (i, n - 1)];
  memcpy (t->w0, w0, n * sizeof (float));
  memcpy (t->w1, w1, n * sizeof (float));
  t->load = g_new0 (guint8, nb16);
  if (vbmi) {
    gint nb8 = 2 * nb16;
    t->ybase = g_new0 (gint32, nb8);
    t->cbase = g_new0 (gint32, nb8);
    t->yidx = g_new0 (guint8, (gsize) nb8 * 64);
    t->cidx = g_new0 (guint8, (gsize) nb8 * 64);
  }
  for (gint b = 0; b < nb16; b++) {
    if (16 * (b + 1) > n)
      continue;                        /* the tail goes through the scalar fill */
    if (vbmi && fpair_block_windows (t, 2 * b) && fpair_block_windows (t, 2 * b + 1)) {
      t->load[b] = FP_LOAD_PERMUTE;
      continue;
    }
    /* 4-byte gathers at x (luma) and at the chroma offset of x */
    gboolean ok = TRUE;
    for (gint i = 16 * b; i < 16 * (b + 1); i++)
      ok = ok && xs[i] + 4 <= t->wy && fpair_coff (xs[i], nv12) + 4 <= t->wc;
    t->load[b] = ok ? FP_LOAD_GATHER : FP_LOAD_FILL;
  }
  return t;
}


void
m2i_csc_fpair_fill (const FPairTable *t, gint i, const guint8 *y0, const guint8 *y1,
    const guint8 *c1, const guint8 *c2, FPairLanes *l)
{
  for (int k = 0; k < 16; k++) {
    gint x = t->xs[i + k];
    l->ya0[k] = y0[x];
    l->ya1[k] = y0[x + 1];
    l->yb0[k] = y1 ? y1[x] : 0;
    l->yb1[k] = y1 ? y1[x + 1] : 0;
    gint o0 = fpair_coff (x, t->nv12), o1 = fpair_coff (x + 1, t->nv12);
    l->u0[k] = c1[o0];
    l->u1[k] = c1[o1];
    l->v0[k] = t->nv12 ? c1[o0 + 1] : c2[o0];
    l->v1[k] = t->nv12 ? c1[o1 + 1] : c2[o1];
  }
}

