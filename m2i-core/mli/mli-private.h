/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mli-private.h — internals shared inside m2i-core/mli and with npu/. */
#pragma once

#include <mli/m2i-mli.h>
#include <string.h>

G_BEGIN_DECLS

#define M2I_MLI_MIN_FRAC (-32)
#define M2I_MLI_MAX_FRAC 63

/* The (zero, scale, shift) triple that applies to one slice: value =
 * (x - zero) * scale / 2^shift. fx: (0, 1, frac_bits); float: (0, 1, 0). */
typedef struct {
  gint32 zero;
  gint32 scale;
  gint shift;
} M2iMliSliceQuant;

/* Strides with 0 entries replaced by their dense values. @t must have a
 * valid rank. */
void mli_effective_strides (const M2iMliTensor *t, gint64 *strides);

/* Parameters of slice @idx along the per-axis dimension (ignored for
 * per-tensor). @t must have passed m2i_mli_tensor_check(). */
void mli_quant_at (const M2iMliTensor *t, guint idx, M2iMliSliceQuant *out);

/* round(@num / @den) with @mode for ties; @den >= 1, |@num| and @den
 * below 2^62. */
gint64 mli_div_round (gint64 num, gint64 den, M2iMliRound mode);


G_END_DECLS
