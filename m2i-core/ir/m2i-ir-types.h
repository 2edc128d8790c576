/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-ir-types.h — element types, shapes and dense tensors of the IR runtime. */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

/* Element types of OpenVINO IR (the `precision` / `element_type` spellings). */
typedef enum {
  M2I_ET_UNDEFINED = 0,
  M2I_ET_BOOLEAN,
  M2I_ET_U8,
  M2I_ET_I8,
  M2I_ET_U16,
  M2I_ET_I16,
  M2I_ET_U32,
  M2I_ET_I32,
  M2I_ET_U64,
  M2I_ET_I64,
  M2I_ET_F16,
  M2I_ET_BF16,
  M2I_ET_F32,
  M2I_ET_F64,
} M2iElementType;

/* Bytes per element (boolean is one byte); 0 for M2I_ET_UNDEFINED. */
M2I_API gsize m2i_element_type_size (M2iElementType t);

/* IR spelling ("f32", "i64", "boolean", ...); static string. */
M2I_API const char *m2i_element_type_to_string (M2iElementType t);

/* Parses both spellings IR files use ("f32"/"FP32", "i64"/"I64",
 * "boolean"/"BOOL", "u8"/"U8", ...). Returns FALSE for unknown strings and
 * for sub-byte types (u1, u4, i4, nf4), which the runtime does not support;
 * *out is left alone then. */
M2I_API gboolean m2i_element_type_from_string (const char *s, M2iElementType *out);

M2I_API gboolean m2i_element_type_is_float (M2iElementType t);

#define M2I_MAX_RANK 8

/* A dimension whose size is not known from the model file: OpenVINO IR
 * writes it -1 (<dim>) or "?" (shape attributes). Models keep it in their
 * declared shapes; a compiled model computes only with static shapes. */
#define M2I_DIM_DYNAMIC (-1)

/* A shape. rank 0 is a scalar (one element). */
typedef struct {
  gint rank;
  gint64 dims[M2I_MAX_RANK];
} M2iShape;

/* Number of elements (1 for a scalar); -1 if a dim is negative or the
 * product overflows. */
M2I_API gint64 m2i_shape_numel (const M2iShape *s);
M2I_API gboolean m2i_shape_equal (const M2iShape *a, const M2iShape *b);

/* TRUE when no dim is M2I_DIM_DYNAMIC (or otherwise negative). */
M2I_API gboolean m2i_shape_is_static (const M2iShape *s);

/* "[1,3,224,224]"; "[]" for a scalar; a dynamic dim prints "?". Free with
 * g_free(). */
M2I_API gchar *m2i_shape_to_string (const M2iShape *s);

/* Parses "1,3,8,8", "1, 3, 8, 8" and "" (scalar) into @out. FALSE with a
 * GError for a malformed dim, a negative or dynamic dim, or rank > 8. */
M2I_API gboolean m2i_shape_parse (const char *s, M2iShape *out, GError **error);

/* Numpy broadcasting of @a and @b into @out; FALSE with a GError naming both
 * shapes when they do not broadcast. */
M2I_API gboolean m2i_shape_broadcast (const M2iShape *a, const M2iShape *b,
    M2iShape *out, GError **error);

/* A dense row-major tensor. `data` is borrowed unless the owner says
 * otherwise; it may be NULL where only the description is known. */
typedef struct {
  M2iElementType type;
  M2iShape shape;
  gpointer data;
} M2iTensor;

/* Bytes of the tensor's data (numel × element size); 0 if undefined. */
M2I_API gsize m2i_tensor_nbytes (const M2iTensor *t);

G_END_DECLS
