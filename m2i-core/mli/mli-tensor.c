/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tensor helpers: validation, element counts, quantization getters and
 * sub-tensor views. */
#include "mli-private.h"

#include <base/m2i-error.h>

const char *
m2i_mli_status_to_string (M2iMliStatus s)
{
  switch (s) {
    case M2I_MLI_OK: return "ok";
    case M2I_MLI_BAD_TENSOR: return "malformed tensor (NULL data, rank, empty dimension, negative stride or unknown type)";
    case M2I_MLI_BAD_QUANT: return "invalid quantization parameters (scale < 1, frac bits outside [-32, 63], axis beyond rank or missing per-axis array)";
    case M2I_MLI_NOT_ENOUGH_MEM: return "capacity smaller than the bytes the shape and strides span";
    case M2I_MLI_SHAPE_MISMATCH: return "source and destination shapes differ";
    case M2I_MLI_AXIS_MISMATCH: return "source and destination are quantized per axis on different axes";
    case M2I_MLI_INCOMPATIBLE: return "source and destination overlap but are not a valid in-place pair (same data, container size and strides)";
    case M2I_MLI_BAD_CONFIG: return "configuration out of range";
  }
  return "unknown status";
}

gboolean
m2i_mli_set_error (M2iMliStatus s, GError **error, const char *what)
{
  if (s == M2I_MLI_OK)
    return TRUE;
  g_set_error (error, M2I_ERROR,
      s == M2I_MLI_NOT_ENOUGH_MEM ? M2I_ERROR_BUFFER_TOO_SMALL : M2I_ERROR_INVALID_ARGUMENT,
      "%s: %s", what ? what : "tensor", m2i_mli_status_to_string (s));
  return FALSE;
}

const char *
m2i_mli_type_to_string (M2iMliType t)
{
  static const char *const names[] = { "fx8", "fx16", "sa8", "sa32", "fp16", "fp32" };
  return (guint) t < G_N_ELEMENTS (names) ? names[t] : "?";
}

guint
m2i_mli_type_size (M2iMliType t)
{
  switch (t) {
    case M2I_MLI_FX8: case M2I_MLI_SA8: return 1;
    case M2I_MLI_FX16: case M2I_MLI_FP16: return 2;
    case M2I_MLI_SA32: case M2I_MLI_FP32: return 4;
  }
  return 0;
}

guint
m2i_mli_tensor_element_size (const M2iMliTensor *t)
{
  return t ? m2i_mli_type_size (t->type) : 0;
}

guint64
m2i_mli_count_elements (const M2iMliTensor *t, guint start_dim)
{
  if (!t || t->rank > M2I_MLI_MAX_RANK)
    return 0;
  if (t->rank == 0)
    return start_dim == 0 ? 1 : 0;
  if (start_dim >= t->rank)
    return 0;
  guint64 n = 1;
  for (guint d = start_dim; d < t->rank; d++)
    if (__builtin_mul_overflow (n, (guint64) t->shape[d], &n))
      return G_MAXUINT64;
  return n;
}

void
mli_effective_strides (const M2iMliTensor *t, gint64 *strides)
{
  /* Dense strides saturate at 2^40 elements: no real buffer reaches that,
   * so such a tensor fails its capacity check, and offset arithmetic on
   * checked tensors stays far from overflow. */
  const gint64 cap = (gint64) 1 << 40;
  gint64 next = 1;
  for (gint d = (gint) t->rank - 1; d >= 0; d--) {
    strides[d] = t->mem_stride[d] ? t->mem_stride[d] : next;
    if (__builtin_mul_overflow (strides[d], (gint64) t->shape[d], &next) || next > cap)
      next = cap;
  }
}

void
m2i_mli_set_dense_strides (M2iMliTensor *t)
{
  if (!t || t->rank > M2I_MLI_MAX_RANK)
    return;
  gint64 s[M2I_MLI_MAX_RANK];
  mli_effective_strides (t, s);
  for (guint d = 0; d < t->rank; d++)
    t->mem_stride[d] = (gint32) CLAMP (s[d], 0, G_MAXINT32);
}

/* Checks what does not involve the buffer size. */
static M2iMliStatus
check_layout (const M2iMliTensor *t)
{
  if (!t || !t->data || t->rank > M2I_MLI_MAX_RANK || m2i_mli_type_size (t->type) == 0)
    return M2I_MLI_BAD_TENSOR;
  for (guint d = 0; d < t->rank; d++)
    if (t->shape[d] == 0 || t->mem_stride[d] < 0)
      return M2I_MLI_BAD_TENSOR;
  return M2I_MLI_OK;
}

static gboolean
frac_ok (gint n)
{
  return n >= M2I_MLI_MIN_FRAC && n <= M2I_MLI_MAX_FRAC;
}

static M2iMliStatus
check_quant (const M2iMliTensor *t)
{
  const M2iMliQuant *q = &t->q;
  switch (t->type) {
    case M2I_MLI_FX8: case M2I_MLI_FX16:
      return frac_ok (q->frac_bits) ? M2I_MLI_OK : M2I_MLI_BAD_QUANT;
    case M2I_MLI_SA8: case M2I_MLI_SA32:
      if (q->axis < 0)
        return q->scale >= 1 && frac_ok (q->scale_frac_bits) ? M2I_MLI_OK : M2I_MLI_BAD_QUANT;
      if ((guint) q->axis >= t->rank || !q->zero_points || !q->scales
          || !q->scale_frac_bits_per_axis)
        return M2I_MLI_BAD_QUANT;
      for (guint32 i = 0; i < t->shape[q->axis]; i++)
        if (q->scales[i] < 1 || !frac_ok (q->scale_frac_bits_per_axis[i]))
          return M2I_MLI_BAD_QUANT;
      return M2I_MLI_OK;
    case M2I_MLI_FP16: case M2I_MLI_FP32:
      return M2I_MLI_OK;
  }
  return M2I_MLI_BAD_TENSOR;
}

gsize
m2i_mli_tensor_span_bytes (const M2iMliTensor *t)
{
  if (check_layout (t) != M2I_MLI_OK)
    return 0;
  gint64 s[M2I_MLI_MAX_RANK] = { 0 };   /* rank <= MAX_RANK: all set below */
  mli_effective_strides (t, s);
  /* Dense strides can reach 2^32^5: saturate, so that such a tensor fails
   * the capacity check instead of wrapping past it. */
  guint64 last = 0, term, bytes;
  for (guint d = 0; d < t->rank; d++)
    if (__builtin_mul_overflow ((guint64) (t->shape[d] - 1), (guint64) s[d], &term)
        || __builtin_add_overflow (last, term, &last))
      return G_MAXSIZE;
  if (__builtin_mul_overflow (last + 1, (guint64) m2i_mli_type_size (t->type), &bytes)
      || bytes > G_MAXSIZE)
    return G_MAXSIZE;
  return (gsize) bytes;
}

M2iMliStatus
m2i_mli_tensor_check (const M2iMliTensor *t)
{
  M2iMliStatus s = check_layout (t);
  if (s != M2I_MLI_OK)
    return s;
  if ((s = check_quant (t)) != M2I_MLI_OK)
    return s;
  gsize span = m2i_mli_tensor_span_bytes (t);   /* G_MAXSIZE: does not fit */
  return span < G_MAXSIZE && span <= t->capacity ? M2I_MLI_OK : M2I_MLI_NOT_ENOUGH_MEM;
}

void
mli_quant_at (const M2iMliTensor *t, guint idx, M2iMliSliceQuant *out)
{
  const M2iMliQuant *q = &t->q;
  out->zero = 0;
  out->scale = 1;
  out->shift = 0;
  switch (t->type) {
    case M2I_MLI_FX8: case M2I_MLI_FX16:
      out->shift = q->frac_bits;
      break;
    case M2I_MLI_SA8: case M2I_MLI_SA32:
      if (q->axis < 0) {
        out->zero = q->zero_point;
        out->scale = q->scale;
        out->shift = q->scale_frac_bits;
      } else {
        out->zero = q->zero_points[idx];
        out->scale = q->scales[idx];
        out->shift = q->scale_frac_bits_per_axis[idx];
      }
      break;
    default:
      break;
  }
}

/* TRUE when @idx can be read: per-tensor, or inside the per-axis arrays. */
static gboolean
quant_index_ok (const M2iMliTensor *t, guint idx)
{
  if (!t || m2i_mli_type_size (t->type) == 0)
    return FALSE;
  if ((t->type != M2I_MLI_SA8 && t->type != M2I_MLI_SA32) || t->q.axis < 0)
    return TRUE;
  return (guint) t->q.axis < t->rank && t->q.axis < M2I_MLI_MAX_RANK
      && idx < t->shape[t->q.axis] && t->q.zero_points && t->q.scales
      && t->q.scale_frac_bits_per_axis;
}

/* The quantization of slice @idx, all zeros when it cannot be read. */
static M2iMliSliceQuant
quant_or_zeros (const M2iMliTensor *t, guint idx)
{
  M2iMliSliceQuant q = { 0 };
  if (quant_index_ok (t, idx))
    mli_quant_at (t, idx, &q);
  return q;
}

gint32
m2i_mli_tensor_scale (const M2iMliTensor *t, guint idx)
{
  return quant_or_zeros (t, idx).scale;
}

gint
m2i_mli_tensor_scale_shift (const M2iMliTensor *t, guint idx)
{
  return quant_or_zeros (t, idx).shift;
}

gint32
m2i_mli_tensor_zero_offset (const M2iMliTensor *t, guint idx)
{
  return quant_or_zeros (t, idx).zero;
}

M2iMliStatus
m2i_mli_subtensor (const M2iMliTensor *in, const M2iMliSubTensorCfg *cfg,
    M2iMliTensor *out)
{
  M2iMliStatus st = m2i_mli_tensor_check (in);
  if (st != M2I_MLI_OK)
    return st;
  if (!out)
    return M2I_MLI_BAD_TENSOR;
  if (!cfg || cfg->sub_rank > in->rank)
    return M2I_MLI_BAD_CONFIG;
  for (guint d = 0; d < in->rank; d++)
    if (cfg->size[d] == 0 || cfg->offset[d] >= in->shape[d]
        || cfg->size[d] > in->shape[d] - cfg->offset[d])
      return M2I_MLI_BAD_CONFIG;

  /* Which dimensions survive: drop size-1 ones from the front until the
   * requested rank is reached. */
  gboolean keep[M2I_MLI_MAX_RANK];
  guint to_drop = in->rank - cfg->sub_rank;
  for (guint d = 0; d < in->rank; d++) {
    keep[d] = !(to_drop > 0 && cfg->size[d] == 1);
    if (!keep[d])
      to_drop--;
  }
  if (to_drop > 0)
    return M2I_MLI_BAD_CONFIG;

  gint64 strides[M2I_MLI_MAX_RANK];
  mli_effective_strides (in, strides);
  guint64 offset = 0;
  for (guint d = 0; d < in->rank; d++)
    offset += (guint64) cfg->offset[d] * (guint64) strides[d];
  guint64 offset_bytes = offset * m2i_mli_type_size (in->type);
  /* The offset element lies inside the span, which the capacity covers. */
  g_assert (offset_bytes < in->capacity);

  M2iMliTensor v = *in;
  v.data = (guint8 *) in->data + offset_bytes;
  v.capacity = in->capacity - offset_bytes;
  v.rank = cfg->sub_rank;
  memset (v.shape, 0, sizeof v.shape);
  memset (v.mem_stride, 0, sizeof v.mem_stride);
  gboolean sa = in->type == M2I_MLI_SA8 || in->type == M2I_MLI_SA32;
  gint axis = sa ? in->q.axis : -1;
  guint o = 0;
  for (guint d = 0; d < in->rank; d++) {
    if (keep[d]) {
      v.shape[o] = cfg->size[d];
      v.mem_stride[o] = (gint32) strides[d];
      if ((gint) d == axis)
        v.q.axis = (gint) o;
      o++;
    }
  }
  if (axis >= 0) {
    guint32 first = cfg->offset[axis];
    if (keep[axis]) {
      v.q.zero_points = in->q.zero_points + first;
      v.q.scales = in->q.scales + first;
      v.q.scale_frac_bits_per_axis = in->q.scale_frac_bits_per_axis + first;
    } else {
      v.q.axis = -1;
      v.q.zero_point = in->q.zero_points[first];
      v.q.scale = in->q.scales[first];
      v.q.scale_frac_bits = in->q.scale_frac_bits_per_axis[first];
      v.q.zero_points = NULL;
      v.q.scales = NULL;
      v.q.scale_frac_bits_per_axis = NULL;
    }
  }
  *out = v;
  return M2I_MLI_OK;
}

void
m2i_mli_tensor_init (M2iMliTensor *t, M2iMliType type, gpointer data,
    gsize capacity, guint rank, const guint32 *shape)
{
  memset (t, 0, sizeof *t);
  t->type = type;
  t->data = data;
  t->capacity = capacity;
  t->rank = rank;
  t->q.axis = -1;
  t->q.scale = 1;
  for (guint d = 0; d < rank && d < M2I_MLI_MAX_RANK; d++)
    t->shape[d] = shape[d];
}

void
m2i_mli_tensor_set_fx (M2iMliTensor *t, gint frac_bits)
{
  t->q.frac_bits = frac_bits;
}

void
m2i_mli_tensor_set_sa (M2iMliTensor *t, gint32 zero_point, gint32 scale,
    gint scale_frac_bits)
{
  t->q.axis = -1;
  t->q.zero_point = zero_point;
  t->q.scale = scale;
  t->q.scale_frac_bits = scale_frac_bits;
}

void
m2i_mli_tensor_set_sa_axis (M2iMliTensor *t, gint axis,
    const gint32 *zero_points, const gint32 *scales,
    const gint8 *scale_frac_bits)
{
  t->q.axis = axis;
  t->q.zero_points = zero_points;
  t->q.scales = scales;
  t->q.scale_frac_bits_per_axis = scale_frac_bits;
}
