/* Add-1, Subtract-1, Multiply-1, Divide-1: element-wise arithmetic with
 * auto_broadcast "numpy" (the default) or "none" (shapes must be equal).
 * f32, i32 and i64. Integer results wrap around (two's complement), as
 * OpenVINO's reference does on its machines; Divide on integers follows
 * m_pythondivision (default true: floor division, otherwise truncation)
 * and fails at run time on a zero divisor.
 *
 * The broadcast plan (kernel-util.c) turns every case into rows whose
 * operands are either contiguous or a single repeated value, so the inner
 * loops vectorize; a per-channel bias add [1,C,H,W] + [1,C,1,1] is one
 * row per channel with a scalar.
 */
#include "kernels-private.h"

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV } BinOp;

typedef struct {
  BinOp op;
  M2iElementType type;
  gboolean python_div;
  M2iBroadcast plan;
} BinState;

typedef struct {
  const BinState *s;
  const guint8 *a, *b;
  guint8 *out;
  gint div_by_zero;                    /* set atomically by rows */
} BinJob;

/* ---- f32 rows ---------------------------------------------------------- */

#define F32_ROW(name, EXPR) \
  M2I_K_INLINE void \
  name##_body (const float *a, gint64 sa, const float *b, gint64 sb, float *o, gint64 n) \
  { \
    if (sa && sb) { \
      for (gint64 i = 0; i < n; i++) { float x = a[i], y = b[i]; o[i] = (EXPR); } \
    } else if (sa) { \
      float y = b[0]; \
      for (gint64 i = 0; i < n; i++) { float x = a[i]; o[i] = (EXPR); } \
    } else if (sb) { \
      float x = a[0]; \
      for (gint64 i = 0; i < n; i++) { float y = b[i]; o[i] = (EXPR); } \
    } else { \
      float x = a[0], y = b[0], v = (EXPR); \
      for (gint64 i = 0; i < n; i++) o[i] = v; \
    } \
  } \
  M2I_K_SIMD_CLONES (name, (const float *a, gint64 sa, const float *b, gint64 sb, \
      float *o, gint64 n), (a, sa, b, sb, o, n))

F32_ROW (add_f32, x + y)
F32_ROW (sub_f32, x - y)
F32_ROW (mul_f32, x * y)
F32_ROW (div_f32, x / y)

/* ---- integer rows ------------------------------------------------------ */

/* Wrap-around arithmetic through the unsigned type (no undefined
 * behaviour on overflow). */
#define INT_ROWS(T, U) \
  static void \
  int_row_##T (BinOp op, gboolean python_div, const T *a, gint64 sa, const T *b, \
      gint64 sb, T *o, gint64 n, gint *div_by_zero) \
  { \
    for (gint64 i = 0; i < n; i++) { \
      T x = a[i * sa], y = b[i * sb]; \
      switch (op) { \
        case OP_ADD: o[i] = (T) ((U) x + (U) y); break; \
        case OP_SUB: o[i] = (T) ((U) x - (U) y); break; \
        case OP_MUL: o[i] = (T) ((U) x * (U) y); break; \
        case OP_DIV: \
          if (y == 0) { \
            g_atomic_int_set (div_by_zero, 1); \
            o[i] = 0; \
          } else if (y == -1) { \
            o[i] = (T) (0 - (U) x);    /* MIN / -1 wraps to MIN */ \
          } else { \
            T q = x / y; \
            if (python_div && (x % y) != 0 && ((x < 0) != (y < 0))) \
              q--; \
            o[i] = q; \
          } \
          break; \
      } \
    } \
  }

INT_ROWS (gint32, guint32)
INT_ROWS (gint64, guint64)

static void
bin_row (const gint64 *off, gint64 n, gpointer user)
{
  BinJob *j = user;
  const BinState *s = j->s;
  gint64 sa = s->plan.strides[0][s->plan.rank - 1];
  gint64 sb = s->plan.strides[1][s->plan.rank - 1];
  gsize es = m2i_element_type_size (s->type);
  const guint8 *a = j->a + off[0] * es, *b = j->b + off[1] * es;
  guint8 *o = j->out + off[2] * es;
  switch (s->type) {
    case M2I_ET_F32: {
      const float *fa = (const float *) a, *fb = (const float *) b;
      float *fo = (float *) o;
      switch (s->op) {
        case OP_ADD: add_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_SUB: sub_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_MUL: mul_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_DIV: div_f32 (fa, sa, fb, sb, fo, n); break;
      }
      break;
    }
    case M2I_ET_I32:
      int_row_gint32 (s->op, s->python_div, (const gint32 *) a, sa, (const gint32 *) b, sb,
          (gint32 *) o, n, &j->div_by_zero);
      break;
    default:
      int_row_gint64 (s->op, s->python_div, (const gint64 *) a, sa, (const gint64 *) b, sb,
          (gint64 *) o, n, &j->div_by_zero);
      break;
  }
}

/* Checks the two inputs, computes the output shape per auto_broadcast and
 * plans the broadcast. */
static gboolean
bin_infer (M2iOpContext *ctx, BinOp op, GError **error)
{
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
  static const char *const modes[] = { "numpy", "none", "explicit", "pdpd", NULL };
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, types, G_N_ELEMENTS (types), error))
    return FALSE;
  const M2iTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  if (a->type != b->type) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "inputs have different element types (%s and %s)",
        m2i_element_type_to_string (a->type), m2i_element_type_to_string (b->type));
    return FALSE;
  }
  gint mode;
  if (!m2i_ir_node_attr_enum (ctx->node, "auto_broadcast", "numpy", modes, &mode, error))
    return FALSE;
  M2iShape out;
  if (mode == 0) {
    GError *local = NULL;
    if (!m2i_shape_broadcast (&a->shape, &b->shape, &out, &local)) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node, "%s",
          local->message);
      g_error_free (local);
      return FALSE;
    }
  } else if (mode == 1 || mode == 2) {
    if (!m2i_shape_equal (&a->shape, &b->shape)) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "auto_broadcast=none needs equal shapes, got %s and %s",
          ir_k_shape_str (&a->shape, 0), ir_k_shape_str (&b->shape, 1));
      return FALSE;
    }
    out = a->shape;
  } else {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "auto_broadcast=pdpd is not supported (numpy and none are)");
    return FALSE;
  }
  BinState *s = g_new0 (BinState, 1);
  s->op = op;
  s->type = a->type;
  if (!m2i_ir_node_attr_bool (ctx->node, "m_pythondivision", TRUE, &s->python_div, error)) {
    g_free (s);
    return FALSE;
  }
  const M2iShape *ops[3] = { &a->shape, &b->shape, &out };
  ir_k_broadcast_plan (&s->plan, &out, ops, 3);
  ctx->outputs[0].type = a->type;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

static gboolean
bin_execute (M2iOpContext *ctx, GError **error)
{
  const BinState *s = ctx->state;
  BinJob j = { s, ctx->inputs[0].data, ctx->inputs[1].data, ctx->outputs[0].data, 0 };
  if (m2i_shape_numel (&ctx->outputs[0].shape) == 0)
    return TRUE;
  ir_k_broadcast_run (&s->plan, ir_k_threads (ctx), bin_row, &j);
  if (j.div_by_zero) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "integer division by zero");
    return FALSE;
  }
  return TRUE;
}

static gboolean add_infer (M2iOpContext *c, GError **e) { return bin_infer (c, OP_ADD, e); }
static gboolean sub_infer (M2iOpContext *c, GError **e) { return bin_infer (c, OP_SUB, e); }
static gboolean mul_infer (M2iOpContext *c, GError **e) { return bin_infer (c, OP_MUL, e); }
static gboolean div_infer (M2iOpContext *c, GError **e) { return bin_infer (c, OP_DIV, e); }

const M2iOpKernel ir_kernel_add = { "Add", "opset1", add_infer, bin_execute, g_free };
const M2iOpKernel ir_kernel_subtract = { "Subtract", "opset1", sub_infer, bin_execute, g_free };
const M2iOpKernel ir_kernel_multiply = { "Multiply", "opset1", mul_infer, bin_execute, g_free };
const M2iOpKernel ir_kernel_divide = { "Divide", "opset1", div_infer, bin_execute, g_free };
