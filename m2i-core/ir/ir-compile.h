/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-compile.h — the compiled model's layout, shared by ir-compile.c and
 * ir-infer.c (private to m2i-core/ir). */
#pragma once

#include "ir-private.h"
#include <base/base-arena.h>

G_BEGIN_DECLS

/* One output of one layer. */
typedef struct {
  M2iTensor t;                   /* type, shape; data when is_const */
  gboolean is_const;             /* Const, or folded at compile time */
  gpointer owned;                /* folded data (g_aligned_free) */
  gint group;                    /* buffer group of a runtime value, else -1 */
  gsize offset;                  /* byte offset of the value in its group */
  gint dyn;                      /* slot of a run-time-shaped value, else -1 */
} CmValue;

/* A layer run at every inference. ctx is the template each request copies. */
typedef struct {
  gint node;
  const M2iOpKernel *kernel;
  M2iOpContext ctx;              /* inputs/outputs: type and shape; state */
  gint *in_values;               /* value index of each input */
  gint *out_values;              /* value index of each output */
  /* Run-time shapes: a step with a run-time-shaped input is inferred
   * again per request when its inputs change (reinfer); one whose
   * infer() could not run at compile time (deferred) first infers at the
   * first inference. A step with dynamic outputs (ctx.dynamic_outputs)
   * but static inputs keeps its compiled state. */
  gboolean reinfer;
  gboolean deferred;
} CmStep;

/* Values sharing one buffer (a value and its views), alive from the step
 * that writes it to the last step that reads it (-1: before the first step;
 * n_steps: after the last, for inputs and outputs). */
typedef BaseArenaBlock CmGroup;   /* offset: in the request's arena */
/* Placed by base_arena_place(); merged groups are { 0, 0, -2, -2 }. */

struct _M2iIrCompiledModel {
  gint ref_count;
  M2iIrModel *model;
  M2iOpRegistry *registry_owned; /* per-compile registry holding plugins */
  gint n_threads;
  gint n_values;
  CmValue *values;
  gint *value_base;              /* node index → its first value */
  GArray *steps;                 /* CmStep, in execution order */
  gint n_groups;
  CmGroup *groups;
  gsize arena_bytes, scratch_bytes;
  gint *input_values;            /* value of each Parameter */
  gint *output_values;           /* value read by each Result */
  /* Values whose shape is known only at run time: each has a buffer of its
   * own in every request (not in the arena), grown when needed. */
  gint n_dyn;
  gint *dyn_values;              /* value index of each slot */
  gsize max_dynamic_bytes;
};

/* The runtime's side of m2i_op_context_set_output_shape(): ctx->runtime
 * points at one while a kernel with dynamic outputs executes. */
typedef struct _CmDynHost CmDynHost;
struct _CmDynHost {
  /* Memory for @bytes of output @p; *data receives it. */
  gboolean (*grow) (CmDynHost *h, M2iOpContext *ctx, gint p, gsize bytes, gpointer *data,
      GError **error);
  M2iShape bounds[32];           /* the shapes infer() gave the dynamic outputs */
  guint32 set;                   /* outputs whose shape execute() set */
};

/* Compares the types and shapes infer() gave with what the XML declares
 * (a dynamic dim, ?, takes any size). A type that differs on an output
 * port no layer reads is only a warning (as OpenVINO reads such files);
 * elsewhere a difference is an error. @read_mask: bit p set when output
 * p is read (all bits for outputs past 31). */
gboolean ir_check_outputs (const M2iIrNode *n, const M2iOpContext *ctx,
    guint64 read_mask, GError **error);

/* TRUE when input @v of a re-inferred step is shown to infer() with its
 * data: a constant, or a small integer tensor (a shape, axes, k) whose
 * value is compared between inferences. */
gboolean ir_value_visible_to_infer (const CmValue *v);

#define CM_SMALL_INT_BYTES 64

/* The one step reading value @v after step @from, or -1 when @v has another
 * reader (a second step, a second input of the same step, a Result). */
gint ir_compile_only_reader (const M2iIrCompiledModel *cm, gint v, gint from);

/* Keeps the steps @keep marks (indexed by node), frees the others. */
void ir_compile_keep_steps (M2iIrCompiledModel *cm, const gboolean *keep);

/* The low-precision pass (ir-lowp.c): Convolution layers of INT8 models
 * onto integer kernels, the FakeQuantize layers only they read dropped.
 * Runs on the steps after epilogue fusion, before the memory plan. */
void ir_lowp_fold (M2iIrCompiledModel *cm);

/* FALSE when @options or M2I_INT8=0 in the environment ask for the float
 * emulation. */
gboolean ir_lowp_enabled (const M2iIrCompileOptions *options);

/* Runs step @i of @req alone (the layer's kernel on the request's current
 * buffers): for benchmarks that time a layer with its data hot in cache.
 * FALSE with @error when the kernel fails or @i is out of range. */
gboolean ir_infer_request_run_step (M2iIrInferRequest *req, gint i, GError **error);

G_END_DECLS
