/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test-side helpers for the engine tests: layouts written from their
 * definitions (not with the library's converters), and the integer
 * requantization formulas as TFLite and the AIE spell them. */
#pragma once

#include <npu/m2i-npu.h>
#include <base/m2i-cpu.h>
#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define TU_CEIL8(x) (((x) + 7) / 8)

/* Index of (n, c, y, x) in a dense blocked N Y {C/8} X {C8} tensor. */
static inline gsize
tu_blocked_index (gint C, gint H, gint W, gint n, gint c, gint y, gint x)
{
  return ((((gsize) n * H + y) * TU_CEIL8 (C) + c / 8) * W + x) * 8 + c % 8;
}

/* Dense NCHW ↔ dense blocked, element size @es. With @to_blocked, @nchw is
 * copied into @blocked and the padding lanes (channels C .. 8·ceil(C/8) - 1)
 * filled with the @es bytes at @pad; else @blocked is copied back into
 * @nchw and every padding lane must hold @pad. */
static inline void
tu_blocked_copy (guint8 *nchw, guint8 *blocked, gsize es, gint N, gint C, gint H, gint W,
    const void *pad, gboolean to_blocked)
{
  for (gint n = 0; n < N; n++)
    for (gint y = 0; y < H; y++)
      for (gint cb = 0; cb < TU_CEIL8 (C); cb++)
        for (gint x = 0; x < W; x++)
          for (gint l = 0; l < 8; l++) {
            gint c = cb * 8 + l;
            guint8 *b = blocked + tu_blocked_index (C, H, W, n, c, y, x) * es;
            guint8 *d = c < C ? nchw + ((((gsize) n * C + c) * H + y) * W + x) * es : NULL;
            if (to_blocked)
              memcpy (b, d ? d : pad, es);
            else if (d)
              memcpy (d, b, es);
            else if (memcmp (b, pad, es))
              g_error ("padding lane n %d c %d y %d x %d: not the expected value", n, c, y, x);
          }
}

static inline void
tu_block (const void *nchw, void *blocked, gsize es, gint N, gint C, gint H,
    gint W, const void *pad)
{
  tu_blocked_copy ((guint8 *) nchw, blocked, es, N, C, H, W, pad, TRUE);
}

static inline void
tu_unblock (const void *blocked, void *nchw, gsize es, gint N, gint C, gint H,
    gint W, const void *pad)
{
  tu_blocked_copy (nchw, (guint8 *) blocked, es, N, C, H, W, pad, FALSE);
}

/* A dense blocked tensor of @prec in new memory (free t->data with g_free):
 * @nchw blocked with padding lanes @pad (tu_block), or when @nchw is NULL
 * every byte 0xcd. */
static inline void
tu_tensor_new (M2iNpuTensor *t, M2iNpuPrecision prec, gint N, gint C, gint H, gint W,
    const void *nchw, const void *pad)
{
  gsize bytes = m2i_npu_tensor_bytes (prec, N, C, H, W);
  guint8 *data = g_malloc (bytes);
  if (nchw)
    tu_block (nchw, data, prec == M2I_NPU_FP16 ? 2 : 1, N, C, H, W, pad);
  else
    memset (data, 0xcd, bytes);
  m2i_npu_tensor_init (t, prec, N, C, H, W, data, bytes);
}

/* OIYX → {O/8}{I/8}YX{I8}{O8}, zero padded. */
static inline void
tu_block_weights (const void *oiyx, void *blocked, gsize es, gint O, gint I,
    gint KH, gint KW)
{
  const guint8 *s = oiyx;
  guint8 *d = blocked;
  memset (d, 0, (gsize) TU_CEIL8 (O) * TU_CEIL8 (I) * KH * KW * 64 * es);
  for (gint o = 0; o < O; o++)
    for (gint i = 0; i < I; i++)
      for (gint ky = 0; ky < KH; ky++)
        for (gint kx = 0; kx < KW; kx++) {
          gsize di = ((((gsize) (o / 8) * TU_CEIL8 (I) + i / 8) * KH + ky) * KW + kx) * 64
              + (i % 8) * 8 + o % 8;
          memcpy (d + di * es, s + ((((gsize) o * I + i) * KH + ky) * KW + kx) * es, es);
        }
}

/* TFLite, reference_ops: SaturatingRoundingDoublingHighMul. */
static inline gint32
tu_srdhm (gint32 a, gint32 b)
{
  gboolean overflow = a == b && a == G_MININT32;
  gint64 ab = (gint64) a * (gint64) b;
  gint32 nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  gint32 r = (gint32) ((ab + nudge) / ((gint64) 1 << 31));   /* truncating division */
  return overflow ? G_MAXINT32 : r;
}

/* TFLite: RoundingDivideByPOT (round half away from zero). */
static inline gint32
tu_rdbpot (gint32 x, gint e)
{
  gint32 mask = (gint32) (((gint64) 1 << e) - 1);
  gint32 rem = x & mask;
  gint32 thr = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (rem > thr ? 1 : 0);
}

/* TFLite MultiplyByQuantizedMultiplier, with the left shift saturating as
 * the engine documents. */
static inline gint32
tu_mbqm (gint64 acc, gint32 m, gint shift)
{
  gint l = shift > 0 ? shift : 0, r = shift > 0 ? 0 : -shift;
  gint64 x = acc * ((gint64) 1 << l);
  x = CLAMP (x, G_MININT32, G_MAXINT32);
  return tu_rdbpot (tu_srdhm ((gint32) x, m), r);
}

/* AIE srs: Round(acc / 2^s) by floor division and the remainder. */
static inline gint64
tu_srs (gint64 acc, gint s, M2iMliRound mode)
{
  gint64 d = (gint64) 1 << s;
  gint64 q = acc / d, r = acc % d;
  if (r < 0) {
    q -= 1;
    r += d;
  }
  if (2 * r > d || (2 * r == d && (mode == M2I_MLI_ROUND_HALF_UP || (q % 2 != 0))))
    q += 1;
  return q;
}

/* TFLite's QuantizeMultiplier, by frexp (test side). */
static inline void
tu_quantize (double real, gint32 *m, gint8 *shift)
{
  int e;
  double f = frexp (real, &e);
  gint64 q = (gint64) llround (f * 2147483648.0);
  if (q == ((gint64) 1 << 31)) {
    q /= 2;
    e++;
  }
  *m = (gint32) q;
  *shift = (gint8) e;
}

/* Runs every test of the binary under the CPU level the environment sets
 * (meson registers each binary once per M2I_CPU_DISABLE value). */
static inline void
tu_log_cpu (void)
{
  const char *lvl = g_getenv ("M2I_CPU_DISABLE");
  g_test_message ("M2I_CPU_DISABLE=%s → cpu flags: %s", lvl ? lvl : "",
      m2i_cpu_flags_string ());
}
