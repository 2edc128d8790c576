/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-conv.h — runs the IR runtime's fp32 Convolution / GroupConvolution
 * kernel through the op API (infer() once, execute() per run), as the
 * runtime does; the fp16 engine test and bench-npu compare against it. */
#pragma once

#include <ir/kernels/kernels-private.h>

typedef struct {
  const M2iOpKernel *kernel;
  M2iIrNode *node;
  M2iOpContext ctx;
  M2iTensor in[2], out[1];
  const float *weights;
  float *output;               /* N × O × OH × OW, owned */
  gpointer scratch;            /* owned */
} TuIrConv;

static inline void
tu_ir_conv_free (TuIrConv *t)
{
  if (!t)
    return;
  if (t->kernel->free_state && t->ctx.state)
    t->kernel->free_state (t->ctx.state);
  g_free (t->output);
  g_aligned_free (t->scratch);
  m2i_ir_node_free (t->node);
  g_free (t);
}

/* @weights: OIYX (G == 1) or the same memory as GOIYX; borrowed. */
static inline TuIrConv *
tu_ir_conv_new (gint N, gint C, gint H, gint W, gint O, gint G, gint KH,
    gint KW, gint SH, gint SW, gint DH, gint DW, gint PT, gint PL, gint PB,
    gint PR, const float *weights, gint n_threads, GError **error)
{
  TuIrConv *t = g_new0 (TuIrConv, 1);
  t->kernel = G > 1 ? &ir_kernel_group_convolution : &ir_kernel_convolution;
  t->node = m2i_ir_node_new (1, "conv", t->kernel->type, "opset1");
  gchar buf[64];
  g_snprintf (buf, sizeof buf, "%d,%d", SH, SW);
  m2i_ir_node_set_attr (t->node, "strides", buf);
  g_snprintf (buf, sizeof buf, "%d,%d", DH, DW);
  m2i_ir_node_set_attr (t->node, "dilations", buf);
  g_snprintf (buf, sizeof buf, "%d,%d", PT, PL);
  m2i_ir_node_set_attr (t->node, "pads_begin", buf);
  g_snprintf (buf, sizeof buf, "%d,%d", PB, PR);
  m2i_ir_node_set_attr (t->node, "pads_end", buf);
  m2i_ir_node_set_attr (t->node, "auto_pad", "explicit");
  t->weights = weights;
  t->in[0].type = M2I_ET_F32;
  t->in[0].shape = (M2iShape) { 4, { N, C, H, W } };
  t->in[1].type = M2I_ET_F32;
  if (G > 1)
    t->in[1].shape = (M2iShape) { 5, { G, O / G, C / G, KH, KW } };
  else
    t->in[1].shape = (M2iShape) { 4, { O, C, KH, KW } };
  t->in[1].data = (gpointer) weights;          /* constant: visible to infer() */
  t->ctx.node = t->node;
  t->ctx.inputs = t->in;
  t->ctx.outputs = t->out;
  t->ctx.n_inputs = 2;
  t->ctx.n_outputs = 1;
  t->ctx.n_threads = n_threads;
  if (!t->kernel->infer (&t->ctx, error)) {
    tu_ir_conv_free (t);
    return NULL;
  }
  t->output = g_malloc (MAX (m2i_tensor_nbytes (&t->out[0]), 1));
  t->out[0].data = t->output;
  if (t->ctx.scratch_bytes)
    t->scratch = g_aligned_alloc (1, t->ctx.scratch_bytes, 64);
  t->ctx.scratch = t->scratch;
  return t;
}

/* Computes the convolution of @input (NCHW fp32) into t->output. */
static inline gboolean
tu_ir_conv_run (TuIrConv *t, const float *input, GError **error)
{
  t->in[0].data = (gpointer) input;
  t->in[1].data = (gpointer) t->weights;
  return t->kernel->execute (&t->ctx, error);
}
