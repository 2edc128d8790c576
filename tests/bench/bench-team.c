/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-team — where splitting a layer over an inference's two threads
 * starts to pay: the measurement behind ir_k_slices_for()'s threshold
 * (kernels/kernel-util.c).
 *
 * Usage: bench-team [--min-ms N]
 *
 * Inside a team of two (kernels/team.c, as an inference runs), each layer
 * of a ladder of sizes — 3×3 and 1×1 convolutions (the GEMM), depthwise
 * 3×3 (the direct kernel), from ten thousand to a few million multiply-adds
 * — runs whole on the calling thread (n_threads 1) and split over the two
 * (n_threads 2, the work split whatever its size), in turns. For each: the
 * fastest run (both cores free: what the hand-over itself costs) and the
 * median (on a shared machine, the other core is sometimes busy: a slice
 * handed to it then waits). The last column is two threads' median over
 * one's: below 1 splitting pays. The threshold is set where the median
 * ratio crosses 1 for each kind of layer.
 */
#include "kernel-test.h"

#include <stdlib.h>
#include <time.h>

typedef struct {
  const char *kind;
  gint c_in, h, w, c_out, k, groups;
  gint stride;                         /* 0: 1 */
} Layer;

static const Layer layers[] = {
  { "conv3x3", 8, 6, 6, 8, 3, 1 },
  { "conv3x3", 8, 10, 10, 16, 3, 1 },
  { "conv3x3", 16, 10, 10, 16, 3, 1 },
  { "conv3x3", 16, 14, 14, 32, 3, 1 },
  { "conv3x3", 32, 14, 14, 32, 3, 1 },
  { "conv3x3", 32, 20, 20, 64, 3, 1 },
  { "conv1x1", 32, 8, 8, 32, 1, 1 },
  { "conv1x1", 64, 8, 8, 64, 1, 1 },
  { "conv1x1", 64, 14, 14, 64, 1, 1 },
  { "conv1x1", 128, 14, 14, 128, 1, 1 },
  { "conv1x1", 128, 28, 28, 128, 1, 1 },
  { "dw3x3", 32, 8, 8, 32, 3, 32 },
  { "dw3x3", 64, 14, 14, 64, 3, 64 },
  { "dw3x3", 128, 20, 20, 128, 3, 128 },
  { "dw3x3", 128, 40, 40, 128, 3, 128 },
  { "dw3x3", 256, 56, 56, 256, 3, 256 },
  /* vehicle-attributes-recognition-barrier-0039's 128-channel layers */
  { "conv3x3", 64, 18, 18, 128, 3, 1, 2 },
  { "conv3x3", 128, 9, 9, 128, 3, 1 },
  { "conv3x3", 128, 9, 9, 128, 3, 1, 2 },
  { "conv3x3", 128, 5, 5, 128, 3, 1 },
};

typedef struct {
  KTest *t[2];
  double *ms[2];
  gint runs;
} Job;

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
body (gpointer data)
{
  Job *j = data;
  for (gint i = 0; i < j->runs; i++)
    for (gint n = 0; n < 2; n++) {
      gint which = i % 2 ? 1 - n : n;          /* alternate the order */
      double t0 = now_ms ();
      kt_execute (j->t[which], NULL);
      j->ms[which][i] = now_ms () - t0;
    }
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  double min_ms = 300;
  for (int i = 1; i < argc; i++)
    if (!strcmp (argv[i], "--min-ms") && i + 1 < argc)
      min_ms = g_ascii_strtod (argv[++i], NULL);
  M2iKTeam *team = ir_k_team_new (2);
  gint64 threshold = ir_k_set_team_slice_work (1);      /* split whatever the size */
  printf ("%-8s %-16s %9s | %9s %9s | %9s %9s | %7s\n", "kind", "shape", "MACs", "1t min",
      "2t min", "1t med", "2t med", "2t/1t");
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    const Layer *L = &layers[l];
    gint pad = L->k / 2, cin_g = L->c_in / L->groups, stride = MAX (L->stride, 1);
    gint oh = (L->h + 2 * pad - L->k) / stride + 1, ow = (L->w + 2 * pad - L->k) / stride + 1;
    gint64 macs = (gint64) L->c_out * oh * ow * cin_g * L->k * L->k;
    gsize n_in = (gsize) L->c_in * L->h * L->w, n_w = (gsize) L->c_out * cin_g * L->k * L->k;
    float *in = g_new (float, n_in), *wts = g_new (float, n_w);
    kt_fill (in, n_in, 1, -1, 1);
    kt_fill (wts, n_w, 2, -0.1f, 0.1f);
    g_autofree gchar *p = g_strdup_printf ("%d,%d", pad, pad);
    g_autofree gchar *st = g_strdup_printf ("%d,%d", stride, stride);
    Job j = { { NULL } };
    for (gint n = 0; n < 2; n++) {
      KTest *t = kt_new (L->groups > 1 ? &ir_kernel_group_convolution : &ir_kernel_convolution,
          "opset1");
      t->ctx.n_threads = n + 1;
      kt_attr (t, "strides", st);
      kt_attr (t, "dilations", "1,1");
      kt_attr (t, "pads_begin", p);
      kt_attr (t, "pads_end", p);
      kt_input (t, M2I_ET_F32, SHAPE (1, L->c_in, L->h, L->w), in, FALSE);
      if (L->groups > 1)
        kt_input (t, M2I_ET_F32, SHAPE (L->groups, L->c_out / L->groups, cin_g, L->k, L->k), wts,
            TRUE);
      else
        kt_input (t, M2I_ET_F32, SHAPE (L->c_out, L->c_in, L->k, L->k), wts, TRUE);
      GError *error = NULL;
      if (!kt_infer (t, 1, &error))
        g_error ("%s", error->message);
      j.t[n] = t;
    }
    /* as many runs as fit min_ms, from a first timing */
    double t0 = now_ms ();
    kt_execute (j.t[0], NULL);
    double once = MAX (now_ms () - t0, 1e-4);
    j.runs = (gint) CLAMP (min_ms / once / 2, 51, 20000);
    for (gint n = 0; n < 2; n++)
      j.ms[n] = g_new (double, j.runs);
    /* each member's temporaries in its own area, as an inference's */
    ir_k_team_set_slice_scratch (team, j.t[1]->ctx.scratch_bytes);
    ir_k_team_run (team, body, &j);
    double lo[2], med[2];
    for (gint n = 0; n < 2; n++) {
      qsort (j.ms[n], j.runs, sizeof (double), cmp_double);
      lo[n] = j.ms[n][0] * 1e3;
      med[n] = j.ms[n][j.runs / 2] * 1e3;
      g_free (j.ms[n]);
      kt_free (j.t[n]);
    }
    g_autofree gchar *shape = stride > 1 ?
        g_strdup_printf ("%dx%dx%d->%d/s%d", L->c_in, L->h, L->w, L->c_out, stride) :
        g_strdup_printf ("%dx%dx%d->%d", L->c_in, L->h, L->w, L->c_out);
    printf ("%-8s %-16s %9" G_GINT64_FORMAT " | %7.2fus %7.2fus | %7.2fus %7.2fus | %7.2f\n",
        L->kind, shape, macs, lo[0], lo[1], med[0], med[1], med[1] / med[0]);
    g_free (in);
    g_free (wts);
  }
  printf ("(inside a team of two; us per layer; 2t/1t < 1: splitting pays; the runtime splits "
      "from %" G_GINT64_FORMAT " multiply-adds per slice)\n", threshold);
  ir_k_team_free (team);
  return 0;
}
