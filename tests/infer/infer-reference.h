/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-reference.h — the independent references of the inference tests
 * (tests/infer without GStreamer, tests/gst for m2iinfer): the IR runtime
 * run directly on an input the test writes, and the op list of the
 * engine's reference path that makes that input from a frame. */
#pragma once

#include <m2i-core/ir/m2i-ir.h>
#include <m2i-core/m2i/m2i.h>

/* The IR runtime on the CPU, run directly. */
typedef struct {
  M2iIrModel *model;
  M2iIrCompiledModel *cm;
  M2iIrInferRequest *req;
} Direct;

static inline void
direct_open (Direct *d, const char *xml)
{
  GError *err = NULL;
  d->model = m2i_ir_model_load (xml, NULL, &err);
  g_assert_no_error (err);
  d->cm = m2i_ir_compile (d->model, NULL, &err);
  g_assert_no_error (err);
  d->req = m2i_ir_infer_request_new (d->cm, &err);
  g_assert_no_error (err);
}

static inline const M2iTensor *
direct_run (Direct *d)
{
  GError *err = NULL;
  g_assert_true (m2i_ir_infer_request_infer (d->req, &err));
  g_assert_no_error (err);
  return m2i_ir_infer_request_get_output (d->req, 0);
}

static inline void
direct_close (Direct *d)
{
  m2i_ir_infer_request_free (d->req);
  m2i_ir_compiled_model_unref (d->cm);
  m2i_ir_model_unref (d->model);
}

/* csc(order) -> convertU8F16 -> resize(w x h, linear_onnx) -> permute [-> norm] */
static inline void
reference_ops (M2iOpList *ops, M2iChannelOrder order, gboolean yuv, gint w, gint h,
    gboolean fashion_norm)
{
  M2iResizeParams rp;
  m2i_op_list_init (ops);
  if (yuv)
    g_assert_true (m2i_op_list_add_csc (ops, order));
  g_assert_true (m2i_op_list_add_convert (ops, M2I_DTYPE_F16));
  m2i_resize_params_init (&rp, w, h);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;      /* m2iresize's and m2iinfer's default */
  g_assert_true (m2i_op_list_add_resize (ops, &rp));
  g_assert_true (m2i_op_list_add_permute (ops));
  if (fashion_norm) {
    M2iNormParams np;
    const float mean[3] = { 0.286f, 0.286f, 0.286f }, std[3] = { 0.353f, 0.353f, 0.353f };
    g_assert_true (m2i_norm_params_from_mean_std (&np, mean, std, 1.0f / 255.0f));
    g_assert_true (m2i_op_list_add_norm (ops, &np));
  }
}
