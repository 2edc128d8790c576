/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel-test.h — drives one compute kernel the way the runtime does
 * (infer() once, execute() per run) on tensors built by hand, loads the
 * committed reference vectors (.npy) and compares results.
 *
 * Header-only on purpose: each test program and the benchmark include it.
 */
#pragma once

#include <ir/kernels/kernels-private.h>
#include <base/m2i-fp16.h>
#include <test-support.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KT_MAX_IO 8

typedef struct {
  const M2iOpKernel *kernel;
  M2iIrNode *node;
  M2iOpContext ctx;
  M2iTensor inputs[KT_MAX_IO];
  M2iTensor outputs[KT_MAX_IO];
  gpointer input_data[KT_MAX_IO];      /* borrowed */
  gboolean input_const[KT_MAX_IO];
  gpointer output_data[KT_MAX_IO];     /* owned */
  gpointer scratch;                    /* owned, 64-byte aligned */
  gboolean inferred;
} KTest;

static inline M2iShape
kt_shape_of (const gint64 *dims, gint rank)
{
  M2iShape s = { rank };
  for (gint i = 0; i < rank; i++)
    s.dims[i] = dims[i];
  return s;
}

/* SHAPE(1, 3, 8, 8); SCALAR for rank 0. */
#define SHAPE(...) kt_shape_of ((const gint64[]) { __VA_ARGS__ }, \
    (gint) (sizeof ((const gint64[]) { __VA_ARGS__ }) / sizeof (gint64)))
#define SCALAR kt_shape_of (NULL, 0)

static inline KTest *
kt_new (const M2iOpKernel *kernel, const char *version)
{
  KTest *t = g_new0 (KTest, 1);
  t->kernel = kernel;
  t->node = m2i_ir_node_new (7, "test_layer", kernel->type, version);
  t->ctx.node = t->node;
  t->ctx.inputs = t->inputs;
  t->ctx.outputs = t->outputs;
  t->ctx.n_threads = 2;
  return t;
}

static inline void
kt_attr (KTest *t, const char *key, const char *value)
{
  m2i_ir_node_set_attr (t->node, key, value);
}

/* Adds an input; @data stays owned by the caller. A constant input's data
 * is visible to infer(), the others only to execute(). */
static inline void
kt_input (KTest *t, M2iElementType type, M2iShape shape, gconstpointer data,
    gboolean constant)
{
  gint i = t->ctx.n_inputs++;
  g_assert_cmpint (i, <, KT_MAX_IO);
  t->inputs[i].type = type;
  t->inputs[i].shape = shape;
  t->input_data[i] = (gpointer) data;
  t->input_const[i] = constant;
}

static inline gboolean
kt_infer (KTest *t, gint n_outputs, GError **error)
{
  t->ctx.n_outputs = n_outputs;
  for (gint i = 0; i < t->ctx.n_inputs; i++)
    t->inputs[i].data = t->input_const[i] ? t->input_data[i] : NULL;
  if (!t->kernel->infer (&t->ctx, error))
    return FALSE;
  t->inferred = TRUE;
  for (gint i = 0; i < n_outputs; i++) {
    gsize n = m2i_tensor_nbytes (&t->outputs[i]);
    t->output_data[i] = g_malloc (MAX (n, 1));
    /* Poison: a kernel must write every output element. */
    memset (t->output_data[i], 0x7f, n);
    t->outputs[i].data = t->output_data[i];
  }
  if (t->ctx.scratch_bytes) {
    t->scratch = g_aligned_alloc (1, t->ctx.scratch_bytes, 64);
    memset (t->scratch, 0xff, t->ctx.scratch_bytes);
  }
  t->ctx.scratch = t->scratch;
  return TRUE;
}

static inline gboolean
kt_execute (KTest *t, GError **error)
{
  for (gint i = 0; i < t->ctx.n_inputs; i++)
    t->inputs[i].data = t->input_data[i];
  return t->kernel->execute (&t->ctx, error);
}

/* infer + execute, asserting both succeed. */
static inline void
kt_run (KTest *t, gint n_outputs)
{
  GError *error = NULL;
  if (!kt_infer (t, n_outputs, &error) || !kt_execute (t, &error))
    g_error ("%s: %s", t->kernel->type, error->message);
}

static inline void
kt_free (KTest *t)
{
  if (!t)
    return;
  if (t->inferred && t->kernel->free_state)
    t->kernel->free_state (t->ctx.state);
  for (gint i = 0; i < KT_MAX_IO; i++)
    g_free (t->output_data[i]);
  g_aligned_free (t->scratch);
  m2i_ir_node_free (t->node);
  g_free (t);
}

static inline const float *
kt_out_f32 (KTest *t, gint i)
{
  g_assert_cmpint (t->outputs[i].type, ==, M2I_ET_F32);
  return t->outputs[i].data;
}

/* Asserts that infer() (or execute() when @at_execute) fails with @code and
 * a message that names the layer and contains @needle. */
static inline void
kt_expect_error (KTest *t, gint n_outputs, gint code, const char *needle)
{
  GError *error = NULL;
  gboolean ok = kt_infer (t, n_outputs, &error);
  if (ok)
    ok = kt_execute (t, &error);
  if (ok)
    g_error ("%s: expected an error containing \"%s\", got success",
        t->kernel->type, needle);
  g_assert_error (error, M2I_ERROR, code);
  if (!strstr (error->message, "test_layer") || !strstr (error->message, needle))
    g_error ("error \"%s\" does not name the layer or lacks \"%s\"",
        error->message, needle);
  g_error_free (error);
}

/* ---- Comparison -------------------------------------------------------- */

/* Asserts |got - want| <= atol + rtol·|want| element-wise (NaN == NaN). */
static inline void
kt_assert_close (const char *what, const float *got, const float *want,
    gsize n, double atol, double rtol)
{
  for (gsize i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    if (isnan (w) && isnan (g))
      continue;
    if (isinf (w) && g == w)
      continue;
    if (!(fabs (g - w) <= atol + rtol * fabs (w)))
      g_error ("%s: element %" G_GSIZE_FORMAT " is %.9g, expected %.9g (|diff| %.3g)",
          what, i, g, w, fabs (g - w));
  }
}

/* ---- Reference vectors (NumPy .npy files) ------------------------------ */

typedef struct {
  M2iElementType type;
  M2iShape shape;
  gpointer data;                       /* owned */
} KtArray;

/* Loads tests/data/ir-kernels/<name>.npy (little-endian, C order). Aborts
 * the test with a clear message when it is missing or malformed. */
static inline KtArray *
kt_load (const char *name)
{
  const char *root = g_getenv ("M2I_TEST_DATA");
  g_assert_nonnull (root);
  g_autofree gchar *path = g_strdup_printf ("%s/ir-kernels/%s.npy", root, name);
  gchar *buf;
  gsize len;
  GError *error = NULL;
  if (!g_file_get_contents (path, &buf, &len, &error))
    g_error ("%s", error->message);
  if (len < 10 || memcmp (buf, "\x93NUMPY", 6))
    g_error ("%s: not a .npy file", path);
  gsize hlen, hoff;
  if (buf[6] == 1) {
    hlen = (guint8) buf[8] | ((guint8) buf[9] << 8);
    hoff = 10;
  } else {
    hlen = (guint8) buf[8] | ((guint8) buf[9] << 8) | ((gsize) (guint8) buf[10] << 16);
    hoff = 12;
  }
  g_autofree gchar *header = g_strndup (buf + hoff, hlen);
  KtArray *a = g_new0 (KtArray, 1);
  static const struct { const char *descr; M2iElementType t; } types[] = {
    { "'<f4'", M2I_ET_F32 }, { "'<i4'", M2I_ET_I32 }, { "'<i8'", M2I_ET_I64 },
    { "'|u1'", M2I_ET_U8 }, { "'<f8'", M2I_ET_F64 }, { "'|b1'", M2I_ET_BOOLEAN },
  };
  a->type = M2I_ET_UNDEFINED;
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    if (strstr (header, types[i].descr))
      a->type = types[i].t;
  if (a->type == M2I_ET_UNDEFINED || strstr (header, "'fortran_order': True"))
    g_error ("%s: unsupported header %s", path, header);
  const char *sp = strstr (header, "'shape': (");
  g_assert_nonnull (sp);
  sp += strlen ("'shape': (");
  while (*sp && *sp != ')') {
    char *end;
    gint64 d = g_ascii_strtoll (sp, &end, 10);
    if (end == sp)
      break;
    a->shape.dims[a->shape.rank++] = d;
    sp = end;
    while (*sp == ',' || *sp == ' ')
      sp++;
  }
  gsize bytes = (gsize) m2i_shape_numel (&a->shape) * m2i_element_type_size (a->type);
  if (hoff + hlen + bytes != len)
    g_error ("%s: size %" G_GSIZE_FORMAT " does not match header %s", path, len, header);
  a->data = g_memdup2 (buf + hoff + hlen, MAX (bytes, 1));
  g_free (buf);
  return a;
}

static inline void
kt_array_free (KtArray *a)
{
  if (a) {
    g_free (a->data);
    g_free (a);
  }
}

/* A Convolution (groups 1) or GroupConvolution of @in (1 × c_in × h × w)
 * with constant weights @wts (c_out × c_in/groups × kh × kw), the stride on
 * both axes, pads ph (top and bottom) and pw (left and right), on
 * @threads, inferred (g_error on failure). */
static inline KTest *
kt_conv_rect_new (gint c_in, gint h, gint w, gint c_out, gint kh, gint kw, gint stride, gint ph,
    gint pw, gint groups, const float *in, const float *wts, gint threads)
{
  KTest *t = kt_new (groups > 1 ? &ir_kernel_group_convolution : &ir_kernel_convolution,
      "opset1");
  t->ctx.n_threads = threads;
  g_autofree gchar *pads = g_strdup_printf ("%d,%d", ph, pw);
  g_autofree gchar *strides = g_strdup_printf ("%d,%d", stride, stride);
  kt_attr (t, "strides", strides);
  kt_attr (t, "dilations", "1,1");
  kt_attr (t, "pads_begin", pads);
  kt_attr (t, "pads_end", pads);
  kt_input (t, M2I_ET_F32, SHAPE (1, c_in, h, w), in, FALSE);
  if (groups > 1)
    kt_input (t, M2I_ET_F32, SHAPE (groups, c_out / groups, c_in / groups, kh, kw), wts, TRUE);
  else
    kt_input (t, M2I_ET_F32, SHAPE (c_out, c_in, kh, kw), wts, TRUE);
  GError *error = NULL;
  if (!kt_infer (t, 1, &error))
    g_error ("%s", error->message);
  return t;
}

/* The same with a square kernel and equal pads. */
static inline KTest *
kt_conv_new (gint c_in, gint h, gint w, gint c_out, gint k, gint stride, gint pad,
    gint groups, const float *in, const float *wts, gint threads)
{
  return kt_conv_rect_new (c_in, h, w, c_out, k, k, stride, pad, pad, groups, in, wts, threads);
}

/* Deterministic pseudo-random floats in [lo, hi). */
static inline void
kt_fill (float *p, gsize n, guint32 seed, float lo, float hi)
{
  guint32 x = seed * 2654435761u + 12345u;
  for (gsize i = 0; i < n; i++) {
    p[i] = lo + (hi - lo) * (float) ((test_xorshift32 (&x) >> 8) * (1.0 / 16777216.0));
  }
}
