/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* FakeQuantize-1, f32: x quantized to `levels` steps between input_low and
 * input_high and mapped onto [output_low, output_high]. The four range
 * inputs broadcast onto x (numpy, or none: equal shapes). In the spec's
 * order of operations, in f32, with its rounding (nearbyint: half to even):
 *   x <= min(il, ih) → ol;  x > max(il, ih) → oh;
 *   else round((x − il) / (ih − il) · (levels − 1)) / (levels − 1) · (oh − ol) + ol
 */
#include "kernels-private.h"

#include <math.h>

typedef struct {
  float levels_m1;
  M2iBroadcast plan;                   /* x, il, ih, ol, oh, out */
} FqState;

typedef struct {
  const FqState *s;
  const float *in[5];
  float *out;
} FqJob;

M2I_K_INLINE void
fq_row_body (const float *x, const float *il, const float *ih, const float *ol,
    const float *oh, float *y, gint64 n, const gint64 *st, float lm1)
{
  for (gint64 i = 0; i < n; i++) {
    float a = il[i * st[1]], b = ih[i * st[2]], lo = ol[i * st[3]], hi = oh[i * st[4]];
    float v = x[i * st[0]];
    if (v <= MIN (a, b))
      y[i] = lo;
    else if (v > MAX (a, b))
      y[i] = hi;
    else
      y[i] = nearbyintf ((v - a) / (b - a) * lm1) / lm1 * (hi - lo) + lo;
  }
}
M2I_K_SIMD_CLONES (fq_row, (const float *x, const float *il, const float *ih,
        const float *ol, const float *oh, float *y, gint64 n, const gint64 *st, float lm1),
    (x, il, ih, ol, oh, y, n, st, lm1))

/* A row whose four ranges are constant along it (the innermost dims of a
 * per-tensor or per-channel FakeQuantize, the usual case): the same
 * operations in the same order as fq_row_body, with the ranges hoisted so
 * the compiler vectorizes the loop (vdivps, vrndscaleps, blends) —
 * bit-identical to the general row. */
M2I_K_INLINE void
fq_row_const_body (const float *x, float *y, gint64 n, float a, float b, float lo, float hi,
    float lm1)
{
  float mn = MIN (a, b), mx = MAX (a, b), d = b - a, r = hi - lo;
  for (gint64 i = 0; i < n; i++) {
    float v = x[i];
    float q = nearbyintf ((v - a) / d * lm1) / lm1 * r + lo;
    y[i] = v <= mn ? lo : v > mx ? hi : q;
  }
}
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* GCC leaves the AVX2 copy of that loop scalar: it sinks the divisions
 * into the branch the range tests select, and without AVX-512's masks it
 * will not run them on every lane (the INT8 models' FakeQuantize layers
 * took ten times the AVX-512 time: 28 of person-detection-retail-0013's
 * 67 ms at one thread). Written out here, the same operations in the same
 * order on 8 lanes, then the loop for the rest: bit-identical. */
static void M2I_K_TARGET_AVX2
fq_row_const_avx2 (const float *x, float *y, gint64 n, float a, float b, float lo, float hi,
    float lm1)
{
  const __m256 va = _mm256_set1_ps (a), vd = _mm256_set1_ps (b - a), vl = _mm256_set1_ps (lm1);
  const __m256 vr = _mm256_set1_ps (hi - lo), vlo = _mm256_set1_ps (lo);
  const __m256 vhi = _mm256_set1_ps (hi), vmn = _mm256_set1_ps (MIN (a, b));
  const __m256 vmx = _mm256_set1_ps (MAX (a, b));
  gint64 i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps (x + i);
    __m256 k = _mm256_round_ps (_mm256_mul_ps (_mm256_div_ps (_mm256_sub_ps (v, va), vd), vl),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 q = _mm256_add_ps (_mm256_mul_ps (_mm256_div_ps (k, vl), vr), vlo);
    q = _mm256_blendv_ps (q, vhi, _mm256_cmp_ps (v, vmx, _CMP_GT_OQ));
    q = _mm256_blendv_ps (q, vlo, _mm256_cmp_ps (v, vmn, _CMP_LE_OQ));
    _mm256_storeu_ps (y + i, q);
  }
  fq_row_const_body (x + i, y + i, n - i, a, b, lo, hi, lm1);
}

static void M2I_K_TARGET_AVX512
fq_row_const_avx512 (const float *x, float *y, gint64 n, float a, float b, float lo, float hi,
    float lm1)
{
  fq_row_const_body (x, y, n, a, b, lo, hi, lm1);
}

static void
fq_row_const (const float *x, float *y, gint64 n, float a, float b, float lo, float hi,
    float lm1)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  if (f & M2I_CPU_AVX512F)
    fq_row_const_avx512 (x, y, n, a, b, lo, hi, lm1);
  else if (f & M2I_CPU_AVX2)
    fq_row_const_avx2 (x, y, n, a, b, lo, hi, lm1);
  else
    fq_row_const_body (x, y, n, a, b, lo, hi, lm1);
}
#else
M2I_K_SIMD_CLONES (fq_row_const, (const float *x, float *y, gint64 n, float a, float b,
        float lo, float hi, float lm1), (x, y, n, a, b, lo, hi, lm1))
#endif

static void
fq_rows (const gint64 *off, gint64 n, gpointer user)
{
  const FqJob *j = user;
  const M2iBroadcast *p = &j->s->plan;
  gint64 st[5];
  for (gint k = 0; k < 5; k++)
    st[k] = p->strides[k][p->rank - 1];
  if (st[0] == 1 && !st[1] && !st[2] && !st[3] && !st[4]) {
    fq_row_const (j->in[0] + off[0], j->out + off[5], n, j->in[1][off[1]], j->in[2][off[2]],
        j->in[3][off[3]], j->in[4][off[4]], j->s->levels_m1);
    return;
  }
  fq_row (j->in[0] + off[0], j->in[1] + off[1], j->in[2] + off[2], j->in[3] + off[3],
      j->in[4] + off[4], j->out + off[5], n, st, j->s->levels_m1);
}

static gboolean
fq_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "numpy", "none", "pdpd", NULL };
  if (!ir_k_check_arity (ctx, 5, 5, 1, 1, error))
    return FALSE;
  for (gint i = 0; i < 5; i++)
    if (!ir_k_check_f32 (ctx, i, error))
      return FALSE;
  gint64 levels;
  gint mode;
  if (!m2i_ir_node_attr_int (ctx->node, "levels", -1, &levels, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "auto_broadcast", "numpy", modes, &mode, error))
    return FALSE;
  if (levels < 2) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "attribute levels is required and must be >= 2");
    return FALSE;
  }
  if (mode == 2) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "auto_broadcast=pdpd is not supported (numpy and none are)");
    return FALSE;
  }
  const M2iShape *x = &ctx->inputs[0].shape;
  static const char *const names[] = { "input_low", "input_high", "output_low", "output_high" };
  for (gint i = 1; i < 5; i++) {
    const M2iShape *r = &ctx->inputs[i].shape;
    M2iShape b;
    gboolean ok = mode == 1 ? m2i_shape_equal (r, x)
        : m2i_shape_broadcast (x, r, &b, NULL) && m2i_shape_equal (&b, x);
    if (!ok) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "%s (input %d) has shape %s, which does not %s data %s", names[i - 1], i,
          ir_k_shape_str (r, 0), mode == 1 ? "equal (auto_broadcast=none)" : "broadcast onto",
          ir_k_shape_str (x, 1));
      return FALSE;
    }
  }
  FqState *s = g_new0 (FqState, 1);
  s->levels_m1 = (float) (levels - 1);
  const M2iShape *ops[6] = { x, &ctx->inputs[1].shape, &ctx->inputs[2].shape,
    &ctx->inputs[3].shape, &ctx->inputs[4].shape, x };
  ir_k_broadcast_plan (&s->plan, x, ops, 6);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = *x;
  ctx->state = s;
  return TRUE;
}

static gboolean
fq_execute (M2iOpContext *ctx, GError **error)
{
  const FqState *s = ctx->state;
  FqJob j = { s, { ctx->inputs[0].data, ctx->inputs[1].data, ctx->inputs[2].data,
    ctx->inputs[3].data, ctx->inputs[4].data }, ctx->outputs[0].data };
  if (m2i_shape_numel (&ctx->outputs[0].shape) > 0)
    ir_k_broadcast_run (&s->plan, ir_k_threads (ctx), fq_rows, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_fake_quantize = {
  "FakeQuantize", "opset1", fq_infer, fq_execute, g_free,
};
