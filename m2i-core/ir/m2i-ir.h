/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-ir.h — the OpenVINO IR runtime: load a model (.xml + .bin), compile
 * it for the CPU, and run inferences.
 *
 *   M2iIrModel          what the files say: layers, ports, edges, constants.
 *                       Read-only once loaded; walk it with the accessors
 *                       below (the split-execution planner does).
 *   M2iIrCompiledModel  shapes inferred, kernels bound, constants folded and
 *                       memory planned. Immutable, shareable across threads.
 *   M2iIrInferRequest   one per thread: owns every buffer an inference needs,
 *                       allocated when the request is created; infer()
 *                       allocates nothing.
 *
 * Float16 models run in f32, as OpenVINO's CPU plugin does: f16 constants are
 * widened at load, f16 inputs are accepted (converted on input) and f16
 * outputs are delivered as f32. See docs/ir-runtime.md.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/ir/m2i-ir-types.h>
#include <m2i-core/ir/m2i-ir-op.h>

G_BEGIN_DECLS

typedef struct _M2iIrModel M2iIrModel;
typedef struct _M2iIrCompiledModel M2iIrCompiledModel;
typedef struct _M2iIrInferRequest M2iIrInferRequest;

/* ---- Loading ------------------------------------------------------------ */

/*
 * Reads an IR v10 or v11 model. @bin_path may be NULL: the .xml's name with
 * ".bin" is used, and a missing .bin is an error only when a Const needs it.
 * The weights are memory-mapped, every Const is checked against the file's
 * size; f16 Consts are widened to f32 (see m2i_ir_node_get_const()).
 * The graph is checked: unique layer and port ids, every edge between
 * existing ports, every input connected once, at least one Result, no cycle.
 * Elements nesting deeper than 4096 levels are refused (M2I_ERROR_LIMIT);
 * the model-level rt_info is kept as read, in memory linear in its text.
 * Returns a new model (free with m2i_ir_model_unref()), or NULL with @error
 * set (domain M2I_ERROR) naming the file, the line and the reason.
 */
M2I_API M2iIrModel *m2i_ir_model_load (const char *xml_path, const char *bin_path,
    GError **error);

/*
 * As m2i_ir_model_load(), from memory: @xml (@xml_len bytes, need not be
 * NUL-terminated) and @weights (may be NULL when no Const is present; a
 * reference is taken). @origin names the model in messages.
 */
M2I_API M2iIrModel *m2i_ir_model_load_from_memory (const char *xml, gsize xml_len,
    GBytes *weights, const char *origin, GError **error);

M2I_API M2iIrModel *m2i_ir_model_ref (M2iIrModel *model);
M2I_API void m2i_ir_model_unref (M2iIrModel *model);

/* The <net name>; owned by the model. */
M2I_API const char *m2i_ir_model_get_name (const M2iIrModel *model);
/* 10 or 11. */
M2I_API gint m2i_ir_model_get_ir_version (const M2iIrModel *model);
/* Model-level rt_info (v11 <rt_info>, nested elements as "a/b" paths, and
 * v10 <meta_data> under "meta_data/..."); NULL when absent. Owned by the model. */
M2I_API const char *m2i_ir_model_get_rt_info (const M2iIrModel *model, const char *key);

/* ---- Inputs and outputs ---------------------------------------------- */

typedef struct {
  const char *name;            /* Parameter name / producer tensor name */
  M2iElementType type;         /* as declared by the model (f16 stays f16) */
  M2iShape shape;
  const M2iIrNode *node;       /* the Parameter or Result layer */
} M2iIrIoInfo;

M2I_API gint m2i_ir_model_get_n_inputs (const M2iIrModel *model);
M2I_API gint m2i_ir_model_get_n_outputs (const M2iIrModel *model);
/* @i in range, else NULL. Owned by the model. Output names follow OpenVINO:
 * the first tensor name of the producing port (v11), else the producing
 * layer's name, with ".N" appended for an output port ordinal N > 0. */
M2I_API const M2iIrIoInfo *m2i_ir_model_get_input (const M2iIrModel *model, gint i);
M2I_API const M2iIrIoInfo *m2i_ir_model_get_output (const M2iIrModel *model, gint i);
/* Index of the input/output called @name (also any of its v11 tensor
 * names), or -1. */
M2I_API gint m2i_ir_model_find_input (const M2iIrModel *model, const char *name);
M2I_API gint m2i_ir_model_find_output (const M2iIrModel *model, const char *name);

/*
 * Gives input @name (a Parameter's name or any of its tensor names) the
 * static shape @shape, for models whose inputs have dynamic dimensions
 * (-1 or "?" in the XML), as OpenVINO's Model::reshape does: @shape must
 * have the declared rank and agree with every static declared dim. Call it
 * before m2i_ir_compile() (the compiled model keeps the shapes it was
 * compiled with; do not call it while another thread compiles @model).
 * m2i_ir_model_get_input() then reports @shape. FALSE with @error when
 * there is no such input or the shape does not fit.
 */
M2I_API gboolean m2i_ir_model_reshape (M2iIrModel *model, const char *name,
    const M2iShape *shape, GError **error);

/* ---- Walking the graph -------------------------------------------------- */

/* Layers in XML order; @i in range, else NULL. Owned by the model. */
M2I_API gint m2i_ir_model_get_n_nodes (const M2iIrModel *model);
M2I_API M2iIrNode *m2i_ir_model_get_node (const M2iIrModel *model, gint i);
/* The layer with XML id @id, or NULL. */
M2I_API M2iIrNode *m2i_ir_model_find_node (const M2iIrModel *model, gint64 id);
/* Node indices (as for m2i_ir_model_get_node()) in a topological order:
 * every layer after the layers it reads. @n_out receives the count. */
M2I_API const gint *m2i_ir_model_get_topological_order (const M2iIrModel *model,
    gint *n_out);

/* The position of @n in its model's node list (-1 for free-standing nodes). */
M2I_API gint m2i_ir_node_get_index (const M2iIrNode *n);
M2I_API gint m2i_ir_node_get_n_inputs (const M2iIrNode *n);
M2I_API gint m2i_ir_node_get_n_outputs (const M2iIrNode *n);
/* Declared dims and precision of input/output ordinal @i (the XML's; the
 * compiled model's inferred values are identical, see
 * m2i_ir_compiled_model_get_value()). Precision is M2I_ET_UNDEFINED when the
 * port has none (input ports usually). NULL/UNDEFINED when out of range. */
M2I_API const M2iShape *m2i_ir_node_get_input_shape (const M2iIrNode *n, gint i);
M2I_API const M2iShape *m2i_ir_node_get_output_shape (const M2iIrNode *n, gint i);
M2I_API M2iElementType m2i_ir_node_get_input_type (const M2iIrNode *n, gint i);
M2I_API M2iElementType m2i_ir_node_get_output_type (const M2iIrNode *n, gint i);
/* v11 tensor names of output @i ("a,b"), or NULL. */
M2I_API const char *m2i_ir_node_get_output_names (const M2iIrNode *n, gint i);
/* The producer of input @i: its layer and output ordinal. FALSE when @i is
 * out of range or the input is unconnected (free-standing nodes). */
M2I_API gboolean m2i_ir_node_get_input_source (const M2iIrNode *n, gint i,
    M2iIrNode **src, gint *src_port);
/* Layer rt_info value ("<attribute name=.. value=..>"), or NULL. */
M2I_API const char *m2i_ir_node_get_rt_info (const M2iIrNode *n, const char *name);
/* A Const's value: f32 for f16 constants (widened at load), the stored type
 * otherwise. NULL for other layers. Owned by the model. */
M2I_API const M2iTensor *m2i_ir_node_get_const (const M2iIrNode *n);

/* Edges in XML order, as ordinals: from (node index, output ordinal) to
 * (node index, input ordinal). FALSE when @i is out of range. */
M2I_API gint m2i_ir_model_get_n_edges (const M2iIrModel *model);
M2I_API gboolean m2i_ir_model_get_edge (const M2iIrModel *model, gint i,
    gint *from_node, gint *from_port, gint *to_node, gint *to_port);

/* ---- Writing ------------------------------------------------------------- */

/*
 * Appends @model as IR v11 text to @xml and its constants to @bin (Consts are
 * written as the original file stored them: f16 stays f16). Layer ids, port
 * ids, names, attributes and rt_info (the model's as it was read, v10's
 * <meta_data> excepted) are kept, so the result loads back to
 * the same graph. FALSE with @error if a constant cannot be written.
 */
M2I_API gboolean m2i_ir_model_serialize (const M2iIrModel *model, GString *xml,
    GByteArray *bin, GError **error);

/* As m2i_ir_model_serialize(), into the files @xml_path and @bin_path.
 * FALSE with @error (M2I_ERROR_IO) when they cannot be written. */
M2I_API gboolean m2i_ir_model_save (const M2iIrModel *model, const char *xml_path,
    const char *bin_path, GError **error);

/*
 * A new model made of the layers @nodes (indices as for
 * m2i_ir_model_get_node()) and the Consts they read. Every value read from a
 * layer outside the set becomes a Parameter (one per producing port, named by
 * its first tensor name, else "layer" or "layer.N", with the producer's dims
 * and precision); selected Parameters and Results stay. Which values leave
 * through a new Result (named "<tensor>/sink_port_N"):
 *  - @outputs NULL: every output of a selected layer that a layer outside
 *    the set reads, except Consts' — a Const read on both sides is copied
 *    into each sub-model that reads it, never passed between them;
 *  - else exactly the @n_outputs pairs (node index, output ordinal) of
 *    @outputs, each an output of a layer in @nodes (split execution lists
 *    the tensors crossing its pieces; values both sides compute, such as a
 *    constant sub-graph copied into each piece, then leave no Result).
 * Layer ids are kept; the layers' rt_info is kept, the model-level rt_info
 * is not (it describes the whole model, not a part of it). @name names the
 * new model (NULL: the model's). This
 * is how split execution cuts a model into sub-models; save them with
 * m2i_ir_model_save(). Returns a new model (m2i_ir_model_unref()), or NULL
 * with @error (an index out of range, an @outputs pair that is no output of
 * a selected layer, or a sub-graph that is no valid model, e.g. without any
 * Result).
 */
M2I_API M2iIrModel *m2i_ir_model_extract (const M2iIrModel *model, const gint *nodes,
    gint n_nodes, const gint *outputs, gint n_outputs, const char *name,
    GError **error);

/* ---- Compiling ----------------------------------------------------------- */

/* Zero-initialise it ({ 0 } or designated initialisers): fields may be
 * added at the end, and zero is every field's default. */
typedef struct {
  /* Threads each inference may use (slices of m2i_parallel_for); 0 = one
   * per core. */
  gint n_threads;
  /* NULL-terminated list of custom-op plugins (shared libraries, see
   * m2i_op_registry_load_plugin()) whose kernels take precedence for this
   * compile only; NULL for none. */
  const char *const *plugin_paths;
  /* Where kernels are looked up; NULL = m2i_op_registry_get_default(). */
  M2iOpRegistry *registry;
  /* Constants larger than this are not precomputed (0 = 64 MiB). */
  gsize max_folded_bytes;
  /* The most bytes one tensor whose shape is known only at run time may
   * take (0 = 1 GiB); an inference that needs more fails with a message. */
  gsize max_dynamic_bytes;
  /* The memory one compiled model and one infer request may need (0 =
   * M2I_IR_DEFAULT_MAX_MEMORY): the constants folded at compile time, plus
   * the buffers and scratch of a request. A model whose declared tensors
   * would need more is refused (M2I_ERROR_LIMIT, naming the layer or the
   * sizes) before anything that large is allocated. */
  guint64 max_memory;
  /* INT8 models (FakeQuantize around Convolution, docs/int8.md) run their
   * convolutions on integer kernels unless this is TRUE: then every layer
   * runs as written, FakeQuantize as its formula (the float emulation).
   * M2I_INT8=0 in the environment does the same for every compile. */
  gboolean float_emulation;
} M2iIrCompileOptions;

/* The default of M2iIrCompileOptions.max_memory: 4 GiB. */
#define M2I_IR_DEFAULT_MAX_MEMORY ((guint64) 4 << 30)

/*
 * Binds every layer to a kernel (an unknown type/opset is an error naming
 * the op, its opset and the layer, pointing to custom-op plugins), infers
 * every shape and checks it against the dims the XML declares, evaluates
 * constant sub-graphs (ShapeOf → StridedSlice → Concat → Reshape chains
 * included), and plans the memory of one inference, within
 * @options->max_memory. @options may be NULL.
 * Takes a reference on @model. Returns a new compiled model (free with
 * m2i_ir_compiled_model_unref()), or NULL with @error set.
 */
M2I_API M2iIrCompiledModel *m2i_ir_compile (M2iIrModel *model,
    const M2iIrCompileOptions *options, GError **error);

M2I_API M2iIrCompiledModel *m2i_ir_compiled_model_ref (M2iIrCompiledModel *cm);
M2I_API void m2i_ir_compiled_model_unref (M2iIrCompiledModel *cm);

/* The model compiled (borrowed). */
M2I_API M2iIrModel *m2i_ir_compiled_model_get_model (const M2iIrCompiledModel *cm);

/* The inferred type and shape of output ordinal @port of node index @node,
 * as the compiled model computes it (f16 appears as f32); data is set when
 * the value is a constant (Const or folded at compile time), NULL
 * otherwise. NULL when out of range. Owned by the compiled model. */
M2I_API const M2iTensor *m2i_ir_compiled_model_get_value (const M2iIrCompiledModel *cm,
    gint node, gint port);

/* Statistics: layers run per inference (not folded, not Parameter/Const/
 * Result, reachable from a Result), and the bytes one infer request owns
 * (activations arena + scratch). */
M2I_API gint m2i_ir_compiled_model_get_n_runtime_nodes (const M2iIrCompiledModel *cm);
M2I_API gsize m2i_ir_compiled_model_get_request_bytes (const M2iIrCompiledModel *cm);

/* ---- Inferring ----------------------------------------------------------- */

/*
 * Creates a request with every buffer of an inference (inputs zeroed).
 * Requests of one compiled model may run at the same time on different
 * threads; one request is used by one thread at a time. Returns NULL with
 * @error set when the memory cannot be allocated. Free with
 * m2i_ir_infer_request_free().
 */
M2I_API M2iIrInferRequest *m2i_ir_infer_request_new (M2iIrCompiledModel *cm,
    GError **error);
M2I_API void m2i_ir_infer_request_free (M2iIrInferRequest *req);

/*
 * The request's own input tensor @i (NULL when out of range): write the
 * input straight into ->data (zero-copy). Its type is the type the model
 * computes in (f32 for an f16 input). Owned by the request; stays valid and
 * keeps its contents until the request is freed.
 */
M2I_API M2iTensor *m2i_ir_infer_request_get_input (M2iIrInferRequest *req, gint i);

/*
 * Copies @t into input @i. @t's shape must equal the input's; its type must
 * be the input's declared or computed type (an f16 input takes f16 or f32
 * data). FALSE with @error otherwise. @t is not retained.
 */
M2I_API gboolean m2i_ir_infer_request_set_input (M2iIrInferRequest *req, gint i,
    const M2iTensor *t, GError **error);

/* Runs the model on the current inputs. FALSE with @error when a kernel
 * fails. Allocates nothing. */
M2I_API gboolean m2i_ir_infer_request_infer (M2iIrInferRequest *req, GError **error);

/* Per-layer timing (like benchmark_app -pc): when on, each layer run by
 * infer() adds its wall time and the calling thread's CPU time to counters
 * (the clocks cost well under a microsecond a layer; off by default). */
M2I_API void m2i_ir_infer_request_set_profiling (M2iIrInferRequest *req, gboolean on);

typedef struct {
  const M2iIrNode *node;       /* the layer */
  guint64 total_ns;            /* wall time, summed over the inferences profiled */
  guint64 count;               /* inferences profiled */
  /* CPU time of the thread that called infer() (with several threads, its
   * share only — it runs slices too). On a machine busier than its cores
   * the wall time includes what other processes held the core for; this
   * does not. */
  guint64 cpu_ns;
  /* With M2I_IR_SPLIT=layers at several threads (to see which layers pay
   * for splitting), the layer runs alone on the calling thread in every
   * other inference, alternating with its neighbours, and split in the
   * rest: those runs alone are counted here (wall time, inferences), the
   * split ones in total_ns and count. 0 otherwise. */
  guint64 alone_ns;
  guint64 alone_count;
} M2iIrLayerProfile;

/* The layers run per inference, in execution order, with their times since
 * profiling was switched on. *n_out receives the count. Owned by the
 * request. */
M2I_API const M2iIrLayerProfile *m2i_ir_infer_request_get_profile (M2iIrInferRequest *req,
    gint *n_out);

/* Output @i of the last inference (NULL when out of range): type (f32 for
 * f16 outputs), shape and data, owned by the request, valid until the next
 * infer() or free. An output computed from a value whose size depends on
 * the data (NonZero, NonMaxSuppression, ...) has the shape of the last
 * inference; its declared dims are -1 (m2i_ir_model_get_output()). */
M2I_API const M2iTensor *m2i_ir_infer_request_get_output (M2iIrInferRequest *req,
    gint i);

G_END_DECLS
