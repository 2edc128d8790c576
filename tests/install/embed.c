/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* embed.c — an application outside the tree that embeds libm2icore without
 * GStreamer: built by tests/install/run against the installed headers and
 * library (pkg-config m2i-core), it runs Fashion-MNIST NV12 frames through
 * the inference session and checks every class against torch's.
 *
 *   embed MODEL.xml LABELS.txt first64.images.u8 t10k.torch-pred.u8
 */
#include <m2i-core/m2i-core.h>
#include <stdio.h>
#include <string.h>

#define SIDE 28
#define SCALE 4
#define W (SIDE * SCALE)

int
main (int argc, char **argv)
{
  if (argc != 5) {
    fprintf (stderr, "usage: %s MODEL.xml LABELS.txt IMAGES.u8 PREDS.u8\n", argv[0]);
    return 2;
  }
  GError *err = NULL;
  gchar *images = NULL, *preds = NULL;
  gsize n_images = 0, n_preds = 0;
  if (!g_file_get_contents (argv[3], &images, &n_images, &err)
      || !g_file_get_contents (argv[4], &preds, &n_preds, &err)) {
    fprintf (stderr, "%s\n", err->message);
    return 1;
  }
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = "CPU";
  mo.labels_path = argv[2];
  M2iInferModel *model = m2i_infer_model_load (argv[1], &mo, &err);
  M2iInferSession *s = model ? m2i_infer_session_new (model, &err) : NULL;
  if (!s) {
    fprintf (stderr, "%s\n", err->message);
    return 1;
  }
  m2i_infer_model_unref (model);
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  for (int c = 0; c < 3; c++) {
    pp.mean[c] = 0.286f;
    pp.std[c] = 0.353f;
  }
  pp.input_scale = 1.0f / 255.0f;
  static guint8 frame[W * W * 3 / 2];
  M2iImage img;
  if (!m2i_infer_session_set_preprocess (s, &pp, &err)
      || !m2i_image_wrap (&img, M2I_FORMAT_SP_NV12_8, W, W, frame, sizeof frame, 0, &err)
      || !m2i_infer_session_prepare (s, &img, NULL, NULL, &err)) {
    fprintf (stderr, "%s\n", err->message);
    return 1;
  }
  guint n = (guint) MIN (n_images / (SIDE * SIDE), n_preds), agree = 0;
  memset (frame, 128, sizeof frame);
  for (guint i = 0; i < n; i++) {
    const guint8 *p = (const guint8 *) images + i * SIDE * SIDE;
    for (int y = 0; y < W; y++)
      for (int x = 0; x < W; x++)
        frame[y * W + x] = (guint8) ((16 * 255 + p[(y / SCALE) * SIDE + x / SCALE] * 219 + 127)
            / 255);
    if (!m2i_infer_session_run (s, &img, NULL, NULL, &err)) {
      fprintf (stderr, "%s\n", err->message);
      return 1;
    }
    const M2iInferHead *h = &m2i_infer_session_get_result (s)->heads[0];
    agree += h->classes[0].class_id == preds[i];
    if (i < 3)
      printf ("image %u: %s (%.3f)\n", i, h->labels[h->classes[0].class_id],
          h->classes[0].confidence);
  }
  printf ("%u of %u images classified as torch does; %s\n", agree, n,
      m2i_infer_session_describe (s, NULL));
  m2i_infer_session_free (s);
  g_free (images);
  g_free (preds);
  return n > 0 && agree == n ? 0 : 1;
}
