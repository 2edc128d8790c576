/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-split.h — split execution: a model cut into sub-models ("pieces") that
 * run partly on the device and partly on the CPU, in the manner of AutoSplit
 * and OpenVINO's HETERO plugin.
 *
 *   M2iSplitPlan    the partition of one model: pieces in a topological
 *                   order (each a sub-model for one engine), and the
 *                   tensors that cross between them. Made from a model
 *                   (m2i_split_plan_new) or read from a folder holding
 *                   AutoSplit's graph_infos.json and one IR pair per piece
 *                   (m2i_split_plan_load); written by m2i_split_plan_save.
 *                   Immutable, reference counted.
 *   M2iSplitRunner  runs a plan: CPU pieces on the IR runtime, device
 *                   pieces on the device's engines (the M2I block for a
 *                   lowered pre-processing head, the fp16/int8 compute
 *                   engine for the network), converting data type and
 *                   layout at each boundary. Owns every buffer; a run
 *                   allocates nothing. One thread at a time.
 *
 * How the partitioner decides, the cost model and the folder format:
 * docs/split.md.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/ir/m2i-ir.h>
#include <m2i-core/m2i/m2i-format.h>
#include <m2i-core/m2i/m2i-ops.h>
#include <m2i-core/m2i/m2i-plan.h>

G_BEGIN_DECLS

typedef enum {
  M2I_SPLIT_DEVICE_CPU = 0,
  M2I_SPLIT_DEVICE_M2I,        /* the simulated accelerator */
} M2iSplitDevice;

/* What runs a piece. */
typedef enum {
  M2I_SPLIT_ENGINE_CPU = 0,    /* the IR runtime (m2i-ir.h) */
  M2I_SPLIT_ENGINE_M2I,        /* the M2I media block: a pre-processing head as one task */
  M2I_SPLIT_ENGINE_NPU_FP16,   /* the compute engine, fp16 storage (float models) */
  M2I_SPLIT_ENGINE_NPU_INT8,   /* the compute engine, int8 (FakeQuantize-marked models) */
} M2iSplitEngine;

typedef enum {
  M2I_SPLIT_TENSOR_INPUT = 0,        /* a model input */
  M2I_SPLIT_TENSOR_OUTPUT,           /* a model output */
  M2I_SPLIT_TENSOR_INTERMEDIATE,     /* produced by one piece, read by others */
} M2iSplitTensorAttr;

/* "CPU" / "M2I"; "cpu", "m2i", "npu-fp16", "npu-int8"; "input", "output",
 * "intermediate". Static strings ("?" when out of range). */
M2I_API const char *m2i_split_device_to_string (M2iSplitDevice d);
M2I_API const char *m2i_split_engine_to_string (M2iSplitEngine e);
M2I_API const char *m2i_split_tensor_attr_to_string (M2iSplitTensorAttr a);

typedef struct {
  /* Device priority, as OpenVINO spells it: "HETERO:M2I,CPU" (the default
   * when NULL), "HETERO:CPU,M2I", "CPU", "M2I". Each op goes to the first
   * listed device that can run it; without CPU in the list an op the
   * device cannot run is an error. */
  const char *devices;
  /* Layer name → device name ("CPU" or "M2I"); overrides the layers'
   * rt_info "affinity" and the automatic choice. May be NULL. Borrowed. */
  GHashTable *affinity;
  /* Keep every device piece whatever its cost (the cost rule of
   * docs/split.md sends device islands that do not pay for their
   * transfers back to the CPU). */
  gboolean keep_all_device_pieces;
  /* M2I block profile the pre-processing head is planned for. */
  M2iProfile m2i_profile;
  /* The memory the model may need when it is analysed (0 =
   * M2I_IR_DEFAULT_MAX_MEMORY; see M2iIrCompileOptions.max_memory). */
  guint64 max_memory;
} M2iSplitOptions;

/* Defaults: devices NULL ("HETERO:M2I,CPU"), no affinity, the cost rule
 * on, the default M2I profile. */
M2I_API void m2i_split_options_init (M2iSplitOptions *opts);

typedef struct _M2iSplitPlan M2iSplitPlan;

/*
 * Partitions @model (a reference is taken) for the devices of @opts (NULL:
 * defaults): every op assigned to a piece, pieces in a topological order
 * with no cycle between them, one sub-model per piece (the model's
 * Consts and constant sub-graphs are copied into every piece that reads
 * them). Returns a new plan (m2i_split_plan_unref), or NULL with @error:
 * an unknown device name, an affinity naming an unknown layer or a device
 * that cannot run it, an op no listed device runs, or a model the IR
 * runtime cannot compile.
 */
M2I_API M2iSplitPlan *m2i_split_plan_new (M2iIrModel *model, const M2iSplitOptions *opts,
    GError **error);

/*
 * Reads a plan written by m2i_split_plan_save() or by hand: @dir/graph_infos.json
 * and the IR pair of each graph. Everything is checked — the JSON, every
 * field, devices and engines, every tensor listed once and produced once,
 * the graphs' order (no cycle), each sub-model's inputs and outputs against
 * the tensors' names, shapes and types, device pieces against what the
 * device can run — and the first problem is a GError (M2I_ERROR_MALFORMED,
 * M2I_ERROR_IO, M2I_ERROR_UNSUPPORTED, M2I_ERROR_LIMIT) naming the file, the
 * graph or tensor and the reason. The folder's files are opened without
 * following symbolic links (a link anywhere in a file's path is refused, so
 * a folder cannot make the loader read outside it), and graph_infos.json's
 * size and nesting are bounded before it is parsed (docs/reliability.md).
 * Returns a new plan.
 */
M2I_API M2iSplitPlan *m2i_split_plan_load (const char *dir, GError **error);

/*
 * Writes @plan into @dir (created if needed): graph_infos.json and
 * graph_N.xml/.bin per piece. FALSE with @error (M2I_ERROR_IO) when a file
 * cannot be written.
 */
M2I_API gboolean m2i_split_plan_save (const M2iSplitPlan *plan, const char *dir,
    GError **error);

M2I_API M2iSplitPlan *m2i_split_plan_ref (M2iSplitPlan *plan);
M2I_API void m2i_split_plan_unref (M2iSplitPlan *plan);

/* The model the plan was made from (borrowed), or NULL for a loaded plan. */
M2I_API M2iIrModel *m2i_split_plan_get_model (const M2iSplitPlan *plan);

typedef struct {
  M2iSplitDevice device;
  M2iSplitEngine engine;
  gint n_ops;                  /* layers run (Consts, Parameters, Results not counted) */
  M2iIrModel *model;           /* the piece's sub-model (borrowed) */
  gint n_inputs, n_outputs;
  const gint *inputs;          /* tensor indices read, and written */
  const gint *outputs;
  guint64 cost_ns;             /* estimated time of one run on its engine (docs/split.md) */
} M2iSplitPieceInfo;

typedef struct {
  const char *name;
  M2iElementType type;         /* as the model declares it */
  M2iShape shape;
  M2iSplitTensorAttr attr;
  gint producer;               /* piece index; -1 for a model input */
  gint n_consumers;
  const gint *consumers;       /* piece indices, ascending */
} M2iSplitTensorInfo;

M2I_API gint m2i_split_plan_get_n_pieces (const M2iSplitPlan *plan);
/* Fills @info for piece @i (everything borrowed from the plan). FALSE when
 * @i is out of range. */
M2I_API gboolean m2i_split_plan_get_piece (const M2iSplitPlan *plan, gint i,
    M2iSplitPieceInfo *info);

/* Tensors that cross a piece boundary, model inputs and model outputs. */
M2I_API gint m2i_split_plan_get_n_tensors (const M2iSplitPlan *plan);
M2I_API gboolean m2i_split_plan_get_tensor (const M2iSplitPlan *plan, gint i,
    M2iSplitTensorInfo *info);
/* Index of the tensor called @name, or -1. */
M2I_API gint m2i_split_plan_find_tensor (const M2iSplitPlan *plan, const char *name);

/* Model inputs and outputs, in the model's order, as tensor indices; -1
 * when @i is out of range. */
M2I_API gint m2i_split_plan_get_n_inputs (const M2iSplitPlan *plan);
M2I_API gint m2i_split_plan_get_n_outputs (const M2iSplitPlan *plan);
M2I_API gint m2i_split_plan_get_input (const M2iSplitPlan *plan, gint i);
M2I_API gint m2i_split_plan_get_output (const M2iSplitPlan *plan, gint i);

/* For plans made from a model: the piece that runs layer @node (index as
 * m2i_ir_model_get_node()), or -1 for Parameters, Results, constants and
 * layers no output depends on (and for loaded plans). */
M2I_API gint m2i_split_plan_get_node_piece (const M2iSplitPlan *plan, gint node);

/* Estimated time of one inference: all on the CPU, and as split (pieces
 * plus boundary conversions), in ns (docs/split.md). */
M2I_API void m2i_split_plan_get_cost (const M2iSplitPlan *plan, guint64 *cpu_only_ns,
    guint64 *split_ns);

/* The plan as text: one line per piece (device, engine, ops, inputs and
 * outputs with shape, type and bytes), then the estimate. Free with g_free. */
M2I_API gchar *m2i_split_plan_to_string (const M2iSplitPlan *plan);

/* The cost rule's verdict on every device island the partitioner weighed,
 * a line each (docs/split.md); "" for a plan loaded from a folder. Owned by
 * the plan. */
M2I_API const char *m2i_split_plan_get_decisions (const M2iSplitPlan *plan);

/* A Graphviz DOT picture: every layer (Consts left out) coloured by the
 * engine that runs it, pieces as clusters, boundary edges labelled with the
 * tensor's shape. Free with g_free. */
M2I_API gchar *m2i_split_plan_to_dot (const M2iSplitPlan *plan);

/* ---- the pre-processing head ------------------------------------------ */

/* A PrePostProcessor head (NV12toRGB/I420toRGB → Convert → Interpolate →
 * mean/scale or BatchNormInference → Transpose) lowered to one M2I op list. */
typedef struct {
  gint piece;                  /* the piece that runs it (engine M2I) */
  M2iFormat in_format;         /* SP_NV12_8 or PL_YUV420_8 */
  gint in_width, in_height;
  M2iOpList ops;               /* csc → convert → resize → permute → norm (those present) */
  M2iFormat out_format;        /* e.g. PL_FP16_RGB: the model's NCHW input, in fp16 */
  gint out_width, out_height;
  gint n_inputs;               /* model input tensors of the frame: 1 (one NV12/I420 */
  gint inputs[3];              /*   buffer), 2 (Y, UV) or 3 (Y, U, V) */
  gint output;                 /* the tensor the head produces */
} M2iSplitHead;

/* Fills @head when the plan runs a pre-processing head on the M2I block;
 * FALSE (and @head untouched) otherwise. */
M2I_API gboolean m2i_split_plan_get_head (const M2iSplitPlan *plan, M2iSplitHead *head);

/* ---- running ------------------------------------------------------------ */

typedef struct _M2iSplitRunner M2iSplitRunner;

typedef struct {
  gint n_threads;              /* per piece; <= 0: one per core */
  /* All the runner may allocate: buffers between pieces, every CPU piece's
   * compiled model and request, every device program (0 =
   * M2I_IR_DEFAULT_MAX_MEMORY). More is refused (M2I_ERROR_LIMIT) before
   * it is allocated. */
  guint64 max_memory;
} M2iSplitRunOptions;

/*
 * Prepares @plan (a reference is taken) to run: compiles every CPU piece,
 * builds every device piece's program (weights packed and quantized,
 * buffers allocated) and plans the head's M2I task, within
 * @opts->max_memory. @opts may be NULL. Returns a new runner
 * (m2i_split_runner_free), or NULL with @error naming the piece and the
 * reason.
 */
M2I_API M2iSplitRunner *m2i_split_runner_new (M2iSplitPlan *plan,
    const M2iSplitRunOptions *opts, GError **error);
M2I_API void m2i_split_runner_free (M2iSplitRunner *runner);

M2I_API M2iSplitPlan *m2i_split_runner_get_plan (const M2iSplitRunner *runner);

/* The runner's buffer for model input @i (NULL when out of range), of the
 * model's declared type and shape: write the input into ->data. Owned by
 * the runner. */
M2I_API M2iTensor *m2i_split_runner_get_input (M2iSplitRunner *runner, gint i);

/* Copies @t into model input @i: same shape; the declared type, or f32 for
 * an f16 input. FALSE with @error otherwise. */
M2I_API gboolean m2i_split_runner_set_input (M2iSplitRunner *runner, gint i,
    const M2iTensor *t, GError **error);

/* Runs every piece in order on the current inputs. FALSE with @error when
 * a piece fails (its index and the reason). Allocates nothing. */
M2I_API gboolean m2i_split_runner_run (M2iSplitRunner *runner, GError **error);

/* Model output @i of the last run (NULL when out of range): f32 for float
 * outputs, the declared type otherwise. Owned by the runner, valid until the
 * next run or free. */
M2I_API const M2iTensor *m2i_split_runner_get_output (M2iSplitRunner *runner, gint i);

/*
 * Runs with the head reading @frame (its format and size must be the
 * head's; any strides) instead of the model's frame inputs, then the other
 * pieces. FALSE with @error when the plan has no head or @frame does not
 * fit.
 */
M2I_API gboolean m2i_split_runner_run_image (M2iSplitRunner *runner,
    const M2iImage *frame, GError **error);

/*
 * For callers that make the head's output themselves (an m2i element chain
 * fused into the model's input): describes the buffer the head writes as an
 * image of the head's out_format and size (planes inside the runner's
 * buffer), to be filled before m2i_split_runner_run_after_head(), which runs
 * every piece but the head. FALSE with @error when the plan has no head.
 */
M2I_API gboolean m2i_split_runner_get_head_image (M2iSplitRunner *runner,
    M2iImage *image, GError **error);
M2I_API gboolean m2i_split_runner_run_after_head (M2iSplitRunner *runner, GError **error);

/* What piece @i did since the runner was made. */
typedef struct {
  guint64 runs;
  guint64 wall_ns;             /* time spent in the piece on this machine */
  guint64 device_cycles;       /* simulated device cycles (device pieces) */
  guint64 device_layers;       /* layers the device ran */
  guint64 boundary_bytes;      /* bytes converted into and out of the piece */
} M2iSplitPieceStats;

M2I_API gboolean m2i_split_runner_get_piece_stats (const M2iSplitRunner *runner, gint i,
    M2iSplitPieceStats *stats);

G_END_DECLS
