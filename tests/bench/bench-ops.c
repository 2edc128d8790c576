/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-ops — the time of issue 15's heavier kernels on layers of real
 * size, one and two threads: ConvolutionBackpropData (segmentation and
 * super-resolution upsampling), a text recogniser's bidirectional LSTM,
 * TopK over a detector's candidates and a classifier's scores, and
 * NonMaxSuppression over a YOLO-sized box set.
 *
 * Usage: bench-ops [--min-ms N] [--filter SUBSTRING]
 *
 * Peer: ONNX Runtime's CPU provider on the same layers and data
 * (ConvTranspose, LSTM, TopK, NonMaxSuppression one-node models), timed in
 * the same run by ort-ops.cjs under node when M2I_ORT_NODE_MODULES names a
 * node_modules folder with onnxruntime-node. Its times include the node
 * binding's per-call cost (tens of µs). Each figure is the fastest of many
 * 2 ms batches (bench-time.h).
 */
#include "kernel-test.h"
#include "bench-time.h"
#include "bench-ort.h"

typedef enum { DECONV, LSTM, TOPK, NMS } Kind;
static const char *const kind_names[] = { "deconv", "lstm", "topk", "nms" };

typedef struct {
  const char *name;
  Kind kind;
  gint a[7];                 /* deconv: c_in h w c_out k stride pad; lstm: steps input hidden
                              * dirs; topk: n k; nms: boxes classes max_out */
} Layer;

static const Layer layers[] = {
  { "deconv 2x seg decoder", DECONV, { 64, 40, 40, 32, 4, 2, 1 } },
  { "deconv 2x k2", DECONV, { 256, 28, 28, 128, 2, 2, 0 } },
  { "deconv 4x super-res", DECONV, { 32, 60, 80, 16, 8, 4, 2 } },
  { "lstm bi 512->256 T26", LSTM, { 26, 512, 256, 2 } },
  { "topk 8400 k100", TOPK, { 8400, 100 } },
  { "topk 1000 k5", TOPK, { 1000, 5 } },
  { "nms 8400x80 max100", NMS, { 8400, 80, 100 } },
  { "nms 2000x1 max200", NMS, { 2000, 1, 200 } },
};

static gboolean
execute_layer (gpointer t, GError **error)
{
  return kt_execute (t, error);
}

static float *
buf_new (GPtrArray *bufs, gsize n)
{
  float *p = g_new (float, MAX (n, 1));
  g_ptr_array_add (bufs, p);
  return p;
}

/* The inputs of @L and its layer, data owned by @bufs (freed by the caller). */
static KTest *
layer_new (const Layer *L, gint threads, GPtrArray *bufs)
{
  const gint *a = L->a;
#define BUF(n) buf_new (bufs, (n))
  KTest *t = NULL;
  switch (L->kind) {
    case DECONV: {
      float *x = BUF ((gsize) a[0] * a[1] * a[2]), *w = BUF ((gsize) a[0] * a[3] * a[4] * a[4]);
      kt_fill (x, (gsize) a[0] * a[1] * a[2], 1, -1, 1);
      kt_fill (w, (gsize) a[0] * a[3] * a[4] * a[4], 2, -0.1f, 0.1f);
      t = kt_new (&ir_kernel_convolution_backprop_data, "opset1");
      g_autofree gchar *s = g_strdup_printf ("%d,%d", a[5], a[5]);
      g_autofree gchar *p = g_strdup_printf ("%d,%d", a[6], a[6]);
      kt_attr (t, "strides", s);
      kt_attr (t, "pads_begin", p);
      kt_attr (t, "pads_end", p);
      kt_input (t, M2I_ET_F32, SHAPE (1, a[0], a[1], a[2]), x, FALSE);
      kt_input (t, M2I_ET_F32, SHAPE (a[0], a[3], a[4], a[4]), w, TRUE);
      break;
    }
    case LSTM: {
      gint T = a[0], I = a[1], H = a[2], D = a[3];
      float *x = BUF ((gsize) T * I), *w = BUF ((gsize) D * 4 * H * I);
      float *r = BUF ((gsize) D * 4 * H * H), *b = BUF ((gsize) D * 8 * H);
      float *b4 = BUF ((gsize) D * 4 * H), *h0 = BUF ((gsize) D * H);
      kt_fill (x, (gsize) T * I, 1, -1, 1);
      kt_fill (w, (gsize) D * 4 * H * I, 2, -0.05f, 0.05f);
      kt_fill (r, (gsize) D * 4 * H * H, 3, -0.05f, 0.05f);
      kt_fill (b, (gsize) D * 8 * H, 4, -0.1f, 0.1f);
      for (gint d = 0; d < D; d++)             /* ONNX's Wb + Rb */
        for (gint q = 0; q < 4 * H; q++)
          b4[d * 4 * H + q] = b[d * 8 * H + q] + b[d * 8 * H + 4 * H + q];
      memset (h0, 0, (gsize) D * H * sizeof (float));
      static gint32 len[1];
      len[0] = T;
      t = kt_new (&ir_kernel_lstm_sequence, "opset5");
      g_autofree gchar *hs = g_strdup_printf ("%d", H);
      kt_attr (t, "hidden_size", hs);
      kt_attr (t, "direction", D == 2 ? "bidirectional" : "forward");
      kt_input (t, M2I_ET_F32, SHAPE (1, T, I), x, FALSE);
      kt_input (t, M2I_ET_F32, SHAPE (1, D, H), h0, FALSE);
      kt_input (t, M2I_ET_F32, SHAPE (1, D, H), h0, FALSE);
      kt_input (t, M2I_ET_I32, SHAPE (1), len, FALSE);
      kt_input (t, M2I_ET_F32, SHAPE (D, 4 * H, I), w, TRUE);
      kt_input (t, M2I_ET_F32, SHAPE (D, 4 * H, H), r, TRUE);
      kt_input (t, M2I_ET_F32, SHAPE (D, 4 * H), b4, TRUE);
      break;
    }
    case TOPK: {
      float *x = BUF (a[0]);
      static gint64 k[1];
      k[0] = a[1];
      kt_fill (x, a[0], 1, -1, 1);
      t = kt_new (&ir_kernel_topk, "opset11");
      kt_attr (t, "axis", "1");
      kt_attr (t, "mode", "max");
      kt_attr (t, "sort", "value");
      kt_input (t, M2I_ET_F32, SHAPE (1, a[0]), x, FALSE);
      kt_input (t, M2I_ET_I64, SCALAR, k, TRUE);
      break;
    }
    case NMS: {
      gint n = a[0], c = a[1];
      float *u = BUF ((gsize) n * 4), *boxes = BUF ((gsize) n * 4), *s = BUF ((gsize) n * c);
      static gint64 max_out[1];
      static const float iou[] = { 0.5f }, thr[] = { 0.25f };
      max_out[0] = a[2];
      /* as ort-ops.cjs: corners in a 640 × 640 image, scores u³ */
      kt_fill (u, (gsize) n * 4, 7, 0, 1);
      for (gint i = 0; i < n; i++) {
        float y = u[i * 4] * 600, x = u[i * 4 + 1] * 600;
        boxes[i * 4] = y;
        boxes[i * 4 + 1] = x;
        boxes[i * 4 + 2] = y + (20 + u[i * 4 + 2] * 100);
        boxes[i * 4 + 3] = x + (20 + u[i * 4 + 3] * 100);
      }
      kt_fill (s, (gsize) n * c, 8, 0, 1);
      for (gsize i = 0; i < (gsize) n * c; i++)
        s[i] = s[i] * s[i] * s[i];
      t = kt_new (&ir_kernel_non_max_suppression, "opset9");
      kt_attr (t, "sort_result_descending", "false");
      kt_input (t, M2I_ET_F32, SHAPE (1, n, 4), boxes, FALSE);
      kt_input (t, M2I_ET_F32, SHAPE (1, c, n), s, FALSE);
      kt_input (t, M2I_ET_I64, SCALAR, max_out, TRUE);
      kt_input (t, M2I_ET_F32, SCALAR, iou, TRUE);
      kt_input (t, M2I_ET_F32, SCALAR, thr, TRUE);
      break;
    }
  }
#undef BUF
  t->ctx.n_threads = threads;
  GError *error = NULL;
  if (!kt_infer (t, L->kind == DECONV ? 1 : L->kind == TOPK ? 2 : 3, &error))
    g_error ("%s: %s", L->name, error->message);
  return t;
}

/* Times every selected layer on ONNX Runtime; fills ort_ms[layer][thread]
 * (-1 where unknown). Returns the peer's description, or NULL. */
static gchar *
run_ort_peer (const gboolean *selected, double (*ort_ms)[2], double min_ms)
{
  GString *req = g_string_new (NULL);
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++)
    for (gint threads = 1; threads <= 2 && selected[l]; threads++) {
      g_string_append_printf (req, "%u %s %d %g", l, kind_names[layers[l].kind], threads,
          min_ms);
      for (gint i = 0; i < 7; i++)
        g_string_append_printf (req, " %d", layers[l].a[i]);
      g_string_append_c (req, '\n');
    }
  gchar *version = bench_ort_peer ("ort-ops.cjs", req->str, ort_ms, G_N_ELEMENTS (layers));
  g_string_free (req, TRUE);
  return version;
}

int
main (int argc, char **argv)
{
  double min_ms = 200;
  const char *filter = NULL;
  if (!bench_parse_args (argc, argv, &min_ms, &filter))
    return 2;
  gboolean selected[G_N_ELEMENTS (layers)];
  double ort_ms[G_N_ELEMENTS (layers)][2];
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    selected[l] = !filter || strstr (layers[l].name, filter);
    ort_ms[l][0] = ort_ms[l][1] = -1;
  }
  g_autofree gchar *ort = run_ort_peer (selected, ort_ms, min_ms);
  printf ("m2i kernels (cpu: %s)\n", m2i_cpu_flags_string ());
  printf ("peer: %s\n", ort ? ort :
      "none (set M2I_ORT_NODE_MODULES to a node_modules folder with onnxruntime-node)");
  printf ("%-24s | %9s %9s | %9s %9s\n", "layer", "m2i 1t ms", "m2i 2t ms", "ort 1t ms",
      "ort 2t ms");
  for (guint l = 0; l < G_N_ELEMENTS (layers); l++) {
    if (!selected[l])
      continue;
    double ms[2];
    for (gint threads = 1; threads <= 2; threads++) {
      GPtrArray *bufs = g_ptr_array_new_with_free_func (g_free);
      KTest *t = layer_new (&layers[l], threads, bufs);
      ms[threads - 1] = bench_time_runs (execute_layer, t, min_ms) * 1e3;
      kt_free (t);
      g_ptr_array_free (bufs, TRUE);
    }
    printf ("%-24s | %9.3f %9.3f | %9.3f %9.3f\n", layers[l].name, ms[0], ms[1], ort_ms[l][0],
        ort_ms[l][1]);
  }
  return 0;
}
