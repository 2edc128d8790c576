/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-preprocess.c — the ops that turn a source frame (and the ops an
 * upstream chain queued on it) into a model's input image, and the geometry
 * from that input back to the source; see infer-private.h. */
#include "infer-private.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

/* Appends @op to @ops; FALSE when the list is full. */
static gboolean
add_op (M2iOpList *ops, const M2iOp *op)
{
  if (ops->n_ops >= M2I_MAX_OPS)
    return FALSE;
  ops->ops[ops->n_ops++] = *op;
  return TRUE;
}

/* Appends the head's ops that apply to what arrives: its csc only for YUV,
 * its resize only when the size differs (*@resize is then done), its
 * permute only for interleaved data (*@layout becomes planar). */
static gboolean
add_head_ops (M2iOpList *ops, const M2iSplitHead *head, gboolean yuv, gboolean *resize,
    M2iLayout *layout)
{
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < head->ops.n_ops; i++) {
    const M2iOp *hop = &head->ops.ops[i];
    switch (hop->kind) {
      case M2I_OP_CSC:
        ok = !yuv || add_op (ops, hop);
        break;
      case M2I_OP_RESIZE:
        ok = !*resize || add_op (ops, hop);
        *resize = FALSE;
        break;
      case M2I_OP_PERMUTE:
        ok = *layout != M2I_LAYOUT_INTERLEAVED || add_op (ops, hop);
        *layout = M2I_LAYOUT_PLANAR;
        break;
      default:
        ok = add_op (ops, hop);
        break;
    }
  }
  return ok;
}

/* The geometry from model-input pixels back to @source: a stretch to the
 * model's size, or the picture @lb placed in the canvas. */
static gboolean
make_geometry (const M2iInferModel *m, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, M2iInferGeometry *g, GError **error)
{
  m2i_infer_geometry_init (g, source->width, source->height, m->width, m->height, FALSE);
  if (!lb || !lb->active)
    return TRUE;
  M2iOpList head;
  M2iFormat f;
  gint pw, ph;
  m2i_op_list_init (&head);
  for (guint i = 0; i < lb->after_op && i < queued->n_ops; i++)
    head.ops[head.n_ops++] = queued->ops[i];
  if (!m2i_op_list_result (&head, source->format, source->width, source->height, &f, &pw, &ph,
          error))
    return FALSE;
  g->scale_x = (double) pw / source->width;
  g->scale_y = (double) ph / source->height;
  g->pad_x = lb->x;
  g->pad_y = lb->y;
  return TRUE;
}

/* The letterbox of a @w x @h picture fitted into the model's size keeping
 * its aspect (fit_to_window: at the top left; fit_to_window_letterbox:
 * centred as Ultralytics' LetterBox rounds it), into @lb (after_op left
 * for the caller) and the picture's size; FALSE when the picture fills the
 * input (nothing to pad). */
static gboolean
own_letterbox (const M2iInferModel *m, const M2iInferPreprocess *pp, gint w, gint h,
    M2iLetterbox *lb, gint *pw, gint *ph)
{
  double r = MIN ((double) m->width / w, (double) m->height / h);
  *pw = CLAMP ((gint) floor (w * r + 0.5), 1, m->width);
  *ph = CLAMP ((gint) floor (h * r + 0.5), 1, m->height);
  if (*pw == m->width && *ph == m->height)
    return FALSE;
  memset (lb, 0, sizeof *lb);
  lb->active = TRUE;
  lb->width = m->width;
  lb->height = m->height;
  lb->value = pp->pad_value;
  if (pp->resize_type == M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX) {
    /* round(d / 2 - 0.1): half the border, an odd pixel going right/below */
    lb->x = (gint) floor ((m->width - *pw) / 2.0 - 0.1 + 0.5);
    lb->y = (gint) floor ((m->height - *ph) / 2.0 - 0.1 + 0.5);
  }
  return TRUE;
}

gboolean
infer_preprocess_build (const M2iInferModel *m, const M2iInferPreprocess *pp,
    const M2iNormParams *norm, M2iDataType target_dtype, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, InferPreprocessPlan *out,
    GError **error)
{
  static const M2iLetterbox no_letterbox;
  M2iOpList none;
  if (!queued) {
    m2i_op_list_init (&none);
    queued = &none;
  }
  const M2iLetterbox *lb = letterbox && letterbox->active ? letterbox : &no_letterbox;
  if (m->input_kind != M2I_INFER_INPUT_IMAGE) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the model takes no image: its inputs are set as tensors");
    return FALSE;
  }
  const M2iSplitHead *head = m2i_infer_model_get_head (m);
  M2iFormat cur;
  gint w, h;
  GError *why = NULL;
  if (!m2i_op_list_result (queued, source->format, source->width, source->height, &cur, &w, &h,
          &why)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the queued ops do not apply to a %s %dx%d frame: %s",
        m2i_format_to_string (source->format), source->width, source->height, why->message);
    g_error_free (why);
    return FALSE;
  }
  if (lb->active) {
    w = lb->width > 0 ? lb->width : m->width;
    h = lb->height > 0 ? lb->height : m->height;
  }
  /* The session's own letterbox (fit_to_window, Ultralytics' letterbox) of
   * a frame whose upstream chain does not letterbox. */
  gint rw = m->width, rh = m->height;
  gboolean own = !lb->active && !head && (pp->resize_type == M2I_RESIZE_TYPE_FIT_TO_WINDOW
      || pp->resize_type == M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX)
      && own_letterbox (m, pp, w, h, &out->letterbox, &rw, &rh);
  if (!own)
    memset (&out->letterbox, 0, sizeof out->letterbox);
  /* u8 pixels become fp16 (the M2I block's type) unless the target is f32
   * and the extended profile can write fp32, or u8 itself. */
  M2iDataType pixel_type = target_dtype == M2I_DTYPE_F32
      && pp->profile == M2I_PROFILE_EXTENDED ? M2I_DTYPE_F32 : M2I_DTYPE_F16;
  gboolean pixels = m2i_format_dtype (cur) == M2I_DTYPE_U8;
  gboolean yuv = m2i_format_is_yuv (cur);
  gboolean x4 = !yuv && pixels && m2i_format_pixel_stride (cur) == 4;
  guint in_ch = m2i_format_n_channels (cur), model_ch = head ? 3 : (guint) m->image.channels;
  M2iLayout layout = yuv || x4 ? M2I_LAYOUT_INTERLEAVED : m2i_format_layout (cur);
  gboolean resize = w != rw || h != rh;
  M2iOpList *ops = &out->ops;
  *ops = *queued;
  guint before = ops->n_ops;
  gboolean ok = TRUE;
  if (model_ch == 1 && in_ch == 3 && !pixels) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the model takes one channel (gray), but the m2i chain upstream gives %s: its luma "
        "is taken from u8 pixels; end the chain before its convert, or give video",
        m2i_format_to_string (cur));
    return FALSE;
  }
  if (head && pixels) {
    /* The model's own pre-processing, lowered from its head. */
    ok = add_head_ops (ops, head, yuv, &resize, &layout);
    yuv = pixels = FALSE;
  } else if (model_ch == 1 && in_ch == 3) {
    ok = m2i_op_list_add_gray (ops);   /* YUV: the Y plane */
    layout = M2I_LAYOUT_PLANAR;
    in_ch = 1;
  } else if (yuv) {
    ok = m2i_op_list_add_csc (ops, pp->channel_order);
  } else if (x4) {
    ok = m2i_op_list_add_drop_alpha (ops);
  }
  if (ok && pixels && target_dtype != M2I_DTYPE_U8)
    ok = m2i_op_list_add_convert (ops, pixel_type);
  if (ok && resize) {
    /* Before the permute, as the seed's fused pattern has it. */
    M2iResizeParams rp;
    m2i_resize_params_init (&rp, rw, rh);
    rp.mode = pp->resize_mode;
    ok = m2i_op_list_add_resize (ops, &rp);
  }
  out->letterbox.after_op = ops->n_ops;
  if (ok && layout == M2I_LAYOUT_INTERLEAVED)
    ok = m2i_op_list_add_permute (ops);
  if (ok && pixels && norm && target_dtype != M2I_DTYPE_U8)
    ok = m2i_op_list_add_norm (ops, norm);
  if (!ok) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the m2i chain upstream already holds %u ops; the model's pre-processing does not "
        "fit into one plan: do part of it upstream (e.g. m2iresize to %dx%d)", before,
        m->width, m->height);
    return FALSE;
  }
  for (guint i = before; i < ops->n_ops && lb->active; i++) {
    M2iOpKind k = ops->ops[i].kind;
    if (k == M2I_OP_CSC || k == M2I_OP_RESIZE) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "the m2i chain upstream letterboxes to %dx%d, but the model takes %dx%d: make "
          "m2iresize produce the model's size", w, h, m->width, m->height);
      return FALSE;
    }
  }
  gint ow, oh;
  if (!m2i_op_list_result (ops, source->format, source->width, source->height, &out->format,
          &ow, &oh, NULL)) {
    gchar *str = m2i_op_list_to_string (ops);
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the pre-processing %s does not apply to a %s frame", str,
        m2i_format_to_string (source->format));
    g_free (str);
    return FALSE;
  }
  M2iDataType dt = m2i_format_dtype (out->format);
  if (m2i_format_layout (out->format) != M2I_LAYOUT_PLANAR
      || (dt == M2I_DTYPE_U8 && target_dtype != M2I_DTYPE_U8)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
        "the pre-processing yields %s, not the planar %s image the model's input takes",
        m2i_format_to_string (out->format), target_dtype == M2I_DTYPE_U8 ? "u8" : "fp16/fp32");
    return FALSE;
  }
  out->channels = in_ch;
  /* (an i8 input is always written from a float staging image) */
  out->direct = dt == target_dtype && in_ch == model_ch && (head || !m->image.nhwc)
      && (head || m2i_element_type_is_float (m->image.type)
      || (target_dtype == M2I_DTYPE_U8 && m->image.type == M2I_ET_U8));
  out->order = head ? m2i_format_order (head->out_format) : pp->channel_order;
  out->swap = in_ch == 3 && m2i_format_order (out->format) != out->order;
  if (own) {
    /* (a resize the chain queued stretched the frame to w x h) */
    m2i_infer_geometry_init (&out->geometry, source->width, source->height, m->width, m->height,
        FALSE);
    out->geometry.scale_x = (double) rw / source->width;
    out->geometry.scale_y = (double) rh / source->height;
    out->geometry.pad_x = out->letterbox.x;
    out->geometry.pad_y = out->letterbox.y;
    return TRUE;
  }
  return make_geometry (m, source, queued, lb, &out->geometry, error);
}

void
infer_convert_planes (const M2iImage *src, const M2iImage *dst)
{
  M2iDataType from = m2i_format_dtype (src->format), to = m2i_format_dtype (dst->format);
  gboolean widen = from == M2I_DTYPE_F16;
  gsize row = (gsize) src->width * m2i_format_bytes_per_sample (src->format);
  for (guint p = 0; p < m2i_format_n_planes (src->format); p++)
    for (gint y = 0; y < src->height; y++) {
      const guint8 *s = src->data[p] + (gsize) y * src->stride[p];
      guint8 *d = dst->data[p] + (gsize) y * dst->stride[p];
      if (from == to)
        memcpy (d, s, row);
      else if (widen)
        m2i_f16_to_f32_n ((const m2i_f16 *) s, (float *) d, (gsize) src->width);
      else
        m2i_f32_to_f16_n ((const float *) s, (m2i_f16 *) d, (gsize) src->width);
    }
}

void
infer_swap_planes (M2iImage *img)
{
  guint8 *t = img->data[0];
  gsize ts = img->size[0], st = img->stride[0];
  img->data[0] = img->data[2];
  img->size[0] = img->size[2];
  img->stride[0] = img->stride[2];
  img->data[2] = t;
  img->size[2] = ts;
  img->stride[2] = st;
}
