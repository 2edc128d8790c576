/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tile-1 and Broadcast-1, Broadcast-3: repeat data along its axes. Any
 * element type.
 *
 * Tile: output dim d = data dim d · repeats[d], after the shorter of the
 * two (the data's shape, the constant `repeats`) is prepended with 1s.
 * Broadcast: the output has the constant `target_shape`; mode numpy (data
 * right-aligned, each dim equal or 1), explicit (data dim i goes to output
 * axis axes_mapping[i], a constant increasing list), bidirectional (-3
 * only: the numpy broadcast of the data's shape and target_shape, so
 * either may grow), or pdpd (with `axis`, as element-wise ops). Both are
 * a tile of the data (aligned to the output's rank) by repeats
 * out_d / in_d, which runs as: build the block of one repetition of the
 * inner axes, then memcpy it repeats − 1 times — rows of the innermost
 * axis are copied whole.
 */
#include "kernels-private.h"

#include <string.h>

typedef struct {
  gint rank;
  gint64 in[M2I_MAX_RANK];             /* the data aligned to the output's rank */
  gint64 reps[M2I_MAX_RANK];
  gint64 in_inner[M2I_MAX_RANK];       /* elements of data dims > d */
  gint64 out_inner[M2I_MAX_RANK];      /* elements of output dims > d */
  gsize es;
} TileState;

/* Writes the block of output axes d.. (in[d] · reps[d] · out_inner[d]
 * elements) from data axes d.. at @src. */
static void
tile_block (const TileState *s, gint d, const guint8 *src, guint8 *dst)
{
  gsize one = (gsize) (s->in[d] * s->out_inner[d]) * s->es;      /* one repetition */
  if (d == s->rank - 1)
    memcpy (dst, src, one);
  else
    for (gint64 i = 0; i < s->in[d]; i++)
      tile_block (s, d + 1, src + (gsize) (i * s->in_inner[d]) * s->es,
          dst + (gsize) (i * s->out_inner[d]) * s->es);
  /* the repetitions: double the copied part each time */
  for (gint64 done = 1; done < s->reps[d];) {
    gint64 n = MIN (done, s->reps[d] - done);
    memcpy (dst + done * one, dst, n * one);
    done += n;
  }
}

static gboolean
tile_execute (M2iOpContext *ctx, GError **error)
{
  const TileState *s = ctx->state;
  if (m2i_shape_numel (&ctx->outputs[0].shape) == 0)
    return TRUE;
  if (s->rank == 0)
    memcpy (ctx->outputs[0].data, ctx->inputs[0].data, s->es);
  else
    tile_block (s, 0, ctx->inputs[0].data, ctx->outputs[0].data);
  return TRUE;
}

/* Sets the output to @out and the state to a tile of input 0 (seen with
 * dims @aligned, of @out's rank) by out / aligned. */
static gboolean
tile_setup (M2iOpContext *ctx, const M2iShape *aligned, const M2iShape *out, GError **error)
{
  /* the strides below multiply every dim, zeros aside (an empty output
   * with huge other dims still makes them) */
  gint64 extent = 1;
  gboolean ok = TRUE;
  for (gint d = 0; d < out->rank && ok; d++)
    ok = ir_mul_i64 (extent, MAX (out->dims[d], 1), &extent);
  if (!ok) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "the output %s would have more elements than can be counted", ir_k_shape_str (out, 0));
    return FALSE;
  }
  TileState *s = g_new0 (TileState, 1);
  s->rank = out->rank;
  s->es = m2i_element_type_size (ctx->inputs[0].type);
  gint64 in_inner = 1, out_inner = 1;
  for (gint d = out->rank - 1; d >= 0; d--) {
    s->in[d] = aligned->dims[d];
    s->reps[d] = aligned->dims[d] ? out->dims[d] / aligned->dims[d] : 0;
    s->in_inner[d] = in_inner;
    s->out_inner[d] = out_inner;
    in_inner *= aligned->dims[d];
    out_inner *= out->dims[d];
  }
  ctx->outputs[0].type = ctx->inputs[0].type;
  ctx->outputs[0].shape = *out;
  ctx->state = s;
  return TRUE;
}

/* A constant 1-D list of dims or repeats (input @i), each >= 0. */
static gboolean
dims_input (const M2iOpContext *ctx, gint i, const char *what, gint64 *out, gint *n,
    GError **error)
{
  if (!ir_k_const_ints (ctx, i, out, M2I_MAX_RANK, n, error))
    return FALSE;
  for (gint k = 0; k < *n; k++)
    if (out[k] < 0) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "%s (input %d) has a negative value %" G_GINT64_FORMAT, what, i, out[k]);
      return FALSE;
    }
  return TRUE;
}

static gboolean
tile_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 reps[M2I_MAX_RANK];
  gint n;
  if (!dims_input (ctx, 1, "repeats", reps, &n, error))
    return FALSE;
  M2iShape aligned = { MAX (in->rank, n) }, out = { aligned.rank };
  for (gint d = 0; d < aligned.rank; d++) {
    gint di = d - (aligned.rank - in->rank), dr = d - (aligned.rank - n);
    aligned.dims[d] = di >= 0 ? in->dims[di] : 1;
    gint64 r = dr >= 0 ? reps[dr] : 1;
    if (aligned.dims[d] && r > G_MAXINT64 / aligned.dims[d]) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "repeats %" G_GINT64_FORMAT " on axis %d overflow", r, d);
      return FALSE;
    }
    out.dims[d] = aligned.dims[d] * r;
  }
  return tile_setup (ctx, &aligned, &out, error);
}

static gboolean
broadcast_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "numpy", "explicit", "bidirectional", "pdpd", NULL };
  gint mode;
  if (!m2i_ir_node_attr_enum (ctx->node, "mode", "numpy", modes, &mode, error))
    return FALSE;
  if (mode == 2 && ir_k_op_version (ctx) < 3) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "mode bidirectional is Broadcast-3's (this layer is Broadcast-1)");
    return FALSE;
  }
  if (!ir_k_check_arity (ctx, mode == 1 ? 3 : 2, 3, 1, 1, error))
    return FALSE;
  const M2iShape *in = &ctx->inputs[0].shape;
  gint64 target[M2I_MAX_RANK];
  gint n;
  if (!dims_input (ctx, 1, "target_shape", target, &n, error))
    return FALSE;
  M2iShape want = { n }, aligned = { n }, out;
  memcpy (want.dims, target, n * sizeof (gint64));
  switch (mode) {
    case 1: {                          /* explicit */
      gint64 map[M2I_MAX_RANK];
      gint nm;
      if (!ir_k_const_ints (ctx, 2, map, M2I_MAX_RANK, &nm, error))
        return FALSE;
      if (nm != in->rank) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
            "axes_mapping has %d values; the data %s has rank %d", nm,
            ir_k_shape_str (in, 0), in->rank);
        return FALSE;
      }
      for (gint d = 0; d < n; d++)
        aligned.dims[d] = 1;
      for (gint i = 0; i < nm; i++) {
        if (map[i] < 0 || map[i] >= n || (i > 0 && map[i] <= map[i - 1]) ||
            (in->dims[i] != 1 && in->dims[i] != target[map[i]])) {
          m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
              "axes_mapping value %" G_GINT64_FORMAT " (for data axis %d of %s) is not an "
              "increasing axis of target_shape %s with an equal dim or 1",
              map[i], i, ir_k_shape_str (in, 0), ir_k_shape_str (&want, 1));
          return FALSE;
        }
        aligned.dims[map[i]] = in->dims[i];
      }
      out = want;
      break;
    }
    case 2: {                          /* bidirectional */
      GError *local = NULL;
      if (!m2i_shape_broadcast (in, &want, &out, &local)) {
        m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node, "%s",
            local->message);
        g_error_free (local);
        return FALSE;
      }
      aligned.rank = out.rank;
      for (gint d = 0; d < out.rank; d++) {
        gint di = d - (out.rank - in->rank);
        aligned.dims[d] = di >= 0 ? in->dims[di] : 1;
      }
      break;
    }
    default: {                         /* numpy, pdpd: the data onto the target */
      M2iKBroadcastSpec spec = { mode == 3 ? M2I_K_BCAST_PDPD : M2I_K_BCAST_NUMPY, -1 };
      if (mode == 3 && !m2i_ir_node_attr_int (ctx->node, "axis", -1, &spec.axis, error))
        return FALSE;
      M2iShape b = *in;
      if (!ir_k_broadcast_pair (ctx, &spec, &want, 1, &b, 0, TRUE, &out, error))
        return FALSE;
      for (gint d = 0; d < n; d++) {
        gint di = d - (n - b.rank);
        aligned.dims[d] = di >= 0 ? b.dims[di] : 1;
      }
      break;
    }
  }
  return tile_setup (ctx, &aligned, &out, error);
}

const M2iOpKernel ir_kernel_tile = { "Tile", "opset1", tile_infer, tile_execute, g_free };
const M2iOpKernel ir_kernel_broadcast = {
  "Broadcast", "opset1 opset3", broadcast_infer, tile_execute, g_free,
};
