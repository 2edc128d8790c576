/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-ops.h — the operations of an M2I task and the op list.
 *
 * An op list is a plain copyable value (no pointers): elements append their
 * op to a list they received from upstream and pass it on by copy. Its
 * description (m2i_op_list_to_string) is stable and used in debug lines.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/base/m2i-fp16.h>
#include <m2i-core/m2i/m2i-format.h>
#include <m2i-core/m2i/m2i-resize.h>

G_BEGIN_DECLS

#define M2I_MAX_OPS 8

typedef enum {
  M2I_OP_CSC,          /* NV12/I420 -> interleaved RGB or BGR u8 */
  M2I_OP_CONVERT,      /* u8 -> fp16 ("convertU8F16") or fp32 ("convertU8F32") */
  M2I_OP_RESIZE,       /* Interpolate-4/11, sizes mode */
  M2I_OP_NORM,         /* BatchNormInference-5 as fp16 A,B,C,D per channel */
  M2I_OP_PERMUTE,      /* interleaved (HWC) -> planar (CHW) */
  M2I_OP_DROP_ALPHA,   /* 4-byte pixels (IL_RGBX8888, ...) -> IL_RGB888 / IL_BGR888 */
  M2I_OP_GRAY,         /* u8 RGB/BGR pixels -> PL_GRAY8 (luma); NV12/I420: the Y plane */
} M2iOpKind;

typedef struct {
  M2iChannelOrder order;
} M2iCscParams;

typedef struct {
  M2iDataType to;      /* M2I_DTYPE_F16 or M2I_DTYPE_F32 */
} M2iConvertParams;

/* out = (in - B) / C * A + D per channel, channel i being the i-th channel of
 * the data as it is in memory (R,G,B for RGB order, B,G,R for BGR; gray
 * data uses channel 0 only). */
typedef struct {
  m2i_f16 a[3], b[3], c[3], d[3];
} M2iNormParams;

typedef struct {
  M2iOpKind kind;
  union {
    M2iCscParams csc;
    M2iConvertParams convert;
    M2iResizeParams resize;
    M2iNormParams norm;
  } u;
} M2iOp;

typedef struct {
  guint n_ops;
  M2iOp ops[M2I_MAX_OPS];
} M2iOpList;

/* Empties @list. */
M2I_API void m2i_op_list_init (M2iOpList *list);

/* Append one op. Return FALSE (list unchanged) when the list already holds
 * M2I_MAX_OPS ops or a parameter is out of range (convert to u8, zero or
 * negative resize size); the planner reports deeper problems. */
M2I_API gboolean m2i_op_list_add_csc (M2iOpList *list, M2iChannelOrder order);
M2I_API gboolean m2i_op_list_add_convert (M2iOpList *list, M2iDataType to);
M2I_API gboolean m2i_op_list_add_resize (M2iOpList *list, const M2iResizeParams *p);
M2I_API gboolean m2i_op_list_add_norm (M2iOpList *list, const M2iNormParams *p);
M2I_API gboolean m2i_op_list_add_permute (M2iOpList *list);
/* dropAlpha: the three colour channels of a 4-byte format, in their order
 * (IL_XBGR8888 -> IL_BGR888), the X (padding or alpha) byte left out. */
M2I_API gboolean m2i_op_list_add_drop_alpha (M2iOpList *list);
/* gray: one channel of u8 luma from RGB-like u8 pixels (3 or 4 bytes per
 * pixel, or planar), Y = floor((299 R + 587 G + 114 B + 500) / 1000) — ITU-R
 * BT.601's weights rounded half up, as PIL's convert("L") — or from NV12 /
 * I420 their Y plane as it is (video-range luma, no colour conversion). */
M2I_API gboolean m2i_op_list_add_gray (M2iOpList *list);

/* Appends all ops of @tail to @list; FALSE (list unchanged) if they do not
 * fit. */
M2I_API gboolean m2i_op_list_append (M2iOpList *list, const M2iOpList *tail);

/* What @ops produce from a @width × @height image of @in_format (for caps
 * negotiation): fills the result's format and size (an empty list: the
 * input). Returns FALSE with @error (M2I_ERROR_INVALID_ARGUMENT, the same
 * messages as m2i_plan_new) when the chain is invalid for that input. */
M2I_API gboolean m2i_op_list_result (const M2iOpList *ops, M2iFormat in_format, gint width,
    gint height, M2iFormat *out_format, gint *out_width, gint *out_height, GError **error);

/* TRUE when both lists hold the same ops with the same parameters. */
M2I_API gboolean m2i_op_list_equal (const M2iOpList *a, const M2iOpList *b);

/* Short name of an op kind as the seed spells it: "csc", "convertU8F16",
 * "resize", "norm", "permute" (and the extensions' "dropAlpha", "gray";
 * m2i_op_to_string tells convertU8F16 from
 * convertU8F32); a static string, "unknown" for an out-of-range value. */
M2I_API const char *m2i_op_kind_to_string (M2iOpKind kind);

/* Describes one op, e.g. "csc(BGR)", "convertU8F16",
 * "resize(224x224 linear half_pixel)", "norm", "permute". Free with g_free. */
M2I_API gchar *m2i_op_to_string (const M2iOp *op);

/* Describes a list, ops joined by " -> "; "(no ops)" for an empty list.
 * Free with g_free. */
M2I_API gchar *m2i_op_list_to_string (const M2iOpList *list);

/* Norm coefficients for out = (in * @in_scale - mean[i]) / std[i], the usual
 * "mean/std" preprocessing (for example in_scale 1/255 with ImageNet's mean
 * and std in [0,1] units): A = 1, B = mean/in_scale, C = std/in_scale, D = 0,
 * each rounded to fp16. Returns FALSE when a std or in_scale is zero, negative
 * or not finite, or a coefficient does not fit fp16. */
M2I_API gboolean m2i_norm_params_from_mean_std (M2iNormParams *p, const float mean[3],
    const float std[3], float in_scale);

/* Norm coefficients of BatchNormInference-5: A = gamma, B = mean,
 * C = sqrt(var + eps), D = beta, each rounded to fp16. Returns FALSE when
 * var + eps is not positive or a coefficient does not fit fp16. */
M2I_API gboolean m2i_norm_params_from_batchnorm (M2iNormParams *p, const float gamma[3],
    const float beta[3], const float mean[3], const float var[3], float eps);

/* The identity norm (A = C = 1, B = D = 0). */
M2I_API void m2i_norm_params_identity (M2iNormParams *p);

G_END_DECLS
