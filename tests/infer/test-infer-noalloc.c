/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-infer-noalloc.c — a prepared session runs (pre-processing plan,
 * model, decoder) without allocating: the Fashion-MNIST classifier on NV12
 * frames on the CPU and split, the person detector (when ../shared has
 * it), the gray classifier from a 4-byte frame letterboxed (gray op,
 * padding, staging widened) and the segmenter from a cropped one. */
#include "infer-test-util.h"
#include "../alloc-count.h"

static void
check_no_alloc (const char *xml, const char *device, const M2iImage *frame,
    const M2iInferPreprocess *pp)
{
  M2iInferSession *s = open_session (xml, device, NULL, NULL);
  GError *err = NULL;
  g_assert_true (m2i_infer_session_set_preprocess (s, pp, &err));
  g_assert_true (m2i_infer_session_prepare (s, frame, NULL, NULL, &err));
  g_assert_true (m2i_infer_session_run (s, frame, NULL, NULL, &err));   /* warm-up */
  g_assert_no_error (err);
  alloc_count_start_checked ();
  for (int i = 0; i < 5; i++)
    m2i_infer_session_run (s, frame, NULL, NULL, NULL);
  gint n = alloc_count_stop ();
  g_assert_cmpint (n, ==, 0);
  m2i_infer_session_free (s);
}

static void
test_noalloc (void)
{
  if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("a sanitizer owns malloc");
    return;
  }
  GBytes *images = test_read_data ("fashion-mnist/first64.images.u8");
  gchar *xml = test_models_path ("fashion-mnist/fashion-mnist.xml");
  TestImage in;
  fm_nv12 (&in, images, 0);
  M2iInferPreprocess pp;
  fm_preprocess (&pp);
  check_no_alloc (xml, "CPU", &in.img, &pp);
  check_no_alloc (xml, "HETERO:M2I,CPU", &in.img, &pp);
  test_image_free (&in);
  g_free (xml);
  g_bytes_unref (images);
  /* the pixel-chain paths */
  TestImage x4;
  test_image_alloc (&x4, M2I_FORMAT_IL_BGRX8888, 200, 120);
  GRand *r = g_rand_new_with_seed (11);
  test_image_randomize (&x4, r);
  g_rand_free (r);
  xml = test_models_path ("fashion-mnist-gray/fashion-mnist-gray.xml");
  m2i_infer_preprocess_init (&pp);
  pp.resize_type = M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX;
  pp.pad_value = 114;
  check_no_alloc (xml, "CPU", &x4.img, &pp);
  g_free (xml);
  xml = test_models_path ("tiny-seg/tiny-seg.xml");
  m2i_infer_preprocess_init (&pp);
  pp.resize_type = M2I_RESIZE_TYPE_CROP;
  pp.profile = M2I_PROFILE_EXTENDED;
  check_no_alloc (xml, "CPU", &x4.img, &pp);
  g_free (xml);
  test_image_free (&x4);
  xml = person_model ();
  if (xml) {
    TestImage photo;
    read_photo (&photo);
    m2i_infer_preprocess_init (&pp);
    pp.channel_order = M2I_ORDER_BGR;
    check_no_alloc (xml, "CPU", &photo.img, &pp);
    test_image_free (&photo);
    g_free (xml);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/noalloc", test_noalloc);
  return g_test_run ();
}
