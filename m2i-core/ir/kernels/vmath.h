/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vmath.h — single-precision e^x and the activations built on it, as plain
 * C that compilers vectorize: no libm call, no branch, bit casts through a
 * union. Used inside M2I_K_SIMD_CLONES bodies (unary.c, the fused Swish of
 * conv.c), so the AVX-512, AVX2 and generic copies give identical results
 * (no FMA contraction in this project).
 *
 * ir_vm_exp(): range reduction x = n·ln2 + r (|r| <= ln2/2, ln2 split in
 * a 9-bit head, exact in n·head, and a tail), e^r by a fitted polynomial
 * of degree 6 (below), then 2^n as two power-of-two factors so
 * results between FLT_MIN and the smallest denormal round once, as they
 * should. Within 2 ulp of e^x on [-87, 88] (tests/ir/kernels/test-unary.c
 * checks it against double precision over that range); +inf above ~88.72,
 * 0 below ~-103.97, NaN for NaN.
 */
#pragma once

#include <glib.h>

/* GCC keeps the clamps and selects below as branches (so no vector loop)
 * unless it may evaluate floating-point operations whose exceptions the
 * source would not raise; no result changes (this project reads no FP
 * exception flags). Clang does so by default. Applies to the rest of the
 * including file. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("no-trapping-math")
#endif

typedef union {
  float f;
  guint32 u;
} M2iVmBits;

static inline float
ir_vm_exp (float x)
{
  /* Clamp (a NaN passes both tests unchanged) so n stays small. */
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  /* n = round (x / ln2): adding 1.5·2^23 leaves n in the low mantissa bits. */
  M2iVmBits m = { .f = xc * 1.44269504088896341f + 12582912.0f };
  float nf = m.f - 12582912.0f;
  gint32 n = (gint32) (m.u - 0x4B400000u);
  float r = (xc - nf * 0.693359375f) - nf * -2.12194440e-4f;
  /* e^r = 1 + r + r²·q(r), q of degree 4 fitted to (e^r − 1 − r)/r² on
   * [−ln2/2, ln2/2] for the least relative error (3e-9; 0.8 ulp as f32
   * evaluates it): `tests/data/ir-kernels/gen-ops.py --fit-exp`. */
  float q = 1.381454058e-03f;
  q = q * r + 8.368745446e-03f;
  q = q * r + 4.166838899e-02f;
  q = q * r + 1.666652113e-01f;
  q = q * r + 4.999999404e-01f;
  float p = (q * (r * r) + r) + 1.0f;
  /* 2^n = 2^n1 · 2^n2, each factor a normal number for n in [-150, 128].
   * A NaN went through everything above as NaN (the factors do not
   * matter). */
  gint32 n1 = n >> 1, n2 = n - n1;     /* arithmetic shift: floor */
  M2iVmBits s1 = { .u = (guint32) (n1 + 127) << 23 };
  M2iVmBits s2 = { .u = (guint32) (n2 + 127) << 23 };
  return (p * s1.f) * s2.f;
}

/* Swish-4: x / (1 + e^(-βx)), written as x·e/(1 + e) with e = e^(βx) where
 * βx < 0 so that tiny results keep their value (ONNX's and torch's SiLU
 * give the same numbers). */
static inline float
ir_vm_swish (float x, float beta)
{
  float bx = beta * x;
  float e = ir_vm_exp (bx < 0.0f ? bx : -bx);
  float xe = x * e;
  float num = bx < 0.0f ? xe : x;
  return num / (1.0f + e);
}

/* Sigmoid by the same split: 1/(1 + e^-x) or e^x/(1 + e^x). */
static inline float
ir_vm_sigmoid (float x)
{
  float e = ir_vm_exp (x < 0.0f ? x : -x);
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}
