/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Convolution-1 and GroupConvolution-1: the blocked kernels against a naive
 * loop written from the specification, over many shapes (odd channel
 * counts, strides, dilations, groups, every auto_pad mode, 1-D and 2-D),
 * against PyTorch's conv1d/conv2d on committed vectors, and the error
 * cases. meson runs this program once per M2I_CPU_DISABLE level, so every
 * micro-kernel is checked. */
#include "kernel-test.h"
#include <ir/kernels/gemm.h>
#include <ir/kernels/conv-winograd.h>
#include <ir/kernels/conv-winocol.h>
#include <ir/kernels/conv-dw.h>
#include <ir/kernels/conv-small.h>

typedef struct {
  gint64 n, c_in, h, w, c_out, groups, kh, kw, sh, sw, dh, dw;
  gint64 pads_begin[2], pads_end[2];
  const char *auto_pad;                /* NULL: explicit */
  gboolean one_d;                      /* rank-3 input, h = kh = 1 */
} ConvCase;

/* Output size and effective pads per the spec's auto_pad rules. */
static gint64
ref_out_size (gint64 in, gint64 k, gint64 s, gint64 d, const char *auto_pad,
    gint64 *pb, gint64 *pe)
{
  gint64 eff = (k - 1) * d + 1;
  if (!auto_pad || !strcmp (auto_pad, "explicit"))
    return (in + *pb + *pe - eff) / s + 1;
  if (!strcmp (auto_pad, "valid")) {
    *pb = *pe = 0;
    return (in - eff) / s + 1;
  }
  gint64 out = (in + s - 1) / s;
  gint64 total = MAX (0, (out - 1) * s + eff - in);
  gboolean upper = !strcmp (auto_pad, "same_upper");
  *pb = upper ? total / 2 : total - total / 2;
  *pe = total - *pb;
  return out;
}

static void
ref_conv (const ConvCase *c, const float *in, const float *w, gint64 oh, gint64 ow,
    gint64 pt, gint64 pl, float *out)
{
  gint64 cin_g = c->c_in / c->groups, cout_g = c->c_out / c->groups;
  for (gint64 n = 0; n < c->n; n++)
    for (gint64 co = 0; co < c->c_out; co++) {
      gint64 g = co / cout_g;
      for (gint64 y = 0; y < oh; y++)
        for (gint64 x = 0; x < ow; x++) {
          double acc = 0;
          for (gint64 ci = 0; ci < cin_g; ci++)
            for (gint64 ky = 0; ky < c->kh; ky++)
              for (gint64 kx = 0; kx < c->kw; kx++) {
                gint64 iy = y * c->sh - pt + ky * c->dh;
                gint64 ix = x * c->sw - pl + kx * c->dw;
                if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w)
                  continue;
                acc += (double) in[((n * c->c_in + g * cin_g + ci) * c->h + iy) * c->w + ix] *
                    w[((co * cin_g + ci) * c->kh + ky) * c->kw + kx];
              }
          out[((n * c->c_out + co) * oh + y) * ow + x] = (float) acc;
        }
    }
}

static gchar *
list2 (const ConvCase *c, gint64 a, gint64 b)
{
  return c->one_d ? g_strdup_printf ("%" G_GINT64_FORMAT, b)
      : g_strdup_printf ("%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, a, b);
}

/* Builds the layer for @c (weights constant unless @runtime_weights). */
static KTest *
conv_test_new (const ConvCase *c, const float *in, const float *w,
    gboolean runtime_weights, gint threads)
{
  gboolean grouped = c->groups > 1 || (c->c_in == c->c_out && c->groups == 1 && c->kh == 3);
  KTest *t = kt_new (grouped ? &ir_kernel_group_convolution : &ir_kernel_convolution,
      "opset1");
  t->ctx.n_threads = threads;
  g_autofree gchar *st = list2 (c, c->sh, c->sw);
  g_autofree gchar *dl = list2 (c, c->dh, c->dw);
  g_autofree gchar *pb = list2 (c, c->pads_begin[0], c->pads_begin[1]);
  g_autofree gchar *pe = list2 (c, c->pads_end[0], c->pads_end[1]);
  kt_attr (t, "strides", st);
  kt_attr (t, "dilations", dl);
  kt_attr (t, "pads_begin", pb);
  kt_attr (t, "pads_end", pe);
  if (c->auto_pad)
    kt_attr (t, "auto_pad", c->auto_pad);
  gint64 cin_g = c->c_in / c->groups, cout_g = c->c_out / c->groups;
  if (c->one_d)
    kt_input (t, M2I_ET_F32, SHAPE (c->n, c->c_in, c->w), in, FALSE);
  else
    kt_input (t, M2I_ET_F32, SHAPE (c->n, c->c_in, c->h, c->w), in, FALSE);
  M2iShape ws;
  if (grouped && c->one_d)
    ws = SHAPE (c->groups, cout_g, cin_g, c->kw);
  else if (grouped)
    ws = SHAPE (c->groups, cout_g, cin_g, c->kh, c->kw);
  else if (c->one_d)
    ws = SHAPE (c->c_out, c->c_in, c->kw);
  else
    ws = SHAPE (c->c_out, c->c_in, c->kh, c->kw);
  kt_input (t, M2I_ET_F32, ws, w, !runtime_weights);
  return t;
}

/* A case's data (pseudo-random in [-1, 1], seeded by its sizes plus
 * @seed) and the naive loop's output for it. */
typedef struct {
  gint64 oh, ow;
  gsize n_out;
  float *in, *w, *want;
} ConvRef;

static ConvRef
conv_ref_new (const ConvCase *c, guint32 seed)
{
  ConvRef r;
  gint64 pt = c->pads_begin[0], pl = c->pads_begin[1];
  gint64 pbh = c->pads_end[0], pbw = c->pads_end[1];
  r.oh = ref_out_size (c->h, c->kh, c->sh, c->dh, c->auto_pad, &pt, &pbh);
  r.ow = ref_out_size (c->w, c->kw, c->sw, c->dw, c->auto_pad, &pl, &pbw);
  g_assert_cmpint (r.oh, >, 0);
  g_assert_cmpint (r.ow, >, 0);
  gsize n_in = c->n * c->c_in * c->h * c->w;
  gsize n_w = c->c_out * (c->c_in / c->groups) * c->kh * c->kw;
  r.n_out = c->n * c->c_out * r.oh * r.ow;
  r.in = g_new (float, n_in);
  r.w = g_new (float, n_w);
  r.want = g_new (float, r.n_out);
  kt_fill (r.in, n_in, (guint32) (n_in + 3 + seed), -1, 1);
  kt_fill (r.w, n_w, (guint32) (n_w + 7 + seed), -1, 1);
  ref_conv (c, r.in, r.w, r.oh, r.ow, pt, pl, r.want);
  return r;
}

static void
conv_ref_clear (ConvRef *r)
{
  g_free (r->in);
  g_free (r->w);
  g_free (r->want);
}

static void
check_case (const ConvCase *c, gboolean runtime_weights, gint threads)
{
  ConvRef r = conv_ref_new (c, 0);
  gint64 oh = r.oh, ow = r.ow;
  gsize n_out = r.n_out;
  const float *want = r.want;

  KTest *t = conv_test_new (c, r.in, r.w, runtime_weights, threads);
  kt_run (t, 1);
  const M2iShape *os = &t->outputs[0].shape;
  g_assert_cmpint (os->rank, ==, c->one_d ? 3 : 4);
  g_assert_cmpint (os->dims[0], ==, c->n);
  g_assert_cmpint (os->dims[1], ==, c->c_out);
  g_assert_cmpint (os->dims[os->rank - 1], ==, ow);
  if (!c->one_d)
    g_assert_cmpint (os->dims[2], ==, oh);
  g_autofree gchar *what = g_strdup_printf ("conv n%" G_GINT64_FORMAT " c%" G_GINT64_FORMAT
      "->%" G_GINT64_FORMAT " g%" G_GINT64_FORMAT " %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
      " k%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " s%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      " d%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT " %s", c->n, c->c_in, c->c_out, c->groups,
      c->h, c->w, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->auto_pad ? c->auto_pad : "explicit");
  kt_assert_close (what, kt_out_f32 (t, 0), want, n_out, 1e-4, 1e-4);
  /* A second run reuses state and scratch: same result. */
  memset (t->outputs[0].data, 0, n_out * sizeof (float));
  g_assert_true (kt_execute (t, NULL));
  kt_assert_close (what, kt_out_f32 (t, 0), want, n_out, 1e-4, 1e-4);
  kt_free (t);
  conv_ref_clear (&r);
}

/* The instruction set this run is meant to exercise is really in use: the
 * level M2I_CPU_DISABLE leaves, or the one M2I_KERNELS forces (meson runs
 * this program with gemm=avx2,winograd=c,dwconv=avx2 too). */
static void
test_arch (void)
{
  const char *off = g_getenv ("M2I_CPU_DISABLE"), *forced = g_getenv ("M2I_KERNELS");
  const char *arch = ir_gemm_arch ()->name;
  g_test_message ("gemm micro-kernel: %s (M2I_CPU_DISABLE=%s, M2I_KERNELS=%s; %s)", arch,
      off ? off : "", forced ? forced : "", m2i_cpu_kernels_string ());
  if (off && !strcmp (off, "all"))
    g_assert_cmpstr (arch, ==, "c");
  else if (off && !strcmp (off, "avx2"))
    g_assert_cmpstr (arch, ==, "c");
  else if (off && !strcmp (off, "avx512"))
    g_assert_true (!strcmp (arch, "avx2") || !strcmp (arch, "c"));
  if (forced && !strcmp (forced, "gemm=avx2,winograd=c,dwconv=avx2") &&
      (m2i_cpu_flags () & M2I_CPU_AVX2)) {
    g_assert_cmpstr (arch, ==, "avx2");
    g_assert_cmpuint (ir_k_level (M2I_KERNELS_WINOGRAD), ==, 0);
    g_assert_cmpuint (ir_k_level (M2I_KERNELS_DWCONV), ==, M2I_CPU_AVX2);
  }
  /* Each family's level, whatever chose it, is one the CPU allows. */
  for (gint f = M2I_KERNELS_GEMM; f <= M2I_KERNELS_INT8; f++)
    g_assert_cmpuint (ir_k_level (f) & ~m2i_cpu_flags (), ==, 0);
}

/* The measured choice (kernel-level.c; what a CPU the per-model table does
 * not list gets): each family's candidates up to the widest level allowed
 * are timed, and the answer is one of them; with one candidate there is
 * nothing to time. The kernels of each candidate are the ones the other
 * runs of this program check against the naive loop. */
static void
test_measured_levels (void)
{
  M2iCpuFlags f = m2i_cpu_flags ();
  gboolean two = (f & M2I_CPU_AVX512F) && (f & M2I_CPU_AVX2) && (f & M2I_CPU_FMA);
  for (gint fam = M2I_KERNELS_GEMM; fam <= M2I_KERNELS_INT8; fam++) {
    double s[2];
    M2iCpuFlags l = ir_k_measure_level (fam, M2I_CPU_AVX512F | M2I_CPU_AVX2, s);
    g_test_message ("family %d: %s (%.3g, %.3g s)", fam, l & M2I_CPU_AVX512F ? "avx512" :
        l & M2I_CPU_AVX2 ? "avx2" : "c", s[0], s[1]);
    g_assert_cmpuint (l & ~f, ==, 0);
    if (two) {
      g_assert_true (l == M2I_CPU_AVX512F || l == M2I_CPU_AVX2);
      g_assert_cmpfloat (s[0], >, 0);
      g_assert_cmpfloat (s[1], >, 0);
    } else {
      g_assert_cmpfloat (s[0], ==, 0);
    }
    /* a bound of AVX2 leaves one candidate: no timing */
    g_assert_cmpuint (ir_k_measure_level (fam, M2I_CPU_AVX2, s), ==,
        (f & M2I_CPU_AVX2) && (f & M2I_CPU_FMA) ? M2I_CPU_AVX2 : 0);
    g_assert_cmpfloat (s[0], ==, 0);
    g_assert_cmpuint (ir_k_measure_level (fam, 0, NULL), ==, 0);
  }
}

static void
test_shapes_fixed (void)
{
  static const ConvCase cases[] = {
    /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
    { 1, 3, 9, 11, 5, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 3, 15, 15, 8, 1, 3, 3, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },  /* squeezenet conv1 */
    { 1, 16, 13, 13, 24, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE }, /* pointwise */
    { 2, 7, 6, 5, 9, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 5, 10, 12, 7, 1, 3, 2, 1, 1, 2, 3, { 2, 1 }, { 0, 3 }, NULL, FALSE },  /* dilated */
    { 1, 4, 8, 8, 6, 1, 3, 3, 2, 1, 1, 1, { 0, 0 }, { 0, 0 }, "same_upper", FALSE },
    { 1, 4, 8, 8, 6, 1, 2, 2, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, "same_lower", FALSE },
    { 1, 4, 9, 7, 6, 1, 4, 4, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "same_upper", FALSE },
    { 1, 4, 9, 7, 6, 1, 4, 4, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "same_lower", FALSE },
    { 1, 4, 9, 9, 6, 1, 3, 3, 2, 2, 1, 1, { 5, 5 }, { 5, 5 }, "valid", FALSE },
    { 1, 6, 7, 7, 6, 6, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },    /* depthwise */
    { 1, 6, 9, 9, 12, 6, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },   /* multiplier 2 */
    { 2, 8, 7, 9, 12, 4, 3, 3, 1, 2, 2, 1, { 2, 0 }, { 1, 1 }, NULL, FALSE },   /* 4 groups */
    { 1, 6, 1, 17, 4, 1, 1, 5, 1, 2, 1, 1, { 0, 2 }, { 0, 2 }, NULL, TRUE },    /* 1-D */
    { 1, 4, 1, 20, 4, 2, 1, 3, 1, 1, 1, 3, { 0, 0 }, { 0, 0 }, "same_upper", TRUE },
    { 1, 1, 28, 28, 8, 1, 5, 5, 1, 1, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },  /* one input channel */
    { 1, 33, 14, 14, 70, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 3, 3, 3, 2, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },    /* 1x1 output */
    /* Strided layers through slots (conv.c): strides 2 to 5, dilations
     * that land every tap on one row phase, a kernel narrower than the
     * stride (unread phases), pads on one side only, groups, 1-D; 7x7 at
     * stride 4 (28 slots) is gathered (im2col) instead. */
    { 1, 5, 17, 19, 9, 1, 3, 3, 2, 2, 1, 1, { 1, 0 }, { 0, 1 }, NULL, FALSE },
    { 2, 4, 23, 22, 7, 1, 5, 5, 3, 3, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 3, 31, 29, 6, 1, 7, 7, 4, 4, 1, 1, { 3, 3 }, { 3, 3 }, NULL, FALSE },
    { 1, 6, 20, 21, 5, 1, 3, 3, 2, 2, 2, 2, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 4, 16, 18, 5, 1, 2, 1, 3, 3, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 4, 21, 21, 5, 1, 3, 3, 5, 5, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 8, 15, 16, 10, 2, 3, 3, 2, 3, 1, 2, { 0, 2 }, { 1, 0 }, NULL, FALSE },
    { 1, 4, 1, 23, 6, 1, 1, 4, 1, 3, 1, 1, { 0, 1 }, { 0, 2 }, NULL, TRUE },
    { 1, 40, 15, 14, 72, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE }, /* K 360 */
    /* Slots over 512 KiB, made a band of output rows at a time (conv.c):
     * YOLOv5's 6×6 stem (two halo rows), groups with a batch and a pad on
     * one side, dilated taps on one row phase. */
    { 1, 3, 200, 204, 8, 1, 6, 6, 2, 2, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 2, 32, 100, 98, 12, 2, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 16, 160, 150, 8, 1, 3, 3, 2, 2, 2, 2, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    /* Stride 1 through column copies (conv.c): pads on one side (outputs
     * narrower than the rows), both sides, the right one only, dilated
     * taps, a kernel almost as wide as the plane, 5x5, groups, batches,
     * 1-D, and pads too wide for copies. */
    { 1, 5, 9, 12, 7, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 0 }, NULL, FALSE },
    { 2, 6, 8, 10, 9, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 2, 2 }, NULL, FALSE },
    { 1, 4, 11, 13, 5, 1, 3, 3, 1, 1, 2, 2, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 4, 11, 13, 5, 1, 3, 3, 1, 1, 2, 3, { 1, 3 }, { 2, 1 }, NULL, FALSE },
    { 1, 3, 6, 6, 4, 1, 5, 5, 1, 1, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 3, 5, 5, 4, 1, 3, 4, 1, 1, 1, 1, { 1, 2 }, { 1, 1 }, NULL, FALSE },
    { 2, 8, 14, 14, 12, 4, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 3, 1, 19, 5, 1, 1, 5, 1, 1, 1, 1, { 0, 2 }, { 0, 1 }, NULL, TRUE },
    { 1, 3, 7, 9, 5, 1, 3, 3, 1, 1, 1, 1, { 1, 2 }, { 1, 2 }, NULL, FALSE },
    { 1, 16, 60, 61, 24, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    check_case (&cases[i], FALSE, 2);
    check_case (&cases[i], i % 3 == 0, i % 2 ? 1 : 3);
  }
}

/* Random shapes: many odd sizes, channel counts around the register tiles,
 * strides, dilations, pads and groups. */
static void
test_shapes_random (void)
{
  static const char *const modes[] = { NULL, "same_upper", "same_lower", "valid" };
  GRand *r = g_rand_new_with_seed (1234);
  gint done = 0;
  while (done < 160) {
    ConvCase c = { 0 };
    c.one_d = g_rand_int_range (r, 0, 6) == 0;
    c.n = g_rand_int_range (r, 1, 3);
    c.groups = g_rand_int_range (r, 0, 4) == 0 ? g_rand_int_range (r, 2, 5) : 1;
    c.c_in = c.groups * g_rand_int_range (r, 1, 20);
    c.c_out = c.groups * g_rand_int_range (r, 1, 60);
    c.h = c.one_d ? 1 : g_rand_int_range (r, 1, 20);
    c.w = g_rand_int_range (r, 1, 30);
    c.kh = c.one_d ? 1 : g_rand_int_range (r, 1, 5);
    c.kw = g_rand_int_range (r, 1, 5);
    c.sh = c.one_d ? 1 : g_rand_int_range (r, 1, 4);
    c.sw = g_rand_int_range (r, 1, 4);
    c.dh = c.one_d ? 1 : g_rand_int_range (r, 1, 3);
    c.dw = g_rand_int_range (r, 1, 3);
    c.pads_begin[0] = c.one_d ? 0 : g_rand_int_range (r, 0, 3);
    c.pads_end[0] = c.one_d ? 0 : g_rand_int_range (r, 0, 3);
    c.pads_begin[1] = g_rand_int_range (r, 0, 3);
    c.pads_end[1] = g_rand_int_range (r, 0, 3);
    c.auto_pad = modes[g_rand_int_range (r, 0, 4)];
    gint64 pt = c.pads_begin[0], pb = c.pads_end[0], pl = c.pads_begin[1], pr = c.pads_end[1];
    if (ref_out_size (c.h, c.kh, c.sh, c.dh, c.auto_pad, &pt, &pb) < 1 ||
        ref_out_size (c.w, c.kw, c.sw, c.dw, c.auto_pad, &pl, &pr) < 1 ||
        c.h + pt + pb < (c.kh - 1) * c.dh + 1 || c.w + pl + pr < (c.kw - 1) * c.dw + 1)
      continue;
    check_case (&c, done % 5 == 4, 1 + done % 3);
    done++;
  }
  g_rand_free (r);
}

/* Each of @n cases compiles onto the path @on_path tells (@what), then
 * matches the naive loop (constant weights on one thread; every other
 * case weights at run time, on two). */
static void
check_on_path (const ConvCase *cases, guint n, gboolean (*on_path) (const M2iOpContext *),
    const char *what)
{
  for (guint i = 0; i < n; i++) {
    ConvRef r = conv_ref_new (&cases[i], 0);
    KTest *t = conv_test_new (&cases[i], r.in, r.w, FALSE, 1);
    GError *error = NULL;
    g_assert_true (kt_infer (t, 1, &error));
    if (!on_path (&t->ctx))
      g_error ("case %u is not %s", i, what);
    kt_free (t);
    conv_ref_clear (&r);
    check_case (&cases[i], FALSE, 1);
    check_case (&cases[i], i % 2 == 0, 2);
  }
}

/* Padded stride-1 layers read in place (conv-edges.h), each checked to
 * take that path: license-plate-recognition's 1×3 and 3×1 layers on odd
 * widths, 3×3 with pads of 1 on wide rows, dilated taps with pads of 2,
 * pads on one side only (outputs narrower than the rows), a 1-D layer,
 * batches and groups; K past one block (several calls per panel, the
 * tap counter carried over); one output channel (the one-row kernels,
 * text-image-super-resolution's last layer). */
static void
test_edges (void)
{
  static const ConvCase cases[] = {
    /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
    { 1, 16, 11, 90, 20, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 16, 22, 92, 19, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 5, 40, 200, 9, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 4, 9, 97, 6, 1, 3, 3, 1, 1, 2, 2, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 4, 30, 180, 7, 1, 3, 3, 1, 1, 1, 1, { 1, 0 }, { 0, 1 }, NULL, FALSE },
    { 1, 4, 10, 64, 5, 1, 5, 1, 1, 1, 1, 1, { 2, 0 }, { 1, 0 }, NULL, FALSE },
    { 2, 20, 8, 75, 22, 2, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 3, 1, 150, 5, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, TRUE },
    { 1, 400, 7, 60, 9, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 4, 30, 200, 1, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },   /* one row */
  };
  /* (the 3×1 of 400 channels would run as F(4, 3) down the columns) */
  ir_winocol_set_enabled (FALSE);
  check_on_path (cases, G_N_ELEMENTS (cases), ir_k_conv_reads_in_place, "read in place");
  ir_winocol_set_enabled (TRUE);
}

/* Stride-1 1×K and K×1 layers keeping the plane's size run on the direct
 * tiles (conv-tap.h), each checked to take that path: license-plate-
 * recognition's 1×3 and 3×1 on 90- and 92-wide planes (panels with and
 * without pad lanes, a short last panel), pads on one side only, 5 and 7
 * taps, dilated taps, planes narrower than a vector, a last panel of
 * every vector count (1 to 3 of 16, 1 to 3 of 8), output channels off
 * the register tile, groups, batches, a 1-D layer, K near
 * M2I_GEMM_MAX_KC, weights computed at run time, one and two threads;
 * panels whose taps above or below read only pads (skipped: the first
 * and last rows of wide planes), input channels in several blocks (the
 * K×1 layers of 64 and 330 channels, 5×1 of 40, 1×3 of 200). */
static void
test_taps (void)
{
  static const ConvCase cases[] = {
    /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
    { 1, 16, 11, 90, 20, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 16, 22, 92, 19, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 8, 6, 41, 9, 1, 1, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 2 }, NULL, FALSE },
    { 1, 8, 9, 13, 12, 1, 3, 1, 1, 1, 1, 1, { 2, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 5, 4, 50, 11, 1, 1, 5, 1, 1, 1, 1, { 0, 2 }, { 0, 2 }, NULL, FALSE },
    { 1, 6, 17, 10, 7, 1, 7, 1, 1, 1, 1, 1, { 3, 0 }, { 3, 0 }, NULL, FALSE },
    { 1, 7, 9, 33, 10, 1, 1, 3, 1, 1, 1, 2, { 0, 2 }, { 0, 2 }, NULL, FALSE },
    { 1, 7, 12, 11, 10, 1, 3, 1, 1, 1, 3, 1, { 3, 0 }, { 3, 0 }, NULL, FALSE },
    { 1, 3, 3, 5, 4, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 4, 2, 7, 9, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 4, 1, 40, 33, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 4, 1, 56, 17, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 4, 1, 72, 5, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 4, 1, 68, 5, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 2, 20, 8, 75, 22, 2, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 3, 1, 150, 5, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, TRUE },
    { 1, 330, 5, 40, 9, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 64, 11, 90, 64, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 200, 4, 70, 17, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 40, 6, 60, 8, 1, 5, 1, 1, 1, 1, 1, { 2, 0 }, { 2, 0 }, NULL, FALSE },
  };
  /* (the 3×1 layers of 64 and 330 channels would run as F(4, 3) down the
   * columns) */
  ir_winocol_set_enabled (FALSE);
  check_on_path (cases, G_N_ELEMENTS (cases), ir_k_conv_uses_taps, "on the direct tiles");
  ir_winocol_set_enabled (TRUE);
}

/* 3×1 layers of at least 32 input channels and 1×3 of at least 64 run
 * as F(4, 3) along the kernel (conv-winocol.h), each checked to take
 * that path, against the naive loop (1e-4): license-plate-recognition's
 * 3×1 64×11×90, 32×22×92 and 64×10×90 (last tile rows of 3, 2 and 4
 * rows), pads on one side or none, planes narrower than a vector, output
 * channels off the register tile, a batch, K in two blocks (330), a last
 * column panel of 3 tiles (the tail kernel), one column; the 1×3 cases
 * below; one and two threads (three: /conv/team). Fused bias, ReLU and
 * Swish: fusion_cases. Fewer channels, pads off the kernel's axis,
 * dilation, stride, weights at run time or the switch off: not on the
 * path. */
static void
test_winocol (void)
{
  static const ConvCase cases[] = {
    /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
    { 1, 64, 11, 90, 64, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 32, 22, 92, 32, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 64, 10, 90, 64, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 40, 5, 7, 37, 1, 3, 1, 1, 1, 1, 1, { 2, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 33, 9, 20, 17, 1, 3, 1, 1, 1, 1, 1, { 0, 0 }, { 2, 0 }, NULL, FALSE },
    { 2, 48, 6, 19, 24, 1, 3, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 330, 7, 30, 70, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 32, 12, 97, 96, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 32, 6, 1, 16, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    /* 1×3 (64 channels and more): the plates' 64×11×90 and 64×10×90 (a
     * last tile of 2 columns), a pad of 2 on one side, none (6 columns),
     * a batch, K in two blocks, rows of more tiles than a block (runs
     * inside a row), one row */
    { 1, 64, 11, 90, 64, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 64, 10, 90, 64, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 64, 3, 17, 37, 1, 1, 3, 1, 1, 1, 1, { 0, 2 }, { 0, 0 }, NULL, FALSE },
    { 1, 70, 4, 9, 20, 1, 1, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 2 }, NULL, FALSE },
    { 2, 64, 2, 8, 16, 1, 1, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 300, 3, 40, 33, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 64, 5, 200, 20, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 64, 1, 88, 16, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
  };
  g_assert_true (ir_winocol_enabled ());
  check_on_path (cases, G_N_ELEMENTS (cases), ir_k_conv_uses_winocol,
      "F(4, 3) down the columns");

  static const ConvCase not_cases[] = {
    { 1, 31, 11, 90, 64, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 64, 11, 90, 64, 1, 3, 1, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 11, 90, 64, 1, 3, 1, 1, 1, 2, 1, { 2, 0 }, { 2, 0 }, NULL, FALSE },
    { 1, 64, 11, 90, 64, 1, 3, 1, 2, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 63, 11, 90, 64, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 64, 11, 90, 64, 1, 1, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  static float buf[64 * 13 * 90];
  for (guint i = 0; i < G_N_ELEMENTS (not_cases); i++) {
    KTest *t = conv_test_new (&not_cases[i], buf, buf, FALSE, 1);
    kt_run (t, 1);
    g_assert_false (ir_k_conv_uses_winocol (&t->ctx));
    kt_free (t);
  }
  KTest *t = conv_test_new (&cases[0], buf, buf, TRUE, 1);
  kt_run (t, 1);
  g_assert_false (ir_k_conv_uses_winocol (&t->ctx));
  kt_free (t);

  ir_winocol_set_enabled (FALSE);
  t = conv_test_new (&cases[0], buf, buf, FALSE, 1);
  kt_run (t, 1);
  g_assert_false (ir_k_conv_uses_winocol (&t->ctx));
  kt_free (t);
  ir_winocol_set_enabled (TRUE);
}

/* Layers with a small output plane run on the small-plane tiles
 * (conv-small.h), each checked to take that path: vehicle-attributes'
 * 128→128 3×3 at stride 2 (9×9 → 5×5) and 1 (5×5), its 64→128 3×3 and
 * 1×1 at stride 2 (18×18 → 9×9); gaze-estimation's 225-pixel plane; odd
 * channel counts (a last channel group and vector part full: 13 → 37,
 * 17, 65, 200 outputs; 3 inputs), pads on one side only, a 5×5 and a 3×2
 * kernel, dilated taps, a 2×2 and a 1×1 output, taps that read only pads for some
 * pixels (pads of 2 on 3×3 planes), a batch of two, 256 pixels (the
 * bound). Each at one thread and two (the channel groups split). */
static void
test_small (void)
{
  static const ConvCase cases[] = {
    /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
    { 1, 128, 9, 9, 128, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 128, 5, 5, 128, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 18, 18, 128, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 18, 18, 128, 1, 1, 1, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 64, 30, 30, 32, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 13, 7, 6, 37, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 3, 11, 10, 17, 1, 3, 3, 2, 2, 1, 1, { 0, 1 }, { 1, 0 }, NULL, FALSE },
    { 1, 20, 8, 9, 65, 1, 5, 5, 1, 1, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 9, 6, 7, 200, 1, 3, 2, 1, 1, 1, 1, { 1, 0 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 9, 9, 24, 1, 3, 3, 1, 1, 2, 2, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 256, 4, 4, 48, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 96, 3, 3, 80, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 10, 3, 3, 16, 1, 3, 3, 1, 1, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 2, 24, 10, 5, 48, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 12, 32, 32, 20, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  check_on_path (cases, G_N_ELEMENTS (cases), ir_k_conv_uses_small,
      "on the small-plane tiles");
  /* Not taken: pointwise at stride 1, planes of one row, 289 pixels,
   * or turned off */
  static const ConvCase off[] = {
    { 1, 64, 7, 7, 64, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 16, 1, 40, 32, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 16, 33, 33, 32, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (off) + 1; i++) {
    const ConvCase *c = i < G_N_ELEMENTS (off) ? &off[i] : &cases[0];
    if (i == G_N_ELEMENTS (off))
      ir_small_set_enabled (FALSE);
    ConvRef r = conv_ref_new (c, 0);
    KTest *t = conv_test_new (c, r.in, r.w, FALSE, 1);
    GError *error = NULL;
    g_assert_true (kt_infer (t, 1, &error));
    g_assert_false (ir_k_conv_uses_small (&t->ctx));
    kt_free (t);
    conv_ref_clear (&r);
  }
  ir_small_set_enabled (TRUE);
}

/* Layers big enough for every blocking level (several K blocks, many
 * column panels, row counts off the register tile) and for the work to be
 * split over threads (a million multiply-adds per slice). */
static void
test_shapes_large (void)
{
  static const ConvCase cases[] = {
    { 1, 70, 20, 23, 37, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 2, 300, 12, 13, 70, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 40, 61, 59, 17, 1, 3, 3, 2, 2, 1, 1, { 1, 0 }, { 0, 1 }, NULL, FALSE },
    { 1, 64, 60, 50, 64, 64, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    /* A few column panels shared out by output-channel blocks too. */
    { 1, 64, 14, 14, 200, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 128, 14, 14, 100, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* One to four output pixels (the tail kernel, output channels along
     * the vector, two row panels at a time and a last one alone): K over
     * several K blocks gathered for one pass (2304, head-pose's 2×2
     * layer), K over one pass (4140: the first pass's sums added back),
     * pointwise on a 2×2 plane (B read in place), 3 and 2 pixels. */
    { 1, 256, 4, 4, 40, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 460, 3, 3, 19, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 512, 2, 2, 24, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 2, 70, 2, 2, 17, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 20, 3, 5, 17, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 30, 4, 3, 33, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* Padded planes of one vector of pixels whose padded grid takes two,
     * K past column copies: gathered (im2col) — 4×4 (head-pose's conv5),
     * 2×8, pads on some sides only, a batch. */
    { 1, 40, 4, 4, 20, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 40, 2, 8, 9, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 2, 37, 4, 4, 17, 1, 3, 3, 1, 1, 1, 1, { 1, 0 }, { 1, 1 }, NULL, FALSE },
    { 1, 36, 5, 3, 8, 1, 3, 3, 1, 1, 1, 1, { 0, 1 }, { 2, 0 }, NULL, FALSE },
    /* Strided layers gathered (im2col: K and C_out past slots) on small
     * planes, through the table of offsets per tap: vehicle-attributes'
     * 9×9 → 5×5 at stride 2, dilated, a batch, 256 pixels (the table's
     * limit, six column panels) and 289 (past it: runs of output rows). */
    { 1, 40, 9, 9, 70, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 2, 40, 11, 10, 66, 1, 3, 3, 2, 3, 2, 1, { 2, 0 }, { 1, 2 }, NULL, FALSE },
    { 1, 40, 32, 32, 66, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 0, 0 }, NULL, FALSE },
    { 1, 40, 34, 34, 66, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    /* Panels whose pixels leave idle lanes, by the tail kernel (5 to 32
     * pixels, an eighth of the lanes idle, rows × K past
     * M2I_GEMM_WIDE_MIN_MACS): a 3×3 plane padded (grid 12 columns, runs;
     * K over two passes), gaze's 8×8 → 3×3 at stride 2 (slots), 14 and 5
     * pixels, a last row panel of 8 rows. */
    { 1, 40, 3, 3, 70, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 500, 3, 3, 20, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 8, 8, 40, 1, 3, 3, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 64, 4, 9, 33, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 2, 120, 3, 7, 17, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* 5×5 planes (25 pixels in three chunks), row panels four at a time
     * and what is left, K over two passes: the sums kept between them
     * (70 rows, padded: runs), or through the output (stride 2, slots:
     * 140 rows a thread); 12 pixels of a 4×3 plane. */
    { 1, 80, 5, 5, 70, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 80, 9, 9, 420, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 2, 64, 6, 5, 41, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* A last panel of whole vectors and up to four pixels more: the
     * vectors by the micro-kernel, the pixels by the tail kernel —
     * vehicle-attributes' 18×18 → 9×9 at stride 2 (48, then 32 + 1),
     * 1×1 at stride 2, a padded 3×11 plane read in place (32 + 1); and a
     * small layer (rows × K under M2I_GEMM_WIDE_MIN_MACS) that keeps the
     * micro-kernel. */
    { 1, 128, 18, 18, 70, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 600, 18, 18, 40, 1, 1, 1, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 64, 3, 11, 30, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 3, 32, 32, 10, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* ... and five to eight pixels more (M2I_GEMM_TAIL_REM_MAX):
     * license-plate-recognition's conv2 (5×1 over 5×88 rows: 48, then
     * 32 + 8; K over two K blocks), 1×1 on 85 and 86 pixels (48, then
     * 32 + 5 and 32 + 6), 71 output channels (a last row panel of 7), a
     * batch. */
    { 1, 256, 5, 88, 128, 1, 5, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 300, 1, 85, 71, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 2, 200, 2, 43, 90, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check_case (&cases[i], FALSE, 3);
}

/* Inside an inference's team of threads (kernels/team.c), where layers are
 * cut into slices from 100 000 multiply-adds: small and large layers of
 * every path, two and three threads. */
typedef struct {
  const ConvCase *cases;
  gint n_cases, threads;
  gint64 handover;                     /* fixed (ir_k_team_fix_handover_ns), or 0 */
} TeamCases;

/* The case on @threads gives the same bits as on one: the slices' paths
 * (each slice's own padded copy or band buffer, or the copy job) only
 * move where the work is done. */
static void
check_same_bits (const ConvCase *c, gint threads)
{
  ConvRef r = conv_ref_new (c, 1);
  KTest *one = conv_test_new (c, r.in, r.w, FALSE, 1);
  KTest *many = conv_test_new (c, r.in, r.w, FALSE, threads);
  kt_run (one, 1);
  kt_run (many, 1);
  g_assert_cmpmem (kt_out_f32 (many, 0), r.n_out * sizeof (float), kt_out_f32 (one, 0),
      r.n_out * sizeof (float));
  kt_free (one);
  kt_free (many);
  conv_ref_clear (&r);
}

static void
team_cases (gpointer data)
{
  const TeamCases *tc = data;
  g_assert_true (ir_k_team_active ());
  if (tc->handover)
    g_assert_cmpint (ir_k_team_handover_ns (), ==, tc->handover);
  for (gint i = 0; i < tc->n_cases; i++) {
    check_case (&tc->cases[i], i % 2 == 1, tc->threads);
    check_same_bits (&tc->cases[i], tc->threads);
  }
}

static void
test_team (void)
{
  static const ConvCase cases[] = {
    { 1, 64, 14, 14, 200, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 28, 28, 40, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 32, 14, 14, 24, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 2, 3, 45, 45, 32, 1, 3, 3, 2, 2, 1, 1, { 0, 0 }, { 1, 1 }, NULL, FALSE },
    { 1, 24, 20, 22, 24, 24, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 48, 9, 9, 96, 2, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    /* padded copies cut by rows: Winograd's of two tile blocks
     * (vehicle-attributes' 18×18), the direct product's (1×3, 3×1) */
    { 1, 64, 18, 18, 64, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 32, 11, 90, 40, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 32, 11, 90, 40, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    /* strided slots in bands, each slice's in its own buffer, though
     * small (vehicle-attributes' 7×7 stride-2 stem: 27 column panels) */
    { 1, 3, 72, 72, 64, 1, 7, 7, 2, 2, 1, 1, { 3, 3 }, { 3, 3 }, NULL, FALSE },
    /* small padded copies, which each slice makes whole in its own area
     * where the hand-over is slow (conv.c, OWN_COPY_HANDOVER_NS):
     * vehicle-attributes' stride-2 slots on 18×18 and 9×9, its 5×5 pad 1 */
    { 1, 64, 18, 18, 128, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 128, 9, 9, 128, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 128, 5, 5, 128, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  /* two threads as if near each other (50 ns: the padded copy is a job)
   * and far apart (1 us: each slice's own); three as measured */
  static const gint64 handovers[] = { 50, 1000 };
  for (gint threads = 2; threads <= 3; threads++)
    for (guint h = 0; h < (threads == 2 ? G_N_ELEMENTS (handovers) : 1); h++) {
      M2iKTeam *team = ir_k_team_new (threads);
      /* at two threads, each member's slices in an area of its own (as
       * requests do), large enough for every case's slice */
      if (threads == 2)
        g_assert_true (ir_k_team_set_slice_scratch (team, 8 << 20));
      gint64 handover = threads == 2 ? handovers[h] : 0;
      ir_k_team_fix_handover_ns (team, handover);
      TeamCases tc = { cases, G_N_ELEMENTS (cases), threads, handover };
      ir_k_team_run (team, team_cases, &tc);
      ir_k_team_free (team);
    }
}

/* PyTorch's conv2d/conv1d on the vectors made by gen.py. */
static void
test_torch_vectors (void)
{
  static const struct {
    const char *name, *strides, *dilations, *pads_begin, *pads_end, *auto_pad;
    gint groups;
  } cases[] = {
    { "conv_basic", "1,1", "1,1", "1,1", "1,1", NULL, 1 },
    { "conv_stride_dil", "2,1", "1,2", "1,2", "0,1", NULL, 1 },
    { "conv_same_upper", "2,2", "1,1", "0,0", "0,0", "same_upper", 1 },
    { "conv_same_lower", "2,2", "1,1", "0,0", "0,0", "same_lower", 1 },
    { "conv_valid", "1,1", "1,1", "3,3", "3,3", "valid", 1 },
    { "gconv_groups", "1,1", "1,1", "1,1", "1,1", NULL, 3 },
    { "gconv_depthwise", "2,2", "1,1", "1,1", "1,1", NULL, 8 },
    { "conv1d", "2", "1", "1", "2", NULL, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree gchar *xn = g_strdup_printf ("%s_x", cases[i].name);
    g_autofree gchar *wn = g_strdup_printf ("%s_w", cases[i].name);
    g_autofree gchar *yn = g_strdup_printf ("%s_y", cases[i].name);
    KtArray *x = kt_load (xn), *w = kt_load (wn), *y = kt_load (yn);
    KTest *t = kt_new (cases[i].groups > 1 ? &ir_kernel_group_convolution
        : &ir_kernel_convolution, "opset1");
    kt_attr (t, "strides", cases[i].strides);
    kt_attr (t, "dilations", cases[i].dilations);
    kt_attr (t, "pads_begin", cases[i].pads_begin);
    kt_attr (t, "pads_end", cases[i].pads_end);
    if (cases[i].auto_pad)
      kt_attr (t, "auto_pad", cases[i].auto_pad);
    kt_input (t, x->type, x->shape, x->data, FALSE);
    kt_input (t, w->type, w->shape, w->data, TRUE);
    kt_run (t, 1);
    g_assert_true (m2i_shape_equal (&t->outputs[0].shape, &y->shape));
    kt_assert_close (cases[i].name, kt_out_f32 (t, 0), y->data,
        m2i_shape_numel (&y->shape), 1e-5, 1e-5);
    kt_free (t);
    kt_array_free (x);
    kt_array_free (w);
    kt_array_free (y);
  }
}

/* Winograd F(2×2, 3×3) (conv-winograd.c), which 3×3 stride-1 layers with
 * 8 or more channels take: one tile, odd output sizes (a tile's second row
 * or column dropped), pads on one side, pads wider than the kernel, every
 * auto_pad, a batch, C_in over a K block (300), C_out over several
 * output-channel blocks, many tile blocks, squeezenet's shapes, tails of 1
 * to 4 tiles past whole vectors (20, 49, 18 and 35 tiles), on one to
 * three threads. Each against the naive loop, and against the direct
 * product (the path it replaces) within rounding; weights computed at run
 * time, and too few channels, keep the direct product. The fused bias and
 * ReLU on this path are in /conv/fused-bias-relu (its 3×3 stride-1
 * cases). */
static void
test_winograd (void)
{
  static const ConvCase cases[] = {
    { 1, 8, 4, 4, 8, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 9, 7, 9, 17, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 2, 12, 10, 11, 70, 1, 3, 3, 1, 1, 1, 1, { 0, 2 }, { 2, 0 }, NULL, FALSE },
    { 1, 8, 5, 6, 16, 1, 3, 3, 1, 1, 1, 1, { 3, 4 }, { 3, 2 }, NULL, FALSE },
    { 1, 10, 9, 8, 12, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "same_lower", FALSE },
    { 1, 10, 8, 9, 12, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "same_upper", FALSE },
    { 1, 10, 9, 8, 12, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "valid", FALSE },
    { 1, 300, 6, 7, 20, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 57, 55, 24, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 56, 56, 64, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 14, 14, 256, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 11, 6, 12, 13, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 20, 13, 10, 40, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  g_assert_true (ir_winograd_enabled ());
  /* Layers of one tile and a few run as the direct product by default:
   * here they take Winograd too. */
  gint min_tiles = ir_winograd_set_min_tiles (1);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const ConvCase *c = &cases[i];
    ConvRef r = conv_ref_new (c, 77 + i);
    const float *in = r.in, *w = r.w, *want = r.want;
    gint64 oh = r.oh, ow = r.ow;
    gsize n_out = r.n_out;
    g_autofree gchar *what = g_strdup_printf ("winograd case %u (%" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " out, c%" G_GINT64_FORMAT "->%" G_GINT64_FORMAT ")", i, oh, ow,
        c->c_in, c->c_out);

    ir_winograd_set_enabled (FALSE);
    KTest *direct = conv_test_new (c, in, w, FALSE, 1);
    kt_run (direct, 1);
    g_assert_false (ir_k_conv_uses_winograd (&direct->ctx));
    ir_winograd_set_enabled (TRUE);
    for (gint threads = 1; threads <= 3; threads++) {
      KTest *t = conv_test_new (c, in, w, FALSE, threads);
      kt_run (t, 1);
      g_assert_true (ir_k_conv_uses_winograd (&t->ctx));
      kt_assert_close (what, kt_out_f32 (t, 0), want, n_out, 1e-4, 1e-4);
      kt_assert_close (what, kt_out_f32 (t, 0), kt_out_f32 (direct, 0), n_out, 1e-4, 1e-4);
      /* Again on the same state and scratch. */
      memset (t->outputs[0].data, 0, n_out * sizeof (float));
      g_assert_true (kt_execute (t, NULL));
      kt_assert_close (what, kt_out_f32 (t, 0), want, n_out, 1e-4, 1e-4);
      kt_free (t);
    }
    /* Weights from another layer: packed at run time, directly. */
    KTest *rt = conv_test_new (c, in, w, TRUE, 2);
    kt_run (rt, 1);
    g_assert_false (ir_k_conv_uses_winograd (&rt->ctx));
    kt_assert_close (what, kt_out_f32 (rt, 0), want, n_out, 1e-4, 1e-4);
    kt_free (rt);
    kt_free (direct);
    conv_ref_clear (&r);
  }

  /* Too few input channels, a stride, a dilation: the direct product. */
  static const ConvCase direct_cases[] = {
    { 1, 7, 9, 9, 16, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 9, 9, 16, 1, 3, 3, 2, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 9, 9, 16, 1, 3, 3, 1, 1, 1, 2, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 9, 9, 16, 1, 3, 5, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  static float buf[16 * 16 * 9 * 5];
  for (guint i = 0; i < G_N_ELEMENTS (direct_cases); i++) {
    KTest *t = conv_test_new (&direct_cases[i], buf, buf, FALSE, 1);
    kt_run (t, 1);
    g_assert_false (ir_k_conv_uses_winograd (&t->ctx));
    kt_free (t);
  }
  ir_winograd_set_min_tiles (min_tiles);
  /* Tile blocks of unequal size (81 tiles: 32 and 49): on two slices,
   * output-channel blocks outermost, one per slice (even work; results
   * checked in /conv/team's 18×18 case); on one, or with tile blocks
   * that share out evenly (25 tiles, one block), tile blocks outermost. */
  static float w64[64 * 64 * 9];
  M2iWinograd *wg = ir_winograd_new (ir_gemm_arch (), w64, 64, 64, 18, 18, 1, 1, 18, 18, 1);
  g_assert_false (wg->channel_major);
  ir_winograd_free (wg);
  if (ir_gemm_arch ()->tail) {
    /* AVX-512's blocks: 16-tile vectors, 48-tile panels */
    wg = ir_winograd_new (ir_gemm_arch (), w64, 64, 64, 18, 18, 1, 1, 18, 18, 2);
    g_assert_true (wg->channel_major);
    g_assert_cmpint (wg->m_blocks, ==, 2);
    ir_winograd_free (wg);
    wg = ir_winograd_new (ir_gemm_arch (), w64, 64, 64, 9, 9, 1, 1, 9, 9, 2);
    g_assert_false (wg->channel_major);
    ir_winograd_free (wg);
  }
  /* By default, too few tiles: the direct product (1 and 9 tiles), and
   * enough (16). */
  static const ConvCase few[] = {
    { 1, 64, 4, 4, 64, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 64, 6, 6, 64, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 8, 8, 64, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  static float big[64 * 64 * 9];
  for (guint i = 0; i < G_N_ELEMENTS (few); i++) {
    KTest *t = conv_test_new (&few[i], big, big, FALSE, 1);
    kt_run (t, 1);
    g_assert_true (ir_k_conv_uses_winograd (&t->ctx) == (i == 2));
    kt_free (t);
  }
}

/* The direct path (conv-dw.h) of depthwise and small-group layers against
 * the naive loop: rows of 1 to 130 outputs (every split into the AVX-512
 * and AVX2 kernels' blocks of four vectors, single vectors and masked
 * ends), 3×3 and 5×5 at strides 1 and 2 (their own unrolled copies),
 * other kernels (1×1, 2×2, 7×1, 6×6 and 16×8 over the whole plane),
 * stride 3 (plain C), dilations, pads of 0 to 3 on either side (wider than
 * the kernel reaches too), channel multipliers, groups of 2 to 8 input
 * channels, batches, 1-D, one to three threads (bands of rows when planes
 * are few), weights computed at run time; then random shapes. With a
 * fused bias and ReLU, the result is exactly the unfused one + bias, then
 * x > 0 ? x : 0 (the Add and ReLU layers' float operations). */
static void
check_direct (const ConvCase *c, guint32 seed, gboolean runtime_weights, gint threads)
{
  ConvRef r = conv_ref_new (c, seed);
  g_autofree gchar *what = g_strdup_printf ("direct n%" G_GINT64_FORMAT " c%" G_GINT64_FORMAT
      "->%" G_GINT64_FORMAT " g%" G_GINT64_FORMAT " %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
      " k%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " s%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      " d%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT " p%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT " %s, %d threads", c->n, c->c_in, c->c_out,
      c->groups, c->h, c->w, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->pads_begin[0],
      c->pads_begin[1], c->pads_end[0], c->pads_end[1], c->auto_pad ? c->auto_pad : "explicit",
      threads);
  KTest *t = conv_test_new (c, r.in, r.w, runtime_weights, threads);
  kt_run (t, 1);
  g_assert_true (ir_k_conv_uses_direct (&t->ctx));
  kt_assert_close (what, kt_out_f32 (t, 0), r.want, r.n_out, 1e-4, 1e-4);

  /* The same layer with a fused bias and ReLU. */
  float *bias = g_new (float, c->c_out);
  kt_fill (bias, c->c_out, seed + 5, -1, 1);
  GError *error = NULL;
  KTest *f = conv_test_new (c, r.in, r.w, runtime_weights, threads);
  g_assert_true (kt_infer (f, 1, &error));
  g_assert_true (ir_k_fuse_bias_relu (&f->ctx, bias, c->c_out, TRUE, &error));
  g_assert_true (kt_execute (f, &error));
  const float *plain = kt_out_f32 (t, 0), *fused = kt_out_f32 (f, 0);
  gsize plane = r.oh * r.ow;
  for (gsize i = 0; i < r.n_out; i++) {
    float x = plain[i] + bias[i / plane % c->c_out];
    x = x > 0.0f ? x : 0.0f;
    if (memcmp (&x, &fused[i], sizeof x))
      g_error ("%s: fused output %" G_GSIZE_FORMAT " is %.9g, the layers give %.9g", what, i,
          fused[i], x);
  }
  kt_free (f);
  kt_free (t);
  g_free (bias);
  conv_ref_clear (&r);
}

static void
direct_cases (void)
{
  static const gint64 widths[] = { 1, 2, 7, 15, 16, 17, 31, 33, 48, 64, 65, 81, 97, 130 };
  /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
  for (guint i = 0; i < G_N_ELEMENTS (widths); i++)
    for (gint64 s = 1; s <= 2; s++)
      for (gint64 k = 3; k <= 5; k += 2) {
        ConvCase c = { 1, 3, 5 + i % 3, widths[i], 3, 3, k, k, s, s, 1, 1,
          { k / 2, k / 2 }, { k / 2, k / 2 }, NULL, FALSE };
        check_direct (&c, (guint32) (i * 8 + s * 2 + k), FALSE, 1 + i % 3);
      }
  static const ConvCase cases[] = {
    { 1, 4, 9, 40, 4, 4, 3, 3, 1, 1, 1, 1, { 0, 2 }, { 2, 0 }, NULL, FALSE },   /* one-sided */
    { 1, 4, 9, 40, 4, 4, 3, 3, 2, 2, 1, 1, { 2, 0 }, { 0, 2 }, NULL, FALSE },
    { 1, 4, 8, 70, 4, 4, 3, 3, 1, 1, 1, 1, { 3, 3 }, { 3, 3 }, NULL, FALSE },   /* wide pads */
    { 1, 4, 8, 70, 4, 4, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "valid", FALSE },
    { 1, 4, 9, 75, 4, 4, 3, 3, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, "same_upper", FALSE },
    { 1, 4, 9, 75, 4, 4, 3, 3, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, "same_lower", FALSE },
    { 1, 5, 12, 90, 5, 5, 3, 3, 1, 1, 2, 2, { 2, 2 }, { 2, 2 }, NULL, FALSE },  /* dilated */
    { 1, 5, 12, 90, 5, 5, 3, 3, 2, 2, 2, 3, { 2, 3 }, { 2, 3 }, NULL, FALSE },
    { 1, 6, 7, 66, 6, 6, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },   /* 1×1 */
    { 1, 6, 8, 66, 6, 6, 2, 2, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 6, 9, 66, 6, 6, 7, 1, 1, 1, 1, 1, { 3, 0 }, { 3, 0 }, NULL, FALSE },
    { 1, 8, 6, 6, 8, 8, 6, 6, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },    /* whole plane */
    { 1, 8, 16, 8, 8, 8, 16, 8, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 6, 5, 7, 4, 2, 5, 7, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },    /* 3 in, 2 out */
    { 1, 4, 13, 70, 4, 4, 3, 3, 3, 3, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },  /* stride 3 */
    { 1, 4, 13, 70, 4, 4, 3, 3, 1, 3, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 4, 13, 70, 4, 4, 3, 3, 3, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 3, 10, 70, 6, 3, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },  /* multiplier 2 */
    { 1, 2, 10, 37, 8, 2, 5, 5, 2, 2, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },  /* multiplier 4 */
    { 1, 8, 10, 70, 8, 4, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },  /* groups of 2 */
    { 1, 12, 9, 70, 4, 4, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },  /* 3 in, 1 out */
    { 1, 16, 9, 33, 16, 2, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE }, /* 8 in, 8 out */
    { 1, 16, 9, 33, 32, 4, 5, 5, 1, 1, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE }, /* 4 in, 8 out */
    { 2, 6, 9, 70, 6, 6, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },   /* batch */
    { 1, 6, 1, 70, 6, 6, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, TRUE },    /* 1-D */
    { 1, 6, 1, 70, 6, 6, 1, 5, 1, 2, 1, 1, { 0, 2 }, { 0, 2 }, NULL, TRUE },
    { 1, 1, 40, 100, 1, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE }, /* bands */
    { 1, 2, 41, 100, 2, 2, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (gint threads = 1; threads <= 3; threads++)
      check_direct (&cases[i], 300 + i, threads == 2, threads);

  GRand *r = g_rand_new_with_seed (4321);
  for (gint done = 0; done < 80;) {
    ConvCase c = { 0 };
    c.one_d = g_rand_int_range (r, 0, 8) == 0;
    c.n = g_rand_int_range (r, 1, 3);
    c.groups = g_rand_int_range (r, 1, 7);
    gint64 cin_g = g_rand_int_range (r, 0, 2) ? 1 : g_rand_int_range (r, 2, 9);
    c.c_in = c.groups * cin_g;
    c.c_out = c.groups * g_rand_int_range (r, 1, cin_g == 1 ? 4 : 9);
    c.h = c.one_d ? 1 : g_rand_int_range (r, 1, 14);
    c.w = g_rand_int_range (r, 1, 110);
    c.kh = c.one_d ? 1 : g_rand_int_range (r, 1, 7);
    c.kw = g_rand_int_range (r, 1, 7);
    c.sh = c.one_d ? 1 : g_rand_int_range (r, 1, 4);
    c.sw = g_rand_int_range (r, 1, 4);
    c.dh = c.one_d ? 1 : g_rand_int_range (r, 1, 3);
    c.dw = g_rand_int_range (r, 1, 3);
    c.pads_begin[0] = c.one_d ? 0 : g_rand_int_range (r, 0, 4);
    c.pads_end[0] = c.one_d ? 0 : g_rand_int_range (r, 0, 4);
    c.pads_begin[1] = g_rand_int_range (r, 0, 4);
    c.pads_end[1] = g_rand_int_range (r, 0, 4);
    gint64 pt = c.pads_begin[0], pb = c.pads_end[0], pl = c.pads_begin[1], pr = c.pads_end[1];
    if ((c.groups == 1 && cin_g > 1) ||
        ref_out_size (c.h, c.kh, c.sh, c.dh, NULL, &pt, &pb) < 1 ||
        ref_out_size (c.w, c.kw, c.sw, c.dw, NULL, &pl, &pr) < 1 ||
        c.h + pt + pb < (c.kh - 1) * c.dh + 1 || c.w + pl + pr < (c.kw - 1) * c.dw + 1)
      continue;
    check_direct (&c, 500 + done, done % 4 == 3, 1 + done % 3);
    done++;
  }
  g_rand_free (r);
}

static void
test_direct (void)
{
  direct_cases ();
  /* The whole-plane layers above ran as dot products (ir_dw_rows_dot);
   * one with pads or more than one output does not. */
  IrDwGeom g = { 16, 8, 1, 1, 16, 8, 1, 1, 1, 1, 0, 0, 1 };
  ir_dw_geom_init (&g);
  g_assert_true (ir_dw_rows_for (&g, ir_k_level (M2I_KERNELS_DWCONV)) == ir_dw_rows_dot);
  IrDwGeom p = { 16, 8, 1, 1, 16, 8, 1, 1, 1, 1, 1, 0, 1 };
  ir_dw_geom_init (&p);
  g_assert_false (ir_dw_rows_for (&p, ir_k_level (M2I_KERNELS_DWCONV)) == ir_dw_rows_dot);
}

/* The same over the row kernels alone: with the plane kernel (AVX-512)
 * they still run the layers it leaves (small groups, dilations, other
 * kernels and strides, bands of rows). */
static void
test_direct_rows (void)
{
  ir_dw_plane_set_enabled (FALSE);
  direct_cases ();
  ir_dw_plane_set_enabled (TRUE);
}

/* The plane kernel (conv-dw.h: IrDwPlane) of depthwise 3×3 and 5×5 layers
 * at strides 1 and 2 against the naive loop: planes from 1×1 to 150×150
 * (grids narrower than a vector, exactly one or two vectors wide, rows of
 * up to 16 vectors; blocks of eight vectors and the last partial block),
 * pads on one side, both or none (valid, same_upper: the image's last
 * columns never read), channel multipliers, batches, one to three
 * threads; fused bias and ReLU as check_direct (). On an AVX-512 kernel
 * level the second list runs through it (the first partly: planes whose
 * rows are whole vectors stay on the row kernels). */
static void
test_direct_plane (void)
{
  static const gint64 sizes[][2] = { { 1, 1 }, { 2, 3 }, { 5, 5 }, { 7, 12 }, { 10, 10 },
    { 15, 15 }, { 19, 19 }, { 20, 20 }, { 31, 17 }, { 38, 38 }, { 9, 64 } };
  M2iCpuFlags level = ir_k_level (M2I_KERNELS_DWCONV);
  gboolean plane = (level & M2I_CPU_AVX512F) && (m2i_cpu_flags () & M2I_CPU_AVX512F) &&
      ir_dw_plane_enabled ();
  gint n = 0;
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (gint64 s = 1; s <= 2; s++)
      for (gint64 k = 3; k <= 5; k += 2) {
        gint64 p = (i % 3 == 2) ? 0 : k / 2;
        ConvCase c = { 1 + i % 2, 12, sizes[i][0], sizes[i][1], 12, 12, k, k, s, s, 1, 1,
          { p, i % 4 == 1 ? 0 : p }, { i % 4 == 3 ? 0 : p, p }, NULL, FALSE };
        gint64 pt = c.pads_begin[0], pl = c.pads_begin[1];
        gint64 pb = c.pads_end[0], pr = c.pads_end[1];
        if (ref_out_size (c.h, k, s, 1, NULL, &pt, &pb) < 1 ||
            ref_out_size (c.w, k, s, 1, NULL, &pl, &pr) < 1)
          continue;
        check_direct (&c, (guint32) (700 + i * 8 + s * 2 + k), FALSE, 1 + (gint) (i % 3));
        n++;
      }
  static const ConvCase cases[] = {
    /* n cin h w cout g kh kw sh sw dh dw pb pe auto */
    { 1, 4, 20, 20, 4, 4, 3, 3, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, "same_upper", FALSE },
    { 1, 4, 19, 21, 4, 4, 5, 5, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, "same_upper", FALSE },
    { 1, 4, 19, 19, 4, 4, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, "valid", FALSE },
    { 1, 4, 22, 23, 4, 4, 5, 5, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, "valid", FALSE },
    { 1, 4, 13, 9, 4, 4, 5, 5, 1, 1, 1, 1, { 0, 4 }, { 4, 0 }, NULL, FALSE },
    { 1, 6, 10, 10, 12, 6, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },  /* ×2 */
    { 1, 4, 10, 10, 8, 4, 5, 5, 2, 2, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    { 1, 2, 150, 150, 2, 2, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 2, 60, 60, 2, 2, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    check_direct (&cases[i], 900 + i, i % 2, 1);
    n++;
  }
  g_assert_cmpint (n, >=, 40);
  if (!plane)
    return;
  /* A "same" 3×3 layer at stride 1 reads its input in place (conv-dw.h):
   * the taps across a row's ends left out, those above and below it
   * loaded as zeros — bit for bit the row kernels' sums, which load the
   * first as zeros and leave the second out. Planes of one block of four
   * to many of eight, rows narrower and wider than a vector, in-place
   * blocks and blocks masked at both ends; ReLU and bias fused. */
  static const gint64 same[][2] = { { 4, 11 }, { 5, 5 }, { 7, 12 }, { 19, 19 }, { 38, 38 },
    { 24, 42 }, { 75, 75 }, { 9, 33 } };
  for (guint i = 0; i < G_N_ELEMENTS (same); i++) {
    ConvCase c = { 1 + i % 2, 20, same[i][0], same[i][1], 20, 20, 3, 3, 1, 1, 1, 1,
      { 1, 1 }, { 1, 1 }, NULL, FALSE };
    ConvRef r = conv_ref_new (&c, 1100 + i);
    float *bias = g_new (float, c.c_out);
    kt_fill (bias, c.c_out, 1200 + i, -1, 1);
    const float *out[2];
    KTest *t[2];
    for (gint rows = 0; rows < 2; rows++) {
      ir_dw_plane_set_enabled (!rows);
      GError *error = NULL;
      t[rows] = conv_test_new (&c, r.in, r.w, FALSE, 1 + (gint) (i % 3));
      g_assert_true (kt_infer (t[rows], 1, &error));
      g_assert_true (ir_k_fuse_bias_relu (&t[rows]->ctx, bias, c.c_out, i % 2, &error));
      g_assert_true (kt_execute (t[rows], &error));
      g_assert_true (ir_k_conv_uses_dw_plane (&t[rows]->ctx) == !rows);
      out[rows] = kt_out_f32 (t[rows], 0);
    }
    ir_dw_plane_set_enabled (TRUE);
    /* the naive loop + bias, ReLU on every other case */
    float *want = g_new (float, r.n_out);
    for (gsize e = 0; e < r.n_out; e++) {
      want[e] = r.want[e] + bias[e / (r.oh * r.ow) % c.c_out];
      if (i % 2)
        want[e] = want[e] > 0.0f ? want[e] : 0.0f;
    }
    kt_assert_close ("in place", out[0], want, r.n_out, 1e-4, 1e-4);
    g_free (want);
    if (memcmp (out[0], out[1], r.n_out * sizeof (float)))
      g_error ("same 3x3 on %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ": the plane kernel's "
          "bits differ from the row kernels'", c.h, c.w);
    kt_free (t[0]);
    kt_free (t[1]);
    g_free (bias);
    conv_ref_clear (&r);
  }
  /* every case of this list ran through the plane kernel */
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    ConvRef r = conv_ref_new (&cases[i], 0);
    KTest *t = conv_test_new (&cases[i], r.in, r.w, FALSE, 1);
    kt_run (t, 1);
    g_assert_true (ir_k_conv_uses_dw_plane (&t->ctx));
    kt_free (t);
    conv_ref_clear (&r);
  }
}

static KTest *err_conv (const M2iOpKernel *k, M2iShape xs, M2iShape ws, M2iElementType type);

/* A convolution with a fused bias and ReLU gives exactly (bit for bit) what
 * the Convolution, Add and ReLU kernels give one after the other, on every
 * path: stride 1 with pads (a grid row per vector, several rows per vector
 * on small planes), pointwise (whole vectors, a partial last panel),
 * strided (slots, or im2col for 1x1), depthwise, groups, one output channel, and K over one
 * block (the results of the first block added back before the epilogue),
 * with output channels that leave the last row panel part-used, and
 * output channels cut into blocks between two threads. */
static const ConvCase fusion_cases[] = {
    /* the small-plane tiles (conv-small.h): two channel groups, a part one */
    { 1, 40, 9, 9, 150, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 16, 14, 14, 40, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 24, 13, 13, 64, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 2, 3, 31, 29, 20, 1, 3, 3, 2, 2, 1, 1, { 0, 1 }, { 1, 0 }, NULL, FALSE },
    { 1, 8, 15, 17, 20, 1, 1, 1, 2, 2, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 12, 21, 37, 12, 12, 3, 3, 2, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 12, 9, 9, 24, 3, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 5, 10, 10, 1, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 40, 14, 14, 21, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 64, 5, 5, 19, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 300, 7, 9, 13, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 128, 14, 14, 100, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* a 4×4 plane gathered (im2col), the tail kernel: 2 pixels, K over
     * one pass, paired row panels */
    { 1, 40, 4, 4, 20, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 460, 3, 4, 21, 1, 3, 3, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    { 1, 512, 2, 2, 24, 1, 1, 1, 1, 1, 1, 1, { 0, 0 }, { 0, 0 }, NULL, FALSE },
    /* the tail kernel on 9 pixels (runs) and on a 9×9 plane's last pixel */
    { 1, 64, 3, 3, 40, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 128, 18, 18, 21, 1, 3, 3, 2, 2, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    /* Winograd with odd sizes, one and three tile blocks (partial rows) */
    { 1, 16, 13, 11, 24, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 8, 23, 21, 16, 1, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    /* F(4, 3) down the columns: a last tile row of 3 rows; across the
     * rows: a last tile of 1 column */
    { 1, 32, 11, 30, 20, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 64, 5, 37, 20, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    /* depthwise through the plane kernel (AVX-512), strides 1 and 2 */
    { 1, 24, 19, 19, 24, 24, 3, 3, 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, NULL, FALSE },
    { 1, 24, 20, 20, 24, 24, 5, 5, 2, 2, 1, 1, { 2, 2 }, { 2, 2 }, NULL, FALSE },
    /* the direct 1×K / K×1 tiles (conv-tap.h), a short last panel; input
     * channels in two and three blocks (the epilogue on the last) */
    { 1, 16, 11, 90, 20, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
    { 1, 9, 7, 30, 13, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 64, 11, 90, 24, 1, 3, 1, 1, 1, 1, 1, { 1, 0 }, { 1, 0 }, NULL, FALSE },
    { 1, 200, 3, 50, 9, 1, 1, 3, 1, 1, 1, 1, { 0, 1 }, { 0, 1 }, NULL, FALSE },
};

/* Input, weights and bias of a fusion case (free them with g_free), the
 * input holding one NaN. */
static void
fusion_data (const ConvCase *c, guint32 seed, float **in, float **w, float **bias)
{
  gsize n_in = c->n * c->c_in * c->h * c->w;
  gsize n_w = c->c_out * (c->c_in / c->groups) * c->kh * c->kw;
  *in = g_new (float, n_in);
  *w = g_new (float, n_w);
  *bias = g_new (float, c->c_out);
  kt_fill (*in, n_in, seed, -1, 1);
  kt_fill (*w, n_w, seed + 1, -1, 1);
  kt_fill (*bias, c->c_out, seed + 2, -1, 1);
  (*in)[n_in / 3] = NAN;
}

/* Threads the fusion cases compile for: 2, or 1. */
static gint fusion_threads = 2;

static void
test_fused_bias_relu (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (fusion_cases); i++) {
    const ConvCase *c = &fusion_cases[i];
    float *in, *w, *bias;
    fusion_data (c, 41 + i, &in, &w, &bias);   /* ReLU (NaN) is 0, as the ReLU layer gives */
    for (gint relu = 0; relu < 2; relu++) {
      /* Separate layers. */
      KTest *conv = conv_test_new (c, in, w, FALSE, fusion_threads);
      kt_run (conv, 1);
      M2iShape os = conv->outputs[0].shape;
      gsize n_out = m2i_shape_numel (&os);
      M2iShape bs = { os.rank };
      for (gint d = 0; d < os.rank; d++)
        bs.dims[d] = d == 1 ? c->c_out : 1;
      KTest *add = kt_new (&ir_kernel_add, "opset1");
      kt_input (add, M2I_ET_F32, os, conv->outputs[0].data, FALSE);
      kt_input (add, M2I_ET_F32, bs, bias, TRUE);
      kt_run (add, 1);
      KTest *act = kt_new (&ir_kernel_relu, "opset1");
      kt_input (act, M2I_ET_F32, os, add->outputs[0].data, FALSE);
      kt_run (act, 1);
      const float *want = relu ? kt_out_f32 (act, 0) : kt_out_f32 (add, 0);
      /* Fused. */
      KTest *fused = conv_test_new (c, in, w, FALSE, fusion_threads);
      GError *error = NULL;
      g_assert_true (kt_infer (fused, 1, &error));
      g_assert_true (ir_k_fuse_bias_relu (&fused->ctx, bias, c->c_out, relu, &error));
      g_assert_true (kt_execute (fused, &error));
      g_assert_cmpmem (fused->outputs[0].data, n_out * 4, want, n_out * 4);
      kt_free (conv);
      kt_free (add);
      kt_free (act);
      kt_free (fused);
    }
    g_free (in);
    g_free (w);
    g_free (bias);
  }

  /* Not a fusable layer, or a bias of the wrong length. */
  static float buf[64];
  KTest *t = kt_new (&ir_kernel_relu, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (4), buf, FALSE);
  kt_run (t, 1);
  GError *error = NULL;
  g_assert_false (ir_k_fuse_bias_relu (&t->ctx, buf, 4, TRUE, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  kt_free (t);
  t = err_conv (&ir_kernel_convolution, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  g_assert_true (kt_infer (t, 1, &error));
  g_assert_false (ir_k_fuse_bias_relu (&t->ctx, buf, 3, TRUE, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "needs 4 values"));
  g_clear_error (&error);
  kt_free (t);
}

/* A convolution with a fused bias and Swish gives exactly what the
 * Convolution (bias fused) and the Swish kernel give one after the other,
 * on the same paths as the bias and ReLU (GEMM panels with and without
 * runs, the tail kernel, strided slots, im2col, Winograd, depthwise,
 * groups), NaN included, with beta 1 and 0.6. */
static void test_fused_swish (void);

/* The fusion cases on one thread, and on one thread with F(4, 3) along
 * the kernel off (their 3×1 layers of 32 and 64 channels on the direct
 * tiles, input channels in blocks, the epilogue on the last). */
static void
test_fused_one_thread (void)
{
  fusion_threads = 1;
  test_fused_bias_relu ();
  test_fused_swish ();
  ir_winocol_set_enabled (FALSE);
  test_fused_bias_relu ();
  test_fused_swish ();
  ir_winocol_set_enabled (TRUE);
  fusion_threads = 2;
}

static void
test_fused_swish (void)
{
  gint winograd = 0, winocol = 0;
  for (guint i = 0; i < G_N_ELEMENTS (fusion_cases); i++) {
    const ConvCase *c = &fusion_cases[i];
    float *in, *w, *bias;
    fusion_data (c, 61 + i, &in, &w, &bias);
    const float beta = i % 2 ? 0.6f : 1.0f;
    GError *error = NULL;
    KTest *conv = conv_test_new (c, in, w, FALSE, fusion_threads);
    g_assert_true (kt_infer (conv, 1, &error));
    g_assert_true (ir_k_fuse_bias_relu (&conv->ctx, bias, c->c_out, FALSE, &error));
    g_assert_true (kt_execute (conv, &error));
    M2iShape os = conv->outputs[0].shape;
    gsize n_out = m2i_shape_numel (&os);
    KTest *act = kt_new (&ir_kernel_swish, "opset4");
    kt_input (act, M2I_ET_F32, os, conv->outputs[0].data, FALSE);
    kt_input (act, M2I_ET_F32, SCALAR, &beta, TRUE);
    kt_run (act, 1);
    KTest *fused = conv_test_new (c, in, w, FALSE, fusion_threads);
    g_assert_true (kt_infer (fused, 1, &error));
    g_assert_true (ir_k_fuse_bias_relu (&fused->ctx, bias, c->c_out, FALSE, &error));
    g_assert_true (ir_k_fuse_swish (&fused->ctx, beta, &error));
    g_assert_true (kt_execute (fused, &error));
    winograd += ir_k_conv_uses_winograd (&fused->ctx);
    winocol += ir_k_conv_uses_winocol (&fused->ctx);
    g_assert_cmpmem (fused->outputs[0].data, n_out * 4, act->outputs[0].data, n_out * 4);
    kt_free (conv);
    kt_free (act);
    kt_free (fused);
    g_free (in);
    g_free (w);
    g_free (bias);
  }
  if (ir_winograd_enabled ())
    g_assert_cmpint (winograd, >=, 4);
  g_assert_cmpint (winocol, ==, ir_winocol_enabled () ? 3 : 0);

  /* Not with a fused ReLU, nor into a MatMul. */
  static float buf[64];
  GError *error = NULL;
  KTest *t = err_conv (&ir_kernel_convolution, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  g_assert_true (kt_infer (t, 1, &error));
  g_assert_true (ir_k_fuse_bias_relu (&t->ctx, NULL, 0, TRUE, &error));
  g_assert_false (ir_k_fuse_swish (&t->ctx, 1.0f, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  kt_free (t);
  t = kt_new (&ir_kernel_matmul, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (2, 4), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3), buf, TRUE);
  g_assert_true (kt_infer (t, 1, &error));
  g_assert_false (ir_k_fuse_swish (&t->ctx, 1.0f, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  kt_free (t);
}

static KTest *
err_conv (const M2iOpKernel *k, M2iShape xs, M2iShape ws, M2iElementType type)
{
  static float buf[4096];
  KTest *t = kt_new (k, "opset1");
  kt_attr (t, "strides", "1,1");
  kt_attr (t, "pads_begin", "0,0");
  kt_attr (t, "pads_end", "0,0");
  kt_attr (t, "dilations", "1,1");
  kt_input (t, type, xs, buf, FALSE);
  kt_input (t, type, ws, buf, TRUE);
  return t;
}

static void
test_errors (void)
{
  const M2iOpKernel *cv = &ir_kernel_convolution, *gc = &ir_kernel_group_convolution;
  KTest *t;

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 2, 3, 3), M2I_ET_F32);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not match input");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3), M2I_ET_F32);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expected rank 4");
  kt_free (t);

  t = err_conv (gc, SHAPE (1, 6, 8, 8), SHAPE (4, 1, 1, 3, 3), M2I_ET_F32);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "groups");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_I32);
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "element type i32");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 4, 8, 8), SHAPE (4, 3, 1, 3, 3), M2I_ET_F32);
  kt_attr (t, "strides", "1,1,1");
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "only 1-D and 2-D");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  kt_attr (t, "strides", "1");
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "strides");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  kt_attr (t, "strides", "0,1");
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "out of range");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  kt_attr (t, "strides", "a,b");
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "strides");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  kt_attr (t, "auto_pad", "sometimes");
  kt_expect_error (t, 1, M2I_ERROR_UNSUPPORTED, "auto_pad");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 2, 2), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "does not fit");
  kt_free (t);

  t = err_conv (cv, SHAPE (1, 3, 8, 8), SHAPE (4, 3, 3, 3), M2I_ET_F32);
  t->ctx.n_inputs = 1;
  kt_expect_error (t, 1, M2I_ERROR_INVALID_ARGUMENT, "expects 2 inputs, has 1");
  kt_free (t);

  /* Missing required strides. */
  t = kt_new (cv, "opset1");
  kt_input (t, M2I_ET_F32, SHAPE (1, 3, 8, 8), NULL, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (4, 3, 3, 3), NULL, FALSE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "strides is required");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/conv/arch", test_arch);
  g_test_add_func ("/conv/measured-levels", test_measured_levels);
  g_test_add_func ("/conv/shapes-fixed", test_shapes_fixed);
  g_test_add_func ("/conv/shapes-random", test_shapes_random);
  g_test_add_func ("/conv/shapes-large", test_shapes_large);
  g_test_add_func ("/conv/team", test_team);
  g_test_add_func ("/conv/torch", test_torch_vectors);
  g_test_add_func ("/conv/errors", test_errors);
  g_test_add_func ("/conv/fused-bias-relu", test_fused_bias_relu);
  g_test_add_func ("/conv/fused-swish", test_fused_swish);
  g_test_add_func ("/conv/fused-one-thread", test_fused_one_thread);
  g_test_add_func ("/conv/winograd", test_winograd);
  g_test_add_func ("/conv/direct", test_direct);
  g_test_add_func ("/conv/direct-rows", test_direct_rows);
  g_test_add_func ("/conv/direct-plane", test_direct_plane);
  g_test_add_func ("/conv/edges", test_edges);
  g_test_add_func ("/conv/taps", test_taps);
  g_test_add_func ("/conv/winocol", test_winocol);
  g_test_add_func ("/conv/small", test_small);
  return g_test_run ();
}
