/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* csc-fpair.c — plan-time tables of the float pair path (FPairTable): the
 * weights in the kernels' form, where each block of outputs fetches its
 * source bytes from (16-byte windows for pshufb, 128-byte windows for VBMI
 * byte permutes), and the scalar fill for blocks no window takes.
 */
#include "csc-kernels.h"

#include <base/m2i-align.h>

void
m2i_fpair_table_free (FPairTable *t)
{
  if (!t)
    return;
  g_free (t->xs);
  g_free (t->wmem);
  g_free (t->load);
  g_free (t->ysh);
  g_free (t->csh);
  g_free (t->ybase);
  g_free (t->cbase);
  g_free (t->yidx);
  g_free (t->cidx);
  g_free (t);
}

/* Byte offsets of the bytes output column x reads, in the order the kernels
 * want them in its dword lane (csc-private.h, FPairShuf): luma Y(x),
 * Y(x + 1); chroma U(x), V(x), U(x + 1), V(x + 1) — NV12: offsets in the UV
 * row; I420: U and V offsets in their rows (the same numbers). Returns the
 * number of bytes (2 or 4). */
static int
column_bytes (const FPairTable *t, gint x, gboolean chroma, gint off[4])
{
  if (!chroma) {
    off[0] = x;
    off[1] = x + 1;
    return 2;
  }
  for (int tap = 0; tap < 2; tap++) {
    gint c = fpair_coff (x + tap, t->nv12);
    off[2 * tap] = c;
    off[2 * tap + 1] = t->nv12 ? c + 1 : c;
  }
  return 4;
}

/* The 16-byte windows of block b (outputs 8b .. 8b+7) for luma or chroma,
 * with @nwin windows; FALSE if a window's bytes do not fit in 16 (or the row
 * is narrower than 16 bytes). A window starts 16-byte aligned (never across
 * a cache line) when its bytes fit so, else at its first byte (or 16 bytes
 * before the row end). */
static gboolean
shuf_windows (const FPairTable *t, gint b, gboolean chroma, gint nwin, FPairShuf *s)
{
  gint row = chroma ? t->wc : t->wy, per = 8 / nwin;
  if (row < 16)
    return FALSE;
  memset (s, 0x80, sizeof *s);
  s->nwin = nwin;
  for (gint w = 0; w < nwin; w++) {
    gint lo = G_MAXINT, hi = 0;
    for (gint j = w * per; j < (w + 1) * per; j++) {
      gint off[4], nb = column_bytes (t, t->xs[8 * b + j], chroma, off);
      for (int k = 0; k < nb; k++) {
        lo = MIN (lo, off[k]);
        hi = MAX (hi, off[k]);
      }
    }
    gint start = lo & ~15;
    if (hi - start >= 16 || start + 16 > row)
      start = MIN (lo, row - 16);
    if (hi - start >= 16 || lo < start)
      return FALSE;
    s->off[w] = start;
    /* window w is lane (w / (nwin/2)) of vector w % (nwin/2) */
    gint vec = w % (nwin / 2), lane = w / (nwin / 2);
    for (gint j = w * per; j < (w + 1) * per; j++) {
      gint off[4], nb = column_bytes (t, t->xs[8 * b + j], chroma, off);
      gint d = 16 * lane + 4 * (j % 4);      /* dword j of the 256-bit vector */
      for (int k = 0; k < nb; k++) {
        if (chroma && !t->nv12) {
          /* I420: U bytes (k even) from the U row, V bytes from the V row */
          if (k % 2 == 0)
            s->shuf[vec][d + k] = (guint8) (off[k] - start);
          else
            s->shuf2[vec][d + k] = (guint8) (off[k] - start);
        } else {
          s->shuf[vec][d + k] = (guint8) (off[k] - start);
        }
      }
    }
  }
  return TRUE;
}

/* Both kinds of windows of block b, 4 windows each where two outputs fit
 * in one, else 8: FP_LOAD_SHUF if 4 do everywhere, FP_LOAD_SHUF_WIDE if
 * not, FP_LOAD_FILL if even 8 do not. */
static int
block_shuf (FPairTable *t, gint b)
{
  int kind = FP_LOAD_SHUF;
  for (int chroma = 0; chroma < 2; chroma++) {
    FPairShuf *s = chroma ? &t->csh[b] : &t->ysh[b];
    if (shuf_windows (t, b, chroma, 4, s))
      continue;
    if (!shuf_windows (t, b, chroma, 8, s))
      return FP_LOAD_FILL;
    kind = FP_LOAD_SHUF_WIDE;
  }
  return kind;
}

/* Permute windows of block b (outputs 8b .. 8b+7): 128 bytes of the luma
 * row; chroma: 128 bytes of the NV12 UV row, or 64 bytes of the I420 U row
 * and the same 64 of the V row (so one permute fetches U and V there too).
 * Windows start 64-byte aligned when the block's bytes fit so (aligned
 * loads never cross a cache line: they cost half). FALSE if the block's
 * bytes do not fit. */
static gboolean
permute_windows (FPairTable *t, gint b)
{
  gint ylo = G_MAXINT, yhi = 0, clo = G_MAXINT, chi = 0;
  for (int j = 0; j < 8; j++) {
    gint off[4];
    column_bytes (t, t->xs[8 * b + j], FALSE, off);
    ylo = MIN (ylo, off[0]);
    yhi = MAX (yhi, off[1]);
    column_bytes (t, t->xs[8 * b + j], TRUE, off);
    clo = MIN (clo, off[0]);
    chi = MAX (chi, MAX (off[1], off[3]));
  }
  gint cwin = t->nv12 ? 128 : 64;
  if (t->wy < 128 || t->wc < cwin)
    return FALSE;
  gint yb = ylo & ~63, cb = clo & ~63;
  if (yhi - yb >= 128 || yb + 128 > t->wy)
    yb = MIN (ylo, t->wy - 128);
  if (chi - cb >= cwin || cb + cwin > t->wc)
    cb = MIN (clo, t->wc - cwin);
  if (yhi - yb >= 128 || chi - cb >= cwin)
    return FALSE;
  t->ybase[b] = yb;
  t->cbase[b] = cb;
  /* block b fills dword lanes 8 (b % 2) .. +7 of its 16-output group: luma
   * bytes Y(x), Y(x + 1); chroma U(x), V(x), U(x + 1), V(x + 1) (V: the byte
   * after U in NV12, the second table for I420) */
  guint8 *yi = t->yidx + 64 * b, *ci = t->cidx + 64 * b;
  memset (yi, 0, 64);
  memset (ci, 0, 64);
  for (int j = 0; j < 8; j++) {
    gint k = 8 * (b % 2) + j, off[4];
    column_bytes (t, t->xs[8 * b + j], FALSE, off);
    yi[4 * k] = (guint8) (off[0] - yb);
    yi[4 * k + 1] = (guint8) (off[1] - yb);
    column_bytes (t, t->xs[8 * b + j], TRUE, off);
    for (int q = 0; q < 4; q++)
      ci[4 * k + q] = (guint8) (off[q] - cb + (!t->nv12 && q % 2 ? 64 : 0));
  }
  return TRUE;
}

FPairTable *
m2i_fpair_table_new (const gint32 *xs, const float *w0, const float *w1, gint n, gint wy,
    gboolean nv12, gboolean bgr, FPairFetch fetch)
{
  FPairTable *t = g_new0 (FPairTable, 1);
  gint np = n + 16, nb16 = (n + 15) / 16, nb8 = 2 * nb16;
  t->n = n;
  t->nv12 = nv12;
  t->wy = wy;
  t->wc = nv12 ? wy : wy / 2;
  t->plane_of[0] = bgr ? 2 : 0;
  t->plane_of[1] = 1;
  t->plane_of[2] = bgr ? 0 : 2;
  t->xs = g_new (gint32, np);
  for (gint i = 0; i < np; i++)
    t->xs[i] = xs[MIN (i, n - 1)];
  /* four arrays of np floats, each 64-byte aligned (np is a multiple of 16
   * only after rounding up) */
  gsize stride = m2i_align_up (np, 16);
  t->wmem = g_malloc0 (4 * stride * sizeof (float) + 63);
  t->w0 = m2i_align_pointer (t->wmem, 64);
  t->w1 = t->w0 + stride;
  t->w0m = t->w1 + stride;
  t->w1m = t->w0m + stride;
  for (gint i = 0; i < n; i++) {
    t->w0[i] = w0[i];
    t->w1[i] = w1[i];
    t->w0m[i] = -FP_M * w0[i];
    t->w1m[i] = -FP_M * w1[i];
  }
  t->load = g_new0 (guint8, nb16);
  if (fetch == FP_FETCH_SCALAR)
    return t;
  t->ysh = g_new0 (FPairShuf, nb8);
  t->csh = g_new0 (FPairShuf, nb8);
  if (fetch == FP_FETCH_PERMUTE) {
    t->ybase = g_new0 (gint32, nb8);
    t->cbase = g_new0 (gint32, nb8);
    t->yidx = g_new0 (guint8, (gsize) nb8 * 64);
    t->cidx = g_new0 (guint8, (gsize) nb8 * 64);
  }
  for (gint b = 0; b < nb16; b++) {
    if (16 * (b + 1) > n)
      continue;                        /* the tail goes through the scalar fill */
    if (fetch == FP_FETCH_PERMUTE && permute_windows (t, 2 * b) && permute_windows (t, 2 * b + 1))
      t->load[b] = FP_LOAD_PERMUTE;
    else {
      int k0 = block_shuf (t, 2 * b), k1 = block_shuf (t, 2 * b + 1);
      t->load[b] = k0 == FP_LOAD_FILL || k1 == FP_LOAD_FILL ? FP_LOAD_FILL : MAX (k0, k1);
    }
  }
  return t;
}

