/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-private.h — internals shared inside m2i-core/ir (not installed). */
#pragma once

#include <ir/m2i-ir-op.h>
#include <ir/m2i-ir.h>

G_BEGIN_DECLS

/* ---- model-level rt_info (ir-rt-info.c) ----------------------------------- */

/* The elements of a model's <rt_info> (and v10 <meta_data>) as read: one
 * entry each, in document order, with its parent; linear in the text
 * however deep it nests. Immutable once read; reference counted, so a
 * model can share it with another. */
typedef struct _IrRtInfo IrRtInfo;

IrRtInfo *ir_rt_info_new (void);
IrRtInfo *ir_rt_info_ref (IrRtInfo *info);
void ir_rt_info_unref (IrRtInfo *info);
/* Appends element @element (with its name="" and value="" attributes, each
 * may be NULL) under entry @parent (-1: at the top; an element named
 * meta_data at the top starts v10's legacy block). Returns its index. */
gint ir_rt_info_add (IrRtInfo *info, gint parent, const char *element,
    const char *name, const char *value);
/* The value of @key, the element names from the top joined by '/' (the
 * last spelled by its name="" when it is an <attribute>; v10's keys start
 * with "meta_data/"); the last such element when several match; NULL when
 * none has a value. @info may be NULL. */
const char *ir_rt_info_lookup (const IrRtInfo *info, const char *key);
/* Appends <rt_info>...</rt_info> (one level inside <net>) as read, v10's
 * <meta_data> block left out; nothing when that leaves nothing. Linear in
 * the entries (indentation stops growing past 16 levels). */
void ir_rt_info_write (const IrRtInfo *info, GString *xml);

/* Gives @dst the model-level rt_info of @src (shared, not copied), in place
 * of its own. Split execution hands the model's rt_info to the one piece
 * it belongs to (docs/split.md). */
void ir_model_share_rt_info (M2iIrModel *dst, const M2iIrModel *src);

/* One <port> of a layer as the XML declares it. */
typedef struct {
  gint64 id;                     /* the port id of the XML */
  M2iElementType type;           /* declared precision; UNDEFINED when absent */
  M2iShape shape;                /* declared dims (rank 0 when no <dim>) */
  gchar *names;                  /* v11 tensor names ("a,b"), or NULL */
  GHashTable *rt_info;           /* name → value, or NULL */
  gint line;                     /* line of <port> in the XML, for errors */
} M2iIrPort;

/* Where an input of a layer comes from: output ordinal @port of @node. */
typedef struct {
  M2iIrNode *node;
  gint port;
} M2iIrSource;

struct _M2iIrNode {
  gint64 id;
  gchar *name;
  gchar *type;
  gchar *version;
  GHashTable *attrs;             /* gchar* → gchar*, the <data> attributes */
  /* The reader and graph may add fields below (ports, rt_info, ...). */
  gint index;                    /* position in the model's node list */
  gint line;                     /* line of <layer>, 0 for free-standing nodes */
  gint n_inputs, n_outputs;
  M2iIrPort *inputs;             /* in XML order: the ordinal is the index */
  M2iIrPort *outputs;
  M2iIrSource *sources;          /* n_inputs entries, filled by the edges */
  GHashTable *rt_info;           /* name → value of <rt_info><attribute>, or NULL */
  gboolean has_body;             /* a sub-graph (<body>, ...): unsupported */
  /* Const layers: the value (data borrowed from the weights or owned). */
  M2iTensor const_value;
  gpointer const_owned;          /* g_free()d with the node; widened f16 or aligned copy */
  M2iElementType const_declared; /* element type as stored in the .bin */
};

/* An <edge>, in ordinals. */
typedef struct {
  gint from_node, from_port;     /* node index, output ordinal */
  gint to_node, to_port;         /* node index, input ordinal */
} M2iIrEdge;

struct _M2iIrModel {
  gint ref_count;
  gchar *name;
  gchar *xml_path;               /* for messages; "<memory>" when parsed from memory */
  gchar *bin_path;               /* NULL when no weights were needed */
  gint ir_version;
  GPtrArray *nodes;              /* M2iIrNode*, XML order, owned */
  GHashTable *by_id;             /* gint64* id → M2iIrNode* */
  GArray *edges;                 /* M2iIrEdge, XML order */
  gint *topo;                    /* node indices in a topological order */
  GPtrArray *parameters;         /* M2iIrNode*, XML order (borrowed) */
  GPtrArray *results;            /* M2iIrNode*, XML order (borrowed) */
  M2iIrIoInfo *input_info;       /* parameters->len entries */
  M2iIrIoInfo *output_info;      /* results->len entries */
  GPtrArray *names;              /* gchar*: strings the io infos point to */
  IrRtInfo *rt_info;             /* model-level rt_info as read (shared), or NULL */
  GBytes *weights;               /* the .bin (mapped), or NULL */
};

/* Checked arithmetic for sizes, counts and offsets that come from files
 * (docs/reliability.md): FALSE when the exact result does not fit. */
static inline gboolean
ir_mul_i64 (gint64 a, gint64 b, gint64 *out)
{
  return !__builtin_mul_overflow (a, b, out);
}

static inline gboolean
ir_add_i64 (gint64 a, gint64 b, gint64 *out)
{
  return !__builtin_add_overflow (a, b, out);
}

/* Built-in kernels, registered into the default registry on first use.
 * Structural ops (Parameter, Const, Result, Reshape, ...) live with the
 * runtime; compute kernels live in kernels/. */
void ir_register_structural_kernels (M2iOpRegistry *r);
void ir_register_compute_kernels (M2iOpRegistry *r);

/* TRUE when @k is a built-in kernel whose output is a pure view of input 0
 * (same bytes: Reshape, Squeeze, Unsqueeze, and Convert between identical
 * types), so the memory planner may give both the same buffer. */
gboolean ir_kernel_is_view (const M2iOpKernel *k, const M2iOpContext *ctx);

/* TRUE when @k is the built-in Concat, whose ctx->state is the axis and
 * which copies nothing for an input already in place in its output. */
gboolean ir_kernel_is_concat (const M2iOpKernel *k);

/* TRUE when @k only reads the shapes of its inputs (ShapeOf), so it can be
 * evaluated at compile time whatever its input. */
gboolean ir_kernel_is_shape_only (const M2iOpKernel *k);

/* Resolves @version of @type to the opset of the op version it denotes, as
 * OpenVINO's opsets do ("opset11" holds MaxPool-8, so MaxPool opset11 →
 * "opset8"). Returns @version itself when no table entry says otherwise. */
const char *ir_opset_resolve (const char *type, const char *version,
    gchar buf[16]);

/* As m2i_shape_parse(), also taking dynamic dims ("?", "-1", ranges "1..8"),
 * which become M2I_DIM_DYNAMIC. */
gboolean ir_shape_parse_dynamic (const char *s, M2iShape *out, GError **error);

/* TRUE when @s has @declared's rank and equals it on every dim that neither
 * gives as M2I_DIM_DYNAMIC (what an edge or a declared port accepts). */
gboolean ir_shape_fits (const M2iShape *declared, const M2iShape *s);

/* Parses an element type; sub-byte and unknown types are errors that say so. */
gboolean ir_parse_element_type (const char *s, M2iElementType *out,
    GError **error);

/* Copies/converts @n elements between element types with Convert-1 rules. */
void ir_convert_elements (const void *src, M2iElementType st, void *dst,
    M2iElementType dt, gsize n);

G_END_DECLS
