/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-ir-op.h — the op API: how a kernel (built in, or loaded from a custom-op
 * plugin) sees a layer of the model and runs it.
 *
 * A kernel is a static M2iOpKernel registered under a type ("Convolution")
 * and the opsets it implements. For each layer of a compiled model the
 * runtime makes one M2iOpContext, calls infer() once (compile time), then
 * execute() on every inference. See docs/ir-runtime.md for a worked plugin.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/ir/m2i-ir-types.h>

G_BEGIN_DECLS

/* ---- Layers ----------------------------------------------------------- */

typedef struct _M2iIrNode M2iIrNode;

/* Makes a free-standing layer (tests, tools, plugins building graphs). Free
 * with m2i_ir_node_free(); layers owned by a model are freed with it. */
M2I_API M2iIrNode *m2i_ir_node_new (gint64 id, const char *name, const char *type,
    const char *version);
M2I_API void m2i_ir_node_free (M2iIrNode *n);

/* Sets (or replaces) the <data> attribute @key; both strings are copied. */
M2I_API void m2i_ir_node_set_attr (M2iIrNode *n, const char *key, const char *value);

M2I_API gint64 m2i_ir_node_get_id (const M2iIrNode *n);
M2I_API const char *m2i_ir_node_get_name (const M2iIrNode *n);
M2I_API const char *m2i_ir_node_get_type (const M2iIrNode *n);
/* The layer's `version` attribute ("opset1", "opset8", or a custom name). */
M2I_API const char *m2i_ir_node_get_version (const M2iIrNode *n);

/* Raw attribute text, NULL when absent. Owned by the node. */
M2I_API const char *m2i_ir_node_get_attr (const M2iIrNode *n, const char *key);

/*
 * Typed attribute getters. An absent attribute yields @def (or, for the list
 * getters, *n_out = -1 and no error) and returns TRUE; a present but malformed
 * one returns FALSE with a GError naming the layer, the attribute and the
 * text. Lists are comma separated, spaces allowed, "" is an empty list.
 */
M2I_API gboolean m2i_ir_node_attr_int (const M2iIrNode *n, const char *key, gint64 def,
    gint64 *out, GError **error);
M2I_API gboolean m2i_ir_node_attr_float (const M2iIrNode *n, const char *key, double def,
    double *out, GError **error);
M2I_API gboolean m2i_ir_node_attr_bool (const M2iIrNode *n, const char *key, gboolean def,
    gboolean *out, GError **error);
M2I_API gboolean m2i_ir_node_attr_ints (const M2iIrNode *n, const char *key,
    gint64 *out, gint max, gint *n_out, GError **error);
M2I_API gboolean m2i_ir_node_attr_floats (const M2iIrNode *n, const char *key,
    float *out, gint max, gint *n_out, GError **error);
/* One of @allowed (NULL-terminated); *out is its index. Absent → @def's
 * index (@def must be in @allowed). Unknown text → FALSE with a GError
 * listing the allowed values. */
M2I_API gboolean m2i_ir_node_attr_enum (const M2iIrNode *n, const char *key,
    const char *def, const char *const *allowed, gint *out, GError **error);

/* Sets @error (domain M2I_ERROR, @code) with the message prefixed by the
 * layer: "layer 12 'conv1' (Convolution, opset1): <message>". */
M2I_API void m2i_ir_node_set_error (GError **error, gint code, const M2iIrNode *n,
    const char *format, ...) G_GNUC_PRINTF (4, 5);

/* ---- Kernels ---------------------------------------------------------- */

typedef struct {
  const M2iIrNode *node;
  gint n_inputs;
  gint n_outputs;
  /* Type and shape are always set. data: at execute(); at infer() only for
   * inputs that are constants (NULL otherwise), so shape-computing ops and
   * weight packing can read them. */
  M2iTensor *inputs;
  /* infer() sets type and shape; execute() writes data (preallocated).
   * An output other than the first that no layer reads and no Result
   * returns has data == NULL at execute(): the kernel skips computing it. */
  M2iTensor *outputs;
  gpointer state;          /* the kernel's own, made by infer() */
  gsize scratch_bytes;     /* infer() sets: temporary bytes execute() needs */
  gpointer scratch;        /* at execute(): scratch_bytes, 64-byte aligned */
  gint n_threads;          /* slices execute() may use with m2i_parallel_for */
  /* Run-time shapes (docs/ir-runtime.md, "Shapes known at run time").
   * infer() sets bit p when output p's size depends on the input *data*
   * (NonZero, NonMaxSuppression, TopK with a computed k): outputs[p].shape
   * is then an upper bound (same rank, each dim at least the actual one),
   * and execute() must call m2i_op_context_set_output_shape() for output p
   * before writing it. Outputs 0..31 can be dynamic. */
  guint32 dynamic_outputs;
  gpointer runtime;        /* reserved for the runtime: kernels leave it alone */
} M2iOpContext;

typedef struct {
  const char *type;        /* "Convolution" */
  /* Space-separated opsets the kernel implements ("opset1 opset8"); NULL or
   * "" matches any version. */
  const char *opsets;
  /* Compile time, once per layer: check attributes, the number, types and
   * shapes of inputs; set outputs' types and shapes; optionally create
   * ctx->state and ask for scratch. FALSE + GError (m2i_ir_node_set_error)
   * on anything invalid. Required. */
  gboolean (*infer) (M2iOpContext *ctx, GError **error);
  /* Run time: compute outputs from inputs. Must not allocate. NULL only for
   * the layers the runtime handles itself (Parameter, Const, Result).
   * Infer requests of one compiled model run at the same time on different
   * threads, each with its own context (tensors, scratch) but the same
   * ctx->state: execute() must only read the state. An output never
   * overlaps an input, except that a view op (the runtime's own Reshape,
   * Squeeze, Unsqueeze) may get an output aliasing its input, and the
   * built-in element-wise kernels (Add, Subtract, Multiply, Divide, ReLU,
   * PReLU, Clamp, Sigmoid, Exp, the other binary arithmetic, the unary
   * math, LogicalNot, Select: listed in ir-compile.c) may get an output
   * that is the very buffer of an input of the same shape and type (they
   * must compute element i from input element i only). Also called once at
   * compile time when every input is constant (constant folding).
   * Layers reading a value whose shape is known only at run time (a
   * dynamic output, or one computed from it) are inferred again before
   * execute() whenever an input's shape, or the value of a small integer
   * input (a shape, axes, k: at most 64 bytes), differs from the last
   * time; their state is then per infer request, and infer() sees data
   * for constant inputs and for those small integer inputs. */
  gboolean (*execute) (M2iOpContext *ctx, GError **error);
  /* Frees ctx->state; may be NULL. */
  void (*free_state) (gpointer state);
} M2iOpKernel;

/*
 * For an output infer() marked in ctx->dynamic_outputs: sets its actual
 * shape at execute() (same rank, each dim at most the bound infer() gave)
 * and makes ctx->outputs[p].data point at memory for it (the runtime grows
 * the buffer when a larger shape than ever before comes, so in steady
 * state nothing is allocated). Write the output only after this call.
 * FALSE with @error when @p is not a dynamic output, the shape exceeds
 * the bound, or the memory cannot be had (the limit is
 * M2iIrCompileOptions.max_dynamic_bytes).
 */
M2I_API gboolean m2i_op_context_set_output_shape (M2iOpContext *ctx, gint p,
    const M2iShape *shape, GError **error);

/* ---- Registry --------------------------------------------------------- */

typedef struct _M2iOpRegistry M2iOpRegistry;

/* The process-wide registry with every built-in kernel. Not freed. */
M2I_API M2iOpRegistry *m2i_op_registry_get_default (void);

/* A new, empty registry whose lookups fall back to @fallback (may be NULL;
 * it must outlive the new registry). Kernels added here take precedence over
 * @fallback's. Free with m2i_op_registry_free(). */
M2I_API M2iOpRegistry *m2i_op_registry_new (M2iOpRegistry *fallback);
/* Frees a registry made by m2i_op_registry_new() (the default one is never
 * freed: passing it does nothing). Kernels are not touched. */
M2I_API void m2i_op_registry_free (M2iOpRegistry *r);

/* The opsets @type has kernels for in @r and its fallbacks, space separated
 * and sorted ("opset1 opset8"), or NULL when there is none. Free with
 * g_free(). Used in "unknown op" messages. */
M2I_API gchar *m2i_op_registry_list_opsets (M2iOpRegistry *r, const char *type);

/* Adds @kernel (which must stay valid for the life of the process: use a
 * static const). A kernel for the same type and an overlapping opset
 * replaces the earlier one (plugins may override built-ins). Thread-safe. */
M2I_API void m2i_op_registry_add (M2iOpRegistry *r, const M2iOpKernel *kernel);

/* The kernel for @type in @version, or NULL. @version "opsetN" denotes, as
 * in OpenVINO, the newest version of the op introduced at or before opset N
 * ("MaxPool" in "opset11" is MaxPool-8, found under "opset8"); kernels list
 * the opsets that introduced the versions they implement. Other version
 * strings (custom ops) match exactly; a kernel with no opsets matches any. */
M2I_API const M2iOpKernel *m2i_op_registry_lookup (M2iOpRegistry *r, const char *type,
    const char *version);

/*
 * Loads a custom-op plugin: a shared library exporting
 *   gboolean m2i_op_plugin_register (M2iOpRegistry *r, GError **error);
 * which calls m2i_op_registry_add() for its kernels. FALSE with a GError when
 * the file cannot be opened, lacks the symbol, or its register call fails.
 * The library stays loaded for the life of the process.
 */
M2I_API gboolean m2i_op_registry_load_plugin (M2iOpRegistry *r, const char *path,
    GError **error);

#define M2I_OP_PLUGIN_REGISTER_SYMBOL "m2i_op_plugin_register"

G_END_DECLS
