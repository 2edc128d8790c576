/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LSTMSequence-5, GRUSequence-5, RNNSequence-5, LSTMCell-1/4, GRUCell-3 and
 * RNNCell-3 against torch.nn.LSTM/GRU/RNN and their cells (gate blocks
 * mapped to OpenVINO's order, padded sequences of different lengths) and a
 * NumPy loop of the spec's formulas for what torch lacks (GRU without
 * linear_before_reset, clip, other activations, peepholes)
 * (tests/data/ir-kernels/gen_rnn.py); weights constant (packed at compile
 * time) and computed at run time; then the errors. */
#include "case-test.h"

#define LSTM_SEQ(name, attrs, mask) \
  { name, "LSTMSequence", "opset5", attrs, mask, NULL, 3, 2e-5 }
#define SEQ2(name, type, attrs, mask) { name, type, "opset5", attrs, mask, NULL, 2, 2e-5 }

static const KtCase cases[] = {
  LSTM_SEQ ("lstm_fwd", "hidden_size=6;direction=forward", 0x70),
  LSTM_SEQ ("lstm_fwd", "hidden_size=6;direction=forward", 0x00),
  LSTM_SEQ ("lstm_clip_acts", "hidden_size=6;direction=reverse;clip=0.7;"
      "activations=tanh,relu,sigmoid", 0x70),
  LSTM_SEQ ("lstm_bidir", "hidden_size=5;direction=bidirectional", 0x70),
  SEQ2 ("gru_bidir_lbr", "GRUSequence", "hidden_size=4;direction=bidirectional;"
      "linear_before_reset=true", 0x38),
  SEQ2 ("gru_rev_nolbr", "GRUSequence", "hidden_size=4;direction=reverse", 0x38),
  SEQ2 ("gru_rev_nolbr", "GRUSequence", "hidden_size=4;direction=reverse", 0x00),
  SEQ2 ("rnn_tanh", "RNNSequence", "hidden_size=5;direction=forward", 0x38),
  SEQ2 ("rnn_relu_bidir", "RNNSequence", "hidden_size=4;direction=bidirectional;"
      "activations=relu", 0x38),
  { "lstm_cell", "LSTMCell", "opset4", "hidden_size=4", 0x38, NULL, 2, 2e-5 },
  { "lstm_cell_peep", "LSTMCell", "opset1", "hidden_size=4", 0x78, NULL, 2, 2e-5 },
  { "gru_cell_lbr", "GRUCell", "opset3", "hidden_size=4;linear_before_reset=1", 0x1c, NULL, 1,
    2e-5 },
  { "rnn_cell", "RNNCell", "opset3", "hidden_size=4", 0x1c, NULL, 1, 2e-5 },
  { "rnn_cell_nobias", "RNNCell", "opset3", "hidden_size=4", 0x0c, NULL, 1, 2e-5 },
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    kt_run_case (&cases[i]);
}

/* A text recogniser's bidirectional LSTM at a real size (T 26, I 512,
 * H 256, batch 1), 1 and 2 threads: against a plain loop of the spec. */
static void
test_large (void)
{
  enum { T = 26, I = 512, H = 256, D = 2 };
  gsize nx = T * I, nw = D * 4 * H * I, nr = D * 4 * H * H, nb = D * 4 * H;
  float *x = g_new (float, nx), *w = g_new (float, nw), *r = g_new (float, nr);
  float *b = g_new (float, nb), *h0 = g_new0 (float, D * H), *c0 = g_new0 (float, D * H);
  kt_fill (x, nx, 1, -1, 1);
  kt_fill (w, nw, 2, -0.05f, 0.05f);
  kt_fill (r, nr, 3, -0.05f, 0.05f);
  kt_fill (b, nb, 4, -0.1f, 0.1f);
  static const gint32 len[] = { T };
  /* the loop: double sums */
  float *want = g_new0 (float, D * T * H);
  for (gint d = 0; d < D; d++) {
    double h[H] = { 0 }, c[H] = { 0 }, g[4 * H];
    for (gint s = 0; s < T; s++) {
      gint t = d ? T - 1 - s : s;
      for (gint q = 0; q < 4 * H; q++) {
        double acc = b[d * 4 * H + q];
        for (gint i = 0; i < I; i++)
          acc += (double) w[((gsize) d * 4 * H + q) * I + i] * x[t * I + i];
        for (gint j = 0; j < H; j++)
          acc += (double) r[((gsize) d * 4 * H + q) * H + j] * h[j];
        g[q] = acc;
      }
      for (gint j = 0; j < H; j++) {
        double f = 1 / (1 + exp (-g[j])), in = 1 / (1 + exp (-g[H + j]));
        double cc = tanh (g[2 * H + j]), o = 1 / (1 + exp (-g[3 * H + j]));
        c[j] = f * c[j] + in * cc;
        h[j] = o * tanh (c[j]);
        want[((gsize) d * T + t) * H + j] = (float) h[j];
      }
    }
  }
  for (gint threads = 1; threads <= 2; threads++) {
    KTest *t = kt_layer ("LSTMSequence", "opset5", "hidden_size=256;direction=bidirectional");
    t->ctx.n_threads = threads;
    kt_input (t, M2I_ET_F32, SHAPE (1, T, I), x, FALSE);
    kt_input (t, M2I_ET_F32, SHAPE (1, D, H), h0, FALSE);
    kt_input (t, M2I_ET_F32, SHAPE (1, D, H), c0, FALSE);
    kt_input (t, M2I_ET_I32, SHAPE (1), len, FALSE);
    kt_input (t, M2I_ET_F32, SHAPE (D, 4 * H, I), w, TRUE);
    kt_input (t, M2I_ET_F32, SHAPE (D, 4 * H, H), r, TRUE);
    kt_input (t, M2I_ET_F32, SHAPE (D, 4 * H), b, TRUE);
    kt_run (t, 3);
    kt_assert_close ("bidirectional LSTM 512→256", kt_out_f32 (t, 0), want, D * T * H, 1e-5,
        1e-4);
    kt_free (t);
  }
  g_free (want);
  g_free (x);
  g_free (w);
  g_free (r);
  g_free (b);
  g_free (h0);
  g_free (c0);
}

static void
test_errors (void)
{
  static float buf[1024];
  static const gint64 bad_len[] = { 3, 7 };
  /* a length beyond the steps is a run-time error */
  KTest *t = kt_layer ("GRUSequence", "opset5", "hidden_size=2;direction=forward");
  kt_input (t, M2I_ET_F32, SHAPE (2, 5, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), bad_len, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 6, 3), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 6, 2), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 6), buf, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "sequence_lengths[1] = 7");
  kt_free (t);

  t = kt_layer ("GRUSequence", "opset5", "hidden_size=2;direction=bidirectional");
  kt_input (t, M2I_ET_F32, SHAPE (2, 5, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 1, 2), buf, FALSE);
  kt_input (t, M2I_ET_I64, SHAPE (2), bad_len, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 6, 3), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 6, 2), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 6), buf, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "initial_hidden_state");
  kt_free (t);

  t = kt_layer ("LSTMCell", "opset4", "hidden_size=2;activations=sigmoid,elu,tanh");
  kt_input (t, M2I_ET_F32, SHAPE (1, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (8, 3), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (8, 2), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (8), buf, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_UNSUPPORTED, "elu");
  kt_free (t);

  t = kt_layer ("LSTMCell", "opset4", "hidden_size=2");
  kt_input (t, M2I_ET_F32, SHAPE (1, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (6, 3), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (8, 2), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (8), buf, TRUE);
  kt_expect_error (t, 2, M2I_ERROR_INVALID_ARGUMENT, "input 3 (W)");
  kt_free (t);

  t = kt_layer ("RNNCell", "opset3", "");
  kt_input (t, M2I_ET_F32, SHAPE (1, 3), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (1, 2), buf, FALSE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 3), buf, TRUE);
  kt_input (t, M2I_ET_F32, SHAPE (2, 2), buf, TRUE);
  kt_expect_error (t, 1, M2I_ERROR_MALFORMED, "hidden_size");
  kt_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/rnn/cases", test_cases);
  g_test_add_func ("/kernels/rnn/large", test_large);
  g_test_add_func ("/kernels/rnn/errors", test_errors);
  return g_test_run ();
}
