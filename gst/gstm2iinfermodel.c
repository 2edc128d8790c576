/* gstm2iinfermodel.c — the model side of m2iinfer, see gstm2iinfermodel.h. */
#include "gstm2iinfermodel.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

struct _GstM2iInferModel {
  M2iIrModel *model;
  /* device CPU: the IR runtime */
  M2iIrCompiledModel *cm;
  M2iIrInferRequest *req;
  /* M2I / HETERO: split execution */
  M2iSplitPlan *plan;
  M2iSplitRunner *runner;
  gboolean has_head;
  M2iSplitHead head;
  gchar *device;
  gchar *description;
  GstM2iInputKind input_kind;
  gint width, height;
  GstM2iOutputKind output_kind;
  gint n_classes;
  gboolean softmax;
};

/* ---- devices --------------------------------------------------------------- */

#define DEVICE_HELP "use CPU, M2I, HETERO:M2I,CPU or AUTO (the best that works)"

gboolean
gst_m2i_device_parse (const char *device, GstM2iDeviceKind *kind, gchar **canonical,
    GError **error)
{
  if (canonical)
    *canonical = NULL;
  if (!device || !*device || !g_ascii_strcasecmp (device, "AUTO")) {
    *kind = GST_M2I_DEVICE_AUTO;
    return TRUE;
  }
  if (!g_ascii_strcasecmp (device, "CPU")) {
    *kind = GST_M2I_DEVICE_CPU;
    return TRUE;
  }
  if (!g_ascii_strcasecmp (device, "M2I")) {
    *kind = GST_M2I_DEVICE_M2I;
    if (canonical)
      *canonical = g_strdup ("M2I");
    return TRUE;
  }
  if (!g_ascii_strncasecmp (device, "HETERO:", 7)) {
    gchar **parts = g_strsplit (device + 7, ",", -1);
    gboolean ok = parts[0] != NULL, has_m2i = FALSE;
    GString *canon = g_string_new ("HETERO:");
    for (gchar **p = parts; *p; p++) {
      g_strstrip (*p);
      if (!g_ascii_strcasecmp (*p, "M2I"))
        has_m2i = TRUE;
      else if (g_ascii_strcasecmp (*p, "CPU"))
        ok = FALSE;
      g_string_append_printf (canon, "%s%s", p == parts ? "" : ",",
          g_ascii_strcasecmp (*p, "M2I") ? "CPU" : "M2I");
    }
    g_strfreev (parts);
    if (ok) {
      *kind = has_m2i ? GST_M2I_DEVICE_HETERO : GST_M2I_DEVICE_CPU;
      if (canonical && has_m2i)
        *canonical = g_string_free (canon, FALSE);
      else
        g_string_free (canon, TRUE);
      return TRUE;
    }
    g_string_free (canon, TRUE);
  }
  g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
      "unknown device \"%s\": " DEVICE_HELP, device);
  return FALSE;
}

/* ---- model analysis -------------------------------------------------------- */

static gboolean
shape_is (const M2iShape *s, gint rank)
{
  return s->rank == rank;
}

static void
analyse_input (GstM2iInferModel *m)
{
  gint n = m2i_ir_model_get_n_inputs (m->model);
  m->input_kind = GST_M2I_INPUT_TENSORS;
  if (m->has_head) {
    /* The plan lowered the model's pre-processing head to the M2I block:
     * the model is fed the head's output image. */
    m->input_kind = GST_M2I_INPUT_IMAGE;
    m->width = m->head.out_width;
    m->height = m->head.out_height;
    return;
  }
  if (n == 1) {
    const M2iIrIoInfo *io = m2i_ir_model_get_input (m->model, 0);
    const M2iShape *s = &io->shape;
    if (shape_is (s, 4) && s->dims[0] == 1 && s->dims[1] == 3 && m2i_element_type_is_float (io->type)
        && s->dims[2] > 0 && s->dims[3] > 0 && s->dims[2] <= 65536 && s->dims[3] <= 65536) {
      m->input_kind = GST_M2I_INPUT_IMAGE;
      m->height = (gint) s->dims[2];
      m->width = (gint) s->dims[3];
    }
    return;
  }
  if (n != 2 && n != 3)
    return;
  const M2iIrIoInfo *y = m2i_ir_model_get_input (m->model, 0);
  if (y->type != M2I_ET_U8 || !shape_is (&y->shape, 4) || y->shape.dims[0] != 1
      || y->shape.dims[3] != 1 || y->shape.dims[1] % 2 || y->shape.dims[2] % 2
      || y->shape.dims[1] <= 0 || y->shape.dims[2] <= 0)
    return;
  gint64 h = y->shape.dims[1], w = y->shape.dims[2];
  for (gint i = 1; i < n; i++) {
    const M2iIrIoInfo *c = m2i_ir_model_get_input (m->model, i);
    gint64 ch = n == 2 ? 2 : 1;
    if (c->type != M2I_ET_U8 || !shape_is (&c->shape, 4) || c->shape.dims[0] != 1
        || c->shape.dims[1] != h / 2 || c->shape.dims[2] != w / 2 || c->shape.dims[3] != ch)
      return;
  }
  m->input_kind = n == 2 ? GST_M2I_INPUT_NV12 : GST_M2I_INPUT_I420;
  m->width = (gint) w;
  m->height = (gint) h;
}

static void
analyse_output (GstM2iInferModel *m)
{
  m->output_kind = GST_M2I_OUTPUT_RAW;
  if (m2i_ir_model_get_n_outputs (m->model) < 1)
    return;
  const M2iIrIoInfo *io = m2i_ir_model_get_output (m->model, 0);
  const M2iShape *s = &io->shape;
  M2iIrNode *producer = NULL;
  m2i_ir_node_get_input_source (io->node, 0, &producer, NULL);
  const char *type = producer ? m2i_ir_node_get_type (producer) : "";
  if (!m2i_element_type_is_float (io->type))
    return;
  if (!strcmp (type, "DetectionOutput") && s->rank == 4 && s->dims[3] == 7) {
    m->output_kind = GST_M2I_OUTPUT_DETECTIONS;
    m->n_classes = (gint) s->dims[2];
    return;
  }
  gint64 c = 0;
  if (s->rank == 2 && s->dims[0] == 1)
    c = s->dims[1];
  else if (s->rank == 4 && s->dims[0] == 1 && s->dims[2] == 1 && s->dims[3] == 1)
    c = s->dims[1];
  if (c >= 2 && c <= G_MAXINT) {
    m->output_kind = GST_M2I_OUTPUT_CLASSES;
    m->n_classes = (gint) c;
    m->softmax = strcmp (type, "SoftMax") != 0;
  }
}

/* ---- loading ----------------------------------------------------------------- */

static gboolean
load_cpu (GstM2iInferModel *m, guint n_threads, guint64 max_memory, GError **error)
{
  M2iIrCompileOptions co = { .n_threads = (gint) n_threads, .max_memory = max_memory };
  m->cm = m2i_ir_compile (m->model, &co, error);
  if (!m->cm)
    return FALSE;
  m->req = m2i_ir_infer_request_new (m->cm, error);
  if (!m->req)
    return FALSE;
  m->device = g_strdup ("CPU");
  m->description = g_strdup_printf ("CPU: %d layers per inference",
      m2i_ir_compiled_model_get_n_runtime_nodes (m->cm));
  return TRUE;
}

/* Plans and prepares split execution for @devices ("HETERO:M2I,CPU",
 * "M2I"); writes the plan into @split_dir when given. *@planned (when not
 * NULL) says whether the partitioner made a plan, so that a failure after
 * it (writing the plan, preparing the runner) is told from a model that
 * does not split. */
static gboolean
load_split (GstM2iInferModel *m, const char *devices, const GstM2iInferModelOptions *opts,
    gboolean *planned, GError **error)
{
  M2iSplitOptions so;
  m2i_split_options_init (&so);
  so.devices = devices;
  so.max_memory = opts->max_memory;
  m->plan = m2i_split_plan_new (m->model, &so, error);
  if (planned)
    *planned = m->plan != NULL;
  if (!m->plan)
    return FALSE;
  if (opts->split_dir && !m2i_split_plan_save (m->plan, opts->split_dir, error)) {
    g_prefix_error (error, "split-dir=%s: ", opts->split_dir);
    return FALSE;
  }
  M2iSplitRunOptions ro = { .n_threads = (gint) opts->n_threads, .max_memory = opts->max_memory };
  m->runner = m2i_split_runner_new (m->plan, &ro, error);
  if (!m->runner)
    return FALSE;
  m->has_head = m2i_split_plan_get_head (m->plan, &m->head);
  gint n_dev = 0, n = m2i_split_plan_get_n_pieces (m->plan);
  for (gint i = 0; i < n; i++) {
    M2iSplitPieceInfo pi;
    m2i_split_plan_get_piece (m->plan, i, &pi);
    n_dev += pi.device == M2I_SPLIT_DEVICE_M2I;
  }
  m->device = g_strdup (devices);
  m->description = g_strdup_printf ("%s: %d piece%s, %d on the device%s", devices, n,
      n == 1 ? "" : "s", n_dev, m->has_head ? ", pre-processing head on the M2I block" : "");
  return TRUE;
}

static void
unload_split (GstM2iInferModel *m)
{
  if (m->runner)
    m2i_split_runner_free (m->runner);
  if (m->plan)
    m2i_split_plan_unref (m->plan);
  m->runner = NULL;
  m->plan = NULL;
  m->has_head = FALSE;
  g_clear_pointer (&m->device, g_free);
  g_clear_pointer (&m->description, g_free);
}

GstM2iInferModel *
gst_m2i_infer_model_load (const char *xml_path, const GstM2iInferModelOptions *opts,
    GError **error)
{
  if (!xml_path || !*xml_path) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "no model: set model=path/to/model.xml (an OpenVINO IR v10/v11 .xml with its .bin "
        "beside it)");
    return NULL;
  }
  if (!g_file_test (xml_path, G_FILE_TEST_IS_REGULAR)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO,
        "model file \"%s\" does not exist or is not a file: set model= to an OpenVINO IR "
        ".xml (with its .bin beside it)", xml_path);
    return NULL;
  }
  GstM2iInferModel *m = g_new0 (GstM2iInferModel, 1);
  GError *split_error = NULL;
  m->model = m2i_ir_model_load (xml_path, NULL, error);
  if (!m->model)
    goto fail;
  switch (opts->device) {
    case GST_M2I_DEVICE_CPU:
      if (opts->split_dir) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "split-dir=%s writes a split plan, but device=CPU does not split: set "
            "device=HETERO:M2I,CPU (or M2I, AUTO) or unset split-dir", opts->split_dir);
        goto fail;
      }
      if (!load_cpu (m, opts->n_threads, opts->max_memory, error))
        goto fail;
      break;
    case GST_M2I_DEVICE_AUTO: {
      /* The best that works: split between the device and the CPU, else
       * the CPU alone (a model the partitioner cannot plan). A plan that
       * cannot be written where split-dir says is an error, not a reason
       * to leave the device. */
      gboolean planned = FALSE;
      gboolean split = load_split (m, "HETERO:M2I,CPU", opts, &planned, &split_error);
      if (!split && planned && opts->split_dir) {
        g_propagate_error (error, split_error);
        goto fail;
      }
      if (!split) {
        g_info ("%s: split execution is not possible (%s); running on the CPU", xml_path,
            split_error->message);
        unload_split (m);
        if (!load_cpu (m, opts->n_threads, opts->max_memory, error))
          goto fail;
        gchar *d = g_strdup_printf ("%s (AUTO: split not possible: %s)", m->description,
            split_error->message);
        g_free (m->description);
        m->description = d;
        g_clear_error (&split_error);
      }
      break;
    }
    case GST_M2I_DEVICE_M2I:
    case GST_M2I_DEVICE_HETERO:
      if (!load_split (m, opts->device_string ? opts->device_string
              : opts->device == GST_M2I_DEVICE_M2I ? "M2I" : "HETERO:M2I,CPU", opts, NULL,
              error))
        goto fail;
      break;
  }
  analyse_input (m);
  analyse_output (m);
  return m;

fail:
  gst_m2i_infer_model_free (m);
  return NULL;
}

void
gst_m2i_infer_model_free (GstM2iInferModel *m)
{
  if (!m)
    return;
  unload_split (m);
  if (m->req)
    m2i_ir_infer_request_free (m->req);
  if (m->cm)
    m2i_ir_compiled_model_unref (m->cm);
  if (m->model)
    m2i_ir_model_unref (m->model);
  g_free (m->device);
  g_free (m->description);
  g_free (m);
}

const char *
gst_m2i_infer_model_name (const GstM2iInferModel *m)
{
  return m2i_ir_model_get_name (m->model);
}

const char *
gst_m2i_infer_model_device (const GstM2iInferModel *m)
{
  return m->device;
}

const char *
gst_m2i_infer_model_describe (const GstM2iInferModel *m)
{
  return m->description;
}

M2iIrModel *
gst_m2i_infer_model_ir (const GstM2iInferModel *m)
{
  return m->model;
}

GstM2iInputKind
gst_m2i_infer_model_input_kind (const GstM2iInferModel *m, gint *width, gint *height)
{
  if (width)
    *width = m->width;
  if (height)
    *height = m->height;
  return m->input_kind;
}

M2iTensor *
gst_m2i_infer_model_input (GstM2iInferModel *m, gint i)
{
  if (m->runner)
    return m2i_split_runner_get_input (m->runner, i);
  return m2i_ir_infer_request_get_input (m->req, i);
}

const M2iSplitHead *
gst_m2i_infer_model_head (const GstM2iInferModel *m)
{
  return m->has_head ? &m->head : NULL;
}

gboolean
gst_m2i_infer_model_image (GstM2iInferModel *m, M2iImage *img, GError **error)
{
  if (m->input_kind != GST_M2I_INPUT_IMAGE) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "the model takes no image");
    return FALSE;
  }
  if (m->has_head)
    return m2i_split_runner_get_head_image (m->runner, img, error);
  M2iTensor *t = gst_m2i_infer_model_input (m, 0);
  M2iFormat f = t->type == M2I_ET_F16 ? M2I_FORMAT_PL_FP16_RGB : M2I_FORMAT_PL_FP32_RGB;
  return m2i_image_wrap (img, f, m->width, m->height, t->data, m2i_tensor_nbytes (t), 0, error);
}

gboolean
gst_m2i_infer_model_infer (GstM2iInferModel *m, GError **error)
{
  if (m->runner)
    return m->has_head ? m2i_split_runner_run_after_head (m->runner, error)
        : m2i_split_runner_run (m->runner, error);
  return m2i_ir_infer_request_infer (m->req, error);
}

const M2iTensor *
gst_m2i_infer_model_output (GstM2iInferModel *m, gint i)
{
  if (m->runner)
    return m2i_split_runner_get_output (m->runner, i);
  return m2i_ir_infer_request_get_output (m->req, i);
}

const char *
gst_m2i_infer_model_output_name (const GstM2iInferModel *m, gint i)
{
  const M2iIrIoInfo *io = m2i_ir_model_get_output (m->model, i);
  return io ? io->name : NULL;
}

gint
gst_m2i_infer_model_n_inputs (const GstM2iInferModel *m)
{
  return m2i_ir_model_get_n_inputs (m->model);
}

gint
gst_m2i_infer_model_n_outputs (const GstM2iInferModel *m)
{
  return m2i_ir_model_get_n_outputs (m->model);
}

GstM2iOutputKind
gst_m2i_infer_model_output_kind (const GstM2iInferModel *m, gint *n_classes, gboolean *softmax)
{
  if (n_classes)
    *n_classes = m->n_classes;
  if (softmax)
    *softmax = m->softmax;
  return m->output_kind;
}

/* ---- results ----------------------------------------------------------------- */

guint
gst_m2i_top_classes (const float *scores, guint n, gboolean softmax, guint k,
    GstM2iClass *out)
{
  if (k > n)
    k = n;
  float max = -INFINITY;
  double sum = 0.0;
  if (softmax) {
    for (guint i = 0; i < n; i++)
      max = MAX (max, scores[i]);
    for (guint i = 0; i < n; i++)
      sum += exp ((double) scores[i] - (double) max);
  }
  /* Insertion into the k best: k is small (top-k), n a few thousand at most. */
  guint have = 0;
  for (guint i = 0; i < n; i++) {
    float v = scores[i];
    if (have == k && !(v > out[k - 1].confidence))
      continue;
    guint pos = have < k ? have++ : k - 1;
    while (pos > 0 && v > out[pos - 1].confidence) {
      out[pos] = out[pos - 1];
      pos--;
    }
    out[pos].class_id = (gint) i;
    out[pos].confidence = v;
  }
  if (softmax && sum > 0.0)
    for (guint i = 0; i < have; i++)
      out[i].confidence = (float) (exp ((double) out[i].confidence - (double) max) / sum);
  return have;
}

static float
clamp01 (float v)
{
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

guint
gst_m2i_parse_detections (const float *rows, guint n_rows, float threshold,
    GstM2iDetection *out, guint max)
{
  guint n = 0;
  for (guint i = 0; i < n_rows && n < max; i++) {
    const float *r = rows + (gsize) i * 7;
    if (r[0] < 0.0f)
      break;
    if (!(r[2] >= threshold))
      continue;
    GstM2iDetection *d = &out[n++];
    d->class_id = (gint) r[1];
    d->confidence = r[2];
    d->x_min = clamp01 (MIN (r[3], r[5]));
    d->y_min = clamp01 (MIN (r[4], r[6]));
    d->x_max = clamp01 (MAX (r[3], r[5]));
    d->y_max = clamp01 (MAX (r[4], r[6]));
  }
  return n;
}

gchar **
gst_m2i_read_labels (const char *path, GError **error)
{
  gchar *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error)) {
    if (error && *error) {
      gchar *msg = g_strdup_printf ("labels file: %s; set labels= to a text file with one "
          "label a line", (*error)->message);
      g_clear_error (error);
      g_set_error_literal (error, M2I_ERROR, M2I_ERROR_IO, msg);
      g_free (msg);
    }
    return NULL;
  }
  gchar **lines = g_strsplit (text, "\n", -1);
  g_free (text);
  guint n = g_strv_length (lines);
  for (guint i = 0; i < n; i++)
    g_strchomp (lines[i]);
  while (n > 0 && lines[n - 1][0] == '\0') {
    g_free (lines[n - 1]);
    lines[--n] = NULL;
  }
  if (n == 0) {
    g_strfreev (lines);
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
        "labels file \"%s\" holds no label (one label a line, line 1 = class 0)", path);
    return NULL;
  }
  return lines;
}
