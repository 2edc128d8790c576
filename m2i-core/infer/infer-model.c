/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-model.c — M2iInferModel: an IR model loaded for a device, what its
 * input takes, its labels and decoder options; see m2i-infer.h. */
#include "infer-private.h"
#include "decode-private.h"

#include <infer/m2i-model-info.h>

#include <base/m2i-error.h>
#include <string.h>

/* ---- devices --------------------------------------------------------------- */

typedef enum {
  DEVICE_AUTO,                 /* the best that works: HETERO:M2I,CPU, else CPU */
  DEVICE_CPU,
  DEVICE_M2I,                  /* the device alone (split execution) */
  DEVICE_HETERO,               /* split between the device and the CPU */
} DeviceKind;

#define DEVICE_HELP "use CPU, M2I, HETERO:M2I,CPU or AUTO (the best that works)"

/* Parses a device string: "AUTO", "CPU", "M2I", "HETERO:<list>" whose list
 * names M2I and/or CPU in priority order (case-insensitive; a list without
 * M2I is the CPU). *@canonical receives, for M2I and HETERO, the upper-case
 * string to split with (g_free), else NULL. FALSE with @error naming the
 * accepted spellings. */
static gboolean
parse_device (const char *device, DeviceKind *kind, gchar **canonical, GError **error)
{
  *canonical = NULL;
  if (!device || !*device || !g_ascii_strcasecmp (device, "AUTO")) {
    *kind = DEVICE_AUTO;
    return TRUE;
  }
  if (!g_ascii_strcasecmp (device, "CPU")) {
    *kind = DEVICE_CPU;
    return TRUE;
  }
  if (!g_ascii_strcasecmp (device, "M2I")) {
    *kind = DEVICE_M2I;
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
      *kind = has_m2i ? DEVICE_HETERO : DEVICE_CPU;
      if (has_m2i)
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

/* The NV12 / I420 PrePostProcessor head's u8 inputs ([1,H,W,1] Y and
 * [1,H/2,W/2,2] UV, or U and V of [1,H/2,W/2,1]): TRUE with the kind and
 * size. */
static gboolean
planes_input (M2iInferModel *m)
{
  gint n = m2i_ir_model_get_n_inputs (m->ir);
  if (n != 2 && n != 3)
    return FALSE;
  const M2iIrIoInfo *y = m2i_ir_model_get_input (m->ir, 0);
  if (y->type != M2I_ET_U8 || y->shape.rank != 4 || y->shape.dims[0] != 1
      || y->shape.dims[3] != 1 || y->shape.dims[1] % 2 || y->shape.dims[2] % 2
      || y->shape.dims[1] <= 0 || y->shape.dims[2] <= 0 || y->shape.dims[1] > 65536
      || y->shape.dims[2] > 65536)
    return FALSE;
  gint64 h = y->shape.dims[1], w = y->shape.dims[2];
  for (gint i = 1; i < n; i++) {
    const M2iIrIoInfo *c = m2i_ir_model_get_input (m->ir, i);
    gint64 ch = n == 2 ? 2 : 1;
    if (c->type != M2I_ET_U8 || c->shape.rank != 4 || c->shape.dims[0] != 1
        || c->shape.dims[1] != h / 2 || c->shape.dims[2] != w / 2 || c->shape.dims[3] != ch)
      return FALSE;
  }
  m->input_kind = n == 2 ? M2I_INFER_INPUT_NV12 : M2I_INFER_INPUT_I420;
  m->width = (gint) w;
  m->height = (gint) h;
  return TRUE;
}

static void
analyse_input (M2iInferModel *m, guint want_batch)
{
  m->input_kind = M2I_INFER_INPUT_TENSORS;
  if (m->has_head) {
    /* The plan lowered the model's pre-processing head to the M2I block:
     * the model is fed the head's output image. */
    m->input_kind = M2I_INFER_INPUT_IMAGE;
    m->width = m->head.out_width;
    m->height = m->head.out_height;
    return;
  }
  if (planes_input (m))
    return;
  if (infer_input_find_image (m->ir, m->info, want_batch, &m->image, &m->width, &m->height,
          &m->batch, &m->input_note))
    m->input_kind = M2I_INFER_INPUT_IMAGE;
}

gboolean
infer_model_check_batch (M2iInferModel *m, GError **error)
{
  gint n = m2i_ir_model_get_n_outputs (m->ir);
  m->out_kind = g_new0 (InferOutputKind, MAX (n, 1));
  for (gint i = 0; i < n && m->batch > 1; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (m->ir, i);
    const M2iShape *sh = &io->shape;
    if (!strcmp (infer_output_producer_type (m->ir, i), "DetectionOutput") && sh->rank == 4
        && sh->dims[0] == 1 && sh->dims[1] == 1 && sh->dims[3] == 7 && io->type == M2I_ET_F32
        && sh->dims[2] % m->batch == 0)
      m->out_kind[i] = INFER_OUT_DETECTIONS;
    else if (sh->rank >= 1 && sh->dims[0] == m->batch)
      m->out_kind[i] = INFER_OUT_SLICE;
    else {
      g_autofree gchar *shape = m2i_shape_to_string (sh);
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED, "the model takes %d frames per "
          "inference, but its output %d '%s' %s has no batch dimension (dims[0] is not %d) and "
          "does not come from DetectionOutput: the frames of a batch cannot get their own "
          "results; use a model with batch 1 (batch-size=1)", m->batch, i, io->name, shape,
          m->batch);
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- loading ----------------------------------------------------------------- */

static gboolean
load_cpu (M2iInferModel *m, GError **error)
{
  M2iIrCompileOptions co = { .n_threads = m->n_threads, .max_memory = m->max_memory };
  m->cm = m2i_ir_compile (m->ir, &co, error);
  if (!m->cm)
    return FALSE;
  m->spare_req = m2i_ir_infer_request_new (m->cm, error);
  if (!m->spare_req)
    return FALSE;
  m->device = g_strdup ("CPU");
  m->description = g_strdup_printf ("CPU: %d layers per inference",
      m2i_ir_compiled_model_get_n_runtime_nodes (m->cm));
  return TRUE;
}

static M2iSplitRunner *
new_runner (M2iInferModel *m, GError **error)
{
  M2iSplitRunOptions ro = { .n_threads = m->n_threads, .max_memory = m->max_memory };
  return m2i_split_runner_new (m->plan, &ro, error);
}

/* Plans and prepares split execution for @devices ("HETERO:M2I,CPU",
 * "M2I"); writes the plan into @split_dir when given. *@planned (when not
 * NULL) says whether the partitioner made a plan, so that a failure after
 * it (writing the plan, preparing the runner) is told from a model that
 * does not split. */
static gboolean
load_split (M2iInferModel *m, const char *devices, const char *split_dir, gboolean *planned,
    GError **error)
{
  M2iSplitOptions so;
  m2i_split_options_init (&so);
  so.devices = devices;
  so.max_memory = m->max_memory;
  m->plan = m2i_split_plan_new (m->ir, &so, error);
  if (planned)
    *planned = m->plan != NULL;
  if (!m->plan)
    return FALSE;
  if (split_dir && !m2i_split_plan_save (m->plan, split_dir, error)) {
    g_prefix_error (error, "split-dir=%s: ", split_dir);
    return FALSE;
  }
  m->spare_runner = new_runner (m, error);
  if (!m->spare_runner)
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
unload_split (M2iInferModel *m)
{
  if (m->spare_runner)
    m2i_split_runner_free (m->spare_runner);
  if (m->plan)
    m2i_split_plan_unref (m->plan);
  m->spare_runner = NULL;
  m->plan = NULL;
  m->has_head = FALSE;
  g_clear_pointer (&m->device, g_free);
  g_clear_pointer (&m->description, g_free);
}

/* Prepares @m for @device_string: CPU, split, or AUTO's best that works. */
static gboolean
load_for_device (M2iInferModel *m, const char *xml_path, const char *device_string,
    const char *split_dir, GError **error)
{
  DeviceKind kind;
  gchar *canonical = NULL;
  if (!parse_device (device_string, &kind, &canonical, error))
    return FALSE;
  gboolean ok = FALSE;
  switch (kind) {
    case DEVICE_CPU:
      if (split_dir) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "split-dir=%s writes a split plan, but device=CPU does not split: set "
            "device=HETERO:M2I,CPU (or M2I, AUTO) or unset split-dir", split_dir);
        break;
      }
      ok = load_cpu (m, error);
      break;
    case DEVICE_AUTO: {
      /* The best that works: split between the device and the CPU, else
       * the CPU alone (a model the partitioner cannot plan). A plan that
       * cannot be written where split-dir says is an error, not a reason
       * to leave the device. */
      GError *split_error = NULL;
      gboolean planned = FALSE;
      ok = load_split (m, "HETERO:M2I,CPU", split_dir, &planned, &split_error);
      if (!ok && planned && split_dir) {
        g_propagate_error (error, split_error);
        break;
      }
      if (!ok) {
        g_info ("%s: split execution is not possible (%s); running on the CPU", xml_path,
            split_error->message);
        unload_split (m);
        ok = load_cpu (m, error);
        if (ok) {
          gchar *d = g_strdup_printf ("%s (AUTO: split not possible: %s)", m->description,
              split_error->message);
          g_free (m->description);
          m->description = d;
        }
        g_clear_error (&split_error);
      }
      break;
    }
    case DEVICE_M2I:
    case DEVICE_HETERO:
      ok = load_split (m, canonical, split_dir, NULL, error);
      break;
  }
  g_free (canonical);
  return ok;
}

void
m2i_infer_model_options_init (M2iInferModelOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  m2i_decoder_options_init (&opts->decoder);
}

M2iInferModel *
m2i_infer_model_load (const char *xml_path, const M2iInferModelOptions *opts, GError **error)
{
  M2iInferModelOptions defaults;
  if (!opts) {
    m2i_infer_model_options_init (&defaults);
    opts = &defaults;
  }
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
  M2iInferModel *m = g_new0 (M2iInferModel, 1);
  m->ref_count = 1;
  m->batch = 1;
  g_mutex_init (&m->queue_lock);
  m->n_threads = (gint) MIN (opts->n_threads, (guint) G_MAXINT);
  m->max_memory = opts->max_memory;
  m->decoder = opts->decoder;
  m->decoder.labels = NULL;
  m->decoder.n_labels = 0;
  m->ir = m2i_ir_model_load (xml_path, NULL, error);
  if (!m->ir || !load_for_device (m, xml_path, opts->device, opts->split_dir, error))
    goto fail;
  m->info = m2i_model_info_new (m->ir);
  m->labels_given = opts->labels_path || opts->labels_text;
  if (opts->labels_path) {
    if (!(m->labels = m2i_labels_load (opts->labels_path, error)))
      goto fail;
  } else if (opts->labels_text) {
    if (!(m->labels = m2i_labels_parse (opts->labels_text, -1, M2I_LABELS_AUTO, error))) {
      g_prefix_error (error, "labels: ");
      goto fail;
    }
  } else if (m->info->labels) {
    /* the model's own: model_info/labels, Ultralytics' framework/names */
    m->labels = g_strdupv (m->info->labels);
  }
  if (m->labels) {
    m->n_labels = g_strv_length (m->labels);
    m->decoder.labels = (const char *const *) m->labels;
    m->decoder.n_labels = m->n_labels;
  }
  analyse_input (m, opts->batch);
  if (opts->batch > 1 && (guint) m->batch != opts->batch) {
    /* (an image input of another batch left the model a TENSORS one: its
     * note says which) */
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "batch-size=%u: %s", opts->batch,
        m->input_note ? m->input_note : m->input_kind == M2I_INFER_INPUT_TENSORS
        ? "the model takes no image; give a model whose image input is [N,C,H,W] or "
        "[N,H,W,C] with N the batch (its batch dimension is used as it is)"
        : "a model with an NV12/I420 pre-processing head takes one frame per inference; "
        "set batch-size=1");
    goto fail;
  }
  if (!infer_model_check_batch (m, error))
    goto fail;
  infer_registry_count_load ();
  return m;

fail:
  m2i_infer_model_unref (m);
  return NULL;
}

M2iInferModel *
m2i_infer_model_ref (M2iInferModel *m)
{
  g_atomic_int_inc (&m->ref_count);
  return m;
}

void
m2i_infer_model_unref (M2iInferModel *m)
{
  if (!m)
    return;
  if (m->instance_id ? !infer_registry_release (m) : !g_atomic_int_dec_and_test (&m->ref_count))
    return;
  infer_queue_model_cleanup (m);
  unload_split (m);
  if (m->spare_req)
    m2i_ir_infer_request_free (m->spare_req);
  if (m->cm)
    m2i_ir_compiled_model_unref (m->cm);
  if (m->ir)
    m2i_ir_model_unref (m->ir);
  g_strfreev (m->labels);
  if (m->info)
    m2i_model_info_free (m->info);
  g_free (m->input_note);
  g_free (m->device);
  g_free (m->description);
  g_free (m->out_kind);
  g_free (m->instance_id);
  g_free (m->key);
  g_mutex_clear (&m->queue_lock);
  g_free (m);
}

gboolean
infer_model_take_request (M2iInferModel *m, M2iIrInferRequest **req, M2iSplitRunner **runner,
    GError **error)
{
  *req = NULL;
  *runner = NULL;
  if (m->plan) {
    *runner = g_atomic_pointer_exchange (&m->spare_runner, NULL);
    if (!*runner)
      *runner = new_runner (m, error);
    return *runner != NULL;
  }
  *req = g_atomic_pointer_exchange (&m->spare_req, NULL);
  if (!*req)
    *req = m2i_ir_infer_request_new (m->cm, error);
  return *req != NULL;
}

const char *
m2i_infer_model_get_name (const M2iInferModel *m)
{
  return m2i_ir_model_get_name (m->ir);
}

const char *
m2i_infer_model_get_device (const M2iInferModel *m)
{
  return m->device;
}

const char *
m2i_infer_model_describe (const M2iInferModel *m)
{
  return m->description;
}

M2iIrModel *
m2i_infer_model_get_ir (const M2iInferModel *m)
{
  return m->ir;
}

M2iInferInputKind
m2i_infer_model_get_input_kind (const M2iInferModel *m, gint *width, gint *height)
{
  if (width)
    *width = m->width;
  if (height)
    *height = m->height;
  return m->input_kind;
}

gint
m2i_infer_model_get_batch (const M2iInferModel *m)
{
  return m->batch;
}

gboolean
m2i_infer_model_get_image_input (const M2iInferModel *m, M2iInferImageInput *img)
{
  if (m->input_kind != M2I_INFER_INPUT_IMAGE || m->has_head)
    return FALSE;
  *img = m->image;
  return TRUE;
}

const char *
m2i_infer_model_get_input_note (const M2iInferModel *m)
{
  return m->input_kind == M2I_INFER_INPUT_TENSORS ? m->input_note : NULL;
}

const M2iModelInfo *
m2i_infer_model_get_info (const M2iInferModel *m)
{
  return m->info;
}

const M2iSplitHead *
m2i_infer_model_get_head (const M2iInferModel *m)
{
  return m->has_head ? &m->head : NULL;
}

const char *const *
m2i_infer_model_get_labels (const M2iInferModel *m, guint *n_labels)
{
  if (n_labels)
    *n_labels = m->n_labels;
  return (const char *const *) m->labels;
}
