/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real models of ../shared/models/external (skipped when absent):
 * squeezenet1.1 (IR v10, f16) against ONNX Runtime's reference outputs, and
 * person-detection-retail-0013 (v10, f32, SSD with DetectionOutput) on a
 * photo of a person. */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include <math.h>
#include <string.h>

/* $M2I_SHARED_MODELS/@relative loaded and compiled; NULL (the test
 * skipped) when it is not here. */
static M2iIrCompiledModel *
load_shared (const char *relative, M2iIrModel **model)
{
  g_autofree gchar *path = test_shared_model (relative);
  if (!path)
    return NULL;
  GError *error = NULL;
  *model = m2i_ir_model_load (path, NULL, &error);
  g_assert_no_error (error);
  M2iIrCompiledModel *cm = m2i_ir_compile (*model, NULL, &error);
  g_assert_no_error (error);
  return cm;
}

static void
test_squeezenet (void)
{
  M2iIrModel *m;
  M2iIrCompiledModel *cm = load_shared ("squeezenet1.1/squeezenet1.1.xml", &m);
  if (!cm)
    return;
  const M2iIrIoInfo *in = m2i_ir_model_get_input (m, 0);
  g_assert_cmpint (in->type, ==, M2I_ET_F16);
  g_assert_true (m2i_shape_equal (&in->shape, &TEST_SHAPE (1, 3, 227, 227)));
  g_assert_cmpstr (m2i_ir_model_get_output (m, 0)->name, ==, "prob");
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);
  /* the reference: ONNX Runtime, fp32, same weights (reference/README.md) */
  const char *images[] = { "chelsea", "coffee" };
  const gint expect_top1[] = { 285, 967 };
  for (guint k = 0; k < G_N_ELEMENTS (images); k++) {
    g_autofree gchar *in_name = g_strdup_printf ("reference/squeezenet1.1.%s.input.f32", images[k]);
    g_autofree gchar *out_name = g_strdup_printf ("reference/squeezenet1.1.%s.output.f32", images[k]);
    g_autofree gchar *in_path = test_shared_path (in_name);
    g_autofree gchar *out_path = test_shared_path (out_name);
    g_autoptr (GBytes) input = m2i_data_read (in_path, &error);
    g_assert_no_error (error);
    g_autoptr (GBytes) ref = m2i_data_read (out_path, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (g_bytes_get_size (ref), ==, 1000 * sizeof (float));
    /* f32 data into the f16 input: accepted, computed in f32 */
    M2iTensor t = { M2I_ET_F32, in->shape, (gpointer) g_bytes_get_data (input, NULL) };
    g_assert_true (m2i_ir_infer_request_set_input (req, 0, &t, &error));
    g_assert_true (m2i_ir_infer_request_infer (req, &error));
    const M2iTensor *o = m2i_ir_infer_request_get_output (req, 0);
    g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (1, 1000, 1, 1)));
    const float *p = o->data, *r = g_bytes_get_data (ref, NULL);
    gint ours[5], theirs[5];
    test_top_k (p, 1000, 5, ours);
    test_top_k (r, 1000, 5, theirs);
    double worst = 0, sum = 0;
    for (gint i = 0; i < 1000; i++) {
      worst = MAX (worst, fabs ((double) p[i] - r[i]));
      sum += p[i];
    }
    g_test_message ("%s: top-5 %d %d %d %d %d (reference %d %d %d %d %d), max |diff| %.3g",
        images[k], ours[0], ours[1], ours[2], ours[3], ours[4], theirs[0], theirs[1], theirs[2],
        theirs[3], theirs[4], worst);
    g_assert_cmpmem (ours, sizeof ours, theirs, sizeof theirs);
    g_assert_cmpint (ours[0], ==, expect_top1[k]);
    g_assert_cmpfloat (worst, <=, 1e-3);
    g_assert_cmpfloat (fabs (sum - 1), <=, 1e-4);
  }
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

typedef struct {
  gint n;
  float conf[200], box[200][4];
} Detections;

/* Checks DetectionOutput's rows: [image_id, label, conf, x0, y0, x1, y1]. */
static void
check_detections (const M2iTensor *o, Detections *d)
{
  g_assert_true (m2i_shape_equal (&o->shape, &TEST_SHAPE (1, 1, 200, 7)));
  const float *rows = o->data;
  d->n = 0;
  for (gint r = 0; r < 200; r++) {
    const float *row = rows + r * 7;
    if (row[0] == -1)
      break;
    g_assert_cmpfloat (row[0], ==, 0);                   /* batch of one */
    g_assert_cmpfloat (row[1], ==, 1);                   /* class 1: person */
    g_assert_cmpfloat (row[2], >=, 0.01f);               /* confidence_threshold */
    g_assert_cmpfloat (row[2], <=, 1);
    if (r)
      g_assert_cmpfloat (row[2], <=, rows[(r - 1) * 7 + 2]);   /* sorted */
    g_assert_cmpfloat (row[3], <=, row[5]);
    g_assert_cmpfloat (row[4], <=, row[6]);
    for (gint k = 3; k < 7; k++) {
      g_assert_cmpfloat (row[k], >=, -0.05f);            /* SSD boxes are not clipped; */
      g_assert_cmpfloat (row[k], <=, 1.05f);             /* they stay near the image */
    }
    d->conf[d->n] = row[2];
    memcpy (d->box[d->n], row + 3, 4 * sizeof (float));
    d->n++;
  }
}

static void
test_person_detection (void)
{
  M2iIrModel *m;
  M2iIrCompiledModel *cm = load_shared ("person-detection-retail-0013/person-detection-retail-0013.xml", &m);
  if (!cm)
    return;
  g_assert_true (m2i_shape_equal (&m2i_ir_model_get_input (m, 0)->shape, &TEST_SHAPE (1, 3, 320, 544)));
  g_assert_cmpstr (m2i_ir_model_get_output (m, 0)->name, ==, "detection_out");
  /* the ShapeOf → StridedSlice → PriorBoxClustered branch is folded */
  for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++) {
    M2iIrNode *n = m2i_ir_model_get_node (m, i);
    const char *type = m2i_ir_node_get_type (n);
    if (!strcmp (type, "ShapeOf") || !strcmp (type, "PriorBoxClustered"))
      g_assert_nonnull (m2i_ir_compiled_model_get_value (cm, i, 0)->data);
  }
  GError *error = NULL;
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
  g_assert_no_error (error);

  test_person_photo_bgr (m2i_ir_infer_request_get_input (req, 0)->data);
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  Detections d;
  check_detections (m2i_ir_infer_request_get_output (req, 0), &d);
  g_assert_cmpint (d.n, >, 0);
  g_test_message ("photo: %d detections, best %.3f at [%.3f %.3f %.3f %.3f]", d.n, d.conf[0],
      d.box[0][0], d.box[0][1], d.box[0][2], d.box[0][3]);
  /* the person's square is [0.316, 0.684] × [0.1875, 0.8125] (make-person-ppm.py):
   * the best box is sure, centred in it and overlaps it */
  const float sq[4] = { 86 / 272.0f, 30 / 160.0f, 186 / 272.0f, 130 / 160.0f };
  const float *bx = d.box[0];
  g_assert_cmpfloat (d.conf[0], >=, 0.9f);
  float cx = (bx[0] + bx[2]) / 2, cy = (bx[1] + bx[3]) / 2;
  g_assert_cmpfloat (cx, >=, sq[0]);
  g_assert_cmpfloat (cx, <=, sq[2]);
  g_assert_cmpfloat (cy, >=, sq[1]);
  g_assert_cmpfloat (cy, <=, sq[3]);
  float iw = MIN (bx[2], sq[2]) - MAX (bx[0], sq[0]), ih = MIN (bx[3], sq[3]) - MAX (bx[1], sq[1]);
  float inter = MAX (iw, 0) * MAX (ih, 0);
  float iou = inter / ((bx[2] - bx[0]) * (bx[3] - bx[1]) + (sq[2] - sq[0]) * (sq[3] - sq[1]) - inter);
  g_test_message ("IoU of the best box with the person's square: %.2f", iou);
  g_assert_cmpfloat (iou, >=, 0.5f);
  /* one person: no second sure detection */
  g_assert_true (d.n < 2 || d.conf[1] < 0.5f);

  /* a flat grey frame has no person */
  float *in = m2i_ir_infer_request_get_input (req, 0)->data;
  for (gint i = 0; i < 3 * 320 * 544; i++)
    in[i] = 128;
  g_assert_true (m2i_ir_infer_request_infer (req, &error));
  check_detections (m2i_ir_infer_request_get_output (req, 0), &d);
  g_assert_true (d.n == 0 || d.conf[0] < 0.5f);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/external/squeezenet1.1", test_squeezenet);
  g_test_add_func ("/ir/external/person-detection-retail-0013", test_person_detection);
  return g_test_run ();
}
