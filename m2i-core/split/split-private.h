/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-private.h — internals of split execution (not installed).
 *
 *   split-dag.c      the partitioner's core on an abstract DAG of units
 *   split-analyze.c  what each layer is (op, constant, ...), fused units,
 *                    int8 grids, and what the device can run (the
 *                    capability table of docs/split.md)
 *   split-head.c     the PrePostProcessor head → one M2I op list
 *   split-cost.c     the cost model
 *   split-plan.c     m2i_split_plan_new and the plan's accessors
 *   split-json.c     graph_infos.json
 *   split-folder.c   a plan folder's files, opened without following links
 *   split-dot.c      DOT pictures
 *   split-npu.c      device programs for the compute engine
 *   split-runner.c   running a plan
 */
#pragma once

#include <split/m2i-split.h>
#include <npu/m2i-npu.h>
#include <mli/m2i-mli.h>

G_BEGIN_DECLS

/* ---- the partitioner's core ---------------------------------------------- */

/* A DAG of units: @label per unit (0 = CPU; equal labels may share a
 * group), @n_edges pairs (from, to) in @edges (duplicates allowed; the
 * graph must be acyclic). */
typedef struct {
  gint n;
  const gint *label;
  gint n_edges;
  const gint *edges;
} SplitDag;

/*
 * Groups the units: two units share a group only when they have the same
 * label, and a group never both feeds and reads (through other groups)
 * another one, so the groups form a DAG. Groups are numbered 0..n_groups-1
 * in a topological order of that DAG (ties: by smallest unit index).
 * Fills @group (n entries); returns n_groups.
 */
gint split_dag_group (const SplitDag *dag, gint *group);

/* ---- analysis ------------------------------------------------------------ */

typedef enum {
  SPLIT_NODE_IO = 0,           /* Parameter, Result */
  SPLIT_NODE_CONST,            /* Const, or computed at compile time */
  SPLIT_NODE_DEAD,             /* no model output depends on it */
  SPLIT_NODE_OP,               /* runs at every inference */
} SplitNodeKind;

/* Engines a unit can run on (bit per M2iSplitEngine). */
#define SPLIT_CAN(e) (1u << (e))

/* An int8 grid: real = (q - zero_point) * scale, q in [-128, 127]. */
typedef struct {
  gboolean valid;
  double scale;
  gint32 zero_point;
} SplitGrid;

/* What the compute engine needs of a convolution unit (Convolution,
 * GroupConvolution or MatMul as a convolution whose kernel covers its
 * input, with the bias, activation and, for int8, the pooling and the
 * FakeQuantize of its tail). */
typedef struct {
  M2iNpuConvGeometry g;
  float *weights;              /* OIYX f32 (I per group); owned */
  float *bias;                 /* out_channels; owned */
  gboolean relu;
  float act_min, act_max;      /* -inf / +inf when there is no clamp */
  float *slopes;               /* PReLU: out_channels slopes (owned), or NULL */
  gint in_node, in_port;       /* the value the unit reads */
  gint out_node, out_port;     /* the value it produces */
  gint n_pools;                /* MaxPools of an int8 tail, in order */
  M2iNpuPoolParams pools[4];
  /* int8: the input's and output's grids, per-channel weight scales and
   * the weights' integer codes (OIYX) */
  gboolean int8;
  SplitGrid in_grid, out_grid;
  double *w_scale;
  gint8 *w_codes;
} SplitConvDesc;


typedef enum {
  SPLIT_UNIT_SINGLE = 0,       /* one layer */
  SPLIT_UNIT_CONV,             /* Convolution/GroupConvolution/MatMul and its tail */
  SPLIT_UNIT_HEAD,             /* the pre-processing head */
} SplitUnitKind;

typedef struct {
  SplitUnitKind kind;
  GArray *nodes;               /* gint node indices, in execution order; [0] the anchor */
  guint caps;                  /* SPLIT_CAN(...) bits; CPU always set */
  gchar *why_not;              /* why the device cannot run it (NULL if it can) */
  gint forced;                 /* -1, or the M2iSplitDevice an affinity forces */
  gboolean int8_tail;          /* CONV: the tail ends in a FakeQuantize (int8) */
  SplitConvDesc *conv;         /* CONV units the engine can run */
} SplitUnit;


typedef struct {
  M2iIrModel *model;
  M2iIrCompiledModel *cm;      /* the model compiled: shapes and constants */
  gint n_nodes;
  SplitNodeKind *kind;
  gint *unit_of;               /* node → unit, -1 for non-ops */
  GPtrArray *units;            /* SplitUnit* */
  gint *value_base;            /* node → index of its first output in grids */
  SplitGrid *grids;            /* per (node, port) */
  gboolean quantized;          /* the model has run-time FakeQuantize layers */
  gint head_unit;              /* -1 when there is no lowerable head */
  gint *cons_start;            /* per value: first entry in cons */
  gint *cons;                  /* (node, input ordinal) pairs, grouped by value */
  const gint *topo;            /* the model's topological order */
  gpointer head;               /* SplitHeadInfo* when head_unit >= 0 */
} SplitAnalysis;

/* Tensor name → SplitGrid*, for the Parameters of a sub-model. */
typedef GHashTable SplitGridSeeds;

/*
 * Analyses @model: compiles it (n_threads 1) for shapes and constants,
 * classifies every layer, forms the fused units (honouring @affinity:
 * node index → forced M2iSplitDevice + 1, or NULL), finds the head (for
 * @profile), propagates int8 grids (@seeds: grids of Parameters, may be
 * NULL) and fills each unit's capabilities. NULL with @error when the model
 * does not compile (within @max_memory, 0: the default).
 */
SplitAnalysis *split_analyze (M2iIrModel *model, const gint *affinity,
    M2iProfile profile, SplitGridSeeds *seeds, guint64 max_memory, GError **error);
void split_analysis_free (SplitAnalysis *a);

/* The grid of output @port of @node (NULL if it has none). */
const SplitGrid *split_analysis_grid (const SplitAnalysis *a, gint node, gint port);

/* The compiled value of output @port of @node. */
const M2iTensor *split_analysis_value (const SplitAnalysis *a, gint node, gint port);

/* TRUE when input @i of @node is a constant (its data then in *value). */
gboolean split_analysis_const_input (const SplitAnalysis *a, gint node, gint i,
    const M2iTensor **value);

/* The physical N, C, H, W of a value on the device (a rank-2 [N, K] is
 * N×K×1×1; a flattening Reshape keeps its input's). FALSE when the device
 * cannot hold it. */
gboolean split_analysis_phys (const SplitAnalysis *a, gint node, gint port,
    gint dims[4]);

/* The slopes of a PReLU @node whose data has @channels channels (axis 1),
 * expanded to @channels floats (a new array, g_free) when the slope is a
 * float constant with one value or one per channel; NULL otherwise. */
float *split_prelu_slopes (const SplitAnalysis *a, gint node, gint channels);

/* Pooling parameters of a MaxPool, AvgPool or ReduceMean (over H and W)
 * layer the engine can run; FALSE with @why set otherwise. */
gboolean split_pool_params (const SplitAnalysis *a, gint node, M2iNpuPoolParams *p,
    const char **why);

/* The layers reading output @port of @node: pairs (node, input ordinal) in
 * an array owned by the analysis; *n receives the count. */
const gint *split_analysis_consumers (const SplitAnalysis *a, gint node, gint port,
    gint *n);

/* Name of a tensor as the sub-models see it: the first tensor name of the
 * port, else the layer's name, with ".N" for an output ordinal N > 0 (as
 * m2i_ir_model_extract names boundary Parameters). Free with g_free. */
gchar *split_tensor_name (const M2iIrNode *n, gint port);

/* ---- the head --------------------------------------------------------------- */

typedef struct {
  gint n_nodes;                /* layers of the head, csc first */
  gint nodes[16];
  gint n_planes;               /* frame inputs: 1, 2 or 3 */
  gint plane_node[3];          /* the Parameter of each plane (Y, UV / Y, U, V) */
  M2iFormat in_format;
  gint in_width, in_height;
  M2iOpList ops;
  M2iFormat out_format;
  gint out_width, out_height;
  gint out_node, out_port;     /* the value the head produces */
} SplitHeadInfo;

/* Finds the longest PrePostProcessor head of @a's model the M2I block plans
 * under @profile, stopping before any layer in @stop (node index → TRUE;
 * may be NULL). FALSE when there is none. */
gboolean split_head_find (const SplitAnalysis *a, const gboolean *stop,
    M2iProfile profile, SplitHeadInfo *head);

/* ---- costs (ns; the device's cycles at 1 GHz) ----------------------------- */

/* The CPU's time for layer @node. */
guint64 split_cost_cpu_node (const SplitAnalysis *a, gint node);
/* The device's time for unit @u on @engine (NPU engines, M2I). */
guint64 split_cost_device_unit (const SplitAnalysis *a, gint u, M2iSplitEngine engine,
    M2iProfile profile);
/* The device's cycles for pooling (@in dims, @oh × @ow out), element-wise
 * add and concat (@out dims) on the compute engine. */
guint64 split_cost_npu_pool (const M2iNpuPoolParams *p, const gint in[4], gint oh, gint ow,
    gboolean int8);
guint64 split_cost_npu_add (const gint out[4], gboolean int8);
guint64 split_cost_npu_prelu (const gint out[4], gboolean int8);
guint64 split_cost_npu_concat (const gint out[4], gboolean int8);
/* Moving a tensor of @numel elements of @elem_bytes each across a boundary
 * from @from to @to. 0 when both are the CPU. */
guint64 split_cost_boundary (gint64 numel, gsize elem_bytes, M2iSplitEngine from,
    M2iSplitEngine to);

/* ---- the plan ------------------------------------------------------------------ */

typedef struct {
  M2iSplitDevice device;
  M2iSplitEngine engine;
  gint n_ops;
  M2iIrModel *model;
  GArray *inputs, *outputs;    /* gint tensor indices */
  guint64 cost_ns;
  GArray *nodes;               /* gint original node indices of its ops (plans from a model) */
  gchar *op_summary;           /* "Convolution 26, MaxPool 3, ..." */
  /* What the plan's runners share, made by the first runner (plan->lock):
   * a CPU piece's compiled model (for cm_threads threads), an NPU piece's
   * program (packed weights, arena layout). */
  M2iIrCompiledModel *cm;
  gint cm_threads;
  struct _SplitNpuProgram *prog;
} SplitPiece;

typedef struct {
  gchar *name;
  M2iElementType type;
  M2iShape shape;
  M2iSplitTensorAttr attr;
  gint producer;
  GArray *consumers;           /* gint piece indices, ascending */
  SplitGrid grid;              /* int8 grid (int8 pieces read or write it) */
  gint src_node, src_port;     /* in the original model; -1 for loaded plans */
} SplitTensor;

struct _M2iSplitPlan {
  gint ref_count;
  M2iIrModel *model;           /* NULL for loaded plans */
  gchar *devices;
  GPtrArray *pieces;           /* SplitPiece* */
  GPtrArray *tensors;          /* SplitTensor* */
  GHashTable *tensor_index;    /* name → index + 1 */
  GArray *inputs, *outputs;    /* gint tensor indices, model order */
  gint *node_piece;            /* per original node, or NULL */
  gint n_nodes;
  guint64 cpu_only_ns, split_ns;
  M2iProfile m2i_profile;
  guint64 max_memory;          /* for analysing pieces (0: the default) */
  gchar *decisions;            /* the cost rule's verdicts, a line each (plans from a model) */
  GMutex lock;                 /* the pieces' shared cm / prog */
};

/* An empty plan (for the builder and the loader). */
M2iSplitPlan *split_plan_alloc (void);
/* Adds a tensor; returns its index. */
gint split_plan_add_tensor (M2iSplitPlan *plan, const char *name, M2iElementType type,
    const M2iShape *shape, M2iSplitTensorAttr attr);
SplitPiece *split_piece_new (void);
/* Fills producer/consumers of every tensor from the pieces' lists. */
void split_plan_link (M2iSplitPlan *plan);

/* Counts each piece's ops and estimates its cost (and the plan's), from
 * the sub-models (loaded plans). FALSE with @error if one does not compile. */
gboolean split_plan_cost_pieces (M2iSplitPlan *plan, GError **error);

/* Grid seeds (tensor name → SplitGrid*) for piece @p's sub-model. Free with
 * g_hash_table_unref. */
SplitGridSeeds *split_plan_piece_seeds (const M2iSplitPlan *plan, gint p);

/* Checks that piece @p's sub-model can run on its engine (the device's
 * capability table); FALSE with @error naming the layer otherwise. */
gboolean split_plan_check_piece (const M2iSplitPlan *plan, gint p, GError **error);

/* "CPU"/"M2I" in any case → device; FALSE otherwise. */
gboolean split_device_from_string (const char *s, M2iSplitDevice *out);
gboolean split_engine_from_string (const char *s, M2iSplitEngine *out);

/* ---- a plan folder's files ------------------------------------------------ */

/* An open plan folder (its descriptor, and its path for messages). */
typedef struct {
  int fd;
  gchar *path;
} SplitFolder;

/* Opens @dir (FALSE with @error, M2I_ERROR_IO, when it is no folder). */
gboolean split_folder_open (SplitFolder *f, const char *dir, GError **error);
void split_folder_close (SplitFolder *f);

/* Opens @name, a relative path inside the folder, one component at a time
 * without following symbolic links; the last must be a regular file.
 * Returns a descriptor (close() it), or -1 with @error saying why: a link
 * on the way (M2I_ERROR_IO, "is a symbolic link"), a missing file or no
 * regular file (M2I_ERROR_IO), an empty, "." or ".." component
 * (M2I_ERROR_MALFORMED). */
int split_folder_open_file (SplitFolder *f, const char *name, GError **error);

/* The contents of @name (opened as split_folder_open_file() does), at most
 * @max_bytes (M2I_ERROR_LIMIT beyond). NULL with @error. */
GBytes *split_folder_read (SplitFolder *f, const char *name, gsize max_bytes,
    GError **error);

/* @name mapped read-only (the weights of a piece). NULL with @error. */
GBytes *split_folder_map (SplitFolder *f, const char *name, GError **error);

/* ---- device programs ----------------------------------------------------------- */

typedef struct _SplitNpuProgram SplitNpuProgram;

/* One host-side tensor the program reads or writes: data, type and shape
 * (the runner's buffers). */
typedef struct {
  M2iTensor t;
} SplitHostTensor;

/*
 * Builds the program of an NPU piece from its sub-model: every layer mapped
 * to an engine call (weights packed, quantized for int8 from the
 * FakeQuantize ranges), every value a blocked tensor at an offset of one
 * arena laid out by lifetime. @seeds gives the grids of the inputs (int8).
 * NULL with @error naming the layer the engine cannot run, or
 * (M2I_ERROR_LIMIT) when its arena would pass @max_memory (0: the
 * default). The program is immutable: any number of states (runners) run
 * it at once.
 */
SplitNpuProgram *split_npu_program_new (M2iIrModel *sub, M2iSplitEngine engine,
    SplitGridSeeds *seeds, guint64 max_memory, GError **error);
void split_npu_program_free (SplitNpuProgram *prog);
/* Input @i / output @i of the sub-model: its host type (what the program
 * reads or writes: f32 or f16; outputs f32) and shape. */
gint split_npu_program_n_inputs (const SplitNpuProgram *prog);
gint split_npu_program_n_outputs (const SplitNpuProgram *prog);
/* Bytes of a state's arena (values alive at once and scratch). */
gsize split_npu_program_arena_bytes (const SplitNpuProgram *prog);

/* What one run of a program writes: its arena, @n_threads slices per layer.
 * NULL with @error when the arena cannot be allocated. The program must
 * outlive it. */
typedef struct _SplitNpuState SplitNpuState;
SplitNpuState *split_npu_state_new (const SplitNpuProgram *prog, gint n_threads,
    GError **error);
void split_npu_state_free (SplitNpuState *st);
/* Whether output @j is converted back to the host at each run of @st (TRUE
 * by default; FALSE when no piece reads its data). */
void split_npu_state_set_output_needed (SplitNpuState *st, gint j, gboolean needed);

/* Runs @prog in @st: reads each input from @in[i] (f32 or f16, shape of
 * input i), writes f32 outputs to @out[i]. Adds the simulated cost to
 * @stats. */
gboolean split_npu_program_run (const SplitNpuProgram *prog, SplitNpuState *st,
    const M2iTensor *const *in, M2iTensor *const *out, M2iSplitPieceStats *stats,
    GError **error);
/* Layers and simulated cycles of one run. */
void split_npu_program_cost (const SplitNpuProgram *prog, guint64 *layers,
    guint64 *cycles, guint64 *bytes_read, guint64 *bytes_written);

G_END_DECLS
