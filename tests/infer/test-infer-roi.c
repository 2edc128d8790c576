/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-roi.c — inference on regions of a frame (m2i-infer-roi.h),
 * without GStreamer: Fashion-MNIST images pasted into a 320x240 frame at
 * known rectangles (odd offsets and sizes, partly outside, 1x1), each
 * region's outputs against the IR runtime run directly on the same crop
 * made by the reference path (tests/infer/roi-reference.h: the crop copied
 * out byte by byte, then csc, convert, resize, permute, norm op by op), in
 * NV12, I420, interleaved and planar RGB frames with padded rows; batches,
 * the plan table, the device counters, no allocation once the plans exist.
 * Run once per SIMD level (tests/infer/meson.build).
 */
#include "infer-test-util.h"
#include "roi-reference.h"
#include "../alloc-count.h"

#include <base/m2i-error.h>
#include <infer/m2i-infer-roi.h>

#define W ROI_REF_W
#define H ROI_REF_H
#define pastes roi_ref_pastes

typedef struct {
  const TestImage *frame;
  Direct *direct;
  M2iInferSession *s;
  const M2iInferRegion *regions;
  guint n_called, n_null;
  guint next;                     /* the index expected next */
} Check;

/* Each region's outputs against the reference on the same crop. */
static void
check_region (guint index, const M2iInferResult *r, gpointer data)
{
  Check *c = data;
  g_assert_cmpuint (index, ==, c->next);
  c->next++;
  c->n_called++;
  const M2iInferRegion *reg = &c->regions[index];
  const M2iImage *f = &c->frame->img;
  gint rect[4] = { 0 };
  gboolean inside = roi_ref_crop_rect (f->format, f->width, f->height, reg->x, reg->y,
      reg->width, reg->height, rect);
  if (!r) {
    g_assert_false (inside);
    c->n_null++;
    return;
  }
  g_assert_true (inside);
  TestImage crop;
  roi_ref_copy (c->frame, rect, &crop);
  const float *ref = roi_ref_classify (c->direct, &crop);
  test_image_free (&crop);
  const float *prob = m2i_infer_session_get_outputs (c->s, NULL)[0].data;
  for (int k = 0; k < 10; k++)
    g_assert_cmpfloat_with_epsilon (prob[k], ref[k], 2e-3);
  g_assert_cmpuint (r->n_heads, ==, 1);
  g_assert_cmpint (r->heads[0].classes[0].class_id, ==, test_argmax (ref, 10));
  /* the geometry maps the model's input onto the crop in the frame */
  const M2iInferGeometry *g = &r->geometry;
  g_assert_cmpint (g->source_width, ==, f->width);
  g_assert_cmpint (g->source_height, ==, f->height);
  g_assert_cmpfloat (g->crop_x, ==, rect[0]);
  g_assert_cmpfloat (g->crop_y, ==, rect[1]);
  g_assert_cmpfloat_with_epsilon (g->scale_x, (double) ROI_FM_SIDE / rect[2], 1e-12);
  g_assert_cmpfloat_with_epsilon (g->scale_y, (double) ROI_FM_SIDE / rect[3], 1e-12);
}

static M2iInferSession *
fm_session (void)
{
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  M2iInferPreprocess pp;
  GError *err = NULL;
  fm_preprocess (&pp);
  g_assert_true (m2i_infer_session_set_preprocess (s, &pp, &err));
  g_free (xml);
  return s;
}

/* A frame of pastes, the session on the Fashion-MNIST model with its
 * normalisation, its M2iInferRoi, and the IR runtime on the same model run
 * directly (the reference). */
typedef struct {
  TestImage frame;
  M2iInferSession *s;
  M2iInferRoi *roi;
  Direct d;
} Fixture;

static void
fixture_open (Fixture *fx, const RoiPaste *p, guint n, M2iFormat f, gsize pad, gboolean colour)
{
  GError *err = NULL;
  roi_ref_pasted_frame (&fx->frame, p, n, f, pad, colour);
  fx->s = fm_session ();
  fx->roi = m2i_infer_roi_new (fx->s, &err);
  g_assert_no_error (err);
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  direct_open (&fx->d, xml);
  g_free (xml);
}

static void
fixture_close (Fixture *fx)
{
  direct_close (&fx->d);
  m2i_infer_roi_free (fx->roi);
  m2i_infer_session_free (fx->s);
  test_image_free (&fx->frame);
}

/* All pastes as regions, plus one outside the frame and a 1x1 one, in
 * frames of every format: every region equals the reference. */
static void
test_regions (gconstpointer data)
{
  M2iFormat format = GPOINTER_TO_INT (data);
  Fixture fx;
  fixture_open (&fx, pastes, G_N_ELEMENTS (pastes), format, 7, TRUE);
  M2iInferRegion regions[G_N_ELEMENTS (pastes) + 3];
  guint n = 0;
  for (guint i = 0; i < G_N_ELEMENTS (pastes); i++)
    regions[n++] = (M2iInferRegion) { pastes[i].x, pastes[i].y, pastes[i].w, pastes[i].h };
  regions[n++] = (M2iInferRegion) { 400, 10, 20, 20 };    /* outside */
  regions[n++] = (M2iInferRegion) { 31, 33, 1, 1 };       /* 1x1 */
  regions[n++] = (M2iInferRegion) { 60, 100, 0, 10 };     /* empty */

  GError *err = NULL;
  Check c = { &fx.frame, &fx.d, fx.s, regions };
  M2iDevice *dev = m2i_device_get_default ();
  M2iDeviceCounters before, after;
  m2i_device_get_counters (dev, &before);
  g_assert_true (m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, n, check_region, &c, &err));
  g_assert_no_error (err);
  m2i_device_get_counters (dev, &after);
  g_assert_cmpuint (c.n_called, ==, n);
  g_assert_cmpuint (c.n_null, ==, 2);
  /* all regions of the frame in one submission */
  g_assert_cmpuint (after.runs - before.runs, ==, 1);
  M2iInferRoiStats st;
  m2i_infer_roi_get_stats (fx.roi, &st);
  g_assert_cmpuint (st.regions, ==, n - 2);
  g_assert_cmpuint (st.batches, ==, 1);
  /* pastes 0 and 5 have the same size and, in 4:2:0, the same crop size */
  g_assert_cmpuint (st.plans_made + st.plans_reused, ==, n - 2);
  g_assert_cmpuint (st.plans_reused, >=, 1);
  const char *desc = m2i_infer_roi_describe (fx.roi, NULL);
  g_assert_true (g_str_has_prefix (desc, m2i_format_is_yuv (format)
          ? "per region: crop -> csc(RGB) -> convertU8F16 -> resize(28x28"
          : "per region: crop -> convertU8F16 -> resize(28x28"));

  /* again: every plan is in the table */
  c.next = 0;
  g_assert_true (m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, n, check_region, &c, &err));
  m2i_infer_roi_get_stats (fx.roi, &st);
  g_assert_cmpuint (st.plans_made + st.plans_reused, ==, 2 * (n - 2));
  g_assert_cmpuint (st.batches, ==, 2);
  fixture_close (&fx);
}

static void
store_class (guint index, const M2iInferResult *r, gpointer data)
{
  ((gint *) data)[index] = r->heads[0].classes[0].class_id;
}

/* A paste at twice the image size on a region that crops exactly (RGB, or
 * even coordinates in NV12): the resize gives back the 28x28 image, and
 * the class is torch's for it. */
static void
test_exact_crop_is_torch (void)
{
  GBytes *preds = test_read_data ("fashion-mnist/t10k.torch-pred.u8");
  const guint8 *pred = g_bytes_get_data (preds, NULL);
  RoiPaste p[16];
  M2iInferRegion regions[16];
  for (guint i = 0; i < 16; i++) {
    /* a 4x4 grid of 56x56 images at odd offsets in RGB */
    p[i] = (RoiPaste) { 3 + (gint) (i % 4) * 70, 1 + (gint) (i / 4) * 58, 56, 56, 20 + i };
    regions[i] = (M2iInferRegion) { p[i].x, p[i].y, 56, 56 };
  }
  Fixture fx;
  fixture_open (&fx, p, 16, M2I_FORMAT_IL_RGB888, 0, FALSE);
  GError *err = NULL;
  gint classes[16];
  for (guint i = 0; i < 16; i++)
    classes[i] = -1;
  g_assert_true (m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, 16, store_class, classes,
          &err));
  g_assert_no_error (err);
  for (guint i = 0; i < 16; i++)
    g_assert_cmpint (classes[i], ==, pred[20 + i]);
  M2iInferRoiStats st;
  m2i_infer_roi_get_stats (fx.roi, &st);
  g_assert_cmpuint (st.plans_made, ==, 1);        /* one size, one plan */
  fixture_close (&fx);
  g_bytes_unref (preds);
}

/* The crop rule on hand-worked rectangles. */
static void
test_crop_rect (void)
{
  static const struct {
    M2iFormat f;
    M2iInferRegion in;
    gboolean ok;
    M2iInferRegion out;
  } cases[] = {
    { M2I_FORMAT_SP_NV12_8, { 13, 7, 56, 56 }, TRUE, { 12, 6, 58, 58 } },
    { M2I_FORMAT_SP_NV12_8, { 12, 6, 56, 56 }, TRUE, { 12, 6, 56, 56 } },
    { M2I_FORMAT_PL_YUV420_8, { 13, 8, 29, 31 }, TRUE, { 12, 8, 30, 32 } },
    { M2I_FORMAT_SP_NV12_8, { 31, 33, 1, 1 }, TRUE, { 30, 32, 2, 2 } },
    { M2I_FORMAT_IL_RGB888, { 31, 33, 1, 1 }, TRUE, { 31, 33, 1, 1 } },
    { M2I_FORMAT_SP_NV12_8, { -10, 200, 60, 60 }, TRUE, { 0, 200, 50, 40 } },
    { M2I_FORMAT_SP_NV12_8, { 319, 239, 5, 5 }, TRUE, { 318, 238, 2, 2 } },
    { M2I_FORMAT_IL_BGR888, { 319, 239, 5, 5 }, TRUE, { 319, 239, 1, 1 } },
    { M2I_FORMAT_PL_RGB24, { -5, -5, 400, 300 }, TRUE, { 0, 0, 320, 240 } },
    { M2I_FORMAT_SP_NV12_8, { 320, 0, 10, 10 }, FALSE, { 0 } },
    { M2I_FORMAT_SP_NV12_8, { 10, 10, 0, 5 }, FALSE, { 0 } },
    { M2I_FORMAT_SP_NV12_8, { -20, 10, 20, 5 }, FALSE, { 0 } },
    { M2I_FORMAT_SP_NV12_8, { G_MAXINT - 1, G_MAXINT - 1, G_MAXINT, G_MAXINT }, FALSE, { 0 } },
    { M2I_FORMAT_SP_NV12_8, { G_MININT, G_MININT, G_MAXINT, G_MAXINT }, FALSE, { 0 } },
    { M2I_FORMAT_SP_NV12_8, { -2, -2, G_MAXINT, G_MAXINT }, TRUE, { 0, 0, 320, 240 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    M2iInferRegion out;
    g_assert_cmpint (m2i_infer_roi_crop_rect (cases[i].f, W, H, &cases[i].in, &out), ==,
        cases[i].ok);
    g_assert_cmpint (out.x, ==, cases[i].out.x);
    g_assert_cmpint (out.y, ==, cases[i].out.y);
    g_assert_cmpint (out.width, ==, cases[i].out.width);
    g_assert_cmpint (out.height, ==, cases[i].out.height);
  }
}

/* More regions than one submission holds: two batches, all in order;
 * zero regions: nothing. */
static void
test_batches (void)
{
  Fixture fx;
  fixture_open (&fx, pastes, G_N_ELEMENTS (pastes), M2I_FORMAT_SP_NV12_8, 0, TRUE);
  M2iInferRegion regions[40];
  for (guint i = 0; i < 40; i++)
    regions[i] = (M2iInferRegion) { pastes[i % 6].x, pastes[i % 6].y, pastes[i % 6].w,
      pastes[i % 6].h };
  GError *err = NULL;
  Check c = { &fx.frame, &fx.d, fx.s, regions };
  M2iDevice *dev = m2i_device_get_default ();
  M2iDeviceCounters before, after;
  m2i_device_get_counters (dev, &before);
  g_assert_true (m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, 40, check_region, &c, &err));
  g_assert_no_error (err);
  m2i_device_get_counters (dev, &after);
  g_assert_cmpuint (c.n_called, ==, 40);
  g_assert_cmpuint (after.runs - before.runs, ==, 3);      /* 16 + 16 + 8 */
  M2iInferRoiStats st;
  m2i_infer_roi_get_stats (fx.roi, &st);
  g_assert_cmpuint (st.batches, ==, 3);
  g_assert_cmpuint (st.plans_made, ==, 5);                 /* 6 regions, 5 crop sizes */

  c.n_called = 0;
  g_assert_true (m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, 0, check_region, &c, &err));
  g_assert_cmpuint (c.n_called, ==, 0);
  fixture_close (&fx);
}

/* Once the table holds the plans, a frame's regions allocate nothing. */
static void
test_noalloc (void)
{
  if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("a sanitizer owns malloc");
    return;
  }
  Fixture fx;
  fixture_open (&fx, pastes, G_N_ELEMENTS (pastes), M2I_FORMAT_SP_NV12_8, 0, TRUE);
  M2iInferRegion regions[G_N_ELEMENTS (pastes)];
  for (guint i = 0; i < G_N_ELEMENTS (pastes); i++)
    regions[i] = (M2iInferRegion) { pastes[i].x, pastes[i].y, pastes[i].w, pastes[i].h };
  GError *err = NULL;
  g_assert_true (m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, G_N_ELEMENTS (pastes), NULL,
          NULL, &err));
  alloc_count_start_checked ();
  for (int i = 0; i < 3; i++)
    m2i_infer_roi_run (fx.roi, &fx.frame.img, regions, G_N_ELEMENTS (pastes), NULL, NULL, NULL);
  gint n = alloc_count_stop ();
  g_assert_cmpint (n, ==, 0);
  fixture_close (&fx);
}

/* A model that takes no image of any size: refused with a message. */
static void
test_errors (void)
{
  gchar *xml = test_models_path ("fashion-mnist-ppp/fashion-mnist-ppp.xml");
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  GError *err = NULL;
  g_assert_null (m2i_infer_roi_new (s, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "NV12/I420 frames of its own size only"));
  g_clear_error (&err);
  m2i_infer_session_free (s);
  g_free (xml);

  s = fm_session ();
  M2iInferRoi *roi = m2i_infer_roi_new (s, &err);
  M2iInferRegion reg = { 0, 0, 10, 10 };
  TestImage odd;
  test_image_alloc (&odd, M2I_FORMAT_IL_RGB888, 10, 10);
  odd.img.format = M2I_FORMAT_SP_NV12_8;
  odd.img.width = 9;                /* odd NV12: not a frame */
  g_assert_false (m2i_infer_roi_run (roi, &odd.img, &reg, 1, NULL, NULL, &err));
  g_assert_error (err, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  test_image_free (&odd);
  m2i_infer_roi_free (roi);
  m2i_infer_session_free (s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/infer/roi/nv12", GINT_TO_POINTER (M2I_FORMAT_SP_NV12_8), test_regions);
  g_test_add_data_func ("/infer/roi/i420", GINT_TO_POINTER (M2I_FORMAT_PL_YUV420_8), test_regions);
  g_test_add_data_func ("/infer/roi/rgb", GINT_TO_POINTER (M2I_FORMAT_IL_RGB888), test_regions);
  g_test_add_data_func ("/infer/roi/bgrp", GINT_TO_POINTER (M2I_FORMAT_PL_BGR24), test_regions);
  g_test_add_func ("/infer/roi/exact-crop-is-torch", test_exact_crop_is_torch);
  g_test_add_func ("/infer/roi/crop-rect", test_crop_rect);
  g_test_add_func ("/infer/roi/batches", test_batches);
  g_test_add_func ("/infer/roi/noalloc", test_noalloc);
  g_test_add_func ("/infer/roi/errors", test_errors);
  return g_test_run ();
}
