/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Binary arithmetic, element by element: Add-1, Subtract-1, Multiply-1,
 * Divide-1, Maximum-1, Minimum-1, SquaredDifference-1, Mod-1, FloorMod-1
 * and Power-1, with auto_broadcast "numpy" (the default), "none" (shapes
 * must be equal) or "pdpd" (B onto A from `axis`). f32, i32 and i64.
 *
 * f32 follows the reference expressions: Maximum is x > y ? x : y,
 * Minimum x < y ? x : y (so a NaN in x gives y), Mod is C's fmodf (the
 * sign of the dividend, exact), FloorMod the remainder of floor division
 * as Python and NumPy compute it (fmodf, then + y when the signs differ;
 * a zero takes y's sign; exact), Power is powf (x·x for a constant
 * exponent 2, which is the same number).
 *
 * Integers wrap around (two's complement), as OpenVINO's reference does on
 * its machines. Divide follows m_pythondiv (m_pythondivision in the spec;
 * default true: floor division, otherwise truncation); Divide, Mod and FloorMod fail at run
 * time on a zero divisor (MIN / -1 wraps to MIN, MIN mod -1 is 0). Power
 * on integers multiplies (wrapping) for exponents >= 0; a negative
 * exponent gives the truncated quotient: 1 for x = 1, ±1 for x = -1, else
 * 0 (x = 0 too, where the reference's cast is undefined).
 *
 * The broadcast plan (kernel-util.c) turns every case into rows whose
 * operands are either contiguous or a single repeated value, so the inner
 * loops vectorize; a per-channel bias add [1,C,H,W] + [1,C,1,1] is one
 * row per channel with a scalar.
 */
#include "kernels-private.h"

#include <math.h>
#include <string.h>

typedef enum {
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_SQDIFF, OP_MOD, OP_FLOORMOD, OP_POW,
  OP_SQUARE,                           /* Power by a constant 2 */
  OP_ADD_RELU,                         /* Add, then ReLU (ir_k_fuse_add_relu) */
} BinOp;

/* A per-channel Multiply and Add after the op (ir_k_fuse_channel_affine):
 * out = out · scale[c] + shift[c], then ReLU, c the output's axis-1 index. */
typedef struct {
  gboolean on, scaled, shifted, relu;
  gint64 channels, inner;              /* output channels, elements per channel */
  float *scale, *shift;                /* channels each (in the state's own block) */
} ChanAffine;

typedef struct {
  BinOp op;
  M2iElementType type;
  gboolean python_div;
  M2iBroadcast plan;
  ChanAffine post;
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
F32_ROW (max_f32, x > y ? x : y)
F32_ROW (min_f32, x < y ? x : y)
F32_ROW (sqdiff_f32, (x - y) * (x - y))
F32_ROW (square_f32, ((void) y, x * x))
/* ReLU's expression (activation.c) on the sum: the same two operations */
F32_ROW (add_relu_f32, x + y > 0.0f ? x + y : 0.0f)

/* The remainder of floor division, exactly (NumPy's np.mod). */
static inline float
floor_mod_f32 (float x, float y)
{
  float r = fmodf (x, y);
  if (r != 0.0f) {
    if ((r < 0.0f) != (y < 0.0f))
      r += y;
  } else {
    r = copysignf (0.0f, y);
  }
  return r;
}

/* libm calls: no vector form, one copy. */
static void
libm_row_f32 (BinOp op, const float *a, gint64 sa, const float *b, gint64 sb, float *o,
    gint64 n)
{
  for (gint64 i = 0; i < n; i++) {
    float x = a[i * sa], y = b[i * sb];
    o[i] = op == OP_MOD ? fmodf (x, y) : op == OP_FLOORMOD ? floor_mod_f32 (x, y) : powf (x, y);
  }
}

/* ---- integer rows ------------------------------------------------------ */

/* Wrap-around arithmetic through the unsigned type (no undefined
 * behaviour on overflow). */
#define INT_ROWS(T, U) \
  static T \
  int_pow_##T (T x, T y) \
  { \
    if (y < 0) \
      return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0; \
    U r = 1, base = (U) x; \
    for (; y; y >>= 1) { \
      if (y & 1) \
        r *= base; \
      base *= base; \
    } \
    return (T) r; \
  } \
  static void \
  int_row_##T (BinOp op, gboolean python_div, const T *a, gint64 sa, const T *b, \
      gint64 sb, T *o, gint64 n, gint *div_by_zero) \
  { \
    for (gint64 i = 0; i < n; i++) { \
      T x = a[i * sa], y = b[i * sb]; \
      if (y == 0 && (op == OP_DIV || op == OP_MOD || op == OP_FLOORMOD)) { \
        g_atomic_int_set (div_by_zero, 1); \
        o[i] = 0; \
        continue; \
      } \
      switch (op) { \
        case OP_ADD: o[i] = (T) ((U) x + (U) y); break; \
        case OP_SUB: o[i] = (T) ((U) x - (U) y); break; \
        case OP_MUL: o[i] = (T) ((U) x * (U) y); break; \
        case OP_MAX: o[i] = x > y ? x : y; break; \
        case OP_MIN: o[i] = x < y ? x : y; break; \
        case OP_SQDIFF: { \
          U d = (U) x - (U) y; \
          o[i] = (T) (d * d); \
          break; \
        } \
        case OP_SQUARE: o[i] = (T) ((U) x * (U) x); break; \
        case OP_POW: o[i] = int_pow_##T (x, y); break; \
        case OP_DIV: \
          if (y == -1) { \
            o[i] = (T) (0 - (U) x);    /* MIN / -1 wraps to MIN */ \
          } else { \
            T q = x / y; \
            if (python_div && (x % y) != 0 && ((x < 0) != (y < 0))) \
              q--; \
            o[i] = q; \
          } \
          break; \
        case OP_MOD: \
        case OP_FLOORMOD: { \
          T r = y == -1 ? 0 : x % y;   /* MIN % -1 would trap */ \
          if (op == OP_FLOORMOD && r != 0 && ((r < 0) != (y < 0))) \
            r += y; \
          o[i] = r; \
          break; \
        } \
        case OP_ADD_RELU: break;       /* f32 only (ir_k_fuse_add_relu) */ \
      } \
    } \
  }

INT_ROWS (gint32, guint32)
INT_ROWS (gint64, guint64)

/* The fused Multiply, Add and ReLU of one channel's run: the layers' own
 * expressions (Multiply x·y, Add x + y, Add → ReLU x + y > 0 ? x + y : 0),
 * in their order. */
M2I_K_INLINE void
chan_affine_f32_body (float *o, gint64 n, gboolean scaled, float sc, gboolean shifted,
    float sh, gboolean relu)
{
  for (gint64 i = 0; i < n; i++) {
    float x = o[i];
    if (scaled)
      x = x * sc;
    if (shifted && relu)
      x = x + sh > 0.0f ? x + sh : 0.0f;
    else if (shifted)
      x = x + sh;
    o[i] = x;
  }
}
M2I_K_SIMD_CLONES (chan_affine_f32, (float *o, gint64 n, gboolean scaled, float sc,
        gboolean shifted, float sh, gboolean relu), (o, n, scaled, sc, shifted, sh, relu))

/* The fused per-channel epilogue over @n outputs from output element @at
 * (a row may cross channel planes: an Add of two whole tensors is one). */
static void
chan_affine_row (const ChanAffine *p, float *o, gint64 at, gint64 n)
{
  for (gint64 pos = at, end = at + n; pos < end;) {
    gint64 c = pos / p->inner % p->channels;
    gint64 next = MIN (end, (pos / p->inner + 1) * p->inner);
    chan_affine_f32 (o + (pos - at), next - pos, p->scaled, p->scaled ? p->scale[c] : 0.0f,
        p->shifted, p->shifted ? p->shift[c] : 0.0f, p->relu);
    pos = next;
  }
}

/* Elements of a row a fused epilogue follows at once (8 KiB of f32). */
#define POST_PIECE 2048

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
  if (s->post.on && n > POST_PIECE) {
    /* pieces whose results are still in L1 for the epilogue */
    for (gint64 i = 0; i < n; i += POST_PIECE) {
      gint64 piece[3] = { off[0] + i * sa, off[1] + i * sb, off[2] + i };
      bin_row (piece, MIN (POST_PIECE, n - i), user);
    }
    return;
  }
  switch (s->type) {
    case M2I_ET_F32: {
      const float *fa = (const float *) a, *fb = (const float *) b;
      float *fo = (float *) o;
      switch (s->op) {
        case OP_ADD: add_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_SUB: sub_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_MUL: mul_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_DIV: div_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_MAX: max_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_MIN: min_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_SQDIFF: sqdiff_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_SQUARE: square_f32 (fa, sa, fb, sb, fo, n); break;
        case OP_ADD_RELU: add_relu_f32 (fa, sa, fb, sb, fo, n); break;
        default: libm_row_f32 (s->op, fa, sa, fb, sb, fo, n); break;
      }
      if (s->post.on)
        chan_affine_row (&s->post, fo, off[2], n);
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

/* TRUE when input @i is a constant scalar (any rank, one element) equal to
 * @v. */
static gboolean
const_scalar_is (const M2iTensor *t, double v)
{
  if (!t->data || m2i_shape_numel (&t->shape) != 1)
    return FALSE;
  switch (t->type) {
    case M2I_ET_F32: return *(const float *) t->data == v;
    case M2I_ET_I32: return *(const gint32 *) t->data == v;
    case M2I_ET_I64: return *(const gint64 *) t->data == v;
    default: return FALSE;
  }
}

/* Checks the two inputs, computes the output shape per auto_broadcast and
 * plans the broadcast. */
static gboolean
bin_infer (M2iOpContext *ctx, BinOp op, GError **error)
{
  static const M2iElementType types[] = { M2I_ET_F32, M2I_ET_I32, M2I_ET_I64 };
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
  M2iKBroadcastSpec spec;
  M2iShape out, bshape = b->shape;
  if (!ir_k_broadcast_spec (ctx, "numpy", &spec, error) ||
      !ir_k_broadcast_pair (ctx, &spec, &a->shape, 0, &bshape, 1, FALSE, &out, error))
    return FALSE;
  BinState *s = g_new0 (BinState, 1);
  s->op = op == OP_POW && const_scalar_is (b, 2.0) ? OP_SQUARE : op;
  s->type = a->type;
  /* IR files say m_pythondiv (OpenVINO's attribute visitor); the spec
   * text m_pythondivision. */
  const char *div_attr = m2i_ir_node_get_attr (ctx->node, "m_pythondiv") ? "m_pythondiv"
      : "m_pythondivision";
  if (!m2i_ir_node_attr_bool (ctx->node, div_attr, TRUE, &s->python_div, error)) {
    g_free (s);
    return FALSE;
  }
  const M2iShape *ops[3] = { &a->shape, &bshape, &out };
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
        "integer division by zero (a divisor is 0)");
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_k_fuse_add_relu (M2iOpContext *ctx, GError **error)
{
  BinState *s = ctx->state;
  if (!s || strcmp (m2i_ir_node_get_type (ctx->node), "Add") || s->op != OP_ADD ||
      s->type != M2I_ET_F32) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "ReLU can only be fused into a compiled f32 Add");
    return FALSE;
  }
  s->op = OP_ADD_RELU;
  return TRUE;
}

gboolean
ir_k_add_applies_relu (const M2iOpContext *ctx)
{
  const BinState *s = ctx->state;
  return s && !strcmp (m2i_ir_node_get_type (ctx->node), "Add") && s->op == OP_ADD_RELU &&
      !s->post.on;
}

gboolean
ir_k_fuse_channel_affine (M2iOpContext *ctx, const float *scale, const float *shift,
    gint64 channels, gboolean relu, GError **error)
{
  BinState *s = ctx->state;
  const char *type = m2i_ir_node_get_type (ctx->node);
  const M2iShape *out = &ctx->outputs[0].shape;
  gint r = s ? s->plan.rank : 0;
  /* the rows' outputs contiguous (bin_row's off[2] counts elements) */
  if (!s || (strcmp (type, "Add") && strcmp (type, "Multiply")) || s->type != M2I_ET_F32 ||
      s->post.on || out->rank < 2 || !m2i_shape_is_static (out) || m2i_shape_numel (out) < 1 ||
      out->dims[1] != channels || channels < 1 ||
      (!scale && !shift) || (relu && !shift) || (r > 0 && s->plan.strides[2][r - 1] != 1)) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node,
        "a per-channel Multiply and Add can only be fused into a compiled f32 Add or "
        "Multiply of %" G_GINT64_FORMAT " channels", channels);
    return FALSE;
  }
  gsize head = G_STRUCT_OFFSET (BinState, post) + sizeof (ChanAffine);
  s = g_realloc (s, head + 2 * (gsize) channels * sizeof (float));
  ctx->state = s;
  ChanAffine *p = &s->post;
  p->scale = (float *) ((guint8 *) s + head);
  p->shift = p->scale + channels;
  p->on = TRUE;
  p->scaled = scale != NULL;
  p->shifted = shift != NULL;
  p->relu = relu;
  p->channels = channels;
  p->inner = m2i_shape_numel (out) / out->dims[0] / channels;
  if (scale)
    memcpy (p->scale, scale, channels * sizeof (float));
  if (shift)
    memcpy (p->shift, shift, channels * sizeof (float));
  return TRUE;
}

#define BIN_KERNEL(var, name, op) \
  static gboolean var##_infer (M2iOpContext *c, GError **e) { return bin_infer (c, op, e); } \
  const M2iOpKernel ir_kernel_##var = { name, "opset1", var##_infer, bin_execute, g_free };

BIN_KERNEL (add, "Add", OP_ADD)
BIN_KERNEL (subtract, "Subtract", OP_SUB)
BIN_KERNEL (multiply, "Multiply", OP_MUL)
BIN_KERNEL (divide, "Divide", OP_DIV)
BIN_KERNEL (maximum, "Maximum", OP_MAX)
BIN_KERNEL (minimum, "Minimum", OP_MIN)
BIN_KERNEL (squared_difference, "SquaredDifference", OP_SQDIFF)
BIN_KERNEL (mod, "Mod", OP_MOD)
BIN_KERNEL (floor_mod, "FloorMod", OP_FLOORMOD)
BIN_KERNEL (power, "Power", OP_POW)
