/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The data-movement kernels — Gather-1/7/8, GatherND-5/8, GatherElements-6,
 * ScatterUpdate-3, ScatterNDUpdate-3/15, ScatterElementsUpdate-3/12,
 * DepthToSpace-1, SpaceToDepth-1, ShuffleChannels-1 — against NumPy loops
 * written from their specifications (tests/data/ir-kernels/gen_movement.py):
 * negative axes and indices, batch dims (broadcast too), int32 and int64
 * indices, every reduction on f32, i32 and boolean data, empty and
 * one-element tensors; results must match bit for bit. Then a large
 * threaded DepthToSpace against the spec's index formula, and the errors:
 * bad attributes and shapes at compile time, indices out of range at run
 * time, each naming the layer. */
#include "case-test.h"

static const KtCase cases[] = {
  { "gather8_batch2", "Gather", "opset8", "batch_dims=2", 0x4 },
  { "gather8_axis2_batch1", "Gather", "opset8", "batch_dims=1", 0x4 },
  { "gather8_negbatch", "Gather", "opset8", "batch_dims=-1", 0x4 },
  { "gather8_oob", "Gather", "opset8", "", 0x4 },
  { "gather7_scalar", "Gather", "opset7", "batch_dims=0", 0x4 },
  { "gather1_u8", "Gather", "opset1", "", 0x4 },
  { "gather8_negaxis", "Gather", "opset11", "", 0x4 },
  { "gather8_empty", "Gather", "opset8", "", 0x4 },
  { "gather8_one", "Gather", "opset8", "", 0x4 },
  { "gnd_elements", "GatherND", "opset8", "", 0 },
  { "gnd_slices_neg", "GatherND", "opset8", "batch_dims=0", 0 },
  { "gnd8_batch2", "GatherND", "opset8", "batch_dims=2", 0 },
  { "gnd5_batch2", "GatherND", "opset5", "batch_dims=2", 0, "gnd8_batch2" },
  { "gnd8_bcast", "GatherND", "opset8", "batch_dims=1", 0 },
  { "gnd_full_i64", "GatherND", "opset5", "", 0 },
  { "gnd_empty", "GatherND", "opset8", "", 0 },
  { "gel_spec2", "GatherElements", "opset6", "axis=1", 0 },
  { "gel_neg", "GatherElements", "opset6", "axis=-2", 0 },
  { "gel_axis0_i32", "GatherElements", "opset6", "axis=0", 0 },
  { "su_spec2", "ScatterUpdate", "opset3", "", 0x8 },
  { "su_neg_2d", "ScatterUpdate", "opset3", "", 0x8 },
  { "su_scalar_i64", "ScatterUpdate", "opset3", "", 0x8 },
  { "snd_spec1", "ScatterNDUpdate", "opset3", "", 0 },
  { "snd_slices", "ScatterNDUpdate", "opset3", "", 0 },
  { "snd_pairs", "ScatterNDUpdate", "opset15", "reduction=none", 0 },
  { "snd15_sum_f32", "ScatterNDUpdate", "opset15", "reduction=sum", 0, "snd15_f32" },
  { "snd15_sub_f32", "ScatterNDUpdate", "opset15", "reduction=sub", 0, "snd15_f32" },
  { "snd15_prod_f32", "ScatterNDUpdate", "opset15", "reduction=prod", 0, "snd15_f32" },
  { "snd15_min_f32", "ScatterNDUpdate", "opset15", "reduction=min", 0, "snd15_f32" },
  { "snd15_max_f32", "ScatterNDUpdate", "opset15", "reduction=max", 0, "snd15_f32" },
  { "snd15_sum_i32", "ScatterNDUpdate", "opset15", "reduction=sum", 0, "snd15_i32" },
  { "snd15_sub_i32", "ScatterNDUpdate", "opset15", "reduction=sub", 0, "snd15_i32" },
  { "snd15_prod_i32", "ScatterNDUpdate", "opset15", "reduction=prod", 0, "snd15_i32" },
  { "snd15_min_i32", "ScatterNDUpdate", "opset15", "reduction=min", 0, "snd15_i32" },
  { "snd15_max_i32", "ScatterNDUpdate", "opset15", "reduction=max", 0, "snd15_i32" },
  { "snd15_sum_bool", "ScatterNDUpdate", "opset15", "reduction=sum", 0, "snd15_bool" },
  { "snd15_sub_bool", "ScatterNDUpdate", "opset15", "reduction=sub", 0, "snd15_bool" },
  { "snd15_prod_bool", "ScatterNDUpdate", "opset15", "reduction=prod", 0, "snd15_bool" },
  { "sel3_axis0", "ScatterElementsUpdate", "opset3", "", 0x8 },
  { "sel3_smaller", "ScatterElementsUpdate", "opset3", "", 0x8 },
#define SEL12(red, init, t) \
  { "sel12_" red "_" #init "_" t, "ScatterElementsUpdate", "opset12", \
    "reduction=" red ";use_init_val=" #init, 0x8, "sel12_" t }
  SEL12 ("sum", 1, "f32"), SEL12 ("sum", 0, "f32"), SEL12 ("prod", 1, "f32"),
  SEL12 ("prod", 0, "f32"), SEL12 ("min", 1, "f32"), SEL12 ("min", 0, "f32"),
  SEL12 ("max", 1, "f32"), SEL12 ("max", 0, "f32"), SEL12 ("mean", 1, "f32"),
  SEL12 ("mean", 0, "f32"), SEL12 ("none", 1, "f32"), SEL12 ("none", 0, "f32"),
  SEL12 ("sum", 1, "i32"), SEL12 ("sum", 0, "i32"), SEL12 ("prod", 1, "i32"),
  SEL12 ("prod", 0, "i32"), SEL12 ("min", 1, "i32"), SEL12 ("min", 0, "i32"),
  SEL12 ("max", 1, "i32"), SEL12 ("max", 0, "i32"), SEL12 ("mean", 1, "i32"),
  SEL12 ("mean", 0, "i32"),
  SEL12 ("sum", 1, "bool"), SEL12 ("prod", 1, "bool"), SEL12 ("min", 1, "bool"),
  SEL12 ("max", 1, "bool"),
#undef SEL12
  { "d2s_df", "DepthToSpace", "opset1", "block_size=2;mode=depth_first", 0 },
  { "d2s_bf", "DepthToSpace", "opset1", "block_size=2;mode=blocks_first", 0, "d2s_df" },
  { "d2s_bf_3d", "DepthToSpace", "opset1", "block_size=2;mode=blocks_first", 0 },
  { "d2s_df_3d", "DepthToSpace", "opset1", "block_size=2;mode=depth_first", 0, "d2s_bf_3d" },
  { "d2s_bf_1d", "DepthToSpace", "opset1", "block_size=3;mode=blocks_first", 0 },
  { "s2d_df", "SpaceToDepth", "opset1", "block_size=2;mode=depth_first", 0 },
  { "s2d_bf", "SpaceToDepth", "opset1", "block_size=2;mode=blocks_first", 0, "s2d_df" },
  { "s2d_bf_3d", "SpaceToDepth", "opset1", "block_size=3;mode=blocks_first", 0 },
  { "shuffle_c3", "ShuffleChannels", "opset1", "axis=1;group=3", 0 },
  { "shuffle_neg", "ShuffleChannels", "opset1", "axis=-1;group=5", 0 },
  { "shuffle_1d", "ShuffleChannels", "opset1", "axis=0;group=4", 0 },
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    kt_run_case (&cases[i]);
}

/* A DepthToSpace large enough to be split over two threads, against the
 * spec's index formula for depth_first on NCHW:
 * out[n][c][h·bs + i][w·bs + j] = in[n][c·bs² + i·bs + j][h][w]. */
static void
test_large_threaded (void)
{
  enum { N = 1, C = 8, BS = 4, H = 64, W = 96 };
  gsize numel = (gsize) N * C * BS * BS * H * W;
  float *x = g_new (float, numel), *want = g_new (float, numel);
  kt_fill (x, numel, 5, -1, 1);
  for (gint c = 0; c < C; c++)
    for (gint i = 0; i < BS; i++)
      for (gint j = 0; j < BS; j++)
        for (gint h = 0; h < H; h++)
          for (gint w = 0; w < W; w++)
            want[((gsize) c * H * BS + h * BS + i) * W * BS + w * BS + j] =
                x[(((gsize) c * BS * BS + i * BS + j) * H + h) * W + w];
  for (gint threads = 1; threads <= 2; threads++) {
    KTest *t = kt_layer ("DepthToSpace", "opset1", "block_size=4;mode=depth_first");
    t->ctx.n_threads = threads;
    kt_input (t, M2I_ET_F32, SHAPE (N, C * BS * BS, H, W), x, FALSE);
    kt_run (t, 1);
    M2iShape want_shape = SHAPE (N, C, H * BS, W * BS);
    g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &want_shape));
    g_assert_cmpint (memcmp (t->outputs[0].data, want, numel * sizeof (float)), ==, 0);
    kt_free (t);
  }
  g_free (x);
  g_free (want);
}

/* ---- errors -------------------------------------------------------------- */

static const float fbuf[64];

static void
expect (const char *type, const char *version, const char *attrs, const M2iShape *shapes,
    const M2iElementType *types, gconstpointer const *data, guint const_mask, gint n,
    gint code, const char *needle)
{
  KTest *t = kt_layer (type, version, attrs);
  for (gint i = 0; i < n; i++)
    kt_input (t, types[i], shapes[i], data[i] ? data[i] : fbuf, (const_mask >> i) & 1);
  kt_expect_error (t, 1, code, needle);
  kt_free (t);
}

#define ET(...) ((const M2iElementType[]) { __VA_ARGS__ })
#define SH(...) ((const M2iShape[]) { __VA_ARGS__ })
#define DATA(...) ((gconstpointer const[]) { __VA_ARGS__ })

static void
test_errors (void)
{
  static const gint64 i_oob[] = { 0, 5 }, i_neg_oob[] = { -6 }, axis0[] = { 0 },
      axis3[] = { 3 }, pair_oob[] = { 1, 4 };
  static const gint32 i32_oob[] = { 2, -3, 0 };
  const M2iElementType f_i_i[] = { M2I_ET_F32, M2I_ET_I64, M2I_ET_I64 };
  /* Gather-7: an index out of range is an error at run time (Gather-8: zeros) */
  expect ("Gather", "opset7", "", SH (SHAPE (5), SHAPE (2), SCALAR), f_i_i,
      DATA (NULL, i_oob, axis0), 0x4, 3, M2I_ERROR_INVALID_ARGUMENT, "index 5");
  expect ("Gather", "opset1", "", SH (SHAPE (5), SHAPE (1), SCALAR), f_i_i,
      DATA (NULL, i_neg_oob, axis0), 0x4, 3, M2I_ERROR_INVALID_ARGUMENT, "index -6");
  expect ("Gather", "opset8", "", SH (SHAPE (5), SHAPE (2), SCALAR), f_i_i,
      DATA (NULL, i_oob, axis3), 0x4, 3, M2I_ERROR_INVALID_ARGUMENT, "axis 3");
  expect ("Gather", "opset8", "batch_dims=2", SH (SHAPE (2, 5), SHAPE (2, 2), SCALAR), f_i_i,
      DATA (NULL, i_oob, axis0), 0x4, 3, M2I_ERROR_INVALID_ARGUMENT, "batch_dims");
  expect ("Gather", "opset8", "batch_dims=-3", SH (SHAPE (2, 5), SHAPE (2, 2), SCALAR), f_i_i,
      DATA (NULL, i_oob, axis0), 0x4, 3, M2I_ERROR_INVALID_ARGUMENT, "batch_dims");
  expect ("Gather", "opset8", "", SH (SHAPE (5), SHAPE (2), SCALAR),
      ET (M2I_ET_F32, M2I_ET_F32, M2I_ET_I64), DATA (NULL, NULL, axis0), 0x4, 3,
      M2I_ERROR_INVALID_ARGUMENT, "integers");

  /* GatherND */
  expect ("GatherND", "opset8", "", SH (SHAPE (3, 4), SHAPE (2)), f_i_i, DATA (NULL, pair_oob),
      0, 2, M2I_ERROR_INVALID_ARGUMENT, "index 4");
  expect ("GatherND", "opset8", "", SH (SHAPE (3, 4), SHAPE (3)), f_i_i, DATA (NULL, pair_oob),
      0, 2, M2I_ERROR_INVALID_ARGUMENT, "last dimension");
  expect ("GatherND", "opset8", "batch_dims=1", SH (SHAPE (3, 4), SHAPE (2, 1)), f_i_i,
      DATA (NULL, pair_oob), 0, 2, M2I_ERROR_INVALID_ARGUMENT, "batch dimension 0");
  expect ("GatherND", "opset8", "batch_dims=2", SH (SHAPE (3, 4), SHAPE (3, 1)), f_i_i,
      DATA (NULL, pair_oob), 0, 2, M2I_ERROR_INVALID_ARGUMENT, "batch_dims 2");

  /* GatherElements */
  expect ("GatherElements", "opset6", "axis=0", SH (SHAPE (2, 3), SHAPE (1, 3)),
      ET (M2I_ET_F32, M2I_ET_I32), DATA (NULL, i32_oob), 0, 2, M2I_ERROR_INVALID_ARGUMENT,
      "index 2");
  expect ("GatherElements", "opset6", "axis=1", SH (SHAPE (2, 3), SHAPE (1, 2)),
      ET (M2I_ET_F32, M2I_ET_I32), DATA (NULL, i32_oob), 0, 2, M2I_ERROR_INVALID_ARGUMENT,
      "except along the axis");
  expect ("GatherElements", "opset6", "", SH (SHAPE (2, 3), SHAPE (2, 3)),
      ET (M2I_ET_F32, M2I_ET_I32), DATA (NULL, i32_oob), 0, 2, M2I_ERROR_MALFORMED, "axis");
  expect ("GatherElements", "opset6", "axis=0", SH (SHAPE (2, 3), SHAPE (2, 3)),
      ET (M2I_ET_F32, M2I_ET_U8), DATA (NULL, NULL), 0, 2, M2I_ERROR_UNSUPPORTED, "u8");

  /* Scatter* */
  const M2iElementType f_i_f_i[] = { M2I_ET_F32, M2I_ET_I64, M2I_ET_F32, M2I_ET_I64 };
  expect ("ScatterUpdate", "opset3", "", SH (SHAPE (5), SHAPE (2), SHAPE (2), SCALAR), f_i_f_i,
      DATA (NULL, i_oob, NULL, axis0), 0x8, 4, M2I_ERROR_INVALID_ARGUMENT, "index 5");
  expect ("ScatterUpdate", "opset3", "", SH (SHAPE (5), SHAPE (2), SHAPE (3), SCALAR), f_i_f_i,
      DATA (NULL, i_oob, NULL, axis0), 0x8, 4, M2I_ERROR_INVALID_ARGUMENT, "updates have shape");
  expect ("ScatterUpdate", "opset3", "", SH (SHAPE (5), SHAPE (2), SHAPE (2), SCALAR), f_i_f_i,
      DATA (NULL, i_oob, NULL, axis0), 0, 4, M2I_ERROR_UNSUPPORTED, "constant");
  expect ("ScatterUpdate", "opset3", "", SH (SHAPE (5), SHAPE (2), SHAPE (2), SCALAR),
      ET (M2I_ET_F32, M2I_ET_I64, M2I_ET_I32, M2I_ET_I64), DATA (NULL, i_oob, NULL, axis0), 0x8,
      4, M2I_ERROR_INVALID_ARGUMENT, "same element type");
  expect ("ScatterNDUpdate", "opset3", "",
      SH (SHAPE (3, 4), SHAPE (1, 2), SHAPE (1)), ET (M2I_ET_F32, M2I_ET_I64, M2I_ET_F32),
      DATA (NULL, pair_oob, NULL), 0, 3, M2I_ERROR_INVALID_ARGUMENT, "index 4");
  expect ("ScatterNDUpdate", "opset15", "reduction=mean",
      SH (SHAPE (3, 4), SHAPE (1, 2), SHAPE (1)), ET (M2I_ET_F32, M2I_ET_I64, M2I_ET_F32),
      DATA (NULL, pair_oob, NULL), 0, 3, M2I_ERROR_UNSUPPORTED, "reduction");
  expect ("ScatterNDUpdate", "opset3", "", SH (SHAPE (3, 4), SHAPE (1, 2), SHAPE (2)),
      ET (M2I_ET_F32, M2I_ET_I64, M2I_ET_F32), DATA (NULL, pair_oob, NULL), 0, 3,
      M2I_ERROR_INVALID_ARGUMENT, "updates have shape");
  expect ("ScatterElementsUpdate", "opset12", "reduction=sum",
      SH (SHAPE (2, 3), SHAPE (1, 2), SHAPE (1, 2), SCALAR), f_i_f_i,
      DATA (NULL, pair_oob, NULL, axis0), 0x8, 4, M2I_ERROR_INVALID_ARGUMENT, "index 4");
  expect ("ScatterElementsUpdate", "opset12", "reduction=mean",
      SH (SHAPE (2, 3), SHAPE (1, 2), SHAPE (1, 2), SCALAR),
      ET (M2I_ET_BOOLEAN, M2I_ET_I64, M2I_ET_BOOLEAN, M2I_ET_I64),
      DATA (NULL, pair_oob, NULL, axis0), 0x8, 4, M2I_ERROR_UNSUPPORTED, "mean on boolean");
  expect ("ScatterElementsUpdate", "opset3", "",
      SH (SHAPE (2, 3), SHAPE (3, 2), SHAPE (3, 2), SCALAR), f_i_f_i,
      DATA (NULL, pair_oob, NULL, axis3), 0x8, 4, M2I_ERROR_INVALID_ARGUMENT, "axis 3");

  /* DepthToSpace, SpaceToDepth, ShuffleChannels */
  const M2iElementType f[] = { M2I_ET_F32 };
  expect ("DepthToSpace", "opset1", "block_size=2;mode=depth_first", SH (SHAPE (1, 6, 2, 2)), f,
      DATA (NULL), 0, 1, M2I_ERROR_INVALID_ARGUMENT, "does not divide");
  expect ("DepthToSpace", "opset1", "block_size=2", SH (SHAPE (1, 8, 2, 2)), f, DATA (NULL), 0, 1,
      M2I_ERROR_MALFORMED, "mode");
  expect ("DepthToSpace", "opset1", "block_size=2;mode=columns", SH (SHAPE (1, 8, 2, 2)), f,
      DATA (NULL), 0, 1, M2I_ERROR_UNSUPPORTED, "blocks_first");
  expect ("DepthToSpace", "opset1", "block_size=0;mode=depth_first", SH (SHAPE (1, 8, 2, 2)), f,
      DATA (NULL), 0, 1, M2I_ERROR_INVALID_ARGUMENT, "block_size 0");
  expect ("SpaceToDepth", "opset1", "block_size=2;mode=depth_first", SH (SHAPE (1, 2, 3, 2)), f,
      DATA (NULL), 0, 1, M2I_ERROR_INVALID_ARGUMENT, "does not divide");
  expect ("SpaceToDepth", "opset1", "block_size=2;mode=depth_first", SH (SHAPE (4, 4)), f,
      DATA (NULL), 0, 1, M2I_ERROR_INVALID_ARGUMENT, "rank 3");
  expect ("ShuffleChannels", "opset1", "group=4", SH (SHAPE (1, 6, 2)), f, DATA (NULL), 0, 1,
      M2I_ERROR_INVALID_ARGUMENT, "group 4");
  expect ("ShuffleChannels", "opset1", "axis=-4;group=1", SH (SHAPE (1, 6, 2)), f, DATA (NULL), 0,
      1, M2I_ERROR_INVALID_ARGUMENT, "axis -4");
}

/* The permutation plan under Transpose and the *ToSpace ops (permute.c)
 * against a naive index loop: random shapes of rank 1 to 7 with unit
 * axes, random orders, every element size, one to three threads — whole
 * rows, and blocks of the input's contiguous axis by the last one (two
 * rows interleaved, as a depth-to-space writes them, and longer last axes,
 * with axes between them). */
/* Transpose as the spec's index loop: output index o → input index by
 * the permuted strides. */
static void
naive_permute (gint rank, const gint64 *dims, const gint *perm, gsize es, const guint8 *src,
    guint8 *want)
{
  gint64 in_stride[8], s = 1, numel = 1;
  for (gint a = rank - 1; a >= 0; a--) {
    in_stride[a] = s;
    s *= dims[a];
    numel *= dims[a];
  }
  for (gint64 o = 0; o < numel; o++) {
    gint64 rem = o, i = 0;
    for (gint a = rank - 1; a >= 0; a--) {
      gint64 d = dims[perm[a]];
      i += rem % d * in_stride[perm[a]];
      rem /= d;
    }
    memcpy (want + o * es, src + i * es, es);
  }
}

/* A YOLO detect head's Transpose [1, 3, 85, H, W] → [1, 3, H, W, 85] (a
 * few blocks with a long contiguous axis by a short last one, the 4-byte
 * case by 16×16 tiles with AVX-512 and 4×4 tiles) at YOLO's sizes, and
 * odd ones whose axes are not multiples of 4 or 16 (16×16 tiles with 4×4
 * ones and single elements right of and below them), every element size,
 * one to three threads. */
static void
test_permute_detect_head (void)
{
  static const gint64 shapes[][5] = { { 1, 3, 85, 13, 13 }, { 1, 3, 85, 52, 52 },
    { 1, 3, 7, 5, 9 }, { 2, 3, 6, 1, 67 }, { 1, 1, 4, 4, 4 }, { 1, 2, 1, 3, 3 },
    { 1, 2, 37, 5, 7 }, { 1, 1, 16, 4, 4 }, { 1, 1, 33, 9, 15 } };
  static const gint perm[] = { 0, 1, 3, 4, 2 };
  for (guint k = 0; k < G_N_ELEMENTS (shapes); k++)
    for (gsize es = 1; es <= 8; es *= 2) {
      gint64 numel = 1;
      for (gint a = 0; a < 5; a++)
        numel *= shapes[k][a];
      guint8 *src = g_malloc (numel * es), *got = g_malloc (numel * es);
      guint8 *want = g_malloc (numel * es);
      for (gint64 i = 0; i < (gint64) (numel * es); i++)
        src[i] = (guint8) g_test_rand_int ();
      naive_permute (5, shapes[k], perm, es, src, want);
      IrKPerm plan;
      ir_k_perm_plan (&plan, 5, shapes[k], perm, es);
      for (gint threads = 1; threads <= 3; threads++) {
        M2iOpContext ctx = { .n_threads = threads };
        memset (got, 0xa5, numel * es);
        ir_k_perm_run (&ctx, &plan, src, got);
        if (memcmp (got, want, numel * es))
          g_error ("[%" G_GINT64_FORMAT ",3,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
              G_GINT64_FORMAT "], element size %" G_GSIZE_FORMAT ", %d threads: differs",
              shapes[k][0], shapes[k][2], shapes[k][3], shapes[k][4], es, threads);
      }
      g_free (src);
      g_free (got);
      g_free (want);
    }
}

static void
test_permute_random (void)
{
  GRand *r = g_rand_new_with_seed (99);
  gint modes[2] = { 0 };
  for (gint done = 0; done < 400; done++) {
    gint rank = g_rand_int_range (r, 1, 8);
    gint64 dims[8], numel = 1;
    for (gint a = 0; a < rank; a++) {
      gint k = g_rand_int_range (r, 0, 10);
      dims[a] = k < 2 ? 1 : k < 5 ? 2 : g_rand_int_range (r, 3, 70);
      numel *= dims[a];
    }
    if (numel > 300000)
      continue;
    gint perm[8];
    for (gint a = 0; a < rank; a++)
      perm[a] = a;
    for (gint a = rank - 1; a > 0; a--) {
      gint b = g_rand_int_range (r, 0, a + 1), t = perm[a];
      perm[a] = perm[b];
      perm[b] = t;
    }
    gsize es = (gsize) 1 << g_rand_int_range (r, 0, 4);
    guint8 *src = g_malloc (numel * es + 1), *got = g_malloc (numel * es + 1);
    guint8 *want = g_malloc (numel * es + 1);
    for (gint64 i = 0; i < (gint64) (numel * es); i++)
      src[i] = (guint8) g_rand_int (r);
    naive_permute (rank, dims, perm, es, src, want);
    IrKPerm plan;
    ir_k_perm_plan (&plan, rank, dims, perm, es);
    modes[plan.unit >= 0]++;
    M2iOpContext ctx = { .n_threads = 1 + done % 3 };
    memset (got, 0xa5, numel * es);
    ir_k_perm_run (&ctx, &plan, src, got);
    if (memcmp (got, want, numel * es))
      g_error ("permutation %d of rank %d, element size %" G_GSIZE_FORMAT " differs", done, rank,
          es);
    g_free (src);
    g_free (got);
    g_free (want);
  }
  g_test_message ("rows %d, blocks %d", modes[0], modes[1]);
  g_assert_cmpint (modes[0], >, 20);
  g_assert_cmpint (modes[1], >, 20);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/movement/cases", test_cases);
  g_test_add_func ("/kernels/movement/large-threaded", test_large_threaded);
  g_test_add_func ("/kernels/movement/errors", test_errors);
  g_test_add_func ("/kernels/movement/permute-random", test_permute_random);
  g_test_add_func ("/kernels/movement/permute-detect-head", test_permute_detect_head);
  return g_test_run ();
}
