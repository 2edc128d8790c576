/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-ir-run — load an OpenVINO IR model, feed it one input, print the top-k
 * classes or the detections; with -b, measure latency and throughput (like
 * OpenVINO's benchmark_app).
 *
 *   m2i-ir-run model.xml -i cat.ppm -k 5 --labels imagenet.txt
 *   m2i-ir-run model.xml -i t10k-images-idx3-ubyte.gz:17 --labels labels.txt
 *   m2i-ir-run model.xml -i input.f32 -b -n 2
 */
#include "m2i-data.h"
#include "m2i-tensor-print.h"

#include <m2i-core/base/m2i-error.h>
#include <m2i-core/base/m2i-parallel.h>
#include <m2i-core/ir/m2i-ir.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gchar **opt_inputs;
static gint opt_index = -1;
static gint opt_top_k = 5;
static gchar *opt_labels;
static gdouble opt_threshold = 0.5;
static gboolean opt_bench;
static gint opt_iterations = 200;
static gint opt_threads;
static gint opt_requests = 1;
static gchar **opt_plugins;
static gchar *opt_mean;
static gchar *opt_scale;
static gboolean opt_rgb;
static gchar *opt_dump;
static gboolean opt_quiet;
static gboolean opt_profile;
static gint opt_profile_layers = 20;
static gchar **opt_shapes;
static gchar **opt_outputs;
static gchar **opt_has_kernel;
static guint64 opt_max_memory;

static gboolean
parse_max_memory (const gchar *name, const gchar *value, gpointer data, GError **error)
{
  return m2i_data_parse_size (value, &opt_max_memory, error);
}

static const GOptionEntry entries[] = {
  { "input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_inputs, "Input: raw f32/u8/f16 tensor, "
    "PGM/PPM image, or idx images file (gzipped or not) with FILE:INDEX; repeat for the next "
    "inputs, or name one with NAME=FILE (the Parameter's name or one of its tensor names)",
    "[NAME=]FILE" },
  { "index", 0, 0, G_OPTION_ARG_INT, &opt_index, "Image index in an idx file", "N" },
  { "top-k", 'k', 0, G_OPTION_ARG_INT, &opt_top_k, "Classes to print (default 5)", "K" },
  { "labels", 'l', 0, G_OPTION_ARG_FILENAME, &opt_labels, "Labels file, one per line", "FILE" },
  { "threshold", 't', 0, G_OPTION_ARG_DOUBLE, &opt_threshold,
    "Smallest confidence of a printed detection (default 0.5)", "P" },
  { "benchmark", 'b', 0, G_OPTION_ARG_NONE, &opt_bench, "Measure latency and throughput", NULL },
  { "iterations", 0, 0, G_OPTION_ARG_INT, &opt_iterations,
    "Inferences per request for -b (default 200)", "N" },
  { "threads", 'n', 0, G_OPTION_ARG_INT, &opt_threads, "Threads per inference (default: cores)", "N" },
  { "requests", 'r', 0, G_OPTION_ARG_INT, &opt_requests,
    "Infer requests run at once, one thread each, for -b (default 1)", "R" },
  { "plugin", 'p', 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_plugins,
    "Custom-op plugin (shared library); may be repeated", "LIB" },
  { "mean", 0, 0, G_OPTION_ARG_STRING, &opt_mean, "Per-channel mean subtracted from images", "A,B,C" },
  { "scale", 0, 0, G_OPTION_ARG_STRING, &opt_scale, "Per-channel divisor of images", "A,B,C" },
  { "rgb", 0, 0, G_OPTION_ARG_NONE, &opt_rgb, "Feed images as RGB (default BGR, as OpenVINO models)", NULL },
  { "dump", 0, 0, G_OPTION_ARG_FILENAME, &opt_dump, "Write output 0 as raw data (f32 for float "
    "outputs) to FILE; or, when FILE is a folder, every output as FILE/NAME.TYPE", "FILE" },
  { "output", 'o', 0, G_OPTION_ARG_STRING_ARRAY, &opt_outputs, "Also return this tensor "
    "(a tensor name, a layer name, or LAYER.N for its output N), as OpenVINO's add_output; "
    "repeatable", "NAME" },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Print only results", NULL },
  { "shape", 's', 0, G_OPTION_ARG_STRING_ARRAY, &opt_shapes, "Shape of an input whose "
    "dims are dynamic (-1 or ? in the model): NAME=1,3,640,640, or just the dims for the "
    "first input; repeat for more inputs", "[NAME=]DIMS" },
  { "has-kernel", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_has_kernel, "Say whether a kernel "
    "runs TYPE in OPSET (e.g. Swish/opset4), with the plugins given; no model needed; "
    "repeatable", "TYPE/OPSET" },
  { "max-memory", 0, 0, G_OPTION_ARG_CALLBACK, parse_max_memory, "Memory a compiled model and "
    "one request may need, e.g. 512M (default 4G); a model needing more is refused", "SIZE" },
  { "profile", 0, 0, G_OPTION_ARG_NONE, &opt_profile,
    "Time every layer over --iterations inferences; print the time per op type", NULL },
  { "profile-layers", 0, 0, G_OPTION_ARG_INT, &opt_profile_layers,
    "Layers --profile lists, the heaviest first (default 20)", "N" },
  { NULL }
};

/* ---- images -------------------------------------------------------------- */

typedef struct {
  gint width, height, channels;  /* channels 1 or 3 (RGB) */
  guint8 *pixels;                /* interleaved */
} Image;

static gboolean
fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError **error, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  gchar *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error_literal (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, msg);
  g_free (msg);
  return FALSE;
}

/* Reads the next header number of a PNM file, skipping comments. */
static gboolean
pnm_number (const guint8 *d, gsize len, gsize *pos, gint *out)
{
  while (*pos < len) {
    if (d[*pos] == '#')
      while (*pos < len && d[*pos] != '\n')
        (*pos)++;
    else if (g_ascii_isspace (d[*pos]))
      (*pos)++;
    else
      break;
  }
  gint64 v = 0;
  gsize start = *pos;
  while (*pos < len && g_ascii_isdigit (d[*pos]) && v < 1000000)
    v = v * 10 + (d[(*pos)++] - '0');
  *out = (gint) v;
  return *pos > start && v > 0 && v < 1000000;
}

static gboolean
read_pnm (const guint8 *d, gsize len, Image *img, GError **error)
{
  gsize pos = 2;
  gint maxval;
  img->channels = d[1] == '6' ? 3 : 1;
  if (!pnm_number (d, len, &pos, &img->width) || !pnm_number (d, len, &pos, &img->height) ||
      !pnm_number (d, len, &pos, &maxval) || maxval > 255 || pos >= len)
    return fail (error, "not a binary PGM/PPM with 8-bit samples");
  pos++;                         /* the single whitespace after maxval */
  gsize need = (gsize) img->width * img->height * img->channels;
  if (len - pos < need)
    return fail (error, "the image data is truncated (%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
        " bytes)", len - pos, need);
  img->pixels = g_memdup2 (d + pos, need);
  return TRUE;
}

/* Image @index of the idx3-ubyte images file @file (count, rows, cols). */
static gboolean
read_idx (GBytes *file, const char *path, gint index, Image *img, GError **error)
{
  guint32 dims[3];
  g_autoptr (GBytes) samples = m2i_data_idx_samples (file, 3, dims, path, error);
  if (!samples)
    return FALSE;
  if (index < 0 || (guint32) index >= dims[0])
    return fail (error, "image index %d is outside 0..%u", index, dims[0] - 1);
  if (dims[1] > 65536 || dims[2] > 65536)
    return fail (error, "%s: images of %ux%u are too large", path, dims[2], dims[1]);
  gsize size = (gsize) dims[1] * dims[2];
  img->width = dims[2];
  img->height = dims[1];
  img->channels = 1;
  img->pixels = g_memdup2 ((const guint8 *) g_bytes_get_data (samples, NULL)
      + (gsize) index * size, size);
  return TRUE;
}

static gboolean
parse_triplet (const char *s, float def, float out[3], GError **error)
{
  out[0] = out[1] = out[2] = def;
  if (!s)
    return TRUE;
  g_auto (GStrv) parts = g_strsplit (s, ",", 3);
  gint n = g_strv_length (parts);
  for (gint i = 0; i < 3; i++) {
    char *end;
    const char *p = parts[MIN (i, n - 1)];
    out[i] = (float) g_ascii_strtod (p, &end);
    if (end == p)
      return fail (error, "\"%s\" is not a number list", s);
  }
  return TRUE;
}

/* Bilinear sample (half-pixel centres) of channel @c at output (x, y). */
static float
sample (const Image *img, gint c, gint x, gint y, gint ow, gint oh)
{
  float fx = ((float) x + 0.5f) * img->width / ow - 0.5f;
  float fy = ((float) y + 0.5f) * img->height / oh - 0.5f;
  fx = CLAMP (fx, 0.0f, (float) (img->width - 1));
  fy = CLAMP (fy, 0.0f, (float) (img->height - 1));
  gint x0 = (gint) fx, y0 = (gint) fy;
  gint x1 = MIN (x0 + 1, img->width - 1), y1 = MIN (y0 + 1, img->height - 1);
  float ax = fx - x0, ay = fy - y0;
#define PX(xx, yy) ((float) img->pixels[((gsize) (yy) * img->width + (xx)) * img->channels + c])
  float top = PX (x0, y0) * (1 - ax) + PX (x1, y0) * ax;
  float bottom = PX (x0, y1) * (1 - ax) + PX (x1, y1) * ax;
#undef PX
  return top * (1 - ay) + bottom * ay;
}

/* Fills an NCHW f32 tensor (batch 1) from the image: channel order, resize,
 * (pixel - mean) / scale. */
static gboolean
image_to_tensor (const Image *img, const M2iTensor *in, float *dst, GError **error)
{
  if (in->shape.rank != 4 || in->shape.dims[0] != 1 ||
      (in->shape.dims[1] != 1 && in->shape.dims[1] != 3)) {
    g_autofree gchar *s = m2i_shape_to_string (&in->shape);
    return fail (error, "images feed 1x1xHxW or 1x3xHxW inputs; this one is %s", s);
  }
  float mean[3], scale[3];
  if (!parse_triplet (opt_mean, 0, mean, error) || !parse_triplet (opt_scale, 1, scale, error))
    return FALSE;
  gint c_out = in->shape.dims[1], oh = in->shape.dims[2], ow = in->shape.dims[3];
  for (gint c = 0; c < c_out; c++) {
    for (gint y = 0; y < oh; y++) {
      for (gint x = 0; x < ow; x++) {
        float v;
        if (img->channels == 1)
          v = sample (img, 0, x, y, ow, oh);
        else if (c_out == 1)
          v = 0.299f * sample (img, 0, x, y, ow, oh) + 0.587f * sample (img, 1, x, y, ow, oh) +
              0.114f * sample (img, 2, x, y, ow, oh);
        else
          v = sample (img, opt_rgb ? c : 2 - c, x, y, ow, oh);
        dst[((gsize) c * oh + y) * ow + x] = (v - mean[c]) / scale[c];
      }
    }
  }
  return TRUE;
}

static gboolean
load_input (M2iIrInferRequest *req, gint input, const char *spec, GError **error)
{
  M2iTensor *in = m2i_ir_infer_request_get_input (req, input);
  if (!in)
    return fail (error, "the model has no input %d for \"%s\"", input, spec);
  g_autofree gchar *path = g_strdup (spec);
  gint index = opt_index;
  char *colon = strrchr (path, ':');
  if (colon && colon[1] && strspn (colon + 1, "0123456789") == strlen (colon + 1)) {
    index = atoi (colon + 1);
    *colon = 0;
  }
  g_autoptr (GBytes) bytes = m2i_data_read (path, error);
  if (!bytes)
    return FALSE;
  gsize len;
  const guint8 *d = g_bytes_get_data (bytes, &len);
  Image img = { 0 };
  gboolean is_image = FALSE, ok = TRUE;
  if (len > 2 && d[0] == 'P' && (d[1] == '5' || d[1] == '6')) {
    is_image = TRUE;
    ok = read_pnm (d, len, &img, error);
  } else if (m2i_data_is_idx (d, len, 3)) {
    is_image = TRUE;
    ok = read_idx (bytes, path, index < 0 ? 0 : index, &img, error);
  }
  if (!ok)
    return FALSE;
  gint64 numel = m2i_shape_numel (&in->shape);
  if (is_image) {
    if (in->type != M2I_ET_F32) {
      g_free (img.pixels);
      return fail (error, "images feed f32 inputs; this one is %s",
          m2i_element_type_to_string (in->type));
    }
    ok = image_to_tensor (&img, in, in->data, error);
    g_free (img.pixels);
    return ok;
  }
  /* raw: f32, f16 or u8 values, told apart by the size */
  M2iTensor t = { M2I_ET_UNDEFINED, in->shape, (gpointer) d };
  if ((gint64) len == numel * 4)
    t.type = M2I_ET_F32;
  else if ((gint64) len == numel * 2)
    t.type = M2I_ET_F16;
  else if ((gint64) len == numel)
    t.type = M2I_ET_U8;
  else
    return fail (error, "%s: %" G_GSIZE_FORMAT " bytes is neither f32, f16 nor u8 data for "
        "%" G_GINT64_FORMAT " elements", path, len, numel);
  if (t.type == M2I_ET_U8 && in->type == M2I_ET_F32) {
    float *dst = in->data;
    for (gint64 i = 0; i < numel; i++)
      dst[i] = d[i];
    return TRUE;
  }
  return m2i_ir_infer_request_set_input (req, input, &t, error);
}

/* -i specs: "NAME=FILE" feeds the input called NAME, a plain FILE the next
 * input in order. */
static gboolean
load_inputs (M2iIrInferRequest *req, const M2iIrModel *model, GError **error)
{
  for (gint k = 0; opt_inputs && opt_inputs[k]; k++) {
    const char *spec = opt_inputs[k];
    gint input = k;
    const char *eq = strchr (spec, '=');
    if (eq) {
      g_autofree gchar *name = g_strndup (spec, eq - spec);
      gint found = m2i_ir_model_find_input (model, name);
      if (found >= 0) {
        input = found;
        spec = eq + 1;
      } else if (!g_file_test (spec, G_FILE_TEST_EXISTS)) {
        GString *names = g_string_new (NULL);
        for (gint i = 0; i < m2i_ir_model_get_n_inputs (model); i++)
          g_string_append_printf (names, "%s'%s'", i ? ", " : "", m2i_ir_model_get_input (model, i)->name);
        fail (error, "-i %s: the model has no input '%s' (its inputs: %s; a Parameter's "
            "tensor names are taken too)", spec, name, names->str);
        g_string_free (names, TRUE);
        return FALSE;
      }
    }
    if (!load_input (req, input, spec, error))
      return FALSE;
  }
  return TRUE;
}

/* ---- results ------------------------------------------------------------ */

static gchar **
read_labels (GError **error)
{
  if (!opt_labels)
    return NULL;
  gchar *text;
  if (!g_file_get_contents (opt_labels, &text, NULL, error))
    return NULL;
  gchar **lines = g_strsplit (text, "\n", -1);
  g_free (text);
  return lines;
}

static const char *
label_of (gchar **labels, gint i, gchar buf[32])
{
  if (labels && (guint) i < g_strv_length (labels) && labels[i][0])
    return labels[i];
  g_snprintf (buf, 32, "class %d", i);
  return buf;
}

/* DetectionOutput rows: image_id, label, confidence, x_min, y_min, x_max, y_max
 * (normalized); a row with image_id -1 ends the list. */
static void
print_detections (const M2iTensor *out, gchar **labels)
{
  gint64 rows = m2i_shape_numel (&out->shape) / 7;
  const float *p = out->data;
  gint shown = 0;
  printf ("detections (confidence >= %.2f):\n", opt_threshold);
  for (gint64 r = 0; r < rows; r++) {
    const float *d = p + r * 7;
    if (d[0] < 0)
      break;
    if (d[2] < opt_threshold)
      continue;
    gchar buf[32];
    printf ("  %-12s %.4f  [%.4f, %.4f, %.4f, %.4f]\n", label_of (labels, (gint) d[1], buf), d[2],
        d[3], d[4], d[5], d[6]);
    shown++;
  }
  if (!shown)
    printf ("  (none)\n");
}

/* --dump FILE: output 0 into FILE; --dump DIR: each output as DIR/NAME.TYPE. */
static gboolean
dump_outputs (M2iIrInferRequest *req, const M2iIrModel *model, GError **error)
{
  if (!g_file_test (opt_dump, G_FILE_TEST_IS_DIR)) {
    const M2iTensor *out = m2i_ir_infer_request_get_output (req, 0);
    return g_file_set_contents (opt_dump, out->data, m2i_tensor_nbytes (out), error);
  }
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (model); i++)
    if (!m2i_tool_dump (opt_dump, m2i_ir_model_get_output (model, i)->name,
            m2i_ir_infer_request_get_output (req, i), NULL, error))
      return FALSE;
  return TRUE;
}

/* The output (node index, port) called @name: a tensor name, a layer
 * name (its output 0) or "LAYER.N". FALSE when none is. */
static gboolean
find_tensor (const M2iIrModel *m, const char *name, gint *node, gint *port)
{
  for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++) {
    const M2iIrNode *n = m2i_ir_model_get_node (m, i);
    for (gint p = 0; p < m2i_ir_node_get_n_outputs (n); p++) {
      const char *names = m2i_ir_node_get_output_names (n, p);
      g_auto (GStrv) list = g_strsplit (names ? names : "", ",", -1);
      gboolean hit = FALSE;
      for (gchar **it = list; *it && !hit; it++)
        hit = !strcmp (g_strstrip (*it), name);
      g_autofree gchar *dotted = g_strdup_printf ("%s.%d", m2i_ir_node_get_name (n), p);
      if (hit || !strcmp (dotted, name) || (p == 0 && !strcmp (m2i_ir_node_get_name (n), name))) {
        *node = i;
        *port = p;
        return TRUE;
      }
    }
  }
  return FALSE;
}

/* --output: the model with a Result on each named tensor too. */
static M2iIrModel *
add_outputs (M2iIrModel *model, GError **error)
{
  gint n_nodes = m2i_ir_model_get_n_nodes (model), n_out = g_strv_length (opt_outputs);
  g_autofree gint *all = g_new (gint, MAX (n_nodes, 1));
  g_autofree gint *pairs = g_new (gint, 2 * (n_out + m2i_ir_model_get_n_outputs (model)));
  for (gint i = 0; i < n_nodes; i++)
    all[i] = i;
  gint k = 0;
  for (gint i = 0; i < n_out; i++, k++) {
    if (!find_tensor (model, opt_outputs[i], &pairs[2 * k], &pairs[2 * k + 1])) {
      fail (error, "--output %s: the model has no tensor or layer of that name", opt_outputs[i]);
      return NULL;
    }
  }
  return m2i_ir_model_extract (model, all, n_nodes, pairs, k, NULL, error);
}

/* ---- benchmark ---------------------------------------------------------- */

typedef struct {
  M2iIrInferRequest *req;
  gint iterations;
  gdouble *ms;                   /* per inference */
  GError *error;
} BenchJob;

static gdouble
clock_ms (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static gdouble
now_ms (void)
{
  return clock_ms (CLOCK_MONOTONIC);
}

static gpointer
bench_thread (gpointer data)
{
  BenchJob *j = data;
  for (gint i = 0; i < j->iterations; i++) {
    gdouble t0 = now_ms ();
    if (!m2i_ir_infer_request_infer (j->req, &j->error))
      break;
    j->ms[i] = now_ms () - t0;
  }
  return NULL;
}

static gint
cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return x < y ? -1 : x > y;
}

static gboolean
benchmark (M2iIrCompiledModel *cm, M2iIrInferRequest *first, GError **error)
{
  gint r = MAX (opt_requests, 1), n = MAX (opt_iterations, 1);
  BenchJob *jobs = g_new0 (BenchJob, r);
  for (gint i = 0; i < r; i++) {
    jobs[i].req = i ? m2i_ir_infer_request_new (cm, error) : first;
    if (!jobs[i].req)
      return FALSE;
    if (i) {
      M2iTensor *dst = m2i_ir_infer_request_get_input (jobs[i].req, 0);
      M2iTensor *src = m2i_ir_infer_request_get_input (first, 0);
      if (src)
        memcpy (dst->data, src->data, m2i_tensor_nbytes (src));
    }
    jobs[i].iterations = n;
    jobs[i].ms = g_new0 (gdouble, n);
    for (gint w = 0; w < 5; w++)    /* warm-up: caches, pool threads */
      if (!m2i_ir_infer_request_infer (jobs[i].req, error))
        return FALSE;
  }
  gdouble t0 = now_ms (), cpu0 = clock_ms (CLOCK_PROCESS_CPUTIME_ID);
  GThread **threads = g_new0 (GThread *, r);
  for (gint i = 1; i < r; i++)
    threads[i] = g_thread_new ("bench", bench_thread, &jobs[i]);
  bench_thread (&jobs[0]);
  for (gint i = 1; i < r; i++)
    g_thread_join (threads[i]);
  gdouble elapsed = now_ms () - t0, cpu = clock_ms (CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  gboolean ok = TRUE;
  gdouble *all = g_new (gdouble, (gsize) r * n);
  for (gint i = 0; i < r; i++) {
    if (jobs[i].error && ok) {
      g_propagate_error (error, jobs[i].error);
      ok = FALSE;
    } else
      g_clear_error (&jobs[i].error);
    memcpy (all + (gsize) i * n, jobs[i].ms, n * sizeof (gdouble));
    g_free (jobs[i].ms);
    if (i)
      m2i_ir_infer_request_free (jobs[i].req);
  }
  if (ok) {
    qsort (all, (gsize) r * n, sizeof (gdouble), cmp_double);
    gsize total = (gsize) r * n;
    gint n_threads = opt_threads > 0 ? opt_threads : m2i_parallel_n_cores ();
    printf ("benchmark: %d request%s x %d inferences, %d thread%s per inference\n", r,
        r > 1 ? "s" : "", n, n_threads, n_threads > 1 ? "s" : "");
    printf ("latency ms: median %.3f  p90 %.3f  min %.3f  max %.3f\n", all[total / 2],
        all[MIN (total - 1, (gsize) ceil (total * 0.9) - 1)], all[0], all[total - 1]);
    printf ("throughput: %.1f inferences/s\n", total / (elapsed / 1e3));
    /* On a machine busier than its cores the wall time includes the time
     * other processes held ours; the CPU time does not. */
    printf ("cpu ms per inference: %.3f (every thread of the process)\n", cpu / total);
  }
  g_free (all);
  g_free (threads);
  g_free (jobs);
  return ok;
}

/* ---- per-layer profile ---------------------------------------------------- */

typedef struct {
  const char *type;
  gint layers;
  guint64 ns, cpu_ns;
} TypeTime;

static gint
cmp_type_time (gconstpointer a, gconstpointer b)
{
  const TypeTime *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static gboolean
profile (M2iIrInferRequest *req, GError **error)
{
  m2i_ir_infer_request_set_profiling (req, TRUE);
  gint n = MAX (opt_iterations, 1);
  for (gint i = 0; i < n; i++)
    if (!m2i_ir_infer_request_infer (req, error))
      return FALSE;
  gint n_layers;
  const M2iIrLayerProfile *p = m2i_ir_infer_request_get_profile (req, &n_layers);
  GArray *types = g_array_new (FALSE, TRUE, sizeof (TypeTime));
  guint64 total = 0, total_cpu = 0;
  for (gint i = 0; i < n_layers; i++) {
    const char *type = m2i_ir_node_get_type (p[i].node);
    guint k;
    for (k = 0; k < types->len; k++)
      if (!strcmp (g_array_index (types, TypeTime, k).type, type))
        break;
    if (k == types->len) {
      TypeTime t = { type };
      g_array_append_val (types, t);
    }
    TypeTime *t = &g_array_index (types, TypeTime, k);
    t->layers++;
    t->ns += p[i].total_ns;
    t->cpu_ns += p[i].cpu_ns;
    total += p[i].total_ns;
    total_cpu += p[i].cpu_ns;
  }
  g_array_sort (types, cmp_type_time);
  printf ("profile: %d layers per inference, %.3f ms per inference, %.3f ms CPU of the calling "
      "thread (%d inferences)\n", n_layers, total / 1e6 / n, total_cpu / 1e6 / n, n);
  printf ("  %-22s %6s %10s %6s %10s %6s\n", "op type", "layers", "ms/infer", "%", "cpu ms",
      "cpu %");
  for (guint k = 0; k < types->len; k++) {
    const TypeTime *t = &g_array_index (types, TypeTime, k);
    printf ("  %-22s %6d %10.3f %5.1f%% %10.3f %5.1f%%\n", t->type, t->layers, t->ns / 1e6 / n,
        total ? 100.0 * t->ns / total : 0, t->cpu_ns / 1e6 / n,
        total_cpu ? 100.0 * t->cpu_ns / total_cpu : 0);
  }
  g_array_free (types, TRUE);
  /* The layers themselves, by CPU time, with their shapes (the heaviest
   * first, at most --profile-layers). */
  gint *order = g_new (gint, n_layers);
  for (gint i = 0; i < n_layers; i++)
    order[i] = i;
  for (gint i = 1; i < n_layers; i++)
    for (gint j = i; j > 0 && p[order[j]].cpu_ns > p[order[j - 1]].cpu_ns; j--) {
      gint t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  printf ("  %-40s %-18s %10s %10s %-24s %s\n", "layer", "type", "cpu us", "wall us", "output",
      "input 0");
  for (gint i = 0; i < MIN (n_layers, MAX (opt_profile_layers, 0)); i++) {
    const M2iIrNode *node = p[order[i]].node;
    g_autofree gchar *os = m2i_ir_node_get_n_outputs (node) ?
        m2i_shape_to_string (m2i_ir_node_get_output_shape (node, 0)) : g_strdup ("");
    g_autofree gchar *is = m2i_ir_node_get_n_inputs (node) ?
        m2i_shape_to_string (m2i_ir_node_get_input_shape (node, 0)) : g_strdup ("");
    printf ("  %-40.40s %-18s %10.1f %10.1f %-24s %s\n", m2i_ir_node_get_name (node),
        m2i_ir_node_get_type (node), p[order[i]].cpu_ns / 1e3 / n,
        p[order[i]].total_ns / 1e3 / n, os, is);
  }
  g_free (order);
  /* M2I_IR_SPLIT=layers: each layer split and alone, in execution order */
  gboolean alternated = FALSE;
  for (gint i = 0; i < n_layers; i++)
    alternated |= p[i].alone_count > 0;
  if (alternated) {
    printf ("split or alone per layer (M2I_IR_SPLIT=layers), wall us per run, execution order:\n"
        "  %-40s %-18s %10s %10s %6s\n", "layer", "type", "split", "alone", "ratio");
    gdouble sum_split = 0, sum_alone = 0, sum_best = 0;
    for (gint i = 0; i < n_layers; i++) {
      gdouble s = p[i].count ? p[i].total_ns / 1e3 / p[i].count : 0;
      gdouble a = p[i].alone_count ? p[i].alone_ns / 1e3 / p[i].alone_count : 0;
      sum_split += s;
      sum_alone += a;
      sum_best += MIN (s, a);
      printf ("  %-40.40s %-18s %10.2f %10.2f %6.2f%s\n", m2i_ir_node_get_name (p[i].node),
          m2i_ir_node_get_type (p[i].node), s, a, a > 0 ? s / a : 0,
          s > a * 1.05 ? "  alone faster" : "");
    }
    printf ("  sum: split %.1f us, alone %.1f us, the faster of each %.1f us\n", sum_split,
        sum_alone, sum_best);
  }
  m2i_ir_infer_request_set_profiling (req, FALSE);
  return TRUE;
}

/* ---- main --------------------------------------------------------------- */

static gboolean
run (const char *model_path, GError **error)
{
  gdouble t0 = now_ms ();
  M2iIrModel *model = m2i_ir_model_load (model_path, NULL, error);
  if (!model)
    return FALSE;
  if (opt_outputs) {
    M2iIrModel *more = add_outputs (model, error);
    m2i_ir_model_unref (model);
    if (!more)
      return FALSE;
    model = more;
  }
  for (gint k = 0; opt_shapes && opt_shapes[k]; k++) {
    const char *eq = strchr (opt_shapes[k], '=');
    g_autofree gchar *name = eq ? g_strndup (opt_shapes[k], eq - opt_shapes[k]) :
        g_strdup (m2i_ir_model_get_n_inputs (model) ? m2i_ir_model_get_input (model, 0)->name : "");
    M2iShape shape;
    if (!m2i_shape_parse (eq ? eq + 1 : opt_shapes[k], &shape, error) ||
        !m2i_ir_model_reshape (model, name, &shape, error)) {
      g_prefix_error (error, "--shape %s: ", opt_shapes[k]);
      m2i_ir_model_unref (model);
      return FALSE;
    }
  }
  gdouble t1 = now_ms ();
  M2iIrCompileOptions opts = { .n_threads = opt_threads,
    .plugin_paths = (const char *const *) opt_plugins, .max_memory = opt_max_memory };
  M2iIrCompiledModel *cm = m2i_ir_compile (model, &opts, error);
  gdouble t2 = now_ms ();
  if (!cm) {
    m2i_ir_model_unref (model);
    return FALSE;
  }
  if (!opt_quiet) {
    printf ("model %s (IR v%d): %d layers, %d run per inference, %.1f MiB per request; "
        "load %.1f ms, compile %.1f ms\n", m2i_ir_model_get_name (model),
        m2i_ir_model_get_ir_version (model), m2i_ir_model_get_n_nodes (model),
        m2i_ir_compiled_model_get_n_runtime_nodes (cm),
        m2i_ir_compiled_model_get_request_bytes (cm) / 1048576.0, t1 - t0, t2 - t1);
    for (gint i = 0; i < m2i_ir_model_get_n_inputs (model); i++) {
      const M2iIrIoInfo *io = m2i_ir_model_get_input (model, i);
      g_autofree gchar *s = m2i_shape_to_string (&io->shape);
      printf ("  input  %s: %s %s\n", io->name, m2i_element_type_to_string (io->type), s);
    }
    for (gint i = 0; i < m2i_ir_model_get_n_outputs (model); i++) {
      const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
      g_autofree gchar *s = m2i_shape_to_string (&io->shape);
      printf ("  output %s: %s %s\n", io->name, m2i_element_type_to_string (io->type), s);
    }
  }
  M2iIrInferRequest *req = m2i_ir_infer_request_new (cm, error);
  gboolean ok = req != NULL;
  gchar **labels = NULL;
  if (ok)
    ok = load_inputs (req, model, error);
  if (ok && opt_labels)
    ok = (labels = read_labels (error)) != NULL;
  if (ok)
    ok = m2i_ir_infer_request_infer (req, error);
  if (ok && opt_dump)
    ok = dump_outputs (req, model, error);
  /* each output: detections, top-k of class scores, or a summary */
  for (gint i = 0; ok && opt_top_k > 0 && i < m2i_ir_model_get_n_outputs (model); i++) {
    const M2iTensor *out = m2i_ir_infer_request_get_output (req, i);
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    M2iIrNode *producer = NULL;
    m2i_ir_node_get_input_source (io->node, 0, &producer, NULL);
    if (producer && !strcmp (m2i_ir_node_get_type (producer), "DetectionOutput") &&
        out->type == M2I_ET_F32)
      print_detections (out, labels);
    else if (m2i_tool_is_classifier (out)) {
      if (m2i_ir_model_get_n_outputs (model) > 1)
        printf ("output %s:\n", io->name);
      m2i_tool_print_top_k (stdout, out, opt_top_k, labels);
    } else
      m2i_tool_print_summary (stdout, io->name, out);
  }
  if (ok && opt_profile)
    ok = profile (req, error);
  if (ok && opt_bench)
    ok = benchmark (cm, req, error);
  g_strfreev (labels);
  m2i_ir_infer_request_free (req);
  m2i_ir_compiled_model_unref (cm);
  m2i_ir_model_unref (model);
  return ok;
}

/* --has-kernel TYPE/OPSET: "TYPE OPSET yes|no" per line (op conformance
 * tables are made from it: tests/models/op-conformance.py). */
static gboolean
has_kernels (void)
{
  M2iOpRegistry *reg = m2i_op_registry_new (m2i_op_registry_get_default ());
  gboolean ok = TRUE;
  for (gint i = 0; opt_plugins && opt_plugins[i] && ok; i++) {
    GError *e = NULL;
    if (!(ok = m2i_op_registry_load_plugin (reg, opt_plugins[i], &e)))
      fprintf (stderr, "m2i-ir-run: %s\n", e->message), g_error_free (e);
  }
  for (gint i = 0; opt_has_kernel[i] && ok; i++) {
    g_auto (GStrv) tv = g_strsplit (opt_has_kernel[i], "/", 2);
    if (!tv[0] || !tv[1]) {
      fprintf (stderr, "m2i-ir-run: --has-kernel takes TYPE/OPSET, not %s\n", opt_has_kernel[i]);
      ok = FALSE;
      break;
    }
    printf ("%s %s %s\n", tv[0], tv[1], m2i_op_registry_lookup (reg, tv[0], tv[1]) ? "yes" : "no");
  }
  m2i_op_registry_free (reg);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) octx = g_option_context_new ("MODEL.xml");
  g_option_context_set_summary (octx, "Runs an OpenVINO IR model (v10/v11) on the CPU with "
      "m2i's runtime: prints each output (the top-k classes of class scores, the "
      "detections of a DetectionOutput, else shape, min, max, mean and argmax), and with -b "
      "the latency and throughput.");
  g_option_context_add_main_entries (octx, entries, NULL);
  GError *error = NULL;
  if (g_option_context_parse (octx, &argc, &argv, &error) && opt_has_kernel && argc == 1)
    return has_kernels () ? 0 : 1;
  if (error || argc != 2) {
    fprintf (stderr, "m2i-ir-run: %s\n", error ? error->message : "give one MODEL.xml (see --help)");
    g_clear_error (&error);
    return 2;
  }
  gboolean ok = run (argv[1], &error);
  if (!ok) {
    fprintf (stderr, "m2i-ir-run: %s\n", error ? error->message : "failed");
    g_clear_error (&error);
  }
  g_strfreev (opt_inputs);
  g_free (opt_labels);
  g_free (opt_mean);
  g_free (opt_scale);
  g_free (opt_dump);
  g_strfreev (opt_plugins);
  g_strfreev (opt_shapes);
  g_strfreev (opt_outputs);
  g_strfreev (opt_has_kernel);
  return ok ? 0 : 1;
}
