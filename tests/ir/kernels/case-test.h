/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* case-test.h — table-driven kernel cases over committed NumPy vectors:
 * a case NAME runs one layer (type, version, "key=value;..." attributes)
 * on NAME_in0.npy, NAME_in1.npy, ... (or another case's inputs) and
 * compares its outputs with NAME_y.npy (one output) or NAME_y0.npy,
 * NAME_y1.npy, ... Header-only, on top of kernel-test.h. */
#pragma once

#include "kernel-test.h"

typedef struct {
  const char *name;
  const char *type, *version;
  const char *attrs;         /* "key=value;key=value" */
  guint const_mask;          /* inputs known at compile time */
  const char *inputs;        /* another case's inputs, or NULL */
  gint n_outputs;            /* 0 means 1, compared with NAME_y */
  double tol;                /* 0: bit-exact; else atol = rtol (f32 outputs) */
} KtCase;

static inline const M2iOpKernel *
kt_lookup (const char *type, const char *version)
{
  const M2iOpKernel *k = m2i_op_registry_lookup (m2i_op_registry_get_default (), type, version);
  if (!k)
    g_error ("no kernel for %s %s", type, version);
  return k;
}

/* A layer of the registry's kernel for @type / @version with @attrs. */
static inline KTest *
kt_layer (const char *type, const char *version, const char *attrs)
{
  KTest *t = kt_new (kt_lookup (type, version), version);
  g_auto (GStrv) kv = g_strsplit (attrs ? attrs : "", ";", -1);
  for (gchar **p = kv; *p; p++) {
    if (!**p)
      continue;
    gchar *eq = strchr (*p, '=');
    g_assert_nonnull (eq);
    *eq = 0;
    kt_attr (t, *p, eq + 1);
  }
  return t;
}

/* Asserts @got has @want's type and shape and the same elements: bytes
 * equal, or for f32 within @tol (absolute and relative) when @tol > 0. */
static inline void
kt_assert_matches (const char *what, const M2iTensor *got, const KtArray *want, double tol)
{
  if (got->type != want->type || !m2i_shape_equal (&got->shape, &want->shape))
    g_error ("%s: got %s %s, expected %s %s", what, m2i_element_type_to_string (got->type),
        ir_k_shape_str (&got->shape, 0), m2i_element_type_to_string (want->type),
        ir_k_shape_str (&want->shape, 1));
  if (tol > 0 && got->type == M2I_ET_F32) {
    kt_assert_close (what, got->data, want->data, m2i_shape_numel (&got->shape), tol, tol);
    return;
  }
  gsize n = m2i_tensor_nbytes (got), es = m2i_element_type_size (got->type);
  for (gsize i = 0; i < n; i += es) {
    if (!memcmp ((const guint8 *) got->data + i, (const guint8 *) want->data + i, es))
      continue;
    gint64 g = 0, w = 0;
    if (got->type == M2I_ET_F32)
      g_error ("%s: element %" G_GSIZE_FORMAT " is %.9g, expected %.9g", what, i / es,
          ((const float *) got->data)[i / es], ((const float *) want->data)[i / es]);
    ir_convert_elements ((const guint8 *) got->data + i, got->type, &g, M2I_ET_I64, 1);
    ir_convert_elements ((const guint8 *) want->data + i, want->type, &w, M2I_ET_I64, 1);
    g_error ("%s: element %" G_GSIZE_FORMAT " is %" G_GINT64_FORMAT ", expected %"
        G_GINT64_FORMAT, what, i / es, g, w);
  }
}

/* Runs @c (twice: a second execute() must give the same) and compares. */
static inline void
kt_run_case (const KtCase *c)
{
  const char *root = g_getenv ("M2I_TEST_DATA");
  const char *base = c->inputs ? c->inputs : c->name;
  gint n_out = c->n_outputs ? c->n_outputs : 1;
  KTest *t = kt_layer (c->type, c->version, c->attrs);
  KtArray *in[KT_MAX_IO] = { NULL }, *y[KT_MAX_IO] = { NULL };
  gint n = 0;
  for (; n < KT_MAX_IO; n++) {
    g_autofree gchar *file = g_strdup_printf ("%s/ir-kernels/%s_in%d.npy", root, base, n);
    if (!g_file_test (file, G_FILE_TEST_EXISTS))
      break;
    g_autofree gchar *name = g_strdup_printf ("%s_in%d", base, n);
    in[n] = kt_load (name);
    kt_input (t, in[n]->type, in[n]->shape, in[n]->data, (c->const_mask >> n) & 1);
  }
  g_assert_cmpint (n, >, 0);
  for (gint o = 0; o < n_out; o++) {
    g_autofree gchar *yname = c->n_outputs ? g_strdup_printf ("%s_y%d", c->name, o) :
        g_strdup_printf ("%s_y", c->name);
    y[o] = kt_load (yname);
  }
  kt_run (t, n_out);
  for (gint run = 0; run < 2; run++) {
    if (run)
      g_assert_true (kt_execute (t, NULL));
    for (gint o = 0; o < n_out; o++) {
      g_autofree gchar *what = g_strdup_printf ("%s (output %d)", c->name, o);
      kt_assert_matches (what, &t->outputs[o], y[o], c->tol);
    }
  }
  kt_free (t);
  for (gint i = 0; i < KT_MAX_IO; i++) {
    kt_array_free (in[i]);
    kt_array_free (y[i]);
  }
}
