/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tensor helpers and sub-tensor views, against values worked out by hand
 * from the layout definition (element (i0..ik) at data + Σ i_d·stride_d). */
#include <mli/m2i-mli.h>
#include <string.h>

static void
test_element_size (void)
{
  static const struct { M2iMliType t; guint size; } cases[] = {
    { M2I_MLI_FX8, 1 }, { M2I_MLI_FX16, 2 }, { M2I_MLI_SA8, 1 },
    { M2I_MLI_SA32, 4 }, { M2I_MLI_FP16, 2 }, { M2I_MLI_FP32, 4 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    M2iMliTensor t;
    guint32 one = 1;
    m2i_mli_tensor_init (&t, cases[i].t, &one, 4, 1, &one);
    g_assert_cmpuint (m2i_mli_tensor_element_size (&t), ==, cases[i].size);
    g_assert_cmpuint (m2i_mli_type_size (cases[i].t), ==, cases[i].size);
  }
  g_assert_cmpuint (m2i_mli_type_size ((M2iMliType) 99), ==, 0);
  g_assert_cmpuint (m2i_mli_tensor_element_size (NULL), ==, 0);
  g_assert_cmpstr (m2i_mli_type_to_string (M2I_MLI_SA32), ==, "sa32");
}

static void
test_count (void)
{
  guint32 shape[] = { 2, 3, 4, 5 };
  gint8 buf[120];
  M2iMliTensor t;
  m2i_mli_tensor_init (&t, M2I_MLI_SA8, buf, sizeof buf, 4, shape);
  g_assert_cmpuint (m2i_mli_count_elements (&t, 0), ==, 120);
  g_assert_cmpuint (m2i_mli_count_elements (&t, 1), ==, 60);
  g_assert_cmpuint (m2i_mli_count_elements (&t, 3), ==, 5);
  g_assert_cmpuint (m2i_mli_count_elements (&t, 4), ==, 0);      /* start_dim >= rank */
  g_assert_cmpuint (m2i_mli_count_elements (NULL, 0), ==, 0);
  t.rank = 0;
  g_assert_cmpuint (m2i_mli_count_elements (&t, 0), ==, 1);      /* scalar */
  g_assert_cmpuint (m2i_mli_count_elements (&t, 1), ==, 0);
  t.rank = M2I_MLI_MAX_RANK + 1;
  g_assert_cmpuint (m2i_mli_count_elements (&t, 0), ==, 0);
}

static void
test_strides_and_span (void)
{
  guint32 shape[] = { 2, 3, 4 };
  gint16 buf[64];
  M2iMliTensor t;
  m2i_mli_tensor_init (&t, M2I_MLI_FX16, buf, sizeof buf, 3, shape);
  g_assert_cmpuint (m2i_mli_tensor_span_bytes (&t), ==, 24 * 2);
  t.mem_stride[1] = 5;                     /* padded rows; dim 0 follows */
  m2i_mli_set_dense_strides (&t);
  g_assert_cmpint (t.mem_stride[0], ==, 15);
  g_assert_cmpint (t.mem_stride[1], ==, 5);
  g_assert_cmpint (t.mem_stride[2], ==, 1);
  /* last element at 1*15 + 2*5 + 3 = 28 */
  g_assert_cmpuint (m2i_mli_tensor_span_bytes (&t), ==, 29 * 2);
  t.capacity = 57;
  g_assert_cmpint (m2i_mli_tensor_check (&t), ==, M2I_MLI_NOT_ENOUGH_MEM);
  t.capacity = 58;
  g_assert_cmpint (m2i_mli_tensor_check (&t), ==, M2I_MLI_OK);

  /* Shapes whose span does not fit 64 bits fail the capacity check
   * instead of wrapping past it. */
  guint32 huge[] = { G_MAXUINT32, G_MAXUINT32, G_MAXUINT32, G_MAXUINT32 };
  M2iMliTensor h;
  m2i_mli_tensor_init (&h, M2I_MLI_FP32, buf, G_MAXSIZE, 4, huge);
  g_assert_cmpint (m2i_mli_tensor_check (&h), ==, M2I_MLI_NOT_ENOUGH_MEM);
  g_assert_cmpuint (m2i_mli_count_elements (&h, 0), ==, G_MAXUINT64);
  guint32 tall[] = { G_MAXUINT32, 1, 1 };
  m2i_mli_tensor_init (&h, M2I_MLI_FX8, buf, sizeof buf, 3, tall);
  g_assert_cmpint (m2i_mli_tensor_check (&h), ==, M2I_MLI_NOT_ENOUGH_MEM);
}

static void
test_quant_getters (void)
{
  guint32 shape[] = { 3, 2 };
  gint8 buf[6];
  gint32 zp[] = { -1, 0, 7 }, sc[] = { 100, 200, 300 };
  gint8 fb[] = { 4, 5, 6 };
  M2iMliTensor t;
  m2i_mli_tensor_init (&t, M2I_MLI_SA8, buf, sizeof buf, 2, shape);
  m2i_mli_tensor_set_sa (&t, 12, 34, 5);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&t, 9), ==, 12);     /* idx ignored */
  g_assert_cmpint (m2i_mli_tensor_scale (&t, 0), ==, 34);
  g_assert_cmpint (m2i_mli_tensor_scale_shift (&t, 0), ==, 5);
  m2i_mli_tensor_set_sa_axis (&t, 0, zp, sc, fb);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&t, 2), ==, 7);
  g_assert_cmpint (m2i_mli_tensor_scale (&t, 1), ==, 200);
  g_assert_cmpint (m2i_mli_tensor_scale_shift (&t, 0), ==, 4);
  /* Beyond the per-axis arrays: scale 0 (never valid), others 0. */
  g_assert_cmpint (m2i_mli_tensor_scale (&t, 3), ==, 0);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&t, 3), ==, 0);
  g_assert_cmpint (m2i_mli_tensor_scale_shift (&t, 3), ==, 0);

  t.type = M2I_MLI_FX16;
  t.q.frac_bits = 9;
  g_assert_cmpint (m2i_mli_tensor_scale (&t, 0), ==, 1);
  g_assert_cmpint (m2i_mli_tensor_scale_shift (&t, 0), ==, 9);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&t, 0), ==, 0);
  t.type = M2I_MLI_FP32;
  g_assert_cmpint (m2i_mli_tensor_scale (&t, 0), ==, 1);
  g_assert_cmpint (m2i_mli_tensor_scale_shift (&t, 0), ==, 0);
  g_assert_cmpint (m2i_mli_tensor_scale (NULL, 0), ==, 0);
}

/* A 2x4x6 sa8 tensor holding its own linear index; quantized per axis 1. */
typedef struct {
  gint8 buf[48];
  gint32 zp[4], sc[4];
  gint8 fb[4];
  M2iMliTensor t;
} Fixture;

static void
fixture_init (Fixture *f)
{
  guint32 shape[] = { 2, 4, 6 };
  for (int i = 0; i < 48; i++)
    f->buf[i] = (gint8) i;
  for (int i = 0; i < 4; i++) {
    f->zp[i] = 10 * i;
    f->sc[i] = 100 + i;
    f->fb[i] = (gint8) (1 + i);
  }
  m2i_mli_tensor_init (&f->t, M2I_MLI_SA8, f->buf, sizeof f->buf, 3, shape);
  m2i_mli_tensor_set_sa_axis (&f->t, 1, f->zp, f->sc, f->fb);
}

static gint8
at (const M2iMliTensor *v, guint i, guint j)
{
  return ((gint8 *) v->data)[i * v->mem_stride[0] + j * v->mem_stride[1]];
}

static void
test_subtensor_basic (void)
{
  Fixture f;
  fixture_init (&f);
  M2iMliTensor v;
  /* Batch 1, rows 1..2, columns 2..4, keep rank 3. */
  M2iMliSubTensorCfg cfg = { { 1, 1, 2 }, { 1, 2, 3 }, 3 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &cfg, &v), ==, M2I_MLI_OK);
  g_assert_true (v.data == f.buf + 24 + 6 + 2);
  g_assert_cmpuint (v.capacity, ==, 48 - 32);
  g_assert_cmpuint (v.rank, ==, 3);
  g_assert_cmpuint (v.shape[0], ==, 1);
  g_assert_cmpuint (v.shape[1], ==, 2);
  g_assert_cmpuint (v.shape[2], ==, 3);
  g_assert_cmpint (v.mem_stride[0], ==, 24);
  g_assert_cmpint (v.mem_stride[1], ==, 6);
  g_assert_cmpint (v.mem_stride[2], ==, 1);
  /* Per-axis parameters follow the selected rows. */
  g_assert_cmpint (v.q.axis, ==, 1);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&v, 0), ==, 10);
  g_assert_cmpint (m2i_mli_tensor_scale (&v, 1), ==, 102);
  g_assert_cmpint (m2i_mli_tensor_scale_shift (&v, 1), ==, 3);
  g_assert_cmpint (m2i_mli_tensor_scale (&v, 2), ==, 0);     /* only 2 rows now */
  g_assert_cmpint (m2i_mli_tensor_check (&v), ==, M2I_MLI_OK);

  /* Dropping the leading size-1 batch: rank 2, axis renumbered to 0. */
  cfg.sub_rank = 2;
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &cfg, &v), ==, M2I_MLI_OK);
  g_assert_cmpuint (v.rank, ==, 2);
  g_assert_cmpint (v.q.axis, ==, 0);
  g_assert_cmpint (v.mem_stride[0], ==, 6);
  g_assert_cmpint (at (&v, 0, 0), ==, 32);
  g_assert_cmpint (at (&v, 1, 2), ==, 24 + 12 + 4);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&v, 1), ==, 20);

  /* One row only, rank 1: the axis itself is dropped and its entry
   * becomes the per-tensor parameters. */
  M2iMliSubTensorCfg row = { { 0, 3, 1 }, { 1, 1, 4 }, 1 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &row, &v), ==, M2I_MLI_OK);
  g_assert_cmpuint (v.rank, ==, 1);
  g_assert_cmpuint (v.shape[0], ==, 4);
  g_assert_cmpint (v.q.axis, ==, -1);
  g_assert_cmpint (v.q.zero_point, ==, 30);
  g_assert_cmpint (v.q.scale, ==, 103);
  g_assert_cmpint (v.q.scale_frac_bits, ==, 4);
  g_assert_cmpint (((gint8 *) v.data)[0], ==, 19);
}

static void
test_subtensor_of_strided (void)
{
  /* A view of a view keeps the parent's strides: columns 1..4 of the
   * 4x6 plane, then rows 1..3 of those. */
  Fixture f;
  fixture_init (&f);
  M2iMliTensor a, b;
  M2iMliSubTensorCfg c1 = { { 1, 0, 1 }, { 1, 4, 4 }, 2 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &c1, &a), ==, M2I_MLI_OK);
  M2iMliSubTensorCfg c2 = { { 1, 2 }, { 3, 2 }, 2 };
  g_assert_cmpint (m2i_mli_subtensor (&a, &c2, &b), ==, M2I_MLI_OK);
  g_assert_cmpint (b.mem_stride[0], ==, 6);
  g_assert_cmpint (at (&b, 0, 0), ==, 24 + 6 + 3);
  g_assert_cmpint (at (&b, 2, 1), ==, 24 + 18 + 4);
  g_assert_cmpint (m2i_mli_tensor_zero_offset (&b, 0), ==, 10);
  g_assert_cmpuint (b.capacity, ==, 48 - 33);
}

static void
test_subtensor_failures (void)
{
  Fixture f;
  fixture_init (&f);
  M2iMliTensor v, keep;
  memset (&keep, 0xab, sizeof keep);
  v = keep;
  M2iMliSubTensorCfg beyond = { { 0, 3, 0 }, { 1, 2, 6 }, 3 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &beyond, &v), ==, M2I_MLI_BAD_CONFIG);
  M2iMliSubTensorCfg off = { { 2, 0, 0 }, { 1, 1, 1 }, 3 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &off, &v), ==, M2I_MLI_BAD_CONFIG);
  M2iMliSubTensorCfg empty = { { 0, 0, 0 }, { 1, 0, 1 }, 3 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &empty, &v), ==, M2I_MLI_BAD_CONFIG);
  /* rank 1 needs two size-1 dimensions to drop; only one here */
  M2iMliSubTensorCfg rank = { { 0, 0, 0 }, { 1, 2, 3 }, 1 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &rank, &v), ==, M2I_MLI_BAD_CONFIG);
  M2iMliSubTensorCfg big = { { 0, 0, 0 }, { 1, 1, 1 }, 4 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &big, &v), ==, M2I_MLI_BAD_CONFIG);
  g_assert_cmpint (m2i_mli_subtensor (&f.t, NULL, &v), ==, M2I_MLI_BAD_CONFIG);
  M2iMliSubTensorCfg ok = { { 0, 0, 0 }, { 1, 1, 1 }, 3 };
  g_assert_cmpint (m2i_mli_subtensor (&f.t, &ok, NULL), ==, M2I_MLI_BAD_TENSOR);
  M2iMliTensor bad = f.t;
  bad.capacity = 47;
  g_assert_cmpint (m2i_mli_subtensor (&bad, &ok, &v), ==, M2I_MLI_NOT_ENOUGH_MEM);
  bad = f.t;
  bad.data = NULL;
  g_assert_cmpint (m2i_mli_subtensor (&bad, &ok, &v), ==, M2I_MLI_BAD_TENSOR);
  bad = f.t;
  bad.q.scales = NULL;
  g_assert_cmpint (m2i_mli_subtensor (&bad, &ok, &v), ==, M2I_MLI_BAD_QUANT);
  g_assert_true (memcmp (&v, &keep, sizeof v) == 0);    /* untouched on failure */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mli/tensor/element-size", test_element_size);
  g_test_add_func ("/mli/tensor/count", test_count);
  g_test_add_func ("/mli/tensor/strides-span", test_strides_and_span);
  g_test_add_func ("/mli/tensor/quant-getters", test_quant_getters);
  g_test_add_func ("/mli/tensor/subtensor", test_subtensor_basic);
  g_test_add_func ("/mli/tensor/subtensor-of-strided", test_subtensor_of_strided);
  g_test_add_func ("/mli/tensor/subtensor-failures", test_subtensor_failures);
  return g_test_run ();
}
