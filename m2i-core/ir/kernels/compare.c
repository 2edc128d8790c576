/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Comparisons and logic, element by element: Equal-1, NotEqual-1, Less-1,
 * LessEqual-1, Greater-1, GreaterEqual-1 (any number type, boolean for
 * Equal and NotEqual; a boolean result), LogicalAnd-1, LogicalOr-1,
 * LogicalXor-1, LogicalNot-1 (boolean) and Select-1 (a boolean condition
 * choosing between two tensors of any one type).
 *
 * auto_broadcast numpy (the default), none or pdpd, through the same
 * broadcast plan as the arithmetic (kernel-util.c). Select broadcasts
 * `then` and `else` to each other, then `cond` one way onto that, as its
 * specification says. Booleans are bytes; any non-zero byte reads as true,
 * results are 0 or 1. Comparisons follow C: anything compared with NaN is
 * false, except NotEqual, which is true.
 */
#include "kernels-private.h"

typedef enum {
  C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, L_AND, L_OR, L_XOR,
} CmpOp;

typedef struct {
  CmpOp op;
  M2iElementType type;                 /* of the inputs */
  M2iBroadcast plan;                   /* operands: a, b, out */
} CmpState;

typedef struct {
  const CmpState *s;
  const guint8 *a, *b;
  guint8 *out;
} CmpJob;

#define CMP_ROW(T) \
  static void \
  cmp_row_##T (CmpOp op, const T *a, gint64 sa, const T *b, gint64 sb, guint8 *o, gint64 n) \
  { \
    switch (op) { \
      case C_EQ: for (gint64 i = 0; i < n; i++) o[i] = a[i * sa] == b[i * sb]; break; \
      case C_NE: for (gint64 i = 0; i < n; i++) o[i] = a[i * sa] != b[i * sb]; break; \
      case C_LT: for (gint64 i = 0; i < n; i++) o[i] = a[i * sa] < b[i * sb]; break; \
      case C_LE: for (gint64 i = 0; i < n; i++) o[i] = a[i * sa] <= b[i * sb]; break; \
      case C_GT: for (gint64 i = 0; i < n; i++) o[i] = a[i * sa] > b[i * sb]; break; \
      case C_GE: for (gint64 i = 0; i < n; i++) o[i] = a[i * sa] >= b[i * sb]; break; \
      default: break; \
    } \
  }

CMP_ROW (float)
CMP_ROW (double)
CMP_ROW (gint8)
CMP_ROW (guint8)
CMP_ROW (gint16)
CMP_ROW (guint16)
CMP_ROW (gint32)
CMP_ROW (guint32)
CMP_ROW (gint64)
CMP_ROW (guint64)

static void
logic_row (CmpOp op, const guint8 *a, gint64 sa, const guint8 *b, gint64 sb, guint8 *o,
    gint64 n)
{
  for (gint64 i = 0; i < n; i++) {
    gboolean x = a[i * sa] != 0, y = b[i * sb] != 0;
    o[i] = op == L_AND ? (x && y) : op == L_OR ? (x || y) : (x != y);
  }
}

static void
cmp_row (const gint64 *off, gint64 n, gpointer user)
{
  const CmpJob *j = user;
  const CmpState *s = j->s;
  gint64 sa = s->plan.strides[0][s->plan.rank - 1];
  gint64 sb = s->plan.strides[1][s->plan.rank - 1];
  gsize es = m2i_element_type_size (s->type);
  const guint8 *a = j->a + off[0] * es, *b = j->b + off[1] * es;
  guint8 *o = j->out + off[2];
  if (s->op >= L_AND) {
    logic_row (s->op, a, sa, b, sb, o, n);
    return;
  }
  switch (s->type) {
    case M2I_ET_F32: cmp_row_float (s->op, (const float *) a, sa, (const float *) b, sb, o, n); break;
    case M2I_ET_F64: cmp_row_double (s->op, (const double *) a, sa, (const double *) b, sb, o, n); break;
    case M2I_ET_I8: cmp_row_gint8 (s->op, (const gint8 *) a, sa, (const gint8 *) b, sb, o, n); break;
    case M2I_ET_BOOLEAN:             /* 0 and 1 */
    case M2I_ET_U8: cmp_row_guint8 (s->op, a, sa, b, sb, o, n); break;
    case M2I_ET_I16: cmp_row_gint16 (s->op, (const gint16 *) a, sa, (const gint16 *) b, sb, o, n); break;
    case M2I_ET_U16: cmp_row_guint16 (s->op, (const guint16 *) a, sa, (const guint16 *) b, sb, o, n); break;
    case M2I_ET_I32: cmp_row_gint32 (s->op, (const gint32 *) a, sa, (const gint32 *) b, sb, o, n); break;
    case M2I_ET_U32: cmp_row_guint32 (s->op, (const guint32 *) a, sa, (const guint32 *) b, sb, o, n); break;
    case M2I_ET_I64: cmp_row_gint64 (s->op, (const gint64 *) a, sa, (const gint64 *) b, sb, o, n); break;
    default: cmp_row_guint64 (s->op, (const guint64 *) a, sa, (const guint64 *) b, sb, o, n); break;
  }
}

static gboolean
same_types (const M2iOpContext *ctx, gint i, gint k, GError **error)
{
  if (ctx->inputs[i].type == ctx->inputs[k].type)
    return TRUE;
  m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
      "inputs %d and %d have different element types (%s and %s)", i, k,
      m2i_element_type_to_string (ctx->inputs[i].type),
      m2i_element_type_to_string (ctx->inputs[k].type));
  return FALSE;
}

static gboolean
cmp_infer (M2iOpContext *ctx, CmpOp op, GError **error)
{
  static const M2iElementType numbers[] = { M2I_ET_BOOLEAN, M2I_ET_F32, M2I_ET_I32, M2I_ET_I64,
    M2I_ET_U8, M2I_ET_I8, M2I_ET_U16, M2I_ET_I16, M2I_ET_U32, M2I_ET_U64, M2I_ET_F64 };
  /* Booleans: Equal and NotEqual (and the logical ops, which take nothing
   * else). */
  const M2iElementType *allowed = numbers;
  gint n_allowed = G_N_ELEMENTS (numbers);
  if (op >= L_AND)
    n_allowed = 1;
  else if (op != C_EQ && op != C_NE) {
    allowed++;
    n_allowed--;
  }
  if (!ir_k_check_arity (ctx, 2, 2, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, allowed, n_allowed, error) || !same_types (ctx, 0, 1, error))
    return FALSE;
  M2iKBroadcastSpec spec;
  M2iShape out, bshape = ctx->inputs[1].shape;
  if (!ir_k_broadcast_spec (ctx, "numpy", &spec, error) ||
      !ir_k_broadcast_pair (ctx, &spec, &ctx->inputs[0].shape, 0, &bshape, 1, FALSE, &out,
          error))
    return FALSE;
  CmpState *s = g_new0 (CmpState, 1);
  s->op = op;
  s->type = ctx->inputs[0].type;
  const M2iShape *ops[3] = { &ctx->inputs[0].shape, &bshape, &out };
  ir_k_broadcast_plan (&s->plan, &out, ops, 3);
  ctx->outputs[0].type = M2I_ET_BOOLEAN;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

static gboolean
cmp_execute (M2iOpContext *ctx, GError **error)
{
  const CmpState *s = ctx->state;
  CmpJob j = { s, ctx->inputs[0].data, ctx->inputs[1].data, ctx->outputs[0].data };
  if (m2i_shape_numel (&ctx->outputs[0].shape) > 0)
    ir_k_broadcast_run (&s->plan, ir_k_threads (ctx), cmp_row, &j);
  return TRUE;
}

#define CMP_KERNEL(var, name, op) \
  static gboolean var##_infer (M2iOpContext *c, GError **e) { return cmp_infer (c, op, e); } \
  const M2iOpKernel ir_kernel_##var = { name, "opset1", var##_infer, cmp_execute, g_free };

CMP_KERNEL (equal, "Equal", C_EQ)
CMP_KERNEL (not_equal, "NotEqual", C_NE)
CMP_KERNEL (less, "Less", C_LT)
CMP_KERNEL (less_equal, "LessEqual", C_LE)
CMP_KERNEL (greater, "Greater", C_GT)
CMP_KERNEL (greater_equal, "GreaterEqual", C_GE)
CMP_KERNEL (logical_and, "LogicalAnd", L_AND)
CMP_KERNEL (logical_or, "LogicalOr", L_OR)
CMP_KERNEL (logical_xor, "LogicalXor", L_XOR)

/* ---- LogicalNot ------------------------------------------------------------ */

static gboolean
not_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType boolean[] = { M2I_ET_BOOLEAN };
  if (!ir_k_check_arity (ctx, 1, 1, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, boolean, 1, error))
    return FALSE;
  ctx->outputs[0].type = M2I_ET_BOOLEAN;
  ctx->outputs[0].shape = ctx->inputs[0].shape;
  return TRUE;
}

static gboolean
not_execute (M2iOpContext *ctx, GError **error)
{
  const guint8 *x = ctx->inputs[0].data;
  guint8 *y = ctx->outputs[0].data;
  gint64 n = m2i_shape_numel (&ctx->inputs[0].shape);
  for (gint64 i = 0; i < n; i++)
    y[i] = x[i] == 0;
  return TRUE;
}

const M2iOpKernel ir_kernel_logical_not = { "LogicalNot", "opset1", not_infer, not_execute, NULL };

/* ---- Select ---------------------------------------------------------------- */

typedef struct {
  gsize es;
  M2iBroadcast plan;                   /* operands: cond, then, else, out */
} SelectState;

typedef struct {
  const SelectState *s;
  const guint8 *cond, *a, *b;
  guint8 *out;
} SelectJob;

#define SELECT_ROW(T) \
  static void \
  select_row_##T (const guint8 *c, gint64 sc, const T *a, gint64 sa, const T *b, gint64 sb, \
      T *o, gint64 n) \
  { \
    for (gint64 i = 0; i < n; i++) \
      o[i] = c[i * sc] ? a[i * sa] : b[i * sb]; \
  }
SELECT_ROW (guint8)
SELECT_ROW (guint16)
SELECT_ROW (guint32)
SELECT_ROW (guint64)

static void
select_row (const gint64 *off, gint64 n, gpointer user)
{
  const SelectJob *j = user;
  const SelectState *s = j->s;
  const M2iBroadcast *p = &s->plan;
  gint r = p->rank - 1;
  gint64 sc = p->strides[0][r], sa = p->strides[1][r], sb = p->strides[2][r];
  const guint8 *c = j->cond + off[0];
  const guint8 *a = j->a + off[1] * s->es, *b = j->b + off[2] * s->es;
  guint8 *o = j->out + off[3] * s->es;
  switch (s->es) {
    case 1: select_row_guint8 (c, sc, a, sa, b, sb, o, n); break;
    case 2: select_row_guint16 (c, sc, (const guint16 *) a, sa, (const guint16 *) b, sb,
        (guint16 *) o, n); break;
    case 4: select_row_guint32 (c, sc, (const guint32 *) a, sa, (const guint32 *) b, sb,
        (guint32 *) o, n); break;
    default: select_row_guint64 (c, sc, (const guint64 *) a, sa, (const guint64 *) b, sb,
        (guint64 *) o, n); break;
  }
}

static gboolean
select_infer (M2iOpContext *ctx, GError **error)
{
  static const M2iElementType boolean[] = { M2I_ET_BOOLEAN };
  if (!ir_k_check_arity (ctx, 3, 3, 1, 1, error) ||
      !ir_k_check_type (ctx, 0, boolean, 1, error) || !same_types (ctx, 1, 2, error))
    return FALSE;
  M2iKBroadcastSpec spec;
  M2iShape values, out, cond = ctx->inputs[0].shape, b = ctx->inputs[2].shape;
  if (!ir_k_broadcast_spec (ctx, "numpy", &spec, error) ||
      !ir_k_broadcast_pair (ctx, &spec, &ctx->inputs[1].shape, 1, &b, 2, FALSE, &values,
          error) ||
      !ir_k_broadcast_pair (ctx, &spec, &values, 1, &cond, 0, TRUE, &out, error))
    return FALSE;
  SelectState *s = g_new0 (SelectState, 1);
  s->es = m2i_element_type_size (ctx->inputs[1].type);
  const M2iShape *ops[4] = { &cond, &ctx->inputs[1].shape, &b, &out };
  ir_k_broadcast_plan (&s->plan, &out, ops, 4);
  ctx->outputs[0].type = ctx->inputs[1].type;
  ctx->outputs[0].shape = out;
  ctx->state = s;
  return TRUE;
}

static gboolean
select_execute (M2iOpContext *ctx, GError **error)
{
  const SelectState *s = ctx->state;
  SelectJob j = { s, ctx->inputs[0].data, ctx->inputs[1].data, ctx->inputs[2].data,
    ctx->outputs[0].data };
  if (m2i_shape_numel (&ctx->outputs[0].shape) > 0)
    ir_k_broadcast_run (&s->plan, ir_k_threads (ctx), select_row, &j);
  return TRUE;
}

const M2iOpKernel ir_kernel_select = { "Select", "opset1", select_infer, select_execute, g_free };
