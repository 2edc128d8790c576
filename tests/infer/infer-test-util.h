/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-test-util.h — what the inference-session tests share: the
 * Fashion-MNIST frames as the demo draws them, the person photo, and the
 * model input computed independently (the engine's reference path, op by
 * op, into the IR runtime run directly). */
#pragma once

#include "../ir/ir-test-util.h"
#include "../m2i/m2i-test-util.h"
#include "infer-reference.h"

#include <base/m2i-fp16.h>
#include <infer/m2i-infer.h>
#include <stdio.h>

#define FM_SIDE 28
#define FM_SCALE 4
#define FM_W (FM_SIDE * FM_SCALE)

/* Fashion-MNIST image @i of @images (784 bytes each) as NV12 FM_W x FM_W:
 * drawn FM_SCALE times larger, Y = round(16 + p*219/255), U = V = 128. */
static inline void
fm_nv12 (TestImage *t, GBytes *images, guint i)
{
  const guint8 *img = (const guint8 *) g_bytes_get_data (images, NULL) + i * FM_SIDE * FM_SIDE;
  test_image_alloc_padded (t, M2I_FORMAT_SP_NV12_8, FM_W, FM_W, 0, 128);
  for (gint y = 0; y < FM_W; y++)
    for (gint x = 0; x < FM_W; x++) {
      guint p = img[(y / FM_SCALE) * FM_SIDE + x / FM_SCALE];
      t->img.data[0][(gsize) y * t->img.stride[0] + x] = (guint8) ((16 * 255 + p * 219 + 127) / 255);
    }
}

/* The Fashion-MNIST normalisation: (p/255 - 0.286) / 0.353 on every channel. */
static inline void
fm_preprocess (M2iInferPreprocess *pp)
{
  m2i_infer_preprocess_init (pp);
  for (int c = 0; c < 3; c++) {
    pp->mean[c] = 0.286f;
    pp->std[c] = 0.353f;
  }
  pp->input_scale = 1.0f / 255.0f;
}

/* The model input for @in through @ops by the reference path (planar fp16),
 * widened into @dst (3 x w x h f32), planes reversed when @swap. */
static inline void
reference_input (const M2iImage *in, const M2iOpList *ops, gint w, gint h, gboolean swap,
    float *dst)
{
  TestImage ref;
  GError *err = NULL;
  test_image_alloc_padded (&ref, M2I_FORMAT_PL_FP16_RGB, w, h, 0, 0);
  if (ops->ops[0].kind == M2I_OP_CSC && ops->ops[0].u.csc.order == M2I_ORDER_BGR)
    ref.img.format = M2I_FORMAT_PL_FP16_BGR;
  g_assert_true (m2i_reference_run (in, ops, &ref.img, &err));
  gsize plane = (gsize) w * h;
  for (int c = 0; c < 3; c++)
    m2i_f16_to_f32_n ((const m2i_f16 *) ref.img.data[swap ? 2 - c : c], dst + c * plane, plane);
  test_image_free (&ref);
}

/* The 272x160 photo with a person (tests/data/ir) as IL_RGB888. */
static inline void
read_photo (TestImage *t)
{
  GBytes *b = test_read_data ("ir/astronaut-272x160.ppm");
  gsize len;
  const char *d = g_bytes_get_data (b, &len);
  gint w = 0, h = 0, max = 0, used = 0;
  g_assert_cmpint (sscanf (d, "P6 %d %d %d%n", &w, &h, &max, &used), ==, 3);
  test_image_alloc_padded (t, M2I_FORMAT_IL_RGB888, w, h, 0, 0);
  g_assert_cmpuint ((gsize) used + 1 + t->size, <=, len);
  memcpy (t->mem, d + used + 1, t->size);
  g_bytes_unref (b);
}

/* The person detector under $M2I_SHARED_MODELS, or NULL (the test is then
 * skipped) when it is absent. */
static inline gchar *
person_model (void)
{
  gchar *p = test_shared_path ("person-detection-retail-0013/person-detection-retail-0013.xml");
  if (!p || !g_file_test (p, G_FILE_TEST_EXISTS)) {
    g_test_skip ("person-detection-retail-0013 not under M2I_SHARED_MODELS");
    g_free (p);
    return NULL;
  }
  return p;
}

/* A model and one session on it, or a failed test. */
static inline M2iInferSession *
open_session (const char *xml, const char *device, const char *labels, M2iDecoderOptions *dopts)
{
  M2iInferModelOptions mo;
  GError *err = NULL;
  m2i_infer_model_options_init (&mo);
  mo.device = device;
  mo.labels_path = labels;
  if (dopts)
    mo.decoder = *dopts;
  M2iInferModel *m = m2i_infer_model_load (xml, &mo, &err);
  g_assert_no_error (err);
  M2iInferSession *s = m2i_infer_session_new (m, &err);
  g_assert_no_error (err);
  m2i_infer_model_unref (m);       /* the session holds it */
  return s;
}
