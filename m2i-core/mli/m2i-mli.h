/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-mli.h — quantized tensors, in the manner of embARC MLI.
 *
 * A tensor is a borrowed buffer described by a shape, per-dimension memory
 * strides (in elements), an element type and its quantization:
 *
 *   type   container  real value of a stored x
 *   fx8    gint8      x / 2^frac_bits
 *   fx16   gint16     x / 2^frac_bits
 *   sa8    gint8      (x - zero_point) * scale / 2^scale_frac_bits
 *   sa32   gint32     (x - zero_point) * scale / 2^scale_frac_bits
 *   fp16   m2i_f16    x (IEEE binary16)
 *   fp32   float      x
 *
 * sa8/sa32 parameters are either one set for the whole tensor (axis < 0) or
 * one set per index along dimension `axis` (per-axis, e.g. per output
 * channel of conv weights). Conversion between any two types follows
 *
 *   x_dst = Sat(Round((x_src - z_src) * s_src / 2^n_src * 2^n_dst / s_dst + z_dst))
 *
 * computed exactly (no intermediate rounding) for every integer source and
 * destination. See docs/mli.md for the derivation, rounding and cost notes.
 *
 * Functions return an M2iMliStatus (as MLI does); m2i_mli_set_error() turns
 * one into a GError for callers that report to users. Nothing here allocates
 * or takes locks; every function is safe to call from any thread on distinct
 * output tensors.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

/* Largest rank. MLI needs 4; the device's blocked layouts need 6
 * (weights {O/8}{I/8}YX{I8}{O8}). */
#define M2I_MLI_MAX_RANK 6

/* Failure statuses. Every function documents which of these it returns. */
typedef enum {
  M2I_MLI_OK = 0,
  /* A tensor is malformed: NULL tensor or data, rank above
   * M2I_MLI_MAX_RANK, a dimension of size 0, a negative stride, or an
   * unknown element type. */
  M2I_MLI_BAD_TENSOR,
  /* Quantization parameters are invalid: scale < 1, frac bits or scale frac
   * bits outside [-32, 63], per-axis `axis` >= rank, or a per-axis array
   * missing or holding an invalid entry. */
  M2I_MLI_BAD_QUANT,
  /* `capacity` is smaller than the bytes the shape and strides span. */
  M2I_MLI_NOT_ENOUGH_MEM,
  /* Source and destination shapes (rank or dims) differ. */
  M2I_MLI_SHAPE_MISMATCH,
  /* Source and destination are both per-axis, on different axes. */
  M2I_MLI_AXIS_MISMATCH,
  /* Source and destination memory overlap, and the conversion is not a
   * valid in-place one (same data pointer, same container size, same
   * strides). */
  M2I_MLI_INCOMPATIBLE,
  /* A configuration is out of range: sub-tensor offset + size beyond the
   * shape, size 0, a rank that cannot be reached by dropping size-1
   * dimensions; a start dimension above the rank. */
  M2I_MLI_BAD_CONFIG,
} M2iMliStatus;

typedef enum {
  M2I_MLI_FX8 = 0,
  M2I_MLI_FX16,
  M2I_MLI_SA8,
  M2I_MLI_SA32,
  M2I_MLI_FP16,
  M2I_MLI_FP32,
} M2iMliType;

#define M2I_MLI_N_TYPES 6

/* Rounding of results that fall exactly halfway between two integers.
 * Only integer destinations round this way; float destinations always
 * round to nearest, ties to even (IEEE). */
typedef enum {
  M2I_MLI_ROUND_HALF_UP = 0,    /* ties toward +inf: floor(v + 1/2); MLI's ROUND_UP */
  M2I_MLI_ROUND_HALF_EVEN,      /* ties to the even integer; MLI's CONVERGENT */
} M2iMliRound;

/* Quantization parameters. Fields not used by the tensor's type are ignored. */
typedef struct {
  /* fx8 / fx16 */
  gint frac_bits;
  /* sa8 / sa32: axis < 0 → the three per-tensor values below; axis >= 0 →
   * the three arrays, each with shape[axis] entries (borrowed). */
  gint axis;
  gint32 zero_point;
  gint32 scale;
  gint scale_frac_bits;
  const gint32 *zero_points;
  const gint32 *scales;
  const gint8 *scale_frac_bits_per_axis;
} M2iMliQuant;

typedef struct {
  gpointer data;             /* borrowed; element (i0..ik) at data + Σ i_d·stride_d elements */
  gsize capacity;            /* bytes available from `data` */
  guint rank;                /* 0 = scalar (one element) */
  guint32 shape[M2I_MLI_MAX_RANK];
  /* Distance in elements between neighbours along each dimension; a 0
   * entry means "dense": 1 for the last dimension, else the next
   * dimension's stride times its size. */
  gint32 mem_stride[M2I_MLI_MAX_RANK];
  M2iMliType type;
  M2iMliQuant q;
} M2iMliTensor;

/* What a sub-tensor view selects. */
typedef struct {
  guint32 offset[M2I_MLI_MAX_RANK];  /* first index per input dimension */
  guint32 size[M2I_MLI_MAX_RANK];    /* extent per input dimension, >= 1 */
  /* Rank of the result: input dimensions of size 1 are dropped, scanning
   * from dimension 0, until this rank is reached (so leading size-1
   * dimensions go first). Equal to the input rank keeps every dimension. */
  guint sub_rank;
} M2iMliSubTensorCfg;

/* "ok", "bad tensor", ...: a static string. */
M2I_API const char *m2i_mli_status_to_string (M2iMliStatus s);

/* Sets @error (M2I_ERROR_INVALID_ARGUMENT, or M2I_ERROR_BUFFER_TOO_SMALL for
 * M2I_MLI_NOT_ENOUGH_MEM) to "@what: <status text>" when @s is not
 * M2I_MLI_OK. Returns TRUE when @s is M2I_MLI_OK. */
M2I_API gboolean m2i_mli_set_error (M2iMliStatus s, GError **error, const char *what);

/* "fx8", "sa32", ...; "?" for an unknown value. Static string. */
M2I_API const char *m2i_mli_type_to_string (M2iMliType t);

/* Container bytes of one element: 1, 2 or 4; 0 for an unknown type. */
M2I_API guint m2i_mli_type_size (M2iMliType t);

/* Container bytes of one element of @t; 0 if @t is NULL or its type is
 * unknown. */
M2I_API guint m2i_mli_tensor_element_size (const M2iMliTensor *t);

/* Number of elements in dimensions @start_dim .. rank-1 (all of them when
 * @start_dim is 0; 1 for a rank-0 tensor with @start_dim 0). Returns 0 when
 * @t is NULL, its rank is above M2I_MLI_MAX_RANK, or @start_dim >= rank
 * (for rank > 0). */
M2I_API guint64 m2i_mli_count_elements (const M2iMliTensor *t, guint start_dim);

/* Fills every 0 entry of mem_stride with its dense value (see
 * M2iMliTensor). Does nothing if @t is NULL or its rank is invalid. */
M2I_API void m2i_mli_set_dense_strides (M2iMliTensor *t);

/* Bytes from data to the end of the last element, honouring the strides:
 * the capacity the tensor needs. 0 if @t is invalid, G_MAXSIZE if the span
 * does not fit in a gsize. */
M2I_API gsize m2i_mli_tensor_span_bytes (const M2iMliTensor *t);

/*
 * Quantization getters, as MLI's mli_hlp_tensor_scale / _scale_shift /
 * _zero_offset. For per-axis sa tensors @idx selects the entry along the
 * axis; otherwise it is ignored. fx: scale 1, shift frac_bits, zero 0.
 * fp16/fp32: 1, 0, 0. On a NULL tensor, an unknown type, or @idx beyond a
 * per-axis array, scale returns 0 (never a valid scale) and the others 0.
 */
M2I_API gint32 m2i_mli_tensor_scale (const M2iMliTensor *t, guint idx);
M2I_API gint m2i_mli_tensor_scale_shift (const M2iMliTensor *t, guint idx);
M2I_API gint32 m2i_mli_tensor_zero_offset (const M2iMliTensor *t, guint idx);

/* Validates a tensor: returns M2I_MLI_BAD_TENSOR, M2I_MLI_BAD_QUANT or
 * M2I_MLI_NOT_ENOUGH_MEM (see M2iMliStatus), else M2I_MLI_OK. */
M2I_API M2iMliStatus m2i_mli_tensor_check (const M2iMliTensor *t);

/*
 * Makes @out a view of part of @in (no copy), as MLI's
 * mli_hlp_create_subtensor: data moves to the first selected element,
 * shape = cfg->size minus the dropped size-1 dimensions, strides are @in's
 * (dense ones computed), capacity shrinks by the bytes skipped, type and
 * quantization are copied; per-axis arrays are advanced to the selected
 * range and `axis` renumbered — and if the axis itself is dropped the view
 * becomes per-tensor with the entry at cfg->offset[axis].
 * Returns: M2I_MLI_BAD_TENSOR / BAD_QUANT / NOT_ENOUGH_MEM for an invalid
 * @in (or NULL @out), M2I_MLI_BAD_CONFIG for NULL @cfg, size 0, offset +
 * size beyond a dimension, sub_rank > rank or too few size-1 dimensions to
 * drop. @out is untouched on failure. @out borrows @in's buffers.
 */
M2I_API M2iMliStatus m2i_mli_subtensor (const M2iMliTensor *in,
    const M2iMliSubTensorCfg *cfg, M2iMliTensor *out);

/*
 * Converts every element of @src into @dst's type and quantization (the
 * formula at the top), with @round for halfway cases and saturation to
 * @dst's container (sa/fx). Float sources: NaN converts to the destination
 * zero point, ±inf saturates. Float destinations get the exactly computed
 * value rounded once to nearest even.
 * Per-axis: either side may be per-tensor; if both are per-axis, they must
 * use the same axis. @dst's strides are honoured (0 = dense).
 * In place (src->data == dst->data) is allowed when both have the same
 * container size and the same strides.
 * Returns: BAD_TENSOR / BAD_QUANT / NOT_ENOUGH_MEM for an invalid @src or
 * @dst, SHAPE_MISMATCH, AXIS_MISMATCH, INCOMPATIBLE (overlap that is not a
 * valid in-place), BAD_CONFIG for an unknown @round. Nothing is written on
 * failure. Single-threaded; does not allocate.
 */
M2I_API M2iMliStatus m2i_mli_convert (const M2iMliTensor *src, M2iMliTensor *dst,
    M2iMliRound round);

/* Convenience initializers (they set strides to 0 = dense and zero the
 * quantization). @shape has @rank entries. */
M2I_API void m2i_mli_tensor_init (M2iMliTensor *t, M2iMliType type, gpointer data,
    gsize capacity, guint rank, const guint32 *shape);
M2I_API void m2i_mli_tensor_set_fx (M2iMliTensor *t, gint frac_bits);
M2I_API void m2i_mli_tensor_set_sa (M2iMliTensor *t, gint32 zero_point, gint32 scale,
    gint scale_frac_bits);
/* Per-axis: the arrays are borrowed and need shape[axis] entries. */
M2I_API void m2i_mli_tensor_set_sa_axis (M2iMliTensor *t, gint axis,
    const gint32 *zero_points, const gint32 *scales,
    const gint8 *scale_frac_bits);

G_END_DECLS
