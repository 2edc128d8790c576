/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Element-wise unary math: the activations Swish-4, HSwish-4, HSigmoid-5,
 * HardSigmoid-1, Mish-4, Gelu-2, Gelu-7, Elu-1, Selu-1, SoftPlus-4,
 * SoftSign-9, and the arithmetic Tanh, Erf, Abs, Negative, Sign, Floor,
 * Ceiling, Round-5, Sqrt, Log, Sin, Cos, Tan, Asin, Acos, Atan, Sinh,
 * Cosh, Asinh-3, Acosh-3, Atanh-3 (opset1 unless named).
 *
 * f32 everywhere; Abs, Negative, Sign, Floor, Ceiling and Round also take
 * i32 and i64 (the last three leave integers as they are; Abs and
 * Negative wrap at MIN, as two's complement does).
 *
 * Swish, Sigmoid's split, HSwish, HSigmoid, HardSigmoid, Mish, Elu, Selu,
 * SoftSign, Abs, Negative and Sign are written as vectorizable C (vmath.h
 * for e^x) and compiled per instruction set; the others call libm per
 * element (correctly rounded or within an ulp or two: glibc's). Formulas
 * are the specifications' (each quoted at its case below), in the
 * reference's order of operations. Outputs may overwrite their input
 * (element i from element i only), so the runtime runs them in place.
 */
#include "kernels-private.h"
#include "vmath.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include "vmath-avx512.h"
#endif

#include <math.h>

typedef enum {
  U_SWISH, U_HSWISH, U_HSIGMOID, U_HARD_SIGMOID, U_MISH, U_GELU_ERF, U_GELU_TANH, U_ELU,
  U_SELU, U_SOFTPLUS, U_SOFTSIGN, U_TANH, U_ERF, U_ABS, U_NEGATIVE, U_SIGN, U_FLOOR,
  U_CEILING, U_ROUND_EVEN, U_ROUND_AWAY, U_SQRT, U_LOG, U_SIN, U_COS, U_TAN, U_ASIN,
  U_ACOS, U_ATAN, U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH,
} UnOp;

typedef struct {
  UnOp op;
  M2iElementType type;
  gint64 numel;
  /* Swish's β, Elu's α, Selu's α and λ, HardSigmoid's α and β: from
   * attributes or constant inputs; @param_input >= 0 when a value is read
   * from that input at run time instead (Swish's β). */
  float alpha, beta;
  gint param_input;
} UnState;

/* ---- vectorizable f32 loops ---------------------------------------------- */

M2I_K_INLINE void
swish_c_body (const float *x, float *y, gint64 n, float beta)
{
  for (gint64 i = 0; i < n; i++)
    y[i] = ir_vm_swish (x[i], beta);
}
M2I_K_SIMD_CLONES (swish_c, (const float *x, float *y, gint64 n, float beta), (x, y, n, beta))

#if defined(__x86_64__) && defined(__GNUC__)
/* The same with vmath-avx512.h's intrinsics (1.6 times the compiled loop's
 * speed, the same results). */
IR_VM_AVX512 static void
swish_avx512 (const float *x, float *y, gint64 n, float beta)
{
  __m512 b = _mm512_set1_ps (beta);
  gint64 i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps (y + i, ir_vm_swish16 (_mm512_loadu_ps (x + i), b));
  if (i < n) {
    __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps (y + i, m, ir_vm_swish16 (_mm512_maskz_loadu_ps (m, x + i), b));
  }
}
#endif

static void
swish (const float *x, float *y, gint64 n, float beta)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (m2i_cpu_flags () & M2I_CPU_AVX512F) {
    swish_avx512 (x, y, n, beta);
    return;
  }
#endif
  swish_c (x, y, n, beta);
}

void
ir_k_swish_f32 (const float *x, float *y, gint64 n, float beta)
{
  swish (x, y, n, beta);
}

/* The loops with one or two parameters: a switch outside, one loop each,
 * so each loop vectorizes. */
M2I_K_INLINE void
simple_body (UnOp op, const float *x, float *y, gint64 n, float a, float b)
{
  switch (op) {
    case U_HSWISH:
      /* x · min(max(x + 3, 0), 6) / 6 */
      for (gint64 i = 0; i < n; i++) {
        float t = x[i] + 3.0f;
        t = t < 0.0f ? 0.0f : t;       /* std::max / std::min: NaN stays */
        t = 6.0f < t ? 6.0f : t;
        y[i] = x[i] * t / 6.0f;
      }
      break;
    case U_HSIGMOID:
      /* min(max(x + 3, 0), 6) / 6 */
      for (gint64 i = 0; i < n; i++) {
        float t = x[i] + 3.0f;
        t = t < 0.0f ? 0.0f : t;       /* std::max / std::min: NaN stays */
        t = 6.0f < t ? 6.0f : t;
        y[i] = t / 6.0f;
      }
      break;
    case U_HARD_SIGMOID:
      /* max(0, min(1, α·x + β)) */
      for (gint64 i = 0; i < n; i++) {
        float t = a * x[i] + b;
        t = t < 1.0f ? t : 1.0f;
        y[i] = t > 0.0f ? t : 0.0f;
      }
      break;
    case U_MISH:
      /* x · tanh(ln(1 + e^x)); tanh(ln(1 + e)) = ((1 + e)² − 1)/((1 + e)² + 1)
       * = m / (m + 2) with m = e·(e + 2); 1 in f32 from x = 20 on. */
      for (gint64 i = 0; i < n; i++) {
        float xc = x[i] < 20.0f ? x[i] : 20.0f;
        float e = ir_vm_exp (xc);
        float m = e * (e + 2.0f);
        y[i] = x[i] * (m / (m + 2.0f));
      }
      break;
    case U_ELU:
      /* x > 0 ? x : α·(e^x − 1) */
      for (gint64 i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : a * (ir_vm_exp (x[i]) - 1.0f);
      break;
    case U_SELU:
      /* λ · (x > 0 ? x : α·(e^x − 1)) */
      for (gint64 i = 0; i < n; i++)
        y[i] = b * (x[i] > 0.0f ? x[i] : a * (ir_vm_exp (x[i]) - 1.0f));
      break;
    case U_SOFTSIGN:
      for (gint64 i = 0; i < n; i++)
        y[i] = x[i] / (1.0f + (x[i] < 0.0f ? -x[i] : x[i]));
      break;
    case U_ABS:
      for (gint64 i = 0; i < n; i++)
        y[i] = fabsf (x[i]);
      break;
    case U_NEGATIVE:
      for (gint64 i = 0; i < n; i++)
        y[i] = -x[i];
      break;
    case U_SIGN:
      /* (0 < x) − (x < 0): NaN gives 0, as the reference's expression */
      for (gint64 i = 0; i < n; i++)
        y[i] = (float) ((0.0f < x[i]) - (x[i] < 0.0f));
      break;
    default:
      break;
  }
}
M2I_K_SIMD_CLONES (simple, (UnOp op, const float *x, float *y, gint64 n, float a, float b),
    (op, x, y, n, a, b))

/* ---- libm loops ------------------------------------------------------------ */

static void
libm_f32 (UnOp op, const float *x, float *y, gint64 n)
{
  for (gint64 i = 0; i < n; i++) {
    float v = x[i];
    switch (op) {
      case U_GELU_ERF:
        /* 0.5·x·(1 + erf(x / √2)) */
        y[i] = 0.5f * v * (1.0f + erff (v * (float) M_SQRT1_2));
        break;
      case U_GELU_TANH:
        /* 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) */
        y[i] = 0.5f * v * (1.0f + tanhf (0.797884560802865f * (v + 0.044715f * v * v * v)));
        break;
      case U_SOFTPLUS:
        /* ln(e^x + 1) below the f32 threshold 20, x from there */
        y[i] = v < 20.0f ? log1pf (expf (v)) : v;
        break;
      case U_TANH: y[i] = tanhf (v); break;
      case U_ERF: y[i] = erff (v); break;
      case U_FLOOR: y[i] = floorf (v); break;
      case U_CEILING: y[i] = ceilf (v); break;
      case U_ROUND_EVEN: y[i] = rintf (v); break;         /* default rounding: to even */
      case U_ROUND_AWAY: y[i] = roundf (v); break;
      case U_SQRT: y[i] = sqrtf (v); break;
      case U_LOG: y[i] = logf (v); break;
      case U_SIN: y[i] = sinf (v); break;
      case U_COS: y[i] = cosf (v); break;
      case U_TAN: y[i] = tanf (v); break;
      case U_ASIN: y[i] = asinf (v); break;
      case U_ACOS: y[i] = acosf (v); break;
      case U_ATAN: y[i] = atanf (v); break;
      case U_SINH: y[i] = sinhf (v); break;
      case U_COSH: y[i] = coshf (v); break;
      case U_ASINH: y[i] = asinhf (v); break;
      case U_ACOSH: y[i] = acoshf (v); break;
      case U_ATANH: y[i] = atanhf (v); break;
      default: break;
    }
  }
}

/* ---- integers -------------------------------------------------------------- */

#define INT_UNARY(T, U) \
  static void \
  int_##T (UnOp op, const T *x, T *y, gint64 n) \
  { \
    for (gint64 i = 0; i < n; i++) { \
      T v = x[i]; \
      switch (op) { \
        case U_ABS: y[i] = v < 0 ? (T) (0 - (U) v) : v; break; \
        case U_NEGATIVE: y[i] = (T) (0 - (U) v); break; \
        case U_SIGN: y[i] = (T) ((0 < v) - (v < 0)); break; \
        default: y[i] = v; break;      /* Floor, Ceiling, Round */ \
      } \
    } \
  }
INT_UNARY (gint32, guint32)
INT_UNARY (gint64, guint64)

/* ---- the kernel ------------------------------------------------------------ */

typedef struct {
  const UnState *s;
  const guint8 *x;
  guint8 *y;
  float alpha, beta;
} UnJob;

/* The ops computed by swish() and simple() (vector loops), and integers. */
static gboolean
is_vector (const UnState *s)
{
  switch (s->op) {
    case U_SWISH: case U_HSWISH: case U_HSIGMOID: case U_HARD_SIGMOID: case U_MISH: case U_ELU:
    case U_SELU: case U_SOFTSIGN: case U_ABS: case U_NEGATIVE: case U_SIGN:
      return TRUE;
    default:
      return s->type != M2I_ET_F32;
  }
}

static void
un_chunk (gint64 first, gint64 n, gpointer data)
{
  const UnJob *j = data;
  const UnState *s = j->s;
  gsize es = m2i_element_type_size (s->type);
  const guint8 *xb = j->x + first * es;
  guint8 *yb = j->y + first * es;
  if (s->type == M2I_ET_I32) {
    int_gint32 (s->op, (const gint32 *) xb, (gint32 *) yb, n);
    return;
  }
  if (s->type == M2I_ET_I64) {
    int_gint64 (s->op, (const gint64 *) xb, (gint64 *) yb, n);
    return;
  }
  const float *x = (const float *) xb;
  float *y = (float *) yb;
  if (s->op == U_SWISH)
    swish (x, y, n, j->beta);
  else if (is_vector (s))
    simple (s->op, x, y, n, j->alpha, j->beta);
  else
    libm_f32 (s->op, x, y, n);
}

/* A scalar parameter from input @i: constant (any real type), or, when
 * @at_run_time is given, an f32 read by execute() (*at_run_time set). */
static gboolean
scalar_input (M2iOpContext *ctx, gint i, const char *what, float *out, gboolean *at_run_time,
    GError **error)
{
  const M2iTensor *t = &ctx->inputs[i];
  if (!t->data && at_run_time && m2i_shape_numel (&t->shape) == 1 && t->type == M2I_ET_F32) {
    *at_run_time = TRUE;
    return TRUE;
  }
  double v;
  if (!ir_k_const_scalar (ctx, i, what, &v, error))
    return FALSE;
  *out = (float) v;
  return TRUE;
}

static gboolean
un_infer (M2iOpContext *ctx, UnOp op, GError **error)
{
  static const M2iElementType ints[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  gboolean takes_ints = op == U_ABS || op == U_NEGATIVE || op == U_SIGN || op == U_FLOOR ||
      op == U_CEILING || op == U_ROUND_EVEN || op == U_ROUND_AWAY;
  gint n_in = op == U_SELU || op == U_HARD_SIGMOID ? 3 : 1;
  if (!ir_k_check_arity (ctx, n_in, op == U_SWISH ? 2 : n_in, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, ints, takes_ints ? G_N_ELEMENTS (ints) : 1, error))
    return FALSE;
  UnState s = { op, ctx->inputs[0].type, m2i_shape_numel (&ctx->inputs[0].shape),
    1.0f, 1.0f, -1 };
  switch (op) {
    case U_SWISH:
      if (ctx->n_inputs == 2) {
        gboolean later = FALSE;
        if (!scalar_input (ctx, 1, "beta", &s.beta, &later, error))
          return FALSE;
        if (later)
          s.param_input = 1;
      }
      break;
    case U_ELU: {
      double alpha;
      if (!ir_k_require_attrs (ctx, error, "alpha", NULL) ||
          !m2i_ir_node_attr_float (ctx->node, "alpha", 0.0, &alpha, error))
        return FALSE;
      s.alpha = (float) alpha;
      break;
    }
    case U_SELU:
      if (!scalar_input (ctx, 1, "alpha", &s.alpha, NULL, error) ||
          !scalar_input (ctx, 2, "lambda", &s.beta, NULL, error))
        return FALSE;
      break;
    case U_HARD_SIGMOID:
      if (!scalar_input (ctx, 1, "alpha", &s.alpha, NULL, error) ||
          !scalar_input (ctx, 2, "beta", &s.beta, NULL, error))
        return FALSE;
      break;
    default:
      break;
  }
  ctx->outputs[0].type = s.type;
  ctx->outputs[0].shape = ctx->inputs[0].shape;
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
un_execute (M2iOpContext *ctx, GError **error)
{
  const UnState *s = ctx->state;
  UnJob j = { s, ctx->inputs[0].data, ctx->outputs[0].data, s->alpha, s->beta };
  if (s->param_input >= 0)
    j.beta = *(const float *) ctx->inputs[s->param_input].data;
  /* The libm loops cost ~10× a vector loop per element: share them out
   * sooner. */
  ir_k_run_chunks (ctx, s->numel, is_vector (s) ? 65536 : 16384, un_chunk, &j);
  return TRUE;
}

static gboolean
round_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "half_to_even", "half_away_from_zero", NULL };
  gint mode;
  if (!m2i_ir_node_attr_enum (ctx->node, "mode", "half_to_even", modes, &mode, error))
    return FALSE;
  return un_infer (ctx, mode ? U_ROUND_AWAY : U_ROUND_EVEN, error);
}

static gboolean
gelu_infer (M2iOpContext *ctx, GError **error)
{
  static const char *const modes[] = { "erf", "tanh", NULL };
  gint mode = 0;
  /* Gelu-2 has no attribute: erf. */
  if (ir_k_op_version (ctx) >= 7 &&
      !m2i_ir_node_attr_enum (ctx->node, "approximation_mode", "erf", modes, &mode, error))
    return FALSE;
  return un_infer (ctx, mode ? U_GELU_TANH : U_GELU_ERF, error);
}

#define UN_KERNEL(var, name, opsets, op) \
  static gboolean var##_infer (M2iOpContext *c, GError **e) { return un_infer (c, op, e); } \
  const M2iOpKernel ir_kernel_##var = { name, opsets, var##_infer, un_execute, g_free };

UN_KERNEL (swish, "Swish", "opset4", U_SWISH)
UN_KERNEL (hswish, "HSwish", "opset4", U_HSWISH)
UN_KERNEL (hsigmoid, "HSigmoid", "opset5", U_HSIGMOID)
UN_KERNEL (hard_sigmoid, "HardSigmoid", "opset1", U_HARD_SIGMOID)
UN_KERNEL (mish, "Mish", "opset4", U_MISH)
UN_KERNEL (elu, "Elu", "opset1", U_ELU)
UN_KERNEL (selu, "Selu", "opset1", U_SELU)
UN_KERNEL (softplus, "SoftPlus", "opset4", U_SOFTPLUS)
UN_KERNEL (softsign, "SoftSign", "opset9", U_SOFTSIGN)
UN_KERNEL (tanh, "Tanh", "opset1", U_TANH)
UN_KERNEL (erf, "Erf", "opset1", U_ERF)
UN_KERNEL (abs, "Abs", "opset1", U_ABS)
UN_KERNEL (negative, "Negative", "opset1", U_NEGATIVE)
UN_KERNEL (sign, "Sign", "opset1", U_SIGN)
UN_KERNEL (floor, "Floor", "opset1", U_FLOOR)
UN_KERNEL (ceiling, "Ceiling", "opset1", U_CEILING)
UN_KERNEL (sqrt, "Sqrt", "opset1", U_SQRT)
UN_KERNEL (log, "Log", "opset1", U_LOG)
UN_KERNEL (sin, "Sin", "opset1", U_SIN)
UN_KERNEL (cos, "Cos", "opset1", U_COS)
UN_KERNEL (tan, "Tan", "opset1", U_TAN)
UN_KERNEL (asin, "Asin", "opset1", U_ASIN)
UN_KERNEL (acos, "Acos", "opset1", U_ACOS)
UN_KERNEL (atan, "Atan", "opset1", U_ATAN)
UN_KERNEL (sinh, "Sinh", "opset1", U_SINH)
UN_KERNEL (cosh, "Cosh", "opset1", U_COSH)
UN_KERNEL (asinh, "Asinh", "opset3", U_ASINH)
UN_KERNEL (acosh, "Acosh", "opset3", U_ACOSH)
UN_KERNEL (atanh, "Atanh", "opset3", U_ATANH)

const M2iOpKernel ir_kernel_round = { "Round", "opset5", round_infer, un_execute, g_free };
const M2iOpKernel ir_kernel_gelu = { "Gelu", "opset2 opset7", gelu_infer, un_execute, g_free };
