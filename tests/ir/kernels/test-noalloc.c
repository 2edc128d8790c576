/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* execute() allocates nothing: every compute kernel (each convolution path,
 * MatMul, pooling, element-wise, reductions, Interpolate, colour, FakeQuantize,
 * detection) runs three more times after a first run (which may grow the
 * worker pool) while malloc and friends are counted, on one and two threads.
 * Skipped under sanitizers, which own malloc. */
#include "kernel-test.h"
#include <base/m2i-parallel.h>
#include <ir/kernels/conv-winograd.h>

#include "../../alloc-count.h"

static float fbuf[1 << 19];      /* covers the largest tensor below */

/* Runs @t (inputs set, attributes set; inferred here unless it is
 * already) and counts allocations in 3 runs. */
static void
check (KTest *t, gint n_outputs, const char *what)
{
  for (gint threads = 1; threads <= 2; threads++) {
    t->ctx.n_threads = threads;
    GError *error = NULL;
    if (threads == 1 && !t->inferred && !kt_infer (t, n_outputs, &error))
      g_error ("%s: %s", what, error->message);
    g_assert_true (kt_execute (t, &error));
    alloc_count_start ();
    for (gint i = 0; i < 3; i++)
      kt_execute (t, NULL);
    gint n_allocs = alloc_count_stop ();
    if (n_allocs)
      g_error ("%s (%d threads): %d allocations in 3 runs", what, threads, n_allocs);
  }
  kt_free (t);
}

static KTest *
conv (const M2iOpKernel *k, M2iShape x, M2iShape w, const char *stride, const char *pad)
{
  KTest *t = kt_new (k, "opset1");
  kt_attr (t, "strides", stride);
  kt_attr (t, "pads_begin", pad);
  kt_attr (t, "pads_end", pad);
  kt_attr (t, "dilations", "1,1");
  kt_input (t, M2I_ET_F32, x, fbuf, FALSE);
  kt_input (t, M2I_ET_F32, w, fbuf, TRUE);
  return t;
}

static KTest *
unary (const M2iOpKernel *k, const char *version, M2iShape x)
{
  KTest *t = kt_new (k, version);
  kt_input (t, M2I_ET_F32, x, fbuf, FALSE);
  return t;
}

static void
test_kernels (void)
{
if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("malloc belongs to the sanitizer");
    return;
  }
  kt_fill (fbuf, G_N_ELEMENTS (fbuf), 5, 0.01f, 1);
  const M2iOpKernel *cv = &ir_kernel_convolution;
  check (conv (cv, SHAPE (1, 64, 56, 56), SHAPE (64, 64, 3, 3), "1,1", "1,1"), 1,
      "conv 3x3 (Winograd)");
  check (conv (cv, SHAPE (1, 64, 14, 14), SHAPE (256, 64, 3, 3), "1,1", "1,1"), 1,
      "conv 3x3 (Winograd, a tail tile)");
  ir_winograd_set_enabled (FALSE);
  check (conv (cv, SHAPE (1, 64, 56, 56), SHAPE (64, 64, 3, 3), "1,1", "1,1"), 1,
      "conv 3x3 (direct)");
  ir_winograd_set_enabled (TRUE);
  check (conv (cv, SHAPE (1, 64, 28, 28), SHAPE (128, 64, 1, 1), "1,1", "0,0"), 1, "conv 1x1");
  check (conv (cv, SHAPE (1, 64, 11, 90), SHAPE (64, 64, 3, 1), "1,1", "1,0"), 1,
      "conv 3x1 (F(4, 3) down the columns)");
  check (conv (cv, SHAPE (1, 64, 11, 90), SHAPE (64, 64, 1, 3), "1,1", "0,1"), 1,
      "conv 1x3 (F(4, 3) along the rows)");
  check (conv (cv, SHAPE (1, 3, 57, 57), SHAPE (64, 3, 3, 3), "2,2", "0,0"), 1, "conv s2");
  check (conv (&ir_kernel_group_convolution, SHAPE (1, 32, 40, 40), SHAPE (32, 1, 1, 3, 3),
      "2,2", "1,1"), 1, "depthwise");
  check (conv (&ir_kernel_group_convolution, SHAPE (1, 32, 40, 40), SHAPE (32, 1, 1, 5, 5),
      "1,1", "2,2"), 1, "depthwise 5x5");
  check (conv (&ir_kernel_group_convolution, SHAPE (1, 16, 20, 30), SHAPE (4, 4, 4, 3, 3),
      "1,1", "1,1"), 1, "groups of 4 channels (direct)");
  KTest *t = conv (cv, SHAPE (1, 16, 20, 20), SHAPE (24, 16, 3, 3), "1,1", "1,1");
  t->input_const[1] = FALSE;
  check (t, 1, "conv, weights at run time");

  static const gint64 axes23[] = { 2, 3 }, sizes[] = { 37, 41 }, grid[] = { 10, 17 };
  static const gint64 img[] = { 160, 272 };
  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_attr (t, "transpose_b", "true");
  kt_input (t, M2I_ET_F32, SHAPE (1, 3136), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (128, 3136), fbuf, TRUE);
  check (t, 1, "fully connected");
  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 64, 100), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (100, 90), fbuf, FALSE);
  check (t, 1, "batched matmul");

  static const char *const pools[] = { "opset1", "opset8" };
  for (gint v = 0; v < 2; v++) {
    t = unary (&ir_kernel_max_pool, pools[v], SHAPE (1, 64, 57, 57));
    kt_attr (t, "kernel", "3,3");
    kt_attr (t, "strides", "2,2");
    kt_attr (t, "pads_begin", "0,0");
    kt_attr (t, "pads_end", "0,0");
    kt_attr (t, "rounding_type", "ceil");
    check (t, v + 1, "max pool");
  }
  t = unary (&ir_kernel_avg_pool, "opset1", SHAPE (1, 16, 20, 20));
  kt_attr (t, "kernel", "3,3");
  kt_attr (t, "strides", "2,2");
  kt_attr (t, "pads_begin", "1,1");
  kt_attr (t, "pads_end", "1,1");
  check (t, 1, "avg pool");

  const M2iOpKernel *bins[] = { &ir_kernel_add, &ir_kernel_divide };
  for (guint i = 0; i < G_N_ELEMENTS (bins); i++) {
    t = unary (bins[i], "opset1", SHAPE (1, 64, 56, 56));
    kt_input (t, M2I_ET_F32, SHAPE (1, 64, 1, 1), fbuf, TRUE);
    check (t, 1, bins[i]->type);
  }
  const M2iOpKernel *acts[] = { &ir_kernel_relu, &ir_kernel_sigmoid, &ir_kernel_exp,
    &ir_kernel_clamp };
  for (guint i = 0; i < G_N_ELEMENTS (acts); i++) {
    t = unary (acts[i], "opset1", SHAPE (1, 64, 56, 56));
    kt_attr (t, "min", "0");
    kt_attr (t, "max", "6");
    check (t, 1, acts[i]->type);
  }
  t = unary (&ir_kernel_prelu, "opset1", SHAPE (1, 64, 56, 56));
  kt_input (t, M2I_ET_F32, SHAPE (64), fbuf, TRUE);
  check (t, 1, "prelu");

  t = unary (&ir_kernel_reduce_mean, "opset1", SHAPE (1, 1000, 14, 14));
  kt_input (t, M2I_ET_I64, SHAPE (2), axes23, TRUE);
  check (t, 1, "reduce mean");
  t = unary (&ir_kernel_softmax, "opset8", SHAPE (1, 1000, 4, 4));
  check (t, 1, "softmax");
  t = unary (&ir_kernel_batch_norm, "opset5", SHAPE (1, 8, 30, 30));
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (8), fbuf, TRUE);
  kt_attr (t, "epsilon", "0.001");
  check (t, 1, "batch norm");

  static const char *const modes[] = { "linear", "cubic", "nearest", "bilinear_pillow" };
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++) {
    t = unary (&ir_kernel_interpolate, "opset11", SHAPE (1, 3, 50, 60));
    kt_attr (t, "mode", modes[i]);
    kt_attr (t, "shape_calculation_mode", "sizes");
    kt_attr (t, "antialias", "true");
    kt_input (t, M2I_ET_I64, SHAPE (2), sizes, TRUE);
    kt_input (t, M2I_ET_I64, SHAPE (2), axes23, TRUE);
    check (t, 1, modes[i]);
  }
  static guint8 yuv[96 * 64 * 3 / 2];
  t = kt_new (&ir_kernel_i420_to_bgr, "opset8");
  kt_input (t, M2I_ET_U8, SHAPE (1, 96, 64, 1), yuv, FALSE);
  check (t, 1, "i420");

  t = unary (&ir_kernel_fake_quantize, "opset1", SHAPE (1, 8, 20, 20));
  for (gint i = 0; i < 4; i++)
    kt_input (t, M2I_ET_F32, SHAPE (1, 8, 1, 1), fbuf + i * 8, TRUE);
  kt_attr (t, "levels", "256");
  check (t, 1, "fake quantize");

  t = kt_new (&ir_kernel_prior_box_clustered, "opset1");
  kt_attr (t, "width", "10,20,30");
  kt_attr (t, "height", "15,25,35");
  kt_attr (t, "offset", "0.5");
  kt_attr (t, "step", "16");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, FALSE);
  check (t, 1, "prior box clustered");

  /* person-detection-retail-0013's head: 8160 priors, 2 classes. */
  t = kt_new (&ir_kernel_detection_output, "opset1");
  kt_attr (t, "num_classes", "2");
  kt_attr (t, "keep_top_k", "200");
  kt_attr (t, "top_k", "400");
  kt_attr (t, "nms_threshold", "0.45");
  kt_attr (t, "confidence_threshold", "0.01");
  kt_attr (t, "code_type", "caffe.PriorBoxParameter.CENTER_SIZE");
  kt_attr (t, "normalized", "1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 8160 * 4), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 8160 * 2), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 8160 * 4), fbuf, TRUE);
  check (t, 1, "detection output");
}

/* Issue 15's kernels: data movement, transposed convolution, selection,
 * detection, recurrent. */
static void
test_issue15_kernels (void)
{
  if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("malloc belongs to the sanitizer");
    return;
  }
  kt_fill (fbuf, G_N_ELEMENTS (fbuf), 6, 0.01f, 1);
  static gint64 idx[4096];
  for (gint i = 0; i < 4096; i++)
    idx[i] = (i * 7) % 10 - 5;
  static const gint64 axis1[] = { 1 }, axis0[] = { 0 }, k[] = { 100 }, grid[] = { 19, 19 },
      img[] = { 300, 300 }, max_out[] = { 50 }, len[] = { 20 };
  static const float iou[] = { 0.5f }, thr[] = { 0.3f }, im_info[] = { 240, 320, 1 };
  static const gint32 bidx[64] = { 0 };

  KTest *t = kt_new (m2i_op_registry_lookup (m2i_op_registry_get_default (), "Gather",
          "opset8"), "opset8");
  kt_input (t, M2I_ET_F32, SHAPE (4, 10, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (300), idx, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, axis1, TRUE);
  check (t, 1, "gather");
  t = kt_new (&ir_kernel_gather_nd, "opset8");
  kt_attr (t, "batch_dims", "1");
  static gint64 nd_idx[64];
  kt_input (t, M2I_ET_F32, SHAPE (4, 10, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (4, 8, 1), nd_idx, FALSE);
  check (t, 1, "gathernd");
  t = kt_new (&ir_kernel_scatter_elements_update, "opset12");
  kt_attr (t, "reduction", "mean");
  kt_attr (t, "use_init_val", "false");
  kt_input (t, M2I_ET_F32, SHAPE (10, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (20, 64), idx, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (20, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, axis0, TRUE);
  check (t, 1, "scatter elements (mean)");
  t = unary (&ir_kernel_depth_to_space, "opset1", SHAPE (1, 64, 32, 32));
  kt_attr (t, "block_size", "2");
  kt_attr (t, "mode", "depth_first");
  check (t, 1, "depth to space");
  t = kt_new (&ir_kernel_convolution_backprop_data, "opset1");
  kt_attr (t, "strides", "2,2");
  kt_attr (t, "pads_begin", "1,1");
  kt_attr (t, "pads_end", "1,1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 32, 20, 20), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (32, 16, 4, 4), fbuf, TRUE);
  check (t, 1, "convolution backprop data");
  t = unary (&ir_kernel_topk, "opset11", SHAPE (1, 8400));
  kt_input (t, M2I_ET_I64, SCALAR, k, TRUE);
  kt_attr (t, "axis", "1");
  kt_attr (t, "mode", "max");
  kt_attr (t, "sort", "value");
  check (t, 2, "topk");
  t = kt_new (&ir_kernel_non_max_suppression, "opset9");
  kt_input (t, M2I_ET_F32, SHAPE (1, 2000, 4), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 10, 2000), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SCALAR, max_out, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, iou, TRUE);
  kt_input (t, M2I_ET_F32, SCALAR, thr, TRUE);
  check (t, 3, "non max suppression");
  t = kt_new (&ir_kernel_prior_box, "opset8");
  kt_attr (t, "min_size", "60");
  kt_attr (t, "max_size", "111");
  kt_attr (t, "aspect_ratio", "2,3");
  kt_attr (t, "flip", "1");
  kt_attr (t, "step", "16");
  kt_attr (t, "offset", "0.5");
  kt_input (t, M2I_ET_I64, SHAPE (2), grid, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), img, FALSE);
  check (t, 1, "prior box");
  t = unary (&ir_kernel_region_yolo, "opset1", SHAPE (1, 255, 13, 13));
  kt_attr (t, "classes", "80");
  kt_attr (t, "coords", "4");
  kt_attr (t, "num", "9");
  kt_attr (t, "mask", "0,1,2");
  kt_attr (t, "do_softmax", "0");
  check (t, 1, "region yolo");
  t = kt_new (&ir_kernel_proposal, "opset4");
  kt_attr (t, "base_size", "16");
  kt_attr (t, "pre_nms_topn", "600");
  kt_attr (t, "post_nms_topn", "100");
  kt_attr (t, "nms_thresh", "0.7");
  kt_attr (t, "feat_stride", "16");
  kt_attr (t, "min_size", "16");
  kt_attr (t, "ratio", "0.5,1,2");
  kt_attr (t, "scale", "8,16,32");
  kt_input (t, M2I_ET_F32, SHAPE (1, 18, 15, 20), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 36, 15, 20), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (3), im_info, FALSE);
  check (t, 2, "proposal");
  t = kt_new (&ir_kernel_roi_align, "opset9");
  kt_attr (t, "pooled_h", "7");
  kt_attr (t, "pooled_w", "7");
  kt_attr (t, "sampling_ratio", "2");
  kt_attr (t, "spatial_scale", "0.0625");
  kt_attr (t, "mode", "avg");
  kt_input (t, M2I_ET_F32, SHAPE (1, 16, 20, 20), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (64, 4), fbuf, FALSE);
  kt_input (t, M2I_ET_I32, SHAPE (64), bidx, FALSE);
  check (t, 1, "roi align");
  t = kt_new (&ir_kernel_lstm_sequence, "opset5");
  kt_attr (t, "hidden_size", "64");
  kt_attr (t, "direction", "bidirectional");
  kt_input (t, M2I_ET_F32, SHAPE (1, 20, 32), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), len, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 256, 32), fbuf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 256, 64), fbuf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 256), fbuf, TRUE);
  check (t, 3, "lstm sequence");
  t = kt_new (&ir_kernel_gru_sequence, "opset5");
  kt_attr (t, "hidden_size", "64");
  kt_attr (t, "direction", "forward");
  kt_input (t, M2I_ET_F32, SHAPE (1, 20, 32), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 1, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (1), len, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 192, 32), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 192, 64), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 192), fbuf, FALSE);
  check (t, 2, "gru sequence, weights at run time");
}

/* The kernels of issue 15 (unary.c, eltwise.c, compare.c, reduce.c,
 * normalize.c, softmax.c, split.c, tile.c, pad.c, slice.c, range.c) and
 * a convolution with a fused Swish. */
static void
test_kernels_ops (void)
{
  if (ALLOC_COUNT_SANITIZED) {
    g_test_skip ("malloc belongs to the sanitizer");
    return;
  }
  kt_fill (fbuf, G_N_ELEMENTS (fbuf), 6, -2, 2);
  static const guint8 mask[64 * 8];
  static const gint64 axes1[] = { 1 }, axes02[] = { 0, 2 }, axes23[] = { 2, 3 };
  static const gint64 lengths[] = { 16, -1 }, reps[] = { 1, 2, 1, 3 }, target[] = { 2, 64, 8, 8 };
  static const gint64 pads_b[] = { 0, 1, 2, 0 }, pads_e[] = { 0, 0, 1, 2 };
  static const gint64 start[] = { 1, 0 }, stop[] = { 50, 8 }, step[] = { 2, -1 };
  static const float beta = 0.9f;
  static const gint64 r0 = 0, r1 = 3000, r2 = 1;

  const struct { const M2iOpKernel *k; const char *version; } unaries[] = {
    { &ir_kernel_swish, "opset4" }, { &ir_kernel_hswish, "opset4" },
    { &ir_kernel_mish, "opset4" }, { &ir_kernel_gelu, "opset7" },
    { &ir_kernel_softplus, "opset4" }, { &ir_kernel_round, "opset5" },
    { &ir_kernel_log_softmax, "opset5" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (unaries); i++)
    check (unary (unaries[i].k, unaries[i].version, SHAPE (1, 64, 40, 40)), 1,
        unaries[i].k->type);
  KTest *t = unary (&ir_kernel_elu, "opset1", SHAPE (1, 64, 40, 40));
  kt_attr (t, "alpha", "1");
  check (t, 1, "elu");
  t = unary (&ir_kernel_swish, "opset4", SHAPE (1, 64, 40, 40));
  kt_input (t, M2I_ET_F32, SCALAR, &beta, FALSE);
  check (t, 1, "swish, beta at run time");

  const M2iOpKernel *bins[] = { &ir_kernel_maximum, &ir_kernel_floor_mod, &ir_kernel_power,
    &ir_kernel_greater, &ir_kernel_not_equal };
  for (guint i = 0; i < G_N_ELEMENTS (bins); i++) {
    t = unary (bins[i], "opset1", SHAPE (1, 64, 40, 40));
    kt_input (t, M2I_ET_F32, SHAPE (64, 1, 40), fbuf, FALSE);
    check (t, 1, bins[i]->type);
  }
  t = kt_new (&ir_kernel_select, "opset1");
  kt_input (t, M2I_ET_BOOLEAN, SHAPE (64, 1, 8), mask, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 64, 40, 8), fbuf, FALSE);
  kt_input (t, M2I_ET_F32, SCALAR, fbuf, FALSE);
  check (t, 1, "select");

  const M2iOpKernel *reds[] = { &ir_kernel_reduce_sum, &ir_kernel_reduce_max,
    &ir_kernel_reduce_l2 };
  for (guint i = 0; i < G_N_ELEMENTS (reds); i++) {
    for (gint strided = 0; strided < 2; strided++) {
      t = unary (reds[i], "opset4", SHAPE (4, 64, 40, 40));
      kt_input (t, M2I_ET_I64, SHAPE (2), strided ? axes02 : axes23, TRUE);
      check (t, 1, reds[i]->type);
    }
  }
  for (gint strided = 0; strided < 2; strided++) {
    t = unary (&ir_kernel_mvn, "opset6", SHAPE (2, 64, 40, 40));
    kt_attr (t, "eps", "1e-5");
    kt_attr (t, "eps_mode", "inside_sqrt");
    kt_input (t, M2I_ET_I64, SHAPE (2), strided ? axes02 : axes23, TRUE);
    check (t, 1, "mvn");
  }
  t = unary (&ir_kernel_normalize_l2, "opset1", SHAPE (1, 64, 40, 40));
  kt_attr (t, "eps", "1e-10");
  kt_attr (t, "eps_mode", "add");
  kt_input (t, M2I_ET_I64, SHAPE (1), axes1, TRUE);
  check (t, 1, "normalize l2");
  t = unary (&ir_kernel_lrn, "opset1", SHAPE (1, 64, 20, 20));
  kt_attr (t, "alpha", "1e-4");
  kt_attr (t, "beta", "0.75");
  kt_attr (t, "bias", "1");
  kt_attr (t, "size", "5");
  kt_input (t, M2I_ET_I64, SHAPE (1), axes1, TRUE);
  check (t, 1, "lrn");

  t = unary (&ir_kernel_variadic_split, "opset1", SHAPE (1, 64, 40, 40));
  kt_input (t, M2I_ET_I64, SCALAR, &axes1[0], TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), lengths, TRUE);
  check (t, 2, "variadic split");
  t = unary (&ir_kernel_tile, "opset1", SHAPE (1, 64, 40, 40));
  kt_input (t, M2I_ET_I64, SHAPE (4), reps, TRUE);
  check (t, 1, "tile");
  t = unary (&ir_kernel_broadcast, "opset3", SHAPE (64, 1, 8));
  kt_input (t, M2I_ET_I64, SHAPE (4), target, TRUE);
  check (t, 1, "broadcast");
  t = unary (&ir_kernel_pad, "opset12", SHAPE (1, 64, 40, 40));
  kt_attr (t, "pad_mode", "reflect");
  kt_input (t, M2I_ET_I64, SHAPE (4), pads_b, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (4), pads_e, TRUE);
  check (t, 1, "pad");
  t = unary (&ir_kernel_slice, "opset8", SHAPE (1, 64, 40, 40));
  kt_input (t, M2I_ET_I64, SHAPE (2), start, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), stop, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), step, TRUE);
  kt_input (t, M2I_ET_I64, SHAPE (2), axes23, TRUE);
  check (t, 1, "slice");
  t = kt_new (&ir_kernel_range, "opset4");
  kt_attr (t, "output_type", "f32");
  kt_input (t, M2I_ET_I64, SCALAR, &r0, TRUE);
  kt_input (t, M2I_ET_I64, SCALAR, &r1, TRUE);
  kt_input (t, M2I_ET_I64, SCALAR, &r2, TRUE);
  check (t, 1, "range");

  /* Convolutions with a fused Swish: Winograd, 1x1, strided, depthwise. */
  static const struct { M2iShape x, w; const char *stride, *pad; gboolean group; } convs[] = {
    { { 4, { 1, 32, 40, 40 } }, { 4, { 32, 32, 3, 3 } }, "1,1", "1,1", FALSE },
    { { 4, { 1, 32, 40, 40 } }, { 4, { 64, 32, 1, 1 } }, "1,1", "0,0", FALSE },
    { { 4, { 1, 16, 40, 40 } }, { 4, { 32, 16, 3, 3 } }, "2,2", "1,1", FALSE },
    { { 4, { 1, 32, 40, 40 } }, { 5, { 32, 1, 1, 3, 3 } }, "1,1", "1,1", TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (convs); i++) {
    t = conv (convs[i].group ? &ir_kernel_group_convolution : &ir_kernel_convolution,
        convs[i].x, convs[i].w, convs[i].stride, convs[i].pad);
    GError *error = NULL;
    g_assert_true (kt_infer (t, 1, &error));
    g_assert_true (ir_k_fuse_bias_relu (&t->ctx, fbuf, convs[i].w.dims[0], FALSE, &error));
    g_assert_true (ir_k_fuse_swish (&t->ctx, 1.0f, &error));
    check (t, 1, "conv + swish");
  }
}

static void
spin (gint begin, gint end, gint slice, gpointer data)
{
  for (volatile gint i = 0; i < 20000; i++)
    ;
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The worker pool's first uses allocate (threads, a thread-local key the
   * first time a caller runs a queued slice itself): get them over with
   * before anything is counted. */
  for (gint i = 0; i < 200; i++)
    m2i_parallel_for (8, 8, 1, spin, NULL);
  g_test_add_func ("/kernels/no-allocation", test_kernels);
  g_test_add_func ("/kernels/no-allocation/issue15", test_issue15_kernels);
  g_test_add_func ("/kernels/no-allocation/ops", test_kernels_ops);
  return g_test_run ();
}
