/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The threads of one inference (m2i-core/ir/kernels/team.c): every index
 * of every parallel loop runs exactly once, in the slice the loop's
 * contract gives it, whether the helpers join, join late or never start
 * (the pool busy elsewhere); a loop asked for from inside a slice runs
 * alone; the pool itself may be asked for threads meanwhile (as a
 * plugin's kernel would); a team may run inside a pool worker; the master
 * can run loops alone for a while; and whole models give the same bits
 * with one, two and three threads, whichever way the runtime runs an
 * inference (split over the team or alone). */
#include "ir-test-util.h"
#include <ir/kernels/kernels-private.h>

#include <string.h>

typedef struct {
  gint n, slices;
  gint *hits;                          /* per index: times it ran */
  gint *slice_of;                      /* per index: the slice that ran it */
  gint bad;                            /* slice/range mismatches, atomic */
  gint whole;                          /* ran as one slice [0, n) (inline), atomic */
  gint nested;                         /* indices run by nested loops, atomic */
  gboolean nest;
} LoopJob;

static void
nested_slice (gint begin, gint end, gint slice, gpointer data)
{
  g_atomic_int_add ((gint *) data, end - begin);
}

static void
loop_slice (gint begin, gint end, gint slice, gpointer data)
{
  LoopJob *j = data;
  /* The contract of m2i_parallel_for: slice s is [n·s/slices, n·(s+1)/slices),
   * or the whole loop is one slice 0 when it runs inline (inside a pool
   * worker, or inside a slice). */
  if (slice == 0 && begin == 0 && end == j->n)
    g_atomic_int_inc (&j->whole);
  else if (slice < 0 || slice >= j->slices || begin != (gint) ((gint64) j->n * slice / j->slices) ||
      end != (gint) ((gint64) j->n * (slice + 1) / j->slices))
    g_atomic_int_inc (&j->bad);
  for (gint i = begin; i < end; i++) {
    j->hits[i]++;
    j->slice_of[i] = slice;
  }
  if (j->nest)
    ir_k_parallel_for (100, 4, 1, nested_slice, &j->nested);
}

typedef struct {
  gint loops;
  gboolean ok;
  GRand *rand;
  gboolean team;                       /* a team of more than one runs the body */
} Body;

static void
body_main (gpointer data)
{
  Body *b = data;
  g_assert_true (ir_k_team_active () == b->team);
  for (gint l = 0; l < b->loops; l++) {
    LoopJob j = { g_rand_int_range (b->rand, 0, 2000), g_rand_int_range (b->rand, 1, 6) };
    j.hits = g_new0 (gint, MAX (j.n, 1));
    j.slice_of = g_new0 (gint, MAX (j.n, 1));
    j.nest = l % 7 == 3;
    gint asked = j.slices;
    /* The loop is cut into min (asked, n) slices (grain 1). */
    gint slices = j.slices = MIN (asked, MAX (j.n, 1));
    /* Every 9th loop with the master told to run alone (as the runtime
     * does for an inference that runs faster so): inline, in one piece. */
    gboolean alone = l % 9 == 4;
    gboolean inline_ok = !b->team || l % 5 == 2 || alone;
    if (alone)
      ir_k_team_set_alone (TRUE);
    if (l % 5 == 2)
      m2i_parallel_for (j.n, asked, 1, loop_slice, &j);   /* as a plugin's kernel would */
    else
      ir_k_parallel_for (j.n, asked, 1, loop_slice, &j);
    if (alone) {
      g_assert_false (ir_k_team_active ());
      ir_k_team_set_alone (FALSE);
      g_assert_true (ir_k_team_active () == b->team);
    }
    if (alone && b->team && l % 5 != 2 && j.n > 0 && !j.whole) {
      g_test_message ("loop %d: run alone, but not inline", l);
      b->ok = FALSE;
    }
    /* Each index once, in the slice whose range holds it. The team cuts
     * its loops (a plugin's call to the pool may run inline). */
    if (j.whole && !inline_ok && slices > 1) {
      g_test_message ("loop %d: n %d, %d slices ran inline", l, j.n, slices);
      b->ok = FALSE;
    }
    if (j.whole)
      slices = 1;
    for (gint s = 0; s < slices; s++)
      for (gint i = (gint) ((gint64) j.n * s / slices); i < (gint) ((gint64) j.n * (s + 1) / slices);
          i++)
        if (j.hits[i] != 1 || j.slice_of[i] != s) {
          g_test_message ("loop %d: n %d, %d slices: index %d ran %d times, last in slice %d", l,
              j.n, slices, i, j.hits[i], j.slice_of[i]);
          b->ok = FALSE;
        }
    if (j.bad || (j.nest && j.n && j.nested != 100 * slices) || j.whole > 1) {
      g_test_message ("loop %d: n %d, %d slices: %d bad ranges, %d nested", l, j.n, slices,
          j.bad, j.nested);
      b->ok = FALSE;
    }
    g_free (j.hits);
    g_free (j.slice_of);
  }
}

static void
run_team (gint threads, gint loops)
{
  /* A run inside a pool job is alone, unless the thread that took the job
   * is a team's master waiting in a pool call from its body (the pool's
   * callers help with queued jobs): the job then runs in that team. */
  gboolean outer = ir_k_team_active ();
  M2iKTeam *team = ir_k_team_new (threads);
  Body b = { loops, TRUE, g_rand_new_with_seed (threads * 1000 + loops), threads > 1 || outer };
  for (gint run = 0; run < 20; run++)
    ir_k_team_run (team, body_main, &b);
  g_assert_true (b.ok);
  g_assert_true (ir_k_team_active () == outer);
  g_rand_free (b.rand);
  ir_k_team_free (team);
}

static void
test_loops (void)
{
  for (gint threads = 1; threads <= 4; threads++)
    run_team (threads, 200);
}

/* The pool's workers are all busy for the whole run: no helper ever
 * starts, and the master runs every slice. */
typedef struct {
  gint n_threads;
  gint busy_ms;
} Hog;

static void
hog_slice (gint begin, gint end, gint slice, gpointer data)
{
  if (slice > 0)
    g_usleep (((Hog *) data)->busy_ms * 1000);
}

static gpointer
hog_main (gpointer data)
{
  Hog *h = data;
  m2i_parallel_for (h->n_threads, h->n_threads, 1, hog_slice, h);
  return NULL;
}

static void
test_busy_pool (void)
{
  gint cores = m2i_parallel_n_cores ();
  Hog hog = { cores + 1, 300 };
  GThread *t = g_thread_new ("hog", hog_main, &hog);
  g_usleep (20000);                     /* the hog's slices are running */
  gint64 t0 = g_get_monotonic_time ();
  run_team (2, 50);
  /* Nothing waited for the helper that never came. */
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 250000);
  g_thread_join (t);
}

/* A team run from inside a pool worker (a loop's slice) runs its body
 * there, every loop alone. */
static void
inside_slice (gint begin, gint end, gint slice, gpointer data)
{
  for (gint i = begin; i < end; i++)
    run_team (2, 20);
}

static void
test_inside_worker (void)
{
  m2i_parallel_for (4, 2, 1, inside_slice, NULL);
}

/* Whole models: one, two and three threads give the same bits. */
static void
check_threads_equal (const char *xml)
{
  GError *error = NULL;
  M2iIrModel *m = m2i_ir_model_load (xml, NULL, &error);
  g_assert_no_error (error);
  float *first = NULL;
  gsize n_out = 0;
  for (gint threads = 1; threads <= 3; threads++) {
    M2iIrCompileOptions opts = { .n_threads = threads };
    M2iIrCompiledModel *cm = m2i_ir_compile (m, &opts, &error);
    g_assert_no_error (error);
    M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, &error);
    g_assert_no_error (error);
    M2iTensor *in = m2i_ir_infer_request_get_input (req, 0);
    float *x = in->data;
    for (gint64 i = 0; i < m2i_shape_numel (&in->shape); i++)
      x[i] = (float) ((i * 7919) % 1000) / 1000.0f;
    /* enough runs for the runtime to time the inference split and
     * alone, then run it the faster way and time the other again */
    for (gint run = 0; run < 20; run++) {
      g_assert_true (m2i_ir_infer_request_infer (req, &error));
      const M2iTensor *out = m2i_ir_infer_request_get_output (req, 0);
      gsize bytes = m2i_tensor_nbytes (out);
      if (!first) {
        first = g_memdup2 (out->data, bytes);
        n_out = bytes;
      }
      g_assert_cmpmem (out->data, bytes, first, n_out);
    }
    m2i_ir_infer_request_free (req);
    m2i_ir_compiled_model_unref (cm);
  }
  g_free (first);
  m2i_ir_model_unref (m);
}

static void
test_models (void)
{
  g_autofree gchar *fashion = test_models_path ("fashion-mnist/fashion-mnist.xml");
  check_threads_equal (fashion);
  g_autofree gchar *squeezenet = test_shared_path ("squeezenet1.1/squeezenet1.1.xml");
  if (squeezenet && g_file_test (squeezenet, G_FILE_TEST_EXISTS))
    check_threads_equal (squeezenet);
  else
    g_test_message ("squeezenet1.1 not found (../shared absent): Fashion-MNIST only");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/team/loops", test_loops);
  g_test_add_func ("/ir/team/busy-pool", test_busy_pool);
  g_test_add_func ("/ir/team/inside-worker", test_inside_worker);
  g_test_add_func ("/ir/team/models", test_models);
  return g_test_run ();
}
