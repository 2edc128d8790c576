/* infer-session.c — M2iInferSession: one request on a model, the M2I plan
 * into its input, running, decoding; see m2i-infer.h.
 *
 * Seams for what comes next: a session is one request (asynchronous
 * requests become several sessions' worth of request state behind one
 * queue); its plan cache is per source geometry (a batch or the regions of
 * a frame become several plans writing one input each).
 */
#include "infer-private.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

/* The input path the description was made for. */
typedef enum {
  PATH_NONE,
  PATH_PLAN,          /* an M2I plan into the model's input image */
  PATH_PLANES,        /* NV12/I420 planes copied into a PrePostProcessor head */
  PATH_INPUTS,        /* input tensors set by the caller */
} InputPath;

struct _M2iInferSession {
  M2iInferModel *model;
  /* the request: exactly one of them */
  M2iIrInferRequest *req;
  M2iSplitRunner *runner;
  M2iDecoder *decoder;
  M2iInferResult *result;
  M2iTensor *outputs;
  guint n_outputs;
  /* pre-processing */
  M2iInferPreprocess pp;
  M2iNormParams norm;
  gboolean norm_active;
  M2iPlanCache *cache;
  InferPreprocessPlan plan;       /* of the last run */
  guint8 *staging;                /* the plan's output when its type is not the input's */
  gsize staging_size;
  /* what the last runs did */
  InputPath path;
  gboolean desc_direct, desc_swap;
  M2iChannelOrder desc_order;
  gchar *description;
  guint serial;
};

void
m2i_infer_preprocess_init (M2iInferPreprocess *pp)
{
  memset (pp, 0, sizeof *pp);
  pp->channel_order = M2I_ORDER_RGB;
  pp->resize_mode = M2I_RESIZE_LINEAR_ONNX;
  for (int c = 0; c < 3; c++)
    pp->std[c] = 1.0f;
  pp->input_scale = 1.0f;
  pp->profile = M2I_PROFILE_DEFAULT;
}

M2iInferSession *
m2i_infer_session_new (M2iInferModel *model, GError **error)
{
  M2iInferSession *s = g_new0 (M2iInferSession, 1);
  s->model = m2i_infer_model_ref (model);
  s->cache = m2i_plan_cache_new ();
  s->description = g_strdup ("");
  m2i_infer_preprocess_init (&s->pp);
  m2i_norm_params_identity (&s->norm);
  if (!infer_model_take_request (model, &s->req, &s->runner, error))
    goto fail;
  s->decoder = m2i_decoder_new (model->ir, &model->decoder, error);
  if (!s->decoder)
    goto fail;
  s->result = m2i_decoder_new_result (s->decoder);
  s->n_outputs = (guint) MAX (m2i_ir_model_get_n_outputs (model->ir), 0);
  s->outputs = g_new0 (M2iTensor, MAX (s->n_outputs, 1));
  if (model->input_kind == M2I_INFER_INPUT_IMAGE) {
    /* 3 planes of the model's size in the wider of fp16 and fp32 */
    s->staging_size = (gsize) 3 * model->width * model->height * sizeof (float);
    s->staging = g_malloc (s->staging_size);
  }
  return s;

fail:
  m2i_infer_session_free (s);
  return NULL;
}

void
m2i_infer_session_free (M2iInferSession *s)
{
  if (!s)
    return;
  if (s->req)
    m2i_ir_infer_request_free (s->req);
  if (s->runner)
    m2i_split_runner_free (s->runner);
  m2i_decoder_free (s->decoder);
  if (s->result)
    m2i_infer_result_free (s->result);
  m2i_plan_cache_free (s->cache);
  g_free (s->outputs);
  g_free (s->staging);
  g_free (s->description);
  m2i_infer_model_unref (s->model);
  g_free (s);
}

M2iInferModel *
m2i_infer_session_get_model (const M2iInferSession *s)
{
  return s->model;
}

M2iDecoder *
m2i_infer_session_get_decoder (M2iInferSession *s)
{
  return s->decoder;
}

const M2iInferResult *
m2i_infer_session_get_result (const M2iInferSession *s)
{
  return s->result;
}

const M2iTensor *
m2i_infer_session_get_outputs (const M2iInferSession *s, guint *n_outputs)
{
  if (n_outputs)
    *n_outputs = s->n_outputs;
  return s->outputs;
}

const char *
m2i_infer_session_describe (const M2iInferSession *s, guint *serial)
{
  if (serial)
    *serial = s->serial;
  return s->description;
}

static void
set_description (M2iInferSession *s, InputPath path, gchar *text)
{
  g_free (s->description);
  s->description = text;
  s->path = path;
  s->serial++;
}

gboolean
m2i_infer_session_set_preprocess (M2iInferSession *s, const M2iInferPreprocess *pp,
    GError **error)
{
  float scale = pp->input_scale;
  if (!(scale > 0.0f) || !isfinite (scale)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input-scale must be positive and finite (is %g)", (double) pp->input_scale);
    return FALSE;
  }
  M2iNormParams norm;
  if (!m2i_norm_params_from_mean_std (&norm, pp->mean, pp->std, scale)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "mean <%g, %g, %g> / std <%g, %g, %g> with input-scale %g cannot be held as fp16 "
        "coefficients (std must be positive, mean/input-scale and std/input-scale within "
        "fp16 range)", pp->mean[0], pp->mean[1], pp->mean[2], pp->std[0], pp->std[1],
        pp->std[2], (double) scale);
    return FALSE;
  }
  M2iNormParams id;
  m2i_norm_params_identity (&id);
  s->pp = *pp;
  s->norm = norm;
  s->norm_active = memcmp (&norm, &id, sizeof id) != 0;
  return TRUE;
}

/* ---- running the model -------------------------------------------------------- */

static M2iTensor *
input_tensor (M2iInferSession *s, gint i)
{
  return s->runner ? m2i_split_runner_get_input (s->runner, i)
      : m2i_ir_infer_request_get_input (s->req, i);
}

/* Runs the model (@after_head: the image path of a split plan with a head,
 * whose output the pre-processing wrote) and decodes its outputs for
 * @geometry. */
static gboolean
infer_and_decode (M2iInferSession *s, gboolean after_head, const M2iInferGeometry *geometry,
    GError **error)
{
  gboolean ok;
  if (s->runner)
    ok = after_head ? m2i_split_runner_run_after_head (s->runner, error)
        : m2i_split_runner_run (s->runner, error);
  else
    ok = m2i_ir_infer_request_infer (s->req, error);
  if (!ok)
    return FALSE;
  for (guint i = 0; i < s->n_outputs; i++)
    s->outputs[i] = *(s->runner ? m2i_split_runner_get_output (s->runner, (gint) i)
        : m2i_ir_infer_request_get_output (s->req, (gint) i));
  return m2i_decoder_decode (s->decoder, s->outputs, s->n_outputs, geometry, s->result, error);
}

/* ---- image models: the M2I plan into the input ----------------------------------- */

/* The planar image the pre-processing fills: the model's input 0, or the
 * head's output buffer of a split plan. */
static gboolean
model_image (M2iInferSession *s, M2iImage *img, GError **error)
{
  if (s->model->has_head)
    return m2i_split_runner_get_head_image (s->runner, img, error);
  M2iTensor *t = input_tensor (s, 0);
  M2iFormat f = t->type == M2I_ET_F16 ? M2I_FORMAT_PL_FP16_RGB : M2I_FORMAT_PL_FP32_RGB;
  return m2i_image_wrap (img, f, s->model->width, s->model->height, t->data,
      m2i_tensor_nbytes (t), 0, error);
}

/* Builds the ops for @source into s->plan and the image they write into
 * @out (the model's input, or the staging tensor) with @target the model's
 * input image. */
static gboolean
build_plan (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, M2iImage *target, M2iImage *out, GError **error)
{
  if (!model_image (s, target, error)
      || !infer_preprocess_build (s->model, &s->pp, s->norm_active ? &s->norm : NULL,
          m2i_format_dtype (target->format), source, queued, lb, &s->plan, error))
    return FALSE;
  if (s->plan.direct)
    *out = *target;
  else
    m2i_image_wrap (out, s->plan.format, s->model->width, s->model->height, s->staging,
        s->staging_size, 0, NULL);
  out->format = s->plan.format;
  if (s->plan.swap)
    infer_swap_planes (out);    /* tensor channel c holds the frame's channel 2 - c */
  return TRUE;
}

static M2iPlanOptions
plan_options (const M2iInferSession *s)
{
  M2iPlanOptions o;
  m2i_plan_options_init (&o);
  o.profile = s->pp.profile;
  o.n_threads = s->pp.n_threads;
  return o;
}

static void
describe_plan (M2iInferSession *s, gboolean replanned)
{
  const InferPreprocessPlan *p = &s->plan;
  if (!replanned && s->path == PATH_PLAN && s->desc_direct == p->direct
      && s->desc_swap == p->swap && s->desc_order == p->order)
    return;
  s->desc_direct = p->direct;
  s->desc_swap = p->swap;
  s->desc_order = p->order;
  M2iDataType dt = m2i_format_dtype (p->format);
  set_description (s, PATH_PLAN, g_strdup_printf ("%s -> model input %s (%s)%s; model on %s",
          m2i_plan_cache_describe (s->cache), p->direct ? m2i_format_to_string (p->format)
          : dt == M2I_DTYPE_F16 ? "fp16 widened to fp32" : "fp32 narrowed to fp16",
          p->order == M2I_ORDER_RGB ? "RGB" : "BGR", p->swap ? ", channels swapped" : "",
          s->model->description));
}

/* NV12/I420 models: @source must be the head's frame. */
static gboolean
check_planes_source (const M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, GError **error)
{
  const M2iInferModel *m = s->model;
  M2iFormat want = m->input_kind == M2I_INFER_INPUT_NV12 ? M2I_FORMAT_SP_NV12_8
      : M2I_FORMAT_PL_YUV420_8;
  if (source->format != want || source->width != m->width || source->height != m->height
      || (queued && queued->n_ops) || (lb && lb->active)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the model's input is the %s PrePostProcessor head of a %dx%d frame; got %s %dx%d%s",
        m2i_format_to_string (want), m->width, m->height, m2i_format_to_string (source->format),
        source->width, source->height, queued && queued->n_ops ? " with ops queued" : "");
    return FALSE;
  }
  return TRUE;
}

static gboolean
check_image_model (const M2iInferSession *s, GError **error)
{
  if (s->model->input_kind == M2I_INFER_INPUT_TENSORS) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the model takes no image (%d inputs, not one [1,3,H,W] float input or an NV12/I420 "
        "head): set its inputs with m2i_infer_session_set_input()",
        m2i_ir_model_get_n_inputs (s->model->ir));
    return FALSE;
  }
  return TRUE;
}

/* Plans the pre-processing of @source (with @queued and @lb) into the
 * model's input and, with @run, runs it. */
static gboolean
preprocess (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, gboolean run, GError **error)
{
  M2iImage target, out;
  M2iPlanOptions opts = plan_options (s);
  gboolean replanned = FALSE;
  if (!build_plan (s, source, queued, lb, &target, &out, error))
    return FALSE;
  if (!(run ? m2i_plan_cache_run (s->cache, source, &s->plan.ops, lb, &out, &opts, &replanned,
              error) : m2i_plan_cache_prepare (s->cache, source, &s->plan.ops, lb, &out, &opts,
              &replanned, error)))
    return FALSE;
  if (run && !s->plan.direct) {
    /* out's planes are in the model's order now, as target's */
    M2iImage staged;
    m2i_image_wrap (&staged, s->plan.format, s->model->width, s->model->height, s->staging,
        s->staging_size, 0, NULL);
    infer_convert_planes (&staged, &target);
  }
  describe_plan (s, replanned);
  return TRUE;
}

gboolean
m2i_infer_session_prepare (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *letterbox, GError **error)
{
  if (!check_image_model (s, error) || !m2i_image_check (source, "source", FALSE, error))
    return FALSE;
  if (s->model->input_kind != M2I_INFER_INPUT_IMAGE)
    return check_planes_source (s, source, queued, letterbox, error);
  return preprocess (s, source, queued, letterbox, FALSE, error);
}

/* Copies the planes of @source into the model's u8 inputs. */
static void
copy_planes (M2iInferSession *s, const M2iImage *source)
{
  for (guint p = 0; p < m2i_format_n_planes (source->format); p++) {
    gsize row;
    gint rows;
    m2i_format_plane_geometry (source->format, source->width, source->height, p, &row, &rows);
    guint8 *dst = input_tensor (s, (gint) p)->data;
    for (gint y = 0; y < rows; y++)
      memcpy (dst + (gsize) y * row, source->data[p] + (gsize) y * source->stride[p], row);
  }
  if (s->path != PATH_PLANES)
    set_description (s, PATH_PLANES, g_strdup_printf ("%s planes straight into the model's "
            "PrePostProcessor head; model on %s", m2i_format_to_string (source->format),
            s->model->description));
}

gboolean
m2i_infer_session_run (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *letterbox, GError **error)
{
  if (!check_image_model (s, error))
    return FALSE;
  if (s->model->input_kind != M2I_INFER_INPUT_IMAGE) {
    if (!check_planes_source (s, source, queued, letterbox, error)
        || !m2i_image_check (source, "source", TRUE, error))
      return FALSE;
    copy_planes (s, source);
    M2iInferGeometry g;
    m2i_infer_geometry_init (&g, source->width, source->height, source->width, source->height,
        FALSE);
    return infer_and_decode (s, FALSE, &g, error);
  }
  return preprocess (s, source, queued, letterbox, TRUE, error)
      && infer_and_decode (s, s->model->has_head, &s->plan.geometry, error);
}

/* ---- tensor inputs ------------------------------------------------------------------ */

gboolean
m2i_infer_session_set_input (M2iInferSession *s, gint i, const M2iTensor *src, GError **error)
{
  M2iTensor *t = i >= 0 ? input_tensor (s, i) : NULL;
  if (!t) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "the model has no input %d "
        "(it has %d)", i, m2i_ir_model_get_n_inputs (s->model->ir));
    return FALSE;
  }
  gsize n = (gsize) m2i_shape_numel (&t->shape);
  if (src->type == t->type)
    memcpy (t->data, src->data, m2i_tensor_nbytes (t));
  else if (src->type == M2I_ET_F16 && t->type == M2I_ET_F32)
    m2i_f16_to_f32_n (src->data, t->data, n);
  else if (src->type == M2I_ET_F32 && t->type == M2I_ET_F16)
    m2i_f32_to_f16_n (src->data, t->data, n);
  else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "input %d is %s; %s cannot be "
        "copied into it", i, m2i_element_type_to_string (t->type),
        m2i_element_type_to_string (src->type));
    return FALSE;
  }
  return TRUE;
}

gboolean
m2i_infer_session_run_inputs (M2iInferSession *s, GError **error)
{
  const M2iInferModel *m = s->model;
  gint n = m2i_ir_model_get_n_inputs (m->ir);
  if (s->path != PATH_INPUTS)
    set_description (s, PATH_INPUTS, g_strdup_printf ("%d input tensor%s copied in; model on %s",
            n, n == 1 ? "" : "s", m->description));
  M2iInferGeometry g;
  if (m->input_kind == M2I_INFER_INPUT_TENSORS)
    m2i_infer_geometry_init (&g, 1, 1, 1, 1, FALSE);
  else
    m2i_infer_geometry_init (&g, m->width, m->height, m->width, m->height, FALSE);
  return infer_and_decode (s, FALSE, &g, error);
}

/* ---- what infer-roi.c uses (infer-private.h) ------------------------------------------ */

void
infer_session_get_preprocess (const M2iInferSession *s, M2iInferPreprocess *pp,
    const M2iNormParams **norm)
{
  *pp = s->pp;
  *norm = s->norm_active ? &s->norm : NULL;
}

gboolean
infer_session_model_image (M2iInferSession *s, M2iImage *img, GError **error)
{
  return model_image (s, img, error);
}

gboolean
infer_session_infer_and_decode (M2iInferSession *s, gboolean after_head,
    const M2iInferGeometry *geometry, GError **error)
{
  return infer_and_decode (s, after_head, geometry, error);
}
