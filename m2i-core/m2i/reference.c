/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reference.c — chain validation and the plain-C, one-op-at-a-time kernels.
 *
 * Written for clarity: each op reads a whole image and writes a whole image.
 * The reference path (m2i_reference_run) and tasks that the fused kernel
 * does not cover run through these.
 */
#include "engine-private.h"

#include <base/m2i-error.h>
#include <string.h>

gpointer
m2i_try_alloc0 (gsize size, const char *what, GError **error)
{
  gpointer p = g_try_malloc0 (MAX (size, 1));
  if (!p)
    g_set_error (error, M2I_ERROR, M2I_ERROR_FAILED,
        "cannot allocate %" G_GSIZE_FORMAT " bytes for %s", size, what);
  return p;
}

/* ---- validation --------------------------------------------------------- */

static gboolean
fail (GError **error, guint i, const M2iOp *op, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
fail (GError **error, guint i, const M2iOp *op, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gchar *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  gchar *o = m2i_op_to_string (op);
  g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "op %u (%s): %s", i + 1, o, msg);
  g_free (o);
  g_free (msg);
  return FALSE;
}

/* Whether @f is a 4-byte interleaved format (IL_RGBX8888, ...). */
static gboolean
is_x4 (M2iFormat f)
{
  return m2i_format_layout (f) == M2I_LAYOUT_INTERLEAVED && m2i_format_dtype (f) == M2I_DTYPE_U8
      && m2i_format_pixel_stride (f) == 4;
}

gboolean
m2i_chain_validate (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, ChainShapes *shapes, GError **error)
{
  if (!m2i_image_check (in, "input", FALSE, error))
    return FALSE;
  if (n_ops == 0 || n_ops > M2I_MAX_OPS) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the op list is empty: nothing to do");
    return FALSE;
  }
  M2iFormat f = in->format;
  gint w = in->width, h = in->height;
  for (guint i = 0; i < n_ops; i++) {
    const M2iOp *op = &ops[i];
    gboolean yuv = m2i_format_is_yuv (f), x4 = is_x4 (f);
    M2iLayout layout = m2i_format_layout (f);
    M2iDataType dt = m2i_format_dtype (f);
    M2iChannelOrder order = m2i_format_order (f);
    if (yuv && op->kind != M2I_OP_CSC && op->kind != M2I_OP_GRAY)
      return fail (error, i, op, "the data is still YUV (%s) here; %s needs RGB/BGR data, "
          "so csc must come first (or gray, for the luma plane)",
          m2i_format_to_string (in->format), m2i_op_kind_to_string (op->kind));
    if (x4 && op->kind != M2I_OP_DROP_ALPHA && op->kind != M2I_OP_GRAY)
      return fail (error, i, op, "the data is %s (4 bytes per pixel) here; %s needs 3-byte "
          "pixels, so dropAlpha must come first (or gray)", m2i_format_to_string (f),
          m2i_op_kind_to_string (op->kind));
    switch (op->kind) {
      case M2I_OP_CSC:
        if (!yuv)
          return fail (error, i, op, "csc converts NV12/I420, but the data is already %s",
              m2i_format_to_string (f));
        if (op->u.csc.order != M2I_ORDER_RGB && op->u.csc.order != M2I_ORDER_BGR)
          return fail (error, i, op, "unknown channel order %d", (int) op->u.csc.order);
        layout = M2I_LAYOUT_INTERLEAVED;
        dt = M2I_DTYPE_U8;
        order = op->u.csc.order;
        break;
      case M2I_OP_DROP_ALPHA:
        if (!x4)
          return fail (error, i, op, "dropAlpha takes 4-byte pixels (IL_RGBX8888, "
              "IL_BGRX8888, IL_XRGB8888, IL_XBGR8888), but the data is %s",
              m2i_format_to_string (f));
        break;
      case M2I_OP_GRAY:
        if (order == M2I_ORDER_GRAY)
          return fail (error, i, op, "the data is already one channel (%s)",
              m2i_format_to_string (f));
        if (dt != M2I_DTYPE_U8)
          return fail (error, i, op, "gray takes u8 pixels, the data is %s here; put gray "
              "before convert", dt == M2I_DTYPE_F16 ? "fp16" : "fp32");
        layout = M2I_LAYOUT_PLANAR;
        order = M2I_ORDER_GRAY;
        break;
      case M2I_OP_CONVERT:
        if (dt != M2I_DTYPE_U8)
          return fail (error, i, op, "the data is already %s; convert takes u8 data",
              dt == M2I_DTYPE_F16 ? "fp16" : "fp32");
        if (op->u.convert.to != M2I_DTYPE_F16 && op->u.convert.to != M2I_DTYPE_F32)
          return fail (error, i, op, "convert produces fp16 or fp32 only");
        dt = op->u.convert.to;
        break;
      case M2I_OP_RESIZE: {
        const M2iResizeParams *p = &op->u.resize;
        if (p->out_width <= 0 || p->out_height <= 0)
          return fail (error, i, op, "output size %dx%d is not positive", p->out_width,
              p->out_height);
        if (p->out_width > (1 << 16) || p->out_height > (1 << 16))
          return fail (error, i, op, "output size %dx%d exceeds 65536x65536",
              p->out_width, p->out_height);
        w = p->out_width;
        h = p->out_height;
        break;
      }
      case M2I_OP_NORM:
        if (dt == M2I_DTYPE_U8)
          return fail (error, i, op, "norm needs fp16 or fp32 data, the data is u8 here; "
              "put convertU8F16 before norm");
        for (int c = 0; c < (order == M2I_ORDER_GRAY ? 1 : 3); c++) {
          float cc = m2i_f16_to_f32 (op->u.norm.c[c]);
          if (cc == 0.0f || cc != cc)
            return fail (error, i, op, "coefficient C of channel %d is zero or NaN", c);
        }
        break;
      case M2I_OP_PERMUTE:
        if (order == M2I_ORDER_GRAY)
          return fail (error, i, op, "one-channel data (%s) is planar already: there is "
              "nothing to permute", m2i_format_to_string (f));
        if (layout != M2I_LAYOUT_INTERLEAVED)
          return fail (error, i, op, "the data is already planar (permute twice?); "
              "permute turns interleaved data into planar");
        layout = M2I_LAYOUT_PLANAR;
        break;
      default:
        return fail (error, i, op, "unknown op kind %d", (int) op->kind);
    }
    f = m2i_format_compose (layout, dt, order);
    if (shapes) {
      shapes->format[i] = f;
      shapes->width[i] = w;
      shapes->height[i] = h;
    }
  }
  if (out) {
    if (!m2i_image_check (out, "output", FALSE, error))
      return FALSE;
    if (out->format != f || out->width != w || out->height != h) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "the output is %s %dx%d, but the op chain produces %s %dx%d",
          m2i_format_to_string (out->format), out->width, out->height,
          m2i_format_to_string (f), w, h);
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- sample access ------------------------------------------------------ */

/* An RGB-like or gray image with its format's properties looked up once
 * (the per-sample accessors below would otherwise ask for them every
 * time). */
typedef struct {
  const M2iImage *img;
  gsize bps;                    /* bytes per sample */
  gsize px, off;                /* interleaved: bytes per pixel, offset of channel 0 */
  guint n_ch;                   /* channels (1 or 3) */
  gboolean planar;
  M2iDataType dt;
} View;

static View
view (const M2iImage *img)
{
  View v = { img, m2i_format_bytes_per_sample (img->format),
    m2i_format_pixel_stride (img->format), m2i_format_channel_offset (img->format),
    m2i_format_n_channels (img->format),
    m2i_format_layout (img->format) == M2I_LAYOUT_PLANAR, m2i_format_dtype (img->format) };
  return v;
}

/* Pointer to channel c of pixel (x, y). */
static inline guint8 *
sample_ptr (const View *v, gint x, gint y, int c)
{
  const M2iImage *img = v->img;
  if (v->planar)
    return img->data[c] + (gsize) y * img->stride[c] + (gsize) x * v->bps;
  return img->data[0] + (gsize) y * img->stride[0] + (gsize) x * v->px + v->off
      + (gsize) c * v->bps;
}

static inline float
get_sample (const View *v, gint x, gint y, int c)
{
  const guint8 *p = sample_ptr (v, x, y, c);
  switch (v->dt) {
    case M2I_DTYPE_U8: return *p;
    case M2I_DTYPE_F16: return m2i_f16_to_f32 (*(const m2i_f16 *) p);
    default: return *(const float *) p;
  }
}

/* Stores a value already representable in the image's type (u8: integral
 * in [0,255]; fp16: rounded to nearest even here). */
static inline void
set_sample (const View *v, gint x, gint y, int c, float val)
{
  guint8 *p = sample_ptr (v, x, y, c);
  switch (v->dt) {
    case M2I_DTYPE_U8: *p = (guint8) val; break;
    case M2I_DTYPE_F16: *(m2i_f16 *) p = m2i_f32_to_f16 (val); break;
    default: *(float *) p = val; break;
  }
}

/* ---- the ops ------------------------------------------------------------ */

/* csc, straight from the formula: round-half-up of the exact value
 * (1164(Y-16) + k·chroma)/1000, computed as floor((num + 500) / 1000) with a
 * floor division valid for negative numerators, then clamped. */
static int
csc_channel (int num)
{
  int n = num + 500;
  int q = n >= 0 ? n / 1000 : -((-n + 999) / 1000);
  return q < 0 ? 0 : q > 255 ? 255 : q;
}

static void
ref_csc (const M2iImage *in, const M2iImage *out_img, M2iChannelOrder order)
{
  View ov = view (out_img), *out = &ov;
  for (gint y = 0; y < in->height; y++) {
    const guint8 *yrow = in->data[0] + (gsize) y * in->stride[0];
    for (gint x = 0; x < in->width; x++) {
      int U, V;
      if (in->format == M2I_FORMAT_SP_NV12_8) {
        const guint8 *uv = in->data[1] + (gsize) (y / 2) * in->stride[1];
        U = uv[(x / 2) * 2];
        V = uv[(x / 2) * 2 + 1];
      } else {
        U = in->data[1][(gsize) (y / 2) * in->stride[1] + x / 2];
        V = in->data[2][(gsize) (y / 2) * in->stride[2] + x / 2];
      }
      int Y = yrow[x];
      int r = csc_channel (1164 * (Y - 16) + 1596 * (V - 128));
      int g = csc_channel (1164 * (Y - 16) - 813 * (V - 128) - 391 * (U - 128));
      int b = csc_channel (1164 * (Y - 16) + 2018 * (U - 128));
      set_sample (out, x, y, order == M2I_ORDER_RGB ? 0 : 2, (float) r);
      set_sample (out, x, y, 1, (float) g);
      set_sample (out, x, y, order == M2I_ORDER_RGB ? 2 : 0, (float) b);
    }
  }
}

/* convert, permute: exact value copies (fp16 of a u8 value is exact). */
static void
ref_copy_values (const M2iImage *in_img, const M2iImage *out_img)
{
  View iv = view (in_img), ov = view (out_img), *in = &iv, *out = &ov;
  for (gint y = 0; y < in_img->height; y++)
    for (gint x = 0; x < in_img->width; x++)
      for (guint c = 0; c < iv.n_ch; c++)
        set_sample (out, x, y, (int) c, get_sample (in, x, y, (int) c));
}

/* gray: floor((299 R + 587 G + 114 B + 500) / 1000) of u8 pixels in either
 * channel order; the luma plane of YUV data as it is. */
static void
ref_gray (const M2iImage *in_img, const M2iImage *out_img)
{
  View ov = view (out_img);
  if (m2i_format_is_yuv (in_img->format)) {
    for (gint y = 0; y < in_img->height; y++)
      for (gint x = 0; x < in_img->width; x++)
        set_sample (&ov, x, y, 0, in_img->data[0][(gsize) y * in_img->stride[0] + x]);
    return;
  }
  View iv = view (in_img);
  gboolean bgr = m2i_format_order (in_img->format) == M2I_ORDER_BGR;
  for (gint y = 0; y < in_img->height; y++)
    for (gint x = 0; x < in_img->width; x++) {
      int r = (int) get_sample (&iv, x, y, bgr ? 2 : 0);
      int g = (int) get_sample (&iv, x, y, 1);
      int b = (int) get_sample (&iv, x, y, bgr ? 0 : 2);
      set_sample (&ov, x, y, 0, (float) ((299 * r + 587 * g + 114 * b + 500) / 1000));
    }
}

/* norm: ((x - B) / C) * A + D in fp32, then stored (fp16: RNE). */
static void
ref_norm (const M2iImage *in_img, const M2iImage *out_img, const M2iNormParams *n)
{
  View iv = view (in_img), ov = view (out_img), *in = &iv, *out = &ov;
  for (gint y = 0; y < in_img->height; y++)
    for (gint x = 0; x < in_img->width; x++)
      for (int c = 0; c < (int) iv.n_ch; c++) {
        float v = get_sample (in, x, y, c);
        float r = ((v - m2i_f16_to_f32 (n->b[c])) / m2i_f16_to_f32 (n->c[c]))
            * m2i_f16_to_f32 (n->a[c]) + m2i_f16_to_f32 (n->d[c]);
        set_sample (out, x, y, c, r);
      }
}

/* resize: per resize-private.h (the hpass kernels apply pillow's
 * intermediate rounding themselves). Every source row is resized horizontally
 * into @hbuf (in_height rows of out_width × channels sums), then every output
 * row vertically; interleaved images at once (3 channels), planar ones plane
 * by plane. */
static void
ref_resize (const M2iImage *in, const M2iImage *out, const M2iResizePlan *rp,
    float *hbuf, const float **rows, float *vrow)
{
  gboolean planar = m2i_format_layout (in->format) == M2I_LAYOUT_PLANAR;
  M2iDataType dt = m2i_format_dtype (in->format);
  int ch = planar ? 1 : 3;
  gsize n = (gsize) out->width * ch;
  for (int p = 0; p < (int) m2i_format_n_planes (in->format); p++) {
    for (gint y = 0; y < in->height; y++) {
      const guint8 *src = in->data[p] + (gsize) y * in->stride[p];
      float *h = hbuf + (gsize) y * n;
      if (dt == M2I_DTYPE_U8) {
        m2i_resize_hpass_u8 (rp, src, ch, h);
      } else if (dt == M2I_DTYPE_F16) {
        m2i_resize_hpass_f16 (rp, (const guint16 *) src, ch, h);
      } else {
        m2i_resize_hpass_f32 (rp, (const float *) src, ch, h);
      }
    }
    for (gint y = 0; y < out->height; y++) {
      for (gint t = 0; t < rp->y.taps; t++)
        rows[t] = hbuf + (gsize) rp->y.index[y * rp->y.taps + t] * n;
      m2i_resize_vpass (rp, y, rows, (gint) n, vrow);
      guint8 *dst = out->data[p] + (gsize) y * out->stride[p];
      if (dt == M2I_DTYPE_U8)
        m2i_resize_round_u8_row (rp, vrow, dst, (gint) n);
      else if (dt == M2I_DTYPE_F16)
        for (gsize i = 0; i < n; i++)
          ((m2i_f16 *) dst)[i] = m2i_f32_to_f16 (vrow[i]);
      else
        memcpy (dst, vrow, n * sizeof (float));
    }
  }
}

/* ---- row-wise versions for plans ---------------------------------------- */

/* Row @y of an RGB-like image as fp32 values (interleaved or one plane). */
static void
load_row_f32 (const M2iImage *img, int plane, gint y, float *dst, gint n)
{
  const guint8 *src = img->data[plane] + (gsize) y * img->stride[plane];
  switch (m2i_format_dtype (img->format)) {
    case M2I_DTYPE_U8:
      for (gint i = 0; i < n; i++)
        dst[i] = src[i];
      break;
    case M2I_DTYPE_F16:
      m2i_f16_to_f32_n ((const m2i_f16 *) src, dst, (gsize) n);
      break;
    default:
      memcpy (dst, src, (gsize) n * sizeof (float));
      break;
  }
}

/* Stores fp32 values exactly representable in the type (u8, or fp16 after
 * rounding to nearest even). */
static void
store_row_f32 (const M2iImage *img, int plane, gint y, const float *src, gint n)
{
  guint8 *dst = img->data[plane] + (gsize) y * img->stride[plane];
  switch (m2i_format_dtype (img->format)) {
    case M2I_DTYPE_U8:
      for (gint i = 0; i < n; i++)
        dst[i] = (guint8) src[i];
      break;
    case M2I_DTYPE_F16:
      m2i_f32_to_f16_n (src, (m2i_f16 *) dst, (gsize) n);
      break;
    default:
      memcpy (dst, src, (gsize) n * sizeof (float));
      break;
  }
}

/* convert, permute and norm a row at a time with bulk conversions; norm uses
 * the fast formula (within one fp16 ulp of ref_norm). */
static void
fast_values (const M2iImage *in, const M2iImage *out, const M2iNormParams *n,
    float *row, float *coef)
{
  gboolean pin = m2i_format_layout (in->format) == M2I_LAYOUT_PLANAR;
  gboolean pout = m2i_format_layout (out->format) == M2I_LAYOUT_PLANAR;
  gint w = in->width, n3 = w * 3;
  float *sub = coef, *mul = coef + n3, *add = coef + 2 * n3;
  if (pin && pout) {                   /* plane by plane, no reshuffling */
    gboolean f16_norm = n && m2i_format_dtype (in->format) == M2I_DTYPE_F16
        && m2i_format_dtype (out->format) == M2I_DTYPE_F16;
    const CscKernels *k = m2i_csc_kernels ();
    for (int c = 0; c < (int) m2i_format_n_planes (in->format); c++) {
      float s0 = 0, m0 = 1, a0 = 0;
      if (n)
        m2i_norm_fast_coeffs (n, c, &s0, &m0, &a0);
      for (gint y = 0; y < in->height && f16_norm; y++)   /* one pass, same formula */
        k->norm_f16 ((const m2i_f16 *) (in->data[c] + (gsize) y * in->stride[c]),
            (m2i_f16 *) (out->data[c] + (gsize) y * out->stride[c]), w, s0, m0, a0);
      for (gint y = 0; y < in->height && !f16_norm; y++) {
        load_row_f32 (in, c, y, row, w);
        if (n)
          for (gint x = 0; x < w; x++)
            row[x] = (row[x] - s0) * m0 + a0;
        store_row_f32 (out, c, y, row, w);
      }
    }
    return;
  }
  if (n)
    for (gint i = 0; i < n3; i++)      /* interleaved pattern of coefficients */
      m2i_norm_fast_coeffs (n, i % 3, &sub[i], &mul[i], &add[i]);
  for (gint y = 0; y < in->height; y++) {
    if (pin)
      for (int c = 0; c < 3; c++) {
        float *r = row + n3 + (gsize) c * w;
        load_row_f32 (in, c, y, r, w);
        for (gint x = 0; x < w; x++)
          row[3 * x + c] = r[x];
      }
    else
      load_row_f32 (in, 0, y, row, n3);
    if (n)
      for (gint i = 0; i < n3; i++)
        row[i] = (row[i] - sub[i]) * mul[i] + add[i];
    if (pout) {
      for (int c = 0; c < 3; c++) {
        float *r = row + n3 + (gsize) c * w;
        for (gint x = 0; x < w; x++)
          r[x] = row[3 * x + c];
        store_row_f32 (out, c, y, r, w);
      }
    } else {
      store_row_f32 (out, 0, y, row, n3);
    }
  }
}

/* ---- op-by-op executor -------------------------------------------------- */

struct OpsExec {
  guint n_ops;
  M2iOp ops[M2I_MAX_OPS];
  M2iImage inter[M2I_MAX_OPS];      /* output of op i (i < n_ops - 1) */
  guint8 *inter_buf[M2I_MAX_OPS];
  M2iResizePlan *rplan[M2I_MAX_OPS];
  float *hbuf[M2I_MAX_OPS];
  const float **rows;
  float *vrow;
  gboolean fast;
  float *frow, *coef;             /* fast: two rows of values, coefficients */
};

OpsExec *
m2i_ops_exec_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gboolean fast, GError **error)
{
  ChainShapes sh;
  if (!m2i_chain_validate (in, ops, n_ops, out, &sh, error))
    return NULL;
  OpsExec *ex = g_new0 (OpsExec, 1);
  ex->n_ops = n_ops;
  memcpy (ex->ops, ops, n_ops * sizeof (M2iOp));
  gint prev_w = in->width, prev_h = in->height;
  gsize max_row = 0;
  gint max_taps = 1;
  for (guint i = 0; i < n_ops; i++) {
    if (i + 1 < n_ops) {
      m2i_image_init (&ex->inter[i], sh.format[i], sh.width[i], sh.height[i]);
      gsize sz = m2i_image_wrap_size (sh.format[i], sh.width[i], sh.height[i], 0);
      ex->inter_buf[i] = m2i_try_alloc0 (sz, "an intermediate image", error);
      if (!ex->inter_buf[i]) {
        m2i_ops_exec_free (ex);
        return NULL;
      }
      m2i_image_wrap (&ex->inter[i], sh.format[i], sh.width[i], sh.height[i],
          ex->inter_buf[i], sz, 0, NULL);
    }
    if (ops[i].kind == M2I_OP_RESIZE) {
      ex->rplan[i] = m2i_resize_plan_new (&ops[i].u.resize, prev_w, prev_h, error);
      if (!ex->rplan[i]) {
        m2i_ops_exec_free (ex);
        return NULL;
      }
      gsize n = (gsize) sh.width[i] * 3;
      ex->hbuf[i] = m2i_try_alloc0 (n * (gsize) prev_h * sizeof (float),
          "the horizontally resized rows", error);
      if (!ex->hbuf[i]) {
        m2i_ops_exec_free (ex);
        return NULL;
      }
      max_row = MAX (max_row, n);
      max_taps = MAX (max_taps, ex->rplan[i]->y.taps);
    }
    prev_w = sh.width[i];
    prev_h = sh.height[i];
  }
  ex->vrow = g_new (float, max_row + 1);
  ex->fast = fast;
  if (fast) {
    gint wmax = in->width;
    for (guint i = 0; i < n_ops; i++)
      wmax = MAX (wmax, sh.width[i]);
    ex->frow = g_new (float, (gsize) wmax * 6);
    ex->coef = g_new (float, (gsize) wmax * 9);
  }
  ex->rows = g_new (const float *, max_taps);
  return ex;
}

void
m2i_ops_exec_run (OpsExec *ex, const M2iImage *in, M2iImage *out)
{
  const M2iImage *src = in;
  for (guint i = 0; i < ex->n_ops; i++) {
    const M2iImage *dst = i + 1 < ex->n_ops ? &ex->inter[i] : out;
    const M2iOp *op = &ex->ops[i];
    switch (op->kind) {
      case M2I_OP_CSC: ref_csc (src, dst, op->u.csc.order); break;
      case M2I_OP_DROP_ALPHA: ref_copy_values (src, dst); break;
      case M2I_OP_GRAY: ref_gray (src, dst); break;
      case M2I_OP_CONVERT:
      case M2I_OP_PERMUTE:
        if (ex->fast)
          fast_values (src, dst, NULL, ex->frow, ex->coef);
        else
          ref_copy_values (src, dst);
        break;
      case M2I_OP_NORM:
        if (ex->fast)
          fast_values (src, dst, &op->u.norm, ex->frow, ex->coef);
        else
          ref_norm (src, dst, &op->u.norm);
        break;
      case M2I_OP_RESIZE:
        ref_resize (src, dst, ex->rplan[i], ex->hbuf[i], ex->rows, ex->vrow);
        break;
    }
    src = dst;
  }
}

void
m2i_ops_exec_free (OpsExec *ex)
{
  if (!ex)
    return;
  for (guint i = 0; i < ex->n_ops; i++) {
    g_free (ex->inter_buf[i]);
    if (ex->rplan[i])
      m2i_resize_plan_free (ex->rplan[i]);
    g_free (ex->hbuf[i]);
  }
  g_free (ex->vrow);
  g_free (ex->rows);
  g_free (ex->frow);
  g_free (ex->coef);
  g_free (ex);
}

gboolean
m2i_reference_run (const M2iImage *in, const M2iOpList *ops, M2iImage *out,
    GError **error)
{
  if (!m2i_image_check (in, "input", TRUE, error) || !m2i_image_check (out, "output", TRUE, error))
    return FALSE;
  OpsExec *ex = m2i_ops_exec_new (in, ops->ops, ops->n_ops, out, FALSE, error);
  if (!ex)
    return FALSE;
  m2i_ops_exec_run (ex, in, out);
  m2i_ops_exec_free (ex);
  return TRUE;
}
