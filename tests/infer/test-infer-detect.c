/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-detect.c — the session with the SSD decoder on
 * person-detection-retail-0013 (from ../shared; skipped when absent),
 * without GStreamer.
 *
 * Reference: the IR runtime run directly on the input the engine's
 * reference path computes from the same photo; its DetectionOutput rows,
 * mapped to the photo's pixels by hand (corner x model size / scale), are
 * what the session's detections must be.
 */
#include "infer-test-util.h"

#include <math.h>

#define MODEL_W 544
#define MODEL_H 320

/* The photo as RGB, the session pre-processing it (BGR model, 544x320):
 * one detection per row >= the threshold, in the rows' order, boxes in the
 * photo's pixels; the person is where the photo put her. */
static void
test_ssd_person (void)
{
  gchar *xml = person_model ();
  if (!xml)
    return;
  TestImage photo;
  read_photo (&photo);
  M2iDecoderOptions dopts;
  m2i_decoder_options_init (&dopts);
  dopts.confidence_threshold = 0.3f;
  M2iInferSession *s = open_session (xml, "CPU", NULL, &dopts);
  M2iDecoder *dec = m2i_infer_session_get_decoder (s);
  g_assert_cmpint (m2i_decoder_get_model_type (dec), ==, M2I_MODEL_TYPE_SSD);
  g_assert_nonnull (strstr (m2i_decoder_describe (dec), "DetectionOutput"));
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  pp.channel_order = M2I_ORDER_BGR;
  GError *err = NULL;
  g_assert_true (m2i_infer_session_set_preprocess (s, &pp, &err));
  g_assert_true (m2i_infer_session_run (s, &photo.img, NULL, NULL, &err));
  g_assert_no_error (err);
  g_assert_nonnull (strstr (m2i_infer_session_describe (s, NULL), "(BGR), channels swapped"));

  Direct d;
  direct_open (&d, xml);
  M2iOpList ops;
  reference_ops (&ops, M2I_ORDER_RGB, FALSE, MODEL_W, MODEL_H, FALSE);
  reference_input (&photo.img, &ops, MODEL_W, MODEL_H, TRUE,
      m2i_ir_infer_request_get_input (d.req, 0)->data);
  const float *rows = direct_run (&d)->data;
  const M2iInferResult *r = m2i_infer_session_get_result (s);
  const float *got = m2i_infer_session_get_outputs (s, NULL)[0].data;
  guint n = 0;
  for (guint i = 0; i < 200 && rows[i * 7] >= 0; i++) {
    for (int k = 0; k < 7; k++)
      g_assert_cmpfloat_with_epsilon (got[i * 7 + k], rows[i * 7 + k], 1e-3);
    if (got[i * 7 + 2] < 0.3f)
      continue;
    g_assert_cmpuint (n, <, r->n_detections);
    const M2iInferDetection *det = &r->detections[n++];
    const float *row = got + i * 7;
    /* model pixels (corner x 544) back to the photo (x 272/544): corner x 272 */
    double want[4];
    for (int k = 0; k < 4; k++)
      want[k] = CLAMP (row[3 + k], 0.0, 1.0) * (k % 2 ? photo.img.height : photo.img.width);
    g_assert_cmpfloat_with_epsilon (det->x_min, want[0], 1e-3);
    g_assert_cmpfloat_with_epsilon (det->y_min, want[1], 1e-3);
    g_assert_cmpfloat_with_epsilon (det->x_max, want[2], 1e-3);
    g_assert_cmpfloat_with_epsilon (det->y_max, want[3], 1e-3);
    g_assert_true (det->confidence == row[2]);
    g_assert_cmpint (det->class_id, ==, (gint) row[1]);
    g_assert_cmpuint (det->n_keypoints, ==, 0);
  }
  g_assert_cmpuint (r->n_detections, ==, n);
  g_assert_cmpuint (n, >=, 1);
  g_assert_false (r->truncated);
  /* The photo's person: a 100x100 square at (86, 30). */
  const M2iInferDetection *best = &r->detections[0];
  g_assert_cmpfloat (best->x_min, >=, 76);
  g_assert_cmpfloat (best->x_max, <=, 196);
  g_assert_cmpfloat (best->y_min, >=, 20);
  g_assert_cmpfloat (best->y_min, <=, 50);

  /* A higher threshold between runs keeps fewer. */
  dopts.confidence_threshold = 0.9f;
  m2i_decoder_set_options (dec, &dopts);
  g_assert_true (m2i_infer_session_run (s, &photo.img, NULL, NULL, &err));
  for (guint i = 0; i < r->n_detections; i++)
    g_assert_cmpfloat (r->detections[i].confidence, >=, 0.9f);
  g_assert_cmpuint (r->n_detections, <=, n);

  direct_close (&d);
  m2i_infer_session_free (s);
  test_image_free (&photo);
  g_free (xml);
}

/* A letterboxing chain queued on the frame (as m2iresize
 * keep-aspect-ratio=true queues it): the photo on a 272x240 canvas becomes a 363x320
 * picture at x = 90 of 544x320 (hand-computed: 320/240 = 1.333, 272 x
 * 1.333 = 362.7 -> 363, (544 - 363) / 2 = 90). The geometry says so, and
 * the box lands where the stretched frame puts it (within 8 pixels: what
 * two different resizes change); not unmapping the letterbox would move it
 * by 40 pixels. */
static void
test_ssd_letterbox (void)
{
  gchar *xml = person_model ();
  if (!xml)
    return;
  TestImage photo, tall;
  read_photo (&photo);
  test_image_alloc_padded (&tall, M2I_FORMAT_IL_RGB888, photo.img.width, 240, 0, 128);
  for (gint y = 0; y < photo.img.height; y++)
    memcpy (tall.img.data[0] + (gsize) (y + 40) * tall.img.stride[0],
        photo.img.data[0] + (gsize) y * photo.img.stride[0], (gsize) photo.img.width * 3);
  M2iInferSession *s = open_session (xml, "CPU", NULL, NULL);
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  pp.channel_order = M2I_ORDER_BGR;
  g_assert_true (m2i_infer_session_set_preprocess (s, &pp, NULL));
  GError *err = NULL;

  /* stretched: the session's own resize */
  g_assert_true (m2i_infer_session_run (s, &tall.img, NULL, NULL, &err));
  g_assert_no_error (err);
  M2iInferDetection stretched = m2i_infer_session_get_result (s)->detections[0];

  M2iOpList q;
  M2iResizeParams rp;
  m2i_op_list_init (&q);
  m2i_resize_params_init (&rp, 363, 320);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;
  m2i_op_list_add_resize (&q, &rp);
  M2iLetterbox lb = { .active = TRUE, .after_op = 1, .x = 90, .y = 0, .width = MODEL_W,
    .height = MODEL_H, .value = 128 };
  g_assert_true (m2i_infer_session_run (s, &tall.img, &q, &lb, &err));
  g_assert_no_error (err);
  const M2iInferResult *r = m2i_infer_session_get_result (s);
  g_assert_nonnull (strstr (m2i_infer_session_describe (s, NULL), "+ letterbox"));
  g_assert_cmpfloat_with_epsilon (r->geometry.scale_x, 363.0 / 272.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (r->geometry.scale_y, 320.0 / 240.0, 1e-12);
  g_assert_cmpfloat (r->geometry.pad_x, ==, 90);
  g_assert_cmpfloat (r->geometry.pad_y, ==, 0);
  g_assert_cmpuint (r->n_detections, >=, 1);
  const M2iInferDetection *boxed = &r->detections[0];
  g_assert_cmpfloat (fabsf (boxed->x_min - stretched.x_min), <=, 8);
  g_assert_cmpfloat (fabsf (boxed->y_min - stretched.y_min), <=, 8);
  g_assert_cmpfloat (fabsf (boxed->x_max - stretched.x_max), <=, 8);
  g_assert_cmpfloat (fabsf (boxed->y_max - stretched.y_max), <=, 8);
  /* on the person: her square is at (86, 70) in this frame */
  g_assert_cmpfloat (boxed->x_min, >=, 76);
  g_assert_cmpfloat (boxed->x_max, <=, 196);
  g_assert_cmpfloat (boxed->y_min, >=, 60);
  g_assert_cmpfloat (boxed->y_min, <=, 90);

  /* a letterbox to another size than the model's cannot be followed */
  lb.width = 600;
  g_assert_false (m2i_infer_session_run (s, &tall.img, &q, &lb, &err));
  g_assert_nonnull (strstr (err->message, "letterboxes to 600x320, but the model takes 544x320"));
  g_clear_error (&err);

  m2i_infer_session_free (s);
  test_image_free (&photo);
  test_image_free (&tall);
  g_free (xml);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/detect/ssd-person", test_ssd_person);
  g_test_add_func ("/infer/detect/ssd-letterbox", test_ssd_letterbox);
  return g_test_run ();
}
