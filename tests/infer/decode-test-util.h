/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-test-util.h — what the decoder tests share: models with chosen
 * outputs, decoders made through m2i_decoder_new() as a named type, and the
 * models and reference files of ../shared. */
#pragma once

#include <infer/decode-private.h>
#include <base/m2i-error.h>
#include "ir-test-util.h"

G_BEGIN_DECLS

/* One model output: a layer of @type (with the <data> attributes @attrs,
 * may be NULL) reading a Parameter of @in_shape ([1,3,8,8] when rank 0),
 * producing @et @shape named @name. */
typedef struct {
  const char *name;
  const char *type;
  const char *attrs;
  M2iElementType et;
  M2iShape shape;
  M2iShape in_shape;
} TestOutput;

/* An IR v11 model with those outputs (in order) and the model <rt_info>
 * body @rt_info (XML text, may be NULL). Fails the test when it does not
 * load. */
M2iIrModel *test_model_new (const TestOutput *outputs, guint n, const char *rt_info);

/* $M2I_SHARED_MODELS/@relative loaded, or NULL when it is not there (the
 * test is marked skipped: test_shared_model()); $M2I_MODELS_DIR/@relative
 * loaded. Both fail the test when the file is there but does not load. */
M2iIrModel *test_load_shared_model (const char *relative);
M2iIrModel *test_load_project_model (const char *relative);

/* m2i_decoder_options_init(). */
void test_options_init (M2iDecoderOptions *o);

/* A decoder of @klass's type made by m2i_decoder_new() (the type named),
 * with its result; the options decode() reads (change them between
 * decodes: test_decoder_decode() applies them). */
typedef struct {
  M2iDecoder *dec;
  M2iDecoderOptions opts;
  const InferResultCapacity *size; /* the decoder's capacities */
  const char *describe;            /* m2i_decoder_describe() */
  M2iInferResult *result;
} TestDecoder;

/* NULL with @error when the decoder refuses the model. */
TestDecoder *test_decoder_new (const InferDecoderClass *klass, M2iIrModel *model,
    const M2iDecoderOptions *opts, GError **error);
/* Applies d->opts and decodes into d->result (@g NULL: a 1:1 64x64
 * geometry). */
gboolean test_decoder_decode (TestDecoder *d, const M2iTensor *outputs, guint n,
    const M2iInferGeometry *g, GError **error);
void test_decoder_free (TestDecoder *d);

/* A geometry by hand: model pixel = pad + source pixel * scale. */
M2iInferGeometry test_geometry (gint src_w, gint src_h, gint model_w, gint model_h,
    double scale_x, double scale_y, double pad_x, double pad_y);

/* ../shared/models/external/@relative as @numel floats (free with g_free),
 * or NULL when ../shared is not here (the caller skips). Fails the test
 * when the file is there but not @numel floats long. */
float *test_shared_f32 (const char *relative, gsize numel);

/* IoU of two corner boxes. */
double test_iou (double ax1, double ay1, double ax2, double ay2, double bx1, double by1,
    double bx2, double by2);

G_END_DECLS
