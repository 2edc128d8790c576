/* test-infer-noalloc.c — a prepared session runs (pre-processing plan,
 * model, decoder) without allocating: the Fashion-MNIST classifier on NV12
 * frames on the CPU and split, and the person detector (when ../shared
 * has it). */
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
