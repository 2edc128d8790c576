/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* indices.h — reading index tensors (Gather*, Scatter*, ...) in kernels
 * (not installed).
 *
 * Indices are data: a kernel reads them at run time, whatever integer type
 * the model gave them, and checks each one before it addresses memory with
 * it. These helpers do the reading, the normalisation of negative indices
 * and the error message that names the layer, the input and the position.
 */
#pragma once

#include "kernels-private.h"

G_BEGIN_DECLS

static inline gboolean
ir_k_is_integer_type (M2iElementType t)
{
  return t >= M2I_ET_U8 && t <= M2I_ET_I64;
}

/* Element @i of the integer tensor @t as gint64 (u64 above G_MAXINT64
 * saturates, which every range check then rejects). */
static inline gint64
ir_k_index_at (const M2iTensor *t, gint64 i)
{
  switch (t->type) {
    case M2I_ET_I32: return ((const gint32 *) t->data)[i];
    case M2I_ET_I64: return ((const gint64 *) t->data)[i];
    case M2I_ET_U8: return ((const guint8 *) t->data)[i];
    case M2I_ET_I8: return ((const gint8 *) t->data)[i];
    case M2I_ET_U16: return ((const guint16 *) t->data)[i];
    case M2I_ET_I16: return ((const gint16 *) t->data)[i];
    case M2I_ET_U32: return ((const guint32 *) t->data)[i];
    case M2I_ET_U64: {
      guint64 v = ((const guint64 *) t->data)[i];
      return v > (guint64) G_MAXINT64 ? G_MAXINT64 : (gint64) v;
    }
    default: return G_MAXINT64;
  }
}

/* TRUE when input @i has an integer element type; otherwise FALSE with a
 * GError naming the input (@what) and its type. */
gboolean ir_k_check_index_type (const M2iOpContext *ctx, gint i, const char *what,
    GError **error);

/* Normalises index @v against a dimension of @dim elements: [0, dim) stays,
 * [-dim, 0) counts from the end (when @negative). TRUE with *out set, else
 * FALSE with a GError (M2I_ERROR_INVALID_ARGUMENT) naming the layer, @what,
 * the element @pos of the indices input and the allowed range. */
gboolean ir_k_norm_index (const M2iOpContext *ctx, gint64 v, gint64 dim, gboolean negative,
    const char *what, gint64 pos, gint64 *out, GError **error);

/* Reads input @i, a constant scalar or one-element 1-D integer tensor (an
 * axis), and normalises it against @rank (negative counts from the end). */
gboolean ir_k_const_axis (const M2iOpContext *ctx, gint i, gint rank, gint64 *out,
    GError **error);

G_END_DECLS
