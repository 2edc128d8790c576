/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* roi-reference.h — the independent reference of region-of-interest
 * inference (tests/infer/test-infer-roi.c without GStreamer,
 * tests/gst/test-gst-infer-roi.c for m2iinfer inference-region=roi-list):
 * Fashion-MNIST images pasted into a larger frame at known rectangles, the
 * crop rule of docs/m2iinfer.md written again from its text, the crop copied
 * out of the frame row by row into an image of its own, the engine's
 * reference path (op by op) making the model's input from it, and the IR
 * runtime run directly on that input. */
#pragma once

#include "infer-reference.h"
#include "test-image.h"
#include "test-support.h"

#include <m2i-core/base/m2i-fp16.h>
#include <string.h>

#define ROI_FM_SIDE 28

/* Fashion-MNIST image @image drawn into the rectangle x, y, w, h. */
typedef struct {
  gint x, y, w, h;
  guint image;
} RoiPaste;

/* The pastes of the region tests in a 320x240 frame: odd offsets, odd
 * and non-integer sizes, non-square, two of one size (the same crop size
 * in 4:2:0 too), two partly outside the frame. */
#define ROI_REF_W 320
#define ROI_REF_H 240
static const RoiPaste roi_ref_pastes[] = {
  { 13, 7, 56, 56, 0 },
  { 101, 33, 85, 85, 1 },
  { 200, 120, 29, 31, 2 },
  { 250, 10, 60, 90, 3 },
  { 0, 160, 80, 80, 4 },
  { 121, 151, 56, 56, 5 },
  { -10, 200, 60, 60, 6 },        /* partly outside, left and bottom */
  { 290, 215, 50, 40, 7 },        /* partly outside, right and bottom */
};

/* A @width x @height grey canvas (0 = black, the images' background) with
 * each paste drawn nearest-neighbour (canvas pixel (x, y) of a w x h paste
 * shows image pixel (floor(y * 28 / h), floor(x * 28 / w))), clipped to the
 * canvas. Free with g_free. */
static inline guint8 *
roi_ref_canvas (GBytes *images, gint width, gint height, const RoiPaste *p, guint n)
{
  const guint8 *all = g_bytes_get_data (images, NULL);
  guint8 *c = g_malloc0 ((gsize) width * height);
  for (guint i = 0; i < n; i++) {
    const guint8 *img = all + (gsize) p[i].image * ROI_FM_SIDE * ROI_FM_SIDE;
    for (gint y = 0; y < p[i].h; y++)
      for (gint x = 0; x < p[i].w; x++) {
        gint cx = p[i].x + x, cy = p[i].y + y;
        if (cx >= 0 && cy >= 0 && cx < width && cy < height)
          c[(gsize) cy * width + cx] = img[(y * ROI_FM_SIDE / p[i].h) * ROI_FM_SIDE
              + x * ROI_FM_SIDE / p[i].w];
      }
  }
  return c;
}

/* A colour pattern that differs from sample to sample, so that a crop
 * shifted by one chroma sample or a channel in the wrong plane changes the
 * model's input. */
static inline guint8
roi_ref_tint (gint x, gint y, gint c)
{
  return (guint8) (((x * (7 + c) + y * (3 + 2 * c)) % 23) * 5);
}

/* The canvas as a frame of format @f with rows @pad samples longer than
 * needed: NV12/I420 Y = round(16 + v * 219 / 255) and U, V = 70 + the
 * tint of the chroma sample; R = v, G and B = v / 2 + the pixel's tint
 * (interleaved or planar, in the format's channel order). Without
 * @colour, grey: chroma 128, R = G = B = v. */
static inline void
roi_ref_frame (TestImage *t, const guint8 *canvas, gint width, gint height, M2iFormat f,
    gsize pad, gboolean colour)
{
  test_image_alloc_padded (t, f, width, height, pad, 128);
  M2iImage *im = &t->img;
  gboolean bgr = m2i_format_order (f) == M2I_ORDER_BGR;
  for (gint y = 0; y < height; y++)
    for (gint x = 0; x < width; x++) {
      guint v = canvas[(gsize) y * width + x];
      guint8 rgb[3] = { (guint8) v, (guint8) v, (guint8) v };
      if (colour) {
        rgb[1] = (guint8) (v / 2 + roi_ref_tint (x, y, 1));
        rgb[2] = (guint8) (v / 2 + roi_ref_tint (x, y, 2));
      }
      switch (m2i_format_layout (f)) {
        case M2I_LAYOUT_YUV:
          im->data[0][(gsize) y * im->stride[0] + x] = (guint8) ((16 * 255 + v * 219 + 127) / 255);
          break;
        case M2I_LAYOUT_INTERLEAVED:
          for (int c = 0; c < 3; c++)
            im->data[0][(gsize) y * im->stride[0] + (gsize) x * 3 + c] = rgb[bgr ? 2 - c : c];
          break;
        case M2I_LAYOUT_PLANAR:
          for (int c = 0; c < 3; c++)
            im->data[c][(gsize) y * im->stride[c] + x] = rgb[bgr ? 2 - c : c];
          break;
      }
    }
  if (m2i_format_layout (f) != M2I_LAYOUT_YUV || !colour)
    return;
  for (gint y = 0; y < height / 2; y++)
    for (gint x = 0; x < width / 2; x++) {
      guint8 u = (guint8) (70 + roi_ref_tint (x, y, 1)), v = (guint8) (70 + roi_ref_tint (x, y, 2));
      if (f == M2I_FORMAT_SP_NV12_8) {
        im->data[1][(gsize) y * im->stride[1] + 2 * x] = u;
        im->data[1][(gsize) y * im->stride[1] + 2 * x + 1] = v;
      } else {
        im->data[1][(gsize) y * im->stride[1] + x] = u;
        im->data[2][(gsize) y * im->stride[2] + x] = v;
      }
    }
}

/* The first 64 Fashion-MNIST test images (tests/data) pasted at @p (@n of
 * them) into a ROI_REF_W x ROI_REF_H frame of format @f: roi_ref_canvas,
 * then roi_ref_frame. */
static inline void
roi_ref_pasted_frame (TestImage *t, const RoiPaste *p, guint n, M2iFormat f, gsize pad,
    gboolean colour)
{
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  guint8 *canvas = roi_ref_canvas (images, ROI_REF_W, ROI_REF_H, p, n);
  roi_ref_frame (t, canvas, ROI_REF_W, ROI_REF_H, f, pad, colour);
  g_free (canvas);
  g_bytes_unref (images);
}

/* docs/m2iinfer.md's crop of the region x, y, w, h in a W x H frame: the
 * part inside the frame, and for 4:2:0 formats its left and top edges
 * rounded down and its right and bottom edges rounded up to even. @r: x,
 * y, w, h. FALSE when nothing is left. */
static inline gboolean
roi_ref_crop_rect (M2iFormat f, gint W, gint H, gint x, gint y, gint w, gint h, gint r[4])
{
  gint left = MAX (x, 0), top = MAX (y, 0);
  gint right = MIN (x + w, W), bottom = MIN (y + h, H);
  if (w <= 0 || h <= 0 || right <= left || bottom <= top)
    return FALSE;
  if (m2i_format_layout (f) == M2I_LAYOUT_YUV) {
    left -= left % 2;
    top -= top % 2;
    right += right % 2;
    bottom += bottom % 2;
  }
  r[0] = left;
  r[1] = top;
  r[2] = right - left;
  r[3] = bottom - top;
  return TRUE;
}

/* Copies the rectangle @r (x, y, w, h; even for 4:2:0) of @frame into a new
 * tight image @crop, byte by byte. */
static inline void
roi_ref_copy (const TestImage *frame, const gint r[4], TestImage *crop)
{
  M2iFormat f = frame->img.format;
  test_image_alloc (crop, f, r[2], r[3]);
  for (guint p = 0; p < m2i_format_n_planes (f); p++) {
    /* bytes per pixel column and the plane's subsampling */
    gint bpp = 1, sub = 1;
    if (m2i_format_layout (f) == M2I_LAYOUT_INTERLEAVED)
      bpp = 3;
    else if (m2i_format_layout (f) == M2I_LAYOUT_YUV && p > 0)
      sub = 2;
    if (f == M2I_FORMAT_SP_NV12_8 && p == 1)
      bpp = 2;               /* a U,V pair per 2 pixels */
    gint rows = r[3] / sub, bytes = r[2] / sub * bpp;
    for (gint y = 0; y < rows; y++)
      memcpy (crop->img.data[p] + (gsize) y * crop->img.stride[p],
          frame->img.data[p] + (gsize) (r[1] / sub + y) * frame->img.stride[p]
          + (gsize) (r[0] / sub) * bpp, (gsize) bytes);
  }
}

/* The Fashion-MNIST model's output for @crop: the reference path's ops
 * (csc for YUV, convertU8F16, resize to 28x28 linear_onnx, permute for
 * interleaved data, the normalisation (p/255 - 0.286)/0.353) into planar
 * fp16, widened into the input of @d, run directly. The probabilities,
 * owned by @d. */
static inline const float *
roi_ref_classify (Direct *d, const TestImage *crop)
{
  M2iFormat f = crop->img.format;
  M2iOpList ops;
  GError *err = NULL;
  if (m2i_format_layout (f) == M2I_LAYOUT_PLANAR) {
    /* planar already: convert, resize, norm */
    M2iResizeParams rp;
    M2iNormParams np;
    const float mean[3] = { 0.286f, 0.286f, 0.286f }, std[3] = { 0.353f, 0.353f, 0.353f };
    m2i_op_list_init (&ops);
    g_assert_true (m2i_op_list_add_convert (&ops, M2I_DTYPE_F16));
    m2i_resize_params_init (&rp, ROI_FM_SIDE, ROI_FM_SIDE);
    rp.mode = M2I_RESIZE_LINEAR_ONNX;
    g_assert_true (m2i_op_list_add_resize (&ops, &rp));
    g_assert_true (m2i_norm_params_from_mean_std (&np, mean, std, 1.0f / 255.0f));
    g_assert_true (m2i_op_list_add_norm (&ops, &np));
  } else {
    reference_ops (&ops, M2I_ORDER_RGB, m2i_format_is_yuv (f), ROI_FM_SIDE, ROI_FM_SIDE, TRUE);
  }
  gboolean bgr = f == M2I_FORMAT_IL_BGR888 || f == M2I_FORMAT_PL_BGR24;
  TestImage ref;
  test_image_alloc (&ref, bgr ? M2I_FORMAT_PL_FP16_BGR : M2I_FORMAT_PL_FP16_RGB, ROI_FM_SIDE,
      ROI_FM_SIDE);
  g_assert_true (m2i_reference_run (&crop->img, &ops, &ref.img, &err));
  g_assert_no_error (err);
  gsize plane = (gsize) ROI_FM_SIDE * ROI_FM_SIDE;
  float *dst = m2i_ir_infer_request_get_input (d->req, 0)->data;
  /* the model takes RGB planes */
  for (int c = 0; c < 3; c++)
    m2i_f16_to_f32_n ((const m2i_f16 *) ref.img.data[bgr ? 2 - c : c], dst + c * plane, plane);
  test_image_free (&ref);
  return direct_run (d)->data;
}
