/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* MatMul-1: batched matrix product with transpose_a / transpose_b, 1-D
 * operands (a vector is a 1 × K row on the left, a K × 1 column on the
 * right, and that unit axis is dropped from the output) and numpy
 * broadcasting of the batch axes.
 *
 * f32 runs on the blocked GEMM (gemm.h): a constant right operand — the
 * weights of a fully connected layer — is packed once in infer(); the left
 * operand is packed per batch matrix into scratch. i32 and i64 run a plain
 * loop with wrap-around arithmetic.
 */
#include "kernels-private.h"
#include "gemm.h"
#include <base/m2i-align.h>
#include <base/m2i-fp16.h>
#include <base/m2i-parallel.h>

#include <string.h>

typedef struct {
  M2iElementType type;
  const M2iGemmArch *arch;
  gint64 m, n, k;
  gssize a_rs, a_cs, b_rs, b_cs;       /* element strides within one matrix */
  M2iBroadcast batch;                  /* output batch dims; operand 0 = A, 1 = B */
  gint64 batches;
  gint64 a_mat, b_mat;                 /* elements per A / B matrix */
  gpointer packed_b;                   /* constant B, packed per B matrix: floats, or halves */
  gboolean half_b;                     /* packed_b holds halves (see pack_b_half) */
  gint64 b_mats;                       /* B matrices in packed_b */
  gsize packed_b_mat;                  /* values per packed B matrix */
  gint slices;
  gsize packed_a, bbuf_floats, strip_floats;
  M2iKFusion fused;                    /* ir_k_fuse_bias_relu () */
  gboolean b_vector;                   /* 1-D right operand: no N axis in the output */
} MatMulState;

static void
matmul_state_free (gpointer p)
{
  MatMulState *s = p;
  if (s) {
    g_free (s->packed_b);
    g_free (s->fused.bias);
    g_free (s);
  }
}

/* A one-row product reads each weight once: past L1 (48 KiB on Zen 5)
 * it waits on L2 or memory, and halves are half the traffic. One row ×
 * 128 columns, one thread, weights hot in cache (AMD EPYC Zen 5, AVX-512):
 * packed B of 32 KiB 0.39 µs either way, 64 KiB 0.68 → 0.49 µs, 512 KiB
 * 4.06 → 2.07, 4 MiB 39.2 → 20.2; AVX2 128 KiB 1.14 → 0.92. */
#define HALF_B_MIN_BYTES (64 * 1024)

static gint half_enabled = -1;         /* unknown: M2I_MATMUL_HALF decides */

gboolean
ir_k_matmul_half_enabled (void)
{
  return ir_k_switch_on (&half_enabled, "M2I_MATMUL_HALF");
}

void
ir_k_matmul_half_set_enabled (gboolean on)
{
  ir_k_switch_set (&half_enabled, on);
}

/* Keeps @s's packed B (@floats values) as halves when that gives the same
 * results: one row, a large B, every value exact in fp16 (a float16
 * model's widened weights), and one-row kernels for halves on this CPU. */
static void
pack_b_half (MatMulState *s, gsize floats)
{
  if (s->m != 1 || floats * sizeof (float) < HALF_B_MIN_BYTES || !ir_gemm_half_b (s->arch) ||
      !ir_k_matmul_half_enabled ())
    return;
  guint16 *h = g_new (guint16, floats);
  const float *f = s->packed_b;
  for (gsize i = 0; i < floats; i += 1024) {
    gsize n = MIN (1024, floats - i);
    float back[1024];
    m2i_f32_to_f16_n (f + i, h + i, n);
    m2i_f16_to_f32_n (h + i, back, n);
    if (memcmp (back, f + i, n * sizeof (float)) != 0) {
      g_free (h);
      return;
    }
  }
  g_free (s->packed_b);
  s->packed_b = h;
  s->half_b = TRUE;
}

/* Bytes per value of the packed B: a float, or a half (pack_b_half). */
static gsize
packed_b_esize (const MatMulState *s)
{
  return s->half_b ? sizeof (guint16) : sizeof (float);
}

static gboolean
matmul_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, types, G_N_ELEMENTS (types), error))
    return FALSE;
  if (ctx->inputs[1].type != ctx->inputs[0].type) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "inputs have different element types (%s and %s)",
        m2i_element_type_to_string (ctx->inputs[0].type),
        m2i_element_type_to_string (ctx->inputs[1].type));
    return FALSE;
  }
  gboolean ta, tb;
  if (!m2i_ir_node_attr_bool (ctx->node, "transpose_a", FALSE, &ta, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "transpose_b", FALSE, &tb, error))
    return FALSE;
  M2iShape a = ctx->inputs[0].shape, b = ctx->inputs[1].shape;
  if (a.rank < 1 || b.rank < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "inputs %s and %s: scalars cannot be multiplied as matrices",
        ir_k_shape_str (&a, 0), ir_k_shape_str (&b, 1));
    return FALSE;
  }
  /* 1-D operands: transposes are ignored, the vector becomes a matrix. */
  gboolean a_vec = a.rank == 1, b_vec = b.rank == 1;
  if (a_vec) {
    a = (M2iShape) { 2, { 1, a.dims[0] } };
    ta = FALSE;
  }
  if (b_vec) {
    b = (M2iShape) { 2, { b.dims[0], 1 } };
    tb = FALSE;
  }
  gint64 m = a.dims[a.rank - (ta ? 1 : 2)], ka = a.dims[a.rank - (ta ? 2 : 1)];
  gint64 kb = b.dims[b.rank - (tb ? 1 : 2)], n = b.dims[b.rank - (tb ? 2 : 1)];
  if (ka != kb) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "inner dimensions differ: %s%s × %s%s has %" G_GINT64_FORMAT " vs %"
        G_GINT64_FORMAT, ir_k_shape_str (&ctx->inputs[0].shape, 0), ta ? "^T" : "",
        ir_k_shape_str (&ctx->inputs[1].shape, 1), tb ? "^T" : "", ka, kb);
    return FALSE;
  }
  M2iShape ab = { a.rank - 2 }, bb = { b.rank - 2 }, ob;
  memcpy (ab.dims, a.dims, ab.rank * sizeof (gint64));
  memcpy (bb.dims, b.dims, bb.rank * sizeof (gint64));
  GError *local = NULL;
  if (!m2i_shape_broadcast (&ab, &bb, &ob, &local)) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "batch axes: %s", local->message);
    g_error_free (local);
    return FALSE;
  }
  if (m > G_MAXINT / 4 || n > G_MAXINT / 4 || ka > G_MAXINT / 4) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "matrices of %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT
        " are too large", m, ka, n);
    return FALSE;
  }

  MatMulState *s = g_new0 (MatMulState, 1);
  s->type = ctx->inputs[0].type;
  s->arch = ir_gemm_arch ();
  s->m = m;
  s->n = n;
  s->k = ka;
  /* Element (i, p) of A and (p, j) of B inside one matrix. */
  s->a_rs = ta ? 1 : ka;
  s->a_cs = ta ? m : 1;
  s->b_rs = tb ? 1 : n;
  s->b_cs = tb ? ka : 1;
  s->a_mat = m * ka;
  s->b_mat = ka * n;
  s->b_vector = b_vec;
  const M2iShape *ops[2] = { &ab, &bb };
  ir_k_broadcast_plan (&s->batch, &ob, ops, 2);
  s->batches = m2i_shape_numel (&ob);
  s->slices = ir_k_threads (ctx);

  if (s->type == M2I_ET_F32) {
    s->packed_a = m2i_align_up (ir_gemm_packed_a_size (s->arch, (gint) m, (gint) ka), 16);
    s->bbuf_floats = m2i_align_up ((gsize) s->arch->kc * s->arch->nr, 16);
    s->strip_floats = m2i_align_up (ir_gemm_strip_size (s->arch), 16);
    ctx->scratch_bytes = (s->packed_a + s->slices * (s->bbuf_floats + s->strip_floats))
        * sizeof (float);
    if (ctx->inputs[1].data) {
      s->b_mats = m2i_shape_numel (&bb);
      s->packed_b_mat = ir_gemm_packed_b_size (s->arch, (gint) ka, (gint) n);
      float *packed = g_new (float, MAX (s->packed_b_mat * s->b_mats, 1));
      const float *src = ctx->inputs[1].data;
      for (gint64 i = 0; i < s->b_mats; i++)
        ir_gemm_pack_b (s->arch, src + i * s->b_mat, s->b_rs, s->b_cs, (gint) ka, (gint) n,
            packed + i * s->packed_b_mat);
      s->packed_b = packed;
      pack_b_half (s, s->packed_b_mat * s->b_mats);
    }
  }

  M2iTensor *out = &ctx->outputs[0];
  out->type = s->type;
  out->shape = ob;
  if (!a_vec)
    out->shape.dims[out->shape.rank++] = m;
  if (!b_vec)
    out->shape.dims[out->shape.rank++] = n;
  ctx->state = s;
  return TRUE;
}

typedef struct {
  const MatMulState *s;
  const float *b;                      /* this batch's B matrix (unpacked) */
  gconstpointer packed_b;              /* or its packed panels (floats or halves) */
  const float *packed_a;               /* or, for one row, A itself */
  gsize a1_stride;
  float *c, *scratch;
  gint unit;                           /* columns per task of matmul_slice */
} MatMulJob;

static const float *
matmul_b_panel (gpointer user, gint k0, gint kc, gint n0, gint ncols, float *buf,
    const gint32 **off)
{
  const MatMulJob *j = user;
  const MatMulState *s = j->s;
  *off = ir_gemm_packed_offsets (s->arch);
  /* Columns from n0 may start inside a packed panel (see matmul_slice):
   * its rows are nr floats apart, so they are read from n0's lane on. */
  gint lane = n0 % s->arch->nr;
  gsize at = (gsize) (n0 - lane) * s->k + (gsize) k0 * s->arch->nr + lane;
  if (j->packed_b)
    return (const float *) ((const guint8 *) j->packed_b + at * packed_b_esize (s));
  ir_gemm_pack_b_panel (s->arch, j->b, s->b_rs, s->b_cs, k0, kc, n0, ncols, buf);
  return buf;
}

/* Columns [begin·unit, end·unit) (unit: j->unit columns, a panel or a
 * vector), in pieces that do not cross a packed panel's end. */
static void
matmul_slice (gint begin, gint end, gint slice, gpointer data)
{
  const MatMulJob *j = data;
  const MatMulState *s = j->s;
  gint nr = s->arch->nr;
  gsize per = s->bbuf_floats + s->strip_floats;
  float *bbuf = ir_k_slice_scratch (j->scratch + s->packed_a + slice * per, per * sizeof (float));
  M2iGemmOut o = { j->c, (gsize) s->n, NULL, NULL, NULL, NULL, s->fused.bias, s->fused.relu,
    s->half_b };
  gint stop = (gint) MIN ((gint64) end * j->unit, s->n);
  for (gint n0 = begin * j->unit; n0 < stop;) {
    gint ncols = MIN (nr - n0 % nr, stop - n0);
    ir_gemm_column_panel (s->arch, (gint) s->m, (gint) s->k, j->packed_a, j->a1_stride, n0,
        ncols, matmul_b_panel, (gpointer) j, bbuf, bbuf + s->bbuf_floats, &o);
    n0 += ncols;
  }
}

/* Offsets (in matrices) of A and B for output batch @i. */
static void
batch_offsets (const MatMulState *s, gint64 i, gint64 *a, gint64 *b)
{
  *a = *b = 0;
  for (gint d = s->batch.rank - 1; d >= 0; d--) {
    gint64 idx = i % s->batch.dims[d];
    i /= s->batch.dims[d];
    *a += idx * s->batch.strides[0][d];
    *b += idx * s->batch.strides[1][d];
  }
}

#define MATMUL_INT(T, U) \
  static void \
  matmul_##T (const MatMulState *s, const T *a, const T *b, T *c) \
  { \
    for (gint64 i = 0; i < s->m; i++) \
      for (gint64 j = 0; j < s->n; j++) { \
        U acc = 0; \
        for (gint64 p = 0; p < s->k; p++) \
          acc += (U) a[i * s->a_rs + p * s->a_cs] * (U) b[p * s->b_rs + j * s->b_cs]; \
        c[i * s->n + j] = (T) acc; \
      } \
  }
MATMUL_INT (gint32, guint32)
MATMUL_INT (gint64, guint64)

static gboolean
matmul_execute (M2iOpContext *ctx, GError **error)
{
  const MatMulState *s = ctx->state;
  gsize esize = m2i_element_type_size (s->type);
  const guint8 *a = ctx->inputs[0].data, *b = ctx->inputs[1].data;
  guint8 *c = ctx->outputs[0].data;
  gint64 panels = (s->n + s->arch->nr - 1) / s->arch->nr;
  for (gint64 i = 0; i < s->batches; i++) {
    gint64 ai, bi;
    batch_offsets (s, i, &ai, &bi);
    const guint8 *am = a + ai * s->a_mat * esize, *bm = b + bi * s->b_mat * esize;
    guint8 *cm = c + i * s->m * s->n * esize;
    if (s->type == M2I_ET_I32) {
      matmul_gint32 (s, (const gint32 *) am, (const gint32 *) bm, (gint32 *) cm);
    } else if (s->type == M2I_ET_I64) {
      matmul_gint64 (s, (const gint64 *) am, (const gint64 *) bm, (gint64 *) cm);
    } else {
      float *scratch = ctx->scratch;
      /* One row is read in place; more are packed into register panels. */
      const float *pa = (const float *) am;
      gsize a1 = s->a_cs;
      if (s->m > 1) {
        ir_gemm_pack_a (s->arch, (const float *) am, s->a_rs, s->a_cs, (gint) s->m,
            (gint) s->k, scratch);
        pa = scratch;
        a1 = s->arch->mr;
      }
      MatMulJob j = { s, (const float *) bm, s->packed_b ? (const guint8 *) s->packed_b +
            bi * s->packed_b_mat * packed_b_esize (s) : NULL, pa, a1, (float *) cm, scratch,
        s->arch->nr };
      gint slices = MIN (ir_k_slices_for (ctx, s->m * s->n * s->k), s->slices);
      gint64 tasks = panels;
      /* Few panels that do not share out evenly (Fashion-MNIST's 128
       * columns are 48 + 48 + 32: 48 against 80 on two threads) are cut
       * into vectors of columns instead (64 and 64). */
      if (slices > 1 && panels % slices && panels < 8 * slices) {
        j.unit = s->arch->step;
        tasks = (s->n + j.unit - 1) / j.unit;
      }
      ir_k_parallel_for ((gint) tasks, slices, 1, matmul_slice, &j);
    }
  }
  return TRUE;
}

M2iKFusion *
ir_k_matmul_fusion (M2iOpContext *ctx, gint64 *channels)
{
  MatMulState *s = ctx->state;
  *channels = s->n;
  return s->type == M2I_ET_F32 && !s->b_vector ? &s->fused : NULL;
}

gboolean
ir_k_matmul_half_b (M2iOpContext *ctx)
{
  const MatMulState *s = ctx->state;
  return s->half_b;
}

const M2iOpKernel ir_kernel_matmul = {
  "MatMul", "opset1", matmul_infer, matmul_execute, matmul_state_free,
};
